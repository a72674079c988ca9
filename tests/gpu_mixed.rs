//! Mixed-precision refinement on the GPU (`--precision mixed`, issue 15) against the CPU
//! reference and the host's f64 residual: f64 accuracy (1e-10) from f32 inner solves, with
//! the outer loop in f64 and in double-single (f64 hidden from the adapter); the outer
//! residual kernels against the host's f64 value; no false convergence.

mod common;

use krylov_wgpu::base::{OuterPrecision, RefineOptions, Refinement};
use krylov_wgpu::cpu;
use krylov_wgpu::cpu::ds::Ds;
use krylov_wgpu::cpu::mixed::Outer;
use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::random_nonsymmetric;
use krylov_wgpu::solvers::{Method, Precond, Solution, SolveOptions, StopReason, mixed};

/// The shipped test systems of the issue: three SPD (CG) and two nonsymmetric (BiCGStab)
/// matrices, with the preconditioner that lets f32 solve them (κ·ε_f32 < 1 after it).
fn systems() -> Vec<(&'static str, Method, Precond)> {
    vec![
        ("bcsstk21", Method::Cg, Precond::Jacobi),
        ("nos6", Method::Cg, Precond::Jacobi),
        ("mesh1e1", Method::Cg, Precond::None),
        ("sherman4", Method::Bicgstab, Precond::Ilu0),
        ("add32", Method::Bicgstab, Precond::Jacobi),
    ]
}

fn opts(method: Method, precond: Precond) -> SolveOptions {
    SolveOptions {
        method,
        precond,
        rtol: 1e-10,
        max_iter: 20_000,
        ..Default::default()
    }
}

/// Converged to `rtol` by the host's f64 residual, which the report states to 1e-4.
fn assert_truly_converged(sol: &Solution<f64>, a: &Csr<f64>, b: &[f64], rtol: f64, tag: &str) {
    let r = &sol.report;
    let true_rel = cpu::true_relative_residual(a, b, &sol.x);
    assert!(r.converged, "{tag}: {} ({})", r.reason, r.reason_detail);
    assert!(true_rel <= rtol * 1.001, "{tag}: true {true_rel:e}");
    assert!(
        (r.relative_residual - true_rel).abs() <= 1e-4 * true_rel.max(1e-300),
        "{tag}: reported {:e}, host {true_rel:e}",
        r.relative_residual
    );
    let rr = r.refinement.as_ref().expect("refinement report");
    assert_eq!(
        rr.inner_iterations.iter().sum::<usize>(),
        r.iterations,
        "{tag}"
    );
    assert!(rr.outer_iterations >= 2, "{tag}: {rr:?}");
}

fn run_all(engine: &Engine, outer: OuterPrecision, expect: &str) {
    for (name, method, precond) in systems() {
        let (a, b) = common::problems::shipped_system(name, &["sherman4", "mesh1e1"]);
        let o = opts(method, precond);
        let restart = RefineOptions {
            outer,
            refinement: Refinement::Restart,
            ..Default::default()
        };
        let sol = mixed::solve(engine, &a, &b, None, &o, &restart, &mut ()).unwrap();
        let tag = format!("{name} {expect}");
        assert_truly_converged(&sol, &a, &b, o.rtol, &tag);
        let rr = sol.report.refinement.as_ref().unwrap();
        assert_eq!(rr.outer_precision, expect, "{tag}");
        assert_eq!(rr.strategy, "restart", "{tag}");
        // The CPU reference refines the same way: the same number of outer steps, give or
        // take one (the f32 inner solves round differently).
        let cpu = cpu::mixed::solve(&a, &b, None, &o, &restart).unwrap();
        assert_truly_converged(&cpu, &a, &b, o.rtol, &format!("{tag} CPU"));
        let cpu_outer = cpu.report.refinement.unwrap().outer_iterations;
        assert!(
            rr.outer_iterations.abs_diff(cpu_outer) <= 1,
            "{tag}: GPU {} vs CPU {cpu_outer} outer iterations",
            rr.outer_iterations
        );
        // The default: pipelined CG (none or Jacobi) keeps one f32 iteration going with
        // reliable updates, and needs no more iterations than restarted refinement.
        let auto = RefineOptions {
            outer,
            ..Default::default()
        };
        let rel = mixed::solve(engine, &a, &b, None, &o, &auto, &mut ()).unwrap();
        let tag = format!("{tag} auto");
        assert_truly_converged(&rel, &a, &b, o.rtol, &tag);
        let rr = rel.report.refinement.as_ref().unwrap();
        assert_eq!(rr.outer_precision, expect, "{tag}");
        let reliable = method == Method::Cg;
        assert_eq!(
            rr.strategy,
            if reliable { "reliable" } else { "restart" },
            "{tag}"
        );
        if reliable {
            assert_eq!(rr.inner_iterations.len(), 1, "{tag}");
            eprintln!(
                "{tag}: reliable {} iterations ({} outer), restart {}",
                rel.report.iterations, rr.outer_iterations, sol.report.iterations
            );
            assert!(
                rel.report.iterations <= sol.report.iterations,
                "{tag}: reliable {} against restart {}",
                rel.report.iterations,
                sol.report.iterations
            );
        }
    }
}

#[test]
fn f64_outer_reaches_1e10_on_the_shipped_matrices() {
    let Some(engine) = common::engine() else {
        return;
    };
    if !engine.context().supports(krylov_wgpu::Precision::F64) {
        return;
    }
    run_all(&engine, OuterPrecision::Auto, "f64");
}

#[test]
fn double_single_outer_reaches_1e10_without_f64() {
    let Some(engine) = common::solve::engine_without_f64() else {
        return;
    };
    assert!(!engine.context().supports(krylov_wgpu::Precision::F64));
    run_all(&engine, OuterPrecision::Auto, "double-single");
}

#[test]
fn outer_residual_kernels_match_the_host_f64_residual() {
    for (double_single, engine) in [
        (false, common::engine()),
        (true, common::solve::engine_without_f64()),
    ] {
        let Some(engine) = engine else {
            return;
        };
        let a = random_nonsymmetric::<f64>(500, 7, 11);
        let n = a.nrows();
        let x: Vec<f64> = (0..n)
            .map(|i| 1.0 + (i as f64 * 0.731).sin() * 1e-3)
            .collect();
        // b close to A·x: the residual is 1e-9 of b, the cancellation f32 alone cannot do.
        let ax = a.mul_vec(&x).unwrap();
        let b: Vec<f64> = ax
            .iter()
            .enumerate()
            .map(|(i, v)| v + 1e-9 * v.abs().max(1.0) * ((i % 5) as f64 - 2.0))
            .collect();
        let mut r = vec![0.0; n];
        for i in 0..n {
            r[i] = b[i] - ax[i];
        }
        let host_norm = cpu::norm2_f64(&r);
        let mut outer = mixed::GpuOuter::upload(&engine, &a, &b, Some(&x), double_single).unwrap();
        let hint = 2f64.powi(30);
        let (norm, r32) = outer.residual(hint).unwrap();
        if double_single {
            // The kernel computes exactly what its CPU twin computes, bit for bit.
            let ds = |v: &[f64]| v.iter().map(|&x| Ds::from_f64(x)).collect::<Vec<_>>();
            let (twin, twin_norm) =
                cpu::mixed::residual_ds(&a, &ds(&x), &ds(&b), hint as f32, engine.two_prod());
            let differ = r32
                .iter()
                .zip(&twin)
                .filter(|(g, c)| g.to_bits() != c.to_bits())
                .count();
            assert_eq!(
                differ, 0,
                "{differ} of {n} entries differ from the CPU twin"
            );
            assert!((norm - twin_norm).abs() <= 1e-5 * twin_norm);
        }
        // f64: the residual to rounding; double-single: 48 bits of every product and sum,
        // norm squared in f32.
        let tol = if double_single { 1e-5 } else { 1e-12 };
        let tag = if double_single {
            "double-single"
        } else {
            "f64"
        };
        assert!(
            (norm - host_norm).abs() <= tol * host_norm,
            "{tag}: {norm:e} vs {host_norm:e}"
        );
        // Entry by entry, against the rounding bound of the outer precision: each of the k
        // products and sums of row i errs by at most a few units of `eps` of the row's scale
        // |b_i| + Σ_j |a_ij x_j| (double-single stores A, x and b to 48 bits: eps = 2⁻⁴⁷),
        // and r_i·hint is then rounded once to f32 (2⁻²⁴|r_i|). A zero r_i must come out as
        // (nearly) zero: the bound does not scale with r.
        let eps = if double_single {
            2f64.powi(-47)
        } else {
            2f64.powi(-52)
        };
        let (rows, cols, vals) = (a.row_ptr(), a.col_idx(), a.values());
        let worst = (0..n)
            .map(|i| {
                let span = rows[i] as usize..rows[i + 1] as usize;
                let k = span.len() as f64 + 2.0;
                let scale = b[i].abs()
                    + span
                        .map(|j| (vals[j] * x[cols[j] as usize]).abs())
                        .sum::<f64>();
                let bound = 2.0 * k * eps * scale + 2f64.powi(-24) * r[i].abs();
                (r32[i] as f64 / hint - r[i]).abs() / bound
            })
            .fold(
                0.0f64,
                |m, e| if e.is_nan() { f64::INFINITY } else { m.max(e) },
            );
        assert!(
            worst <= 1.0,
            "{tag}: worst entry error {worst:.2} x its bound"
        );
        // x += s·d and back.
        let d: Vec<f32> = (0..n).map(|i| (i % 3) as f32 - 1.0).collect();
        outer.update(&d, 1e-6).unwrap();
        let x1 = outer.solution().unwrap();
        for i in 0..n {
            let want = x[i] + 1e-6 * d[i] as f64;
            assert!((x1[i] - want).abs() <= 1e-13 * want.abs(), "{tag} x[{i}]");
        }
        // A diverged inner solve's step (|s·d| ≫ |x|) undone: x exactly as before, where
        // subtracting the step again would have wiped its digits out.
        outer.update(&d, 1e30).unwrap();
        outer.undo().unwrap();
        let x2 = outer.solution().unwrap();
        assert!(
            x2.iter().zip(&x1).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{tag}: undo did not restore x"
        );
    }
}

#[test]
fn an_unsolvable_f32_system_stops_by_name_without_claiming_convergence() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a, b) = nearly_singular();
    let o = SolveOptions {
        method: Method::Gmres,
        rtol: 1e-10,
        max_iter: 3000,
        ..Default::default()
    };
    let refine = RefineOptions::default();
    let gpu = mixed::solve(&engine, &a, &b, None, &o, &refine, &mut ()).unwrap();
    let cpu = cpu::mixed::solve(&a, &b, None, &o, &refine).unwrap();
    for (sol, tag) in [(gpu, "GPU"), (cpu, "CPU")] {
        let r = &sol.report;
        assert!(!r.converged, "{tag}: {}", r.reason_detail);
        assert!(
            matches!(r.reason, StopReason::Stagnation | StopReason::MaxIterations),
            "{tag}: {}",
            r.reason
        );
        let true_rel = cpu::true_relative_residual(&a, &b, &sol.x);
        assert!(true_rel > o.rtol, "{tag}: {true_rel:e}");
        assert!(
            (r.relative_residual - true_rel).abs() <= 1e-4 * true_rel,
            "{tag}"
        );
    }
}

#[test]
fn mixed_jacobi_on_a_zero_diagonal_is_reordered_as_in_f32_and_f64() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a, b) = common::problems::shipped_system("west0479", &[]);
    let o = SolveOptions {
        method: Method::Bicgstab,
        precond: Precond::Jacobi,
        rtol: 1e-8,
        max_iter: 600,
        ..Default::default()
    };
    let refine = RefineOptions::default();
    let sol = mixed::solve(&engine, &a, &b, None, &o, &refine, &mut ()).unwrap();
    // West0479 defeats f32 inner solves here (they stall); what matters is that the solve
    // ran on the reordered rows instead of refusing Jacobi, and says what it reached.
    assert!(sol.report.reordering.is_some(), "{:?}", sol.report.notes);
    let true_rel = cpu::true_relative_residual(&a, &b, &sol.x);
    assert!(true_rel.is_finite());
    assert!((sol.report.relative_residual - true_rel).abs() <= 1e-6 * true_rel.max(1e-12));
    assert!(!sol.report.converged || true_rel <= o.rtol * 1.01);
}

/// tridiag(−1, 2, −1) shifted by (1 − 1e-10)·λ_min: cond ≈ 1e15, and rounding the diagonal to
/// f32 moves λ_min by far more than λ_min itself, so f32 inner solves cannot correct x.
fn nearly_singular() -> (Csr<f64>, Vec<f64>) {
    let n = 300;
    let lmin = 2.0 - 2.0 * (std::f64::consts::PI / (n + 1) as f64).cos();
    let d = 2.0 - (1.0 - 1e-10) * lmin;
    let mut entries = Vec::new();
    for i in 0..n {
        entries.push((i, i, d));
        if i > 0 {
            entries.push((i, i - 1, -1.0));
            entries.push((i - 1, i, -1.0));
        }
    }
    let a = Csr::from_triplets(n, &entries).unwrap();
    let b: Vec<f64> = (0..n).map(|i| ((i * 7 % 13) as f64) - 6.0).collect();
    (a, b)
}

/// sherman4 in f32 and BiCGStab + ILU(0) options: a solve whose set-up (A and the factors)
/// is worth reusing.
fn sherman4_ilu_f32() -> (Csr<f32>, Vec<f32>, SolveOptions) {
    let (a, b) = common::problems::shipped_system("sherman4", &["sherman4"]);
    let (a32, b32) = common::problems::cast::<f32>(&a, &b);
    let o = SolveOptions {
        method: Method::Bicgstab,
        precond: Precond::Ilu0,
        rtol: 1e-4,
        ..Default::default()
    };
    (a32, b32, o)
}

#[test]
fn solves_inside_a_reuse_scope_upload_a_and_factor_m_once() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a32, b32, o) = sherman4_ilu_f32();
    let solve = || krylov_wgpu::solvers::solve_gpu(&engine, &a32, &b32, None, &o, &mut ()).unwrap();
    let alone = solve();
    let scope = krylov_wgpu::solvers::reuse_uploads();
    let first = solve();
    let second = solve();
    drop(scope);
    let after = solve();
    let up = |s: &Solution<f32>| s.report.counts.bytes_uploaded;
    // The same solve each time: the same iterations, bit for bit the same x.
    assert_eq!(second.x, alone.x);
    assert_eq!(up(&first), up(&alone));
    assert_eq!(up(&after), up(&alone));
    // The second skips A (matrix_bytes) and the ILU factors (at least A's non-zeros again).
    let skipped = up(&alone) - up(&second);
    assert!(
        skipped >= 2 * alone.report.matrix_bytes,
        "skipped {skipped} bytes of {}; A is {}",
        up(&alone),
        alone.report.matrix_bytes
    );
    assert_eq!(second.report.format, alone.report.format);
    let info = |s: &Solution<f32>| {
        let mut i = s.report.preconditioner.clone().unwrap();
        i.setup_seconds = 0.0;
        i
    };
    assert_eq!(info(&second), info(&alone));
}

#[test]
fn kept_uploads_serve_a_later_scope_and_nested_scopes_leave_the_outer_ones() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a32, b32, o) = sherman4_ilu_f32();
    let solve = || krylov_wgpu::solvers::solve_gpu(&engine, &a32, &b32, None, &o, &mut ()).unwrap();
    let up = |s: &Solution<f32>| s.report.counts.bytes_uploaded;
    let alone = solve();
    // A scope kept (as a matrix handle keeps it between calls, from any thread) and reopened:
    // the later solve finds A and M on the device.
    let scope = krylov_wgpu::solvers::reuse_uploads();
    let first = solve();
    let kept = scope.keep();
    let moved = std::thread::spawn(move || kept).join().unwrap();
    let outside = solve();
    assert_eq!(up(&outside), up(&alone), "keep() closed the scope");
    let scope = krylov_wgpu::solvers::reuse_uploads_from(moved);
    let reopened = solve();
    assert_eq!(up(&first), up(&alone));
    assert!(up(&alone) - up(&reopened) >= 2 * alone.report.matrix_bytes);
    assert_eq!(reopened.x, alone.x);
    // A scope opened inside it (as mixed refinement opens one) shares its values and leaves
    // them when dropped.
    let inner = krylov_wgpu::solvers::reuse_uploads();
    assert_eq!(up(&solve()), up(&reopened));
    drop(inner);
    assert_eq!(up(&solve()), up(&reopened));
    // A nested scope kept hands over nothing: the outer one still owns the values.
    let inner = krylov_wgpu::solvers::reuse_uploads();
    drop(inner.keep());
    assert_eq!(up(&solve()), up(&reopened));
    drop(scope);
    assert_eq!(up(&solve()), up(&alone));
}

#[test]
fn mixed_refinement_inside_a_scope_uploads_its_f32_matrix_once() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (a, b) = common::problems::shipped_system("sherman4", &["sherman4"]);
    let o = SolveOptions {
        method: Method::Bicgstab,
        rtol: 1e-10,
        ..Default::default()
    };
    let refine = RefineOptions::default();
    let solve = || mixed::solve(&engine, &a, &b, None, &o, &refine, &mut ()).unwrap();
    let alone = solve();
    let _scope = krylov_wgpu::solvers::reuse_uploads();
    let first = solve();
    let second = solve();
    let up = |s: &Solution<f64>| s.report.counts.bytes_uploaded;
    assert!(alone.report.converged && second.report.converged);
    assert_eq!(up(&first), up(&alone));
    // The second refinement finds the f32 copy of A (the same one) and its upload: at least
    // A's f32 values and column indices are not sent again.
    assert!(up(&second) + 8 * a.nnz() as u64 <= up(&first));
    assert_eq!(second.x, alone.x);
}

#[test]
fn reliable_replace_matches_its_cpu_twin() {
    use krylov_wgpu::gpu::kernels::{Params, SolverBuffers, solver_kernel};
    let Some(engine) = common::engine() else {
        return;
    };
    let n = 3001;
    let f = |k: f32| -> Vec<f32> { (0..n).map(|i| (i as f32 * k).sin() * 3.0).collect() };
    let (r, p, r32, dinv) = (
        f(0.37),
        f(0.11),
        f(0.53),
        f(0.07).iter().map(|v| 1.5 + v).collect::<Vec<_>>(),
    );
    for jacobi in [false, true] {
        let groups = engine.reduction_groups(n);
        let bufs = SolverBuffers::new::<f32>(&engine, groups, 1, 2).unwrap();
        let params = engine.uniform_from(
            "params",
            &Params {
                n: n as u32,
                groups,
                jacobi: jacobi as u32,
                ..Default::default()
            },
        );
        let (rb, pb) = (
            engine.storage_from("r", &r).unwrap(),
            engine.storage_from("p", &p).unwrap(),
        );
        let (r32b, db) = (
            engine.storage_from("r32", &r32).unwrap(),
            engine.storage_from("dinv", &dinv).unwrap(),
        );
        let k = solver_kernel::<f32>(
            &engine,
            "reliable_replace",
            engine.shader_config(krylov_wgpu::Precision::F32),
        )
        .unwrap();
        let mut e = bufs.common(&params);
        e.extend([(5, &rb), (6, &pb), (7, &r32b), (8, &db)]);
        let bg = engine.bind_group_at(&k, &e);
        let mut batch = engine.begin("replace");
        batch.dispatch(&k, &bg, groups);
        let parts: Vec<f32> = batch
            .submit_and_read(&bufs.partials, 0, 4 * groups as usize)
            .unwrap();
        let (gr, gp): (Vec<f32>, Vec<f32>) = (
            engine.read(&rb, 0, n).unwrap(),
            engine.read(&pb, 0, n).unwrap(),
        );
        let (mut tr, mut tp) = (r.clone(), p.clone());
        let (rz, rr) =
            cpu::mixed::reliable_replace(&mut tr, &mut tp, &r32, jacobi.then_some(&dinv[..]));
        assert_eq!(gr, tr, "jacobi {jacobi}: r");
        assert_eq!(gp, tp, "jacobi {jacobi}: p");
        let sum = |c: usize| {
            (0..groups as usize)
                .map(|g| f64::from(parts[4 * g + c]))
                .sum::<f64>()
        };
        // f32 sums per workgroup against f64: n·ε₃₂ relative at most.
        assert!(
            (sum(0) - rz).abs() <= 1e-4 * rz.abs(),
            "jacobi {jacobi}: <r,z> {} vs {rz}",
            sum(0)
        );
        assert!(
            (sum(1) - rr).abs() <= 1e-4 * rr,
            "jacobi {jacobi}: <r,r> {} vs {rr}",
            sum(1)
        );
    }
}

#[test]
fn reliable_cg_counts_three_launches_per_fold_and_confirms_in_high_precision() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = krylov_wgpu::matrix::generators::poisson_2d_fd::<f64>(48);
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let o = SolveOptions {
        rtol: 1e-10,
        ..Default::default()
    };
    let sol = mixed::solve(
        &engine,
        &a,
        &b,
        None,
        &o,
        &RefineOptions::default(),
        &mut (),
    )
    .unwrap();
    let r = &sol.report;
    let rr = r.refinement.as_ref().unwrap();
    assert_eq!(rr.strategy, "reliable");
    assert_truly_converged(&sol, &a, &b, o.rtol, "poisson2d:48 reliable");
    // Checks: the true-residual guard's folds (one per loop end); the rest folded in the loop.
    let checks = rr.outer_residuals.len() - 1;
    let folds = rr.outer_iterations - checks;
    assert!(folds >= 3, "{rr:?}");
    // Per recorded iteration update_cg + spmv_dot_cg; per fold refine_update,
    // refine_residual and reliable_replace; nothing is read back but the batches' history.
    assert_eq!(
        r.loop_counts.dispatches,
        2 * r.iterations_recorded as u64 + 3 * folds as u64,
        "{r:?}"
    );
    assert_eq!(r.loop_counts.uploads, 0);
    // The history is b - Ax's units again, starting at |b|.
    assert!((r.history[0] - cpu::norm2_f64(&b)).abs() <= 1e-6 * r.history[0]);
}
