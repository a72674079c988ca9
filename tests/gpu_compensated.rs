//! Compensated f32 reductions (issue 15, `--reduction compensated`): the BLAS dot of
//! adversarial vectors against the exact value, plain vs compensated, in every launch shape;
//! NaN never passes; every solver kernel compiles compensated; compensated solves converge in
//! no more iterations than plain ones, with the same launches and transfers.

mod common;

use krylov_wgpu::Precision;
use krylov_wgpu::gpu::kernels::{FLAG_MONITOR, Params, SolverBuffers, solver_kernel};
use krylov_wgpu::gpu::shader::{FormatKernel, KERNELS, ShaderConfig, specialise};
use krylov_wgpu::gpu::{Engine, Tuning};
use krylov_wgpu::matrix::generators::poisson_2d_fd;
use krylov_wgpu::solvers::{
    CheckMode, Method, Reduction, SolveOptions, SolveReport, Variant, solve_gpu,
};

/// What one dot product run gives: the device-finished value (`dot_finish`, the second stage
/// in Real) and the host's f64 sum of the workgroups' partials (`paper` mode's finish).
struct Dot {
    device: f64,
    host: f64,
    /// The status word after `dot_finish` recorded the value as a residual.
    status: u32,
}

/// ⟨x, y⟩ by the `dot` and `dot_finish` kernels compiled plain or compensated.
fn gpu_dot(engine: &Engine, x: &[f32], y: &[f32], compensated: bool) -> Dot {
    let n = x.len();
    let config = ShaderConfig {
        compensated,
        ..engine.shader_config(Precision::F32)
    };
    let dot = solver_kernel::<f32>(engine, "dot", config).unwrap();
    let finish = solver_kernel::<f32>(engine, "dot_finish", config).unwrap();
    let groups = engine.reduction_groups(n);
    let bufs = SolverBuffers::with_reduction::<f32>(engine, groups, 1, 4, compensated).unwrap();
    // tol² = -1: recording the value never converges; a NaN stops as non-finite.
    bufs.reset(engine, 0, -1.0f32);
    let params = engine.uniform_from(
        "params",
        &Params {
            n: n as u32,
            groups,
            flags: FLAG_MONITOR,
            dst: 3,
            ..Default::default()
        },
    );
    let xb = engine.storage_from("x", x).unwrap();
    let yb = engine.storage_from("y", y).unwrap();
    let bg_dot = bufs.bind(engine, &dot, &params, &[(5, &xb), (6, &yb)]);
    let bg_finish = bufs.bind(engine, &finish, &params, &[]);
    let mut batch = engine.begin("dot");
    batch.dispatch(&dot, &bg_dot, groups);
    batch.dispatch(&finish, &bg_finish, 1);
    let partials: Vec<f32> = batch
        .submit_and_read(&bufs.partials, 0, 4 * groups as usize)
        .unwrap();
    let scalars: Vec<f32> = engine.read(&bufs.scalars, 0, 4).unwrap();
    let state: Vec<u32> = engine.read(&bufs.state, 0, 4).unwrap();
    Dot {
        device: scalars[3] as f64,
        host: (0..groups as usize).map(|g| partials[4 * g] as f64).sum(),
        status: state[0],
    }
}

/// x: 1e8 first, −1e8 last and n − 2 small terms in (0.5, 1.375) between them, all exact
/// in f32; y: powers of two (every product exact). The exact dot product (f64, exact here)
/// is the sum of the small terms: the two large ones cancel, and every plain partial sum
/// that holds one of them rounds the small terms it meets to multiples of 8.
fn cancelling(n: usize) -> (Vec<f32>, Vec<f32>, f64) {
    let mut x: Vec<f32> = (0..n).map(|i| 0.5 + (i % 7) as f32 * 0.125).collect();
    let y: Vec<f32> = (0..n).map(|i| [1.0, 0.5, 2.0][i % 3]).collect();
    x[0] = 1e8;
    x[n - 1] = -1e8 / y[n - 1];
    let exact = x.iter().zip(&y).map(|(&a, &b)| a as f64 * b as f64).sum();
    (x, y, exact)
}

/// One 2^25 followed by n − 1 terms of 0.75: each plain add of 0.75 to the running sum
/// holding 2^25 (spacing 4) rounds it away.
fn large_then_small(n: usize) -> (Vec<f32>, Vec<f32>, f64) {
    let mut x = vec![0.75f32; n];
    x[0] = 33_554_432.0;
    let y = vec![1.0f32; n];
    let exact = x.iter().map(|&a| a as f64).sum();
    (x, y, exact)
}

/// Launch shapes: the default (256 threads, up to 1024 workgroups), few small workgroups
/// (long grid-stride loops), subgroups on and off where the adapter has them.
fn shapes() -> Vec<(String, Tuning)> {
    let mut v = vec![
        ("default".to_string(), Tuning::default()),
        ("small grid".to_string(), common::small_grid(Some(false))),
    ];
    if common::context().is_some_and(|c| c.has_subgroups()) {
        v.push(("subgroups".into(), common::with_subgroups(true)));
        v.push((
            "small grid, subgroups".into(),
            common::small_grid(Some(true)),
        ));
    }
    v
}

const U: f64 = f32::EPSILON as f64 / 2.0;

#[test]
fn compensated_dot_is_within_one_rounding_of_the_exact_value() {
    for (shape, tuning) in shapes() {
        let Some(engine) = common::engine_with(tuning) else {
            return;
        };
        for (case, (x, y, exact)) in [
            ("cancelling 1e8 / -1e8", cancelling(50_001)),
            ("2^25 then 0.75s", large_then_small(50_001)),
        ] {
            let what = format!("{case}, {shape}");
            let magnitude: f64 = x
                .iter()
                .zip(&y)
                .map(|(&a, &b)| (a as f64 * b as f64).abs())
                .sum();
            let plain = gpu_dot(&engine, &x, &y, false);
            let comp = gpu_dot(&engine, &x, &y, true);
            let err = |v: f64| (v - exact).abs();
            // Compensated, finished on the device: one rounding of the result (u|S|), a
            // rounding of the rounded partial it is finished from, and the second-order
            // term (n u² Σ|terms|, here 1e-4 of the first).
            let bound = 2.0 * U * exact.abs() + x.len() as f64 * U * U * magnitude;
            assert!(
                err(comp.device) <= bound,
                "{what}: compensated {} vs exact {exact}: error {} > {bound}",
                comp.device,
                err(comp.device)
            );
            // The plain sums lose what a large partial absorbs: in the cancelling case at
            // least 100 times more than the compensated error (or one rounding of the
            // result); never less.
            if case.starts_with("cancelling") {
                assert!(
                    err(plain.device) >= 100.0 * err(comp.device).max(U * exact.abs()),
                    "{what}: plain error {} vs compensated {}: not adversarial",
                    err(plain.device),
                    err(comp.device)
                );
            } else {
                assert!(
                    err(comp.device) <= err(plain.device),
                    "{what}: compensated error {} > plain {}",
                    err(comp.device),
                    err(plain.device)
                );
            }
            // The host's f64 finish reads the workgroups' sums rounded once each (paper
            // mode): within half a spacing of each partial, ≤ 2 u Σ_g |partial_g|, which the
            // magnitudes bound; and never worse than plain.
            assert!(
                err(comp.host) <= 2.0 * U * magnitude + bound,
                "{what}: host finish of compensated partials {} vs {exact}",
                comp.host
            );
            assert!(
                err(comp.host) <= err(plain.host).max(bound),
                "{what}: host finish compensated {} worse than plain {}",
                comp.host,
                plain.host
            );
            assert_eq!(comp.status, 0, "{what}: a finite sum stops nothing");
            eprintln!(
                "{what}: exact {exact}, plain {} (err {:.2e}), compensated {} (err {:.2e}), host {} / {}",
                plain.device,
                err(plain.device),
                comp.device,
                err(comp.device),
                plain.host,
                comp.host
            );
        }
    }
}

#[test]
fn nan_and_inf_never_pass_a_compensated_dot() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (x, y, _) = cancelling(5_000);
    for (what, bad) in [("NaN", f32::NAN), ("inf", f32::INFINITY)] {
        for i in [0, 1234, 4_999] {
            let mut xb = x.clone();
            xb[i] = bad;
            let d = gpu_dot(&engine, &xb, &y, true);
            assert!(
                !d.device.is_finite() && !d.host.is_finite(),
                "{what} at {i}: {} / {}",
                d.device,
                d.host
            );
            assert_eq!(d.status, 3, "{what} at {i}: STATUS_NON_FINITE");
        }
    }
    // Overflow of the terms' sum: non-finite, never a finite value.
    let big = vec![f32::MAX; 4];
    let d = gpu_dot(&engine, &big, &[1.0; 4], true);
    assert!(!d.device.is_finite(), "overflow gives {}", d.device);
}

/// Every solver kernel compiles compensated (f32; f64 too, though solves never ask for it),
/// in both reduction flavours and every format, and translates to SPIR-V.
#[test]
fn every_solver_kernel_validates_compensated() {
    for k in KERNELS.iter().filter(|k| k.solver) {
        let formats: &[FormatKernel] = if k.matrices > 0 {
            &[
                FormatKernel::Csr,
                FormatKernel::Sell { c: 32 },
                FormatKernel::Bcsr { n: 4, bx: 2 },
            ]
        } else {
            &[FormatKernel::Csr]
        };
        for precision in [Precision::F32] {
            for subgroups in [false, true] {
                for &format in formats {
                    let config = ShaderConfig {
                        subgroups,
                        format,
                        compensated: true,
                        ..ShaderConfig::new(precision)
                    };
                    let src = specialise(k, config);
                    let module = naga::front::wgsl::parse_str(&src)
                        .unwrap_or_else(|e| panic!("{}: {}", k.name, e.emit_to_string(&src)));
                    let info = naga::valid::Validator::new(
                        naga::valid::ValidationFlags::all(),
                        naga::valid::Capabilities::all(),
                    )
                    .validate(&module)
                    .unwrap_or_else(|e| panic!("{} ({precision}): {e:?}", k.name));
                    naga::back::spv::write_vec(&module, &info, &Default::default(), None)
                        .unwrap_or_else(|e| panic!("{} -> SPIR-V: {e}", k.name));
                }
            }
        }
    }
}

fn solve(engine: &Engine, opts: &SolveOptions, k: usize) -> SolveReport {
    let a = poisson_2d_fd::<f32>(k);
    let b = a.mul_vec(&vec![1.0f32; a.ncols()]).unwrap();
    solve_gpu(engine, &a, &b, None, opts, &mut ())
        .unwrap()
        .report
}

const CASES: [(Method, Variant); 9] = [
    (Method::Cg, Variant::Pipelined),
    (Method::Cg, Variant::Classical),
    (Method::Bicgstab, Variant::Pipelined),
    (Method::Bicgstab, Variant::Classical),
    (Method::Bicg, Variant::Pipelined),
    (Method::Bicg, Variant::Classical),
    (Method::Gmres, Variant::Pipelined),
    (Method::Gmres, Variant::Classical),
    (Method::Jacobi, Variant::Classical),
];

fn compensated(opts: &SolveOptions) -> SolveOptions {
    SolveOptions {
        reduction: Reduction::Compensated,
        ..opts.clone()
    }
}

/// Compensated solves converge (f32, poisson2d:24), in at most one iteration more than plain
/// ones: the recurrences differ only in the last bits of their scalars, which can move the
/// stop by one iteration either way. The report says which reduction ran.
#[test]
fn compensated_solves_converge() {
    let Some(engine) = common::engine() else {
        return;
    };
    for (method, variant) in CASES {
        for mode in [CheckMode::Paper, CheckMode::Device] {
            let what = format!("{method} {variant} {mode}");
            let opts = SolveOptions {
                method,
                variant,
                check_mode: mode,
                rtol: if method == Method::Jacobi { 1e-3 } else { 1e-5 },
                max_iter: if method == Method::Jacobi { 2000 } else { 500 },
                ..Default::default()
            };
            let plain = solve(&engine, &opts, 24);
            let comp = solve(&engine, &compensated(&opts), 24);
            assert_eq!(plain.reduction, Reduction::Plain, "{what}");
            assert_eq!(comp.reduction, Reduction::Compensated, "{what}");
            assert!(comp.converged, "{what}: compensated {:?}", comp.reason);
            assert!(comp.relative_residual <= opts.rtol, "{what}");
            assert!(
                comp.iterations <= plain.iterations + 1,
                "{what}: compensated {} iterations, plain {}",
                comp.iterations,
                plain.iterations
            );
        }
    }
}

/// The switch adds no launch, transfer or byte moved inside the loop: 12 iterations that
/// cannot converge (rtol 1e-30) cost exactly the same, in both check modes and batches of 1
/// and 5. (Setup uploads differ only in the doubled partials buffer, which is not uploaded.)
#[test]
fn compensated_solves_launch_exactly_as_plain() {
    let Some(engine) = common::engine() else {
        return;
    };
    for (method, variant) in CASES {
        for (mode, batch) in [
            (CheckMode::Paper, 0),
            (CheckMode::Device, 1),
            (CheckMode::Device, 5),
        ] {
            let what = format!("{method} {variant} {mode} k={batch}");
            let opts = SolveOptions {
                method,
                variant,
                check_mode: mode,
                batch,
                rtol: 1e-30,
                max_iter: 12,
                ..Default::default()
            };
            let plain = solve(&engine, &opts, 12);
            let comp = solve(&engine, &compensated(&opts), 12);
            assert_eq!(comp.iterations, plain.iterations, "{what}");
            assert_eq!(comp.loop_counts, plain.loop_counts, "{what}: loop work");
            assert_eq!(comp.counts, plain.counts, "{what}: all work");
        }
    }
}

/// f64 solves run plain whatever is asked (the report says so) and give the same bits.
#[test]
fn compensated_is_plain_in_f64() {
    let Some(engine) = common::engine() else {
        return;
    };
    if !engine.context().supports(Precision::F64) {
        return;
    }
    let a = poisson_2d_fd::<f64>(16);
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let opts = SolveOptions {
        rtol: 1e-10,
        ..Default::default()
    };
    let plain = solve_gpu(&engine, &a, &b, None, &opts, &mut ()).unwrap();
    let comp = solve_gpu(
        &engine,
        &a,
        &b,
        None,
        &SolveOptions {
            reduction: Reduction::Compensated,
            ..opts
        },
        &mut (),
    )
    .unwrap();
    assert_eq!(comp.report.reduction, Reduction::Plain);
    assert!(
        plain
            .x
            .iter()
            .zip(&comp.x)
            .all(|(p, c)| p.to_bits() == c.to_bits()),
        "f64 compensated differs from plain"
    );
}
