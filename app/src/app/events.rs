//! What the loader and the solver thread send: taken once per frame, before the panels draw.

use std::sync::atomic::Ordering;
use std::sync::mpsc::TryRecvError;

use super::{RunKind, RunView, StudioApp};
use crate::device_panel::DeviceState;
use crate::worker::WorkerEvent;

impl StudioApp {
    /// Takes everything the loader and the solver thread sent since the last frame.
    pub(super) fn poll(&mut self, ctx: &egui::Context) {
        self.poll_loader(ctx);
        while let Ok(ev) = self.worker.events.try_recv() {
            self.on_worker_event(ev);
        }
        for run in &mut self.runs {
            run.drain_progress();
        }
        if self.loading.is_none()
            && self.running_job.is_none()
            && self.problem.is_some()
            && !matches!(self.device.state, DeviceState::Opening)
            && let Some(mode) = self.auto_run.take()
        {
            self.run_mode = mode.for_method(self.method);
            self.start_solve();
        }
    }

    /// The matrix being loaded, once the loader thread is done with it.
    fn poll_loader(&mut self, ctx: &egui::Context) {
        let Some((source, rx)) = &self.loading else {
            return;
        };
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
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => {
                self.loading = None;
                self.error = Some("loading stopped unexpectedly".into());
            }
        }
    }

    fn on_worker_event(&mut self, ev: WorkerEvent) {
        match ev {
            WorkerEvent::Device(opened) => {
                if let Some(e) = self.device.opened(*opened) {
                    self.error = Some(e);
                }
            }
            WorkerEvent::RunStarted {
                job,
                kind,
                device,
                note,
                b_norm,
                progress,
            } if Some(job) == self.running_job => {
                if let Some(run) = self.run_mut(kind) {
                    run.device = device;
                    run.note = note;
                    run.b_norm = b_norm;
                    run.progress = Some(progress);
                }
            }
            WorkerEvent::RunFinished { job, kind, outcome } if Some(job) == self.running_job => {
                if let Some(run) = self.run_mut(kind) {
                    run.drain_progress();
                    run.progress = None;
                    run.outcome = Some(*outcome);
                }
            }
            WorkerEvent::JobFinished { job, error } if Some(job) == self.running_job => {
                self.job_finished(error);
            }
            _ => {} // events of a job replaced meanwhile
        }
    }

    fn run_mut(&mut self, kind: RunKind) -> Option<&mut RunView> {
        self.runs.iter_mut().find(|r| r.kind == kind)
    }

    /// The solve is over: runs that did not finish say why, and the first failure is shown.
    fn job_finished(&mut self, error: Option<String>) {
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
            Some(Err(e)) => Some(format!("{}: {e}", r.kind.title(self.method))),
            _ => None,
        }) {
            self.error = Some(e);
        }
    }
}
