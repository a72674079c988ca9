// jacobi_sweep: one sweep of the Jacobi iteration x ← x + D⁻¹(b − Ax) (paper 001), fused
// into a single launch: SpMV, residual, update and the first reduction stage of ‖r‖².
//
// Sweep d reads x_d from `x_in`, computes r_d = b − A·x_d row by row, writes
// x_{d+1} = x_d + D⁻¹r_d to `x_out` (a different buffer of a rotation of three, so no
// workgroup reads an x another one writes, and x_{d−1} survives the sweep) and the first
// stage of ‖r_d‖² into partials slot `params.slot`.
//
// Unless JACOBI_START (the setup sweep), it first finishes ‖r_{d−1}‖² from slot `params.num`
// (the previous sweep's: slots rotate too) redundantly in every workgroup — the paper-style
// second stage without a launch of its own. Workgroup 0 records it in the history and tests
// convergence; JACOBI_FIRST (the sweep finishing the initial residual) also stores it as
// ‖r0‖² in scalars[5]; with JACOBI_CHECKS (device mode) ‖r‖² > DIVERGENCE_FACTOR²·‖r0‖²
// stops the solve as diverged (STATUS_BREAKDOWN with code 3 in state[3]). Every workgroup
// takes the same decision from the same uniform sum and returns before writing when the
// solve stops (converged, diverged or non-finite), so x_{d} stays where it was.

@group(0) @binding(8) var<storage, read> b: array<Real>;
@group(0) @binding(9) var<storage, read> dinv: array<Real>;
@group(0) @binding(10) var<storage, read> x_in: array<Real>;
@group(0) @binding(11) var<storage, read_write> x_out: array<Real>;

const JACOBI_START: u32 = 16u;
const JACOBI_FIRST: u32 = 32u;
const JACOBI_CHECKS: u32 = 64u;
const JACOBI_CODE_DIVERGED: u32 = 3u;
const JACOBI_S_RR0: u32 = 5u;
// DIVERGENCE_FACTOR² (cpu::DIVERGENCE_FACTOR = 1e6 on the residual norm).
const JACOBI_DIVERGENCE2: Real = Real(1e12);

var<workgroup> wg_limits: vec2<Real>;

fn spmv_x(col: u32) -> Real {
    return x_in[col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    if (params.flags & JACOBI_START) == 0u {
        let rr = sum_partials(params.num * params.groups, params.groups, ids).x;
        let first = (params.flags & JACOBI_FIRST) != 0u;
        if ids.lid == 0u {
            // ‖r0‖² is not read by the sweep that stores it.
            var rr0 = Real(0.0);
            if !first {
                rr0 = scalars[JACOBI_S_RR0];
            }
            wg_limits = vec2<Real>(scalars[2], rr0);
        }
        let lim = workgroupUniformLoad(&wg_limits);
        let checks = (params.flags & JACOBI_CHECKS) != 0u;
        let diverged = checks && !first && rr > JACOBI_DIVERGENCE2 * lim.y;
        if is_leader(ids) {
            if first {
                scalars[JACOBI_S_RR0] = rr;
            }
            record_residual(rr);
            if diverged && atomicLoad(&state[0]) == STATUS_RUNNING {
                atomicStore(&state[0], STATUS_BREAKDOWN);
                atomicStore(&state[3], JACOBI_CODE_DIVERGED);
                atomicStore(&state[2], atomicLoad(&state[1]) - 1u);
            }
        }
        if !is_finite(rr) || rr <= lim.x || diverged {
            return;
        }
    }
    var acc = sum_zero();
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let spmv_out = spmv_pass(chunk, ids.lid);
        if spmv_out.valid {
            let row = spmv_out.row;
            let ax = spmv_out.value;
            let ri = b[row] - ax;
            x_out[row] = x_in[row] + dinv[row] * ri;
            acc = sum_add_x(acc, ri * ri);
        }
    }
    store_sum(params.slot, acc, ids);
}
