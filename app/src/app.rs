//! The krylov-studio window: load or generate a matrix, solve it on the GPU, watch the
//! residuals converge live with the library's launch and transfer counts side by side.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use egui::{Color32, RichText, TextureHandle, Ui};
use egui_plot::{GridInput, GridMark, HLine, HoverPosition, Legend, Line, LineStyle, Plot};
use krylov_wgpu::Precision;
use krylov_wgpu::gpu::AdapterSummary;
use krylov_wgpu::matrix::market::write_vector;
use krylov_wgpu::solvers::{
    CheckMode, GramSchmidt, Method, Precond, Progress, SolveOptions, SolveReport, Variant,
};

use crate::problem::{self, Family, Loaded, Source, human_bytes};
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
    /// Start a solve as soon as the matrix is ready.
    pub run: Option<RunMode>,
    /// Variant(s) selected at start (without solving).
    pub preselect: Option<RunMode>,
    pub method: Option<Method>,
    pub precision: Option<Precision>,
    pub check_mode: Option<CheckMode>,
    pub precond: Option<Precond>,
    pub profile: bool,
}

/// The solver device as the UI knows it.
#[derive(Debug, Clone)]
pub enum DeviceState {
    Opening,
    Ready(AdapterSummary),
    /// No GPU: solves run on the CPU reference.
    Unavailable(String),
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
    device: DeviceState,

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
    /// Creates the app (its solver thread opens the GPU at once) and applies `args`.
    pub fn new(ctx: &egui::Context, args: StartupArgs) -> Self {
        let wake_ctx = ctx.clone();
        let worker = Worker::spawn(move || wake_ctx.request_repaint());
        let family = Family::Poisson2dFd;
        let size = family.default_size();
        let mut app = StudioApp {
            worker,
            ctx: ctx.clone(),
            device: DeviceState::Opening,
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
        &self.device
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
        self.precision_choice.unwrap_or(match &self.device {
            DeviceState::Ready(s) if s.shader_f64 => Precision::F64,
            DeviceState::Ready(_) => Precision::F32,
            _ => Precision::F64,
        })
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
                WorkerEvent::Device(Ok(s)) => self.device = DeviceState::Ready(s),
                WorkerEvent::Device(Err(e)) => self.device = DeviceState::Unavailable(e),
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
            && !matches!(self.device, DeviceState::Opening)
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
            self.method = Method::Bicgstab;
            self.notice =
                Some("the matrix is not symmetric: switched the method to BiCGStab".into());
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

    // ---- Exports ---------------------------------------------------------------------------

    /// The target of an export: the path field (a folder gets `default_name` appended), or a
    /// save dialog when the field is empty.
    fn export_target(&mut self, default_name: &str, ext: &str) -> Option<PathBuf> {
        let text = self.export_path.trim();
        if !text.is_empty() {
            let p = PathBuf::from(text);
            return Some(if p.is_dir() { p.join(default_name) } else { p });
        }
        let picked = rfd::FileDialog::new()
            .set_file_name(default_name)
            .add_filter(ext, &[ext])
            .save_file();
        if picked.is_none() {
            self.notice = Some(
                "no file chosen (the file dialog needs an xdg-desktop-portal): type a path in \
                 the export path field"
                    .into(),
            );
        }
        picked
    }

    fn history_csv(&self) -> String {
        let mut csv = String::from("variant,iteration,residual,relative_residual\n");
        for run in &self.runs {
            if let Some(rep) = run.report() {
                for (k, r) in rep.history.iter().enumerate() {
                    let rel = if rep.b_norm > 0.0 { r / rep.b_norm } else { *r };
                    csv.push_str(&format!("{},{k},{r:e},{rel:e}\n", run.variant));
                }
            }
        }
        csv
    }

    fn export_history(&mut self) {
        if self.runs.iter().all(|r| r.report().is_none()) {
            self.error = Some("nothing to export yet: run a solve first".into());
            return;
        }
        let name = format!("{}-history.csv", self.file_stem());
        if let Some(path) = self.export_target(&name, "csv") {
            match std::fs::write(&path, self.history_csv()) {
                Ok(()) => self.done_export(&path, "residual history"),
                Err(e) => self.error = Some(format!("could not write {}: {e}", path.display())),
            }
        }
    }

    fn export_solution(&mut self) {
        let Some(run) = self.runs.get(self.export_run) else {
            self.error = Some("nothing to export yet: run a solve first".into());
            return;
        };
        let Some(Ok(outcome)) = &run.outcome else {
            self.error = Some(format!("the {} run has no solution", run.variant));
            return;
        };
        let x = outcome.x.clone();
        let name = format!("{}-{}-x.mtx", self.file_stem(), run.variant);
        if let Some(path) = self.export_target(&name, "mtx") {
            match write_vector(&path, &x) {
                Ok(()) => self.done_export(&path, "solution"),
                Err(e) => self.error = Some(problem::one_line(&e.to_string())),
            }
        }
    }

    fn copy_report(&mut self, ctx: &egui::Context) {
        match self.runs.get(self.export_run).and_then(RunView::report) {
            Some(rep) => {
                ctx.copy_text(rep.to_json());
                self.notice = Some(format!("copied the {} report (JSON)", rep.variant));
            }
            None => self.error = Some("no report to copy yet: run a solve first".into()),
        }
    }

    fn done_export(&mut self, path: &Path, what: &str) {
        self.error = None;
        self.notice = Some(format!("saved the {what} to {}", path.display()));
    }

    fn file_stem(&self) -> String {
        let name = self
            .problem
            .as_ref()
            .map(|p| p.source.name())
            .unwrap_or_else(|| "krylov".into());
        let name = name.trim_end_matches(".gz").trim_end_matches(".mtx");
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    // ---- UI --------------------------------------------------------------------------------

    fn top_bar(&mut self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.heading("krylov-studio");
            ui.separator();
            match &self.device {
                DeviceState::Opening => {
                    ui.spinner();
                    ui.label("opening the GPU…");
                }
                DeviceState::Ready(s) => {
                    let yn = |b: bool| if b { "yes" } else { "no" };
                    ui.label(RichText::new(format!("GPU: {}", s.name)).strong())
                        .on_hover_text(format!("driver: {}", s.driver));
                    ui.label(format!(
                        "{} · {} · f64 {} · subgroups {} · timestamps {} · max binding {} · max buffer {}",
                        s.backend,
                        s.device_type,
                        yn(s.shader_f64),
                        if s.subgroup {
                            format!("yes ({}..{})", s.subgroup_min_size, s.subgroup_max_size)
                        } else {
                            "no".into()
                        },
                        yn(s.timestamp_query),
                        human_bytes(s.max_storage_buffer_binding_size as usize),
                        human_bytes(s.max_buffer_size as usize),
                    ));
                }
                DeviceState::Unavailable(e) => {
                    ui.colored_label(
                        Color32::from_rgb(200, 120, 0),
                        format!("No GPU ({e}): solves run on the CPU reference"),
                    );
                }
            }
        });
        let hovering = ui.ctx().input(|i| !i.raw.hovered_files.is_empty());
        if hovering {
            ui.label(RichText::new("Drop the .mtx / .mtx.gz file to load it").strong());
        }
    }

    fn matrix_controls(&mut self, ui: &mut Ui) {
        ui.heading("Matrix");
        let busy = self.is_busy();
        ui.add_enabled_ui(!busy, |ui| {
            if ui.button("Open .mtx file…").clicked() {
                let picked = rfd::FileDialog::new()
                    .add_filter("Matrix Market", &["mtx", "gz"])
                    .pick_file();
                match picked {
                    Some(p) => {
                        self.path_text = p.display().to_string();
                        self.start_load(Source::File(p));
                    }
                    None => {
                        self.notice = Some(
                            "no file chosen (the file dialog needs an xdg-desktop-portal): type \
                             a path below or drop the file onto the window"
                                .into(),
                        )
                    }
                }
            }
            ui.horizontal(|ui| {
                let l = ui.label("Path");
                let edit = ui
                    .add(
                        egui::TextEdit::singleline(&mut self.path_text)
                            .hint_text("/path/to/matrix.mtx(.gz)")
                            .desired_width(190.0),
                    )
                    .labelled_by(l.id);
                let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if (ui.button("Load").clicked() || enter) && !self.path_text.trim().is_empty() {
                    let p = PathBuf::from(self.path_text.trim());
                    self.start_load(Source::File(p));
                }
            });
            ui.label(RichText::new("…or drop a .mtx / .mtx.gz file onto the window").weak());
            ui.add_space(4.0);
            let before = (self.family, self.size);
            egui::ComboBox::from_label("Problem")
                .selected_text(self.family.label())
                .show_ui(ui, |ui| {
                    for f in Family::ALL {
                        ui.selectable_value(&mut self.family, f, f.label());
                    }
                });
            if self.family != before.0 && !self.family.size_range().contains(&self.size) {
                self.size = self.family.default_size();
            }
            ui.add(
                egui::Slider::new(&mut self.size, self.family.size_range())
                    .logarithmic(true)
                    .text(self.family.size_name()),
            );
            if (self.family, self.size) != before {
                self.spec = self.family.spec(self.size);
            }
            ui.horizontal(|ui| {
                let l = ui.label("Spec");
                let edit = ui
                    .add(egui::TextEdit::singleline(&mut self.spec).desired_width(150.0))
                    .labelled_by(l.id)
                    .on_hover_text(krylov_wgpu::matrix::generators::SPEC_HELP);
                if edit.changed()
                    && let Some((family, size)) = problem::family_of_spec(&self.spec)
                {
                    self.family = family;
                    self.size = size;
                }
                if ui.button("Generate").clicked() {
                    let spec = self.spec.trim().to_string();
                    self.start_load(Source::Spec(spec));
                }
            });
            ui.label(RichText::new(format!("{} unknowns", self.family.unknowns(self.size))).weak());
        });
        if let Some((source, _)) = &self.loading {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("loading {}…", source.name()));
            });
        }
        if let Some(p) = &self.problem {
            ui.add_space(6.0);
            ui.label(RichText::new(p.source.name()).strong());
            let f = &p.facts;
            let yn = |b: bool| if b { "yes" } else { "no" };
            ui.horizontal_top(|ui| {
                egui::Grid::new("facts").num_columns(2).show(ui, |ui| {
                    ui.label("n");
                    ui.label(if f.nrows == f.ncols {
                        f.nrows.to_string()
                    } else {
                        format!("{} × {}", f.nrows, f.ncols)
                    });
                    ui.end_row();
                    ui.label("nnz");
                    ui.label(f.nnz.to_string());
                    ui.end_row();
                    ui.label("nnz/row");
                    ui.label(format!("{} / {:.2} / {}", f.row_min, f.row_mean, f.row_max))
                        .on_hover_text("minimum / mean / maximum stored entries per row");
                    ui.end_row();
                    ui.label("symmetric");
                    ui.label(yn(f.symmetric));
                    ui.end_row();
                    ui.label("diag. dominant");
                    ui.label(yn(f.diagonally_dominant));
                    ui.end_row();
                    if f.zero_diagonal {
                        ui.label("zero diagonal");
                        ui.label("yes (no Jacobi)");
                        ui.end_row();
                    }
                });
                if let Some(tex) = &self.thumbnail {
                    ui.add(egui::Image::new((tex.id(), egui::vec2(112.0, 112.0))))
                        .on_hover_text("sparsity pattern (stored entries binned 128 × 128)");
                }
            });
            egui::Grid::new("memory").num_columns(3).show(ui, |ui| {
                let every: String = f
                    .format_estimates(4)
                    .iter()
                    .zip(f.format_estimates(8))
                    .map(|(a, b)| {
                        let cell = |e: &krylov_wgpu::gpu::format::FormatEstimate| {
                            if e.fits {
                                human_bytes(e.bytes as usize)
                            } else {
                                format!("– ({:.1}× fill)", e.fill)
                            }
                        };
                        format!("{}: {} / {}\n", a.format, cell(a), cell(&b))
                    })
                    .collect();
                ui.label("memory").on_hover_text(format!(
                    "every GPU format, f32 / f64 (– : over the padding budget)\n{every}\nauto: {}",
                    f.auto.reason
                ));
                ui.label("f32");
                ui.label("f64");
                ui.end_row();
                let m32 = f.memory_per_format(4);
                let m64 = f.memory_per_format(8);
                let cell = |b: Option<usize>| b.map_or("–".to_string(), human_bytes);
                for (a, b) in m32.iter().zip(&m64) {
                    ui.label(&a.0);
                    ui.label(cell(a.1));
                    ui.label(cell(b.1));
                    ui.end_row();
                }
            });
        }
    }

    fn solver_controls(&mut self, ui: &mut Ui) {
        let running = self.running_job.is_some();
        ui.horizontal(|ui| {
            ui.heading("Solver");
            ui.add_space(8.0);
            let can_solve = !self.is_busy() && self.problem.is_some();
            if ui
                .add_enabled(
                    can_solve,
                    egui::Button::new(RichText::new("Solve").strong()),
                )
                .clicked()
            {
                self.start_solve();
            }
            if ui.add_enabled(running, egui::Button::new("Stop")).clicked() {
                self.stop();
            }
            if running {
                ui.spinner();
            }
        });
        let f64_ok = match &self.device {
            DeviceState::Ready(s) => s.shader_f64,
            _ => true, // the CPU reference computes in f64
        };
        ui.add_enabled_ui(!running, |ui| {
            ui.horizontal(|ui| {
                ui.radio_value(&mut self.run_mode, RunMode::Classical, "classical");
                ui.radio_value(&mut self.run_mode, RunMode::Pipelined, "pipelined");
                ui.radio_value(&mut self.run_mode, RunMode::Both, "both, side by side");
            });
            egui::Grid::new("solver").num_columns(2).show(ui, |ui| {
                let l = ui.label("Method");
                egui::ComboBox::from_id_salt("method")
                    .selected_text(self.method.as_str())
                    .show_ui(ui, |ui| {
                        for &m in Method::ALL {
                            ui.selectable_value(&mut self.method, m, m.as_str());
                        }
                    })
                    .response
                    .labelled_by(l.id);
                ui.end_row();

                let l = ui.label("Precision");
                let mut precision = self.precision();
                egui::ComboBox::from_id_salt("precision")
                    .selected_text(precision.to_string())
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut precision, Precision::F32, "f32");
                        ui.add_enabled_ui(f64_ok, |ui| {
                            ui.selectable_value(&mut precision, Precision::F64, "f64")
                                .on_disabled_hover_text("this adapter has no SHADER_F64");
                        });
                    })
                    .response
                    .labelled_by(l.id);
                if precision != self.precision() {
                    self.precision_choice = Some(precision);
                }
                ui.end_row();

                let l = ui.label("Format");
                egui::ComboBox::from_id_salt("format")
                    .selected_text(self.format.as_str())
                    .show_ui(ui, |ui| {
                        for &f in krylov_wgpu::solvers::Format::ALL {
                            ui.selectable_value(&mut self.format, f, f.as_str());
                        }
                    })
                    .response
                    .labelled_by(l.id)
                    .on_hover_text(
                        "the storage format of the GPU SpMV; auto chooses from the matrix \
                         (the result table says which and why)",
                    );
                ui.end_row();

                let l = ui.label("Preconditioner");
                egui::ComboBox::from_id_salt("precond")
                    .selected_text(self.precond.as_str())
                    .show_ui(ui, |ui| {
                        for &p in Precond::ALL {
                            ui.selectable_value(&mut self.precond, p, p.as_str());
                        }
                    })
                    .response
                    .labelled_by(l.id);
                ui.end_row();

                let l = ui.label("Check mode");
                egui::ComboBox::from_id_salt("check")
                    .selected_text(self.check_mode.as_str())
                    .show_ui(ui, |ui| {
                        for &c in CheckMode::ALL {
                            ui.selectable_value(&mut self.check_mode, c, c.as_str());
                        }
                    })
                    .response
                    .labelled_by(l.id)
                    .on_hover_text(
                        "paper: partial sums read back every iteration (paper 000)\n\
                         device: scalars stay on the GPU, residuals read once per batch",
                    );
                ui.end_row();

                let l = ui.label("rtol");
                ui.add(egui::TextEdit::singleline(&mut self.rtol_text).desired_width(80.0))
                    .labelled_by(l.id)
                    .on_hover_text("stop when |r| <= max(rtol·|b|, atol)");
                ui.end_row();
                let l = ui.label("atol");
                ui.add(egui::TextEdit::singleline(&mut self.atol_text).desired_width(80.0))
                    .labelled_by(l.id);
                ui.end_row();
                let l = ui.label("Max iterations");
                ui.add(egui::DragValue::new(&mut self.max_iter).range(1..=100_000_000))
                    .labelled_by(l.id);
                ui.end_row();
                let gmres = self.method == Method::Gmres;
                let l = ui.label("Restart m");
                ui.add_enabled(
                    gmres,
                    egui::DragValue::new(&mut self.restart).range(1..=1000),
                )
                .labelled_by(l.id)
                .on_disabled_hover_text("GMRES only");
                ui.end_row();
                let l = ui.label("Gram-Schmidt");
                ui.add_enabled_ui(gmres, |ui| {
                    egui::ComboBox::from_id_salt("gs")
                        .selected_text(self.gs.as_str())
                        .show_ui(ui, |ui| {
                            for &g in GramSchmidt::ALL {
                                ui.selectable_value(&mut self.gs, g, g.as_str());
                            }
                        })
                        .response
                        .labelled_by(l.id);
                });
                ui.end_row();
                let l = ui.label("Batch k");
                ui.add_enabled(
                    self.check_mode == CheckMode::Device,
                    egui::DragValue::new(&mut self.batch).range(0..=1024),
                )
                .labelled_by(l.id)
                .on_hover_text("iterations per submit in device mode (0: adaptive)");
                ui.end_row();
            });
            ui.checkbox(&mut self.profile, "GPU time per kernel (timestamps)");
        });
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

    fn plot(&self, ui: &mut Ui, height: f32) {
        let tol = self
            .shown_opts
            .as_ref()
            .map(|o| o.rtol)
            .filter(|t| *t > 0.0);
        Plot::new("residuals")
            .height(height)
            .legend(Legend::default())
            .x_axis_label("iteration")
            .y_axis_label("|r| / |b|  (log scale)")
            .include_y(0.0)
            .include_x(0.0)
            .include_x(10.0)
            .include_y(tol.map_or(-6.0, f64::log10))
            .y_grid_spacer(log_decades)
            .y_axis_formatter(|mark, _| {
                if (mark.value - mark.value.round()).abs() < 1e-9 {
                    format!("1e{}", mark.value.round() as i64)
                } else {
                    String::new()
                }
            })
            .label_formatter(|pos| match pos {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => Some(format!(
                    "{plot_name}\niteration {:.0}\n|r|/|b| = {:.3e}",
                    position.x,
                    10f64.powf(position.y)
                )),
                HoverPosition::Elsewhere { position } => Some(format!(
                    "iteration {:.0}\n|r|/|b| = {:.3e}",
                    position.x,
                    10f64.powf(position.y)
                )),
            })
            .show(ui, |plot_ui| {
                for run in &self.runs {
                    let pts = run.points();
                    if pts.is_empty() {
                        continue;
                    }
                    // Classical drawn wide underneath: where both variants produce the same
                    // residuals (as they should in exact arithmetic) both stay visible.
                    let width = match run.variant {
                        Variant::Classical => 5.0,
                        Variant::Pipelined => 2.0,
                    };
                    plot_ui.line(
                        Line::new(format!("{} {}", run.variant, self.method), pts)
                            .color(variant_color(run.variant))
                            .width(width),
                    );
                }
                if let Some(t) = tol {
                    plot_ui.hline(
                        HLine::new("tolerance", t.log10())
                            .color(Color32::GRAY)
                            .style(LineStyle::dashed_dense()),
                    );
                }
            });
    }

    fn counters(&self, ui: &mut Ui) {
        if self.runs.is_empty() {
            ui.label(
                RichText::new(
                    "Solve to see the counts: kernel launches (dispatches) and host transfers \
                     per iteration, classical vs pipelined.",
                )
                .weak(),
            );
            return;
        }
        // The headline: launches per iteration side by side.
        let classical = self
            .runs
            .iter()
            .find(|r| r.variant == Variant::Classical)
            .and_then(RunView::report);
        let pipelined = self
            .runs
            .iter()
            .find(|r| r.variant == Variant::Pipelined)
            .and_then(RunView::report);
        if let (Some(c), Some(p)) = (classical, pipelined)
            && c.device == "gpu"
            && p.device == "gpu"
            && p.dispatches_per_iteration > 0.0
        {
            ui.label(
                RichText::new(format!(
                    "pipelined {}: {:.2} launches per iteration vs classical {:.2} ({:.1}× fewer); \
                     host transfers {:.3} vs {:.3}",
                    p.method,
                    p.dispatches_per_iteration,
                    c.dispatches_per_iteration,
                    c.dispatches_per_iteration / p.dispatches_per_iteration,
                    p.transfers_per_iteration,
                    c.transfers_per_iteration
                ))
                .strong(),
            );
        }
        ui.horizontal_top(|ui| {
            egui::Grid::new("counters")
                .striped(true)
                .num_columns(self.runs.len() + 1)
                .min_col_width(120.0)
                .show(ui, |ui| {
                    ui.label(RichText::new("counter").strong());
                    for run in &self.runs {
                        ui.label(
                            RichText::new(run.variant.as_str())
                                .strong()
                                .color(variant_color(run.variant)),
                        );
                    }
                    ui.end_row();
                    let row = |ui: &mut Ui, name: &str, f: &dyn Fn(&RunView) -> String| {
                        ui.label(name);
                        for run in &self.runs {
                            ui.label(f(run));
                        }
                        ui.end_row();
                    };
                    ui.label("device");
                    for run in &self.runs {
                        let (device, adapter) = match run.report() {
                            Some(rep) => (rep.device.as_str(), rep.adapter.as_deref()),
                            None => (run.device, None),
                        };
                        let text = match device {
                            "gpu" => "GPU",
                            "cpu" => "CPU (reference)",
                            other => other,
                        };
                        let l = ui.label(text);
                        if let Some(a) = adapter {
                            l.on_hover_text(a);
                        }
                    }
                    ui.end_row();
                    row(ui, "status", &|r| r.status());
                    row(ui, "converged", &|v| {
                        rep_cell(v, |r| {
                            if r.converged {
                                "yes".into()
                            } else {
                                format!("no: {}", r.reason)
                            }
                        })
                    });
                    row(ui, "iterations", &|v| {
                        rep_cell(v, |r| r.iterations.to_string())
                    });
                    row(ui, "true |b-Ax|/|b|", &|v| {
                        rep_cell(v, |r| format!("{:.3e}", r.relative_residual))
                    });
                    row(ui, "dispatches / iteration", &|v| {
                        gpu_cell(v, |r| format!("{:.2}", r.dispatches_per_iteration))
                    });
                    row(ui, "host transfers / iteration", &|v| {
                        gpu_cell(v, |r| format!("{:.3}", r.transfers_per_iteration))
                    });
                    row(ui, "total dispatches", &|v| {
                        gpu_cell(v, |r| r.counts.dispatches.to_string())
                    });
                    row(ui, "submits / readbacks / uploads", &|v| {
                        gpu_cell(v, |r| {
                            format!(
                                "{} / {} / {}",
                                r.counts.submits, r.counts.readbacks, r.counts.uploads
                            )
                        })
                    });
                    row(ui, "bytes read back / uploaded", &|v| {
                        gpu_cell(v, |r| {
                            format!(
                                "{} / {}",
                                human_bytes(r.counts.bytes_read_back as usize),
                                human_bytes(r.counts.bytes_uploaded as usize)
                            )
                        })
                    });
                    row(ui, "format / matrix bytes", &|v| {
                        gpu_cell(v, |r| {
                            format!("{} / {}", r.format, human_bytes(r.matrix_bytes as usize))
                        })
                    });
                    row(ui, "check mode / batch / recorded", &|v| {
                        gpu_cell(v, |r| {
                            format!(
                                "{} / {} / {}",
                                r.check_mode.map_or("–", |c| c.as_str()),
                                r.batch_size,
                                r.iterations_recorded
                            )
                        })
                    });
                    row(ui, "µs / iteration", &|v| {
                        rep_cell(v, |r| {
                            let its = if r.device == "gpu" {
                                r.iterations_recorded
                            } else {
                                r.iterations
                            };
                            if its > 0 {
                                format!("{:.1}", r.loop_seconds / its as f64 * 1e6)
                            } else {
                                "–".into()
                            }
                        })
                    });
                    row(ui, "solve time", &|v| {
                        rep_cell(v, |r| format!("{:.1} ms", r.seconds * 1e3))
                    });
                });
            ui.separator();
            ui.vertical(|ui| self.kernel_times(ui));
        });
    }

    /// GPU time per kernel (timestamps), per iteration recorded, one column per run.
    fn kernel_times(&self, ui: &mut Ui) {
        let mut kernels: Vec<&str> = self
            .runs
            .iter()
            .filter_map(RunView::report)
            .flat_map(|r| r.kernel_times.iter().map(|k| k.name.as_str()))
            .collect();
        kernels.sort_unstable();
        kernels.dedup();
        if kernels.is_empty() {
            if self.profile && self.runs.iter().all(|r| r.outcome.is_some()) {
                ui.label(RichText::new("no kernel timestamps from this device").weak());
            } else if !self.profile {
                ui.label(
                    RichText::new("tick \"GPU time per kernel\" for timestamps per kernel").weak(),
                );
            }
            return;
        }
        egui::Grid::new("kernel-times")
            .striped(true)
            .num_columns(self.runs.len() + 1)
            .show(ui, |ui| {
                ui.label(RichText::new("GPU µs / iteration").strong());
                for run in &self.runs {
                    ui.label(
                        RichText::new(run.variant.as_str())
                            .strong()
                            .color(variant_color(run.variant)),
                    );
                }
                ui.end_row();
                for name in kernels {
                    ui.label(name);
                    for run in &self.runs {
                        let cell = run.report().and_then(|rep| {
                            let k = rep.kernel_times.iter().find(|k| k.name == name)?;
                            Some((
                                k.seconds * 1e6 / rep.iterations_recorded.max(1) as f64,
                                k.calls,
                            ))
                        });
                        match cell {
                            Some((us, calls)) => {
                                ui.label(format!("{us:.1}"))
                                    .on_hover_text(format!("{calls} calls in the whole solve"));
                            }
                            None => {
                                ui.label("–");
                            }
                        }
                    }
                    ui.end_row();
                }
            });
    }

    fn export_bar(&mut self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("Export path");
            ui.add(
                egui::TextEdit::singleline(&mut self.export_path)
                    .hint_text("file or folder (empty: dialog)")
                    .desired_width(190.0),
            )
            .labelled_by(l.id);
            if self.runs.len() > 1 {
                ui.label("run:");
                for (i, run) in self.runs.iter().enumerate() {
                    ui.radio_value(&mut self.export_run, i, format!("{} run", run.variant));
                }
            }
            let has = self.runs.iter().any(|r| r.report().is_some());
            if ui
                .add_enabled(has, egui::Button::new("Save history CSV"))
                .clicked()
            {
                self.export_history();
            }
            if ui
                .add_enabled(has, egui::Button::new("Save solution .mtx"))
                .clicked()
            {
                self.export_solution();
            }
            if ui
                .add_enabled(has, egui::Button::new("Copy JSON report"))
                .clicked()
            {
                let ctx = ui.ctx().clone();
                self.copy_report(&ctx);
            }
        });
    }
}

/// A counter cell: the report's value, or a dash while there is no report.
fn rep_cell(run: &RunView, f: impl Fn(&SolveReport) -> String) -> String {
    run.report().map(f).unwrap_or_else(|| "–".into())
}

/// A GPU counter cell: the value for GPU runs, "CPU" for CPU runs (they have no GPU work).
fn gpu_cell(run: &RunView, f: impl Fn(&SolveReport) -> String) -> String {
    match run.report() {
        Some(rep) if rep.device == "gpu" => f(rep),
        Some(_) => "CPU".into(),
        None => "–".into(),
    }
}

/// Grid marks at whole decades of a log10 axis (every decade, or every few when zoomed out).
fn log_decades(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return Vec::new();
    }
    let step = ((hi - lo) / 10.0).ceil().max(1.0);
    let mut marks = Vec::new();
    let mut v = (lo / step).floor() * step;
    while v <= hi && marks.len() < 200 {
        if v >= lo {
            marks.push(GridMark {
                value: v,
                step_size: step,
            });
        }
        v += step;
    }
    marks
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
