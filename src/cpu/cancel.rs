//! Cancelling a CPU reference solve from outside: a per-thread check the method cores ask
//! once per residual they compute ([`cancellable`]).

use std::cell::RefCell;

/// The cancel check of the CPU solves on this thread ([`cancellable`]), the residual watch
/// ([`cancellable_watching`]) with the residuals it has seen, and whether either fired.
struct CancelCheck {
    check: Box<dyn Fn() -> bool>,
    watch: Option<Box<dyn FnMut(usize, f64) -> bool>>,
    seen: usize,
    fired: bool,
}

thread_local! {
    static CANCEL: RefCell<Option<CancelCheck>> = const { RefCell::new(None) };
}

/// Asks the thread's cancel check (once per residual a method computes); `true` from then on
/// once it has fired.
pub(crate) fn cancel_requested() -> bool {
    CANCEL.with(|c| {
        let mut c = c.borrow_mut();
        let Some(c) = c.as_mut() else {
            return false;
        };
        c.fired = c.fired || (c.check)();
        c.fired
    })
}

/// [`cancel_requested`] for a method core's residual test of `res`, which the thread's
/// residual watch sees first ([`cancellable_watching`]).
pub(crate) fn cancel_requested_at(res: f64) -> bool {
    CANCEL.with(|c| {
        let mut c = c.borrow_mut();
        let Some(c) = c.as_mut() else {
            return false;
        };
        if let Some(watch) = c.watch.as_mut() {
            c.fired = c.fired || watch(c.seen, res);
        }
        c.seen += 1;
        c.fired = c.fired || (c.check)();
        c.fired
    })
}

/// Runs `f` with `cancelled` asked before every residual test of the CPU reference solves
/// it makes on this thread, as the GPU solvers ask their monitor between batches: once it
/// says `true` the solve stops and its report says `Cancelled`. (Make the check cheap, or
/// let it look at a clock: it runs once per iteration.) The Python package's Ctrl-C reaches
/// the CPU reference this way.
///
/// ```
/// use std::cell::Cell;
/// use std::rc::Rc;
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{SolveOptions, StopReason};
/// let a = poisson_2d_fd::<f64>(32);
/// let b = vec![1.0; a.nrows()];
/// let asked = Rc::new(Cell::new(0));
/// let counter = asked.clone();
/// let sol = krylov_wgpu::cpu::cancellable(move || { counter.set(counter.get() + 1); counter.get() > 5 }, || {
///     krylov_wgpu::cpu::solve(&a, &b, None, &SolveOptions::default())
/// })?;
/// assert_eq!(sol.report.reason, StopReason::Cancelled);
/// assert_eq!(sol.report.iterations, 5); // r0 and five iterations' residuals tested
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn cancellable<R>(cancelled: impl Fn() -> bool + 'static, f: impl FnOnce() -> R) -> R {
    with_check(
        CancelCheck {
            check: Box::new(cancelled),
            watch: None,
            seen: 0,
            fired: false,
        },
        f,
    )
}

/// Runs `f` with `watch(k, ‖r‖)` called on the k-th residual each CPU reference solve it
/// makes on this thread tests (k counts from 0 over the whole solve, restarts included): once
/// it says `true` the solve stops with `Cancelled`, as in [`cancellable`]. What a GPU solve's
/// [`crate::solvers::Monitor`] sees, for the CPU (`precond auto` — the CLI's, the Python
/// package's — watches for a hopeless solve this way, with a [`crate::solvers::SlowWatch`]).
///
/// ```
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{SolveOptions, StopReason};
/// let a = poisson_2d_fd::<f64>(32);
/// let b = vec![1.0; a.nrows()];
/// let sol = krylov_wgpu::cpu::cancellable_watching(|k, _residual| k >= 7, || {
///     krylov_wgpu::cpu::solve(&a, &b, None, &SolveOptions::default())
/// })?;
/// assert_eq!(sol.report.reason, StopReason::Cancelled);
/// assert_eq!(sol.report.iterations, 7);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn cancellable_watching<R>(
    watch: impl FnMut(usize, f64) -> bool + 'static,
    f: impl FnOnce() -> R,
) -> R {
    with_check(
        CancelCheck {
            check: Box::new(|| false),
            watch: Some(Box::new(watch)),
            seen: 0,
            fired: false,
        },
        f,
    )
}

/// Runs `f` with `check` as the thread's cancel check, the outer one restored after.
fn with_check<R>(check: CancelCheck, f: impl FnOnce() -> R) -> R {
    let outer = CANCEL.with(|c| c.borrow_mut().replace(check));
    // Put the outer check back even when `f` unwinds.
    struct Restore(Option<CancelCheck>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            CANCEL.with(|c| *c.borrow_mut() = outer);
        }
    }
    let _restore = Restore(outer);
    f()
}
