//! The krylov-studio window: load, open or generate a matrix, solve it on the device the
//! library's rules choose (or the one picked in the Device menu), watch the residuals converge
//! live with the library's launch and transfer counts side by side.
//!
//! Submodules hold the panels: `controls` (Matrix and Solver), `results` (plot and counters),
//! `exports`; [`crate::device_panel`] the device part of the top bar.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use egui::{Color32, RichText, TextureHandle, Ui};
use krylov_wgpu::Precision;
use krylov_wgpu::gpu::AdapterSummary;
use krylov_wgpu::matrix::samples;
use krylov_wgpu::solvers::{
    CheckMode, GramSchmidt, Method, Precond, Progress, SolveOptions, SolveReport, Variant,
};

mod controls;
mod exports;
mod results;

use crate::device::DeviceSelection;
use crate::device_panel::{DevicePanel, DeviceState};
use crate::problem::{self, Family, Loaded, Source};
use crate::worker::{RunOutcome, SolveJob, Worker, WorkerEvent};

/// Which variants a solve runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    Classical,
    Pipelined,
    /// Classical then pipelined, plotted side by side.
    Both,
}

impl RunMode {
    pub fn variants(self) -> Vec<Variant> {
        match self {
            RunMode::Classical => vec![Variant::Classical],
            RunMode::Pipelined => vec![Variant::Pipelined],
            RunMode::Both => vec![Variant::Classical, Variant::Pipelined],
        }
    }
}

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
    /// Variant(s) selected at start (without solving).
    pub preselect: Option<RunMode>,
    pub method: Option<Method>,
    pub precision: Option<Precision>,
    pub check_mode: Option<CheckMode>,
    pub precond: Option<Precond>,
    pub profile: bool,
    /// The device to open first (`Auto` unless `--device` says otherwise).
    pub device: DeviceSelection,
}

/// One run (one variant) of the current solve.
#[derive(Debug)]
pub struct RunView {
    pub variant: Variant,
    /// `"queued"`, `"gpu"` or `"cpu"`.
    pub device: &'static str,
    pub note: Option<String>,
    pub b_norm: f64,
    /// Residual norms received so far: (iteration, ‖r‖).
    pub live: Vec<(usize, f64)>,
    progress: Option<Receiver<Progress>>,
    pub outcome: Option<Result<RunOutcome, String>>,
}

impl RunView {
    fn queued(variant: Variant) -> Self {
        RunView {
            variant,
            device: "queued",
            note: None,
            b_norm: 0.0,
            live: Vec::new(),
            progress: None,
            outcome: None,
        }
    }

    /// The report, when the run finished with one.
    pub fn report(&self) -> Option<&SolveReport> {
        match &self.outcome {
            Some(Ok(o)) => Some(&o.report),
            _ => None,
        }
    }

    /// The residual history to plot: the report's once finished, else what arrived.
    fn points(&self) -> Vec<[f64; 2]> {
        let scale = |r: f64, b: f64| if b > 0.0 { r / b } else { r };
        let raw: Vec<(usize, f64, f64)> = match self.report() {
            Some(rep) => rep
                .history
                .iter()
                .enumerate()
                .map(|(k, &r)| (k, r, rep.b_norm))
                .collect(),
            None => self
                .live
                .iter()
                .map(|&(k, r)| (k, r, self.b_norm))
                .collect(),
        };
        raw.into_iter()
            .filter(|(_, r, _)| r.is_finite() && *r > 0.0)
            .map(|(k, r, b)| [k as f64, scale(r, b).log10()])
            .collect()
    }

    fn status(&self) -> String {
        match &self.outcome {
            None if self.device == "queued" => "waiting".into(),
            None => match self.live.last() {
                Some(&(k, r)) => format!(
                    "running: iteration {k}, |r|/|b| = {:.3e}",
                    if self.b_norm > 0.0 {
                        r / self.b_norm
                    } else {
                        r
                    }
                ),
                None => "running: setting up".into(),
            },
            Some(Ok(o)) => o.report.reason_detail.clone(),
            Some(Err(e)) => format!("failed: {e}"),
        }
    }
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
    check_mode: CheckMode,
    format: krylov_wgpu::solvers::Format,
    rtol_text: String,
    atol_text: String,
    max_iter: usize,
    restart: usize,
    gs: GramSchmidt,
    batch: usize,
    profile: bool,

    // Runs.
    next_job: u64,
    running_job: Option<u64>,
    cancel: Arc<AtomicBool>,
    runs: Vec<RunView>,
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

fn variant_color(v: Variant) -> Color32 {
    match v {
        Variant::Classical => CLASSICAL_COLOR,
        Variant::Pipelined => PIPELINED_COLOR,
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
        let size = family.default_size();
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
            method: args.method.unwrap_or(Method::Cg),
            run_mode: args.run.or(args.preselect).unwrap_or(RunMode::Both),
            precision_choice: args.precision,
            precond: args.precond.unwrap_or(Precond::None),
            check_mode: args.check_mode.unwrap_or(CheckMode::Device),
            format: krylov_wgpu::solvers::Format::Auto,
            rtol_text: "1e-6".into(),
            atol_text: "0".into(),
            max_iter: 10_000,
            restart: 30,
            gs: GramSchmidt::Cgs,
            batch: 0,
            profile: args.profile,
            next_job: 1,
            running_job: None,
            cancel: Arc::new(AtomicBool::new(false)),
            runs: Vec::new(),
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

    // ---- Actions ---------------------------------------------------------------------------

    fn start_load(&mut self, source: Source) {
        let (tx, rx) = channel();
        let ctx = self.ctx.clone();
        let src = source.clone();
        let spawned = std::thread::Builder::new()
            .name("krylov-loader".into())
            .spawn(move || {
                let result = std::panic::catch_unwind(|| problem::load(&src))
                    .unwrap_or_else(|_| Err("internal error while loading".into()));
                let _ = tx.send(result);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => {
                self.error = None;
                self.notice = Some(format!("loading {}", source.name()));
                self.loading = Some((source, rx));
            }
            Err(e) => self.error = Some(format!("could not start loading: {e}")),
        }
    }

    fn precision(&self) -> Precision {
        self.precision_choice
            .unwrap_or_else(|| self.device.default_precision())
    }

    /// Asks the solver thread to open `selection` (not while a solve runs).
    fn select_device(&mut self, selection: DeviceSelection) {
        if self.running_job.is_some() {
            return;
        }
        let precision = self.precision_choice.unwrap_or(Precision::F64);
        match self.worker.select_device(selection, precision) {
            Ok(()) => self.device.switching(selection, precision),
            Err(e) => self.error = Some(e),
        }
    }

    fn options(&self) -> Result<SolveOptions, String> {
        let parse = |name: &str, s: &str| -> Result<f64, String> {
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("{name} `{s}` is not a number"))
        };
        let opts = SolveOptions {
            method: self.method,
            variant: Variant::Pipelined,
            rtol: parse("rtol", &self.rtol_text)?,
            atol: parse("atol", &self.atol_text)?,
            max_iter: self.max_iter,
            restart: self.restart,
            precond: self.precond,
            gs: self.gs,
            check_mode: self.check_mode,
            batch: self.batch,
            format: self.format,
            max_padding: krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET,
        };
        opts.validate().map_err(|e| e.to_string())?;
        Ok(opts)
    }

    fn start_solve(&mut self) {
        if self.running_job.is_some() {
            return;
        }
        let Some(problem) = &self.problem else {
            self.error = Some("load or generate a matrix first".into());
            return;
        };
        let opts = match self.options() {
            Ok(o) => o,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        self.cancel = Arc::new(AtomicBool::new(false));
        let id = self.next_job;
        self.next_job += 1;
        let variants = self.run_mode.variants();
        let job = SolveJob {
            id,
            matrix: problem.matrix.clone(),
            rhs: problem.rhs.clone(),
            variants: variants.clone(),
            opts: opts.clone(),
            precision: self.precision(),
            profile: self.profile,
            cancel: self.cancel.clone(),
        };
        match self.worker.submit(job) {
            Ok(()) => {
                self.error = None;
                self.notice = None;
                self.runs = variants.into_iter().map(RunView::queued).collect();
                self.export_run = self.runs.len() - 1;
                self.shown_opts = Some(opts);
                self.running_job = Some(id);
            }
            Err(e) => self.error = Some(e),
        }
    }

    fn stop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Takes everything the loader and the solver thread sent since the last frame.
    fn poll(&mut self, ctx: &egui::Context) {
        if let Some((source, rx)) = &self.loading {
            match rx.try_recv() {
                Ok(result) => {
                    let name = source.name();
                    self.loading = None;
                    self.notice = None;
                    match result {
                        Ok(loaded) => self.set_problem(ctx, loaded),
                        Err(e) => {
                            self.error = Some(format!("Could not load {name}: {e}"));
                            self.auto_run = None;
                        }
                    }
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    self.loading = None;
                    self.error = Some("loading stopped unexpectedly".into());
                }
            }
        }
        while let Ok(ev) = self.worker.events.try_recv() {
            match ev {
                WorkerEvent::Device(opened) => {
                    if let Some(e) = self.device.opened(*opened) {
                        self.error = Some(e);
                    }
                }
                WorkerEvent::RunStarted {
                    job,
                    variant,
                    device,
                    note,
                    b_norm,
                    progress,
                } if Some(job) == self.running_job => {
                    if let Some(run) = self.runs.iter_mut().find(|r| r.variant == variant) {
                        run.device = device;
                        run.note = note;
                        run.b_norm = b_norm;
                        run.progress = Some(progress);
                    }
                }
                WorkerEvent::RunFinished {
                    job,
                    variant,
                    outcome,
                } if Some(job) == self.running_job => {
                    if let Some(run) = self.runs.iter_mut().find(|r| r.variant == variant) {
                        if let Some(rx) = run.progress.take() {
                            run.live
                                .extend(rx.try_iter().map(|p| (p.iteration, p.residual)));
                        }
                        run.outcome = Some(*outcome);
                    }
                }
                WorkerEvent::JobFinished { job, error } if Some(job) == self.running_job => {
                    self.running_job = None;
                    for run in &mut self.runs {
                        if run.outcome.is_none() {
                            run.progress = None;
                            run.outcome = Some(Err(if self.cancel.load(Ordering::Relaxed) {
                                "stopped before it started".into()
                            } else {
                                error.clone().unwrap_or_else(|| "not run".into())
                            }));
                        }
                    }
                    if let Some(e) = error {
                        self.error = Some(e);
                    } else if let Some(e) = self.runs.iter().find_map(|r| match &r.outcome {
                        Some(Err(e)) => Some(format!("{} {}: {e}", r.variant, self.method)),
                        _ => None,
                    }) {
                        self.error = Some(e);
                    }
                }
                _ => {} // events of a job replaced meanwhile
            }
        }
        for run in &mut self.runs {
            if let Some(rx) = &run.progress {
                run.live
                    .extend(rx.try_iter().map(|p| (p.iteration, p.residual)));
            }
        }
        if self.loading.is_none()
            && self.running_job.is_none()
            && self.problem.is_some()
            && !matches!(self.device.state, DeviceState::Opening)
            && let Some(mode) = self.auto_run.take()
        {
            self.run_mode = mode;
            self.start_solve();
        }
    }

    fn set_problem(&mut self, ctx: &egui::Context, loaded: Loaded) {
        let t = &loaded.thumbnail;
        let pixels = t
            .rgba()
            .into_iter()
            .map(|[r, g, b, a]| Color32::from_rgba_unmultiplied(r, g, b, a))
            .collect();
        let image = egui::ColorImage::new([t.bins, t.bins], pixels);
        self.thumbnail = Some(ctx.load_texture("sparsity", image, egui::TextureOptions::NEAREST));
        if !loaded.facts.symmetric && self.method == Method::Cg {
            // A sample names the method to try first; otherwise BiCGStab.
            let suggested = match &loaded.source {
                Source::Sample(name) => samples::find(name)
                    .ok()
                    .and_then(|s| s.suggested_method.parse::<Method>().ok()),
                _ => None,
            };
            self.method = suggested.unwrap_or(Method::Bicgstab);
            self.notice = Some(format!(
                "the matrix is not symmetric: switched the method to {}",
                self.method
            ));
        } else if let Source::Sample(name) = &loaded.source
            && loaded.rhs.is_some()
        {
            self.notice = Some(format!(
                "{name} comes with its right-hand side: solving for it"
            ));
        }
        self.problem = Some(loaded);
        self.runs.clear();
        self.shown_opts = None;
        self.error = None;
    }

    fn open_dropped(&mut self, ctx: &egui::Context) {
        let dropped = ctx.input(|i| i.raw.dropped_files.clone());
        let Some(file) = dropped.first() else { return };
        if self.loading.is_some() || self.running_job.is_some() {
            self.error = Some("busy: stop the solve before loading another matrix".into());
            return;
        }
        let path = file.path().to_path_buf();
        if !path.is_file() {
            // No file on disk behind the drop (the web): parse the bytes here.
            let name = path.display().to_string();
            match file.bytes().and_then(|b| problem::load_bytes(&name, &b)) {
                Ok(matrix) => {
                    let loaded = Loaded::new(Source::File(path), matrix, 0.0);
                    self.set_problem(ctx, loaded);
                }
                Err(e) => {
                    let short = Source::File(path).name();
                    self.error = Some(format!("Could not load {short}: {e}"));
                }
            }
            return;
        }
        self.path_text = path.display().to_string();
        self.start_load(Source::File(path));
    }

    // ---- UI --------------------------------------------------------------------------------

    fn top_bar(&mut self, ui: &mut Ui) {
        let can_switch =
            self.running_job.is_none() && !matches!(self.device.state, DeviceState::Opening);
        if let Some(selection) = self.device.ui(ui, can_switch) {
            self.select_device(selection);
        }
        let hovering = ui.ctx().input(|i| !i.raw.hovered_files.is_empty());
        if hovering {
            ui.label(RichText::new("Drop the .mtx / .mtx.gz file to load it").strong());
        }
    }

    fn messages(&self, ui: &mut Ui) {
        if let Some(e) = &self.error {
            ui.colored_label(Color32::from_rgb(220, 50, 50), format!("Error: {e}"));
        }
        if let Some(n) = &self.notice {
            ui.label(n);
        }
        for run in &self.runs {
            if let Some(note) = &run.note {
                ui.colored_label(
                    Color32::from_rgb(200, 120, 0),
                    format!("note ({}): {note}", run.variant),
                );
            }
        }
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
                .show(ui, |ui| self.counters(ui));
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
