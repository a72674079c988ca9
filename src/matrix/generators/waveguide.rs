//! Dielectric-waveguide matrices ([`waveguide_2d`]): the full-vector transverse-H mode
//! operator of a square dielectric waveguide, shifted into its guided spectrum — the class of
//! the Bai/Dong DW matrices of issue #14, indefinite and nonsymmetric, where every
//! Jacobi-preconditioned method fails (the diagonal is almost constant, so Jacobi is a
//! scaling) and ILU is needed.

use super::empty;
use crate::base::scalar::Scalar;
use crate::matrix::{Coo, Csr};

/// Unknowns of [`waveguide_2d`]`(k, _)` (two field components per node) and an upper bound on
/// its stored entries.
pub(super) fn waveguide_size(k: usize) -> Option<(usize, usize)> {
    let n = k.checked_mul(k)?.checked_mul(2)?;
    Some((n, n.checked_mul(9)?))
}

/// Core refractive index of [`waveguide_2d`] (a semiconductor core, n ≈ 3.4, in air).
const N_CORE: f64 = 3.4;

/// Node coordinates in (0, 1) of a grid of `k` interior nodes as the DW matrices lay it out:
/// spacing h_f at the core's faces 1/3 and 2/3, growing geometrically by 1.27 per cell away
/// from the nearest face (into the core and through the cladding). Symmetric about ½; h_f
/// follows from k.
fn graded_nodes(k: usize) -> Vec<f64> {
    // Spacing as a function of the distance d to the nearest face: cell m away from it has
    // spacing h_f·1.27^m.
    let spacing = |t: f64, hf: f64| {
        let d = (t - 1.0 / 3.0).abs().min((t - 2.0 / 3.0).abs());
        // Cells of geometric growth needed to cover d: sum_{m<M} hf·r^m = d.
        let r: f64 = 1.27;
        let m = ((d / hf) * (r - 1.0) + 1.0).ln() / r.ln();
        hf * r.powf(m)
    };
    // Find h_f so that k + 1 steps span [0, 1]: bisection on the step count.
    let steps = |hf: f64| {
        let (mut t, mut count) = (0.0, 0usize);
        while t < 1.0 && count < 10 * k + 10 {
            t += spacing(t, hf);
            count += 1;
        }
        count
    };
    let (mut lo, mut hi) = (1e-9_f64, 1.0_f64);
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if steps(mid) > k + 1 {
            lo = mid
        } else {
            hi = mid
        }
    }
    let hf = hi;
    // March with h_f and stretch the result onto [0, 1] exactly.
    let mut nodes = Vec::with_capacity(k + 1);
    let mut t = 0.0;
    for _ in 0..=k {
        t += spacing(t, hf);
        nodes.push(t);
    }
    let end = nodes[k];
    nodes.truncate(k);
    nodes.iter().map(|v| v / end).collect()
}

/// The transverse magnetic field (Hx, Hy) of a square dielectric waveguide — the matrix of
/// the mode eigenproblem itself, as in the DW collection: the core, a square of a third of
/// the domain's side, of index 3.4 in air (ε = 11.56 and 1), on the unit square with k×k
/// interior nodes on the DW matrices' mesh (finest at the core's faces, growing geometrically
/// by 1.27 per cell away from them), index `i + k·j`, the Hx block then the Hy block (n = 2k²). The
/// full-vector mode operator
///
/// ```text
/// M Hx = ΔHx + k0²(ε − 1)Hx − ∂y(ln ε)·(∂xHy − ∂yHx)
/// M Hy = ΔHy + k0²(ε − 1)Hy + ∂x(ln ε)·(∂xHy − ∂yHx)
/// ```
///
/// (three-point differences on the graded mesh, Dirichlet walls) couples the components only
/// along the core's faces, where ∇ln ε ≠ 0. The matrix is `M/S + shift·I`, S scaling the
/// finest coupling to 0.28 and k0 chosen so the core adds 0.5 to the diagonal: guided modes
/// have eigenvalues above `shift`, the fine-mesh modes are strongly negative. So the matrix
/// is indefinite (most eigenvalues negative, some positive, some near zero), nonsymmetric
/// (the graded mesh and the interface terms), its off-diagonal entries are positive and span
/// two decades, and its diagonal runs from `shift` in the cladding through zero near the
/// core — no scaling of rows (Jacobi) fixes that. `k = 0` gives the empty matrix.
///
/// # Panics
/// If `shift` is not finite, or nnz exceeds `u32::MAX`.
pub fn waveguide_2d<T: Scalar>(k: usize, shift: f64) -> Csr<T> {
    assert!(
        shift.is_finite(),
        "waveguide_2d: the shift must be finite, got {shift}"
    );
    if k == 0 {
        return empty();
    }
    let (n, cap) = waveguide_size(k).expect("waveguide_2d: size overflows");
    assert!(
        cap <= u32::MAX as usize,
        "waveguide_2d: the matrix has more than u32::MAX stored entries"
    );
    let eps_core = N_CORE * N_CORE;
    let t = graded_nodes(k);
    let coord = |i: isize| -> f64 {
        if i < 0 {
            0.0
        } else if i as usize >= k {
            1.0
        } else {
            t[i as usize]
        }
    };
    let h_min = (0..=k as isize)
        .map(|i| coord(i) - coord(i - 1))
        .fold(f64::MAX, f64::min);
    let scale = 0.28 * h_min * h_min;
    let k0_sq = 0.5 / (scale * (eps_core - 1.0));
    let eps = |i: isize, j: isize| {
        let inside = |v: f64| (v - 0.5).abs() <= 1.0 / 6.0;
        if inside(coord(i)) && inside(coord(j)) {
            eps_core
        } else {
            1.0
        }
    };
    let ku = k as isize;
    let node = |i: isize, j: isize| -> Option<usize> {
        (i >= 0 && j >= 0 && i < ku && j < ku).then(|| (i + ku * j) as usize)
    };
    let mut coo = Coo::with_capacity(n, n, cap);
    let mut push = |r: usize, c: usize, v: f64| {
        coo.push(r, c, T::from_f64(v))
            .expect("waveguide_2d: index in range");
    };
    let off_y = k * k;
    for j in 0..ku {
        for i in 0..ku {
            let p = node(i, j).expect("interior node");
            let (hw, he) = (coord(i) - coord(i - 1), coord(i + 1) - coord(i));
            let (hs, hn) = (coord(j) - coord(j - 1), coord(j + 1) - coord(j));
            // Three-point second differences on the graded mesh, scaled.
            let (cw, ce) = (2.0 / (hw * (hw + he)), 2.0 / (he * (hw + he)));
            let (cs, cn) = (2.0 / (hs * (hs + hn)), 2.0 / (hn * (hs + hn)));
            let centre = (-(cw + ce + cs + cn) + k0_sq * (eps(i, j) - 1.0)) * scale + shift;
            // First differences ∂x, ∂y over the two neighbours (central on the graded mesh).
            let (dx, dy) = (hw + he, hs + hn);
            let gx = (eps(i + 1, j).ln() - eps(i - 1, j).ln()) / dx;
            let gy = (eps(i, j + 1).ln() - eps(i, j - 1).ln()) / dy;
            for (comp, base) in [(0, 0), (1, off_y)] {
                push(base + p, base + p, centre);
                for (di, dj, c) in [(-1, 0, cw), (1, 0, ce), (0, -1, cs), (0, 1, cn)] {
                    if let Some(q) = node(i + di, j + dj) {
                        push(base + p, base + q, c * scale);
                    }
                }
                // M: the Hx row gets −gy·(∂xHy − ∂yHx), the Hy row +gx·(∂xHy − ∂yHx).
                let g = if comp == 0 { -gy } else { gx };
                if g == 0.0 {
                    continue;
                }
                for (di, sign) in [(1, 1.0), (-1, -1.0)] {
                    if let Some(q) = node(i + di, j) {
                        push(base + p, off_y + q, sign * g / dx * scale);
                    }
                }
                for (dj, sign) in [(1, -1.0), (-1, 1.0)] {
                    if let Some(q) = node(i, j + dj) {
                        push(base + p, q, sign * g / dy * scale);
                    }
                }
            }
        }
    }
    coo.to_csr().expect("waveguide_2d: a valid matrix")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waveguide_is_nonsymmetric_coupled_only_at_the_core_faces() {
        let k = 15;
        let a = waveguide_2d::<f64>(k, 0.44);
        assert_eq!(a.nrows(), 2 * k * k);
        assert!(!a.is_symmetric(1e-12));
        // Away from the core's faces the two blocks do not couple.
        let kk = k * k;
        let coupled: usize = (0..kk)
            .filter(|&r| a.row(r).0.iter().any(|&c| c as usize >= kk))
            .count();
        assert!(coupled > 0 && coupled < kk / 4, "{coupled} coupled rows");
        // The diagonal changes sign: positive in the cladding, negative on the fine mesh.
        let d = a.diagonal();
        assert!(d.iter().any(|v| *v < 0.0) && d.iter().any(|v| *v > 0.0));
        assert_eq!(waveguide_2d::<f32>(0, 0.5).nrows(), 0);
    }
}
