//! ILU(0) factorisation on the host in f64 (paper 004's preconditioner, set-up half): the
//! incomplete factors L (unit lower, stored without its diagonal) and U (upper, diagonal
//! included) of A on A's own sparsity pattern, so that (L·U)ᵢⱼ = aᵢⱼ wherever aᵢⱼ is stored.
//! Its apply, z = U⁻¹ L⁻¹ r, is two sparse triangular solves ([`Ilu0::apply`]); the factors
//! leave here as [`TriFactor`]s ([`Ilu0::lower`], [`Ilu0::upper`] and the transposed pair)
//! for the solves of [`crate::cpu::trisolve`] and the GPU.
//!
//! IC(0) ([`Ilu0::factor_ic0`], symmetric A) is the same elimination with every pivot
//! required positive; its upper factor is then set to D·Lᵀ exactly, so M = L·D·Lᵀ is
//! symmetric (positive definite: what CG needs) and M⁻ᵀ = M⁻¹.
//!
//! A zero, tiny or non-finite pivot does not produce NaN: the factorisation restarts on the
//! shifted matrix A + α·diag(s), sᵢ = maxⱼ |aᵢⱼ| (a Manteuffel shift, α = 10⁻⁴, 10⁻³, …, 1),
//! and reports α and the attempts. So do factors that pass every pivot test but whose solves
//! explode (|M⁻¹(A e)| > [`MAX_GROWTH`], the condest test of Chow & Saad). Rows missing their diagonal entry get one (value 0).
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

mod pattern;

pub(super) use pattern::{Factored, Pattern};

use super::trisolve::TriFactor;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// A pivot |uᵢᵢ| at or below this times the row's largest |aᵢⱼ| counts as a breakdown.
pub const PIVOT_RTOL: f64 = 1e-12;

/// The largest |M⁻¹(A e)|ᵢ (e = ones) accepted from the factors: beyond it the triangular
/// solves amplify rounding more than any preconditioner is worth, and a larger shift is
/// tried (a breakdown like a zero pivot).
pub const MAX_GROWTH: f64 = 1e8;

/// The largest relative error of the triangular solves in the solve's own precision
/// accepted from the factors: M⁻¹(A e) by [`TriFactor`]s in f32 against the same in f64
/// (f64 factors are not tested: their error is ~10⁻⁹ where f32's reaches 1). Beyond it a
/// larger shift is tried, as for a breakdown. ILUT's factors can pass the growth test and
/// still cancel: those of `cavity2d:24:1000` (rows matched, shift 10⁻⁴) give |M⁻¹(A e)| ≤ 78
/// through |L⁻¹(A e)| up to 5·10⁶, so their f32 solves err by 40× the result and f32 GMRES
/// stagnated, as did `cavity2d:32:100`'s at 5·10⁻² (a residual gap); `waveguide2d:48:0.1`'s
/// at 1.2·10⁻⁴ converge as in f64.
pub const MAX_ROUNDING: f64 = 1e-3;

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
    /// The row whose pivot broke down in the last failed attempt (the shift notice names it).
    pub broke_at: Option<usize>,
    /// The relative error of the solves in the working precision ([`MAX_ROUNDING`]) of the
    /// last attempt rejected for it, when that was the last rejection (the notice says so).
    pub rejected_rounding: Option<f64>,
    /// Whether this is IC(0) (U = D·Lᵀ, positive pivots) rather than ILU(0).
    pub symmetric: bool,
    /// "ILU(0)", "IC(0)" or "ILUT": which factorisation made these factors (notices).
    pub label: &'static str,
    /// D_r and D_c of the equilibration: the factors are those of D_r·A·D_c, so
    /// M = D_r⁻¹·L·U·D_c⁻¹.
    row_scale: Vec<f64>,
    col_scale: Vec<f64>,
    /// max |M⁻¹(A e)|ᵢ, e = ones (≈ 1 for good factors; above [`MAX_GROWTH`] only when no
    /// shift brought it below, and then the least of the attempts).
    pub growth: f64,
    /// The relative error of M⁻¹(A e) by the triangular solves in the working precision
    /// against f64 (0 for f64 factors; above [`MAX_ROUNDING`] only when no shift brought it
    /// below).
    pub rounding: f64,
}

impl Ilu0 {
    /// Factors `a` (square, finite), shifting as the module docs say when a pivot breaks down.
    /// Errors: not square, non-finite entries, a zero row (singular), or every shift in
    /// [`SHIFTS`] breaking down.
    pub fn factor<T: Scalar>(a: &Csr<T>) -> Result<Self> {
        Self::factor_as(a, false)
    }

    /// IC(0) of a symmetric `a`: pivots must be positive (else the shift), and U = D·Lᵀ.
    /// Errors as [`Self::factor`], and for a matrix that is not symmetric (pattern and values
    /// to 1e-12 relative).
    pub fn factor_ic0<T: Scalar>(a: &Csr<T>) -> Result<Self> {
        a.require_square()?;
        if let Some((i, j)) = asymmetry(a) {
            return Err(KrylovError::InvalidMatrix(format!(
                "IC(0) needs a symmetric matrix, but a[{i}][{j}] != a[{j}][{i}] (use ilu0)"
            )));
        }
        let mut m = Self::factor_as(a, true)?;
        // U = D·Lᵀ exactly: uᵢⱼ = uᵢᵢ·lⱼᵢ (the elimination gives it up to rounding).
        for i in 0..m.n {
            for p in m.row_ptr[i]..m.diag[i] {
                let j = m.col_idx[p];
                let l_ij = m.values[p];
                let q = m.row_ptr[j]
                    + m.col_idx[m.row_ptr[j]..m.row_ptr[j + 1]]
                        .binary_search(&i)
                        .expect("a symmetric pattern");
                m.values[q] = m.values[m.diag[j]] * l_ij;
            }
        }
        Ok(m)
    }

    fn factor_as<T: Scalar>(a: &Csr<T>, symmetric: bool) -> Result<Self> {
        let label = if symmetric { "IC(0)" } else { "ILU(0)" };
        Self::factor_with(a, label, symmetric, |base, shift| {
            base.factor(shift, symmetric).map(|values| Factored {
                row_ptr: base.row_ptr.clone(),
                col_idx: base.col_idx.clone(),
                values,
                diag: base.diag.clone(),
            })
        })
    }

    /// The shift loop shared by ILU(0), IC(0) and ILUT: `factor(pattern, α)` factors the
    /// equilibrated A + α·diag(row maxima) or names the row whose pivot broke down; the
    /// first factors that pass the growth test are the answer.
    pub(super) fn factor_with<T: Scalar>(
        a: &Csr<T>,
        label: &'static str,
        symmetric: bool,
        factor: impl Fn(&Pattern, f64) -> std::result::Result<Factored, usize>,
    ) -> Result<Self> {
        a.require_square()?;
        a.check_finite()?;
        let base = Pattern::of(a)?;
        let mut broke_at = None;
        let mut rejected_rounding = None;
        // The factors least beyond the growth and rounding bounds among those whose pivots
        // all passed: the answer when every shift fails them (reported by `growth`,
        // `rounding`).
        let mut best: Option<Ilu0> = None;
        let excess = |m: &Ilu0| (m.growth / MAX_GROWTH).max(m.rounding / MAX_ROUNDING);
        for (attempt, shift) in std::iter::once(0.0).chain(SHIFTS).enumerate() {
            match factor(&base, shift) {
                Ok(f) => {
                    let mut m = Ilu0 {
                        n: base.n,
                        row_ptr: f.row_ptr,
                        col_idx: f.col_idx,
                        values: f.values,
                        diag: f.diag,
                        shift,
                        attempts: attempt + 1,
                        broke_at,
                        rejected_rounding,
                        symmetric,
                        label,
                        row_scale: base.row_scale.clone(),
                        col_scale: base.col_scale.clone(),
                        growth: 0.0,
                        rounding: 0.0,
                    };
                    let (row, growth) = m.growth(a);
                    m.growth = growth;
                    if growth <= MAX_GROWTH {
                        m.rounding = m.rounding(a);
                        if m.rounding <= MAX_ROUNDING {
                            return Ok(m);
                        }
                        rejected_rounding = Some(m.rounding);
                    } else {
                        broke_at = Some(row);
                        rejected_rounding = None;
                    }
                    if best.as_ref().is_none_or(|b| excess(&m) < excess(b)) {
                        best = Some(m);
                    }
                }
                Err(row) => {
                    broke_at = Some(row);
                    rejected_rounding = None;
                }
            }
        }
        if let Some(mut m) = best.filter(|m| m.growth.is_finite()) {
            m.attempts = SHIFTS.len() + 1;
            m.broke_at = broke_at;
            m.rejected_rounding = rejected_rounding;
            return Ok(m);
        }
        Err(KrylovError::InvalidMatrix(format!(
            "{label} breaks down at row {} even with the diagonal shifted by {} times the row maxima",
            broke_at.unwrap_or(0),
            SHIFTS[SHIFTS.len() - 1]
        )))
    }

    /// The stability test of the factors (Chow & Saad's condest): with e = (1, …, 1),
    /// M⁻¹(A e) should be near e when M ≈ A; tiny pivots make the triangular solves grow
    /// without bound instead (ILU(0) of west0479 with a 10⁻⁴ shift reaches 1e98). Returns the
    /// row of the largest entry and that entry (∞ when not finite).
    fn growth<T: Scalar>(&self, a: &Csr<T>) -> (usize, f64) {
        let a64: Vec<f64> = (0..self.n)
            .map(|i| {
                let (_, v) = a.row(i);
                v.iter().map(|v| v.as_f64()).sum()
            })
            .collect();
        let mut z = vec![0.0f64; self.n];
        self.apply(&a64, &mut z);
        z.iter()
            .enumerate()
            .map(|(i, v)| {
                (
                    i,
                    if v.is_finite() {
                        v.abs()
                    } else {
                        f64::INFINITY
                    },
                )
            })
            .fold((0, 0.0), |acc, x| if x.1 > acc.1 { x } else { acc })
    }

    /// The relative error ‖z_T − z‖∞ / ‖z‖∞ of z = M⁻¹(A e) solved by the [`TriFactor`]s in
    /// `T` (what the CPU twin and the GPU kernels run) against [`Self::apply`] in f64; 0 for
    /// f64. ∞ when not finite.
    fn rounding<T: Scalar>(&self, a: &Csr<T>) -> f64 {
        if T::PRECISION == crate::base::scalar::Precision::F64 {
            return 0.0;
        }
        let ae: Vec<f64> = (0..self.n)
            .map(|i| a.row(i).1.iter().map(|v| v.as_f64()).sum())
            .collect();
        let mut z = vec![0.0f64; self.n];
        self.apply(&ae, &mut z);
        let ae_t: Vec<T> = ae.iter().map(|&v| T::from_f64(v)).collect();
        let (mut y_t, mut z_t) = (vec![T::zero(); self.n], vec![T::zero(); self.n]);
        self.lower::<T>().solve(&ae_t, &mut y_t);
        self.upper::<T>().solve(&y_t, &mut z_t);
        let scale = z.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let err = z
            .iter()
            .zip(&z_t)
            .fold(0.0f64, |m, (w, g)| m.max((w - g.as_f64()).abs()));
        if scale == 0.0 && err == 0.0 {
            return 0.0; // A e = 0: nothing to measure
        }
        let rel = err / scale;
        if rel.is_finite() { rel } else { f64::INFINITY }
    }

    /// L, unit lower, as a [`TriFactor`] in `T`.
    /// (With the equilibration folded in: D_r⁻¹·L, so its solve takes r itself.)
    pub fn lower<T: Scalar>(&self) -> TriFactor<T> {
        TriFactor::from_rows(self.n, true, |i| {
            let d = self.row_scale[i];
            let strict = (self.row_ptr[i]..self.diag[i])
                .map(|p| (self.col_idx[p], self.values[p] / d))
                .collect();
            (strict, 1.0 / d)
        })
    }

    /// U, upper with the pivots on its diagonal, as a [`TriFactor`] in `T`.
    /// (With the equilibration folded in: U·D_c⁻¹, so its solve returns z itself.)
    pub fn upper<T: Scalar>(&self) -> TriFactor<T> {
        TriFactor::from_rows(self.n, false, |i| {
            let strict = (self.diag[i] + 1..self.row_ptr[i + 1])
                .map(|p| {
                    let j = self.col_idx[p];
                    (j, self.values[p] / self.col_scale[j])
                })
                .collect();
            (strict, self.values[self.diag[i]] / self.col_scale[i])
        })
    }

    /// Uᵀ (lower) and Lᵀ (unit upper), the factors of M⁻ᵀ r = L⁻ᵀ U⁻ᵀ r, stored explicitly
    /// so the transposed solves run the same row kernels (no scattered column access).
    pub fn transposed<T: Scalar>(&self) -> (TriFactor<T>, TriFactor<T>) {
        // Column lists of the strict parts: (row, value) in increasing row order.
        let mut upper_cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); self.n];
        let mut lower_cols: Vec<Vec<(usize, f64)>> = vec![Vec::new(); self.n];
        for i in 0..self.n {
            for p in self.row_ptr[i]..self.row_ptr[i + 1] {
                let j = self.col_idx[p];
                // D_c⁻¹·Uᵀ (row j of Uᵀ scaled by 1/d_cj) and Lᵀ·D_r⁻¹ (column i by 1/d_ri).
                if j > i {
                    upper_cols[j].push((i, self.values[p] / self.col_scale[j]));
                } else if j < i {
                    lower_cols[j].push((i, self.values[p] / self.row_scale[i]));
                }
            }
        }
        let ut = TriFactor::from_rows(self.n, true, |i| {
            (
                upper_cols[i].clone(),
                self.values[self.diag[i]] / self.col_scale[i],
            )
        });
        let lt = TriFactor::from_rows(self.n, false, |i| {
            (lower_cols[i].clone(), 1.0 / self.row_scale[i])
        });
        (ut, lt)
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
        let lu: f64 = (0..=i.min(j)).map(|k| lower(i, k) * upper(k, j)).sum();
        lu / (self.row_scale[i] * self.col_scale[j])
    }

    fn entry(&self, i: usize, j: usize) -> Option<f64> {
        let row = self.row_ptr[i]..self.row_ptr[i + 1];
        self.col_idx[row.clone()]
            .binary_search(&j)
            .ok()
            .map(|p| self.values[row.start + p])
    }

    /// z = D_c U⁻¹ L⁻¹ D_r r: forward substitution with the unit-lower L, then back
    /// substitution with U (computed in f64, stored in `T`).
    pub fn apply<T: Scalar>(&self, r: &[T], z: &mut [T]) {
        let mut y: Vec<f64> = r
            .iter()
            .zip(&self.row_scale)
            .map(|(v, d)| v.as_f64() * d)
            .collect();
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
        for ((z, y), d) in z.iter_mut().zip(y).zip(&self.col_scale) {
            *z = T::from_f64(y * d);
        }
    }

    /// z = L⁻ᵀ U⁻ᵀ r (BiCG's shadow system): forward substitution with Uᵀ, then back
    /// substitution with the unit-upper Lᵀ, both by columns of the stored rows.
    pub fn apply_transposed<T: Scalar>(&self, r: &[T], z: &mut [T]) {
        let mut y: Vec<f64> = r
            .iter()
            .zip(&self.col_scale)
            .map(|(v, d)| v.as_f64() * d)
            .collect();
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
        for ((z, y), d) in z.iter_mut().zip(y).zip(&self.row_scale) {
            *z = T::from_f64(y * d);
        }
    }
}

/// The first (i, j) with aᵢⱼ ≠ aⱼᵢ beyond 1e-12 relative (a missing entry counts as 0).
fn asymmetry<T: Scalar>(a: &Csr<T>) -> Option<(usize, usize)> {
    let t = a.transpose();
    for i in 0..a.nrows() {
        let (ca, va) = a.row(i);
        let (ct, vt) = t.row(i);
        let get = |c: &[u32], v: &[T], j: u32| -> f64 {
            c.binary_search(&j).map_or(0.0, |p| v[p].as_f64())
        };
        for &j in ca.iter().chain(ct) {
            let (x, y) = (get(ca, va, j), get(ct, vt, j));
            if (x - y).abs() > 1e-12 * x.abs().max(y.abs()) {
                return Some((i, j as usize));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Coo;
    use crate::matrix::generators;

    fn csr(n: usize, entries: &[(usize, usize, f64)]) -> Csr<f64> {
        Csr::from_triplets(n, entries).unwrap()
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
