//! What the GPU solver tests share: the option grid, the solver entry points as values, and
//! the checks every solver must pass (converged honestly, exact stop in `device` mode, the
//! monitor, trivial systems, typed errors).

use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::{
    CheckMode, FnMonitor, Method, Monitor, Precond, Solution, SolveOptions, SolveReport,
    StopReason, Variant,
};
use krylov_wgpu::{KrylovError, Precision, Scalar, cpu};

pub const VARIANTS: [Variant; 2] = [Variant::Classical, Variant::Pipelined];
/// CG's variants: the two above, fused (one launch per iteration) and workgroup (whole
/// iterations in one workgroup, for systems that fit: see [`cg_variants_for`]).
#[allow(dead_code)]
pub const CG_VARIANTS: [Variant; 5] = [
    Variant::Classical,
    Variant::Pipelined,
    Variant::Fused,
    Variant::Workgroup,
    Variant::Cooperative,
];

/// CG's variants for a system of `n` rows in `precision` on `engine`: all of them, except
/// the workgroup variant where the system has more rows than one workgroup's memory holds
/// on this adapter (that refusal is tested in gpu_cg_workgroup.rs).
#[allow(dead_code)]
pub fn cg_variants_for(engine: &Engine, n: usize, precision: Precision) -> Vec<Variant> {
    let cap =
        krylov_wgpu::solvers::cg::workgroup::max_rows(engine, engine.shader_config(precision));
    CG_VARIANTS
        .into_iter()
        .filter(|&v| v != Variant::Workgroup || n <= cap)
        .collect()
}
pub const MODES: [CheckMode; 2] = [CheckMode::Paper, CheckMode::Device];
pub const PRECONDS: [Precond; 2] = [Precond::None, Precond::Jacobi];

/// The (check mode, batch) runs of the exact launch/transfer-count tests: `paper`, and
/// `device` with one iteration per batch and with batches of 7.
pub const COUNT_CASES: [(CheckMode, usize); 3] = [
    (CheckMode::Paper, 0),
    (CheckMode::Device, 1),
    (CheckMode::Device, 7),
];

/// A GPU solver entry point (`cg::solve`, `bicgstab::solve`, ...) as a value.
pub type GpuSolve<T> = fn(
    &Engine,
    &Csr<T>,
    &[T],
    Option<&[T]>,
    &SolveOptions,
    &mut dyn Monitor,
) -> krylov_wgpu::Result<Solution<T>>;

/// A tolerance each precision reaches on the test problems: f64 far below, f32 a few hundred
/// ulps above its round-off so that the true residual can confirm it.
pub fn rtol_for(p: Precision) -> f64 {
    match p {
        Precision::F32 => 1e-5,
        Precision::F64 => 1e-10,
    }
}

/// Options of one point of the grid, at most 5000 iterations.
pub fn opts(
    method: Method,
    variant: Variant,
    mode: CheckMode,
    precond: Precond,
    rtol: f64,
) -> SolveOptions {
    SolveOptions {
        method,
        variant,
        check_mode: mode,
        precond,
        rtol,
        max_iter: 5000,
        ..Default::default()
    }
}

/// Every (variant, check mode) pair, variants outermost.
pub fn variants_and_modes() -> impl Iterator<Item = (Variant, CheckMode)> {
    VARIANTS
        .into_iter()
        .flat_map(|variant| MODES.map(|mode| (variant, mode)))
}

/// Every (variant, check mode) pair of CG (fused and workgroup included), variants outermost
/// (for systems of up to a few thousand rows: the workgroup variant's limit).
#[allow(dead_code)]
pub fn cg_variants_and_modes() -> impl Iterator<Item = (Variant, CheckMode)> {
    CG_VARIANTS
        .into_iter()
        .flat_map(|variant| MODES.map(|mode| (variant, mode)))
}

/// Every (preconditioner, variant, check mode, batch) of the exact-count tests, with its tag.
pub fn count_cases() -> Vec<(Precond, Variant, CheckMode, usize, String)> {
    count_cases_of(&VARIANTS)
}

/// [`count_cases`] of the given variants.
pub fn count_cases_of(variants: &[Variant]) -> Vec<(Precond, Variant, CheckMode, usize, String)> {
    let mut cases = Vec::new();
    for precond in PRECONDS {
        for &variant in variants {
            for (mode, batch) in COUNT_CASES {
                let tag = format!("{variant} {mode} k={batch} {precond}");
                cases.push((precond, variant, mode, batch, tag));
            }
        }
    }
    cases
}

/// ‖b − Ax‖/‖b‖ recomputed in f64.
pub fn true_rel<T: Scalar>(a: &Csr<T>, b: &[T], x: &[T]) -> f64 {
    cpu::true_relative_residual(a, b, x)
}

/// Whether two vectors are the same bit for bit.
pub fn same_bits<T: Scalar>(x: &[T], y: &[T]) -> bool {
    x.iter()
        .zip(y)
        .all(|(p, q)| bytemuck::bytes_of(p) == bytemuck::bytes_of(q))
}

/// A converged solve, checked against its own x: converged, a history of iterations + 1
/// finite entries, x finite and the true residual (recomputed in f64) within rtol (0.1 %
/// slack). Returns the true relative residual.
pub fn assert_converged<T: Scalar>(
    sol: &Solution<T>,
    a: &Csr<T>,
    b: &[T],
    rtol: f64,
    tag: &str,
) -> f64 {
    let r = &sol.report;
    assert!(r.converged, "{tag}: {}", r.reason_detail);
    assert_eq!(r.history.len(), r.iterations + 1, "{tag}: history length");
    assert!(
        r.history.iter().all(|h| h.is_finite()),
        "{tag}: history finite"
    );
    assert!(sol.x.iter().all(|v| v.is_finite()), "{tag}: x finite");
    let rel = true_rel(a, b, &sol.x);
    assert!(
        rel <= rtol * 1.001,
        "{tag}: true residual {rel:e} > rtol {rtol:e}"
    );
    rel
}

/// The error of a call that must fail.
pub fn expect_err<T: std::fmt::Debug>(r: krylov_wgpu::Result<T>) -> KrylovError {
    r.expect_err("an error")
}

/// `solve` on `engine` from x0 = 0 as a call that must fail: returns its error.
pub fn failing<'a, T: Scalar>(
    solve: GpuSolve<T>,
    engine: &'a Engine,
) -> impl Fn(&Csr<T>, &[T], &SolveOptions) -> KrylovError + 'a {
    move |a, b, o| expect_err(solve(engine, a, b, None, o, &mut ()))
}

/// b one entry short and b holding a NaN are typed errors of `solve` with `o` on A.
pub fn assert_bad_rhs_refused(
    solve: GpuSolve<f64>,
    engine: &Engine,
    a: &Csr<f64>,
    o: &SolveOptions,
) {
    let fails = failing(solve, engine);
    let n = a.nrows();
    assert!(matches!(
        fails(a, &vec![1.0; n - 1], o),
        KrylovError::DimensionMismatch { .. }
    ));
    let mut b = vec![1.0; n];
    b[3] = f64::NAN;
    assert!(matches!(fails(a, &b, o), KrylovError::NonFinite { .. }));
}

/// An engine on a device opened without SHADER_F64, or `None` where there is no GPU.
pub fn engine_without_f64() -> Option<Engine> {
    super::context()?;
    let ctx = GpuContext::new_with_features(
        &DeviceRequest::from_env(),
        krylov_wgpu::wgpu::Features::empty(),
    )
    .unwrap();
    Some(Engine::new(ctx))
}

/// `run(batch, max_iter)` solves in `device` mode. A batch of 13 overshoots convergence (the
/// iterations recorded after it are no-ops); one iteration per batch stops at the same
/// iteration j (with one no-op batch queued behind it), and so does a run limited to j
/// iterations: all three return the same x, bit for bit, and the same history. Returns the
/// overshooting solve.
pub fn assert_device_mode_stops_exactly<T: Scalar>(
    run: impl Fn(usize, usize) -> Solution<T>,
    tag: &str,
) -> Solution<T> {
    assert_device_mode_stops_exactly_in(run, tag, 1)
}

/// [`assert_device_mode_stops_exactly`] for a solver whose launches run `per_launch`
/// iterations (one-workgroup CG: batches are whole launches, so "one iteration per batch"
/// records a launch, and one more is queued behind the one that converges).
pub fn assert_device_mode_stops_exactly_in<T: Scalar>(
    run: impl Fn(usize, usize) -> Solution<T>,
    tag: &str,
    per_launch: usize,
) -> Solution<T> {
    let big = run(13, 5000);
    assert!(big.report.converged, "{tag}");
    let j = big.report.iterations;
    assert!(
        big.report.iterations_recorded > j,
        "{tag}: the batch overshoots ({})",
        big.report.iterations_recorded
    );
    let single = run(1, 5000);
    assert_eq!(single.report.iterations, j, "{tag}");
    assert!(
        single.report.iterations_recorded <= j.next_multiple_of(per_launch) + per_launch,
        "{tag}: recorded {}",
        single.report.iterations_recorded
    );
    let limited = run(1, j);
    for (other, what) in [(&single, "batch 1"), (&limited, "max_iter = j")] {
        assert!(
            same_bits(&big.x, &other.x),
            "{tag}: x after overshooting differs from x at iteration {j} ({what})"
        );
    }
    assert_eq!(big.report.history, single.report.history, "{tag}");
    big
}

/// A monitor that cancels the solve once it has seen one residual.
pub struct CancelAfterFirst(pub usize);

impl Monitor for CancelAfterFirst {
    fn on_residual(&mut self, _: usize, _: f64) {
        self.0 += 1;
    }
    fn cancelled(&self) -> bool {
        self.0 > 0
    }
}

/// A monitor recording every residual sees exactly the report's history.
pub fn assert_monitor_sees_history<T: Scalar>(
    solve: GpuSolve<T>,
    engine: &Engine,
    (a, b): (&Csr<T>, &[T]),
    o: &SolveOptions,
    tag: &str,
) {
    let mut seen = Vec::new();
    let sol = solve(
        engine,
        a,
        b,
        None,
        o,
        &mut FnMonitor(|it, r| seen.push((it, r))),
    )
    .unwrap();
    let expected: Vec<(usize, f64)> = sol.report.history.iter().copied().enumerate().collect();
    assert_eq!(seen, expected, "{tag}");
}

/// A solve with [`CancelAfterFirst`] stops as cancelled; returns its report.
pub fn cancelled_solve<T: Scalar>(
    solve: GpuSolve<T>,
    engine: &Engine,
    (a, b): (&Csr<T>, &[T]),
    o: &SolveOptions,
    tag: &str,
) -> SolveReport {
    let r = solve(engine, a, b, None, o, &mut CancelAfterFirst(0))
        .unwrap()
        .report;
    assert_eq!(r.reason, StopReason::Cancelled, "{tag}");
    r
}

/// b = 0 and b = A·x with x as the initial guess: both converge without an iteration, the
/// first with x = 0. Returns (the b = 0 solve, the x0 = x solve).
pub fn assert_trivial_solves(
    solve: GpuSolve<f64>,
    engine: &Engine,
    a: &Csr<f64>,
    x: &[f64],
    o: &SolveOptions,
    tag: &str,
) -> (Solution<f64>, Solution<f64>) {
    let zero = solve(engine, a, &vec![0.0; a.nrows()], None, o, &mut ()).unwrap();
    assert!(
        zero.report.converged && zero.report.iterations == 0,
        "{tag}: b = 0: {}",
        zero.report.reason_detail
    );
    assert!(zero.x.iter().all(|v| *v == 0.0), "{tag}: b = 0");
    let b = a.mul_vec(x).unwrap();
    let exact = solve(engine, a, &b, Some(x), o, &mut ()).unwrap();
    assert!(
        exact.report.converged && exact.report.iterations == 0,
        "{tag}: {}",
        exact.report.reason_detail
    );
    (zero, exact)
}

/// ‖x − y‖∞ / ‖y‖∞ (NaN in x gives NaN, which no tolerance passes).
pub fn rel_diff_inf<T: Scalar>(x: &[T], y: &[T]) -> f64 {
    let scale = y.iter().map(|v| v.as_f64().abs()).fold(0.0, f64::max);
    let d = x
        .iter()
        .zip(y)
        .map(|(a, b)| (a.as_f64() - b.as_f64()).abs())
        .fold(
            0.0,
            |m: f64, v| if v.is_nan() { f64::NAN } else { m.max(v) },
        );
    d / scale.max(f64::MIN_POSITIVE)
}

/// GMRES `variant` on convdiff3d:8:x (b = A·1, Jacobi, `device` mode, CGS, rtol 1e-10,
/// cycles of `restart`) in every storage format: each converged with the format it was
/// asked for, iterations as in CSR ± 2 (SELL and BCSR hand rows out in their own order)
/// and a true residual within the tolerance; `check` then sees each format's solution for
/// the variant's own counts. Returns the system, for further checks (e.g. in f32).
pub fn gmres_in_every_format(
    engine: &Engine,
    variant: Variant,
    restart: usize,
    check: impl Fn(krylov_wgpu::solvers::Format, &Solution<f64>),
) -> (Csr<f64>, Vec<f64>, SolveOptions) {
    use krylov_wgpu::matrix::generators;
    use krylov_wgpu::solvers::{Format, GramSchmidt, gmres, solve_gpu};
    let (a, b) =
        super::problems::with_ones_rhs::<f64>(generators::from_spec("convdiff3d:8:x").unwrap());
    let base = SolveOptions {
        method: Method::Gmres,
        variant,
        gs: GramSchmidt::Cgs,
        check_mode: CheckMode::Device,
        precond: Precond::Jacobi,
        rtol: 1e-10,
        max_padding: 1e9,
        restart,
        max_iter: 5000,
        format: Format::Csr,
        ..Default::default()
    };
    let reference = gmres::solve(engine, &a, &b, None, &base, &mut ())
        .unwrap()
        .report;
    assert!(reference.converged, "{}", reference.reason_detail);
    for &format in Format::ALL.iter().filter(|&&f| f != Format::Auto) {
        let o = SolveOptions {
            format,
            ..base.clone()
        };
        let sol = solve_gpu(engine, &a, &b, None, &o, &mut ()).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{format}: {}", r.reason_detail);
        assert_eq!(r.format, format.as_str());
        assert!(
            r.iterations.abs_diff(reference.iterations) <= 2,
            "{format}: {} iterations, csr {}",
            r.iterations,
            reference.iterations
        );
        let rel = cpu::true_relative_residual(&a, &b, &sol.x);
        assert!(rel <= 1e-10 * 1.001, "{format}: true residual {rel:e}");
        check(format, &sol);
    }
    (a, b, base)
}
