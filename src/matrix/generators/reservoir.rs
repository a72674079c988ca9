//! Oil-reservoir simulation matrices ([`reservoir_3d`]): the Jacobian of one Newton step of a
//! fully implicit two-phase (water/oil) black-oil model on a layered, heterogeneous 3D grid —
//! the class of the Harwell–Boeing SHERMAN/SAYLR/ORS matrices of issue #14, where GMRES(30)
//! with right Jacobi stagnates.
//!
//! What makes them hard, and what the generator reproduces:
//! - permeability spans five to seven orders of magnitude (log-normal, layered, as in the
//!   SPE10 model), so rows and columns are scaled wildly;
//! - two unknowns per cell (pressure p and water saturation S, interleaved) couple an
//!   elliptic pressure block with a convection-dominated, upwinded saturation block: the
//!   matrix is nonsymmetric and a scalar diagonal ignores the 2×2 coupling;
//! - the accumulation terms are small against the fluxes in the high-permeability layers
//!   (large time step), and producing wells add large diagonal entries.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::empty;
use crate::base::scalar::Scalar;
use crate::matrix::{Coo, Csr};

/// Unknowns of [`reservoir_3d`]`(nx, ny, nz, _)` (two per cell) and an upper bound on its
/// stored entries (a 2×2 block per cell and per face neighbour).
pub(super) fn reservoir_size(nx: usize, ny: usize, nz: usize) -> Option<(usize, usize)> {
    let cells = nx.checked_mul(ny)?.checked_mul(nz)?;
    Some((cells.checked_mul(2)?, cells.checked_mul(4 * 7)?))
}

/// Corey relative permeabilities over viscosity and their derivatives in S:
/// `(λ_w, λ_o, dλ_w/dS, dλ_o/dS)`, with connate water 0.2, residual oil 0.15 and a 5:1
/// oil/water viscosity ratio.
fn mobilities(s: f64) -> (f64, f64, f64, f64) {
    const SWC: f64 = 0.2;
    const SOR: f64 = 0.15;
    const MU_W: f64 = 1.0;
    const MU_O: f64 = 5.0;
    let span = 1.0 - SWC - SOR;
    let se = ((s - SWC) / span).clamp(0.0, 1.0);
    let inside = if s > SWC && s < 1.0 - SOR { 1.0 } else { 0.0 };
    (
        se * se / MU_W,
        (1.0 - se) * (1.0 - se) / MU_O,
        inside * 2.0 * se / (span * MU_W),
        -inside * 2.0 * (1.0 - se) / (span * MU_O),
    )
}

/// The Jacobian of a fully implicit two-phase black-oil step on an `nx × ny × nz` grid of
/// cells (x fastest), n = 2·nx·ny·nz unknowns `[p_c, S_c]` per cell c, rows `[total mass,
/// water]` per cell:
///
/// ```text
/// total_c = c_t·φV/Δt·(p_c − p_c⁰) + Σ_f T_f·λ_t,up(f)·(p_c − p_nb)          − q_t,c
/// water_c =    φV/Δt·(S_c − S_c⁰)  + Σ_f T_f·λ_w,up(f)·(p_c − p_nb)          − q_w,c
/// ```
///
/// differentiated at a frozen state: a pressure field falling from an injector column at
/// the corner (0, 0) to a producer column at the opposite corner, plus gravity (the
/// upstream side of each face), and a water front advanced furthest in the most permeable
/// layers. `T_f` is the harmonic mean of the cells' permeabilities (vertical permeability a
/// tenth of the horizontal one), log10 k = a layer mean drawn in [−1, 3] plus cell noise of
/// standard deviation 0.8; the mobilities' derivatives at the upstream cell give the
/// saturation columns. The producer (bottom-hole pressure control) adds
/// `PI·λ·(p − p_bh)` terms to its cells' rows.
///
/// The matrix is nonsymmetric, has a positive diagonal, and is nonsingular (the total-mass
/// rows are strictly diagonally dominant in the pressure columns through compressibility,
/// the water rows in S through accumulation). Seeded and deterministic; `nx·ny·nz = 0`
/// gives the empty matrix.
///
/// # Panics
/// If the matrix has more than `u32::MAX` stored entries.
pub fn reservoir_3d<T: Scalar>(nx: usize, ny: usize, nz: usize, seed: u64) -> Csr<T> {
    let (n, cap) = reservoir_size(nx, ny, nz).expect("reservoir_3d: size overflows");
    if n == 0 {
        return empty();
    }
    assert!(
        cap <= u32::MAX as usize,
        "reservoir_3d: the matrix has more than u32::MAX stored entries"
    );
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cells = nx * ny * nz;
    let at = |i: usize, j: usize, k: usize| i + nx * (j + ny * k);
    // Layered log-normal permeability (horizontal; vertical is a tenth).
    let layer_mean: Vec<f64> = (0..nz).map(|_| -1.0 + 4.0 * rng.random::<f64>()).collect();
    let mut log_k = vec![0.0; cells];
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                // Box–Muller normal draw.
                let (u1, u2) = (rng.random::<f64>().max(1e-300), rng.random::<f64>());
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                log_k[at(i, j, k)] = layer_mean[k] + 0.8 * z;
            }
        }
    }
    let perm: Vec<f64> = log_k.iter().map(|l| 10f64.powf(*l)).collect();
    // Frozen state: distance from the injector corner in [0, 1] sets pressure and the front.
    let diag_len = (((nx - 1).pow(2) + (ny - 1).pow(2)) as f64).sqrt().max(1.0);
    let dist = |i: usize, j: usize| ((i * i + j * j) as f64).sqrt() / diag_len;
    let (p_inj, p_prod, rho_g) = (1.0, 0.0, 0.05);
    let potential = |i: usize, j: usize, k: usize| {
        p_inj + (p_prod - p_inj) * dist(i, j) - rho_g * k as f64 / nz.max(1) as f64
    };
    let saturation = |i: usize, j: usize, k: usize| {
        // The front reaches further in permeable layers: radius ∝ √(k_layer / k_max).
        let reach = (0.25 * 10f64.powf(0.5 * (layer_mean[k] - 3.0))).clamp(0.02, 0.9) * 2.0;
        let x = dist(i, j) / reach;
        0.2 + 0.65 * (1.0 - x).clamp(0.0, 1.0).powf(0.5)
    };
    // Scales: pore volume over the time step and total compressibility, against a mean
    // transmissibility of order 1 (a time step of many CFL numbers in the good layers).
    let (pv_dt, c_t) = (0.05, 1e-3);
    let mut coo = Coo::with_capacity(n, n, cap);
    let mut push = |r: usize, c: usize, v: f64| {
        coo.push(r, c, T::from_f64(v))
            .expect("reservoir_3d: index in range");
    };
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let c = at(i, j, k);
                let (rp, rs) = (2 * c, 2 * c + 1);
                let (pc, sc) = (2 * c, 2 * c + 1);
                push(rp, pc, c_t * pv_dt);
                push(rs, sc, pv_dt);
                let phi_c = potential(i, j, k);
                let mut nbrs = Vec::with_capacity(6);
                if i > 0 {
                    nbrs.push((i - 1, j, k, 1.0));
                }
                if i + 1 < nx {
                    nbrs.push((i + 1, j, k, 1.0));
                }
                if j > 0 {
                    nbrs.push((i, j - 1, k, 1.0));
                }
                if j + 1 < ny {
                    nbrs.push((i, j + 1, k, 1.0));
                }
                if k > 0 {
                    nbrs.push((i, j, k - 1, 0.1));
                }
                if k + 1 < nz {
                    nbrs.push((i, j, k + 1, 0.1));
                }
                for (ii, jj, kk, aniso) in nbrs {
                    let d = at(ii, jj, kk);
                    let t = aniso * 2.0 * perm[c] * perm[d] / (perm[c] + perm[d]);
                    let phi_d = potential(ii, jj, kk);
                    // Upstream cell of the face and its state.
                    let (up, s_up) = if phi_c >= phi_d {
                        (c, saturation(i, j, k))
                    } else {
                        (d, saturation(ii, jj, kk))
                    };
                    let (lw, lo, dlw, dlo) = mobilities(s_up);
                    let dphi = phi_c - phi_d;
                    // Flux T·λ·(p_c − p_d): pressure columns of both cells.
                    push(rp, pc, t * (lw + lo));
                    push(rp, 2 * d, -t * (lw + lo));
                    push(rs, pc, t * lw);
                    push(rs, 2 * d, -t * lw);
                    // Mobility derivative at the upstream cell: its saturation column.
                    push(rp, 2 * up + 1, t * (dlw + dlo) * dphi);
                    push(rs, 2 * up + 1, t * dlw * dphi);
                }
                // Producer column at the far corner, bottom-hole pressure below the field.
                if i + 1 == nx && j + 1 == ny {
                    let pi_well = 50.0 * perm[c];
                    let (lw, lo, dlw, dlo) = mobilities(saturation(i, j, k));
                    let dp = phi_c - (p_prod - 0.5);
                    push(rp, pc, pi_well * (lw + lo));
                    push(rs, pc, pi_well * lw);
                    push(rp, sc, pi_well * (dlw + dlo) * dp);
                    push(rs, sc, pi_well * dlw * dp);
                }
            }
        }
    }
    coo.to_csr().expect("reservoir_3d: a valid matrix")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservoir_is_nonsymmetric_with_a_positive_diagonal_and_wide_scales() {
        let a = reservoir_3d::<f64>(6, 5, 4, 7);
        assert_eq!(a.nrows(), 2 * 6 * 5 * 4);
        assert!(!a.is_symmetric(1e-12));
        let d = a.diagonal();
        assert!(d.iter().all(|v| *v > 0.0 && v.is_finite()));
        let (lo, hi) = d
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(*v), h.max(*v)));
        assert!(hi / lo > 1e4, "diagonal spread {}", hi / lo);
        // Deterministic in the seed, different across seeds.
        assert_eq!(a, reservoir_3d::<f64>(6, 5, 4, 7));
        assert_ne!(a, reservoir_3d::<f64>(6, 5, 4, 8));
        assert_eq!(reservoir_3d::<f32>(0, 3, 3, 0).nrows(), 0);
    }
}
