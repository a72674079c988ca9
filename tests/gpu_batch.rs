//! Batched CG on the GPU (issue #16, item 4): many independent systems — different sizes and
//! sparsity patterns, one or several right-hand sides — in one sequence of launches, against
//! the CPU twin `cpu::batch_cg`, against the same systems solved one by one, split into parts
//! as when a batch exceeds one binding, and with exact launch and transfer counts.

mod common;

use common::problems::{load, rhs};

use krylov_wgpu::cpu::batch_cg;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::batch::BatchSystem;
use krylov_wgpu::matrix::generators::{poisson_2d_fd, random_spd};
use krylov_wgpu::solvers::batch::{BatchConfig, solve_batch, solve_batch_with};
use krylov_wgpu::solvers::{Method, Precond, SolveOptions, StopReason};
use krylov_wgpu::{KrylovError, Scalar};

fn opts(precond: Precond, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::Cg,
        precond,
        rtol,
        max_iter: 3000,
        ..Default::default()
    }
}

/// SPD matrices of several sizes and patterns: real ones and generated ones.
fn spd_matrices() -> Vec<(String, Csr<f64>)> {
    vec![
        ("bcsstk01".into(), load("bcsstk01")),
        ("mesh1e1".into(), load("mesh1e1")),
        ("494_bus".into(), load("494_bus")),
        ("nos6".into(), load("nos6")),
        ("poisson2d:23".into(), poisson_2d_fd(23)),
        ("random-spd:700".into(), random_spd(700, 7, 5)),
        ("random-spd:40".into(), random_spd(40, 5, 9)),
        // 4900 rows: a workgroup of (up to) 1024 threads, not 256.
        ("poisson2d:70".into(), poisson_2d_fd(70)),
    ]
}

/// The same value bit for bit (NaN never equals).
fn same_bits<T: Scalar>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let n: f64 = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    d / n
}

#[test]
fn batch_of_different_systems_matches_the_cpu_twin() {
    let Some(engine) = common::engine() else {
        return;
    };
    let mats = spd_matrices();
    let bs: Vec<Vec<f64>> = mats.iter().map(|(_, a)| rhs(a)).collect();
    let systems: Vec<BatchSystem<f64>> = mats
        .iter()
        .zip(&bs)
        .map(|((_, a), b)| BatchSystem::single(a, b))
        .collect();
    for precond in [Precond::Jacobi, Precond::None] {
        let o = opts(precond, 1e-10);
        let gpu = solve_batch(&engine, &systems, &o).unwrap();
        let cpu = batch_cg::solve_batch(&systems, &o).unwrap();
        assert_eq!(gpu.report.columns.len(), mats.len());
        for (k, (name, _)) in mats.iter().enumerate() {
            let (g, c) = (&gpu.report.columns[k], &cpu.report.columns[k]);
            assert!(g.converged && c.converged, "{name} {precond}: {g:?}");
            assert!(
                g.relative_residual <= 1e-10 * 1.001,
                "{name}: {}",
                g.relative_residual
            );
            // f64, different summation order only: the same iterations up to a few on the
            // ill-conditioned ones (bcsstk01 without Jacobi, κ ≈ 1e6, runs 3n; nos6 ~1600).
            let slack = (c.iterations / 25).max(2);
            assert!(
                g.iterations.abs_diff(c.iterations) <= slack,
                "{name} {precond}: GPU {} vs CPU {} iterations",
                g.iterations,
                c.iterations
            );
            assert_eq!(g.history.len(), g.iterations + 1, "{name}");
            assert!(rel_diff(&gpu.x[k][0], &cpu.x[k][0]) < 1e-6, "{name}");
        }
        assert!(gpu.report.all_converged);
        assert_eq!(gpu.report.kernels, vec!["batch_cg".to_string()]);
        assert_eq!(
            gpu.report.parts, 2,
            "256 threads, and more for poisson2d:70"
        );
    }
}

#[test]
fn the_cpu_twin_runs_the_iterations_of_the_reference_cg() {
    for (name, a) in spd_matrices() {
        let b = rhs(&a);
        let o = opts(Precond::Jacobi, 1e-8);
        let twin = batch_cg::solve_batch(&[BatchSystem::single(&a, &b)], &o).unwrap();
        let reference = krylov_wgpu::cpu::solve(
            &a,
            &b,
            None,
            &SolveOptions {
                variant: krylov_wgpu::solvers::Variant::Classical,
                ..o.clone()
            },
        )
        .unwrap();
        let t = &twin.report.columns[0];
        assert!(t.converged && reference.report.converged, "{name}");
        assert!(
            t.iterations.abs_diff(reference.report.iterations) <= 1,
            "{name}: twin {} vs cpu::solve {}",
            t.iterations,
            reference.report.iterations
        );
    }
}

/// Each system of a batch gets exactly what it gets alone: the same iterations and the same
/// x bit for bit — including a system that stops on the iteration limit and one that is not
/// SPD, which must not disturb the others.
#[test]
fn batched_solves_equal_one_by_one_solves() {
    let Some(engine) = common::engine() else {
        return;
    };
    let mut mats = spd_matrices();
    // −A: ⟨p, Ap⟩ < 0 at the first step.
    let neg = poisson_2d_fd::<f64>(9).scale_rows(|_| -1.0);
    mats.push(("negated poisson".into(), neg));
    let bs: Vec<Vec<f32>> = mats
        .iter()
        .map(|(_, a)| rhs(&a.cast::<f32>().unwrap()))
        .collect();
    let a32: Vec<Csr<f32>> = mats.iter().map(|(_, a)| a.cast().unwrap()).collect();
    let systems: Vec<BatchSystem<f32>> = a32
        .iter()
        .zip(&bs)
        .map(|(a, b)| BatchSystem::single(a, b))
        .collect();
    // 494_bus and nos6 without a preconditioner need more than 150 iterations: they stop on
    // the limit.
    let o = SolveOptions {
        max_iter: 150,
        ..opts(Precond::None, 1e-5)
    };
    let all = solve_batch(&engine, &systems, &o).unwrap();
    let reasons: Vec<&StopReason> = all.report.columns.iter().map(|c| &c.reason).collect();
    assert_eq!(reasons[3], &StopReason::MaxIterations, "nos6");
    assert_eq!(reasons[8], &StopReason::NotSpd, "negated poisson");
    assert_eq!(all.report.converged, 6, "{reasons:?}");
    let iterations: Vec<usize> = all.report.columns.iter().map(|c| c.iterations).collect();
    assert!(
        iterations
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len()
            >= 5
    );
    for (k, s) in systems.iter().enumerate() {
        let one = solve_batch(&engine, std::slice::from_ref(s), &o).unwrap();
        let (c1, ck) = (&one.report.columns[0], &all.report.columns[k]);
        assert_eq!(c1.iterations, ck.iterations, "{}", mats[k].0);
        assert_eq!(c1.reason, ck.reason, "{}", mats[k].0);
        assert!(same_bits(&one.x[0][0], &all.x[k][0]), "{}", mats[k].0);
        assert_eq!(c1.history, ck.history, "{}", mats[k].0);
    }
}

/// Several right-hand sides of one matrix run as blocks of four (A read once per SpMV for
/// all four, the fifth and sixth in a half-idle block) and give what each gets alone.
#[test]
fn block_right_hand_sides_equal_single_solves() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = load("494_bus");
    let n = a.nrows();
    let bs: Vec<Vec<f64>> = (0..6)
        .map(|k| {
            (0..n)
                .map(|i| ((i * (k + 3)) as f64 * 0.13).cos() + k as f64)
                .collect()
        })
        .collect();
    let block = BatchSystem::new(&a, bs.iter().map(|b| &b[..]).collect());
    let o = opts(Precond::Jacobi, 1e-9);
    let sol = solve_batch(&engine, std::slice::from_ref(&block), &o).unwrap();
    assert_eq!(sol.report.kernels, vec!["batch_cg_block".to_string()]);
    assert_eq!(sol.report.items, 2);
    assert_eq!(sol.report.columns_total, 6);
    for (k, b) in bs.iter().enumerate() {
        let one = solve_batch(&engine, &[BatchSystem::single(&a, b)], &o).unwrap();
        let (c1, ck) = (&one.report.columns[0], &sol.report.columns[k]);
        assert!(
            ck.converged && ck.relative_residual <= 1e-9 * 1.001,
            "rhs {k}: {ck:?}"
        );
        assert_eq!((ck.system, ck.rhs), (0, k));
        assert!(c1.iterations.abs_diff(ck.iterations) <= 1, "rhs {k}");
        assert!(rel_diff(&one.x[0][0], &sol.x[0][k]) < 1e-7, "rhs {k}");
    }
}

/// A batch split into parts (a tiny binding limit forced) gives the results of one part.
#[test]
fn split_parts_give_the_results_of_one_binding() {
    let Some(engine) = common::engine() else {
        return;
    };
    // The systems of 256-thread workgroups (poisson2d:70 alone exceeds the forced limit).
    let mut mats = spd_matrices();
    mats.truncate(7);
    let bs: Vec<Vec<f64>> = mats.iter().map(|(_, a)| rhs(a)).collect();
    let mut systems: Vec<BatchSystem<f64>> = mats
        .iter()
        .zip(&bs)
        .map(|((_, a), b)| BatchSystem::single(a, b))
        .collect();
    let extra: Vec<Vec<f64>> = (0..3).map(|k| vec![1.0 + k as f64; 494]).collect();
    systems.push(BatchSystem::new(
        &mats[2].1,
        extra.iter().map(|b| &b[..]).collect(),
    ));
    let o = opts(Precond::Jacobi, 1e-9);
    let whole = solve_batch(&engine, &systems, &o).unwrap();
    let split = solve_batch_with(
        &engine,
        &systems,
        &o,
        &BatchConfig {
            part_limit_bytes: Some(96 << 10),
            history: Some(false),
        },
    )
    .unwrap();
    assert_eq!(whole.report.parts, 2, "one part per kernel");
    assert!(split.report.parts >= 3, "{} parts", split.report.parts);
    for (s, (xw, xs)) in whole.x.iter().zip(&split.x).enumerate() {
        for (j, (a, b)) in xw.iter().zip(xs).enumerate() {
            assert!(same_bits(a, b), "system {s} rhs {j}");
        }
    }
    let its = |r: &krylov_wgpu::base::BatchReport| {
        r.columns.iter().map(|c| c.iterations).collect::<Vec<_>>()
    };
    assert_eq!(its(&whole.report), its(&split.report));
    // A system larger than the limit alone is refused by name.
    let err = solve_batch_with(
        &engine,
        &systems,
        &o,
        &BatchConfig {
            part_limit_bytes: Some(4 << 10),
            history: Some(false),
        },
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("system 2 of the batch (n = 494) alone exceeds"),
        "{err}"
    );
}

/// One launch per `opts.batch` iterations, submits of 1, 2, 4, … launches each ending in one
/// 4-byte read, then the statuses, x and the histories: counted exactly.
#[test]
fn launches_and_transfers_are_exact() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f32>(16);
    let b = rhs(&a);
    let cpu =
        batch_cg::solve_batch(&[BatchSystem::single(&a, &b)], &opts(Precond::None, 1e-5)).unwrap();
    let k = cpu.report.columns[0].iterations;
    for per_launch in [1usize, 4, 7] {
        let o = SolveOptions {
            batch: per_launch,
            ..opts(Precond::None, 1e-5)
        };
        let sol = solve_batch(&engine, &[BatchSystem::single(&a, &b)], &o).unwrap();
        let r = &sol.report;
        let its = r.columns[0].iterations;
        assert!(its.abs_diff(k) <= 1, "{its} vs {k}");
        let needed = its.div_ceil(per_launch).max(1) as u64;
        // Submits of 1, 2, 4, …: the first s with 2^s − 1 ≥ needed.
        let mut submits = 0u64;
        let mut launches = 0u64;
        while launches < needed {
            launches += 1u64 << submits.min(5);
            submits += 1;
        }
        assert_eq!(r.launches, launches, "per launch {per_launch}");
        assert_eq!(r.counts.dispatches, launches);
        assert_eq!(r.counts.reductions, 0, "no global reduction");
        // One count read per submit, then flags, x and the history.
        assert_eq!(r.counts.readbacks, submits + 3);
        assert_eq!(r.counts.submits, submits + 3);
        assert_eq!(r.iterations_per_launch, per_launch);
    }
}

/// f32 with a tolerance near its round-off: a column the recurrence calls converged is
/// confirmed by its true residual or restarted from x; none is reported converged that the
/// true residual contradicts.
#[test]
fn the_true_residual_guards_every_column() {
    let Some(engine) = common::engine() else {
        return;
    };
    let mats: Vec<Csr<f32>> = spd_matrices()
        .iter()
        .map(|(_, a)| a.cast().unwrap())
        .collect();
    let bs: Vec<Vec<f32>> = mats.iter().map(rhs).collect();
    let systems: Vec<BatchSystem<f32>> = mats
        .iter()
        .zip(&bs)
        .map(|(a, b)| BatchSystem::single(a, b))
        .collect();
    let o = opts(Precond::Jacobi, 3e-7);
    let sol = solve_batch(&engine, &systems, &o).unwrap();
    for c in &sol.report.columns {
        assert!(c.relative_residual.is_finite());
        if c.converged {
            assert!(c.relative_residual <= 3e-7 * 1.001, "{c:?}");
        } else {
            // SPD matrices: never `not_spd`; a gap or a breakdown only after the restarts.
            assert!(
                matches!(
                    c.reason,
                    StopReason::ResidualGap | StopReason::Breakdown { .. }
                ),
                "{c:?}"
            );
            assert!(c.restarts >= krylov_wgpu::cpu::MAX_GAP_RESTARTS, "{c:?}");
        }
    }
    assert!(
        sol.report.restarts > 0,
        "f32 at 3e-7 needs residual replacements"
    );
    assert_eq!(
        sol.report.restarts,
        sol.report.columns.iter().map(|c| c.restarts).sum::<usize>()
    );
}

#[test]
fn bad_batches_are_refused_with_a_reason() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f64>(5);
    let b = vec![1.0; 25];
    let short = vec![1.0; 24];
    let nan = vec![f64::NAN; 25];
    let ok = BatchSystem::single(&a, &b);
    let check = |systems: &[BatchSystem<f64>], o: &SolveOptions, text: &str| {
        let e = solve_batch(&engine, systems, o).unwrap_err();
        assert!(e.to_string().contains(text), "{e}");
        let c = batch_cg::solve_batch(systems, o).unwrap_err();
        assert_eq!(c.to_string(), e.to_string());
    };
    check(&[], &opts(Precond::None, 1e-6), "no system");
    check(
        &[ok.clone(), BatchSystem::single(&a, &short)],
        &opts(Precond::None, 1e-6),
        "system 1 (right-hand side 0)",
    );
    check(
        &[BatchSystem::single(&a, &nan)],
        &opts(Precond::None, 1e-6),
        "system 0",
    );
    check(
        &[BatchSystem::new(&a, vec![])],
        &opts(Precond::None, 1e-6),
        "no right-hand side",
    );
    let gm = SolveOptions {
        method: Method::Gmres,
        ..opts(Precond::None, 1e-6)
    };
    assert!(matches!(
        solve_batch(&engine, std::slice::from_ref(&ok), &gm),
        Err(KrylovError::Unsupported(_))
    ));
    check(
        std::slice::from_ref(&ok),
        &opts(Precond::Ilu0, 1e-6),
        "jacobi or none",
    );
}
