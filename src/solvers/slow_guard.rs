//! `precond auto`'s watch over a solve without a preconditioner (the CLI's `krylov solve
//! --precond auto`, the Python package's `precond="auto"`): a solve whose residual falls so
//! slowly that it would need more than twice the iteration limit is stopped early (by the
//! monitor's cancel, between batches), so that its retry with a preconditioner
//! ([`crate::solvers::auto_precond_retry_warranted`]) does not first wait for the whole
//! iteration limit to run out.
//!
//! The projection is deliberately conservative: only after `MIN_ITERATIONS`, from the pace
//! of the residual's running minimum over the second half of the history so far (CG's
//! residual oscillates; restarted GMRES has slow phases), and only when it reaches past
//! `LIMIT_FACTOR ×` the limit (bcsstk21's unpreconditioned CG, 2983 iterations after a
//! long plateau, is left alone). It cannot foresee a superlinear phase to come: a solve
//! stopped early is solved again with the preconditioner — a recovery the note reports,
//! never a claim of convergence.
//!
//! A GPU solve is watched through its [`Monitor`] ([`SlowGuard`]), a CPU reference solve
//! through [`crate::cpu::cancellable_watching`]; one shared [`SlowWatch`] serves both:
//!
//! ```
//! use std::cell::RefCell;
//! use std::rc::Rc;
//! use krylov_wgpu::matrix::generators::poisson_2d_fd;
//! use krylov_wgpu::solvers::{SlowGuard, SlowWatch, SolveOptions, StopReason};
//! let a = poisson_2d_fd::<f64>(16);
//! let b = vec![1.0; a.nrows()];
//! let opts = SolveOptions::default();
//! let watch = Rc::new(RefCell::new(SlowWatch::new(opts.rtol, opts.atol, opts.max_iter)));
//! // The GPU solvers' monitor (`solvers::solve_on(…, &mut guard)`); `()` forwards nothing.
//! let mut none = ();
//! let _guard = SlowGuard { inner: &mut none, watch: Some(watch.clone()) };
//! // The CPU reference's residual tests.
//! let w = watch.clone();
//! let sol = krylov_wgpu::cpu::cancellable_watching(
//!     move |k, r| w.borrow_mut().observe(k, r),
//!     || krylov_wgpu::cpu::solve(&a, &b, None, &opts),
//! )?;
//! // A fast solve is left alone.
//! assert_eq!(sol.report.reason, StopReason::Converged);
//! assert!(watch.borrow().fired.is_none());
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use std::cell::RefCell;
use std::rc::Rc;

use crate::base::monitor::Monitor;

/// Iterations before the projection is trusted.
pub const MIN_ITERATIONS: usize = 1000;

/// How far beyond the limit a projection must reach before the solve is stopped.
pub const LIMIT_FACTOR: f64 = 2.0;

/// The residuals of one solve as they arrive and the verdict on them.
///
/// ```
/// use krylov_wgpu::solvers::slow_guard::MIN_ITERATIONS;
/// use krylov_wgpu::solvers::SlowWatch;
/// // No progress at all: stopped once MIN_ITERATIONS have passed, not before.
/// let mut w = SlowWatch::new(1e-6, 0.0, 10_000);
/// assert!((0..MIN_ITERATIONS).all(|k| !w.observe(k, 1.0)));
/// assert!(w.observe(MIN_ITERATIONS, 1.0));
/// assert!(w.fired.as_deref().unwrap().contains("limit 10000"));
/// ```
pub struct SlowWatch {
    rtol: f64,
    atol: f64,
    max_iter: usize,
    /// (iteration, ‖r‖, least ‖r‖ so far) as they arrive (the running minimum kept here, so
    /// that judging a residual costs a binary search, not a pass over the history).
    history: Vec<(usize, f64, f64)>,
    /// Why the solve should stop, once it should.
    pub fired: Option<String>,
}

impl SlowWatch {
    /// A watch for a solve to `max(rtol·‖r₀‖, atol)` within `max_iter` iterations.
    pub fn new(rtol: f64, atol: f64, max_iter: usize) -> Self {
        SlowWatch {
            rtol,
            atol,
            max_iter,
            history: Vec::new(),
            fired: None,
        }
    }

    /// Takes ‖r‖ after `iteration` iterations; `true` once the solve should stop.
    pub fn observe(&mut self, iteration: usize, residual: f64) -> bool {
        if self.fired.is_none() {
            let least = self.history.last().map_or(residual, |h| h.2.min(residual));
            self.history.push((iteration, residual, least));
            self.fired = self.judge();
        }
        self.fired.is_some()
    }

    /// The verdict on the history so far: `Some(why)` when the projected iterations exceed
    /// `LIMIT_FACTOR ×` the limit.
    fn judge(&self) -> Option<String> {
        let &(it, last, r_now) = self.history.last()?;
        let r0 = self.history.first()?.1;
        if it < MIN_ITERATIONS || !positive(r0) || !last.is_finite() {
            return None;
        }
        let target = (self.rtol * r0).max(self.atol);
        // The running minimum at (about) half the iterations so far, and now.
        let half = it / 2;
        let split = self.history.partition_point(|&(i, _, _)| i <= half);
        let &(it_half, _, r_half) = self.history.get(split.checked_sub(1)?)?;
        if it_half >= it || !positive(r_half) || !positive(r_now) {
            return None;
        }
        let rate = (r_now / r_half).ln() / (it - it_half) as f64; // < 0: decreasing
        let projected = if rate < 0.0 {
            it as f64 + (target / r_now).ln() / rate
        } else {
            f64::INFINITY
        };
        (projected > LIMIT_FACTOR * self.max_iter as f64).then(|| {
            format!(
                "its least residual fell from {r_half:.2e} to {r_now:.2e} over iterations {it_half}–{it}, \
                 a pace that reaches the tolerance after {} iterations (limit {})",
                if projected.is_finite() {
                    format!("~{projected:.0}")
                } else {
                    "no number of".into()
                },
                self.max_iter
            )
        })
    }
}

/// `x > 0` (false for NaN).
fn positive(x: f64) -> bool {
    x > 0.0
}

/// A GPU solve's [`Monitor`] that feeds `watch` (when there is one) and stops the solve when
/// it fires; other events go to `inner`. (A CPU solve is watched through
/// [`crate::cpu::cancellable_watching`].)
pub struct SlowGuard<'a> {
    /// The monitor the solve would have had: every event reaches it, and its cancel stays.
    pub inner: &'a mut dyn Monitor,
    /// The watch fed with each residual (`None`: `inner` alone).
    pub watch: Option<Rc<RefCell<SlowWatch>>>,
}

impl Monitor for SlowGuard<'_> {
    fn on_loop_start(&mut self) {
        self.inner.on_loop_start();
    }
    fn on_residual(&mut self, iteration: usize, residual: f64) {
        self.inner.on_residual(iteration, residual);
        if let Some(w) = &self.watch {
            w.borrow_mut().observe(iteration, residual);
        }
    }
    fn cancelled(&self) -> bool {
        self.watch
            .as_ref()
            .is_some_and(|w| w.borrow().fired.is_some())
            || self.inner.cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(rate: f64, steps: usize) -> Option<String> {
        let mut w = SlowWatch::new(1e-6, 0.0, 10_000);
        for i in 0..=steps {
            w.observe(i, (rate * i as f64).exp());
        }
        w.fired
    }

    #[test]
    fn a_solve_that_converges_within_twice_the_limit_is_left_alone() {
        // ln(1e-6) = −13.8: at −0.0008 per step, 17 300 steps (< 20 000).
        assert_eq!(feed(-0.0008, 5000), None);
        // Fast: converges long before MIN_ITERATIONS.
        assert_eq!(feed(-0.05, 300), None);
    }

    #[test]
    fn a_hopeless_solve_is_stopped_after_min_iterations() {
        // −0.0005 per step: 27 600 steps.
        let why = feed(-0.0005, 1200).expect("stopped");
        assert!(why.contains("limit 10000"), "{why}");
        // No progress at all.
        let why = feed(0.0, 1000).expect("stopped");
        assert!(why.contains("after no number of iterations"), "{why}");
        // Not before MIN_ITERATIONS.
        assert_eq!(feed(0.0, MIN_ITERATIONS - 1), None);
    }
}
