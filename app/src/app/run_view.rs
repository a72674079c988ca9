//! One run (classical, pipelined or CA-GMRES) of the current solve: what the solver thread sent so far, the
//! points the plot draws and the status line the counters show.

use std::sync::mpsc::Receiver;

use krylov_wgpu::solvers::{Progress, SolveReport};

use super::RunKind;
use crate::worker::RunOutcome;

/// One run (one [`RunKind`]) of the current solve.
#[derive(Debug)]
pub struct RunView {
    pub kind: RunKind,
    /// `"queued"`, `"gpu"` or `"cpu"`.
    pub device: &'static str,
    pub note: Option<String>,
    pub b_norm: f64,
    /// Residual norms received so far: (iteration, ‖r‖).
    pub live: Vec<(usize, f64)>,
    pub(super) progress: Option<Receiver<Progress>>,
    pub outcome: Option<Result<RunOutcome, String>>,
}

impl RunView {
    pub(super) fn queued(kind: RunKind) -> Self {
        RunView {
            kind,
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

    /// Takes the residuals that arrived since the last frame.
    pub(super) fn drain_progress(&mut self) {
        if let Some(rx) = &self.progress {
            self.live
                .extend(rx.try_iter().map(|p| (p.iteration, p.residual)));
        }
    }

    /// The residual history to plot: the report's once finished, else what arrived.
    pub(super) fn points(&self) -> Vec<[f64; 2]> {
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
            .map(|(k, r, b)| [k as f64, relative(r, b).log10()])
            .collect()
    }

    pub(super) fn status(&self) -> String {
        match &self.outcome {
            None if self.device == "queued" => "waiting".into(),
            None => match self.live.last() {
                Some(&(k, r)) => format!(
                    "running: iteration {k}, |r|/|b| = {:.3e}",
                    relative(r, self.b_norm)
                ),
                None => "running: setting up".into(),
            },
            Some(Ok(o)) => o.report.reason_detail.clone(),
            Some(Err(e)) => format!("failed: {e}"),
        }
    }
}

/// `r / b`, or `r` itself when `b` is zero (a zero right-hand side).
pub(super) fn relative(r: f64, b: f64) -> f64 {
    if b > 0.0 { r / b } else { r }
}
