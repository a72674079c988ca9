//! What the panels ask for: load a matrix (file, drop, sample or generator), open another
//! device, start and stop a solve.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;

use egui::Color32;
use krylov_wgpu::Precision;
use krylov_wgpu::matrix::samples;
use krylov_wgpu::solvers::{Method, Precond, SolveOptions, Variant};

use super::{RunKind, RunView, StudioApp};
use crate::device::DeviceSelection;
use crate::problem::{self, Loaded, Source};
use crate::worker::SolveJob;

impl StudioApp {
    /// Loads `source` on a thread of its own; `poll` takes the result.
    pub(super) fn start_load(&mut self, source: Source) {
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

    /// Shows a loaded matrix (its sparsity thumbnail, a method that suits it) and clears the
    /// runs of the previous one.
    pub(super) fn set_problem(&mut self, ctx: &egui::Context, loaded: Loaded) {
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

    /// Loads the first file dropped onto the window.
    pub(super) fn open_dropped(&mut self, ctx: &egui::Context) {
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

    /// The precision of the next solve: the one chosen, else the device's default.
    pub(super) fn precision(&self) -> Precision {
        self.precision_choice
            .unwrap_or_else(|| self.device.default_precision())
    }

    /// Asks the solver thread to open `selection` (not while a solve runs).
    pub(super) fn select_device(&mut self, selection: DeviceSelection) {
        if self.running_job.is_some() {
            return;
        }
        let precision = self.precision_choice.unwrap_or(Precision::F64);
        match self.worker.select_device(selection, precision) {
            Ok(()) => self.device.switching(selection, precision),
            Err(e) => self.error = Some(e),
        }
    }

    /// The Solver panel's settings, checked (with those of the CA-GMRES run when the run mode
    /// has one: no preconditioner, m a multiple of s).
    pub(super) fn options(&self) -> Result<SolveOptions, String> {
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
            s_step: self.s_step,
            tsqr: self.tsqr,
            basis: self.basis,
            precond: self.precond,
            side: self.side,
            trisolve: self.trisolve.with_sweeps(self.sweeps),
            reorder: krylov_wgpu::solvers::Reorder::Auto,
            gs: self.gs,
            check_mode: self.check_mode,
            batch: self.batch,
            format: self.format,
            max_padding: krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET,
            ..SolveOptions::default()
        };
        opts.validate().map_err(|e| e.to_string())?;
        if self.run_mode.has_ca(self.method) {
            if opts.precond != Precond::None && opts.side == krylov_wgpu::solvers::Side::Left {
                return Err(format!(
                    "CA-GMRES applies {} on the right (x = M⁻¹y): set Side to right, or run \
                     classical or pipelined GMRES with it on the left",
                    opts.precond
                ));
            }
            RunKind::Ca
                .options(&opts)
                .validate()
                .map_err(|e| e.to_string())?;
        }
        Ok(opts)
    }

    /// Sends the loaded matrix to the solver thread, one run per kind of the run mode.
    pub(super) fn start_solve(&mut self) {
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
        let devices = match self.devices_text.trim() {
            "" => None,
            text => match text.parse::<krylov_wgpu::gpu::DeviceList>() {
                Ok(list) => Some(list),
                Err(e) => {
                    self.error = Some(format!("Devices: {e}"));
                    return;
                }
            },
        };
        self.cancel = Arc::new(AtomicBool::new(false));
        let id = self.next_job;
        self.next_job += 1;
        let kinds = self.run_mode.kinds(self.method);
        let job = SolveJob {
            id,
            matrix: problem.matrix.clone(),
            rhs: problem.rhs.clone(),
            kinds: kinds.clone(),
            opts: opts.clone(),
            precision: self.precision(),
            profile: self.profile,
            devices,
            cancel: self.cancel.clone(),
        };
        match self.worker.submit(job) {
            Ok(()) => {
                self.error = None;
                self.notice = None;
                self.runs = kinds.into_iter().map(RunView::queued).collect();
                self.export_run = self.runs.len() - 1;
                self.shown_opts = Some(opts);
                self.running_job = Some(id);
            }
            Err(e) => self.error = Some(e),
        }
    }

    pub(super) fn stop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use krylov_wgpu::solvers::{Basis, Precond, Side, Trisolve, Tsqr};

    use super::super::{RunMode, StartupArgs, TrisolveMode};
    use super::*;

    /// The app on the CPU reference (nothing to open), started with `args`.
    fn app(args: StartupArgs) -> StudioApp {
        StudioApp::new(
            &egui::Context::default(),
            StartupArgs {
                device: DeviceSelection::Cpu,
                ..args
            },
        )
    }

    #[test]
    fn options_carry_the_side_and_the_triangular_solve() {
        let mut a = app(StartupArgs::default());
        let opts = a.options().unwrap();
        assert_eq!((opts.side, opts.trisolve), (Side::Right, Trisolve::Auto));
        assert_eq!(opts.precond, Precond::None);
        // What the Solver panel's combo boxes and the K field set.
        a.side = Side::Left;
        a.trisolve = TrisolveMode::Sweeps;
        a.sweeps = 9;
        let opts = a.options().unwrap();
        assert_eq!(
            (opts.side, opts.trisolve),
            (Side::Left, Trisolve::Sweeps(9))
        );
        a.trisolve = TrisolveMode::Levels;
        assert_eq!(a.options().unwrap().trisolve, Trisolve::Levels);

        // From the command line.
        let a = app(StartupArgs {
            precond: Some(Precond::Ilu0),
            side: Some(Side::Left),
            trisolve: Some(Trisolve::Sweeps(4)),
            ..Default::default()
        });
        let opts = a.options().unwrap();
        assert_eq!(
            (opts.precond, opts.side, opts.trisolve),
            (Precond::Ilu0, Side::Left, Trisolve::Sweeps(4))
        );
        assert_eq!((a.trisolve, a.sweeps), (TrisolveMode::Sweeps, 4));
    }

    #[test]
    fn ca_gmres_runs_beside_gmres_with_its_own_options() {
        let mut a = app(StartupArgs {
            method: Some(Method::Gmres),
            preselect: Some(RunMode::All),
            s_step: Some(4),
            restart: Some(20),
            tsqr: Some(Tsqr::Cgs2),
            basis: Some(Basis::Monomial),
            ..Default::default()
        });
        assert_eq!(a.run_mode, RunMode::All);
        let opts = a.options().unwrap();
        assert_eq!(
            (opts.s_step, opts.restart, opts.tsqr, opts.basis),
            (4, 20, Tsqr::Cgs2, Basis::Monomial)
        );
        // Each run's options: the variant, or CA-GMRES's method.
        let kinds = a.run_mode.kinds(a.method);
        assert_eq!(
            kinds,
            vec![RunKind::Classical, RunKind::Pipelined, RunKind::Ca]
        );
        let per_run: Vec<_> = kinds.iter().map(|k| k.options(&opts)).collect();
        assert_eq!(
            per_run.iter().map(|o| o.method).collect::<Vec<_>>(),
            vec![Method::Gmres, Method::Gmres, Method::CaGmres]
        );
        assert_eq!(per_run[0].variant, Variant::Classical);
        assert_eq!(per_run[2].ca().s, 4);

        // m must be a multiple of s, and CA-GMRES preconditions on the right only: refused
        // with the reason, while GMRES alone still takes both.
        a.restart = 30;
        assert!(a.options().unwrap_err().contains("multiple of s = 4"));
        a.restart = 20;
        a.precond = Precond::Ilu0;
        assert!(a.options().is_ok());
        a.side = krylov_wgpu::solvers::Side::Left;
        assert!(a.options().unwrap_err().contains("on the right"));
        a.side = krylov_wgpu::solvers::Side::Right;
        a.run_mode = RunMode::Both;
        a.restart = 30;
        assert!(a.options().is_ok());

        // CA-GMRES is GMRES's only and fused CG's and GMRES's: other methods fall back to
        // their variants; CG's three are classical, pipelined and fused.
        assert_eq!(RunMode::All.for_method(Method::Bicgstab), RunMode::Both);
        assert_eq!(RunMode::Ca.for_method(Method::Bicgstab), RunMode::Pipelined);
        assert_eq!(RunMode::Fused.for_method(Method::Gmres), RunMode::Fused);
        assert_eq!(
            RunMode::Workgroup.for_method(Method::Cg),
            RunMode::Workgroup
        );
        // Workgroup is CG's and GMRES's (alone, not among GMRES's "all three").
        assert_eq!(
            RunMode::Workgroup.for_method(Method::Gmres),
            RunMode::Workgroup
        );
        for m in [Method::Bicgstab, Method::Bicg, Method::Jacobi] {
            assert_eq!(RunMode::Workgroup.for_method(m), RunMode::Pipelined);
        }
        assert_eq!(
            RunMode::Workgroup.kinds(Method::Gmres),
            vec![RunKind::Workgroup]
        );
        assert!(!RunMode::Workgroup.has_ca(Method::Gmres));
        assert!(
            !RunMode::All
                .kinds(Method::Gmres)
                .contains(&RunKind::Workgroup)
        );
        assert_eq!(
            RunKind::Workgroup.options(&opts).variant,
            Variant::Workgroup
        );
        assert_eq!(RunKind::Workgroup.options(&opts).method, Method::Gmres);
        // Cooperative is CG's only, run alone with its own variant.
        assert_eq!(
            RunMode::Cooperative.for_method(Method::Cg),
            RunMode::Cooperative
        );
        for m in [
            Method::Gmres,
            Method::Bicgstab,
            Method::Bicg,
            Method::Jacobi,
        ] {
            assert_eq!(RunMode::Cooperative.for_method(m), RunMode::Pipelined);
        }
        assert_eq!(
            RunMode::Cooperative.kinds(Method::Cg),
            vec![RunKind::Cooperative]
        );
        assert_eq!(
            RunKind::Cooperative.options(&opts).variant,
            Variant::Cooperative
        );
        // P1 is GMRES's only, run alone with its own variant.
        assert_eq!(RunMode::P1.for_method(Method::Gmres), RunMode::P1);
        for m in [Method::Cg, Method::Bicgstab, Method::Bicg, Method::Jacobi] {
            assert_eq!(RunMode::P1.for_method(m), RunMode::Pipelined);
        }
        assert_eq!(RunMode::P1.kinds(Method::Gmres), vec![RunKind::P1]);
        assert_eq!(RunMode::P1.kinds(Method::Cg), vec![RunKind::Pipelined]);
        assert!(!RunMode::P1.has_ca(Method::Gmres));
        assert_eq!(RunKind::P1.options(&opts).variant, Variant::P1);
        assert_eq!(RunKind::P1.options(&opts).method, Method::Gmres);
        assert_eq!(
            RunMode::Fused.for_method(Method::Bicgstab),
            RunMode::Pipelined
        );
        assert_eq!(RunMode::All.for_method(Method::Gmres), RunMode::All);
        assert_eq!(
            RunMode::All.kinds(Method::Cg),
            vec![RunKind::Classical, RunKind::Pipelined, RunKind::Fused]
        );
        assert!(!RunMode::All.has_ca(Method::Cg));
        a.precond = Precond::None;
        a.run_mode = RunMode::All;
        a.method = Method::Cg;
        a.restart = 30;
        assert!(a.options().is_ok(), "no CA run for CG");
        // `--method cagmres` handed over as it is: GMRES.
        let a = app(StartupArgs {
            method: Some(Method::CaGmres),
            preselect: Some(RunMode::Ca),
            ..Default::default()
        });
        assert_eq!((a.method, a.run_mode), (Method::Gmres, RunMode::Ca));
        // A CG-only variant handed over with another method starts as pipelined.
        let a = app(StartupArgs {
            method: Some(Method::Gmres),
            preselect: Some(RunMode::Cooperative),
            ..Default::default()
        });
        assert_eq!((a.method, a.run_mode), (Method::Gmres, RunMode::Pipelined));
        // Workgroup handed over with GMRES stays GMRES's workgroup run.
        let a = app(StartupArgs {
            method: Some(Method::Gmres),
            preselect: Some(RunMode::Workgroup),
            ..Default::default()
        });
        assert_eq!((a.method, a.run_mode), (Method::Gmres, RunMode::Workgroup));
        // And a GMRES-only one with CG.
        let a = app(StartupArgs {
            method: Some(Method::Cg),
            preselect: Some(RunMode::P1),
            ..Default::default()
        });
        assert_eq!((a.method, a.run_mode), (Method::Cg, RunMode::Pipelined));
    }

    #[test]
    fn trisolve_modes_round_trip() {
        for t in [
            Trisolve::Auto,
            Trisolve::Levels,
            Trisolve::Sweeps(1),
            Trisolve::Sweeps(100),
        ] {
            let (mode, k) = TrisolveMode::split(t);
            assert_eq!(mode.with_sweeps(k), t);
            assert_eq!(t.to_string().split(':').next(), Some(mode.as_str()));
        }
        // Strategies without K start `sweeps` from the count `auto` would take.
        let (mode, k) = TrisolveMode::split(Trisolve::Levels);
        assert_eq!(mode.with_sweeps(k), Trisolve::Levels);
        assert_eq!(
            TrisolveMode::Sweeps.with_sweeps(k),
            Trisolve::Sweeps(Trisolve::AUTO_SWEEPS)
        );
    }
}
