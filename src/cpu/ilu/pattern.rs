//! ILU(0)'s input and output on the host: A's pattern with every diagonal entry present,
//! equilibrated (Ruiz, by powers of two), and its IKJ elimination with an optional shift;
//! the factors in CSR with each row's diagonal position ([`Factored`]), shared with ILUT
//! (`cpu/ilut.rs`).

use super::PIVOT_RTOL;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// A's pattern with every diagonal entry present, its values in f64 (equilibrated) and the
/// row maxima.
pub(in crate::cpu) struct Pattern {
    pub(in crate::cpu) n: usize,
    pub(in crate::cpu) row_ptr: Vec<usize>,
    pub(in crate::cpu) col_idx: Vec<usize>,
    pub(in crate::cpu) values: Vec<f64>,
    pub(in crate::cpu) diag: Vec<usize>,
    pub(in crate::cpu) row_max: Vec<f64>,
    pub(in crate::cpu) row_scale: Vec<f64>,
    pub(in crate::cpu) col_scale: Vec<f64>,
}

/// Factors in CSR (sorted columns) with the position of each row's diagonal entry: L strictly
/// below it (unit diagonal implied), U from it on.
pub(in crate::cpu) struct Factored {
    pub(in crate::cpu) row_ptr: Vec<usize>,
    pub(in crate::cpu) col_idx: Vec<usize>,
    pub(in crate::cpu) values: Vec<f64>,
    pub(in crate::cpu) diag: Vec<usize>,
}

/// Sweeps of Ruiz's equilibration (each brings every row and column maximum closer to 1).
const EQUILIBRATION_SWEEPS: usize = 5;

impl Pattern {
    /// Ruiz equilibration: D_r, D_c with every row and column of D_r·A·D_c of largest
    /// magnitude ≈ 1 (powers of two, so scaling is exact). A symmetric A keeps D_r = D_c.
    /// Rows of very different scales otherwise make ILU(0)'s pivots meaningless (west0479).
    fn equilibrate(&mut self) {
        let n = self.n;
        for _ in 0..EQUILIBRATION_SWEEPS {
            let (mut rmax, mut cmax) = (vec![0.0f64; n], vec![0.0f64; n]);
            for (i, rmax) in rmax.iter_mut().enumerate() {
                for p in self.row_ptr[i]..self.row_ptr[i + 1] {
                    let v = self.values[p].abs();
                    *rmax = rmax.max(v);
                    cmax[self.col_idx[p]] = cmax[self.col_idx[p]].max(v);
                }
            }
            let factor = |m: f64| if m > 0.0 { pow2(1.0 / m.sqrt()) } else { 1.0 };
            let (fr, fc): (Vec<f64>, Vec<f64>) = (
                rmax.iter().map(|&m| factor(m)).collect(),
                cmax.iter().map(|&m| factor(m)).collect(),
            );
            for i in 0..n {
                for p in self.row_ptr[i]..self.row_ptr[i + 1] {
                    self.values[p] *= fr[i] * fc[self.col_idx[p]];
                }
                self.row_scale[i] *= fr[i];
                self.col_scale[i] *= fc[i];
            }
        }
        for i in 0..n {
            self.row_max[i] = (self.row_ptr[i]..self.row_ptr[i + 1])
                .map(|p| self.values[p].abs())
                .fold(0.0, f64::max);
        }
    }

    pub(in crate::cpu) fn of<T: Scalar>(a: &Csr<T>) -> Result<Self> {
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
        let mut pattern = Pattern {
            n,
            row_ptr,
            col_idx,
            values,
            diag,
            row_max,
            row_scale: vec![1.0; n],
            col_scale: vec![1.0; n],
        };
        pattern.equilibrate();
        Ok(pattern)
    }

    /// The IKJ ILU(0) of A + shift·diag(row_max); `Err(row)` at the first pivot that breaks
    /// down (tiny, non-finite, or — `positive` — not positive).
    pub(in crate::cpu) fn factor(
        &self,
        shift: f64,
        positive: bool,
    ) -> std::result::Result<Vec<f64>, usize> {
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
            let signed = if positive { pivot } else { pivot.abs() };
            if !(pivot.is_finite() && signed > PIVOT_RTOL * self.row_max[i]) {
                return Err(i);
            }
        }
        Ok(v)
    }
}

/// The power of two nearest to `v` (> 0) in the log scale: scaling by it is exact.
fn pow2(v: f64) -> f64 {
    2f64.powi(v.log2().round() as i32)
}
