//! 2D flow problems of the held-out classes of issue #14: convection-dominated
//! convection–diffusion ([`convection_diffusion_2d`]) and the zero-diagonal saddle-point
//! systems of a driven cavity ([`cavity_2d`]).
//!
//! Both use the recirculating "wind" of the IFISS driven-cavity convection example (Elman,
//! Silvester & Wathen, example 3.1.4), mapped to the unit square: with X = 2x − 1,
//! Y = 2y − 1 ∈ [−1, 1],
//!
//! ```text
//! w(x, y) = ( 2Y(1 − X²), −2X(1 − Y²) )       (|w| ≤ 2, w·n = 0 on the walls)
//! ```
//!
//! a single vortex turning clockwise, the flow a lid moving to the right drives.

use super::stencil::fd2_size;
use super::{check_nnz, empty, finish};
use crate::base::scalar::Scalar;
use crate::matrix::{Coo, Csr};

/// The recirculating wind at (x, y) of the unit square (module docs).
pub fn cavity_wind(x: f64, y: f64) -> [f64; 2] {
    let (xx, yy) = (2.0 * x - 1.0, 2.0 * y - 1.0);
    [2.0 * yy * (1.0 - xx * xx), -2.0 * xx * (1.0 - yy * yy)]
}

/// The coefficients of −Δu + Pe·w·∇u, multiplied by h², at one node: `[south, west, centre,
/// east, north]` with first-order upwind differences for the convection term. Every
/// neighbour coefficient is ≤ −`diff` and the centre is their negated sum.
fn upwind_5pt(diff: f64, h_pe: f64, w: [f64; 2]) -> [f64; 5] {
    let lower = |wd: f64| -diff - h_pe * wd.max(0.0);
    let upper = |wd: f64| -diff - h_pe * (-wd).max(0.0);
    let (s, wst, e, n) = (lower(w[1]), lower(w[0]), upper(w[0]), upper(w[1]));
    [s, wst, -(s + wst + e + n), e, n]
}

/// 2D convection–diffusion `−Δu + Pe·w·∇u = f` on the unit square with homogeneous
/// Dirichlet boundary and the recirculating wind w of the module docs, on the uniform grid
/// h = 1/(k+1) with k×k interior nodes `((i+1)h, (j+1)h)`, index `i + k·j` (x fastest).
/// Convection uses first-order upwind differences; the equations are multiplied by h²:
///
/// ```text
/// a_PP      = 4 + h·Pe·(|w_x| + |w_y|)
/// a_P,P−e_d = −1 − h·Pe·max(w_d, 0),   a_P,P+e_d = −1 − h·Pe·max(−w_d, 0)
/// ```
///
/// The matrix is an irreducibly diagonally dominant M-matrix (nonsingular) for every
/// Pe ≥ 0, nonsymmetric for Pe > 0, with the full 5-point pattern (n = k², nnz = 5k² − 4k).
/// The mesh Péclet number is Pe·|w|·h/2 ≤ Pe·h: with Pe = 1000 and k = 64 the problem is
/// strongly convection-dominated (mesh Péclet up to ≈ 15), the regime where BiCGStab with
/// Jacobi stagnates or breaks down while GMRES converges slowly. `k = 0` gives the empty
/// matrix.
///
/// # Panics
/// If `peclet` is negative or not finite, or nnz exceeds `u32::MAX`.
pub fn convection_diffusion_2d<T: Scalar>(k: usize, peclet: f64) -> Csr<T> {
    assert!(
        peclet.is_finite() && peclet >= 0.0,
        "convection_diffusion_2d: the Péclet number must be finite and >= 0, got {peclet}"
    );
    if k == 0 {
        return empty();
    }
    let (n, nnz) = fd2_size(k).expect("convection_diffusion_2d: size overflows");
    check_nnz("convection_diffusion_2d", Some(nnz));
    let h = 1.0 / (k as f64 + 1.0);
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    row_ptr.push(0u32);
    for j in 0..k {
        for i in 0..k {
            let p = i + k * j;
            let w = cavity_wind((i + 1) as f64 * h, (j + 1) as f64 * h);
            let c = upwind_5pt(1.0, h * peclet, w);
            let mut put = |col: usize, v: f64| {
                col_idx.push(col as u32);
                values.push(T::from_f64(v));
            };
            if j > 0 {
                put(p - k, c[0]);
            }
            if i > 0 {
                put(p - 1, c[1]);
            }
            put(p, c[2]);
            if i + 1 < k {
                put(p + 1, c[3]);
            }
            if j + 1 < k {
                put(p + k, c[4]);
            }
            row_ptr.push(col_idx.len() as u32);
        }
    }
    finish(n, row_ptr, col_idx, values)
}

/// Unknowns of [`cavity_2d`]`(k)`: 2k(k−1) velocities and k² pressures, and an upper bound
/// on the stored entries.
pub(super) fn cavity_size(k: usize) -> Option<(usize, usize)> {
    let vel = k.checked_mul(k.checked_sub(1)?)?.checked_mul(2)?;
    let p = k.checked_mul(k)?;
    let n = vel.checked_add(p)?;
    Some((n, vel.checked_mul(7)?.checked_add(p.checked_mul(4)?)?))
}

/// The driven-cavity Oseen problem on a MAC (staggered) grid: the saddle-point matrix
///
/// ```text
/// [ A  Bᵀ ] [u]   [f]        A = −ν·Δ + (w·∇) on each velocity component (upwind),
/// [ B  0  ] [p] = [0]        B = −div, Bᵀ = grad,  ν = 1/Re
/// ```
///
/// on the unit square with k×k cells (h = 1/k), no-slip walls (the lid's velocity enters
/// only the right-hand side) and the frozen recirculating wind w of the module docs — one
/// Picard step of the lid-driven cavity. Unknowns, in order: u on the (k−1)·k interior
/// vertical faces (x fastest), v on the k·(k−1) interior horizontal faces, p in the k² cells;
/// n = 2k(k−1) + k². Every equation is multiplied by h²: diffusion gives ν(4, −1, −1, −1,
/// −1) (a wall half a cell away through the ghost value u_ghost = −u_P: +ν on the
/// diagonal, likewise for an upwind ghost neighbour), the pressure gradient
/// ±h, the divergence rows ±h.
///
/// The pressure block is exactly zero on the diagonal except in the first cell, whose
/// continuity equation (redundant: the divergence rows sum to zero) is replaced by p₀ = 0
/// (a row of the identity) to pin the pressure's constant null space, so the matrix is
/// nonsingular with k² − 1 zero diagonal entries. It is nonsymmetric for every Re > 0
/// (convection) and its velocity block is an M-matrix. `k = 0` gives the empty matrix;
/// `k = 1` is the 1×1 matrix `[1]` (no interior faces).
///
/// # Panics
/// If `re` is not finite and positive, or nnz exceeds `u32::MAX`.
pub fn cavity_2d<T: Scalar>(k: usize, re: f64) -> Csr<T> {
    assert!(
        re.is_finite() && re > 0.0,
        "cavity_2d: the Reynolds number must be finite and positive, got {re}"
    );
    if k == 0 {
        return empty();
    }
    let (n, nnz) = cavity_size(k).expect("cavity_2d: size overflows");
    check_nnz("cavity_2d", Some(nnz));
    let h = 1.0 / k as f64;
    let nu = 1.0 / re;
    let nu_faces = (k - 1) * k;
    // u at face (i, j): x = (i+1)h, y = (j+½)h, i < k−1, j < k.
    let u_at = |i: usize, j: usize| i + (k - 1) * j;
    // v at face (i, j): x = (i+½)h, y = (j+1)h, i < k, j < k−1.
    let v_at = |i: usize, j: usize| nu_faces + i + k * j;
    let p_at = |i: usize, j: usize| 2 * nu_faces + i + k * j;
    let mut coo = Coo::with_capacity(n, n, nnz);
    let mut push = |r: usize, c: usize, v: f64| {
        coo.push(r, c, T::from_f64(v))
            .expect("cavity_2d: index in range");
    };
    // One velocity component: `ni × nj` faces at (x0 + i·h, y0 + j·h); `normal` is the
    // direction (0: x, 1: y) in which the faces' neighbours lie on the walls themselves
    // (dropped: zero velocity there), the other direction has ghost neighbours half a cell
    // outside (folded into the diagonal).
    let mut component = |ni: usize,
                         nj: usize,
                         x0: f64,
                         y0: f64,
                         normal: usize,
                         at: &dyn Fn(usize, usize) -> usize| {
        for j in 0..nj {
            for i in 0..ni {
                let w = cavity_wind(x0 + i as f64 * h, y0 + j as f64 * h);
                // [south, west, centre, east, north] of −νΔ + w·∇, times h².
                let c = upwind_5pt(nu, h, w);
                let mut diag = c[2];
                let row = at(i, j);
                let nbrs = [
                    (c[0], j > 0, (i, j.wrapping_sub(1)), 1),
                    (c[1], i > 0, (i.wrapping_sub(1), j), 0),
                    (c[3], i + 1 < ni, (i + 1, j), 0),
                    (c[4], j + 1 < nj, (i, j + 1), 1),
                ];
                for (coef, inside, (ii, jj), dir) in nbrs {
                    if inside {
                        push(row, at(ii, jj), coef);
                    } else if dir != normal {
                        // Ghost half a cell beyond the wall: u_ghost = −u_P.
                        diag -= coef;
                    }
                }
                push(row, row, diag);
            }
        }
    };
    component(k - 1, k, h, 0.5 * h, 0, &u_at);
    component(k, k - 1, 0.5 * h, h, 1, &v_at);
    // Pressure gradient in the momentum rows (Bᵀ) and −div in the continuity rows (B):
    // face e between cells C (west/south) and D (east/north): (p_D − p_C)·h in row e,
    // and in row C: −h·(u_e − u_w + v_n − v_s), so B[C][e] = −h = Bᵀ[e][C].
    for j in 0..k {
        for i in 0..k - 1 {
            let (e, c, d) = (u_at(i, j), p_at(i, j), p_at(i + 1, j));
            push(e, c, -h);
            push(e, d, h);
            if c != p_at(0, 0) {
                push(c, e, -h);
            }
            push(d, e, h);
        }
    }
    for j in 0..k - 1 {
        for i in 0..k {
            let (e, c, d) = (v_at(i, j), p_at(i, j), p_at(i, j + 1));
            push(e, c, -h);
            push(e, d, h);
            if c != p_at(0, 0) {
                push(c, e, -h);
            }
            push(d, e, h);
        }
    }
    push(p_at(0, 0), p_at(0, 0), 1.0);
    coo.to_csr().expect("cavity_2d: a valid matrix")
}

/// `cavity_2d(k, re)` with its unknowns interleaved cell by cell (p, then the east u and the
/// north v of the cell), as node-ordered FEM codes number them: Q·A·Qᵀ. Same matrix up to
/// a symmetric permutation; its zero diagonal entries are spread through the ordering.
pub fn cavity_2d_interleaved<T: Scalar>(k: usize, re: f64) -> Csr<T> {
    let a = cavity_2d::<T>(k, re);
    let nu = (k - 1) * k;
    let mut order = Vec::with_capacity(a.nrows());
    for j in 0..k {
        for i in 0..k {
            order.push(2 * nu + i + k * j);
            if i + 1 < k {
                order.push(i + (k - 1) * j);
            }
            if j + 1 < k {
                order.push(nu + i + k * j);
            }
        }
    }
    let mut new_of = vec![0; a.nrows()];
    for (new, &old) in order.iter().enumerate() {
        new_of[old] = new;
    }
    let mut coo = Coo::new(a.nrows(), a.ncols());
    for i in 0..a.nrows() {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            coo.push(new_of[i], new_of[c as usize], v)
                .expect("indices inside the matrix");
        }
    }
    coo.to_csr().expect("a permutation of a valid CSR matrix")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convdiff2d_is_a_nonsymmetric_dominant_m_matrix() {
        let a = convection_diffusion_2d::<f64>(12, 1000.0);
        assert_eq!((a.nrows(), a.nnz()), (144, 5 * 144 - 4 * 12));
        assert!(!a.is_symmetric(1e-12));
        assert!(a.is_diagonally_dominant(false));
        for i in 0..a.nrows() {
            let (cols, vals) = a.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                assert!(if c as usize == i { v > 0.0 } else { v < 0.0 });
            }
        }
        // Pe = 0 is the 5-point Laplacian.
        assert_eq!(
            convection_diffusion_2d::<f64>(5, 0.0),
            super::super::poisson_2d_fd::<f64>(5)
        );
        assert_eq!(convection_diffusion_2d::<f32>(0, 1.0).nrows(), 0);
    }

    #[test]
    fn cavity2d_is_a_saddle_point_matrix_with_zero_pressure_diagonal() {
        for k in [2, 3, 8] {
            let a = cavity_2d::<f64>(k, 100.0);
            let nv = 2 * k * (k - 1);
            assert_eq!(a.nrows(), nv + k * k);
            assert!(!a.is_symmetric(1e-12));
            let d = a.diagonal();
            assert_eq!(
                d.iter().filter(|v| **v == 0.0).count(),
                k * k - 1,
                "k = {k}"
            );
            assert!(d[..nv].iter().all(|v| *v > 0.0));
            assert_eq!(d[nv], 1.0);
            // B = (Bᵀ)ᵀ off the pinned row; the pressure block is zero but for the pin.
            for i in nv + 1..a.nrows() {
                let (cols, _) = a.row(i);
                assert!(cols.iter().all(|&c| (c as usize) < nv), "row {i}");
                for &c in cols {
                    assert_eq!(a.get(i, c as usize), a.get(c as usize, i));
                }
            }
            // The divergence of a constant... every continuity row sums to zero when all
            // its faces are interior; the velocity block rows are weakly dominant.
            for i in 0..nv {
                let (cols, vals) = a.row(i);
                let (mut diag, mut off) = (0.0, 0.0);
                for (&c, &v) in cols.iter().zip(vals) {
                    match c as usize {
                        c if c == i => diag = v,
                        c if c < nv => off += f64::abs(v),
                        _ => {}
                    }
                }
                assert!(diag >= off * (1.0 - 1e-12), "row {i}");
            }
        }
        assert_eq!(cavity_2d::<f64>(1, 1.0), Csr::identity(1));
    }
}

#[cfg(test)]
mod spec_tests {
    use super::super::from_spec;
    use super::*;

    #[test]
    fn specs_build_the_flow_problems() {
        let a = from_spec::<f64>("convdiff2d:10").unwrap();
        assert_eq!(a, convection_diffusion_2d::<f64>(10, 1000.0));
        let a = from_spec::<f64>(" ConvDiff2d:10:0 ").unwrap();
        assert_eq!(a, convection_diffusion_2d::<f64>(10, 0.0));
        let a = from_spec::<f32>("cavity2d:6").unwrap();
        assert_eq!(a, cavity_2d::<f32>(6, 100.0));
        let a = from_spec::<f64>("cavity2d:6:1e3").unwrap();
        assert_eq!(a, cavity_2d::<f64>(6, 1000.0));
        assert_eq!(
            from_spec::<f64>("reservoir3d:5:4:3:9").unwrap(),
            super::super::reservoir_3d::<f64>(5, 4, 3, 9)
        );
        assert_eq!(
            from_spec::<f64>("waveguide2d:7").unwrap(),
            super::super::waveguide_2d::<f64>(7, 0.44)
        );
        for bad in ["reservoir3d:5:4", "reservoir3d:5:0:3", "waveguide2d:4:inf"] {
            let e = from_spec::<f64>(bad).unwrap_err().to_string();
            assert!(e.contains("waveguide2d:K[:SHIFT]"), "{bad}: {e}");
        }
        for bad in [
            "convdiff2d",
            "convdiff2d:0",
            "convdiff2d:8:-1",
            "convdiff2d:8:nan",
            "convdiff2d:8:1:2",
            "cavity2d:8:0",
            "cavity2d:x",
        ] {
            let e = from_spec::<f64>(bad).unwrap_err().to_string();
            assert!(e.contains("cavity2d:K[:RE]"), "{bad}: {e}");
        }
    }
}
