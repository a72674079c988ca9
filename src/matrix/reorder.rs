//! Row reordering of a linear system before a solve: P·A x = P·b.
//!
//! A row permutation changes neither the solution x nor any residual norm
//! (‖P r‖₂ = ‖r‖₂ for r = b − A x), so a solve of the reordered system is a solve of the
//! original one, reported the same way. What it changes is the diagonal, and with it the
//! preconditioners built from the diagonal: Jacobi needs every aᵢᵢ ≠ 0, ILU(0) eliminates
//! with the diagonal as pivots. A maximum-product matching
//! ([`super::matching::max_product_matching`], MC64 job 5) puts the
//! largest possible product of entries on the diagonal, zero-free whenever A is structurally
//! nonsingular.
//!
//! [`solve_reordered`] is the one call a solve entry wraps itself in (the CPU reference's
//! is `cpu::with_reordering`, which supplies the ILU(0) probe); [`Reorder::Auto`] applies the
//! matching when [`auto_reason`] says so:
//!
//! * the method is not CG (a row permutation destroys symmetry) and not the Jacobi
//!   iteration (a matched diagonal does not make it converge), and
//! * A's diagonal has a zero entry (stored as zero or missing), and
//! * M is Jacobi (which cannot invert a zero), or M is ILU(0) and the ILU(0) factors of A
//!   itself are unusable: unstable at every pivot shift (the growth test fails) or not
//!   computable. ILU(0) of A that factors as it is, or stably after a shift, is kept;
//! * or M is ILUT and A's diagonal has a zero or weak entry (|aᵢᵢ| below
//!   [`ILUT_WEAK_DIAGONAL`] of its row's largest): ILUT does not pivot, the matching is its
//!   static pivoting (as in PARDISO and ILUPACK).
//!
//! The ILU(0) condition comes from measurements (issue #14, CPU reference, rtol 1e-8):
//! on west0479 ILU(0) of A is unstable at every shift (growth 4.5e27) and no method
//! converges with it, while ILU(0) of P·A needs no shift and GMRES(30), BiCGStab and BiCG
//! converge in 234, 70 and 62 iterations. On the driven-cavity saddle point
//! ([`cavity_2d`](super::generators::cavity_2d)) ILU(0) of A factors without a shift (the
//! elimination fills the zero pressure diagonal with the Schur complement) and converges
//! 1.5–3× faster than on P·A (GMRES 466 vs 1136, BiCGStab 80 vs 123 for k = 16), so the
//! rows stay. A nonzero diagonal, however small, is left alone: on the matrices of
//! `tests/data` with a full diagonal (sherman4, pores_1, jpwh_991, add32, pde2961) the
//! matching keeps the identity, except pores_1 (smallest |aᵢᵢ|/maxⱼ|aᵢⱼ| = 2.4e-3), where
//! it moves 16 rows, saves Jacobi a third of its iterations but changes nothing for ILU(0).
//! With the cavity's unknowns interleaved cell by cell (p, u, v: the order of node-numbered
//! FEM codes) ILU(0) of A still needs no shift and converges in 73–110 iterations, while
//! after the matching no method converges; a matrix whose ILU(0) needs a shift but is then
//! stable (a tridiagonal with a₀₀ = 0) converges either way. Hence: the matching only when
//! ILU(0) of A is unusable.
//!
//! ```
//! use krylov_wgpu::matrix::{Csr, reorder::reorder_rows};
//! // [[0, 2], [3, 1]] x = [2, 4]: x = (1, 1).
//! let a = Csr::<f64>::new(2, 2, vec![0, 1, 3], vec![1, 0, 1], vec![2.0, 3.0, 1.0])?;
//! let r = reorder_rows(&a, &[2.0, 4.0])?;
//! assert_eq!(r.a.diagonal(), vec![3.0, 2.0]);
//! assert_eq!(r.b, vec![4.0, 2.0]);
//! assert_eq!(r.a.mul_vec(&[1.0, 1.0])?, r.b);
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use super::matching::max_product_matching;
use crate::base::error::Result;
pub use crate::base::options::Reorder;
use crate::base::options::{Method, Precond, SolveOptions};
use crate::base::report::Solution;
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// A system with its rows permuted: `a` = P·A, `b` = P·b.
#[derive(Debug, Clone)]
pub struct Reordered<T> {
    /// P·A.
    pub a: Csr<T>,
    /// P·b.
    pub b: Vec<T>,
    /// `row_perm[i]` = the row of the original system now at row i.
    pub row_perm: Vec<usize>,
    /// For a symmetric permutation (RCM: `a` = P·A·Pᵀ): `col_perm[i]` = the unknown of the
    /// original system numbered i, so the solution comes back as `x[col_perm[i]] = y[i]`.
    /// `None` for a row permutation (x unchanged).
    pub col_perm: Option<Vec<usize>>,
    /// Rows P moves.
    pub moved: usize,
    /// One sentence for the report (`SolveReport::reordering`).
    pub description: String,
}

/// What A's diagonal looks like to Jacobi and ILU(0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiagonalHealth {
    /// Diagonal entries that are zero (stored as zero or missing).
    pub zeros: usize,
    /// The first of them.
    pub first_zero: Option<usize>,
    /// minᵢ |aᵢᵢ| / maxⱼ |aᵢⱼ| over rows with a nonzero entry (0 with a zero diagonal
    /// entry; 1 for a diagonal that dominates every row's largest entry).
    pub min_ratio: f64,
}

/// The zero count and the smallest diagonal-to-row-maximum ratio of a square `a`.
pub fn diagonal_health<T: Scalar>(a: &Csr<T>) -> DiagonalHealth {
    let n = a.nrows().min(a.ncols());
    let (mut zeros, mut first_zero, mut min_ratio) = (0, None, 1.0f64);
    for i in 0..n {
        let (cols, vals) = a.row(i);
        let max = vals.iter().fold(0.0f64, |m, v| m.max(v.as_f64().abs()));
        let d = cols
            .binary_search(&(i as u32))
            .map_or(0.0, |k| vals[k].as_f64().abs());
        if d == 0.0 {
            zeros += 1;
            first_zero.get_or_insert(i);
        }
        if max > 0.0 {
            min_ratio = min_ratio.min(d / max);
        }
    }
    DiagonalHealth {
        zeros,
        first_zero,
        min_ratio,
    }
}

/// ILUT on a matrix with a row whose |a_ii| is below this fraction of the row's largest
/// entry runs after the matching under [`Reorder::Auto`] (static pivoting).
pub const ILUT_WEAK_DIAGONAL: f64 = 0.1;

/// Why [`Reorder::Auto`] reorders the rows of `a` for a solve with `opts` (`None`: it does
/// not): the rule in the module docs. `ilu0_trouble` is asked only for ILU(0) on a matrix
/// with a zero diagonal entry: what is wrong with the ILU(0) factors of `a` itself
/// (unstable at every shift, not computable), `None` when they are usable — then the rows
/// stay as they are (`cpu::ilu0_trouble` is the CPU reference's answer).
pub fn auto_reason<T: Scalar>(
    a: &Csr<T>,
    opts: &SolveOptions,
    ilu0_trouble: impl FnOnce(&Csr<T>) -> Option<String>,
) -> Option<String> {
    if matches!(opts.method, Method::Cg | Method::Jacobi)
        || !matches!(
            opts.precond,
            Precond::Jacobi | Precond::Ilu0 | Precond::Ilut
        )
        || !a.is_square()
    {
        return None;
    }
    let health = diagonal_health(a);
    if opts.precond == Precond::Ilut && health.zeros == 0 && health.min_ratio < ILUT_WEAK_DIAGONAL {
        return Some(format!(
            "A's diagonal is weak (smallest |a_ii| / max_j |a_ij| = {:.1e}) and ILUT does not \
             pivot: the matching is its static pivoting",
            health.min_ratio
        ));
    }
    if health.zeros == 0 {
        return None;
    }
    let zeros = format!(
        "A's diagonal has {} zero entr{} (first at row {})",
        health.zeros,
        if health.zeros == 1 { "y" } else { "ies" },
        health.first_zero.unwrap_or(0),
    );
    match opts.precond {
        Precond::Jacobi => return Some(format!("{zeros}, which Jacobi cannot invert")),
        Precond::Ilut => return Some(format!("{zeros}, and ILUT does not pivot")),
        _ => {}
    }
    ilu0_trouble(a).map(|trouble| format!("{zeros} and ILU(0) of A {trouble}"))
}

/// P·A and P·b for the maximum-product matching of `a` (always computed, even when it is
/// the identity), with a description such as "rows permuted by a maximum-product matching
/// (MC64-style): 471 of 479 rows moved, diagonal now zero-free".
///
/// # Errors
/// Those of [`max_product_matching`] (not square, non-finite, structurally singular) and a
/// `DimensionMismatch` when `b` does not have a row's length.
pub fn reorder_rows<T: Scalar>(a: &Csr<T>, b: &[T]) -> Result<Reordered<T>> {
    if b.len() != a.nrows() {
        return Err(crate::base::error::KrylovError::DimensionMismatch {
            what: "right-hand side length vs matrix rows",
            expected: a.nrows(),
            found: b.len(),
        });
    }
    let m = max_product_matching(a)?;
    let pa = m.permute_rows(a);
    let pb = m.permute_vec(b);
    let moved = m.moved();
    let n = a.nrows();
    let zero_free = pa.diagonal().iter().all(|d| *d != T::zero());
    let description = if moved == 0 {
        format!(
            "rows kept by a maximum-product matching (MC64-style): 0 of {n} rows moved, the \
             diagonal already has the largest product"
        )
    } else {
        format!(
            "rows permuted by a maximum-product matching (MC64-style): {moved} of {n} rows \
             moved, diagonal now {}",
            if zero_free {
                "zero-free".to_string()
            } else {
                // Only when a matched entry underflows in T (f32).
                format!(
                    "with {} zero entries",
                    pa.diagonal().iter().filter(|d| **d == T::zero()).count()
                )
            }
        )
    };
    Ok(Reordered {
        a: pa,
        b: pb,
        row_perm: m.row_perm,
        col_perm: None,
        moved,
        description,
    })
}

/// P·A·Pᵀ and P·b for the reverse Cuthill–McKee order of `a`'s unknowns
/// ([`super::rcm`]), with a description such as "unknowns renumbered by reverse
/// Cuthill–McKee: bandwidth 4959 → 211".
///
/// # Errors
/// `NotSquare` for a rectangular `a`, `DimensionMismatch` when `b` does not have a row's
/// length.
pub fn reorder_rcm<T: Scalar>(a: &Csr<T>, b: &[T]) -> Result<Reordered<T>> {
    a.require_square()?;
    if b.len() != a.nrows() {
        return Err(crate::base::error::KrylovError::DimensionMismatch {
            what: "right-hand side length vs matrix rows",
            expected: a.nrows(),
            found: b.len(),
        });
    }
    let order = super::rcm::rcm_order(a);
    let pa = super::rcm::permute_symmetric(a, &order);
    let pb = order.iter().map(|&o| b[o]).collect();
    let moved = order.iter().enumerate().filter(|(i, o)| i != *o).count();
    let description = format!(
        "unknowns renumbered by reverse Cuthill-McKee: bandwidth {} -> {} ({moved} of {} \
         moved)",
        super::rcm::bandwidth(a),
        super::rcm::bandwidth(&pa),
        a.nrows()
    );
    Ok(Reordered {
        a: pa,
        b: pb,
        row_perm: order.clone(),
        col_perm: Some(order),
        moved,
        description,
    })
}

/// The reordering a solve with `opts` gets under `how` (`None`: solve A x = b as it is).
///
/// [`Reorder::Auto`] reorders when [`auto_reason`] gives a reason and the matching exists
/// (a structurally singular A, or input that validation will refuse anyway — wrong sizes,
/// non-finite values — is left as it is, for the solve to report); [`Reorder::Matching`]
/// always reorders and passes the matching's errors on.
pub fn reorder_for_solve<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    opts: &SolveOptions,
    how: Reorder,
    ilu0_trouble: impl FnOnce(&Csr<T>) -> Option<String>,
) -> Result<Option<Reordered<T>>> {
    match how {
        Reorder::None => Ok(None),
        Reorder::Matching => reorder_rows(a, b).map(Some),
        Reorder::Rcm => reorder_rcm(a, b).map(Some),
        Reorder::Auto => {
            if b.len() != a.nrows() || b.iter().any(|v| !v.is_finite()) || a.check_finite().is_err()
            {
                return Ok(None);
            }
            let Some(why) = auto_reason(a, opts, ilu0_trouble) else {
                return Ok(None);
            };
            Ok(reorder_rows(a, b).ok().map(|mut r| {
                r.description = format!("{} ({why})", r.description);
                r
            }))
        }
    }
}

/// Runs `solve` on the system a solve with `opts` should see under `how`: on P·A, P·b when
/// [`reorder_for_solve`] reorders (recording the description in the report's `reordering`
/// and first note), else on `a`, `b` unchanged. x (and an initial guess) need no change, and
/// the residuals `solve` reports are those of the original system.
///
/// ```
/// use krylov_wgpu::matrix::{Csr, reorder::{Reorder, solve_reordered}};
/// use krylov_wgpu::solvers::{Method, Precond, SolveOptions};
/// let a = Csr::<f64>::new(2, 2, vec![0, 1, 3], vec![1, 0, 1], vec![2.0, 3.0, 1.0])?;
/// let opts = SolveOptions { method: Method::Gmres, precond: Precond::Jacobi, rtol: 1e-12, ..Default::default() };
/// let sol = solve_reordered(&a, &[2.0, 4.0], None, &opts, Reorder::Auto, |_| None, |a, b, x0, o| {
///     krylov_wgpu::cpu::solve_with_reorder(a, b, x0, o, Reorder::None)
/// })?;
/// assert!(sol.report.converged && sol.report.reordering.is_some());
/// assert!((sol.x[0] - 1.0).abs() < 1e-12 && (sol.x[1] - 1.0).abs() < 1e-12);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub fn solve_reordered<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    how: Reorder,
    ilu0_trouble: impl FnOnce(&Csr<T>) -> Option<String>,
    mut solve: impl FnMut(&Csr<T>, &[T], Option<&[T]>, &SolveOptions) -> Result<Solution<T>>,
) -> Result<Solution<T>> {
    // Balancing (when asked) is the innermost transformation: of the reordered system.
    let mut solve = |a: &Csr<T>, b: &[T], x0: Option<&[T]>| {
        if opts.equilibrate {
            super::equilibrate::solve_equilibrated(a, b, x0, opts, &mut solve)
        } else {
            solve(a, b, x0, opts)
        }
    };
    match reorder_for_solve(a, b, opts, how, ilu0_trouble)? {
        None => solve(a, b, x0),
        Some(r) => {
            let mut sol = match &r.col_perm {
                None => solve(&r.a, &r.b, x0)?,
                Some(order) => {
                    // P·A·Pᵀ y = P·b with y = P x: the guess in, the solution out permuted.
                    crate::matrix::check_initial_guess(x0, a.ncols())?;
                    let y0: Option<Vec<T>> = x0.map(|x| order.iter().map(|&o| x[o]).collect());
                    let mut sol = solve(&r.a, &r.b, y0.as_deref())?;
                    if sol.x.len() == order.len() {
                        let mut x = vec![T::zero(); order.len()];
                        for (y, &o) in sol.x.iter().zip(order) {
                            x[o] = *y;
                        }
                        sol.x = x;
                    }
                    sol
                }
            };
            sol.report.notes.insert(0, r.description.clone());
            sol.report.reordering = Some(r.description);
            Ok(sol)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr(n: usize, entries: &[(usize, usize, f64)]) -> Csr<f64> {
        Csr::from_triplets(n, entries).unwrap()
    }

    fn opts(method: Method, precond: Precond) -> SolveOptions {
        SolveOptions {
            method,
            precond,
            ..Default::default()
        }
    }

    #[test]
    fn reordered_system_has_the_same_solution_and_residual_norms() {
        let a = csr(
            3,
            &[
                (0, 1, 2.0),
                (0, 2, 1.0),
                (1, 2, 3.0),
                (2, 0, 4.0),
                (2, 1, 1.0),
            ],
        );
        let b = [1.0, 2.0, 3.0];
        let r = reorder_rows(&a, &b).unwrap();
        assert_eq!(r.moved, 3);
        assert!(
            r.description
                .contains("3 of 3 rows moved, diagonal now zero-free")
        );
        let x = [0.3, -1.0, 2.0];
        let res = |a: &Csr<f64>, b: &[f64]| -> Vec<f64> {
            let ax = a.mul_vec(&x).unwrap();
            b.iter().zip(ax).map(|(b, ax)| b - ax).collect()
        };
        let (r0, r1) = (res(&a, &b), res(&r.a, &r.b));
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert_eq!(norm(&r0), norm(&r1));
        for (i, &p) in r.row_perm.iter().enumerate() {
            assert_eq!(r1[i], r0[p]);
        }
    }

    /// An ILU(0) probe that says the factors of A are bad / fine.
    fn bad(_: &Csr<f64>) -> Option<String> {
        Some("is unstable at every diagonal shift".into())
    }
    fn fine(_: &Csr<f64>) -> Option<String> {
        None
    }

    #[test]
    fn auto_rule() {
        let zero = csr(2, &[(0, 1, 2.0), (1, 0, 3.0), (1, 1, 1.0)]);
        let full = csr(2, &[(0, 0, 1e-9), (0, 1, 2.0), (1, 0, 3.0), (1, 1, 1.0)]);
        for method in [Method::Gmres, Method::Bicgstab, Method::Bicg] {
            let jacobi = opts(method, Precond::Jacobi);
            let why = auto_reason(&zero, &jacobi, fine).unwrap();
            assert!(why.contains("1 zero entry (first at row 0)"), "{why}");
            assert!(why.contains("Jacobi"), "{why}");
            let ilu = opts(method, Precond::Ilu0);
            let why = auto_reason(&zero, &ilu, bad).unwrap();
            assert!(
                why.ends_with("and ILU(0) of A is unstable at every diagonal shift"),
                "{why}"
            );
            // ILU(0) of A is fine (a saddle point's Schur complement fills the zero
            // diagonal): no reordering.
            assert!(auto_reason(&zero, &ilu, fine).is_none());
            for o in [&jacobi, &ilu] {
                assert!(auto_reason(&full, o, bad).is_none());
                let cg = SolveOptions {
                    method: Method::Cg,
                    ..o.clone()
                };
                assert!(auto_reason(&zero, &cg, bad).is_none());
            }
        }
        for precond in [Precond::None, Precond::Ic0] {
            assert!(auto_reason(&zero, &opts(Method::Gmres, precond), bad).is_none());
        }
        assert!(auto_reason(&zero, &opts(Method::Jacobi, Precond::None), bad).is_none());
        let o = opts(Method::Gmres, Precond::Jacobi);
        let r = reorder_for_solve(&zero, &[1.0, 1.0], &o, Reorder::Auto, fine)
            .unwrap()
            .unwrap();
        assert!(
            r.description
                .starts_with("rows permuted by a maximum-product matching")
        );
        assert!(r.description.contains("(A's diagonal has 1 zero entry"));
        assert!(
            reorder_for_solve(&zero, &[1.0, 1.0], &o, Reorder::None, bad)
                .unwrap()
                .is_none()
        );
        assert!(
            reorder_for_solve(&full, &[1.0, 1.0], &o, Reorder::Auto, bad)
                .unwrap()
                .is_none()
        );
        // Explicit matching on a matrix whose diagonal is already best: identity, said so.
        let dd = csr(2, &[(0, 0, 4.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 4.0)]);
        let kept = reorder_for_solve(&dd, &[1.0, 1.0], &o, Reorder::Matching, bad)
            .unwrap()
            .unwrap();
        assert_eq!(kept.moved, 0);
        assert!(kept.description.contains("0 of 2 rows moved"));
    }

    #[test]
    fn auto_leaves_bad_input_to_validation_and_matching_reports_singularity() {
        let o = opts(Method::Gmres, Precond::Jacobi);
        let singular = csr(2, &[(0, 0, 1.0), (1, 0, 1.0)]);
        assert!(
            reorder_for_solve(&singular, &[1.0, 1.0], &o, Reorder::Auto, bad)
                .unwrap()
                .is_none()
        );
        let e = reorder_for_solve(&singular, &[1.0, 1.0], &o, Reorder::Matching, bad).unwrap_err();
        assert!(e.to_string().contains("structurally singular"), "{e}");
        let zero = csr(2, &[(0, 1, 2.0), (1, 0, 3.0)]);
        assert!(
            reorder_for_solve(&zero, &[1.0], &o, Reorder::Auto, bad)
                .unwrap()
                .is_none()
        );
        assert!(reorder_for_solve(&zero, &[1.0], &o, Reorder::Matching, bad).is_err());
    }

    #[test]
    fn diagonal_health_counts() {
        let a = csr(3, &[(0, 0, 1.0), (0, 1, 4.0), (1, 0, 1.0), (2, 2, 2.0)]);
        let h = diagonal_health(&a);
        assert_eq!(h.zeros, 1);
        assert_eq!(h.first_zero, Some(1));
        assert_eq!(h.min_ratio, 0.0);
        let h = diagonal_health(&csr(2, &[(0, 0, 1.0), (0, 1, 4.0), (1, 1, 2.0)]));
        assert_eq!((h.zeros, h.min_ratio), (0, 0.25));
    }
}
