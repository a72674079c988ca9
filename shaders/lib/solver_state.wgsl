// The state every solver kernel shares: a status word that stops all later work once the
// solve has converged or failed (so iterations recorded after convergence change nothing),
// the iteration counter, and the convergence history.

const STATUS_RUNNING: u32 = 0u;
const STATUS_CONVERGED: u32 = 1u;
const STATUS_NOT_SPD: u32 = 2u;
const STATUS_NON_FINITE: u32 = 3u;
const STATUS_BREAKDOWN: u32 = 4u;

// Bindings 0–3 are the same in every solver kernel:
// state[0]: status, state[1]: residual norms recorded so far, state[2]: iteration where
// the status changed, state[3]: the solver's code of the quantity that broke down.
@group(0) @binding(0) var<storage, read_write> state: array<atomic<u32>, 4>;
// Per-workgroup partial sums, one vec4 per workgroup, in slots of `groups` entries.
@group(0) @binding(1) var<storage, read_write> partials: array<vec4<Real>>;
// Finished scalars (which index holds what is up to each solver; index 2 is tol²).
@group(0) @binding(2) var<storage, read_write> scalars: array<Real>;
// Squared residual norms, one per iteration (index 0: the initial residual).
@group(0) @binding(3) var<storage, read_write> history: array<Real>;

var<workgroup> wg_status: u32;

// The status as seen at the start of this dispatch, uniform across the workgroup.
fn current_status(ids: Ids) -> u32 {
    if ids.lid == 0u {
        wg_status = atomicLoad(&state[0]);
    }
    return workgroupUniformLoad(&wg_status);
}

// Only workgroup 0, thread 0 records a status change (every workgroup reaches the same
// decision from the same sums).
fn set_status(ids: Ids, status: u32) {
    if ids.lid == 0u && ids.wid.x == 0u {
        atomicStore(&state[0], status);
        atomicStore(&state[2], atomicLoad(&state[1]));
    }
}

// Stops the solve with `status`, naming the quantity in state[3] (0: none). Called by one
// thread only (workgroup 0, thread 0 of a kernel with several workgroups).
fn stop_solve(status: u32, quantity: u32) {
    atomicStore(&state[0], status);
    atomicStore(&state[2], atomicLoad(&state[1]));
    atomicStore(&state[3], quantity);
}

fn is_leader(ids: Ids) -> bool {
    return ids.lid == 0u && ids.wid.x == 0u;
}

fn is_finite(v: Real) -> bool {
    // NaN fails the comparison, ±inf exceeds the largest finite value.
    return abs(v) <= REAL_MAX;
}

// Records the squared residual of the current iteration and checks it against tol²
// (scalars[2]). Called by workgroup 0, thread 0 only.
fn record_residual(rr: Real) {
    let it = atomicLoad(&state[1]);
    history[min(it, arrayLength(&history) - 1u)] = rr;
    if !is_finite(rr) {
        atomicStore(&state[0], STATUS_NON_FINITE);
        atomicStore(&state[2], it);
    } else if rr <= scalars[2] {
        atomicStore(&state[0], STATUS_CONVERGED);
        atomicStore(&state[2], it);
    }
    atomicStore(&state[1], it + 1u);
}

// Re-sums the per-workgroup partials in partials[base .. base + count] (every workgroup
// does this redundantly: the second reduction stage of paper 000 without an extra launch).
// With compensated sums (sum_compensated.wgsl) the partials' error terms are added too.
fn sum_partials(base: u32, count: u32, ids: Ids) -> vec4<Real> {
    var acc = sum_zero();
    for (var g = ids.lid; g < count; g = g + WG) {
        acc = sum_merge(acc, partial_load(base + g));
    }
    return sum_value(workgroup_total(acc, ids));
}

// The first reduction stage: the workgroup's sum of `v` into partials slot `slot`
// (partials[slot · groups + workgroup], written by thread 0). Call from uniform control flow.
fn store_partials(slot: u32, v: vec4<Real>, ids: Ids) {
    store_sum(slot, sum_of(v), ids);
}

// `store_partials` of a running sum (sum_plain.wgsl / sum_compensated.wgsl): the kernels'
// grid-stride loops accumulate their terms with `sum_add` and store them with this.
fn store_sum(slot: u32, a: Sum, ids: Ids) {
    let t = workgroup_total(a, ids);
    if ids.lid == 0u {
        partial_store(slot * params.groups + ids.wid.x, t);
    }
}

// Launch parameters, one uniform buffer per call site (fields a kernel does not need are 0).
struct Params {
    n: u32,          // vector length / matrix rows
    groups: u32,     // workgroups of every reducing kernel = partials per slot
    jacobi: u32,     // 1: Jacobi preconditioning (dinv bound)
    slot: u32,       // partials slot a kernel writes (BLAS kernels) or reads (finish)
    dst: u32,        // scalars index written by finish kernels
    num: u32,        // scalars index of a coefficient's numerator
    den: u32,        // scalars index of its denominator
    flags: u32,      // FLAG_* below
    comp: u32,       // component of the partial vec4 that finish stores
    comp_monitor: u32, // component it records as the squared residual
    ell_width: u32,  // entries per row of an ELL matrix
    zero: u32,       // always 0 (the host never sets it): sum_compensated.wgsl's opaque zero
}

const FLAG_NEGATE: u32 = 1u;   // axpy: y -= a·x
const FLAG_SHIFT: u32 = 2u;    // finish: scalars[dst + 1] = scalars[dst] first
const FLAG_MONITOR: u32 = 4u;  // finish: record the residual and test convergence
const FLAG_POSITIVE: u32 = 8u; // finish: the stored value must be > 0 (⟨p, Ap⟩ of CG)

@group(0) @binding(4) var<uniform> params: Params;
