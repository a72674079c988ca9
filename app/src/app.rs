//! The krylov-studio window: load, open or generate a matrix, solve it on the device the
//! library's rules choose (or the one picked in the Device menu), watch the residuals converge
//! live with the library's launch and transfer counts side by side.
//!
//! This file holds the state and the frame loop. One submodule per panel: `matrix_panel`,
//! `solver_panel`, `plot`, `counters`, `predict_panel` (the performance model's ranking beside
//! the counters), `exports` (the bottom bar), `messages` (the top bar and
//! the message lines; [`crate::device_panel`] draws the device part); `actions` (load, solve,
//! switch device), `events` (what the loader and the solver thread send), `run_view` (one run);
//! `widgets`, small helpers the panels share.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use egui::{Color32, TextureHandle, Ui};
use krylov_wgpu::Precision;
use krylov_wgpu::gpu::AdapterSummary;
use krylov_wgpu::matrix::samples;
use krylov_wgpu::solvers::{
    Basis, CheckMode, Format, GramSchmidt, Method, Precond, Side, SolveOptions, Trisolve, Tsqr,
    Variant,
};

mod actions;
mod counters;
mod devices_table;
mod events;
mod exports;
mod matrix_panel;
mod messages;
mod plot;
mod predict_panel;
mod run_view;
mod solver_panel;
mod widgets;

pub use run_view::RunView;

use crate::device::DeviceSelection;
use crate::device_panel::{DevicePanel, DeviceState};
use crate::problem::{Family, Loaded, Source};
use crate::worker::Worker;

/// One run of a solve: the classical or the pipelined variant of the method, (CG and GMRES)
/// the fused or the one-workgroup one, (CG only) the cooperative one, or (GMRES only)
/// p(1)-GMRES or CA-GMRES(s, m), the communication-avoiding GMRES run beside them. Runs are
/// keyed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunKind {
    Classical,
    Pipelined,
    /// Fused CG (pipelined CG's recurrences in one launch per iteration) or fused GMRES
    /// (pipelined GMRES's step in two launches).
    Fused,
    /// One workgroup, on small systems only: one-workgroup CG (classical CG, 32 whole
    /// iterations per launch) or one-workgroup GMRES (pipelined GMRES's steps, a whole restart
    /// cycle per launch).
    Workgroup,
    /// Cooperative CG (fused CG's iteration 16 times per launch by workgroups that meet at a
    /// grid barrier; one global reduction per iteration; CG only).
    Cooperative,
    /// p(1)-GMRES: one launch and one global reduction per step (GMRES only).
    P1,
    /// CA-GMRES(s, m) (`Method::CaGmres`) on the GMRES settings, plus s, TSQR and basis.
    Ca,
}

impl RunKind {
    /// The name on the command line (`--variant`), in the history CSV and in file names.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Classical => "classical",
            RunKind::Pipelined => "pipelined",
            RunKind::Fused => "fused",
            RunKind::Workgroup => "workgroup",
            RunKind::Cooperative => "cooperative",
            RunKind::P1 => "p1",
            RunKind::Ca => "ca",
        }
    }

    /// The name the window shows (table headers, the plot's legend, the export choice).
    pub fn label(self) -> &'static str {
        match self {
            RunKind::Classical => "classical",
            RunKind::Pipelined => "pipelined",
            RunKind::Fused => "fused",
            RunKind::Workgroup => "workgroup",
            RunKind::Cooperative => "cooperative",
            RunKind::P1 => "p1",
            RunKind::Ca => "CA-GMRES",
        }
    }

    /// The library's variant of a classical or pipelined run; `None` for CA-GMRES (which has
    /// none of its own).
    pub fn variant(self) -> Option<Variant> {
        match self {
            RunKind::Classical => Some(Variant::Classical),
            RunKind::Pipelined => Some(Variant::Pipelined),
            RunKind::Fused => Some(Variant::Fused),
            RunKind::Workgroup => Some(Variant::Workgroup),
            RunKind::Cooperative => Some(Variant::Cooperative),
            RunKind::P1 => Some(Variant::P1),
            RunKind::Ca => None,
        }
    }

    /// The options of this run from the Solver panel's `opts`: the variant set, and
    /// `Method::CaGmres` for CA-GMRES.
    pub fn options(self, opts: &SolveOptions) -> SolveOptions {
        match self {
            RunKind::Ca => SolveOptions {
                method: Method::CaGmres,
                ..opts.clone()
            },
            kind => SolveOptions {
                variant: kind.variant().unwrap_or(opts.variant),
                ..opts.clone()
            },
        }
    }

    /// `classical gmres`, `pipelined cg`, `CA-GMRES`: the run and its method, in words.
    pub fn title(self, method: Method) -> String {
        match self {
            RunKind::Ca => self.label().to_string(),
            kind => format!("{} {method}", kind.label()),
        }
    }
}

impl std::fmt::Display for RunKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Which runs a solve makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    Classical,
    Pipelined,
    /// Fused CG or GMRES alone (CG and GMRES only).
    Fused,
    /// One-workgroup CG or GMRES alone (CG and GMRES only).
    Workgroup,
    /// Cooperative CG alone (CG only).
    Cooperative,
    /// p(1)-GMRES alone: one launch and one global reduction per step (GMRES only).
    P1,
    /// CA-GMRES alone (GMRES only).
    Ca,
    /// Classical then pipelined, plotted side by side.
    Both,
    /// All three side by side: classical, pipelined and CA-GMRES (GMRES), or classical,
    /// pipelined and fused (CG).
    All,
}

impl RunMode {
    /// The runs of `method`, in the order they run and their columns appear.
    pub fn kinds(self, method: Method) -> Vec<RunKind> {
        match self.for_method(method) {
            RunMode::Classical => vec![RunKind::Classical],
            RunMode::Pipelined => vec![RunKind::Pipelined],
            RunMode::Fused => vec![RunKind::Fused],
            RunMode::Workgroup => vec![RunKind::Workgroup],
            RunMode::Cooperative => vec![RunKind::Cooperative],
            RunMode::P1 => vec![RunKind::P1],
            RunMode::Ca => vec![RunKind::Ca],
            RunMode::Both => vec![RunKind::Classical, RunKind::Pipelined],
            RunMode::All if method == Method::Cg => {
                vec![RunKind::Classical, RunKind::Pipelined, RunKind::Fused]
            }
            RunMode::All => vec![RunKind::Classical, RunKind::Pipelined, RunKind::Ca],
        }
    }

    /// Whether a CA-GMRES run is among the runs of `method`.
    pub fn has_ca(self, method: Method) -> bool {
        self.kinds(method).contains(&RunKind::Ca)
    }

    /// The mode for `method`: CA-GMRES and p1 are runs of GMRES only, fused and workgroup ones
    /// of CG and GMRES only and cooperative ones of CG only, so for other methods `Ca`, `P1`,
    /// `Fused`, `Workgroup` and `Cooperative` become `Pipelined` and `All` becomes `Both`.
    pub fn for_method(self, method: Method) -> RunMode {
        match self {
            RunMode::Ca | RunMode::P1 if method != Method::Gmres => RunMode::Pipelined,
            RunMode::Fused | RunMode::Workgroup
                if !matches!(method, Method::Cg | Method::Gmres) =>
            {
                RunMode::Pipelined
            }
            RunMode::Cooperative if method != Method::Cg => RunMode::Pipelined,
            RunMode::All if !matches!(method, Method::Gmres | Method::Cg) => RunMode::Both,
            mode => mode,
        }
    }
}

/// The triangular-solve strategy of ILU(0)/IC(0) as the Solver panel offers it: the sweep
/// count K has a field of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrisolveMode {
    Auto,
    Levels,
    Sweeps,
}

impl TrisolveMode {
    pub const ALL: &'static [TrisolveMode] = &[
        TrisolveMode::Auto,
        TrisolveMode::Levels,
        TrisolveMode::Sweeps,
    ];

    /// The name the combo box shows (the library's, without `:K`).
    pub fn as_str(self) -> &'static str {
        match self {
            TrisolveMode::Auto => "auto",
            TrisolveMode::Levels => "levels",
            TrisolveMode::Sweeps => "sweeps",
        }
    }

    /// The library's strategy, with `sweeps` K Jacobi sweeps.
    pub fn with_sweeps(self, sweeps: u32) -> Trisolve {
        match self {
            TrisolveMode::Auto => Trisolve::Auto,
            TrisolveMode::Levels => Trisolve::Levels,
            TrisolveMode::Sweeps => Trisolve::Sweeps(sweeps),
        }
    }

    /// The mode and the sweep count of `t` (the library's `auto` count when `t` has none).
    pub fn split(t: Trisolve) -> (TrisolveMode, u32) {
        match t {
            Trisolve::Auto => (TrisolveMode::Auto, Trisolve::AUTO_SWEEPS),
            Trisolve::Levels => (TrisolveMode::Levels, Trisolve::AUTO_SWEEPS),
            Trisolve::Sweeps(k) => (TrisolveMode::Sweeps, k),
        }
    }
}

/// The most Jacobi sweeps the Solver panel (and `--trisolve sweeps:K`) takes.
pub const MAX_SWEEPS: u32 = 100;

/// The largest CA-GMRES block s the Solver panel (and `--s-step`) takes: the GPU's
/// ([`krylov_wgpu::solvers::cagmres::MAX_S`]).
pub const MAX_S: usize = krylov_wgpu::solvers::cagmres::MAX_S;

/// What the command line asks for at start-up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StartupArgs {
    /// A Matrix Market file to load.
    pub file: Option<PathBuf>,
    /// A generator spec (`poisson2d:64`, ...) to generate.
    pub generate: Option<String>,
    /// An embedded sample matrix (`bcsstk01`, ...) to open.
    pub sample: Option<String>,
    /// Start a solve as soon as the matrix is ready.
    pub run: Option<RunMode>,
    /// Run(s) selected at start (without solving).
    pub preselect: Option<RunMode>,
    /// The method (GMRES for CA-GMRES: `--method cagmres` is GMRES with the CA run).
    pub method: Option<Method>,
    /// GMRES (and CA-GMRES) restart length m.
    pub restart: Option<usize>,
    /// CA-GMRES: basis vectors per block s.
    pub s_step: Option<usize>,
    /// CA-GMRES: the TSQR of each block.
    pub tsqr: Option<Tsqr>,
    /// CA-GMRES: the basis of the matrix powers.
    pub basis: Option<Basis>,
    pub precision: Option<Precision>,
    pub check_mode: Option<CheckMode>,
    pub precond: Option<Precond>,
    pub side: Option<Side>,
    pub trisolve: Option<Trisolve>,
    pub profile: bool,
    /// Split the rows over several devices (`--devices`): the Solver panel's "Devices" field.
    pub devices: Option<krylov_wgpu::gpu::DeviceList>,
    /// The device to open first (`Auto` unless `--device` says otherwise).
    pub device: DeviceSelection,
    /// Where the 'predict' panel looks for device profiles (`None`: `$KRYLOV_PROFILE_DIR` or
    /// the user's cache directory, where `krylov calibrate` writes them).
    pub profile_dir: Option<PathBuf>,
}

/// The application state.
pub struct StudioApp {
    worker: Worker,
    ctx: egui::Context,
    device: DevicePanel,

    // Problem.
    family: Family,
    size: usize,
    spec: String,
    path_text: String,
    loading: Option<(Source, Receiver<Result<Loaded, String>>)>,
    problem: Option<Loaded>,
    thumbnail: Option<TextureHandle>,

    // Solver settings.
    method: Method,
    run_mode: RunMode,
    precision_choice: Option<Precision>,
    precond: Precond,
    side: Side,
    trisolve: TrisolveMode,
    /// K of `sweeps` (kept while another strategy is selected).
    sweeps: u32,
    check_mode: CheckMode,
    format: Format,
    rtol_text: String,
    atol_text: String,
    max_iter: usize,
    restart: usize,
    gs: GramSchmidt,
    /// CA-GMRES's s, TSQR and basis (used by its runs only; m is `restart`).
    s_step: usize,
    tsqr: Tsqr,
    basis: Basis,
    batch: usize,
    profile: bool,
    /// The "Devices" field: empty for one device, else a count or adapter indices.
    devices_text: String,

    // Runs.
    next_job: u64,
    running_job: Option<u64>,
    cancel: Arc<AtomicBool>,
    runs: Vec<RunView>,
    /// The performance model's ranking for the loaded matrix (the 'predict' panel).
    predictions: std::cell::RefCell<predict_panel::PredictCache>,
    /// [`StartupArgs::profile_dir`].
    profile_dir: Option<PathBuf>,
    /// Settings of the runs shown (for the tolerance line and exports).
    shown_opts: Option<SolveOptions>,

    // Export.
    export_path: String,
    export_run: usize,

    // Messages.
    error: Option<String>,
    notice: Option<String>,
    auto_run: Option<RunMode>,
}

const CLASSICAL_COLOR: Color32 = Color32::from_rgb(230, 120, 20);
const PIPELINED_COLOR: Color32 = Color32::from_rgb(40, 120, 230);
const CA_COLOR: Color32 = Color32::from_rgb(30, 160, 80);
const FUSED_COLOR: Color32 = Color32::from_rgb(150, 60, 200);
const WORKGROUP_COLOR: Color32 = Color32::from_rgb(200, 50, 90);
const COOPERATIVE_COLOR: Color32 = Color32::from_rgb(20, 150, 190);
const P1_COLOR: Color32 = Color32::from_rgb(190, 160, 20);

/// A run's colour in the plot and in the tables' headers.
fn kind_color(k: RunKind) -> Color32 {
    match k {
        RunKind::Classical => CLASSICAL_COLOR,
        RunKind::Pipelined => PIPELINED_COLOR,
        RunKind::Fused => FUSED_COLOR,
        RunKind::Workgroup => WORKGROUP_COLOR,
        RunKind::Cooperative => COOPERATIVE_COLOR,
        RunKind::P1 => P1_COLOR,
        RunKind::Ca => CA_COLOR,
    }
}

impl StudioApp {
    /// Creates the app (its solver thread opens the device at once, `auto` by the library's
    /// rules) and applies `args`.
    pub fn new(ctx: &egui::Context, args: StartupArgs) -> Self {
        let wake_ctx = ctx.clone();
        let selection = args.device;
        let precision = args.precision.unwrap_or(Precision::F64);
        let worker = Worker::spawn(selection, precision, move || wake_ctx.request_repaint());
        let family = Family::Poisson2dFd;
        let (trisolve, sweeps) = TrisolveMode::split(args.trisolve.unwrap_or_default());
        let size = family.default_size();
        let defaults = SolveOptions::default();
        // CA-GMRES is a run of GMRES here (the parser turns `--method cagmres` into that).
        let method = match args.method.unwrap_or(Method::Cg) {
            Method::CaGmres => Method::Gmres,
            m => m,
        };
        let mut app = StudioApp {
            worker,
            ctx: ctx.clone(),
            device: DevicePanel::opening(selection, precision),
            family,
            size,
            spec: family.spec(size),
            path_text: String::new(),
            loading: None,
            problem: None,
            thumbnail: None,
            method,
            run_mode: args
                .run
                .or(args.preselect)
                .unwrap_or(RunMode::Both)
                .for_method(method),
            precision_choice: args.precision,
            precond: args.precond.unwrap_or(Precond::None),
            side: args.side.unwrap_or(Side::Right),
            trisolve,
            sweeps: sweeps.clamp(1, MAX_SWEEPS),
            check_mode: args.check_mode.unwrap_or(CheckMode::Device),
            format: Format::Auto,
            rtol_text: "1e-6".into(),
            atol_text: "0".into(),
            max_iter: 10_000,
            restart: args.restart.unwrap_or(defaults.restart),
            gs: GramSchmidt::Cgs,
            s_step: args.s_step.unwrap_or(defaults.s_step).clamp(1, MAX_S),
            tsqr: args.tsqr.unwrap_or(defaults.tsqr),
            basis: args.basis.unwrap_or(defaults.basis),
            batch: 0,
            profile: args.profile,
            devices_text: match &args.devices {
                None => String::new(),
                Some(krylov_wgpu::gpu::DeviceList::Count(k)) => k.to_string(),
                Some(krylov_wgpu::gpu::DeviceList::Indices(v)) => v
                    .iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            },
            next_job: 1,
            running_job: None,
            cancel: Arc::new(AtomicBool::new(false)),
            runs: Vec::new(),
            predictions: Default::default(),
            profile_dir: args.profile_dir.clone(),
            shown_opts: None,
            export_path: String::new(),
            export_run: 0,
            error: None,
            notice: None,
            auto_run: args.run,
        };
        if let Some(path) = args.file {
            app.path_text = path.display().to_string();
            app.start_load(Source::File(path));
        } else if let Some(spec) = args.generate {
            app.spec = spec.clone();
            app.start_load(Source::Spec(spec));
        } else if let Some(name) = args.sample {
            match samples::find(&name) {
                Ok(s) => app.start_load(Source::Sample(s.name)),
                Err(e) => app.error = Some(e.to_string()),
            }
        }
        app
    }

    // ---- State for tests and callers ------------------------------------------------------

    /// Whether a load or a solve is in progress.
    pub fn is_busy(&self) -> bool {
        self.loading.is_some() || self.running_job.is_some()
    }

    /// The options the next solve would run with (the Solver panel's settings), or why they
    /// are refused.
    pub fn next_options(&self) -> Result<SolveOptions, String> {
        self.options()
    }

    /// The runs the next solve would make (the Solver panel's run mode for its method).
    pub fn next_kinds(&self) -> Vec<RunKind> {
        self.run_mode.kinds(self.method)
    }

    /// The runs of the last solve.
    pub fn runs(&self) -> &[RunView] {
        &self.runs
    }

    /// The error shown, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The loaded problem.
    pub fn problem(&self) -> Option<&Loaded> {
        self.problem.as_ref()
    }

    /// The solver device.
    pub fn device(&self) -> &DeviceState {
        &self.device.state
    }

    /// The adapters the Device menu offers (primary backends, ranked as the library ranks).
    pub fn adapters(&self) -> &[AdapterSummary] {
        &self.device.adapters
    }

    /// What the Device menu selects.
    pub fn device_selection(&self) -> DeviceSelection {
        self.device.selection
    }
}

impl eframe::App for StudioApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        self.poll(&ctx);
        if ctx.input(|i| !i.raw.dropped_files.is_empty()) {
            self.open_dropped(&ctx);
        }
        egui::Panel::top("top").show(ui, |ui| self.top_bar(ui));
        egui::Panel::left("controls")
            .resizable(true)
            .default_size(350.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    self.matrix_controls(ui);
                    ui.separator();
                    self.solver_controls(ui);
                });
            });
        egui::Panel::bottom("export").show(ui, |ui| {
            ui.add_space(2.0);
            self.export_bar(ui);
            ui.add_space(2.0);
        });
        egui::CentralPanel::default().show(ui, |ui| {
            self.messages(ui);
            let height = (ui.available_height() * 0.44).max(160.0);
            self.plot(ui, height);
            ui.separator();
            egui::ScrollArea::both()
                .id_salt("counters-scroll")
                .show(ui, |ui| {
                    self.counters(ui);
                    self.predict_panel(ui, &self.predictions);
                });
        });
        if self.is_busy() {
            ctx.request_repaint_after(Duration::from_millis(30));
        }
    }
}

impl Drop for StudioApp {
    fn drop(&mut self) {
        // Stop a running solve so the solver thread can finish.
        self.cancel.store(true, Ordering::Relaxed);
    }
}
