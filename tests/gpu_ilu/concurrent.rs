//! Concurrent BiCG with a factored M (issue 14, paper 004): M⁻¹r and M⁻ᵀr̃ by one stacked
//! apply (diag(L, Uᵀ) then diag(U, Lᵀ) on [r; r̃]), A·p and Aᵀ·p̃ by one launch. The stacked
//! apply against the two host applies; the solver against the CPU reference and the
//! classical GPU variant (converged by the true residual, iteration counts within 5 %), with
//! ILU(0) and IC(0), levels and sweeps, f64 and f32, `paper` and `device` checks; breakdown
//! restarts as on the CPU; and exact launch and transfer counts per iteration for classical
//! (14 + D + Dᵀ in `paper` mode, 16 + D + Dᵀ in `device` mode) vs concurrent (3 + D_s).

use super::common;
use common::solve::assert_converged;
use krylov_wgpu::cpu::precond::{self as host, CpuPreconditioner};
use krylov_wgpu::cpu::trisolve::TriFactor;
use krylov_wgpu::gpu::Engine;
use krylov_wgpu::gpu::kernels::{Params, SolverBuffers};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{ConvectionField, convection_diffusion_3d};
use krylov_wgpu::precond::ApplySite;
use krylov_wgpu::precond::ilu::StackedIlu;
use krylov_wgpu::solvers::{
    self, CheckMode, Method, Precond, Solution, SolveOptions, Trisolve, Variant,
};
use krylov_wgpu::{Precision, Scalar, cpu};

const MATRICES: [&str; 5] = ["sherman4", "pores_1", "jpwh_991", "add32", "pde2961"];

/// An engine able to run `T` (`None`: no adapter, or f64 without SHADER_F64).
fn engine_for<T: Scalar>() -> Option<Engine> {
    let engine = common::engine()?;
    (T::PRECISION == Precision::F32 || engine.context().summary.shader_f64).then_some(engine)
}

/// Iteration counts agree within 5 % (at least one iteration of slack).
fn assert_close_counts(got: usize, want: usize, tag: &str) {
    let slack = (want as f64 * 0.05).ceil().max(1.0) as usize;
    assert!(
        got.abs_diff(want) <= slack,
        "{tag}: {got} vs {want} iterations"
    );
}

fn bicg(precond: Precond, trisolve: Trisolve, mode: CheckMode, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::Bicg,
        variant: Variant::Pipelined,
        precond,
        trisolve,
        rtol,
        max_iter: 3000,
        check_mode: mode,
        ..Default::default()
    }
}

/// The launches of the M⁻¹ apply, of the M⁻ᵀ apply, and of the stacked pair, from the host
/// factors (independently of the GPU code).
fn host_launches<T: Scalar>(a: &Csr<T>, kind: Precond, how: Trisolve) -> [usize; 3] {
    let m = host::Ilu::new(a, kind, how).unwrap();
    let stages = |t: &TriFactor<T>| t.stages(&t.levels()).len();
    let (l, u) = m.triangular();
    let (t1, t2) = match kind {
        Precond::Ic0 => (l.clone(), u.clone()),
        _ => m.triangular_transposed().clone(),
    };
    match m.trisolve() {
        Trisolve::Sweeps(k) => [2 * k as usize; 3],
        _ => [
            stages(l) + stages(u),
            stages(&t1) + stages(&t2),
            stages(&TriFactor::stack(l, &t1)) + stages(&TriFactor::stack(u, &t2)),
        ],
    }
}

/// Concurrent (pipelined options) and classical on the GPU, and the CPU reference: all
/// converge by the true residual, with iteration counts within 5 % of each other.
fn run<T: Scalar>(a: &Csr<T>, b: &[T], opts: &SolveOptions, tag: &str) -> Option<Solution<T>> {
    let engine = engine_for::<T>()?;
    let conc = solvers::solve_gpu(&engine, a, b, None, opts, &mut ()).unwrap();
    let classical = SolveOptions {
        variant: Variant::Classical,
        ..opts.clone()
    };
    let clas = solvers::solve_gpu(&engine, a, b, None, &classical, &mut ()).unwrap();
    let host = cpu::solve(a, b, None, opts).unwrap();
    assert_converged(&conc, a, b, opts.rtol, &format!("{tag} concurrent"));
    assert_converged(&clas, a, b, opts.rtol, &format!("{tag} classical"));
    assert_converged(&host, a, b, opts.rtol, &format!("{tag} CPU"));
    let it = conc.report.iterations;
    assert_close_counts(it, host.report.iterations, &format!("{tag} vs CPU"));
    assert_close_counts(it, clas.report.iterations, &format!("{tag} vs classical"));
    // The concurrent variant ran, says so, and applies the same M as the CPU.
    let r = &conc.report;
    assert_eq!(r.variant, Variant::Pipelined, "{tag}");
    assert!(
        r.notes[0].starts_with("concurrent BiCG"),
        "{tag}: {:?}",
        r.notes
    );
    let [_, _, stacked] = host_launches(a, opts.precond, opts.trisolve);
    assert!(
        r.notes[0].ends_with(&format!("{} launches per iteration", 3 + stacked)),
        "{tag}: {}",
        r.notes[0]
    );
    let (info, want) = (
        r.preconditioner.as_ref().expect("reported"),
        host.report.preconditioner.as_ref().expect("reported"),
    );
    assert_eq!(
        (
            info.kind,
            info.trisolve,
            info.levels,
            info.dispatches_per_apply
        ),
        (
            want.kind,
            want.trisolve,
            want.levels,
            want.dispatches_per_apply
        ),
        "{tag}"
    );
    assert_eq!(clas.report.variant, Variant::Classical, "{tag}");
    Some(conc)
}

#[test]
fn stacked_apply_is_both_host_applies_in_the_dispatches_of_one() {
    let a: Csr<f64> = common::problems::load("pores_1");
    for (kind, a) in [
        (Precond::Ilu0, a),
        (Precond::Ic0, krylov_wgpu::matrix::generators::laplace_3d(6)),
    ] {
        for how in [Trisolve::Levels, Trisolve::Sweeps(3)] {
            stacked_apply::<f64>(&a, kind, how, 1e-12);
        }
    }
    // A wide level 0 in L and in Uᵀ (over WIDE_LEVEL_ROWS independent rows), then chains:
    // the stack's first stage is wide in both blocks, its second merges both chains.
    let wide = wide_then_chains(6000);
    for how in [Trisolve::Levels, Trisolve::Sweeps(2)] {
        stacked_apply::<f64>(&wide, Precond::Ilu0, how, 1e-12);
    }
    let a32 = convection_diffusion_3d::<f32>(7, 0.05, ConvectionField::Circular);
    stacked_apply::<f32>(&a32, Precond::Ilu0, Trisolve::Levels, 1e-4);
}

/// 4I with a chain below the diagonal in the last rows and one above it in the first ones:
/// L and Uᵀ both start with a level wider than `WIDE_LEVEL_ROWS`.
fn wide_then_chains(n: usize) -> Csr<f64> {
    let mut coo = krylov_wgpu::matrix::Coo::<f64>::new(n, n);
    for i in 0..n {
        coo.push(i, i, 4.0).unwrap();
        if i >= n - 800 {
            coo.push(i, i - 1, -1.0).unwrap();
        }
        if i < 600 {
            coo.push(i, i + 1, -1.5).unwrap();
        }
    }
    let a = coo.to_csr().unwrap();
    let m = host::Ilu::new(&a, Precond::Ilu0, Trisolve::Levels).unwrap();
    let (l, _) = m.triangular();
    let (ut, _) = m.triangular_transposed();
    let wide = krylov_wgpu::cpu::trisolve::WIDE_LEVEL_ROWS;
    for t in [l, ut] {
        assert!(t.levels().size(0) > wide && t.levels().stages().len() == 2);
    }
    a
}

/// GPU [z; z̃] = [M⁻¹r; M⁻ᵀr̃] against the CPU twin's two applies.
fn stacked_apply<T: Scalar>(a: &Csr<T>, kind: Precond, how: Trisolve, tol: f64) {
    let Some(engine) = engine_for::<T>() else {
        return;
    };
    let n = a.nrows();
    let m = StackedIlu::new(&engine, a, kind, how).unwrap();
    let [d, dt, ds] = host_launches(a, kind, how);
    assert_eq!((m.n(), m.dispatches()), (2 * n, ds), "{kind} {how}");
    assert_eq!(m.separate_dispatches(), [d, dt], "{kind} {how}");
    assert!(
        ds <= d + dt && ds >= d.max(dt),
        "{kind} {how}: {ds} vs {d} + {dt}"
    );
    let groups = engine.reduction_groups(n);
    let bufs = SolverBuffers::new::<T>(&engine, groups, 1, 4).unwrap();
    let params = engine.uniform_from(
        "params",
        &Params {
            n: (2 * n) as u32,
            groups,
            ..Default::default()
        },
    );
    let at = ApplySite {
        engine: &engine,
        config: engine.shader_config(T::PRECISION),
        bufs: &bufs,
        params: &params,
    };
    let rr: Vec<T> = (0..2 * n)
        .map(|i| T::from_f64(((i * 37 % 101) as f64 - 50.0) / 17.0))
        .collect();
    let rb = engine.storage_from("[r; r~]", &rr).unwrap();
    let zb = engine
        .storage_from("[z; z~]", &vec![T::from_f64(f64::NAN); 2 * n])
        .unwrap();
    let step = m.bind_apply(&at, &rb, &zb).unwrap();
    assert_eq!(step.launches(), ds);
    let mut batch = engine.begin("stacked apply");
    step.record(&mut batch);
    batch.submit().unwrap();
    let got: Vec<T> = engine.read(&zb, 0, 2 * n).unwrap();
    let cpu = host::Ilu::new(a, kind, how).unwrap();
    let mut want = vec![T::zero(); 2 * n];
    let (z, zt) = want.split_at_mut(n);
    cpu.apply(&rr[..n], z);
    cpu.apply_transposed(&rr[n..], zt);
    let scale = want.iter().map(|v| v.as_f64().abs()).fold(0.0, f64::max);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let (g, w) = (g.as_f64(), w.as_f64());
        assert!(
            (g - w).abs() <= tol * scale,
            "{kind} {how} {:?}: z[{i}] = {g} vs {w}",
            T::PRECISION
        );
    }
}

#[test]
fn concurrent_ilu0_bicg_follows_the_cpu_and_classical_on_the_shipped_matrices_f64() {
    for name in MATRICES {
        let (a, b) = common::problems::shipped_system(name, &["sherman4"]);
        let o = bicg(Precond::Ilu0, Trisolve::Levels, CheckMode::Device, 1e-8);
        run(&a, &b, &o, &format!("{name} ilu0 levels f64"));
    }
}

#[test]
fn concurrent_bicg_with_sweeps_in_f32_and_in_paper_mode() {
    for name in ["sherman4", "pores_1"] {
        let (a, b) = common::problems::shipped_system(name, &["sherman4"]);
        let o = bicg(Precond::Ilu0, Trisolve::Sweeps(4), CheckMode::Device, 1e-8);
        run(&a, &b, &o, &format!("{name} sweeps:4 f64"));
    }
    let (a, b) = common::problems::shipped_system("add32", &[]);
    let o = bicg(Precond::Ilu0, Trisolve::Levels, CheckMode::Paper, 1e-8);
    run(&a, &b, &o, "add32 paper f64");
    // f32: sherman4's condition number is ~2e3, so f32 attains about ε·κ ≈ 1e-4.
    let (a, b) = common::problems::shipped_system("sherman4", &["sherman4"]);
    let (a32, b32) = common::problems::cast::<f32>(&a, &b);
    for mode in [CheckMode::Paper, CheckMode::Device] {
        let o = bicg(Precond::Ilu0, Trisolve::Levels, mode, 1e-4);
        run(&a32, &b32, &o, &format!("sherman4 levels f32 {mode}"));
    }
}

#[test]
fn ic0_concurrent_bicg_on_nos6() {
    let (a, b) = common::problems::shipped_system("nos6", &[]);
    for how in [Trisolve::Auto, Trisolve::Sweeps(6)] {
        let o = bicg(Precond::Ic0, how, CheckMode::Device, 1e-8);
        run(&a, &b, &o, &format!("nos6 ic0 {how}"));
    }
}

#[test]
fn breakdown_restarts_and_the_residual_guard_work_as_on_the_cpu() {
    // jpwh_991 with b = A·1 (constant column sums) drives ρ to (near) zero early.
    let a = common::problems::load("jpwh_991");
    let b = common::problems::ones_rhs(&a);
    let Some(engine) = engine_for::<f64>() else {
        return;
    };
    for mode in [CheckMode::Device, CheckMode::Paper] {
        let o = bicg(Precond::Ilu0, Trisolve::Levels, mode, 1e-8);
        let tag = format!("jpwh_991 A·1 {mode}");
        let host = cpu::solve(&a, &b, None, &o).unwrap();
        let gpu = solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        assert!(gpu.report.notes[0].starts_with("concurrent BiCG"), "{tag}");
        assert_converged(&host, &a, &b, o.rtol, &format!("{tag} CPU"));
        assert_converged(&gpu, &a, &b, o.rtol, &format!("{tag} GPU"));
        assert_eq!(gpu.report.restart_log, host.report.restart_log, "{tag}");
        assert_eq!(gpu.report.restarts, host.report.restarts, "{tag}");
        let log = &gpu.report.restart_log;
        assert!(
            !log.is_empty() && log[0].contains("breakdown"),
            "{tag}: {log:?}"
        );
    }
}

#[test]
fn launch_and_transfer_counts_per_iteration_classical_vs_concurrent() {
    // f32 on a generator (every adapter), f64 on sherman4 (the reported numbers).
    let (a, b) = common::problems::convdiff_system::<f32>(8, 0.1, ConvectionField::Circular);
    counts(&a, &b, 1e-5, "convdiff 8 f32");
    let (a, b) = common::problems::shipped_system("sherman4", &["sherman4"]);
    counts(&a, &b, 1e-8, "sherman4 f64");
}

fn counts<T: Scalar>(a: &Csr<T>, b: &[T], rtol: f64, name: &str) {
    let Some(engine) = engine_for::<T>() else {
        return;
    };
    for how in [Trisolve::Levels, Trisolve::Sweeps(3)] {
        let [d, dt, ds] = host_launches(a, Precond::Ilu0, how);
        // One apply's launches for the pair (merged stages: at most the two applies').
        assert!(ds <= d + dt, "{name} {how}");
        for variant in [Variant::Classical, Variant::Pipelined] {
            for (mode, batch) in common::solve::COUNT_CASES {
                let tag = format!("{name} {how} {variant} {mode} batch {batch}");
                let o = SolveOptions {
                    variant,
                    batch,
                    ..bicg(Precond::Ilu0, how, mode, rtol)
                };
                let r = solvers::solve_gpu(&engine, a, b, None, &o, &mut ())
                    .unwrap()
                    .report;
                assert!(r.converged && r.restarts == 0, "{tag}: {}", r.reason_detail);
                let j = r.iterations_recorded as u64;
                let c = &r.loop_counts;
                let (d, dt, ds) = (d as u64, dt as u64, ds as u64);
                let per = match (variant, mode) {
                    // spmv ×2, dot ×3 | axpy ×3, dot, M⁻¹ (d), M⁻ᵀ (dt), dot ×3 | xpay ×2
                    (Variant::Classical, CheckMode::Paper) => 14 + d + dt,
                    // + bicg_finish ×2
                    (Variant::Classical, CheckMode::Device) => 16 + d + dt,
                    // bicg_update, stacked apply (ds), bicg_rho, bicg_direction_spmv
                    (Variant::Pipelined, _) => 3 + ds,
                    (
                        Variant::Fused | Variant::Workgroup | Variant::Cooperative | Variant::P1,
                        _,
                    ) => {
                        unreachable!("BiCG has neither a fused nor a workgroup variant")
                    }
                };
                match (variant, mode) {
                    (Variant::Classical, CheckMode::Paper) => {
                        // The xpays of the last iteration are never recorded.
                        assert_eq!(c.dispatches, per * j - 2, "{tag}");
                        assert_eq!((c.readbacks, c.uploads), (2 * j, 2 * j), "{tag}");
                        assert_eq!(r.transfers_per_iteration, 4.0, "{tag}");
                    }
                    (
                        Variant::Pipelined
                        | Variant::Fused
                        | Variant::Workgroup
                        | Variant::Cooperative
                        | Variant::P1,
                        CheckMode::Paper,
                    ) => {
                        assert_eq!(c.dispatches, per * j, "{tag}");
                        assert_eq!((c.readbacks, c.uploads, c.submits), (j, 0, j), "{tag}");
                        assert_eq!(r.transfers_per_iteration, 1.0, "{tag}");
                        assert_eq!(r.dispatches_per_iteration, per as f64, "{tag}");
                    }
                    (_, CheckMode::Device) => {
                        assert_eq!(c.dispatches, per * j, "{tag}");
                        assert_eq!(c.readbacks, j.div_ceil(batch as u64), "{tag}");
                        assert_eq!(c.uploads, 0, "{tag}");
                        assert_eq!(r.dispatches_per_iteration, per as f64, "{tag}");
                    }
                }
                if variant == Variant::Pipelined {
                    assert!(
                        3 + ds < 14 + d + dt,
                        "{tag}: concurrent fewer than classical"
                    );
                    assert!(r.notes[0].starts_with("concurrent BiCG"), "{tag}");
                } else {
                    assert!(r.notes.iter().all(|n| !n.contains("concurrent")), "{tag}");
                }
            }
        }
    }
}

#[test]
fn concurrent_bicg_runs_in_every_storage_format() {
    use krylov_wgpu::solvers::Format;
    // Both products of bicg_direction_spmv are written once against lib/spmv_row.wgsl; the
    // stacked [z; z̃] they read does not depend on the format.
    let formats = [
        Format::Csr,
        Format::Ell,
        Format::Dia,
        Format::Sell,
        Format::Bcsr1,
        Format::Bcsr2,
        Format::Bcsr4,
        Format::Bcsr8,
    ];
    fn each<T: Scalar>(formats: &[Format], rtol: f64) {
        let Some(engine) = engine_for::<T>() else {
            return;
        };
        let (a, b) = common::problems::convdiff_system::<T>(6, 0.1, ConvectionField::Circular);
        let base = bicg(Precond::Ilu0, Trisolve::Levels, CheckMode::Device, rtol);
        let host = cpu::solve(&a, &b, None, &base).unwrap();
        for &format in formats {
            let tag = format!("convdiff 6 {format} {:?}", T::PRECISION);
            let o = SolveOptions {
                format,
                max_padding: 1e9,
                ..base.clone()
            };
            let sol = solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
            assert_eq!(sol.report.format, format.to_string(), "{tag}");
            assert!(sol.report.notes[0].starts_with("concurrent BiCG"), "{tag}");
            assert_converged(&sol, &a, &b, rtol, &tag);
            assert_close_counts(sol.report.iterations, host.report.iterations, &tag);
        }
    }
    each::<f64>(&formats, 1e-10);
    each::<f32>(&formats, 1e-5);
}
