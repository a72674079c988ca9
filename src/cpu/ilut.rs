//! ILUT, Saad's dual-threshold incomplete LU (`--precond ilut`), on the host in f64: the
//! factors are not confined to A's pattern — fill-in is kept where it is large — so ILUT
//! handles the indefinite and badly scaled matrices on which ILU(0) is unstable (dielectric
//! waveguide mode operators, saddle points after a matching). Row i is eliminated with the
//! rows of U above it (IKJ order); an entry is dropped when it falls below
//! [`ILUT_DROP`]·‖aᵢ‖₂ (aᵢ row i of the equilibrated A), and each of L's and U's parts of the
//! row keeps at most its count in A plus [`ILUT_FILL`] entries, the largest. The diagonal is
//! always kept. Equilibration, the pivot shift on a breakdown and the growth test are those
//! of ILU(0) ([`Ilu0`]); the factors come back as an [`Ilu0`] (any pattern), so the GPU and
//! CPU triangular solves, the transposed solves of BiCG and the reports are shared.
//!
//! ILUT does not pivot: with `--reorder auto` a non-CG solve with ILUT first permutes rows
//! by a maximum-product matching (static pivoting, as PARDISO and ILUPACK do by default for
//! nonsymmetric matrices); on a matrix whose diagonal already is the best matching (every
//! diagonally dominant one) that changes nothing.
//!
//! ```
//! use krylov_wgpu::cpu::ilut::factor_ilut;
//! use krylov_wgpu::matrix::generators::poisson_2d_fd;
//! let a = poisson_2d_fd::<f64>(8);
//! let m = factor_ilut(&a)?;
//! assert!(m.nnz() > a.nnz()); // fill-in kept
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::ilu::{Factored, Ilu0, PIVOT_RTOL, Pattern};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// Relative drop tolerance τ: an entry of row i below τ·‖aᵢ‖₂ is dropped. Measured (CPU
/// reference, GMRES(30), rtol 1e-8): τ = 1e-2 keeps the factors at 0.7–3× A's entries on
/// PDE, reservoir and circuit matrices (26× on a matched saddle point) and converges on all
/// of them; τ = 1e-3 or 1e-4 with a tight fill cap is worse than ILU(0) (the cap keeps the
/// largest entries of an undropped row, which is not a stable factor).
pub const ILUT_DROP: f64 = 1e-2;

/// Extra entries (beyond the row's own count in A) each of L's and U's parts of a row may
/// keep: a guard against runaway memory, not the quality control (that is [`ILUT_DROP`]) —
/// a cap of 10–50 made GMRES stagnate on the waveguide and cavity matrices.
pub const ILUT_FILL: usize = 1000;

/// ILUT(τ = [`ILUT_DROP`], p = [`ILUT_FILL`]) of a square, finite `a` (module docs), shifted
/// like ILU(0) when a pivot breaks down or the factors fail the growth test.
/// Errors: not square, non-finite entries, a zero row, every shift breaking down.
pub fn factor_ilut<T: Scalar>(a: &Csr<T>) -> Result<Ilu0> {
    Ilu0::factor_with(a, "ILUT", false, |base, shift| {
        eliminate(base, shift, ILUT_DROP, ILUT_FILL)
    })
}

/// The ILUT elimination of the equilibrated `base` + shift·diag(row maxima); `Err(row)` at
/// the first pivot that breaks down.
fn eliminate(
    base: &Pattern,
    shift: f64,
    drop: f64,
    fill: usize,
) -> std::result::Result<Factored, usize> {
    let n = base.n;
    // U's rows as they are finished: (column, value), diagonal first.
    let mut u_rows: Vec<Vec<(usize, f64)>> = Vec::with_capacity(n);
    let mut l_rows: Vec<Vec<(usize, f64)>> = Vec::with_capacity(n);
    // The working row w, dense, with the list of its non-zero positions.
    let mut w = vec![0.0f64; n];
    let mut present = vec![false; n];
    let mut nonzeros: Vec<usize> = Vec::new();
    let mut lower = BinaryHeap::new();
    for i in 0..n {
        let row = base.row_ptr[i]..base.row_ptr[i + 1];
        let norm = base.values[row.clone()]
            .iter()
            .map(|v| v * v)
            .sum::<f64>()
            .sqrt();
        let tau = drop * norm;
        let (mut a_lower, mut a_upper) = (0usize, 0usize);
        for p in row {
            let j = base.col_idx[p];
            let mut v = base.values[p];
            if j == i {
                v += shift * base.row_max[i];
            }
            w[j] = v;
            present[j] = true;
            nonzeros.push(j);
            match j.cmp(&i) {
                std::cmp::Ordering::Less => {
                    lower.push(Reverse(j));
                    a_lower += 1;
                }
                std::cmp::Ordering::Greater => a_upper += 1,
                std::cmp::Ordering::Equal => {}
            }
        }
        // Eliminate with the rows k < i in increasing order (fill-in below i joins the heap).
        let mut l_row = Vec::new();
        while let Some(Reverse(k)) = lower.pop() {
            let l_ik = w[k] / u_rows[k][0].1;
            w[k] = 0.0;
            if l_ik.abs() < tau {
                continue;
            }
            l_row.push((k, l_ik));
            for &(j, u_kj) in &u_rows[k][1..] {
                if !present[j] {
                    present[j] = true;
                    nonzeros.push(j);
                    w[j] = 0.0;
                    if j < i {
                        lower.push(Reverse(j));
                    }
                }
                w[j] -= l_ik * u_kj;
            }
        }
        let pivot = w[i];
        let mut u_row: Vec<(usize, f64)> = nonzeros
            .iter()
            .filter(|&&j| j > i && w[j].abs() >= tau && w[j] != 0.0)
            .map(|&j| (j, w[j]))
            .collect();
        for &j in &nonzeros {
            w[j] = 0.0;
            present[j] = false;
        }
        nonzeros.clear();
        if !(pivot.is_finite() && pivot.abs() > PIVOT_RTOL * base.row_max[i]) {
            return Err(i);
        }
        keep_largest(&mut l_row, a_lower + fill);
        keep_largest(&mut u_row, a_upper + fill);
        u_row.insert(0, (i, pivot));
        l_rows.push(l_row);
        u_rows.push(u_row);
    }
    // Assemble CSR with sorted columns: L's part, the diagonal, U's part.
    let mut f = Factored {
        row_ptr: Vec::with_capacity(n + 1),
        col_idx: Vec::new(),
        values: Vec::new(),
        diag: Vec::with_capacity(n),
    };
    f.row_ptr.push(0);
    for (l, u) in l_rows.iter().zip(&u_rows) {
        for &(j, v) in l {
            f.col_idx.push(j);
            f.values.push(v);
        }
        f.diag.push(f.col_idx.len());
        for &(j, v) in u {
            f.col_idx.push(j);
            f.values.push(v);
        }
        f.row_ptr.push(f.col_idx.len());
    }
    Ok(f)
}

/// Keeps the `keep` entries of largest magnitude, sorted by column.
fn keep_largest(row: &mut Vec<(usize, f64)>, keep: usize) {
    if row.len() > keep {
        row.select_nth_unstable_by(keep, |x, y| y.1.abs().total_cmp(&x.1.abs()));
        row.truncate(keep);
    }
    row.sort_unstable_by_key(|e| e.0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::generators;

    /// |M⁻¹(A x) − x|∞ / |x|∞: how well M approximates A (0 for the exact LU).
    fn quality(a: &Csr<f64>, m: &Ilu0) -> f64 {
        let n = a.nrows();
        let x: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.1).sin()).collect();
        let ax = a.mul_vec(&x).unwrap();
        let mut z = vec![f64::NAN; n];
        m.apply(&ax, &mut z);
        z.iter()
            .zip(&x)
            .map(|(z, x)| (z - x).abs())
            .fold(0.0, f64::max)
            / 2.0
    }

    #[test]
    fn no_dropping_and_unbounded_fill_is_the_exact_lu() {
        let a = generators::convection_diffusion_2d::<f64>(9, 100.0);
        let base = Pattern::of(&a).unwrap();
        let f = eliminate(&base, 0.0, 0.0, usize::MAX / 2).unwrap();
        let m = Ilu0::factor_with(&a, "ILUT", false, |b, s| eliminate(b, s, 0.0, 1 << 20)).unwrap();
        assert_eq!(m.nnz(), f.values.len());
        assert!(quality(&a, &m) < 1e-12, "{}", quality(&a, &m));
    }

    #[test]
    fn ilut_keeps_fill_and_beats_ilu0_on_a_laplacian() {
        use crate::base::options::{Method, Precond, SolveOptions};
        let a = generators::poisson_2d_fd::<f64>(20);
        let ilut = factor_ilut(&a).unwrap();
        let ilu0 = Ilu0::factor(&a).unwrap();
        assert!(ilut.nnz() > ilu0.nnz());
        assert!(ilut.nnz() <= a.nnz() + 2 * ILUT_FILL * a.nrows());
        assert_eq!((ilut.shift, ilut.label), (0.0, "ILUT"));
        let b = a.mul_vec(&vec![1.0; a.nrows()]).unwrap();
        let iterations = |precond| {
            let o = SolveOptions {
                method: Method::Gmres,
                precond,
                rtol: 1e-10,
                ..Default::default()
            };
            let s = crate::cpu::solve(&a, &b, None, &o).unwrap();
            assert!(s.report.converged, "{precond}");
            s.report.iterations
        };
        let (t, z) = (iterations(Precond::Ilut), iterations(Precond::Ilu0));
        assert!(3 * t <= 2 * z, "ILUT {t} vs ILU(0) {z} iterations");
    }

    #[test]
    fn a_zero_pivot_is_shifted_not_nan() {
        // a00 = 0 and nothing below to eliminate it with: the first pivot is zero.
        let a = Csr::from_triplets(
            3,
            &[
                (0, 0, 0.0),
                (0, 1, 1.0),
                (1, 0, 1.0),
                (1, 1, 2.0),
                (2, 2, 3.0),
                (1, 2, 0.5),
            ],
        )
        .unwrap();
        let m = factor_ilut(&a).unwrap();
        assert!(m.shift > 0.0 && m.broke_at == Some(0));
        assert!(m.pivots().iter().all(|p| p.is_finite() && *p != 0.0));
    }

    /// The f32 rounding of ILUT's unshifted factors of `a`: every shifted attempt "breaks
    /// down", so the unshifted factors come back with their measured rounding.
    fn unshifted_rounding(a: &Csr<f32>) -> f64 {
        Ilu0::factor_with(a, "ILUT", false, |b, s| {
            if s == 0.0 {
                eliminate(b, s, ILUT_DROP, ILUT_FILL)
            } else {
                Err(0)
            }
        })
        .unwrap()
        .rounding
    }

    #[test]
    fn f32_factors_whose_solves_cancel_take_a_larger_shift() {
        use crate::base::options::{Method, Precond, SolveOptions};
        // A driven-cavity saddle point, rows matched (as `--reorder auto` does for ILUT):
        // ILUT's unshifted factors pass the growth test, but their f32 solves err by ~5e-2.
        let a = generators::cavity_2d::<f64>(32, 100.0);
        let a = crate::matrix::matching::max_product_matching(&a)
            .unwrap()
            .permute_rows(&a);
        let f64_factors = factor_ilut(&a).unwrap();
        assert_eq!((f64_factors.shift, f64_factors.rounding), (0.0, 0.0));
        let a32: Csr<f32> = a.cast().unwrap();
        let f = factor_ilut(&a32).unwrap();
        // Shifted (every shift's factors were timed against the bound; the least inaccurate
        // are kept when none meets it), and far more accurate than the unshifted ones.
        assert!(f.shift > 0.0, "{f:?}");
        assert!(
            f.rounding < 0.1 * unshifted_rounding(&a32),
            "{}",
            f.rounding
        );
        assert!(crate::cpu::precond::shift_notice(&f).is_some());
        // GMRES in f32 converges with them (it stagnated with the unshifted ones).
        let b = a32.mul_vec(&vec![1.0; a32.nrows()]).unwrap();
        let o = SolveOptions {
            method: Method::Gmres,
            precond: Precond::Ilut,
            rtol: 1e-5,
            ..Default::default()
        };
        let s = crate::cpu::solve(&a32, &b, None, &o).unwrap();
        assert!(s.report.converged, "{:?}", s.report.reason);
    }
}
