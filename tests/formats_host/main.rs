//! DIA, SELL-C-σ and BCSR (MBR layout) on the host: layout invariants the GPU kernels rely on,
//! products against the f64 CSR oracle, refusals, and the structural statistics.
//!
//! The matrix zoo and the product check are here, with the products of every format in both
//! precisions; each format's layout checks and refusals are in its module (`dia`, `sell`,
//! `bcsr`), the statistics in `stats`.

#[path = "../common/mod.rs"]
mod common;

mod bcsr;
mod dia;
mod sell;
mod stats;

use krylov_wgpu::cpu::spmv_f64;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::from_spec;
use krylov_wgpu::{KrylovError, Scalar};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random `nrows × ncols` matrix: row lengths uniform in `0..=2·mean_len` (so some rows are
/// empty), about one stored entry in 16 an explicit zero, and, when `long_row` is set, row
/// `nrows / 2` holding about half of the columns.
fn random_csr<T: Scalar>(
    nrows: usize,
    ncols: usize,
    mean_len: usize,
    long_row: bool,
    seed: u64,
) -> Csr<T> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut row_ptr = vec![0u32];
    let mut col_idx = Vec::new();
    let mut values = Vec::new();
    for i in 0..nrows {
        let mut len = if ncols == 0 {
            0
        } else {
            rng.random_range(0..=2 * mean_len).min(ncols)
        };
        if long_row && i == nrows / 2 {
            len = ncols.div_ceil(2);
        }
        let mut cols = std::collections::BTreeSet::new();
        while cols.len() < len {
            cols.insert(rng.random_range(0..ncols) as u32);
        }
        for c in cols {
            col_idx.push(c);
            let v = if rng.random_range(0..16) == 0 {
                0.0
            } else {
                rng.random_range(-1.0..1.0)
            };
            values.push(T::from_f64(v));
        }
        row_ptr.push(col_idx.len() as u32);
    }
    Csr::new(nrows, ncols, row_ptr, col_idx, values).unwrap()
}

fn empty_csr<T: Scalar>(nrows: usize, ncols: usize) -> Csr<T> {
    Csr::new(nrows, ncols, vec![0; nrows + 1], vec![], vec![]).unwrap()
}

/// The matrix zoo every format is tested on: odd sizes (not multiples of N or C), empty rows,
/// an all-empty matrix, degenerate shapes, one long row, non-square.
fn zoo<T: Scalar>() -> Vec<(String, Csr<T>)> {
    let mut v = Vec::new();
    for (seed, &(n, m, len, long)) in (1u64..).zip(&[
        (1, 1, 1, false),
        (7, 7, 2, false),
        (33, 33, 3, false),
        (257, 257, 5, false),
        (1001, 1001, 6, false),
        (257, 257, 3, true),
        (1001, 1001, 2, true),
        (7, 33, 4, false),
        (33, 7, 2, false),
        (257, 100, 4, true),
        (100, 257, 8, false),
        (1, 1001, 30, false),
        (1001, 1, 1, false),
    ]) {
        v.push((
            format!("random {n}x{m} len~{len} long={long}"),
            random_csr(n, m, len, long, seed),
        ));
    }
    v.push(("empty 33x33".into(), empty_csr(33, 33)));
    v.push(("empty 7x5".into(), empty_csr(7, 5)));
    v.push(("empty 5x0".into(), empty_csr(5, 0)));
    v.push(("empty 0x5".into(), empty_csr(0, 5)));
    v.push(("empty 0x0".into(), empty_csr(0, 0)));
    v.push(("identity 9".into(), Csr::identity(9)));
    v.push((
        "banded 101".into(),
        from_spec("banded:101:-7,-1,0,1,3:5").unwrap(),
    ));
    v
}

/// n entries uniform in [−1, 1) from `seed`.
fn random_x<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    common::random_vector(&mut ChaCha8Rng::seed_from_u64(seed), n, -1.0..1.0)
}

/// Every matrix of the zoo with a random x (from `seed`): `check(name, A, x)`.
fn for_each_in_zoo<T: Scalar>(seed: u64, mut check: impl FnMut(&str, &Csr<T>, &[T])) {
    for (name, a) in zoo::<T>() {
        let x = random_x::<T>(a.ncols(), seed);
        check(&name, &a, &x);
    }
}

/// Every entry of `y` (computed in `T`) against the f64 oracle: `|y_i − ŷ_i| ≤ 2(k_i + 1)·ε·
/// (|A|·|x|)_i`, `k_i` the row length, ε the machine epsilon of `T`. Zero products added by
/// padding are exact, so the bound is the CSR one. Empty rows must give exactly 0.
fn check_product<T: Scalar>(what: &str, a: &Csr<T>, x: &[T], y: &[T]) {
    assert_eq!(y.len(), a.nrows(), "{what}: y length");
    let exact = spmv_f64(a, x);
    let eps = T::PRECISION.epsilon();
    let (abs, lens) = common::abs_terms(a, x);
    for i in 0..a.nrows() {
        let bound = 2.0 * (lens[i] + 1) as f64 * eps * abs[i];
        let err = (y[i].as_f64() - exact[i]).abs();
        assert!(
            err <= bound,
            "{what}: row {i}: got {}, expected {}, error {err:e} over bound {bound:e}",
            y[i],
            exact[i]
        );
    }
}

fn row_len<T: Scalar>(a: &Csr<T>, i: usize) -> usize {
    (a.row_ptr()[i + 1] - a.row_ptr()[i]) as usize
}

fn invalid_option<R: std::fmt::Debug>(r: Result<R, KrylovError>) -> bool {
    matches!(r, Err(KrylovError::InvalidOption(_)))
}

// ---------------------------------------------------------------------------------------------
// Products of every format, both precisions
// ---------------------------------------------------------------------------------------------

#[test]
fn dia_layout_and_product_f32() {
    dia::products::<f32>();
}

#[test]
fn dia_layout_and_product_f64() {
    dia::products::<f64>();
}

#[test]
fn sell_layout_and_product_f32() {
    sell::products::<f32>();
}

#[test]
fn sell_layout_and_product_f64() {
    sell::products::<f64>();
}

#[test]
fn bcsr_layout_and_product_f32() {
    bcsr::products::<f32>();
}

#[test]
fn bcsr_layout_and_product_f64() {
    bcsr::products::<f64>();
}
