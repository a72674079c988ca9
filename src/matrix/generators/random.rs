//! The random families ([`random_spd`], [`random_nonsymmetric`]) and [`banded`]: seeded
//! [`ChaCha8Rng`] draws, made diagonally dominant.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{check_nnz, empty, finish};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// Magnitude in [0.1, 1) with a random sign: off-diagonal values of the random families.
fn random_offdiag(rng: &mut ChaCha8Rng) -> f64 {
    let m = 0.1 + 0.9 * rng.random::<f64>();
    if rng.random::<bool>() { m } else { -m }
}

/// Sets each row's diagonal entry (already stored) to `1 + Σ_{j≠i} |a_ij|`, making the matrix
/// strictly diagonally dominant with a positive diagonal.
fn set_dominant_diagonal<T: Scalar>(row_ptr: &[u32], col_idx: &[u32], values: &mut [T]) {
    for i in 0..row_ptr.len() - 1 {
        let (s, e) = (row_ptr[i] as usize, row_ptr[i + 1] as usize);
        let mut off = 0.0;
        let mut diag = None;
        for p in s..e {
            if col_idx[p] as usize == i {
                diag = Some(p);
            } else {
                off += values[p].as_f64().abs();
            }
        }
        let p = diag.expect("diagonal entry is always stored");
        values[p] = T::from_f64(1.0 + off);
    }
}

/// Number of partners row `i` draws in [`random_spd`]: spreads `n·off/2` draws evenly.
fn spd_picks(i: usize, off: usize) -> usize {
    ((i as u128 + 1) * off as u128 / 2 - i as u128 * off as u128 / 2) as usize
}

/// Sorts each row of a CSR under construction by column, merges duplicates (summing) and
/// compacts the arrays in place; returns the new row pointers.
fn sort_and_merge_rows<T: Scalar>(
    row_ptr: &[u32],
    col_idx: &mut Vec<u32>,
    values: &mut Vec<T>,
) -> Vec<u32> {
    let n = row_ptr.len() - 1;
    let mut out_ptr = Vec::with_capacity(n + 1);
    out_ptr.push(0u32);
    let mut scratch: Vec<(u32, T)> = Vec::new();
    let mut w = 0usize;
    for i in 0..n {
        let (s, e) = (row_ptr[i] as usize, row_ptr[i + 1] as usize);
        scratch.clear();
        scratch.extend((s..e).map(|p| (col_idx[p], values[p])));
        scratch.sort_unstable_by_key(|&(c, _)| c);
        let row_start = w;
        for &(c, v) in &scratch {
            if w > row_start && col_idx[w - 1] == c {
                values[w - 1] += v;
            } else {
                col_idx[w] = c;
                values[w] = v;
                w += 1;
            }
        }
        out_ptr.push(w as u32);
    }
    col_idx.truncate(w);
    values.truncate(w);
    out_ptr
}

/// Random sparse symmetric positive definite matrix with about `nnz_per_row` stored entries per
/// row (the diagonal included).
///
/// Construction (all draws from `ChaCha8Rng::seed_from_u64(seed)`): row i, in order
/// i = 0, 1, …, draws `p_i = ⌊(i+1)·m/2⌋ − ⌊i·m/2⌋` partners (m = min(nnz_per_row − 1, n − 1),
/// so n·m/2 draws in all), each a column j ≠ i uniform over all other columns together with a
/// value v of magnitude in [0.1, 1) and random sign; v is placed at (i, j) and (j, i).
/// Coinciding entries are summed, so rows have ≈ nnz_per_row entries on average (fewer by the
/// rare collisions; row lengths vary around the mean). Finally
/// `a_ii = 1 + Σ_{j≠i} |a_ij|`: symmetric, strictly diagonally dominant with a positive diagonal,
/// hence SPD (all eigenvalues ≥ 1). `nnz_per_row ≤ 1` gives the identity; `n = 0` the empty
/// matrix. Same `(n, nnz_per_row, seed)`, same matrix on every platform.
///
/// # Panics
/// If `n · nnz_per_row` exceeds `u32::MAX`.
pub fn random_spd<T: Scalar>(n: usize, nnz_per_row: usize, seed: u64) -> Csr<T> {
    if n == 0 {
        return empty();
    }
    let m = nnz_per_row.saturating_sub(1).min(n - 1);
    let total = check_nnz(
        "random_spd",
        // Σᵢ spd_picks(i, m) = ⌊n·m/2⌋ draws, each stored twice (a_ij and a_ji).
        m.checked_mul(n)
            .map(|v| v / 2 * 2)
            .and_then(|v| v.checked_add(n)),
    );
    let draw = |rng: &mut ChaCha8Rng, i: usize| {
        let mut j = rng.random_range(0..(n - 1) as u32) as usize;
        if j >= i {
            j += 1;
        }
        (j, random_offdiag(rng))
    };
    // Pass 1: row lengths (diagonal + own draws + draws that land in the row).
    let mut counts = vec![0u32; n + 1];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in 0..n {
        let p = spd_picks(i, m);
        counts[i + 1] += 1 + p as u32;
        for _ in 0..p {
            let (j, _) = draw(&mut rng, i);
            counts[j + 1] += 1;
        }
    }
    for i in 0..n {
        counts[i + 1] += counts[i];
    }
    let row_ptr = counts;
    debug_assert_eq!(row_ptr[n] as usize, total);
    // Pass 2: replay the same stream and fill.
    let mut next = row_ptr.clone();
    let mut col_idx = vec![0u32; total];
    let mut values = vec![T::zero(); total];
    let mut put = |r: usize, c: usize, v: T, col_idx: &mut [u32], values: &mut [T]| {
        let d = next[r] as usize;
        col_idx[d] = c as u32;
        values[d] = v;
        next[r] += 1;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in 0..n {
        put(i, i, T::zero(), &mut col_idx, &mut values);
        for _ in 0..spd_picks(i, m) {
            let (j, v) = draw(&mut rng, i);
            let v = T::from_f64(v);
            put(i, j, v, &mut col_idx, &mut values);
            put(j, i, v, &mut col_idx, &mut values);
        }
    }
    let row_ptr = sort_and_merge_rows(&row_ptr, &mut col_idx, &mut values);
    set_dominant_diagonal(&row_ptr, &col_idx, &mut values);
    finish(n, row_ptr, col_idx, values)
}

/// Random sparse nonsymmetric matrix with exactly `min(nnz_per_row, n)` stored entries in every
/// row, the diagonal included: the "k randomly distributed nonzeros per row" family of Rupp et
/// al. (2016), Fig. 3, made strictly diagonally dominant.
///
/// Construction (draws from `ChaCha8Rng::seed_from_u64(seed)`, row by row): row i takes
/// m = min(nnz_per_row − 1, n − 1) distinct columns j ≠ i, uniform over all other columns
/// (Floyd's sampling without replacement), each with a value of magnitude in [0.1, 1) and
/// random sign; then `a_ii = 1 + Σ_{j≠i} |a_ij|`. Nonsymmetric (pattern and values) except in
/// degenerate cases (n ≤ 1, nnz_per_row ≤ 1, full rows). `nnz_per_row ≤ 1` gives the identity;
/// `n = 0` the empty matrix.
///
/// # Panics
/// If `n · min(nnz_per_row, n)` exceeds `u32::MAX`.
pub fn random_nonsymmetric<T: Scalar>(n: usize, nnz_per_row: usize, seed: u64) -> Csr<T> {
    if n == 0 {
        return empty();
    }
    let m = nnz_per_row.saturating_sub(1).min(n - 1);
    let total = check_nnz("random_nonsymmetric", (m + 1).checked_mul(n));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // stamp[c] == i + 1 marks candidate c as taken in row i (no clearing between rows).
    let mut stamp = vec![0u32; if m > 32 { n - 1 } else { 0 }];
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0u32);
    let mut col_idx = Vec::with_capacity(total);
    let mut values = Vec::with_capacity(total);
    let mut row: Vec<(u32, T)> = Vec::with_capacity(m + 1);
    let mut picked: Vec<usize> = Vec::with_capacity(m);
    for i in 0..n {
        // Floyd: a uniformly random m-subset of the n − 1 candidates.
        picked.clear();
        let mark = i as u32 + 1;
        let cand = n - 1;
        for t in cand - m..cand {
            let r = rng.random_range(0..=t as u32) as usize;
            // Short rows: scan the picks (cache-friendly); long rows: the stamp array.
            let taken = if m <= 32 {
                picked.contains(&r)
            } else {
                stamp[r] == mark
            };
            let c = if taken { t } else { r };
            if m > 32 {
                stamp[c] = mark;
            }
            picked.push(c);
        }
        row.clear();
        row.push((i as u32, T::zero()));
        for &c in &picked {
            let j = if c >= i { c + 1 } else { c };
            row.push((j as u32, T::from_f64(random_offdiag(&mut rng))));
        }
        row.sort_unstable_by_key(|&(c, _)| c);
        for &(c, v) in &row {
            col_idx.push(c);
            values.push(v);
        }
        row_ptr.push(col_idx.len() as u32);
    }
    set_dominant_diagonal(&row_ptr, &col_idx, &mut values);
    finish(n, row_ptr, col_idx, values)
}

/// n×n matrix whose entries lie only on the diagonals `offsets` (0 = main diagonal, +d the d-th
/// superdiagonal `a_{i,i+d}`, −d the d-th subdiagonal), for the DIA format.
///
/// The main diagonal is always present (added if `offsets` lacks 0). Duplicate offsets are
/// merged; entries that would fall outside the matrix are absent (no wrap-around), so an offset
/// with |d| ≥ n is an empty diagonal — no offset makes this panic. Off-diagonal values have
/// magnitude in [0.1, 1) and random sign, drawn from `ChaCha8Rng::seed_from_u64(seed)` row by
/// row, columns ascending; then `a_ii = 1 + Σ_{j≠i} |a_ij|` (strictly diagonally dominant,
/// positive diagonal; nonsymmetric in general even for symmetric offsets). Row i stores the
/// columns `i + d` that lie in `0..n`, in ascending order. `n = 0` gives the empty matrix.
///
/// # Panics
/// If the number of stored entries exceeds `u32::MAX`.
pub fn banded<T: Scalar>(n: usize, offsets: &[isize], seed: u64) -> Csr<T> {
    if n == 0 {
        return empty();
    }
    let mut offs: Vec<i128> = offsets
        .iter()
        .map(|&d| d as i128)
        .filter(|d| d.unsigned_abs() < n as u128)
        .chain(std::iter::once(0))
        .collect();
    offs.sort_unstable();
    offs.dedup();
    let total: usize = offs.iter().map(|d| n - d.unsigned_abs() as usize).sum();
    check_nnz("banded", Some(total));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0u32);
    let mut col_idx = Vec::with_capacity(total);
    let mut values = Vec::with_capacity(total);
    for i in 0..n {
        for &d in &offs {
            let j = i as i128 + d;
            if j < 0 || j >= n as i128 {
                continue;
            }
            col_idx.push(j as u32);
            values.push(if d == 0 {
                T::zero()
            } else {
                T::from_f64(random_offdiag(&mut rng))
            });
        }
        row_ptr.push(col_idx.len() as u32);
    }
    set_dominant_diagonal(&row_ptr, &col_idx, &mut values);
    finish(n, row_ptr, col_idx, values)
}
