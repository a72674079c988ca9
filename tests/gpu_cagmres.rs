//! CA-GMRES(s, m) on the GPU (issue #17) against its CPU reference: the solver's iterations,
//! solution and decisions against `cpu::cagmres` (same cycle logic, GPU arithmetic), and the
//! exact host syncs and launches of a cycle. Its kernels on their own (matrix powers, block
//! inner products, TSQRs) are `tests/gpu_cagmres_kernels.rs`.

mod common;

use common::problems::{load, rhs};

use krylov_wgpu::cpu::cagmres::{Basis, CaOptions, ca_counts_per_cycle};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::convection_diffusion_2d;
use krylov_wgpu::solvers::{Method, SolveOptions, StopReason, Tsqr};

fn opts(s: usize, m: usize, basis: Basis, tsqr: Tsqr, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::CaGmres,
        s_step: s,
        restart: m,
        basis,
        tsqr,
        rtol,
        max_iter: 5000,
        ..Default::default()
    }
}

/// GPU and CPU CA-GMRES on one problem: the same decisions (iterations within `slack`), both
/// converged, x to the tolerance's accuracy.
fn agree(name: &str, a: &Csr<f64>, o: &SolveOptions, slack: f64) {
    let engine = common::engine().unwrap();
    let b = rhs(a);
    let cpu = krylov_wgpu::cpu::solve(a, &b, None, o).unwrap();
    let gpu = krylov_wgpu::solvers::solve_gpu(&engine, a, &b, None, o, &mut ()).unwrap();
    let (c, g) = (&cpu.report, &gpu.report);
    println!(
        "{name:10} s={} m={} {} {}: CPU {} it, GPU {} it ({:.1e})",
        o.s_step, o.restart, o.basis, o.tsqr, c.iterations, g.iterations, g.relative_residual
    );
    assert!(c.converged, "{name} CPU: {}", c.reason_detail);
    assert!(g.converged, "{name} GPU: {}", g.reason_detail);
    assert!(g.relative_residual <= o.rtol * 1.001, "{name}");
    let d = g.iterations.abs_diff(c.iterations) as f64;
    assert!(
        d <= slack * c.iterations as f64 + 1.0,
        "{name}: GPU {} vs CPU {} iterations",
        g.iterations,
        c.iterations
    );
    assert_eq!(g.method, Method::CaGmres);
    let ca = g.cagmres.as_ref().unwrap();
    assert_eq!(ca.options.s, o.s_step);
    assert_eq!(ca.shifts.is_empty(), o.basis == Basis::Monomial);
    assert!(ca.cycles.iter().all(|c| c.basis_cond >= 1.0));
    assert!(g.orthogonality_loss.unwrap() < 1e-8, "{name}");
}

#[test]
fn gpu_ca_gmres_takes_the_cpu_references_decisions_on_shipped_matrices() {
    if common::engine().is_none() {
        return;
    }
    for (name, m) in [("sherman4", 32), ("add32", 32)] {
        let a = load(name);
        for tsqr in [Tsqr::CholQr2, Tsqr::Cgs2, Tsqr::Caqr] {
            agree(name, &a, &opts(4, m, Basis::Newton, tsqr, 1e-8), 0.05);
        }
    }
    let a = convection_diffusion_2d::<f64>(24, 10.0);
    for tsqr in [Tsqr::Mgs, Tsqr::Cgs, Tsqr::CholQr, Tsqr::Svqr, Tsqr::Caqr] {
        agree(
            "convdiff",
            &a,
            &opts(5, 30, Basis::Newton, tsqr, 1e-8),
            0.05,
        );
    }
    for tsqr in [Tsqr::CholQr2, Tsqr::Caqr] {
        agree(
            "convdiff",
            &a,
            &opts(2, 30, Basis::Monomial, tsqr, 1e-8),
            0.05,
        );
    }
}

#[test]
fn long_cycles_past_the_staged_coefficients_take_the_cpu_references_decisions() {
    // `ca_block_update` stages its coefficients in workgroup memory (384 vec4s) and reads
    // them from storage when they do not fit: with m = 200 and s = 8 the BOrth updates of a
    // cycle's blocks past column 192 (two vec4 groups per row of C) take the storage path,
    // the first blocks the staged one.
    if common::engine().is_none() {
        return;
    }
    // The 1D Laplacian of 300 unknowns: its 150 modes that b = A·1 excites take cycles of
    // 200 steps (restarted) to resolve.
    let n = 300;
    let mut entries = Vec::new();
    for i in 0..n {
        entries.push((i, i, 2.0));
        if i > 0 {
            entries.push((i, i - 1, -1.0));
            entries.push((i - 1, i, -1.0));
        }
    }
    let a = Csr::from_triplets(n, &entries).unwrap();
    agree(
        "laplace1d",
        &a,
        &opts(8, 200, Basis::Newton, Tsqr::CholQr2, 1e-8),
        0.05,
    );
}

#[test]
fn right_preconditioned_gpu_ca_gmres_takes_the_cpu_references_decisions() {
    if common::engine().is_none() {
        return;
    }
    use krylov_wgpu::solvers::Precond;
    // sherman4: Jacobi fused, ILU(0) and ILUT applied between launches; pde2961 with ILU(0).
    let a = load("sherman4");
    for precond in [Precond::Jacobi, Precond::Ilu0, Precond::Ilut] {
        let o = SolveOptions {
            precond,
            ..opts(5, 30, Basis::Newton, Tsqr::CholQr2, 1e-8)
        };
        agree("sherman4", &a, &o, 0.05);
    }
    let a = load("pde2961");
    let o = SolveOptions {
        precond: Precond::Ilu0,
        ..opts(4, 32, Basis::Newton, Tsqr::Cgs2, 1e-8)
    };
    agree("pde2961", &a, &o, 0.05);
    // Preconditioning pays: fewer iterations than unpreconditioned on sherman4.
    let b = rhs(&load("sherman4"));
    let plain = krylov_wgpu::cpu::solve(
        &load("sherman4"),
        &b,
        None,
        &opts(5, 30, Basis::Newton, Tsqr::CholQr2, 1e-8),
    )
    .unwrap();
    let ilu = krylov_wgpu::cpu::solve(
        &load("sherman4"),
        &b,
        None,
        &SolveOptions {
            precond: Precond::Ilu0,
            ..opts(5, 30, Basis::Newton, Tsqr::CholQr2, 1e-8)
        },
    )
    .unwrap();
    assert!(
        ilu.report.iterations * 3 < plain.report.iterations,
        "{} vs {}",
        ilu.report.iterations,
        plain.report.iterations
    );
}

#[test]
fn a_cholesky_failing_on_the_device_sends_the_cycle_back_to_the_host() {
    // The monomial basis at s = 16 is numerically rank deficient on add32: CholQR2's
    // Cholesky fails. On the GPU the deferred cycle's `ca_cholqr` flags it, the host runs
    // the cycle again block by block with its CholQR → SVQR fallback, as the CPU does.
    let Some(engine) = common::engine() else {
        return;
    };
    let a = load("add32");
    let b = rhs(&a);
    let o = opts(16, 32, Basis::Monomial, Tsqr::CholQr2, 1e-8);
    let gpu = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
    let cpu = krylov_wgpu::cpu::solve(&a, &b, None, &o).unwrap();
    assert!(gpu.report.converged, "{}", gpu.report.reason_detail);
    let fell_back = |r: &krylov_wgpu::solvers::SolveReport| {
        r.cagmres
            .as_ref()
            .unwrap()
            .cycles
            .iter()
            .flat_map(|c| &c.tsqr)
            .filter(|t| t.used == Tsqr::Svqr && t.fallback_reason.is_some())
            .count()
    };
    assert!(fell_back(&gpu.report) > 0 && fell_back(&cpu.report) > 0);
    let d = gpu.report.iterations.abs_diff(cpu.report.iterations) as f64;
    assert!(d <= 0.05 * cpu.report.iterations as f64 + 1.0);
    // The redone cycles count their deferred blocks as work done.
    let ca = gpu.report.cagmres.as_ref().unwrap();
    assert!(ca.cycles.iter().any(|c| c.recorded > c.vectors));
}

#[test]
fn grid_stride_loops_give_the_same_solve() {
    // Few workgroups of 64 threads: every CA kernel walks its rows in a grid-stride loop, and
    // the block inner products run as `ca_block_dots_pairs` (n = 4960 ≥ 8 rows per thread of
    // 3 workgroups of 64), against `ca_block_dots` (one row per step) on the default grid.
    let Some(small) = common::engine_with(common::small_grid(None)) else {
        return;
    };
    let Some(engine) = common::engine() else {
        return;
    };
    let a = load("add32");
    let b = rhs(&a);
    for tsqr in [Tsqr::CholQr2, Tsqr::Cgs2, Tsqr::Caqr] {
        let o = opts(4, 32, Basis::Newton, tsqr, 1e-8);
        let s = krylov_wgpu::solvers::solve_gpu(&small, &a, &b, None, &o, &mut ()).unwrap();
        let d = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        assert!(s.report.converged, "{tsqr}: {}", s.report.reason_detail);
        assert!(
            s.report.iterations.abs_diff(d.report.iterations) <= 1,
            "{tsqr}"
        );
        let err =
            s.x.iter()
                .zip(&d.x)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0f64, f64::max);
        assert!(err < 1e-6, "{tsqr}: {err:e}");
    }
}

/// Launches beyond the adapter's workgroups per grid dimension (65535) go out as 2D grids,
/// whose spare workgroups must not touch a row. CA-GMRES launches more than `max_groups`
/// workgroups in two kernels: the block inner products (tiles × groups, spare workgroups
/// idle) and the block update (⌈n/(4·WG)⌉: beyond the limit at n > 6.7e7 with 256 threads),
/// which instead launches at most one dimension's worth and gives each thread more rows.
/// With the limit forced to 4 (the inner products on 2D grids with spare workgroups, the
/// update on 4 workgroups instead of 9) the solve is that of the real limit bit for bit:
/// the same rows meet the same arithmetic. On an H200 at n = 1e8 the update's 2D grid had
/// spare workgroups apply it twice (a breakdown at the Arnoldi cycle's third column).
#[test]
fn launches_over_the_grid_dimension_limit_give_the_same_solve() {
    // Workgroups of 32 and at most 2 per reduction: the launches that stay within 4.
    let wg32 = krylov_wgpu::gpu::Tuning {
        workgroup_size: 32,
        max_groups: 2,
        ..Default::default()
    };
    let Some(plain) = common::engine_with(wg32) else {
        return;
    };
    let Some(capped) = common::engine_with(krylov_wgpu::gpu::Tuning {
        max_groups_per_dimension: Some(4),
        ..wg32
    }) else {
        return;
    };
    assert_eq!(capped.groups_per_dimension(), 4);
    let a = load("sherman4");
    let b = rhs(&a);
    for tsqr in [Tsqr::CholQr2, Tsqr::Cgs2] {
        let mut o = opts(5, 30, Basis::Newton, tsqr, 1e-9);
        o.precond = krylov_wgpu::solvers::Precond::Jacobi;
        let p = krylov_wgpu::solvers::solve_gpu(&plain, &a, &b, None, &o, &mut ()).unwrap();
        let c = krylov_wgpu::solvers::solve_gpu(&capped, &a, &b, None, &o, &mut ()).unwrap();
        assert!(p.report.converged, "{tsqr}: {}", p.report.reason_detail);
        assert_eq!(p.report.iterations, c.report.iterations, "{tsqr}");
        assert!(
            p.x.iter()
                .zip(&c.x)
                .all(|(u, v)| u.to_bits() == v.to_bits()),
            "{tsqr}"
        );
    }
}

#[test]
fn f32_gpu_ca_gmres_converges_to_f32_accuracy() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = convection_diffusion_2d::<f32>(24, 5.0);
    let b: Vec<f32> = (0..a.nrows())
        .map(|i| 1.0 + (i as f32 * 0.1).sin())
        .collect();
    for tsqr in [Tsqr::CholQr2, Tsqr::Caqr] {
        let o = opts(5, 30, Basis::Newton, tsqr, 1e-5);
        let sol = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        assert!(sol.report.converged, "{tsqr}: {}", sol.report.reason_detail);
        assert!(sol.report.relative_residual <= 1e-5, "{tsqr}");
        assert!(sol.x.iter().all(|v| v.is_finite()), "{tsqr}");
    }
}

#[test]
fn a_full_cycle_costs_exactly_its_syncs_and_launches() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = convection_diffusion_2d::<f64>(20, 5.0);
    let b = rhs(&a);
    let (s, m) = (4, 12);
    for tsqr in [Tsqr::CholQr2, Tsqr::CholQr, Tsqr::Cgs2, Tsqr::Caqr] {
        // Monomial: every cycle is a CA cycle; rtol 0 and max_iter = 2m: two full cycles.
        let o = SolveOptions {
            rtol: 0.0,
            atol: 1e-300,
            max_iter: 2 * m,
            ..opts(s, m, Basis::Monomial, tsqr, 0.0)
        };
        let sol = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        let r = &sol.report;
        assert_eq!(
            r.reason,
            StopReason::MaxIterations,
            "{tsqr}: {}",
            r.reason_detail
        );
        assert_eq!(r.iterations, 2 * m);
        let ca = r.cagmres.as_ref().unwrap();
        let (red, syncs) = ca_counts_per_cycle(s, m, tsqr);
        assert_eq!(ca.reductions_per_cycle, Some(red as f64), "{tsqr}");
        // Host syncs and global reductions measured: the cycles' own plus the restart
        // residual after the last one. A Gram–Schmidt TSQR finishes everything on the
        // device, CholQR and CholQR2 factor their Gram matrices there (`ca_cholqr`): the GPU
        // records the restart with the whole cycle after it and reads them once. CAQR's
        // stack QR is the host's: one sync per block, as the algorithm counts.
        let gpu_syncs = if tsqr == Tsqr::Caqr { syncs } else { 1 };
        assert_eq!(ca.syncs_per_cycle, Some(gpu_syncs as f64), "{tsqr}");
        assert_eq!(
            r.loop_counts.readbacks as usize,
            2 * gpu_syncs + 1,
            "{tsqr}"
        );
        assert_eq!(r.loop_counts.reductions as usize, 2 * red + 1, "{tsqr}");
        assert_eq!(r.cycles, Some(2));
        // Launches: per cycle the restart (ca_powers, dots, finish), q0 (1), x += Qy (1);
        // per block s powers, 2 BOrth passes of 3, and the TSQR's.
        let tsqr_launches = match tsqr {
            // BOrth's second pass is CholQR's first Gram matrix ([Q, W]ᵀW: its dots and
            // finish) and Q = W·R⁻¹ its update (W·T − Q·C₂T): only the Cholesky and R⁻¹
            // (`ca_cholqr`) are the first pass's own. CholQR2's second pass: the Gram matrix
            // (dots, finish), its Cholesky and R⁻¹, Q = W·R⁻¹.
            Tsqr::CholQr2 => 5,
            Tsqr::CholQr => 1,
            // The leaves, then Q = diag(Q_i)·Q̂ after the host's QR of the stack.
            Tsqr::Caqr => 2,
            // CGS2 on s columns: 2 passes of 3 launches for columns 1.., 3 for each norm.
            _ => 6 * (s - 1) + 3 * s,
        };
        let per_cycle = 5 + (m / s) * (s + 6 + tsqr_launches);
        assert_eq!(
            r.loop_counts.dispatches as usize,
            2 * per_cycle + 3,
            "{tsqr}: {} launches",
            r.loop_counts.dispatches
        );
        let cpu = krylov_wgpu::cpu::solve(&a, &b, None, &o).unwrap();
        let cc = cpu.report.cagmres.as_ref().unwrap();
        assert_eq!(cc.reductions_per_cycle, ca.reductions_per_cycle);
    }
    let _ = CaOptions::default();
}

/// The Newton basis's first cycle is standard Arnoldi (blocks of one vector): each step is
/// 7 launches and 2 global reductions on the GPU — the SpMV, BOrth's first pass (dots,
/// finish, update) and its second pass fused with the normalisation (dots of [Q, w]ᵀw,
/// finish, update by ν = √(wᵀw − ‖Qᵀw‖²)) — and takes the CPU reference's decisions.
#[test]
fn an_arnoldi_step_costs_seven_launches_and_two_reductions() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = convection_diffusion_2d::<f64>(20, 5.0);
    let b = rhs(&a);
    let m = 12;
    let o = SolveOptions {
        rtol: 0.0,
        atol: 1e-300,
        max_iter: m,
        ..opts(4, m, Basis::Newton, Tsqr::CholQr2, 0.0)
    };
    let sol = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
    let r = &sol.report;
    assert_eq!(r.reason, StopReason::MaxIterations, "{}", r.reason_detail);
    let ca = r.cagmres.as_ref().unwrap();
    assert_eq!(ca.cycles.len(), 1);
    assert_eq!(ca.cycles[0].kind, "arnoldi");
    // The restart (ca_powers, dots, finish) and q₀ (1), m steps, x += Q y (1), and the
    // restart after the cycle (3).
    assert_eq!(r.loop_counts.dispatches as usize, 4 + 7 * m + 1 + 3);
    assert_eq!(r.loop_counts.reductions as usize, 1 + 2 * m + 1);
    assert_eq!(ca.cycles[0].reductions, 1 + 2 * m);
    let cpu = krylov_wgpu::cpu::solve(&a, &b, None, &o).unwrap();
    let (g, c) = (&r.history, &cpu.report.history);
    assert_eq!(g.len(), c.len());
    for (k, (x, y)) in g.iter().zip(c).enumerate() {
        assert!(
            (x - y).abs() <= 1e-8 * c[0],
            "step {k}: GPU {x:e}, CPU {y:e}"
        );
    }
}

/// A solve that converges over several cycles reads back once per cycle (the restart
/// residual comes back with the next cycle's blocks) plus once for the last restart, which
/// follows a cycle whose estimate met the threshold and is read alone. The last cycle,
/// predicted from the one before to converge early, records only its first blocks (here 2
/// of 6, 5 of whose 10 vectors it uses). Both bases, and the CPU reference takes the same
/// decisions from the same numbers.
#[test]
fn a_converging_solve_reads_back_once_per_cycle_and_once_at_the_end() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = convection_diffusion_2d::<f64>(28, 5.0);
    let b = rhs(&a);
    let m = 30;
    for basis in [Basis::Monomial, Basis::Newton] {
        let o = opts(5, m, basis, Tsqr::CholQr2, 1e-8);
        let sol = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        let r = &sol.report;
        assert_eq!(
            r.reason,
            StopReason::Converged,
            "{basis}: {}",
            r.reason_detail
        );
        let cycles = r.cycles.unwrap();
        assert!(cycles >= 3, "{basis}: {cycles} cycles");
        let ca = r.cagmres.as_ref().unwrap();
        // Every cycle's estimate but the last stayed above the threshold: no gap restart,
        // and no cycle outran the blocks it recorded ahead.
        assert!(
            ca.cycles.iter().all(|c| c.syncs == 1),
            "{basis}: {:?}",
            ca.cycles
        );
        assert_eq!(r.loop_counts.readbacks as usize, cycles + 1, "{basis}");
        let last = ca.cycles.last().unwrap();
        assert!(
            last.vectors <= last.recorded && last.recorded < m,
            "{basis}: the last cycle used {} vectors and recorded {}",
            last.vectors,
            last.recorded
        );
        let cpu = krylov_wgpu::cpu::solve(&a, &b, None, &o).unwrap();
        assert_eq!(cpu.report.iterations, r.iterations, "{basis}");
        assert_eq!(cpu.report.cycles, r.cycles, "{basis}");
    }
}

/// A solve that stops on a restart residual fused with the next cycle's blocks (here
/// stagnation: west0479, like the CPU reference at the same step) discards those blocks,
/// counts them as recorded work, and measures the orthogonality of the one cycle's basis
/// the GPU holds, not a mix of two cycles.
#[test]
fn a_stop_at_a_fused_restart_discards_the_next_cycle_and_says_what_it_cost() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = load("west0479");
    let b = rhs(&a);
    let o = opts(4, 32, Basis::Newton, Tsqr::CholQr2, 1e-8);
    let gpu = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
    let cpu = krylov_wgpu::cpu::solve(&a, &b, None, &o).unwrap();
    let (g, c) = (&gpu.report, &cpu.report);
    assert_eq!(c.reason, StopReason::Stagnation, "{}", c.reason_detail);
    assert_eq!(g.reason, StopReason::Stagnation, "{}", g.reason_detail);
    assert_eq!(g.iterations, c.iterations);
    let ca = g.cagmres.as_ref().unwrap();
    let last = ca.cycles.last().unwrap();
    // The last cycle was full and its restart residual came back with the next cycle's
    // blocks, recorded and not used.
    assert_eq!(last.vectors, 32);
    assert!(last.recorded > last.vectors, "{:?}", last);
    assert!(g.iterations_recorded > g.iterations);
    let loss = g.orthogonality_loss.expect("measured");
    assert!(loss < 1e-6, "orthogonality loss {loss:e}");
}

#[test]
fn bad_requests_are_clear_errors() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = convection_diffusion_2d::<f64>(10, 1.0);
    let b = rhs(&a);
    for (o, want) in [
        (
            opts(4, 30, Basis::Newton, Tsqr::CholQr2, 1e-8),
            "multiple of s",
        ),
        (opts(20, 40, Basis::Newton, Tsqr::CholQr2, 1e-8), "limit"),
        (
            SolveOptions {
                precond: krylov_wgpu::solvers::Precond::Jacobi,
                side: krylov_wgpu::solvers::Side::Left,
                ..opts(5, 30, Basis::Newton, Tsqr::CholQr2, 1e-8)
            },
            "right",
        ),
    ] {
        let e = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &o, &mut ())
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
    }
    // NaN in b never passes.
    let mut bad = b.clone();
    bad[3] = f64::NAN;
    let o = opts(5, 30, Basis::Newton, Tsqr::CholQr2, 1e-8);
    assert!(krylov_wgpu::solvers::solve_gpu(&engine, &a, &bad, None, &o, &mut ()).is_err());
}
