//! ILU(0) factorisation on the host in f64 (paper 004's preconditioner, set-up half): the
//! incomplete factors L (unit lower, stored without its diagonal) and U (upper, diagonal
//! included) of A on A's own sparsity pattern, so that (L·U)ᵢⱼ = aᵢⱼ wherever aᵢⱼ is stored.
//! Its apply, z = U⁻¹ L⁻¹ r, is two sparse triangular solves ([`Ilu0::apply`]).
//!
//! A zero, tiny or non-finite pivot does not produce NaN: the factorisation restarts on the
//! shifted matrix A + α·diag(s), sᵢ = maxⱼ |aᵢⱼ| (a Manteuffel shift, α = 10⁻⁴, 10⁻³, …, 1),
//! and reports α and the attempts. Rows missing their diagonal entry get one (value 0).
//!
//! ```
//! use krylov_wgpu::cpu::ilu::Ilu0;
//! use krylov_wgpu::matrix::generators::poisson_2d_fd;
//! let a = poisson_2d_fd::<f64>(8);
//! let m = Ilu0::factor(&a)?;
//! assert_eq!(m.shift, 0.0);
//! let r = vec![1.0f64; a.nrows()];
//! let mut z = vec![0.0f64; a.nrows()];
//! m.apply(&r, &mut z);
//! assert!(z.iter().all(|v| v.is_finite() && *v > 0.0));
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// A pivot |uᵢᵢ| at or below this times the row's largest |aᵢⱼ| counts as a breakdown.
pub const PIVOT_RTOL: f64 = 1e-12;

/// The shifts α tried after an unshifted attempt breaks down, in order.
pub const SHIFTS: [f64; 5] = [1e-4, 1e-3, 1e-2, 1e-1, 1.0];

/// The ILU(0) factors of a square matrix, in CSR on A's pattern (plus the diagonal).
#[derive(Debug, Clone)]
pub struct Ilu0 {
    n: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    /// Strictly lower entries hold L (unit diagonal implied), the others U.
    values: Vec<f64>,
    /// Position of the diagonal entry of each row in `col_idx`/`values`.
    diag: Vec<usize>,
    /// The α of the shifted matrix A + α·diag(s) that was factored (0: A itself).
    pub shift: f64,
    /// Factorisations tried (1 when A itself factored).
    pub attempts: usize,
}

impl Ilu0 {
    /// Factors `a` (square, finite), shifting as the module docs say when a pivot breaks down.
    /// Errors: not square, non-finite entries, a zero row (singular), or every shift in
    /// [`SHIFTS`] breaking down.
    pub fn factor<T: Scalar>(a: &Csr<T>) -> Result<Self> {
        a.require_square()?;
        a.check_finite()?;
        let base = Pattern::of(a)?;
        let mut last_row = 0;
        for (attempt, shift) in std::iter::once(0.0).chain(SHIFTS).enumerate() {
            match base.factor(shift) {
                Ok(values) => {
                    return Ok(Ilu0 {
                        n: base.n,
                        row_ptr: base.row_ptr.clone(),
                        col_idx: base.col_idx.clone(),
                        values,
                        diag: base.diag.clone(),
                        shift,
                        attempts: attempt + 1,
                    });
                }
                Err(row) => last_row = row,
            }
        }
        Err(KrylovError::InvalidMatrix(format!(
            "ILU(0) breaks down at row {last_row} even with the diagonal shifted by {} times \
             the row maxima",
            SHIFTS[SHIFTS.len() - 1]
        )))
    }

    /// Order of the factored matrix.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Stored entries of L and U together (A's non-zeros plus any added diagonal).
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// uᵢᵢ, the pivots.
    pub fn pivots(&self) -> Vec<f64> {
        self.diag.iter().map(|&p| self.values[p]).collect()
    }

    /// (L·U)ᵢⱼ for a stored position (i, j) — equal to aᵢⱼ (+ the shift on the diagonal) by
    /// construction; what the tests check.
    pub fn product_at(&self, i: usize, j: usize) -> f64 {
        let lower = |i: usize, k: usize| -> f64 {
            if i == k {
                1.0
            } else {
                self.entry(i, k).filter(|_| k < i).unwrap_or(0.0)
            }
        };
        let upper =
            |k: usize, j: usize| -> f64 { self.entry(k, j).filter(|_| k <= j).unwrap_or(0.0) };
        (0..=i.min(j)).map(|k| lower(i, k) * upper(k, j)).sum()
    }

    fn entry(&self, i: usize, j: usize) -> Option<f64> {
        let row = self.row_ptr[i]..self.row_ptr[i + 1];
        self.col_idx[row.clone()]
            .binary_search(&j)
            .ok()
            .map(|p| self.values[row.start + p])
    }

    /// z = U⁻¹ L⁻¹ r: forward substitution with the unit-lower L, then back substitution
    /// with U (computed in f64, stored in `T`).
    pub fn apply<T: Scalar>(&self, r: &[T], z: &mut [T]) {
        let mut y: Vec<f64> = r.iter().map(|v| v.as_f64()).collect();
        for i in 0..self.n {
            let mut s = y[i];
            for p in self.row_ptr[i]..self.diag[i] {
                s -= self.values[p] * y[self.col_idx[p]];
            }
            y[i] = s;
        }
        for i in (0..self.n).rev() {
            let mut s = y[i];
            for p in self.diag[i] + 1..self.row_ptr[i + 1] {
                s -= self.values[p] * y[self.col_idx[p]];
            }
            y[i] = s / self.values[self.diag[i]];
        }
        for (z, y) in z.iter_mut().zip(y) {
            *z = T::from_f64(y);
        }
    }

    /// z = L⁻ᵀ U⁻ᵀ r (BiCG's shadow system): forward substitution with Uᵀ, then back
    /// substitution with the unit-upper Lᵀ, both by columns of the stored rows.
    pub fn apply_transposed<T: Scalar>(&self, r: &[T], z: &mut [T]) {
        let mut y: Vec<f64> = r.iter().map(|v| v.as_f64()).collect();
        for i in 0..self.n {
            y[i] /= self.values[self.diag[i]];
            let yi = y[i];
            for p in self.diag[i] + 1..self.row_ptr[i + 1] {
                y[self.col_idx[p]] -= self.values[p] * yi;
            }
        }
        for i in (0..self.n).rev() {
            let yi = y[i];
            for p in self.row_ptr[i]..self.diag[i] {
                y[self.col_idx[p]] -= self.values[p] * yi;
            }
        }
        for (z, y) in z.iter_mut().zip(y) {
            *z = T::from_f64(y);
        }
    }
}

/// A's pattern with every diagonal entry present, its values in f64 and the row maxima.
struct Pattern {
    n: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    values: Vec<f64>,
    diag: Vec<usize>,
    row_max: Vec<f64>,
}

impl Pattern {
    fn of<T: Scalar>(a: &Csr<T>) -> Result<Self> {
        let n = a.nrows();
        let (mut row_ptr, mut col_idx, mut values, mut diag, mut row_max) = (
            vec![0],
            Vec::new(),
            Vec::new(),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for i in 0..n {
            let (cols, vals) = a.row(i);
            let max = vals.iter().map(|v| v.as_f64().abs()).fold(0.0, f64::max);
            if max == 0.0 {
                return Err(KrylovError::InvalidMatrix(format!(
                    "row {i} is zero: the matrix is singular, ILU(0) cannot factor it"
                )));
            }
            row_max.push(max);
            let mut placed = false;
            for (&c, v) in cols.iter().zip(vals) {
                let c = c as usize;
                if !placed && c >= i {
                    diag.push(col_idx.len());
                    placed = true;
                    if c > i {
                        col_idx.push(i);
                        values.push(0.0);
                    }
                }
                col_idx.push(c);
                values.push(v.as_f64());
            }
            if !placed {
                diag.push(col_idx.len());
                col_idx.push(i);
                values.push(0.0);
            }
            row_ptr.push(col_idx.len());
        }
        Ok(Pattern {
            n,
            row_ptr,
            col_idx,
            values,
            diag,
            row_max,
        })
    }

    /// The IKJ ILU(0) of A + shift·diag(row_max); `Err(row)` at the first pivot that breaks
    /// down.
    fn factor(&self, shift: f64) -> std::result::Result<Vec<f64>, usize> {
        let mut v = self.values.clone();
        for i in 0..self.n {
            v[self.diag[i]] += shift * self.row_max[i];
        }
        // position[j] = index of (i, j) in row i, for the row being eliminated.
        let mut position = vec![usize::MAX; self.n];
        for i in 0..self.n {
            let row = self.row_ptr[i]..self.row_ptr[i + 1];
            for p in row.clone() {
                position[self.col_idx[p]] = p;
            }
            for p in self.row_ptr[i]..self.diag[i] {
                let k = self.col_idx[p];
                let l_ik = v[p] / v[self.diag[k]];
                v[p] = l_ik;
                for q in self.diag[k] + 1..self.row_ptr[k + 1] {
                    let at = position[self.col_idx[q]];
                    if at != usize::MAX {
                        v[at] -= l_ik * v[q];
                    }
                }
            }
            for p in row {
                position[self.col_idx[p]] = usize::MAX;
            }
            let pivot = v[self.diag[i]];
            if !(pivot.is_finite() && pivot.abs() > PIVOT_RTOL * self.row_max[i]) {
                return Err(i);
            }
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Coo;
    use crate::matrix::generators;

    fn csr(n: usize, entries: &[(usize, usize, f64)]) -> Csr<f64> {
        let mut coo = Coo::new(n, n);
        for &(i, j, v) in entries {
            coo.push(i, j, v).unwrap();
        }
        coo.to_csr().unwrap()
    }

    #[test]
    fn tridiagonal_ilu0_is_the_exact_lu() {
        // No fill-in is possible, so M = A and M⁻¹(A x) = x.
        let n = 50;
        let mut e = Vec::new();
        for i in 0..n {
            e.push((i, i, 4.0 + i as f64 * 0.01));
            if i > 0 {
                e.push((i, i - 1, -1.0 - 0.1 * (i % 3) as f64));
            }
            if i + 1 < n {
                e.push((i, i + 1, -1.5));
            }
        }
        let a = csr(n, &e);
        let m = Ilu0::factor(&a).unwrap();
        assert_eq!((m.shift, m.attempts), (0.0, 1));
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() + 2.0).collect();
        let ax = a.mul_vec(&x).unwrap();
        let (mut z, mut zt) = (vec![f64::NAN; n], vec![f64::NAN; n]);
        m.apply(&ax, &mut z);
        for (z, x) in z.iter().zip(&x) {
            assert!((z - x).abs() <= 1e-12 * x.abs(), "{z} vs {x}");
        }
        // Aᵀ: M⁻ᵀ(Aᵀ x) = x as well.
        let atx = a.transpose().mul_vec(&x).unwrap();
        m.apply_transposed(&atx, &mut zt);
        for (z, x) in zt.iter().zip(&x) {
            assert!((z - x).abs() <= 1e-12 * x.abs(), "{z} vs {x}");
        }
    }

    #[test]
    fn lu_matches_a_on_its_pattern_for_a_nonsymmetric_matrix() {
        let a = generators::random_nonsymmetric::<f64>(120, 6, 11);
        let m = Ilu0::factor(&a).unwrap();
        assert_eq!(m.shift, 0.0);
        for i in 0..a.nrows() {
            let (cols, vals) = a.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                let p = m.product_at(i, j as usize);
                assert!(
                    (p - v).abs() <= 1e-12 * v.abs().max(1.0),
                    "({i},{j}): {p} vs {v}"
                );
            }
        }
    }

    #[test]
    fn apply_transposed_is_the_transpose_of_apply() {
        // ⟨M⁻¹ u, w⟩ = ⟨u, M⁻ᵀ w⟩ for random u, w.
        let a = generators::random_nonsymmetric::<f64>(80, 5, 3);
        let m = Ilu0::factor(&a).unwrap();
        let u: Vec<f64> = (0..80).map(|i| ((i * 7 % 13) as f64 - 6.0) / 5.0).collect();
        let w: Vec<f64> = (0..80).map(|i| ((i * 5 % 11) as f64 - 5.0) / 3.0).collect();
        let (mut mu, mut mtw) = (vec![0.0; 80], vec![0.0; 80]);
        m.apply(&u, &mut mu);
        m.apply_transposed(&w, &mut mtw);
        let lhs: f64 = mu.iter().zip(&w).map(|(a, b)| a * b).sum();
        let rhs: f64 = u.iter().zip(&mtw).map(|(a, b)| a * b).sum();
        assert!(
            (lhs - rhs).abs() <= 1e-10 * lhs.abs().max(1.0),
            "{lhs} vs {rhs}"
        );
    }

    #[test]
    fn zero_pivot_is_shifted_and_reported_never_nan() {
        // A saddle-point-like matrix: a zero diagonal block at the end (as in driven-cavity
        // Navier–Stokes FEM matrices), with a missing diagonal entry.
        let a = csr(
            3,
            &[
                (0, 0, 2.0),
                (0, 2, 1.0),
                (1, 1, 3.0),
                (1, 2, 1.0),
                (2, 0, 1.0),
                (2, 1, 1.0),
            ],
        );
        let m = Ilu0::factor(&a).unwrap();
        assert!(m.pivots().iter().all(|p| p.is_finite() && *p != 0.0));
        // u₂₂ = 0 − 1/2 − 1/3 ≠ 0 here: the added zero diagonal is fine unshifted.
        assert_eq!(m.shift, 0.0);
        // A true zero pivot: [[0, 1], [1, 0]].
        let b = csr(2, &[(0, 1, 1.0), (1, 0, 1.0)]);
        let m = Ilu0::factor(&b).unwrap();
        assert!(
            m.shift > 0.0 && m.attempts > 1,
            "shift {} after {}",
            m.shift,
            m.attempts
        );
        let mut z = vec![0.0f64; 2];
        m.apply(&[1.0f64, 2.0], &mut z);
        assert!(z.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn singular_and_bad_input_are_errors() {
        let zero_row = csr(2, &[(0, 0, 1.0), (0, 1, 2.0)]);
        assert!(matches!(
            Ilu0::factor(&zero_row),
            Err(KrylovError::InvalidMatrix(_))
        ));
        let mut coo = Coo::new(2, 3);
        coo.push(0, 0, 1.0).unwrap();
        coo.push(1, 2, 1.0).unwrap();
        let wide = coo.to_csr().unwrap();
        assert!(matches!(
            Ilu0::factor(&wide),
            Err(KrylovError::NotSquare { rows: 2, cols: 3 })
        ));
    }
}
