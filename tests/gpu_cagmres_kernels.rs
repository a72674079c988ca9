//! CA-GMRES's GPU kernels on their own (issue #17) against host oracles: the matrix powers
//! kernel against host SpMVs, the block inner products (both kernels) against the host's XᵀY,
//! every GPU TSQR against a host QR, CAQR's orthogonality at any condition number, CholQR's
//! fallback. The solver against its CPU reference is `tests/gpu_cagmres.rs`.

mod common;

use common::problems::block_with_cond;

use krylov_wgpu::cpu::cagmres::leja::Shift;
use krylov_wgpu::cpu::cagmres::powers::matrix_powers;
use krylov_wgpu::matrix::generators::random_nonsymmetric;
use krylov_wgpu::solvers::{Tsqr, cagmres};
use nalgebra::DMatrix;

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
        for t in Tsqr::ALL {
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
