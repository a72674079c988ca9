// gmres.wgsl: what the GMRES(m) kernels share — the cycle buffer's header indices (GM_H_*,
// mirrored by src/solvers/gmres/basis.rs), the stop codes written to its GM_H_STOP entry
// (GM_STOP_*), the partials slots (GM_SLOT_*) and the stop of a cycle. Each kernel keeps
// its own GM_FLAG_* / GM_MODE_* (their values differ between kernels).

const GM_H_STOP: u32 = 0u;
const GM_H_STEP: u32 = 1u;
const GM_H_RR: u32 = 2u;
const GM_H_RHO: u32 = 3u;
const GM_H_THR: u32 = 4u;
const GM_H_TRUNC: u32 = 5u;
const GM_H_EPS: u32 = 6u;
const GM_STOP_CONVERGED: u32 = 1u;
const GM_STOP_ESTIMATE: u32 = 2u;
const GM_STOP_BREAKDOWN: u32 = 3u;
const GM_STOP_NONFINITE_AV: u32 = 4u;
const GM_STOP_NONFINITE_XI: u32 = 5u;
const GM_STOP_NONFINITE_RR: u32 = 6u;
// p(1)-GMRES: R_{i,i}² = ‖u_i‖² − Σ_j R_{j,i}² lost its accuracy; the cycle keeps i − 1 steps.
const GM_STOP_LOST: u32 = 7u;
const GM_SLOT_RESIDUAL: u32 = 0u;
const GM_SLOT_SPMV: u32 = 1u;
const GM_SLOT_NORM: u32 = 2u;
const GM_SLOT_DOTS: u32 = 3u;

// Stops the cycle at `step` with stop code `code` and status word `status`. Called by one
// thread only (see `gm_leader_stop`).
fn gm_stop(code: u32, step: u32, status: u32) {
    scalars[GM_H_STOP] = Real(code);
    scalars[GM_H_STEP] = Real(step);
    atomicStore(&state[0], status);
    atomicStore(&state[2], step);
}

// `gm_stop` by workgroup 0, thread 0 (every workgroup reaches the same decision).
fn gm_leader_stop(ids: Ids, code: u32, step: u32, status: u32) {
    if is_leader(ids) {
        gm_stop(code, step, status);
    }
}

// The Walker–Zhou estimate ‖r_i‖ = √((‖r_{i−1}‖ − |ξ_i|)(‖r_{i−1}‖ + |ξ_i|)) from `prev` =
// ‖r_{i−1}‖ and ξ_i, 0 once |ξ_i| ≥ ‖r_{i−1}‖ (as the CPU reference evaluates it).
fn gm_wz_estimate(prev: Real, xi: Real) -> Real {
    let a = abs(xi);
    if a < prev {
        return sqrt((prev - a) * (prev + a));
    }
    return Real(0.0);
}
