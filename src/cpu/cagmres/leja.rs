//! Newton-basis shifts: Ritz values of a small upper Hessenberg matrix, in (modified) Leja
//! order (paper 002 §IV-A; Bai, Hu & Reichel 1994; Hoemmen's thesis §7.3.2).
//!
//! The Leja order takes first the value of largest modulus, then each time the value that
//! maximises the product of its distances to those already taken (in logarithms, so that
//! nothing overflows). The *modified* order keeps a complex-conjugate pair together: when a
//! value with Im > 0 is taken its conjugate follows at once. A pair (a ± ib) becomes the real
//! quadratic step of [`super::powers`]. Values with |Im| ≤ 1e-10·|θ| count as real.
//!
//! ```
//! use krylov_wgpu::cpu::cagmres::leja::{Shift, leja_order};
//! let s = leja_order(&[Shift::real(1.0), Shift::real(4.0), Shift::real(2.0), Shift::real(3.0)]);
//! let re: Vec<f64> = s.iter().map(|t| t.re).collect();
//! assert_eq!(re, [4.0, 1.0, 2.0, 3.0]); // 2.0: |2−4|·|2−1| = 2 ties 3.0's |3−4|·|3−1| = 2, first wins
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use nalgebra::{DMatrix, Schur};

use crate::base::error::{KrylovError, Result};

pub use crate::base::ca::Shift;

/// Relative size of an imaginary part below which a Ritz value counts as real.
pub const REAL_TOL: f64 = 1e-10;

/// The eigenvalues of the square matrix `h` (the k × k upper Hessenberg of an Arnoldi
/// cycle), by nalgebra's real Schur form; pairs as (a, +b), (a, −b). Errors: `h` not square
/// or not finite, or the Schur iteration not converging.
pub fn ritz_values(h: &DMatrix<f64>) -> Result<Vec<Shift>> {
    if !h.is_square() {
        return Err(KrylovError::NotSquare {
            rows: h.nrows(),
            cols: h.ncols(),
        });
    }
    if let Some(index) = h.iter().position(|v| !v.is_finite()) {
        return Err(KrylovError::NonFinite {
            what: "Hessenberg matrix",
            index,
        });
    }
    let schur =
        Schur::try_new(h.clone(), f64::EPSILON, 100 * h.nrows().max(10)).ok_or_else(|| {
            KrylovError::InvalidMatrix(
                "the Schur iteration for the Ritz values did not converge".into(),
            )
        })?;
    let mut out = Vec::new();
    for z in schur.complex_eigenvalues().iter() {
        if z.im.abs() <= REAL_TOL * z.norm() {
            out.push(Shift::real(z.re));
        } else if z.im > 0.0 {
            out.push(Shift { re: z.re, im: z.im });
            out.push(Shift {
                re: z.re,
                im: -z.im,
            });
        }
    }
    Ok(out)
}

/// The values in modified Leja order (see the module docs). Only values with Im ≥ 0 are
/// candidates; each complex one is followed by its conjugate (the input's Im < 0 entries are
/// dropped, their conjugates regenerate them).
pub fn leja_order(values: &[Shift]) -> Vec<Shift> {
    let mut cand: Vec<Shift> = values
        .iter()
        .filter(|z| z.im >= 0.0)
        .map(|&z| {
            if z.im <= REAL_TOL * z.re.hypot(z.im) {
                Shift::real(z.re)
            } else {
                z
            }
        })
        .collect();
    let mut out: Vec<Shift> = Vec::with_capacity(values.len());
    while !cand.is_empty() {
        let score = |z: &Shift| -> f64 {
            if out.is_empty() {
                z.re.hypot(z.im)
            } else {
                out.iter().map(|&o| z.dist_ln(o)).sum()
            }
        };
        let mut best = 0;
        let mut best_score = f64::NEG_INFINITY;
        for (i, z) in cand.iter().enumerate() {
            let sc = score(z);
            if sc > best_score {
                best = i;
                best_score = sc;
            }
        }
        let z = cand.remove(best);
        out.push(z);
        if z.im > 0.0 {
            out.push(Shift {
                re: z.re,
                im: -z.im,
            });
        }
    }
    out
}

/// The `s` shifts of a Newton basis from `ritz`: the first `s` in modified Leja order; a pair
/// cut by the end keeps only its real part (a real shift), so that a sequence reused
/// cyclically never splits a pair. Fewer than `s` Ritz values are repeated cyclically.
/// `s` = 0 or no Ritz value: an empty sequence (the monomial basis).
pub fn newton_shifts(ritz: &[Shift], s: usize) -> Vec<Shift> {
    let ordered = leja_order(ritz);
    if ordered.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Shift> = (0..s).map(|k| ordered[k % ordered.len()]).collect();
    // Repair pairs split by the cyclic repetition or by the end.
    let mut k = 0;
    while k < out.len() {
        if out[k].im > 0.0 {
            if k + 1 < out.len() && out[k + 1].im == -out[k].im && out[k + 1].re == out[k].re {
                k += 2;
                continue;
            }
            out[k] = Shift::real(out[k].re);
        } else if out[k].im < 0.0 {
            out[k] = Shift::real(out[k].re);
        }
        k += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leja_keeps_pairs_together_and_maximises_distance() {
        let vals = [
            Shift::real(0.5),
            Shift { re: 1.0, im: 2.0 },
            Shift { re: 1.0, im: -2.0 },
            Shift::real(-3.0),
            Shift::real(0.4),
        ];
        let o = leja_order(&vals);
        assert_eq!(o.len(), 5);
        assert_eq!(o[0], Shift::real(-3.0));
        // From −3 the pair 1 ± 2i is at √20 ≈ 4.47, 0.5 at 3.5: the pair comes next, together.
        assert_eq!(o[1], Shift { re: 1.0, im: 2.0 });
        assert_eq!(o[2], Shift { re: 1.0, im: -2.0 });
        // Then 0.5: 3.5·|0.5 − (1 ± 2i)|² = 3.5·4.25 = 14.9 beats 0.4: 3.4·4.36 = 14.8.
        assert_eq!(o[3], Shift::real(0.5));
    }

    #[test]
    fn ritz_values_of_a_rotation_block_are_a_pair() {
        let h = DMatrix::from_row_slice(3, 3, &[2.0, -5.0, 1.0, 5.0, 2.0, 0.0, 0.0, 0.0, 7.0]);
        let mut r = ritz_values(&h).unwrap();
        r.sort_by(|a, b| {
            a.re.partial_cmp(&b.re)
                .unwrap()
                .then(b.im.partial_cmp(&a.im).unwrap())
        });
        assert!(
            (r[0].re - 2.0).abs() < 1e-12 && (r[0].im - 5.0).abs() < 1e-12,
            "{r:?}"
        );
        assert!((r[1].im + 5.0).abs() < 1e-12);
        assert!((r[2].re - 7.0).abs() < 1e-12 && r[2].im == 0.0);
        assert!(ritz_values(&DMatrix::zeros(2, 3)).is_err());
    }

    #[test]
    fn cut_pairs_become_real() {
        let ritz = [
            Shift::real(10.0),
            Shift { re: 0.0, im: 1.0 },
            Shift { re: 0.0, im: -1.0 },
        ];
        let s2 = newton_shifts(&ritz, 2);
        assert_eq!(s2, [Shift::real(10.0), Shift::real(0.0)]);
        let s3 = newton_shifts(&ritz, 3);
        assert_eq!(s3[1], Shift { re: 0.0, im: 1.0 });
        assert_eq!(s3[2], Shift { re: 0.0, im: -1.0 });
        // Cyclic repetition: 10, pair, 10, pair(cut) → the last entry real.
        let s5 = newton_shifts(&ritz, 5);
        assert_eq!(s5[3], Shift::real(10.0));
        assert_eq!(s5[4], Shift::real(0.0));
        assert!(newton_shifts(&[], 4).is_empty());
    }
}
