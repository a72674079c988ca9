//! Cancelling a CPU reference solve from outside: a per-thread check the method cores ask
//! once per residual they compute ([`cancellable`]).

use std::cell::RefCell;

/// The cancel check of the CPU solves on this thread ([`cancellable`]) and whether it fired.
struct CancelCheck {
    check: Box<dyn Fn() -> bool>,
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
    let outer = CANCEL.with(|c| {
        c.borrow_mut().replace(CancelCheck {
            check: Box::new(cancelled),
            fired: false,
        })
    });
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
