//! Maximum-product bipartite matching (Duff & Koster's MC64, "job 5"): a row permutation P
//! that puts large entries on the diagonal of P·A.
//!
//! Among all permutations σ, [`max_product_matching`] finds one maximising ∏ᵢ |a_{σ(i),i}|:
//! the product of the diagonal magnitudes of P·A. Whenever A is structurally nonsingular
//! (some permutation has a zero-free diagonal) the result has one; when none has, the
//! matrix is structurally singular and the result is an error.
//!
//! The algorithm is the one of MC64: the assignment problem on the costs
//!
//! ```text
//! c_ij = log(max_k |a_kj|) − log|a_ij|  ≥ 0        (for stored a_ij ≠ 0)
//! ```
//!
//! (maximising the product = minimising Σ c), solved by one shortest augmenting path per
//! column: a sparse Dijkstra search with a binary heap on the reduced costs
//! c_ij − u_i − v_j ≥ 0 of the row and column dual variables u, v (Hungarian method), after
//! a cheap greedy start on the zero reduced costs. Each search touches only the part of the
//! graph nearer than the augmenting path, so the cost is O(nnz·log n) per column in the
//! worst case and far less in practice (west0479: a few ms).
//!
//! The duals give MC64's scaling ([`Matching::scaling`]): with r_i = exp(u_i) and
//! s_j = exp(v_j)/max_k |a_kj|, D_r·A·D_s has |entries| ≤ 1 and exactly 1 on the matched
//! entries, so P·D_r·A·D_s has a unit diagonal and off-diagonal magnitudes ≤ 1.
//!
//! ```
//! use krylov_wgpu::matrix::{Csr, matching::max_product_matching};
//! // [[0, 2], [3, 1]]: the diagonal has a zero; swapping the rows gives diag (3, 2).
//! let a = Csr::<f64>::new(2, 2, vec![0, 1, 3], vec![1, 0, 1], vec![2.0, 3.0, 1.0])?;
//! let m = max_product_matching(&a)?;
//! assert_eq!(m.row_perm, vec![1, 0]);
//! let pa = m.permute_rows(&a);
//! assert_eq!(pa.diagonal(), vec![3.0, 2.0]);
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

const NONE: usize = usize::MAX;

/// A maximum-product matching of a square matrix: the row permutation and the duals.
#[derive(Debug, Clone, PartialEq)]
pub struct Matching {
    /// `row_perm[i]` is the row of A placed at row i of P·A (the row matched to column i),
    /// so (P·A)ᵢᵢ = a_{`row_perm[i]`, i}.
    pub row_perm: Vec<usize>,
    /// Dual variable of each row of A (u_i; indexed by A's rows).
    pub row_dual: Vec<f64>,
    /// Dual variable of each column (v_j).
    pub col_dual: Vec<f64>,
    /// max_k |a_kj| of each column (the cost offset).
    pub col_max: Vec<f64>,
    /// Σ log|diagonal of P·A| (natural log): the maximised quantity.
    pub log_product: f64,
}

impl Matching {
    /// Whether P is the identity.
    pub fn is_identity(&self) -> bool {
        self.row_perm.iter().enumerate().all(|(i, &r)| i == r)
    }

    /// How many rows P moves.
    pub fn moved(&self) -> usize {
        self.row_perm
            .iter()
            .enumerate()
            .filter(|(i, r)| i != *r)
            .count()
    }

    /// P·A: row i of the result is row `row_perm[i]` of `a` (same column indices).
    pub fn permute_rows<T: Scalar>(&self, a: &Csr<T>) -> Csr<T> {
        permute_rows(a, &self.row_perm)
    }

    /// P·b: entry i of the result is `b[row_perm[i]]`.
    pub fn permute_vec<T: Copy>(&self, b: &[T]) -> Vec<T> {
        self.row_perm.iter().map(|&r| b[r]).collect()
    }

    /// MC64's scaling from the duals: `(r, s)` with r indexed by A's rows and s by its
    /// columns, such that |r_i·a_ij·s_j| ≤ 1 for every entry, with equality on the matched
    /// ones (so P·D_r·A·D_s has a unit diagonal in magnitude). Returned as exact powers of
    /// two nearest to those values when `pow2` (then the bounds hold within a factor 4).
    pub fn scaling(&self, pow2: bool) -> (Vec<f64>, Vec<f64>) {
        let round = |v: f64| {
            if pow2 && v.is_finite() && v > 0.0 {
                2f64.powi(v.log2().round() as i32)
            } else {
                v
            }
        };
        let r = self.row_dual.iter().map(|&u| round(u.exp())).collect();
        let s = self
            .col_dual
            .iter()
            .zip(&self.col_max)
            .map(|(&v, &m)| round(v.exp() / m))
            .collect();
        (r, s)
    }
}

/// P·A for the permutation `row_perm` (row i of the result = row `row_perm[i]` of `a`).
///
/// # Panics
/// If `row_perm` is not a permutation of `0..a.nrows()`.
pub fn permute_rows<T: Scalar>(a: &Csr<T>, row_perm: &[usize]) -> Csr<T> {
    assert_eq!(row_perm.len(), a.nrows(), "permutation length vs rows");
    let mut seen = vec![false; a.nrows()];
    let mut row_ptr = Vec::with_capacity(a.nrows() + 1);
    let mut col_idx = Vec::with_capacity(a.nnz());
    let mut values = Vec::with_capacity(a.nnz());
    row_ptr.push(0u32);
    for &r in row_perm {
        assert!(!seen[r], "row {r} appears twice in the permutation");
        seen[r] = true;
        let (c, v) = a.row(r);
        col_idx.extend_from_slice(c);
        values.extend_from_slice(v);
        row_ptr.push(col_idx.len() as u32);
    }
    Csr::from_parts_unchecked(a.nrows(), a.ncols(), row_ptr, col_idx, values)
}

/// A heap entry ordered by distance, smallest first.
#[derive(Clone, Copy, PartialEq)]
struct Entry(f64, usize);

impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// The maximum-product matching of the square matrix `a` (module docs). Explicitly stored
/// zeros count as absent.
///
/// # Errors
/// [`KrylovError::NotSquare`] for a rectangular matrix; [`KrylovError::NonFinite`] for a
/// non-finite entry; [`KrylovError::InvalidMatrix`] ("structurally singular …", naming a
/// column no perfect matching covers and the structural rank) when no permutation gives a
/// zero-free diagonal.
pub fn max_product_matching<T: Scalar>(a: &Csr<T>) -> Result<Matching> {
    a.require_square()?;
    a.check_finite()?;
    let n = a.nrows();

    // Column-wise storage (rows of each column) of the costs, zeros dropped.
    let mut col_max = vec![0.0f64; n];
    let mut count = vec![0usize; n + 1];
    for (&c, v) in a.col_idx().iter().zip(a.values()) {
        let v = v.as_f64().abs();
        if v > 0.0 {
            count[c as usize + 1] += 1;
            col_max[c as usize] = col_max[c as usize].max(v);
        }
    }
    for j in 0..n {
        count[j + 1] += count[j];
    }
    let col_ptr = count.clone();
    let mut next = count;
    let mut row_of = vec![0usize; col_ptr[n]];
    let mut cost = vec![0.0f64; col_ptr[n]];
    for i in 0..n {
        let (cols, vals) = a.row(i);
        for (&c, v) in cols.iter().zip(vals) {
            let v = v.as_f64().abs();
            if v > 0.0 {
                let j = c as usize;
                row_of[next[j]] = i;
                cost[next[j]] = col_max[j].ln() - v.ln();
                next[j] += 1;
            }
        }
    }
    if let Some(j) = (0..n).find(|&j| col_ptr[j] == col_ptr[j + 1]) {
        return Err(singular(j, None));
    }

    // Initial duals: u_i = min over row i of c_ij, v_j = min over column j of c_ij − u_i;
    // both keep every reduced cost c_ij − u_i − v_j ≥ 0.
    let mut u = vec![f64::INFINITY; n];
    for j in 0..n {
        for p in col_ptr[j]..col_ptr[j + 1] {
            u[row_of[p]] = u[row_of[p]].min(cost[p]);
        }
    }
    if let Some(i) = u.iter().position(|x| !x.is_finite()) {
        return Err(KrylovError::InvalidMatrix(format!(
            "structurally singular: row {i} has no non-zero entry, so no row permutation \
             gives a zero-free diagonal"
        )));
    }
    let mut v = vec![0.0f64; n];
    let mut col_of_row = vec![NONE; n];
    let mut row_of_col = vec![NONE; n];
    for j in 0..n {
        v[j] = (col_ptr[j]..col_ptr[j + 1])
            .map(|p| cost[p] - u[row_of[p]])
            .fold(f64::INFINITY, f64::min);
        // Greedy start: a free row at zero reduced cost (the diagonal first).
        let zero = |p: usize| cost[p] - u[row_of[p]] - v[j] <= 0.0;
        let diag = (col_ptr[j]..col_ptr[j + 1]).find(|&p| row_of[p] == j);
        let pick = diag
            .filter(|&p| zero(p) && col_of_row[j] == NONE)
            .or_else(|| {
                (col_ptr[j]..col_ptr[j + 1]).find(|&p| zero(p) && col_of_row[row_of[p]] == NONE)
            });
        if let Some(p) = pick {
            col_of_row[row_of[p]] = j;
            row_of_col[j] = row_of[p];
        }
    }

    // One shortest augmenting path per free column.
    let mut dist = vec![f64::INFINITY; n];
    let mut pred = vec![NONE; n];
    let mut done = vec![false; n];
    let mut touched: Vec<usize> = Vec::new();
    let mut finished: Vec<usize> = Vec::new();
    let mut heap = BinaryHeap::new();
    let mut unmatched = Vec::new();
    for j0 in 0..n {
        if row_of_col[j0] != NONE {
            continue;
        }
        heap.clear();
        let relax = |j: usize,
                     d: f64,
                     dist: &mut [f64],
                     pred: &mut [usize],
                     done: &[bool],
                     touched: &mut Vec<usize>,
                     heap: &mut BinaryHeap<Entry>| {
            for p in col_ptr[j]..col_ptr[j + 1] {
                let i = row_of[p];
                if done[i] {
                    continue;
                }
                let nd = d + (cost[p] - u[i] - v[j]).max(0.0);
                if nd < dist[i] {
                    if dist[i] == f64::INFINITY {
                        touched.push(i);
                    }
                    dist[i] = nd;
                    pred[i] = j;
                    heap.push(Entry(nd, i));
                }
            }
        };
        relax(
            j0,
            0.0,
            &mut dist,
            &mut pred,
            &done,
            &mut touched,
            &mut heap,
        );
        let mut end = None;
        while let Some(Entry(d, i)) = heap.pop() {
            if done[i] || d > dist[i] {
                continue;
            }
            done[i] = true;
            finished.push(i);
            match col_of_row[i] {
                NONE => {
                    end = Some((i, d));
                    break;
                }
                j => relax(j, d, &mut dist, &mut pred, &done, &mut touched, &mut heap),
            }
        }
        if let Some((end, big_d)) = end {
            // Dual update: keeps reduced costs ≥ 0 and makes the path's edges tight.
            v[j0] += big_d;
            for &i in &finished {
                if i != end {
                    u[i] += dist[i] - big_d;
                    v[col_of_row[i]] += big_d - dist[i];
                }
            }
            // Augment along the path.
            let mut i = end;
            loop {
                let j = pred[i];
                let prev = row_of_col[j];
                row_of_col[j] = i;
                col_of_row[i] = j;
                if j == j0 {
                    break;
                }
                i = prev;
            }
        } else {
            unmatched.push(j0);
        }
        for &i in &touched {
            dist[i] = f64::INFINITY;
            pred[i] = NONE;
            done[i] = false;
        }
        for &i in &finished {
            done[i] = false;
        }
        touched.clear();
        finished.clear();
    }
    if let Some(&j) = unmatched.first() {
        return Err(singular(j, Some(n - unmatched.len())));
    }

    let diag_value = |i: usize, j: usize| a.get(i, j).as_f64().abs();
    let log_product: f64 = (0..n).map(|j| diag_value(row_of_col[j], j).ln()).sum();
    // Ties: keep the identity when A's own diagonal is as good (within rounding), so a
    // matrix whose diagonal is already optimal is never reordered.
    let diag_log: f64 = (0..n).map(|j| diag_value(j, j).ln()).sum();
    let scale: f64 = (0..n).map(|j| col_max[j].ln().abs()).sum::<f64>() + n as f64;
    if row_of_col.iter().enumerate().any(|(j, &i)| i != j)
        && diag_log.is_finite()
        && diag_log >= log_product - 1e-13 * scale
    {
        return Ok(Matching {
            row_perm: (0..n).collect(),
            row_dual: u,
            col_dual: v,
            col_max,
            log_product: diag_log,
        });
    }
    Ok(Matching {
        row_perm: row_of_col,
        row_dual: u,
        col_dual: v,
        col_max,
        log_product,
    })
}

fn singular(column: usize, rank: Option<usize>) -> KrylovError {
    KrylovError::InvalidMatrix(match rank {
        None => format!(
            "structurally singular: column {column} has no non-zero entry, so no row \
             permutation gives a zero-free diagonal"
        ),
        Some(r) => format!(
            "structurally singular: no row permutation gives a zero-free diagonal (a maximum \
             matching covers {r} columns; column {column} is left unmatched)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn csr(n: usize, entries: &[(usize, usize, f64)]) -> Csr<f64> {
        Csr::from_triplets(n, entries).unwrap()
    }

    /// A random n×n matrix with about `per_row` entries per row, a zero diagonal and a
    /// hidden random permutation guaranteeing structural nonsingularity.
    fn random_zero_diagonal(n: usize, per_row: usize, seed: u64) -> Csr<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut perm: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            perm.swap(i, rng.random_range(0..=i));
        }
        // Make the hidden permutation a derangement so the diagonal stays empty.
        for i in 0..n {
            if perm[i] == i {
                let k = (i + 1) % n;
                perm.swap(i, k);
            }
        }
        let mut e = Vec::new();
        for (i, &pi) in perm.iter().enumerate() {
            if pi != i {
                e.push((i, pi, rng.random_range(0.1..10.0)));
            }
            for _ in 0..per_row {
                let j = rng.random_range(0..n);
                if j != i {
                    let mag: f64 = 10f64.powf(rng.random_range(-4.0..4.0));
                    let sign = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
                    e.push((i, j, sign * mag));
                }
            }
        }
        // Drop duplicates (Coo would sum them, possibly to a different magnitude: fine).
        csr(n, &e)
    }

    fn is_bijection(p: &[usize]) -> bool {
        let mut seen = vec![false; p.len()];
        p.iter()
            .all(|&r| r < p.len() && !std::mem::replace(&mut seen[r], true))
    }

    /// Best ∏|a_{σ(j), j}| by brute force over all permutations (log scale; -inf if none).
    fn brute_force(a: &Csr<f64>) -> f64 {
        fn go(a: &Csr<f64>, j: usize, used: &mut [bool], acc: f64, best: &mut f64) {
            let n = a.nrows();
            if j == n {
                *best = best.max(acc);
                return;
            }
            for i in 0..n {
                let v = a.get(i, j).abs();
                if !used[i] && v > 0.0 {
                    used[i] = true;
                    go(a, j + 1, used, acc + v.ln(), best);
                    used[i] = false;
                }
            }
        }
        let mut best = f64::NEG_INFINITY;
        go(a, 0, &mut vec![false; a.nrows()], 0.0, &mut best);
        best
    }

    #[test]
    fn permutation_is_a_bijection_and_diagonal_zero_free() {
        for seed in 0..20 {
            let n = 20 + 37 * seed as usize;
            let a = random_zero_diagonal(n, 3, seed);
            assert!(a.diagonal().iter().all(|&d| d == 0.0));
            let m = max_product_matching(&a).unwrap();
            assert!(is_bijection(&m.row_perm), "seed {seed}");
            let pa = m.permute_rows(&a);
            assert!(pa.diagonal().iter().all(|&d| d != 0.0), "seed {seed}");
            assert_eq!(m.moved(), n);
            // P·A is a valid CSR matrix with the same entries.
            assert_eq!(pa.nnz(), a.nnz());
            Csr::new(
                n,
                n,
                pa.row_ptr().to_vec(),
                pa.col_idx().to_vec(),
                pa.values().to_vec(),
            )
            .unwrap();
        }
    }

    #[test]
    fn product_is_maximal_against_brute_force() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut checked = 0;
        for trial in 0..300 {
            let n = rng.random_range(1..=7);
            let density = rng.random_range(0.2..0.9);
            let mut e = Vec::new();
            for i in 0..n {
                for j in 0..n {
                    if rng.random_bool(density) {
                        let mag: f64 = 10f64.powf(rng.random_range(-3.0..3.0));
                        e.push((i, j, if rng.random_bool(0.5) { mag } else { -mag }));
                    }
                }
            }
            let a = csr(n, &e);
            let best = brute_force(&a);
            match max_product_matching(&a) {
                Ok(m) => {
                    assert!(is_bijection(&m.row_perm));
                    let got: f64 = (0..n).map(|j| a.get(m.row_perm[j], j).abs().ln()).sum();
                    assert!(
                        (got - best).abs() <= 1e-10 * (1.0 + best.abs()),
                        "trial {trial}: matching {got} vs brute force {best}"
                    );
                    assert!((m.log_product - got).abs() <= 1e-12 * (1.0 + got.abs()));
                    checked += 1;
                }
                Err(e) => {
                    assert_eq!(best, f64::NEG_INFINITY, "trial {trial}: {e}");
                    assert!(e.to_string().contains("structurally singular"));
                }
            }
        }
        assert!(checked > 150, "only {checked} nonsingular trials");
    }

    #[test]
    fn duals_give_mc64_scaling() {
        for seed in 0..5 {
            let a = random_zero_diagonal(200, 4, 100 + seed);
            let m = max_product_matching(&a).unwrap();
            let (r, s) = m.scaling(false);
            for (i, ri) in r.iter().enumerate() {
                let (cols, vals) = a.row(i);
                for (&c, &x) in cols.iter().zip(vals) {
                    let scaled = (ri * x * s[c as usize]).abs();
                    assert!(scaled <= 1.0 + 1e-9, "entry ({i}, {c}) scales to {scaled}");
                }
            }
            for (j, &i) in m.row_perm.iter().enumerate() {
                let d = (r[i] * a.get(i, j) * s[j]).abs();
                assert!((d - 1.0).abs() < 1e-9, "matched ({i}, {j}) scales to {d}");
            }
        }
    }

    #[test]
    fn identity_on_diagonally_dominant_matrices() {
        use crate::matrix::generators;
        let mats: Vec<Csr<f64>> = vec![
            generators::poisson_2d_fd(12),
            generators::random_nonsymmetric(300, 7, 3),
            generators::convection_diffusion_3d(6, 0.01, generators::ConvectionField::Circular),
            generators::banded(100, &[-1, 0, 1], 2),
            Csr::identity(5),
        ];
        for a in &mats {
            let m = max_product_matching(a).unwrap();
            assert!(m.is_identity(), "n = {}", a.nrows());
            assert_eq!(m.moved(), 0);
        }
        // A tie the greedy start could break either way: [[1, 1], [1, 1]].
        let a = csr(2, &[(0, 0, 1.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 1.0)]);
        assert!(max_product_matching(&a).unwrap().is_identity());
    }

    #[test]
    fn structurally_singular_input_is_an_error() {
        // Rows 0 and 1 both have entries only in column 0.
        let a = csr(3, &[(0, 0, 1.0), (1, 0, 2.0), (2, 1, 1.0), (2, 2, 1.0)]);
        let e = max_product_matching(&a).unwrap_err();
        assert!(matches!(e, KrylovError::InvalidMatrix(_)));
        assert!(e.to_string().contains("structurally singular"), "{e}");
        assert!(e.to_string().contains("covers 2 columns"), "{e}");
        // An empty column; an explicitly stored zero counts as absent.
        let a = csr(2, &[(0, 0, 1.0), (1, 0, 1.0)]);
        assert!(max_product_matching(&a).is_err());
        let a = Csr::new(2, 2, vec![0, 1, 2], vec![0, 1], vec![1.0, 0.0]).unwrap();
        assert!(max_product_matching(&a).is_err());
        // Not square.
        let a = Csr::<f64>::new(1, 2, vec![0, 1], vec![0], vec![1.0]).unwrap();
        assert!(matches!(
            max_product_matching(&a),
            Err(KrylovError::NotSquare { .. })
        ));
    }

    #[test]
    fn works_in_f32_and_on_the_empty_matrix() {
        let a = csr(3, &[(0, 1, 2.0), (1, 2, 3.0), (2, 0, 4.0), (2, 2, 0.5)]);
        let a32: Csr<f32> = a.cast().unwrap();
        let m = max_product_matching(&a32).unwrap();
        assert_eq!(m.row_perm, vec![2, 0, 1]);
        assert_eq!(m.permute_vec(&[10, 11, 12]), vec![12, 10, 11]);
        let e = Csr::<f64>::new(0, 0, vec![0], vec![], vec![]).unwrap();
        assert!(max_product_matching(&e).unwrap().row_perm.is_empty());
    }
}
