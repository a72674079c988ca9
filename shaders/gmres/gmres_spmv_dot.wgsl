// gmres_spmv_dot: kernel 1 of pipelined GMRES(m) step i (paper 000, Alg. 6 l.7 and the first
// reduction stage of l.9 for j = i − 1):
//
//   w = A·s  → v_i (vector i of the pool; s = D⁻¹v_{i−1} with Jacobi, else v_{i−1})
//   first stage of (⟨v_{i−1}, w⟩, ⟨w, w⟩) → partials slot 1 (⟨w, w⟩ = ‖A v_{i−1}‖² is what the
//   breakdown test of R_ii compares against)
//
// Step 1 (flag FIRST) also finishes ‖r‖² from slot 0 (second stage, done redundantly by every
// workgroup), writes v_0 = r/ρ0 and computes w = A·s/ρ0 with s = r (or D⁻¹r); workgroup 0
// stores ρ0², ρ0 in the cycle-buffer header and ρ0 as the estimate of step 0.
//
// With flag MONITOR (`device` checks) the kernel is also the convergence monitor:
//  * step 1: ρ0 ≤ threshold stops the solve (converged at the restart, GM_STOP_CONVERGED);
//  * step i ≥ 2: finishes ξ_{i−1} from the per-step record its partial sums were written to
//    (by gmres_normalize of step i − 1), updates the Walker–Zhou estimate
//    ‖r_{i−1}‖ = √((‖r_{i−2}‖ − |ξ|)(‖r_{i−2}‖ + |ξ|)) and ends the cycle (GM_STOP_ESTIMATE at
//    step i − 1) once it meets the threshold or the truncation ε^(1/3)·ρ0.
// Every workgroup reaches the same decision from the same sums; only the leader writes.
//
// Parameters: comp_monitor = i, num = pool vector s, den = pool vector r, slot = cycle-buffer
// index of step i−1's record (ξ partials at +4), comp = cycle-buffer index of the per-step
// scalars (step j at comp + 4j: ξ_j, estimate_j, ‖A v_{j−1}‖²).


const GM_FLAG_FIRST: u32 = 1u;
const GM_FLAG_MONITOR: u32 = 2u;

var<workgroup> gm_a: Real;
var<workgroup> gm_b: Real;
var<workgroup> gm_c: Real;

fn spmv_x(col: u32) -> Real {
    return pool_get(params.num * params.n + col);
}

// Step 1 (flag FIRST) and ρ0 for `spmv_store` (set once per dispatch).
var<private> gm_first: bool;
var<private> gm_rho: Real;

// Stores w = (A·s)[row] (/ρ0 in step 1) into v_i; returns the row's terms of ⟨v_{i−1}, w⟩, ⟨w, w⟩.
fn spmv_store(row: u32, sum: Real) -> vec4<Real> {
    let i = params.comp_monitor;
    let n = params.n;
    var w = sum;
    var vp = Real(0.0);
    if gm_first {
        w = sum / gm_rho;
    } else {
        vp = pool_get((i - 1u) * n + row);
    }
    pool_set(i * n + row, w);
    return vec4<Real>(vp * w, w * w, Real(0.0), Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let i = params.comp_monitor;
    let n = params.n;
    let first = (params.flags & GM_FLAG_FIRST) != 0u;
    let monitor = (params.flags & GM_FLAG_MONITOR) != 0u;
    var rho = Real(1.0);
    if first {
        // ρ0, its stop tests and v_0 = r/ρ0 (gmres_open.wgsl).
        let rr = sum_partials(GM_SLOT_RESIDUAL * params.groups, params.groups, ids).x;
        rho = gm_open_cycle(rr, monitor, ids);
        if rho < Real(0.0) {
            return;
        }
    } else if monitor {
        // Second stage of ξ_{i−1} and the Walker–Zhou estimate of ‖r_{i−1}‖.
        var acc = sum_zero();
        for (var g = ids.lid; g < params.groups; g = g + WG) {
            acc = sum_add_x(acc, scalars[params.slot + 4u + g]);
        }
        let xi = sum_value(workgroup_total(acc, ids)).x;
        if ids.lid == 0u {
            gm_a = scalars[params.comp + 4u * (i - 2u) + 1u];
            gm_b = scalars[GM_H_THR];
            gm_c = scalars[GM_H_TRUNC] * scalars[GM_H_RHO];
        }
        let prev = workgroupUniformLoad(&gm_a);
        let thr = workgroupUniformLoad(&gm_b);
        let trunc = workgroupUniformLoad(&gm_c);
        let est = gm_wz_estimate(prev, xi);
        if is_leader(ids) {
            scalars[params.comp + 4u * (i - 1u)] = xi;
            scalars[params.comp + 4u * (i - 1u) + 1u] = est;
        }
        if !is_finite(est) {
            gm_leader_stop(ids, GM_STOP_NONFINITE_XI, i - 1u, STATUS_NON_FINITE);
            return;
        }
        if est <= thr || est <= trunc {
            gm_leader_stop(ids, GM_STOP_ESTIMATE, i - 1u, STATUS_CONVERGED);
            return;
        }
    }
    // w = A·s (/ρ0 in step 1) into v_i, and the first stage of ⟨v_{i−1}, w⟩, ⟨w, w⟩.
    gm_first = first;
    gm_rho = rho;
    spmv_partials(GM_SLOT_SPMV, ids);
}
