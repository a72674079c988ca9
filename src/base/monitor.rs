//! Live progress of a solve: residuals as batches arrive, and cancellation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;

/// Receives the residual norms of a solve as they reach the host (every iteration in
/// `paper` mode, once per batch in `device` mode) and may cancel it between batches.
pub trait Monitor {
    /// The setup is done (matrix uploaded, kernels compiled) and the timed iteration loop
    /// starts now; called before every loop (restarts included).
    fn on_loop_start(&mut self) {}
    /// ‖r‖₂ after `iteration` iterations (0: the initial residual).
    fn on_residual(&mut self, iteration: usize, residual: f64) {
        let _ = (iteration, residual);
    }
    /// Polled between batches; `true` stops the solve with `StopReason::Cancelled`.
    fn cancelled(&self) -> bool {
        false
    }
}

/// No monitoring.
impl Monitor for () {}

/// A monitor calling a closure for every residual.
///
/// ```
/// use krylov_wgpu::solvers::{FnMonitor, Monitor};
/// let mut seen = Vec::new();
/// let mut m = FnMonitor(|it, r| seen.push((it, r)));
/// m.on_residual(0, 1.0);
/// drop(m);
/// assert_eq!(seen, vec![(0, 1.0)]);
/// ```
pub struct FnMonitor<F: FnMut(usize, f64)>(pub F);

impl<F: FnMut(usize, f64)> Monitor for FnMonitor<F> {
    fn on_residual(&mut self, iteration: usize, residual: f64) {
        (self.0)(iteration, residual)
    }
}

/// One progress event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub iteration: usize,
    pub residual: f64,
}

/// Sends every residual over a channel (for a UI thread) and honours a shared cancel flag.
#[derive(Debug, Clone)]
pub struct ChannelMonitor {
    pub sender: Sender<Progress>,
    pub cancel: Arc<AtomicBool>,
}

impl Monitor for ChannelMonitor {
    fn on_residual(&mut self, iteration: usize, residual: f64) {
        let _ = self.sender.send(Progress {
            iteration,
            residual,
        });
    }
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}
