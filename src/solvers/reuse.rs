//! Reuse of what a GPU solve sets up — A in its storage format on the device, and the
//! preconditioner M (an ILU factorisation and its level schedule, or D⁻¹) — by later solves of
//! the same matrix on the same device, while a [`ReuseScope`] is open on this thread.
//!
//! Mixed-precision refinement runs one f32 solve per outer iteration on the same A: without
//! this, every one would convert and upload A again and refactor M on the host. The solvers
//! themselves do not change: [`upload_matrix`] and [`precond`] are the two places a solve
//! builds these, and inside a scope they return a clone (shared buffers) of the first one
//! built for the same matrix, options and precision. A matrix is "the same" when it is the
//! same `Csr` in memory (address of its values, n, nnz): the scope's owner keeps it alive and
//! unchanged while the scope is open; outside a scope nothing is kept.

use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{FormatEstimate, SolveOptions, SolveReport};
use crate::gpu::{Engine, GpuMatrix};
use crate::matrix::Csr;
use crate::precond::SolverPrecond;

/// The values of the open scope, each with what it was built from (`Send`, so a handle may
/// keep them between scopes: [`KeptUploads`]).
type Entries = Vec<(Key, Box<dyn Any + Send>)>;

thread_local! {
    static CACHE: RefCell<Option<Entries>> = const { RefCell::new(None) };
}

/// What a cached value was built from.
#[derive(Debug, Clone, PartialEq)]
struct Key {
    device: usize,
    values: usize,
    n: usize,
    nnz: usize,
    what: String,
}

/// While alive, solves on this thread reuse uploads and preconditioners (see the module
/// documentation); dropping it frees them. Open one with [`reuse_uploads`].
pub struct ReuseScope {
    /// Whether this scope opened the cache (and so frees it): a scope opened inside another
    /// shares the outer one's values and leaves them to it.
    owner: bool,
    _not_send: PhantomData<*const ()>,
}

/// The values of a closed scope, kept for a later one ([`ReuseScope::keep`],
/// [`reuse_uploads_from`]): a matrix handle that outlives one call (the Python package's
/// `kw.Matrix`) keeps A's upload and M on the device between solves, whichever thread makes
/// them. The device buffers are freed when it is dropped.
pub struct KeptUploads(Entries);

impl ReuseScope {
    /// Closes the scope and hands its values over instead of freeing them (a scope opened
    /// inside another hands over nothing: the outer scope owns the values).
    pub fn keep(mut self) -> KeptUploads {
        let entries = if self.owner {
            CACHE.with(|c| c.borrow_mut().take()).unwrap_or_default()
        } else {
            Vec::new()
        };
        self.owner = false;
        KeptUploads(entries)
    }
}

/// Opens a scope holding `kept`'s values, as [`reuse_uploads`] does with none.
pub fn reuse_uploads_from(kept: KeptUploads) -> ReuseScope {
    let owner = CACHE.with(|c| {
        let mut c = c.borrow_mut();
        match c.as_mut() {
            // Inside an open scope: its values stay, `kept`'s join them.
            Some(list) => {
                list.extend(kept.0);
                false
            }
            None => {
                *c = Some(kept.0);
                true
            }
        }
    });
    ReuseScope {
        owner,
        _not_send: PhantomData,
    }
}

/// Opens a scope in which GPU solves of the same matrix (the same `Csr`, kept alive and
/// unchanged meanwhile) share A's upload and the preconditioner: many right-hand sides, time
/// steps, or the inner solves of mixed refinement pay the setup once. A scope opened while
/// another is open shares the outer one's values and leaves them to it when dropped.
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::{self, Precond, SolveOptions};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f32>(128);
/// let opts = SolveOptions { precond: Precond::Ic0, ..Default::default() };
/// let _scope = solvers::reuse_uploads();
/// for step in 0..10 {
///     let b = vec![1.0 + step as f32; a.nrows()];
///     let sol = solvers::solve_gpu(&engine, &a, &b, None, &opts, &mut ())?; // IC(0) factored once
///     assert!(sol.report.converged);
/// }
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn reuse_uploads() -> ReuseScope {
    reuse_uploads_from(KeptUploads(Vec::new()))
}

impl Drop for ReuseScope {
    fn drop(&mut self) {
        if self.owner {
            CACHE.with(|c| *c.borrow_mut() = None);
        }
    }
}

/// The value cached for (`engine`'s device, `a`, `what`), or `make()`'s, cached when a scope
/// is open.
fn reused<T: Scalar, V: Clone + Send + 'static>(
    engine: &Engine,
    a: &Csr<T>,
    what: String,
    make: impl FnOnce() -> Result<V>,
) -> Result<V> {
    let key = Key {
        device: std::sync::Arc::as_ptr(engine.context()) as usize,
        values: a.values().as_ptr() as usize,
        n: a.nrows(),
        nnz: a.nnz(),
        what: format!("{what} {}", T::PRECISION),
    };
    let hit = CACHE.with(|c| {
        c.borrow().as_ref().and_then(|list| {
            list.iter()
                .find(|(k, _)| *k == key)
                .and_then(|(_, v)| v.downcast_ref::<V>().cloned())
        })
    });
    if let Some(v) = hit {
        return Ok(v);
    }
    let v = make()?;
    CACHE.with(|c| {
        if let Some(list) = c.borrow_mut().as_mut() {
            list.push((key, Box::new(v.clone())));
        }
    });
    Ok(v)
}

/// A uploaded in its format and what the report says about the choice.
#[derive(Clone)]
struct Uploaded<T> {
    a: GpuMatrix<T>,
    format: String,
    reason: String,
    bytes: u64,
    estimates: Vec<FormatEstimate>,
}

/// [`super::system::upload_matrix`], reused inside a scope (the report's format fields as the
/// first upload recorded them).
pub(crate) fn upload_matrix<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    opts: &SolveOptions,
    report: &mut SolveReport,
) -> Result<GpuMatrix<T>> {
    // Everything of `opts` the upload depends on.
    let what = format!(
        "matrix {} {} {:?}",
        opts.format, opts.max_padding, opts.reduction
    );
    let up = reused(engine, a, what, || {
        let m = super::system::upload_matrix(engine, a, opts, report)?;
        Ok(Uploaded {
            a: m,
            format: report.format.clone(),
            reason: report.format_reason.clone(),
            bytes: report.matrix_bytes,
            estimates: report.format_estimates.clone(),
        })
    })?;
    report.format = up.format;
    report.format_reason = up.reason;
    report.matrix_bytes = up.bytes;
    report.format_estimates = up.estimates;
    Ok(up.a)
}

/// [`SolverPrecond::build`] for `opts`, reused inside a scope.
pub(crate) fn precond<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    opts: &SolveOptions,
) -> Result<SolverPrecond<T>> {
    let what = format!("precond {} {}", opts.precond, opts.trisolve);
    reused(engine, a, what, || {
        SolverPrecond::build(engine, a, opts.precond, opts.trisolve)
    })
}

/// `a.is_symmetric(tol)` (CG's input check, a pass over A with a search per entry: 0.15 s at
/// 15M non-zeros on a 2-core host), reused inside a scope: refinement's inner CG solves check
/// A once.
pub(crate) fn is_symmetric<T: Scalar>(engine: &Engine, a: &Csr<T>, tol: f64) -> bool {
    matches!(
        reused(engine, a, format!("symmetric {tol:e}"), || Ok(
            a.is_symmetric(tol)
        )),
        Ok(true)
    )
}

/// A cast to f32 (mixed refinement's inner matrix), reused inside a scope: the copy must
/// keep its address for the uploads keyed on it to be found again by a later solve.
pub(crate) fn cast_f32(engine: &Engine, a: &Csr<f64>) -> Result<Arc<Csr<f32>>> {
    reused(engine, a, "f32 copy".into(), || {
        Ok(Arc::new(a.cast::<f32>()?))
    })
}

/// Builds now, inside the open scope, what the solves of `a` with `opts` will reuse: A in its
/// format on the device, M, and (for CG) the symmetry check. Refinement calls it before its
/// clock starts, so its `seconds` leave out uploads and set-up as a single solve's do.
pub(crate) fn prepare<T: Scalar>(engine: &Engine, a: &Csr<T>, opts: &SolveOptions) -> Result<()> {
    let mut scratch = SolveReport::new(opts.method, opts.variant, T::PRECISION, a.nrows(), a.nnz());
    upload_matrix(engine, a, opts, &mut scratch)?;
    precond(engine, a, opts)?;
    if opts.method == crate::base::Method::Cg {
        is_symmetric(engine, a, 1e-10);
    }
    Ok(())
}
