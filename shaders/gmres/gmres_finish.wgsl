// gmres_finish: the second reduction stage of classical GMRES(m) on the device, one
// workgroup — what a BLAS with device-side scalars does between an inner product and the
// launch that uses it (classical `device` mode; in `paper` mode the host does this instead).
// It sums partials slot `params.slot` (and the following ones for a column) and, by mode
// (params.flags & 15), stores and tests the result in the cycle buffer (`scalars`):
//
//  1 RHO:    ρ0² → header (ρ0², ρ0) and ρ0 as the estimate of step 0 (den = index of step 0's
//            scalars); ρ0 ≤ threshold stops the solve (GM_STOP_CONVERGED), a non-finite ρ0² too.
//  2 NORM_W: ‖A v_{i−1}‖² → step i's scalars (den, at +2); not finite → GM_STOP_NONFINITE_AV.
//  3 COLUMN: params.den inner products ⟨v_j, w⟩, j = j0 …, from slots slot, slot+1, … (four
//            per slot) → scalars[comp + q] (the coefficients of the next gmres_basis_axpy) and
//            scalars[dst + q] (R_{j,i} being accumulated; flag PASS2 adds to it: CGS2).
//  4 RII:    R_{i,i} = ‖w‖; copies the accumulated R_{j,i} (at dst + j, j < i) into column i of
//            R (at comp + j) and R_{i,i} to comp + i; breakdown test R_{i,i} ≤ ε·‖A v_{i−1}‖
//            (or ‖A v_{i−1}‖ = 0) → GM_STOP_BREAKDOWN; not finite → GM_STOP_NONFINITE_AV.
//  5 XI:     ξ_i → step i's scalars (den) and the Walker–Zhou estimate
//            √((‖r_{i−1}‖ − |ξ_i|)(‖r_{i−1}‖ + |ξ_i|)) at den + 1; it ends the cycle
//            (GM_STOP_ESTIMATE) when the estimate meets the threshold or the truncation
//            ε^(1/3)·ρ0, and stops it (GM_STOP_NONFINITE_XI) when it is not finite.
// params.comp_monitor = step i. A stop sets the status word, so every later launch of the
// cycle does nothing. Thread 0 of the (single) workgroup stops it (`gm_stop`, lib/gmres.wgsl).

const GM_MODE_RHO: u32 = 1u;
const GM_MODE_NORM_W: u32 = 2u;
const GM_MODE_COLUMN: u32 = 3u;
const GM_MODE_RII: u32 = 4u;
const GM_MODE_XI: u32 = 5u;
const GM_FLAG_PASS2: u32 = 16u;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let mode = params.flags & 15u;
    let i = params.comp_monitor;
    let g = params.groups;
    if mode == GM_MODE_COLUMN {
        let count = params.den;
        for (var q = 0u; q * 4u < count; q = q + 1u) {
            let s = sum_partials((params.slot + q) * g, g, ids);
            if ids.lid == 0u {
                for (var c = 0u; c < 4u; c = c + 1u) {
                    let k = 4u * q + c;
                    if k < count {
                        scalars[params.comp + k] = s[c];
                        if (params.flags & GM_FLAG_PASS2) != 0u {
                            scalars[params.dst + k] = scalars[params.dst + k] + s[c];
                        } else {
                            scalars[params.dst + k] = s[c];
                        }
                    }
                }
            }
        }
        return;
    }
    let v = sum_partials(params.slot * g, g, ids).x;
    if ids.lid != 0u {
        return;
    }
    if mode == GM_MODE_RHO {
        let rho = sqrt(v);
        scalars[GM_H_RR] = v;
        scalars[GM_H_RHO] = rho;
        scalars[params.den + 1u] = rho;
        if !is_finite(v) {
            gm_stop(GM_STOP_NONFINITE_RR, 0u, STATUS_NON_FINITE);
        } else if rho <= scalars[GM_H_THR] {
            gm_stop(GM_STOP_CONVERGED, 0u, STATUS_CONVERGED);
        }
    } else if mode == GM_MODE_NORM_W {
        scalars[params.den + 2u] = v;
        if !is_finite(v) {
            gm_stop(GM_STOP_NONFINITE_AV, i, STATUS_NON_FINITE);
        }
    } else if mode == GM_MODE_RII {
        let rii = sqrt(v);
        let w_norm = sqrt(scalars[params.den + 2u]);
        for (var j = 1u; j < i; j = j + 1u) {
            scalars[params.comp + j] = scalars[params.dst + j];
        }
        scalars[params.comp + i] = rii;
        if !is_finite(rii) {
            gm_stop(GM_STOP_NONFINITE_AV, i, STATUS_NON_FINITE);
        } else if w_norm == Real(0.0) || rii <= scalars[GM_H_EPS] * w_norm {
            gm_stop(GM_STOP_BREAKDOWN, i, STATUS_BREAKDOWN);
        }
    } else if mode == GM_MODE_XI {
        let prev = scalars[params.den - 3u];
        let est = gm_wz_estimate(prev, v);
        scalars[params.den] = v;
        scalars[params.den + 1u] = est;
        if !is_finite(est) {
            gm_stop(GM_STOP_NONFINITE_XI, i, STATUS_NON_FINITE);
        } else if est <= scalars[GM_H_THR] || est <= scalars[GM_H_TRUNC] * scalars[GM_H_RHO] {
            gm_stop(GM_STOP_ESTIMATE, i, STATUS_CONVERGED);
        }
    }
}
