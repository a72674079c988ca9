//! Shared helpers for integration tests.
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};

use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext, Tuning, gpu_required};

pub mod cli;
pub mod problems;
pub mod solve;

/// A fresh engine (fresh counters) on the shared test device, or `None` when no adapter
/// exists and `KRYLOV_REQUIRE_GPU` is not set. With `KRYLOV_REQUIRE_GPU=1` (CI) a missing
/// adapter fails the test.
pub fn engine() -> Option<Engine> {
    context().map(Engine::new)
}

/// Like [`engine`] with explicit tuning (e.g. to force the subgroup or the workgroup-memory
/// reduction).
pub fn engine_with(tuning: Tuning) -> Option<Engine> {
    context().map(|c| Engine::with_tuning(c, tuning))
}

/// Few workgroups of 64 threads: grid-stride loops in every kernel; and at most 4 workgroups
/// per grid dimension, so every launch of more (one workgroup per 64 rows, the tiles of the
/// block inner products) goes out as a 2D grid with spare workgroups, as on a GPU beyond
/// 65535 workgroups (n > 1.7e7 with 256 threads).
pub fn small_grid(subgroups: Option<bool>) -> Tuning {
    Tuning {
        workgroup_size: 64,
        max_groups: 3,
        subgroups,
        max_groups_per_dimension: Some(4),
        ..Tuning::default()
    }
}

/// Workgroups of 512 threads.
pub fn large_workgroups(subgroups: Option<bool>) -> Tuning {
    Tuning {
        workgroup_size: 512,
        subgroups,
        ..Tuning::default()
    }
}

/// The default launch shape, reducing with subgroups or not.
pub fn with_subgroups(on: bool) -> Tuning {
    Tuning {
        subgroups: Some(on),
        ..Tuning::default()
    }
}

/// The shared test device.
pub fn context() -> Option<Arc<GpuContext>> {
    static CTX: OnceLock<Result<Arc<GpuContext>, String>> = OnceLock::new();
    match CTX.get_or_init(|| GpuContext::new(&DeviceRequest::from_env()).map_err(|e| e.to_string()))
    {
        Ok(ctx) => Some(ctx.clone()),
        Err(e) => {
            assert!(
                !gpu_required(),
                "KRYLOV_REQUIRE_GPU=1 but no GPU device: {e}"
            );
            eprintln!("no GPU adapter ({e}); this GPU test does nothing here");
            None
        }
    }
}

/// Path of a file in tests/data.
pub fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Per-entry check of a computed product against the f64 oracle with the rigorous
/// floating-point bound |ŷ_i − y_i| ≤ γ_k Σ_j |a_ij x_j|, γ_k = k·u/(1 − k·u), k = row length
/// (+1 for the final rounding), u the unit round-off of the computing precision. NaN fails.
pub fn assert_within_dot_bound(
    got: &[f64],
    exact: &[f64],
    abs_terms: &[f64],
    row_len: &[usize],
    eps: f64,
    what: &str,
) {
    assert_eq!(got.len(), exact.len(), "{what}: length");
    let u = eps / 2.0;
    for i in 0..got.len() {
        let k = (row_len[i] + 1) as f64;
        let gamma = k * u / (1.0 - k * u);
        let bound = gamma * abs_terms[i] + f64::MIN_POSITIVE;
        let err = (got[i] - exact[i]).abs();
        assert!(
            err <= bound,
            "{what}: entry {i}: got {} expected {} (error {err:e} > bound {bound:e})",
            got[i],
            exact[i]
        );
    }
}

/// Σ_j |a_ij x_j| and the row lengths of A: the scale of the rounding-error bound of A·x.
pub fn abs_terms<T: krylov_wgpu::Scalar>(
    a: &krylov_wgpu::matrix::Csr<T>,
    x: &[T],
) -> (Vec<f64>, Vec<usize>) {
    (0..a.nrows())
        .map(|i| {
            let (c, v) = a.row(i);
            let s: f64 = c
                .iter()
                .zip(v)
                .map(|(&c, v)| (v.as_f64() * x[c as usize].as_f64()).abs())
                .sum();
            (s, c.len())
        })
        .unzip()
}

/// y = A·x computed in T against the f64 oracle, entry by entry within the rigorous bound of
/// [`assert_within_dot_bound`].
pub fn assert_product_within_bound<T: krylov_wgpu::Scalar>(
    a: &krylov_wgpu::matrix::Csr<T>,
    x: &[T],
    y: &[T],
    what: &str,
) {
    let exact = krylov_wgpu::cpu::spmv_f64(a, x);
    let (terms, lens) = abs_terms(a, x);
    let got: Vec<f64> = y.iter().map(|v| v.as_f64()).collect();
    assert_within_dot_bound(&got, &exact, &terms, &lens, T::PRECISION.epsilon(), what);
}

/// A·x (n rows) by the `spmv` kernel on an uploaded matrix, into an output poisoned with NaN
/// (a row the kernel skips keeps the poison).
pub fn poisoned_product<T: krylov_wgpu::Scalar>(
    engine: &Engine,
    ga: &krylov_wgpu::gpu::GpuMatrix<T>,
    x: &[T],
    n: usize,
) -> Vec<T> {
    let kernel = krylov_wgpu::gpu::Spmv::new(engine, ga).unwrap();
    let xb = engine.storage_from("x", x).unwrap();
    let yb = engine.storage_from("y", &vec![T::nan(); n]).unwrap();
    kernel.apply_buffers(engine, ga, &xb, &yb).unwrap()
}

/// n entries uniform in `range`, rounded to T.
pub fn random_vector<T: krylov_wgpu::Scalar>(
    rng: &mut rand_chacha::ChaCha8Rng,
    n: usize,
    range: std::ops::Range<f64>,
) -> Vec<T> {
    use rand::Rng;
    (0..n)
        .map(|_| T::from_f64(rng.random_range(range.clone())))
        .collect()
}

/// Random ragged matrices of the given shapes (see [`random_ragged`]) with a random x in
/// [−2, 2) each, from a fresh seed: ("random NxM", A, x).
pub fn random_products<T: krylov_wgpu::Scalar>(
    shapes: &[(usize, usize)],
    long_row: usize,
) -> Vec<(String, krylov_wgpu::matrix::Csr<T>, Vec<T>)> {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(fresh_seed());
    shapes
        .iter()
        .map(|&(n, m)| {
            let a = random_ragged(&mut rng, n, m, long_row);
            let x = random_vector(&mut rng, m, -2.0..2.0);
            (format!("random {n}x{m}"), a, x)
        })
        .collect()
}

/// A seed from the clock, printed so that a failure can be replayed.
pub fn fresh_seed() -> u64 {
    let s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("random seed: {s}");
    s
}

/// A random n×m matrix with ragged rows: every 11th row empty, row 5 holding up to
/// `long_row` entries (far more than the 1–9 of the others).
pub fn random_ragged<T: krylov_wgpu::Scalar>(
    rng: &mut rand_chacha::ChaCha8Rng,
    n: usize,
    m: usize,
    long_row: usize,
) -> krylov_wgpu::matrix::Csr<T> {
    use rand::Rng;
    let mut coo = krylov_wgpu::matrix::Coo::new(n, m);
    for i in 0..n {
        let len = match i % 11 {
            0 => 0,
            5 if i == 5 => m.min(long_row),
            _ => rng.random_range(1..=9usize),
        };
        for _ in 0..len {
            let j = rng.random_range(0..m);
            coo.push(i, j, T::from_f64(rng.random_range(-1.0..1.0)))
                .unwrap();
        }
    }
    coo.to_csr().unwrap()
}

/// A random SPD matrix: a random symmetric pattern with |entries| < 1 and a diagonal that
/// dominates each row by a random margin (so κ is moderate and CG takes tens of iterations).
#[allow(dead_code)]
pub fn random_spd(rng: &mut rand_chacha::ChaCha8Rng, n: usize) -> krylov_wgpu::matrix::Csr<f64> {
    use rand::Rng;
    let mut coo = krylov_wgpu::matrix::Coo::new(n, n);
    let mut rowsum = vec![0.0; n];
    for i in 0..n {
        for _ in 0..rng.random_range(0..6) {
            let j = rng.random_range(0..n);
            if j != i {
                let v: f64 = rng.random_range(-1.0..1.0);
                coo.push(i, j, v).unwrap();
                coo.push(j, i, v).unwrap();
                rowsum[i] += v.abs();
                rowsum[j] += v.abs();
            }
        }
    }
    for (i, s) in rowsum.iter().enumerate() {
        coo.push(i, i, s + rng.random_range(0.01..1.0)).unwrap();
    }
    coo.to_csr().unwrap()
}

/// Options of a CG solve with `variant`, `mode` and `precond`, rtol 0 and 5000 iterations at
/// most (tests that compare iterates stop them with `max_iter`).
#[allow(dead_code)]
pub fn cg_options(
    variant: krylov_wgpu::solvers::Variant,
    mode: krylov_wgpu::solvers::CheckMode,
    precond: krylov_wgpu::solvers::Precond,
) -> krylov_wgpu::solvers::SolveOptions {
    krylov_wgpu::solvers::SolveOptions {
        method: krylov_wgpu::solvers::Method::Cg,
        variant,
        check_mode: mode,
        precond,
        rtol: 0.0,
        max_iter: 5000,
        ..Default::default()
    }
}

/// Every storage format but `auto` on the 2D Poisson matrix of a 24-grid (b = A·1, Jacobi,
/// rtol 1e-10, device mode): `variant` converges in the format it was asked for, in as many
/// iterations as `reference` in CSR ± 1, with its true residual within the tolerance; then
/// `counts` checks the variant's own launch and reduction counts on each report.
#[allow(dead_code)]
pub fn assert_cg_converges_in_every_format(
    variant: krylov_wgpu::solvers::Variant,
    reference: krylov_wgpu::solvers::Variant,
    counts: impl Fn(&krylov_wgpu::solvers::SolveReport, krylov_wgpu::solvers::Format),
) {
    use krylov_wgpu::solvers::{CheckMode, Format, Precond, SolveOptions, cg, solve_gpu};
    let Some(engine) = engine() else { return };
    let a: krylov_wgpu::matrix::Csr<f64> =
        krylov_wgpu::matrix::generators::from_spec("poisson2d:24").unwrap();
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let base = SolveOptions {
        rtol: 1e-10,
        max_padding: 1e9,
        ..cg_options(reference, CheckMode::Device, Precond::Jacobi)
    };
    let expected = cg::solve(&engine, &a, &b, None, &base, &mut ())
        .unwrap()
        .report
        .iterations;
    for &format in Format::ALL.iter().filter(|&&f| f != Format::Auto) {
        let o = SolveOptions {
            variant,
            format,
            ..base.clone()
        };
        let sol = solve_gpu(&engine, &a, &b, None, &o, &mut ()).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{format}: {}", r.reason_detail);
        assert_eq!(r.format, format.as_str());
        assert!(
            r.iterations.abs_diff(expected) <= 1,
            "{format}: {} iterations, {reference} csr {expected}",
            r.iterations
        );
        let rel = krylov_wgpu::cpu::true_relative_residual(&a, &b, &sol.x);
        assert!(rel <= 1e-10 * 1.001, "{format}: true residual {rel:e}");
        counts(r, format);
    }
}
