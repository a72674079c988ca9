//! The solve's link back to Python while the GIL is released: the user's `callback` per
//! residual and Ctrl-C. Both need the GIL, taken for a moment from the solving thread.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use krylov_wgpu::solvers::Monitor;

use pyo3::prelude::*;

/// How often a solve looks for a pending signal (Ctrl-C): often enough to feel immediate,
/// rare enough that taking the GIL costs nothing measurable.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Calls `callback(residual_norm)` after each iteration (not for the initial residual) and
/// cancels the solve on Ctrl-C or when the callback raises; the exception is kept for the
/// caller to raise once the solve has stopped. Cloned, it shares the callback and the
/// exception (the GPU solvers use one, the CPU reference's cancel check another).
#[derive(Clone)]
pub struct PyMonitor {
    callback: Option<Arc<Py<PyAny>>>,
    error: Arc<Mutex<Option<PyErr>>>,
    last_poll: Arc<Mutex<Instant>>,
}

impl PyMonitor {
    pub fn new(callback: Option<Py<PyAny>>) -> Self {
        PyMonitor {
            callback: callback.map(Arc::new),
            error: Arc::new(Mutex::new(None)),
            last_poll: Arc::new(Mutex::new(Instant::now())),
        }
    }

    /// The exception that stopped the solve (KeyboardInterrupt, or the callback's).
    pub fn take_error(&self) -> Option<PyErr> {
        self.error.lock().ok()?.take()
    }

    fn failed(&self) -> bool {
        self.error.lock().map(|e| e.is_some()).unwrap_or(true)
    }

    fn keep(&self, e: PyErr) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(e);
        }
    }
}

impl Monitor for PyMonitor {
    fn on_residual(&mut self, iteration: usize, residual: f64) {
        let Some(callback) = &self.callback else {
            return;
        };
        if iteration == 0 || self.failed() {
            return;
        }
        if let Err(e) = Python::attach(|py| callback.call1(py, (residual,)).map(drop)) {
            self.keep(e);
        }
    }

    fn cancelled(&self) -> bool {
        if self.failed() {
            return true;
        }
        let due = self.last_poll.lock().map(|mut last| {
            let due = last.elapsed() >= SIGNAL_POLL;
            if due {
                *last = Instant::now();
            }
            due
        });
        if let Ok(true) = due
            && let Err(e) = Python::attach(|py| py.check_signals())
        {
            self.keep(e);
            return true;
        }
        false
    }
}
