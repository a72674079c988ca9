//! `precond="auto"`: the CLI's `krylov solve --precond auto` for the Python package, with the
//! library's rule ([`solvers::auto_precond_for`], [`solvers::auto_precond_retry_warranted`])
//! and notes. The first solve runs without a preconditioner, watched by the slow guard
//! ([`SlowGuard`] around the Python monitor on a GPU, [`krylov_wgpu::cpu::cancellable_watching`]
//! on the CPU reference); a solve that stops short is solved again with IC(0) (CG) or ILUT
//! (GMRES, BiCGStab), the note saying so first in the report's notes.

use std::cell::RefCell;
use std::rc::Rc;

use krylov_wgpu::Result;
use krylov_wgpu::solvers::{self, Monitor, SlowGuard, SlowWatch, SolveOptions, SolveReport};

use crate::monitor::PyMonitor;

/// A finished solve: x in f64, x in f32 for an f32 solve, the report.
pub(crate) type Solved = (Vec<f64>, Option<Vec<f32>>, SolveReport);

/// One solve with `opts` and the monitor it is given (the Python one, or the slow guard
/// around it).
pub(crate) type RunWith<'a> = dyn Fn(&SolveOptions, &mut dyn Monitor) -> Result<Solved> + 'a;

/// Runs `run` with `opts` — under `auto` (`precond="auto"` where it applies: one device, no
/// `maxiter` given; `opts.precond` is then `none`) watched by the slow guard where `guard`
/// (not for mixed-precision refinement, whose outer loop stops a stalled solve itself) and
/// solved again with the rule's preconditioner when it stops short, as the CLI does.
/// A retry that fails (the preconditioner cannot be built) leaves the first report, with a
/// note that says why.
pub(crate) fn solve(
    opts: &SolveOptions,
    auto: bool,
    guard: bool,
    monitor: &PyMonitor,
    run: &RunWith<'_>,
) -> Result<Solved> {
    let Some(precond) = auto
        .then(|| solvers::auto_precond_for(opts.method))
        .flatten()
    else {
        return run(opts, &mut monitor.clone());
    };
    if !guard {
        let first = run(opts, &mut monitor.clone())?;
        return retry(opts, precond, first, None, monitor, run);
    }
    let watch = Rc::new(RefCell::new(SlowWatch::new(
        opts.rtol,
        opts.atol,
        opts.max_iter,
    )));
    let mut inner = monitor.clone();
    let mut guard = SlowGuard {
        inner: &mut inner,
        watch: Some(watch.clone()),
    };
    // The CPU reference's residual watch replaces the thread's cancel check while it runs:
    // it asks the Python monitor too, so Ctrl-C still stops the solve.
    let (w, python) = (watch.clone(), monitor.clone());
    let first = krylov_wgpu::cpu::cancellable_watching(
        move |k, r| w.borrow_mut().observe(k, r) || python.cancelled(),
        || run(opts, &mut guard),
    )?;
    let slow = watch.borrow_mut().fired.take();
    retry(opts, precond, first, slow, monitor, run)
}

/// The retry of `precond auto` after `first` (`slow`: why the guard stopped it, if it did).
fn retry(
    opts: &SolveOptions,
    precond: solvers::Precond,
    mut first: Solved,
    slow: Option<String>,
    monitor: &PyMonitor,
    run: &RunWith<'_>,
) -> Result<Solved> {
    if !solvers::auto_precond_retry_warranted(&first.2, slow.is_some()) {
        return Ok(first);
    }
    let note = solvers::auto_precond_note(opts.method, &first.2, slow.as_deref(), precond);
    let retry = SolveOptions {
        precond,
        ..opts.clone()
    };
    match run(&retry, &mut monitor.clone()) {
        Ok(mut second) => {
            second.2.notes.insert(0, note);
            Ok(second)
        }
        Err(e) => {
            first
                .2
                .notes
                .insert(0, solvers::auto_precond_failed_note(precond, e));
            Ok(first)
        }
    }
}
