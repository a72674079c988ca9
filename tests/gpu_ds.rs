//! Double-single arithmetic on the GPU (`shaders/lib/ds.wgsl` through the `ds_ops` kernel)
//! against its CPU twin `krylov_wgpu::cpu::ds`, bit for bit, and against the exact value in
//! f64 within the documented bounds: random and adversarial operands (cancellation, large
//! exponent spread, products whose low part matters), with both exact products (the fma one
//! only where the adapter's `fma` is exact: the `fma_probe` decides, and is checked here too).

mod common;

use krylov_wgpu::Precision;
use krylov_wgpu::base::scalar::TwoProd;
use krylov_wgpu::cpu::ds::{self, Ds, U};
use krylov_wgpu::gpu::shader::kernel_source;
use krylov_wgpu::gpu::{Engine, Tuning};
use rand::{Rng, SeedableRng};

/// The operations of `shaders/ds/ds_ops.wgsl` (`DS_OP_*`), with their CPU twin and bound
/// (in u² relative to the exact value; `None`: exact).
#[derive(Debug, Clone, Copy, PartialEq)]
enum DsOp {
    TwoSum = 0,
    QuickTwoSum = 1,
    Split = 2,
    TwoProdFma = 3,
    TwoProdSplit = 4,
    TwoProd = 5,
    Add = 6,
    Sub = 7,
    AddF32 = 8,
    MulF32 = 9,
    Mul = 10,
    FmaF32 = 11,
    Neg = 12,
    FromF32 = 13,
}

const OPS: [DsOp; 14] = [
    DsOp::TwoSum,
    DsOp::QuickTwoSum,
    DsOp::Split,
    DsOp::TwoProdFma,
    DsOp::TwoProdSplit,
    DsOp::TwoProd,
    DsOp::Add,
    DsOp::Sub,
    DsOp::AddF32,
    DsOp::MulF32,
    DsOp::Mul,
    DsOp::FmaF32,
    DsOp::Neg,
    DsOp::FromF32,
];

impl DsOp {
    /// The CPU twin's result and the exact value (f64; products of two Ds are rounded there,
    /// at 2⁻⁵³ ≈ 0.03 u², which the bounds below absorb).
    fn cpu(self, x: Ds, y: Ds, mode: TwoProd) -> (Ds, f64) {
        let (xf, yf) = (x.to_f64(), y.to_f64());
        let (a, b) = (x.hi as f64, y.hi as f64);
        match self {
            DsOp::TwoSum => (ds::two_sum(x.hi, y.hi), a + b),
            DsOp::QuickTwoSum => (ds::quick_two_sum(x.hi, y.hi), a + b),
            DsOp::Split => {
                let (h, l) = ds::split(x.hi);
                (Ds { hi: h, lo: l }, a)
            }
            DsOp::TwoProdFma => (ds::two_prod_fma(x.hi, y.hi), a * b),
            DsOp::TwoProdSplit => (ds::two_prod_split(x.hi, y.hi), a * b),
            DsOp::TwoProd => (ds::two_prod(x.hi, y.hi, mode), a * b),
            DsOp::Add => (x.add(y), xf + yf),
            DsOp::Sub => (x.sub(y), xf - yf),
            DsOp::AddF32 => (x.add_f32(y.hi), xf + b),
            DsOp::MulF32 => (x.mul_f32(y.hi, mode), xf * b),
            DsOp::Mul => (x.mul(y, mode), xf * yf),
            DsOp::FmaF32 => (x.fma_f32(y.hi, y.lo, mode), xf + b * y.lo as f64),
            DsOp::Neg => (x.neg(), -xf),
            DsOp::FromF32 => (Ds::from_f32(x.hi), a),
        }
    }

    /// The documented relative bound in u² (src/cpu/ds.rs), 0 for exact operations.
    fn bound(self, mode: TwoProd) -> f64 {
        match self {
            DsOp::Add | DsOp::Sub => 3.0 + 13.0 * U,
            DsOp::AddF32 => 2.0,
            DsOp::MulF32 => 1.5 + 4.0 * U + 0.05,
            DsOp::Mul if mode == TwoProd::Fma => 5.05,
            DsOp::Mul => 7.05,
            DsOp::FmaF32 => 3.0 + 13.0 * U,
            _ => 0.0,
        }
    }

    /// Whether quick_two_sum's precondition |a| ≥ |b| is needed.
    fn ordered(self) -> bool {
        self == DsOp::QuickTwoSum
    }
}

/// A random normalised Ds with exponent in [−e, e] and either sign.
fn random_ds(rng: &mut impl Rng, e: i32) -> Ds {
    let m: f64 = rng.random_range(1.0..2.0);
    let x = m * 2f64.powi(rng.random_range(-e..=e)) * if rng.random() { 1.0 } else { -1.0 };
    Ds::from_f64(x * (1.0 + rng.random_range(-1e-9..1e-9)))
}

/// Operand pairs: random ones and the adversarial cases of the CPU twin's tests.
fn operands() -> Vec<(Ds, Ds)> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1515);
    let mut v: Vec<(Ds, Ds)> = (0..2000)
        .map(|_| (random_ds(&mut rng, 20), random_ds(&mut rng, 20)))
        .collect();
    let d = Ds::from_f64;
    for k in [1, 10, 20, 23, 24, 30, 40, 47] {
        // Catastrophic cancellation: a + (−a(1 + 2⁻ᵏ)).
        let a = 1.0 + 2f64.powi(-30);
        v.push((d(a), d(-a * (1.0 + 2f64.powi(-k)))));
        // A product cancelled by its rounded value: fma_f32(−fl(x²), x, x) leaves the error.
        let x = 1.0 + 2f32.powi(-k.min(23));
        v.push((Ds::from_f32(-(x * x)), Ds { hi: x, lo: x }));
    }
    // Large exponent spread, and products whose low part matters.
    for (a, b) in [
        (1e30, 1e-30),
        (1e-30, 1e30),
        (1.0, 1e-20),
        (3e38, 1e-38),
        (1e19, 1e18),
    ] {
        v.push((d(a), d(b)));
        v.push((d(-b), d(a)));
    }
    let x = 1.0 + 2f32.powi(-12);
    v.push((Ds::from_f32(x), Ds::from_f32(x)));
    v.push((d(1.0 + 2f64.powi(-30)), d(1.0 - 2f64.powi(-30))));
    // Significands that stress the split (all bits set, ties at the 12-bit cut).
    for bits in [
        0x3fff_ffffu32,
        0x3fff_f800,
        0x3fff_f7ff,
        0x3f80_0800,
        0x3f80_0fff,
    ] {
        let a = f32::from_bits(bits);
        v.push((Ds::from_f32(a), Ds::from_f32(a)));
        v.push((Ds::from_f32(-a), Ds::from_f32(f32::from_bits(0x3faa_aaab))));
    }
    v
}

/// `ds_ops` with `op` on every operand pair, on `engine`.
fn gpu_op(engine: &Engine, op: DsOp, pairs: &[(Ds, Ds)]) -> Vec<Ds> {
    let kernel = engine
        .kernel(
            kernel_source("ds_ops").unwrap(),
            engine.shader_config(Precision::F32),
        )
        .unwrap();
    let input: Vec<[f32; 4]> = pairs
        .iter()
        .map(|(x, y)| [x.hi, x.lo, y.hi, y.lo])
        .collect();
    let n = pairs.len();
    let params = engine.uniform_from("ds params", &[n as u32, op as u32, 0, 0]);
    let inb = engine.storage_from("ds in", &input).unwrap();
    let out = engine.storage_zeroed::<[f32; 2]>("ds out", n).unwrap();
    let bind = engine.bind_group(&kernel, &[&params, &inb, &out]);
    let mut batch = engine.begin("ds_ops");
    batch.dispatch(&kernel, &bind, kernel.groups_for(n));
    let r: Vec<[f32; 2]> = batch.submit_and_read(&out, 0, n).unwrap();
    r.into_iter().map(|[hi, lo]| Ds { hi, lo }).collect()
}

/// Same bits, or both zeros (GPUs need not keep the sign of a zero).
fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a == 0.0 && b == 0.0)
}

/// Runs every operation in `mode` and checks each result against the twin and the bound.
fn check_mode(mode: TwoProd) {
    let Some(engine) = common::engine_with(Tuning {
        two_prod: Some(mode),
        ..Tuning::default()
    }) else {
        return;
    };
    assert_eq!(engine.two_prod(), mode);
    let pairs = operands();
    for op in OPS {
        // two_prod_fma is only meaningful (and only compared) where fma is exact.
        if op == DsOp::TwoProdFma && mode != TwoProd::Fma {
            continue;
        }
        let got = gpu_op(&engine, op, &pairs);
        let mut checked = 0;
        for (i, (&(x, y), g)) in pairs.iter().zip(&got).enumerate() {
            if op.ordered() && x.hi.abs() < y.hi.abs() {
                continue;
            }
            let (want, exact) = op.cpu(x, y, mode);
            if !exact.is_finite() || exact.abs() > f32::MAX as f64 * 0.5 {
                continue;
            }
            // GPUs may flush subnormals to zero (the H100 does, lavapipe does not): an operand
            // with a subnormal word is then another operand (outside the library's range),
            // checked only for NaN; a result below 2⁻¹⁰⁰ may pass through subnormals, so it
            // is not compared bit for bit and may be off by the smallest normal f32.
            let subnormal = |v: f32| v != 0.0 && v.abs() < f32::MIN_POSITIVE;
            if [x.hi, x.lo, y.hi, y.lo].into_iter().any(subnormal) {
                assert!(!g.hi.is_nan() && !g.lo.is_nan(), "{op:?} pair {i}: NaN");
                continue;
            }
            let tiny = exact != 0.0 && exact.abs() < 2f64.powi(-100);
            assert!(
                tiny || (same(g.hi, want.hi) && same(g.lo, want.lo)),
                "{op:?} ({mode:?}) pair {i}: x = {x:?}, y = {y:?}: GPU {g:?}, CPU twin {want:?}"
            );
            // The bounds hold for normalised operands (|lo| ≤ ulp(hi)/2); the fma_f32 cases
            // pass two plain f32 as y.
            let normalised = |d: Ds| d.hi + d.lo == d.hi;
            if matches!(op, DsOp::Add | DsOp::Sub | DsOp::Mul) && !normalised(y) {
                checked += 1;
                continue;
            }
            let err = (g.to_f64() - exact).abs();
            let floor = if tiny {
                f32::MIN_POSITIVE as f64
            } else {
                2f64.powi(-147)
            };
            let bound = op.bound(mode) * U * U * exact.abs() + floor;
            assert!(
                err <= bound,
                "{op:?} ({mode:?}) pair {i}: x = {x:?}, y = {y:?}: GPU {g:?} = {:e}, exact \
                 {exact:e}, error {err:e} > {bound:e}",
                g.to_f64()
            );
            checked += 1;
        }
        assert!(
            checked > pairs.len() / 3,
            "{op:?}: only {checked} pairs checked"
        );
    }
}

#[test]
fn split_product_matches_the_cpu_twin_bit_for_bit() {
    check_mode(TwoProd::Split);
}

#[test]
fn fma_product_matches_the_cpu_twin_where_fma_is_exact() {
    let Some(ctx) = common::context() else {
        return;
    };
    if !krylov_wgpu::gpu::ds::exact_fma(&ctx) {
        eprintln!(
            "{}: fma is not exact (the probe says so); the fma product is not used there",
            ctx.summary.name
        );
        return;
    }
    check_mode(TwoProd::Fma);
}

#[test]
fn the_fma_probe_agrees_with_the_raw_fma() {
    let Some(ctx) = common::context() else {
        return;
    };
    let pairs = krylov_wgpu::gpu::ds::probe_pairs();
    let raw = krylov_wgpu::gpu::ds::run_probe(&ctx, &pairs).expect("the probe runs");
    let exact: Vec<bool> = pairs
        .iter()
        .zip(&raw)
        .map(|(&[a, b], &e)| e.to_bits() == krylov_wgpu::gpu::ds::exact_error(a, b).to_bits())
        .collect();
    let verdict = krylov_wgpu::gpu::ds::exact_fma(&ctx);
    eprintln!(
        "{}: fma exact on {}/{} probe products; two_prod = {:?}",
        ctx.summary.name,
        exact.iter().filter(|&&e| e).count(),
        exact.len(),
        if verdict {
            TwoProd::Fma
        } else {
            TwoProd::Split
        }
    );
    assert_eq!(verdict, exact.iter().all(|&e| e));
    // An engine left to choose takes the probe's verdict.
    let engine = Engine::new(ctx);
    assert_eq!(
        engine.two_prod(),
        if verdict {
            TwoProd::Fma
        } else {
            TwoProd::Split
        }
    );
}

#[test]
fn nan_never_passes() {
    let Some(engine) = common::engine() else {
        return;
    };
    let nan = Ds::from_f32(f32::NAN);
    let one = Ds::from_f32(1.0);
    let pairs = [
        (nan, one),
        (one, nan),
        (
            Ds {
                hi: 1.0,
                lo: f32::NAN,
            },
            one,
        ),
    ];
    for op in [DsOp::Add, DsOp::Sub, DsOp::AddF32, DsOp::Mul, DsOp::MulF32] {
        for (i, g) in gpu_op(&engine, op, &pairs).iter().enumerate() {
            assert!(
                !g.to_f64().is_finite(),
                "{op:?} pair {i}: a NaN operand gave the finite {g:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// The true residual of f32 systems on the GPU: `gpu::ds::TrueResidualDs` (kernel
// `true_residual_ds`) against the host's f64 value, in every storage format.

use krylov_wgpu::KrylovError;
use krylov_wgpu::gpu::GpuMatrix;
use krylov_wgpu::gpu::ds::TrueResidualDs;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::Format;

const FORMATS: [Format; 8] = [
    Format::Csr,
    Format::Ell,
    Format::Dia,
    Format::Sell,
    Format::Bcsr1,
    Format::Bcsr2,
    Format::Bcsr4,
    Format::Bcsr8,
];

/// ‖b − Ax‖² by `true_residual_ds` on `a` stored in `format` (`None`: the format is refused
/// for this matrix on this adapter).
fn gpu_rr(engine: &Engine, a: &Csr<f32>, format: Format, x: &[f32], b: &[f32]) -> Option<f64> {
    let ga = match GpuMatrix::upload_with(engine, a, format, 1e9) {
        Ok(ga) => ga,
        Err(KrylovError::BufferTooLarge { .. }) => return None,
        Err(e) => panic!("{format}: {e}"),
    };
    let xb = engine.storage_from("x", x).unwrap();
    let bb = engine.storage_from("b", b).unwrap();
    let t = TrueResidualDs::new(engine, &ga, &xb, &bb).unwrap();
    // x and b are only read.
    let rr = t.norm2::<f32>(engine).unwrap();
    assert_eq!(engine.read::<f32>(&xb, 0, x.len()).unwrap(), x);
    assert_eq!(engine.read::<f32>(&bb, 0, b.len()).unwrap(), b);
    Some(rr)
}

/// The GPU's ‖b − Ax‖ against the exact one (the f64 host value of the same f32 data, whose
/// own error is below k·2⁻⁵³·‖|A||x|‖), within the bound documented on `TrueResidualDs`
/// (doubled): (k + 1)·3.1u²·‖|A||x|‖ + (4 + 1.5(n + 8))·u²·‖r‖ + the host's k·2⁻⁵³·‖|A||x|‖.
fn check_residual(engine: &Engine, a: &Csr<f32>, x: &[f32], b: &[f32], what: &str) {
    let host = krylov_wgpu::cpu::spmv_f64(a, x)
        .iter()
        .zip(b)
        .map(|(ax, &bi)| (bi as f64 - ax).powi(2))
        .sum::<f64>()
        .sqrt();
    let (terms, lens) = common::abs_terms(a, x);
    let abs_ax = terms.iter().map(|t| t * t).sum::<f64>().sqrt();
    let k = lens.iter().copied().max().unwrap_or(0) as f64;
    let n = a.nrows() as f64;
    let bound = 2.0
        * ((k + 1.0) * 3.1 * U * U * abs_ax
            + (4.0 + 1.5 * (n + 8.0)) * U * U * host
            + k * 2f64.powi(-53) * abs_ax)
        + 1e-300;
    // What an f32 residual would be off by: the f32 SpMV's own rounding, ~k·u·‖|A||x|‖.
    let f32_scale = k * U * abs_ax;
    for format in FORMATS {
        let Some(rr) = gpu_rr(engine, a, format, x, b) else {
            eprintln!("{what} {format}: refused (over the binding limit)");
            continue;
        };
        let gpu = rr.sqrt();
        let err = (gpu - host).abs();
        assert!(
            err <= bound,
            "{what} {format}: GPU ‖r‖ = {gpu:e}, host f64 {host:e}: error {err:e} > bound \
             {bound:e} (‖|A||x|‖ = {abs_ax:e}, k = {k})"
        );
        eprintln!(
            "{what} {format}: ‖r‖ = {host:.6e}, GPU error {err:.1e} (bound {bound:.1e}; an f32 \
             SpMV's rounding is ~{f32_scale:.1e})"
        );
    }
}

/// b = fl₃₂(A·x) + a perturbation of relative size `rel`: a residual far below what an f32
/// SpMV resolves when `rel` is small (the state of a converged f32 solve).
fn rhs_near(a: &Csr<f32>, x: &[f32], rel: f64, rng: &mut impl Rng) -> Vec<f32> {
    krylov_wgpu::cpu::spmv_f64(a, x)
        .into_iter()
        .map(|v| (v * (1.0 + rel * rng.random_range(-1.0..1.0))) as f32)
        .collect()
}

#[test]
fn true_residual_ds_matches_the_host_in_every_format_on_random_matrices() {
    let Some(engine) = common::engine_with(common::small_grid(None)) else {
        return;
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let a: Csr<f32> = common::random_ragged(&mut rng, 701, 701, 300);
    let x: Vec<f32> = (0..701).map(|_| rng.random_range(-1.0..1.0)).collect();
    for rel in [0.0, 1e-9, 1e-6, 1e-2] {
        let b = rhs_near(&a, &x, rel, &mut rng);
        check_residual(
            &engine,
            &a,
            &x,
            &b,
            &format!("random 701, b = Ax(1 ± {rel:e})"),
        );
    }
    // b = 0 (‖r‖ = ‖Ax‖) and an all-zero x (‖r‖ = ‖b‖: exact).
    check_residual(&engine, &a, &x, &vec![0.0; 701], "random 701, b = 0");
    let b = rhs_near(&a, &x, 0.0, &mut rng);
    check_residual(&engine, &a, &vec![0.0; 701], &b, "random 701, x = 0");
}

#[test]
fn true_residual_ds_matches_the_host_on_a_shipped_matrix_in_every_format() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a: Csr<f32> = common::problems::cast::<f32>(&common::problems::load("sherman4"), &[]).0;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    // x near the solution of a converged f32 solve: ones with f32-sized noise.
    let x: Vec<f32> = (0..a.ncols())
        .map(|_| 1.0 + rng.random_range(-1e-6..1e-6))
        .collect();
    let ones = vec![1.0f32; a.ncols()];
    let b: Vec<f32> = krylov_wgpu::cpu::spmv_f64(&a, &ones)
        .into_iter()
        .map(|v| v as f32)
        .collect();
    check_residual(&engine, &a, &x, &b, "sherman4");
}

/// An f32 solve's true-residual guard downloads no x: the solve reads back one x (the result
/// the caller gets) and otherwise only small things (residual histories, partial sums), and
/// its reported true residual is the host's f64 value of the returned x (within the
/// double-single bound). Every Krylov method, device mode.
#[test]
fn f32_solves_guard_without_downloading_x() {
    use krylov_wgpu::solvers::{CheckMode, Method, Precond, Side, SolveOptions, solve_gpu};
    let Some(engine) = common::engine() else {
        return;
    };
    let a: Csr<f32> = krylov_wgpu::matrix::generators::poisson_2d_fd(48);
    let n = a.nrows();
    let b = common::problems::rhs(&a);
    // GMRES guards on the GPU only when left-preconditioned (its claims are then checked
    // between cycles); otherwise its final residual is the host's from the returned x.
    for (method, precond, side) in [
        (Method::Cg, Precond::None, Side::Right),
        (Method::Bicgstab, Precond::None, Side::Right),
        (Method::Bicg, Precond::None, Side::Right),
        (Method::Gmres, Precond::None, Side::Right),
        (Method::Gmres, Precond::Jacobi, Side::Left),
    ] {
        let opts = SolveOptions {
            method,
            precond,
            side,
            rtol: 1e-5,
            check_mode: CheckMode::Device,
            ..Default::default()
        };
        let before = engine.counters().snapshot();
        let sol = solve_gpu(&engine, &a, &b, None, &opts, &mut ()).unwrap();
        let c = engine.counters().snapshot().since(&before);
        let x_bytes = 4 * n as u64;
        // (GMRES reads its cycle buffer back every restart: bytes say nothing about x there.)
        assert!(
            method == Method::Gmres || c.bytes_read_back < 2 * x_bytes,
            "{method:?}: {} bytes read back, x is {x_bytes}: the guard downloaded x",
            c.bytes_read_back
        );
        let host = krylov_wgpu::cpu::true_relative_residual(&a, &b, &sol.x);
        let rel = sol.report.relative_residual;
        assert!(
            (rel - host).abs() <= 1e-9 * host.max(1e-3),
            "{method:?}: reported {rel:e}, host f64 {host:e}"
        );
        eprintln!(
            "{method:?}: {} iterations, true residual {rel:.4e} (host {host:.4e}), {} readbacks, \
             {} bytes (x: {x_bytes})",
            sol.report.iterations, c.readbacks, c.bytes_read_back
        );
    }
}

/// The Jacobi iteration's f32 guard runs on the GPU too (on whichever of its three rotating x
/// buffers holds the last sweep's x).
#[test]
fn f32_jacobi_guards_without_downloading_x() {
    use krylov_wgpu::solvers::{CheckMode, Method, SolveOptions, solve_gpu};
    let Some(engine) = common::engine() else {
        return;
    };
    // Strictly diagonally dominant: the iteration converges.
    let a: Csr<f32> = krylov_wgpu::matrix::generators::random_nonsymmetric(3000, 7, 42);
    let b = common::problems::rhs(&a);
    for check_mode in [CheckMode::Device, CheckMode::Paper] {
        let opts = SolveOptions {
            method: Method::Jacobi,
            rtol: 1e-5,
            check_mode,
            ..Default::default()
        };
        let before = engine.counters().snapshot();
        let sol = solve_gpu(&engine, &a, &b, None, &opts, &mut ()).unwrap();
        let c = engine.counters().snapshot().since(&before);
        assert!(sol.report.converged, "{check_mode:?}");
        let x_bytes = 4 * a.nrows() as u64;
        // Paper mode reads 16 B per workgroup per sweep; device mode histories.
        let loop_bytes = c.bytes_read_back - x_bytes;
        assert!(
            loop_bytes < x_bytes,
            "{check_mode:?}: {} bytes read back, x is {x_bytes}",
            c.bytes_read_back
        );
        let host = krylov_wgpu::cpu::true_relative_residual(&a, &b, &sol.x);
        let rel = sol.report.relative_residual;
        assert!(
            (rel - host).abs() <= 1e-9 * host,
            "{check_mode:?}: reported {rel:e}, host f64 {host:e}"
        );
    }
}
