//! CA-GMRES(s, m) on the GPU (issue #17) against its CPU reference: the matrix powers kernel
//! against host SpMVs, every GPU TSQR against a host QR, the solver's iterations, solution and
//! decisions against `cpu::cagmres` (same cycle logic, GPU arithmetic), and the exact host
//! syncs and launches of a cycle.

mod common;

use common::problems::{block_with_cond, load, rhs};

use krylov_wgpu::cpu::cagmres::leja::Shift;
use krylov_wgpu::cpu::cagmres::powers::matrix_powers;
use krylov_wgpu::cpu::cagmres::{Basis, CaOptions, ca_counts_per_cycle};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{convection_diffusion_2d, random_nonsymmetric};
use krylov_wgpu::solvers::{Method, SolveOptions, StopReason, Tsqr, cagmres};
use nalgebra::DMatrix;

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

#[test]
fn matrix_powers_kernel_equals_host_spmvs() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = random_nonsymmetric::<f64>(300, 7, 11);
    let v: Vec<f64> = (0..300).map(|i| (i as f64 * 0.41).sin()).collect();
    let shifts = [
        Shift::real(1.5),
        Shift { re: 0.5, im: 0.8 },
        Shift { re: 0.5, im: -0.8 },
    ];
    for (sh, sigma) in [(&[][..], 1.0), (&[][..], 4.0), (&shifts[..], 3.0)] {
        let host = matrix_powers(&a, &v, 5, sh, sigma).unwrap();
        let gpu = cagmres::matrix_powers_gpu(&engine, &a, &v, 5, sh, sigma).unwrap();
        for (k, col) in gpu.iter().enumerate() {
            let want = host.v.column(k);
            let scale = want.amax().max(1e-300);
            let err = col
                .iter()
                .zip(want.iter())
                .map(|(g, h)| (g - h).abs())
                .fold(0.0f64, f64::max);
            // Each step is one SpMV and two axpys in f64: a few ulps of the column's size
            // per step, compounding over 5 steps.
            assert!(err <= 1e-12 * scale, "sigma {sigma} column {k}: {err:e}");
        }
    }
}

/// The block inner products D = XᵀY, both kernels (`ca_block_dots_staged`, every column read
/// once through workgroup memory, and the tile kernels), against the host's product on fresh
/// random columns: shapes with partial tiles and padding columns, overlapping ranges (BOrth's
/// fused [Q, W]ᵀW), row counts that end mid-chunk, 80 padded columns (4 vec4s of rows each)
/// and 100 (that no stage holds: the tiles take it), on the default grid and on 3 workgroups
/// of 64 (grid-stride loops over many chunks, a tile per thread at 61 × 15; from 1536 rows
/// the pairs kernel). The cycle buffer is NaN before, so an entry never written fails.
#[test]
fn block_inner_products_equal_the_hosts_in_both_kernels() {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(common::fresh_seed());
    let engines: Vec<_> = [None, Some(common::small_grid(None))]
        .into_iter()
        .filter_map(|t| match t {
            None => common::engine(),
            Some(t) => common::engine_with(t),
        })
        .collect();
    // (rows, columns, X, Y)
    let cases = [
        (1003, 3, 0..1, 0..1),
        (1003, 9, 2..9, 0..2),
        (777, 32, 0..21, 11..21),
        (2049, 32, 0..31, 21..31),
        (4099, 32, 0..31, 31..32),
        (1501, 77, 0..61, 46..61),
        (1000, 80, 0..64, 64..80),
        (1000, 97, 0..81, 81..97),
    ];
    for engine in &engines {
        for (n, k, x, y) in cases.clone() {
            let cols = DMatrix::from_iterator(
                n,
                k,
                common::random_vector::<f64>(&mut rng, n * k, -1.0..1.0),
            );
            let want = cols.columns_range(x.clone()).transpose() * cols.columns_range(y.clone());
            for staged in [true, false] {
                for f32 in [false, true] {
                    let got = if f32 {
                        let c = cols.map(|v| v as f32 as f64);
                        cagmres::block_dots_gpu::<f32>(engine, &c, x.clone(), y.clone(), staged)
                    } else {
                        cagmres::block_dots_gpu::<f64>(engine, &cols, x.clone(), y.clone(), staged)
                    }
                    .unwrap();
                    // |Σ x_r y_r| rounding: a few ulps of Σ|x_r y_r| ≤ n (entries in [−1, 1)),
                    // and f32's rounding of the inputs.
                    let tol = if f32 { 1e-5 } else { 1e-13 } * n as f64;
                    let err = (&got - &want).amax();
                    assert!(
                        got.iter().all(|v| v.is_finite()) && err <= tol,
                        "n {n} X {x:?} Y {y:?} staged {staged} f32 {f32}: {err:e} > {tol:e}"
                    );
                }
            }
        }
    }
}

#[test]
fn every_gpu_tsqr_is_a_qr_with_the_papers_orthogonality() {
    let Some(engine) = common::engine() else {
        return;
    };
    let (n, s) = (1500, 5);
    for kappa in [1e2, 1e6] {
        let w = block_with_cond(n, s, kappa);
        let host_r = w.clone().qr().r();
        for t in [
            Tsqr::Mgs,
            Tsqr::Cgs,
            Tsqr::Cgs2,
            Tsqr::CholQr,
            Tsqr::CholQr2,
            Tsqr::Svqr,
            Tsqr::Caqr,
        ] {
            let (q, r, rep) = cagmres::tsqr_block::<f64>(&engine, &w, t).unwrap();
            let back = (&q * &r - &w).norm() / w.norm();
            assert!(back < 1e-12, "{t} kappa {kappa:e}: |QR - W| = {back:e}");
            // R up to the signs of its rows (ours has a non-negative diagonal).
            for k in 0..s {
                let sign = host_r[(k, k)].signum();
                for j in k..s {
                    let d = (r[(k, j)] - sign * host_r[(k, j)]).abs();
                    assert!(
                        d <= 1e-8 * host_r[(0, 0)].abs() * kappa.sqrt(),
                        "{t} R[{k},{j}]"
                    );
                }
            }
            // ‖I − QᵀQ‖: O(ε) for CGS2, CholQR2 (κ² ε < 1), CAQR; O(εκ) MGS; O(εκ²) CholQR,
            // SVQR.
            let e = rep.orth_error;
            let bound = match t {
                Tsqr::Cgs2 | Tsqr::CholQr2 | Tsqr::Caqr => 1e-13,
                Tsqr::Mgs => 1e-13 * kappa,
                _ => 1e-13 * kappa * kappa,
            };
            assert!(
                e.is_finite() && e <= bound,
                "{t} kappa {kappa:e}: {e:e} > {bound:e}"
            );
        }
    }
    // f32: CholQR2 stays orthogonal to f32 rounding on a well-conditioned block.
    let w = block_with_cond(800, 4, 10.0);
    let (_, _, rep) = cagmres::tsqr_block::<f32>(&engine, &w, Tsqr::CholQr2).unwrap();
    assert!(rep.orth_error < 1e-5, "{:e}", rep.orth_error);
}

/// The GPU's CAQR against a host QR on one block: (|QR − W|/|W|, max |R − host R| (rows
/// sign-matched) / |W|, ‖I − QᵀQ‖_F).
fn caqr_errors<T: krylov_wgpu::Scalar>(
    engine: &krylov_wgpu::gpu::Engine,
    w: &DMatrix<f64>,
) -> (f64, f64, f64) {
    let (q, r, rep) = cagmres::tsqr_block::<T>(engine, w, Tsqr::Caqr).unwrap();
    assert_eq!(rep.used, Tsqr::Caqr);
    assert_eq!((rep.reductions, rep.host_syncs), (1, 1));
    let s = w.ncols();
    let host_r = w.clone().qr().r();
    let mut dr = 0.0f64;
    for k in 0..s {
        assert!(r[(k, k)] >= 0.0, "R[{k},{k}] = {}", r[(k, k)]);
        let sign = if host_r[(k, k)] < 0.0 { -1.0 } else { 1.0 };
        for j in 0..s {
            if j < k {
                assert_eq!(r[(k, j)], 0.0, "R is upper triangular");
            }
            dr = dr.max((r[(k, j)] - sign * host_r[(k, j)]).abs());
        }
    }
    let back = (&q * &r - w).norm() / w.norm();
    (back, dr / w.norm(), rep.orth_error)
}

#[test]
fn gpu_caqr_is_orthogonal_to_rounding_at_any_condition_number() {
    let Some(engine) = common::engine() else {
        return;
    };
    // One leaf (n < 2s·…), a few leaves, and the most leaves (CAQR_MAX_LEAVES) with s = 16.
    for (n, s) in [(40, 5), (1500, 5), (5000, 8), (70_000, 16)] {
        for kappa in [1e2, 1e6, 1e10] {
            let w = block_with_cond(n, s, kappa);
            let (back, dr, orth) = caqr_errors::<f64>(&engine, &w);
            let chol2 = cagmres::tsqr_block::<f64>(&engine, &w, Tsqr::CholQr2)
                .unwrap()
                .2;
            println!(
                "n {n:6} s {s:2} kappa {kappa:.0e}: CAQR |I-QtQ| {orth:.2e} |QR-W| {back:.1e} \
                 |R-R_host| {dr:.1e}; CholQR2 |I-QtQ| {:.2e} (used {})",
                chol2.orth_error, chol2.used
            );
            // CholQR2's Cholesky fails at κ² ε > 1 (SVQR takes over); CAQR forms no Gram
            // matrix: O(ε) orthogonality, backward error and R whatever κ.
            assert_eq!(
                chol2.used == Tsqr::Svqr,
                kappa > 1e8,
                "n {n} kappa {kappa:e}"
            );
            let eps = f64::EPSILON * s as f64;
            assert!(orth < 20.0 * eps, "n {n} kappa {kappa:e}: {orth:e}");
            assert!(back < 20.0 * eps, "n {n} kappa {kappa:e}: {back:e}");
            assert!(dr < 1e3 * eps, "n {n} kappa {kappa:e}: {dr:e}");
        }
    }
    // f32: the same to f32 rounding, even at κ = 1e6 (CholQR's Gram matrix is singular there).
    for (n, s) in [(1500, 5), (20_000, 16)] {
        for kappa in [1e2, 1e6] {
            let w = block_with_cond(n, s, kappa);
            let (back, dr, orth) = caqr_errors::<f32>(&engine, &w);
            let chol2 = cagmres::tsqr_block::<f32>(&engine, &w, Tsqr::CholQr2)
                .unwrap()
                .2;
            println!(
                "f32 n {n:6} s {s:2} kappa {kappa:.0e}: CAQR |I-QtQ| {orth:.2e} |QR-W| \
                 {back:.1e} |R-R_host| {dr:.1e}; CholQR2 |I-QtQ| {:.2e} (used {})",
                chol2.orth_error, chol2.used
            );
            let eps = f32::EPSILON as f64 * s as f64;
            // CholQR2 (SVQR here) forms WᵀW: its error grows with κ where CAQR's does not. By
            // how much depends on how the Gram matrix's sums round (1.7e-4 against 2e-7 with
            // the tile kernels' long per-thread sums, 1.1e-5 with `ca_block_dots_staged`'s
            // four-row dot products): at least 20× at κ = 1e6.
            assert!(
                kappa < 1e4 || chol2.orth_error > 20.0 * orth,
                "f32 kappa {kappa:e}: CholQR2 {:e}, CAQR {orth:e}",
                chol2.orth_error
            );
            assert!(orth < 20.0 * eps, "f32 n {n} kappa {kappa:e}: {orth:e}");
            assert!(back < 20.0 * eps, "f32 n {n} kappa {kappa:e}: {back:e}");
            assert!(dr < 1e3 * eps, "f32 n {n} kappa {kappa:e}: {dr:e}");
        }
    }
}

#[test]
fn cholqr_on_a_rank_deficient_block_falls_back_to_svqr_and_says_so() {
    let Some(engine) = common::engine() else {
        return;
    };
    let mut w = block_with_cond(500, 4, 10.0);
    let c0 = w.column(0).into_owned();
    w.set_column(2, &c0);
    let (_, _, rep) = cagmres::tsqr_block::<f64>(&engine, &w, Tsqr::CholQr).unwrap();
    assert_eq!(rep.used, Tsqr::Svqr);
    assert!(rep.fallback_reason.unwrap().contains("Cholesky"));
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
