// cg_cooperative: fused CG's iteration (update_spmv_dot_cg: paper 000, Alg. 2 with eq. 3 in
// one pass) run `iters` times in ONE launch by workgroups that are all resident at once and
// meet at a grid barrier between iterations (variant `cooperative`).
//
// Why: from 1e4 to 1e6 rows an iteration of fused CG is one launch, and the launch — its
// start, its tail, the gap before the next — costs 3–8 µs on an H200 beside a product that
// takes 1–15 µs. Here the launch is paid once per `iters` iterations; between iterations the
// workgroups wait for each other at a barrier built from an atomic counter (grid_barrier), and
// each workgroup finishes the global reduction redundantly from the per-workgroup partial sums
// (as fused CG's launches do), so an iteration costs one barrier instead of one launch.
//
// WGSL promises no forward progress to a workgroup that waits for another: the barrier holds
// only if every workgroup of the launch is resident at once. So the host launches no more
// workgroups than a probe launch of this very pipeline found co-resident (COOP_PROBE), every
// wait is bounded (coop.spin_limit polls), and a wait that runs out marks the launch failed
// (grid[1] = 1, status STATUS_GRID_TIMEOUT): every workgroup then leaves, and the host solves
// again with fused CG. Nothing waits forever.
//
// Memory: what one workgroup writes in an iteration (the new r, p, Ap of its rows and its
// partial sums) is read by others in the next, inside the same launch. The buffers are
// @coherent (no stale per-core cache line) and the barrier is storageBarrier (device-scope
// acquire/release) → atomic arrival → wait → storageBarrier.
//
// Iteration k of a launch reads iterate j from set (k + coop.parity) % 2 of r, p, Ap and the
// sums of its four inner products (⟨r,z⟩, ⟨r,r⟩, ⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩) from coop_sums slot
// (k + parity + 1) % 2, and (as update_spmv_dot_cg):
// 1. records ‖r_j‖² (workgroup 0, thread 0: history[j]; state[1] once per launch) and tests it
//    (converged, non-finite, ⟨r,z⟩ ≤ 0) — every workgroup reaches the same decision from the
//    same sums; stops at the solve's iteration limit (j = limit);
// 2. α = ⟨r,z⟩/⟨p,Ap⟩ (stops if ⟨p,Ap⟩ ≤ 0), β = α²⟨Ap,D⁻¹Ap⟩/⟨r,z⟩ − 1 (eq. 3);
// 3. Ap' = A·p' with p' = D⁻¹(r − αAp) + βp formed on the fly wherever the product reads it;
// 4. for its own rows x += αp, r', p', Ap' into the other set, its partial sums into slot
//    (k + parity) % 2; then the grid barrier.
// So x runs one iterate ahead of the history between launches; a launch that stops leaves x
// at the iterate whose residual it recorded last.
//
// Flags: COOP_FIRST — the launch after cg_init + spmv_dot_cg: its first iteration takes the
// sums from partials slots 0 (⟨r,z⟩, ⟨r,r⟩) and 1 (⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩) of coop.setup_groups
// entries, and ‖r₀‖² is already recorded (by spmv_dot_cg). COOP_PROBE — one barrier, nothing
// else (the host's residency probe).

struct CoopParams {
    iters: u32,         // iterations this launch runs at most
    limit: u32,         // the solve's iteration limit
    flags: u32,         // COOP_FIRST, COOP_PROBE
    parity: u32,        // 0 or 1: which set and slot iteration 0 reads (above)
    spin_limit: u32,    // polls of the arrival counter before a wait gives up
    setup_groups: u32,  // partials per slot of cg_init's and spmv_dot_cg's sums
    pad0: u32,
    pad1: u32,
}

const COOP_FIRST: u32 = 1u;
const COOP_PROBE: u32 = 2u;
// A grid barrier's wait ran out: the launch's workgroups were not all resident.
const STATUS_GRID_TIMEOUT: u32 = 7u;

@group(0) @binding(5) var<storage, read_write> x: array<Real>;
@coherent @group(0) @binding(6) var<storage, read_write> r0: array<Real>;
@coherent @group(0) @binding(7) var<storage, read_write> p0: array<Real>;
@coherent @group(0) @binding(8) var<storage, read_write> ap0: array<Real>;
@group(0) @binding(9) var<storage, read> dinv: array<Real>;
@coherent @group(0) @binding(10) var<storage, read_write> r1: array<Real>;
@coherent @group(0) @binding(11) var<storage, read_write> p1: array<Real>;
@coherent @group(0) @binding(12) var<storage, read_write> ap1: array<Real>;
// grid[0]: arrivals at grid barriers (wraps; params.groups is a power of two, so a barrier's
// arrivals never straddle the wrap); grid[1]: 1 once a wait ran out; grid[2], grid[3]: spare.
// The host zeroes them at every setup.
@group(0) @binding(13) var<storage, read_write> grid: array<atomic<u32>, 4>;
// Per-workgroup partial sums of the iterations: two slots of params.groups vec4s.
@coherent @group(0) @binding(14) var<storage, read_write> coop_sums: array<vec4<Real>>;
@group(0) @binding(15) var<uniform> coop: CoopParams;

// The set iterate j is read from (0: r0, p0, ap0); the other receives iterate j + 1.
var<private> cur: u32;
var<workgroup> wg_tol2: Real;
var<workgroup> wg_its: u32;
var<workgroup> wg_grid_ok: u32;

fn r_prev(i: u32) -> Real {
    if cur == 0u {
        return r0[i];
    }
    return r1[i];
}

fn p_prev(i: u32) -> Real {
    if cur == 0u {
        return p0[i];
    }
    return p1[i];
}

fn ap_prev(i: u32) -> Real {
    if cur == 0u {
        return ap0[i];
    }
    return ap1[i];
}

// Stores the row's new r, p, Ap into the other set (x in next_row); returns its terms of the
// four sums.
fn store_row(q: SpmvRow) -> vec4<Real> {
    let next = next_row(q);
    if cur == 0u {
        r1[q.row] = next.r;
        p1[q.row] = next.p;
        ap1[q.row] = q.value;
    } else {
        r0[q.row] = next.r;
        p0[q.row] = next.p;
        ap0[q.row] = q.value;
    }
    return next.terms;
}

// The four sums of coop_sums slot `slot`, finished by every workgroup alike.
fn coop_total(slot: u32, ids: Ids) -> vec4<Real> {
    var acc = vec4<Real>(Real(0.0));
    for (var g = ids.lid; g < params.groups; g = g + WG) {
        acc = acc + coop_sums[slot * params.groups + g];
    }
    return workgroup_sum(acc, ids);
}

// The workgroup's partial sums into slot `slot` (uniform control flow).
fn coop_store(slot: u32, v: vec4<Real>, ids: Ids) {
    let t = workgroup_sum(v, ids);
    if ids.lid == 0u {
        coop_sums[slot * params.groups + ids.wid.x] = t;
    }
}

// A launch that stops writes ‖r‖² = −1 into its slot (as update_spmv_dot_cg does), so that a
// `paper`-mode host reading the slot asks the status word why.
fn mark_stopped(slot: u32, ids: Ids) {
    if ids.lid == 0u {
        coop_sums[slot * params.groups + ids.wid.x] =
            vec4<Real>(Real(0.0), Real(-1.0), Real(0.0), Real(0.0));
    }
}

// Waits until every workgroup of the launch has arrived; false if the wait ran out (or
// another workgroup's did). Call from uniform control flow.
fn grid_barrier(ids: Ids) -> bool {
    // This workgroup's stores of the iteration before its arrival (release).
    storageBarrier();
    if ids.lid == 0u {
        let ticket = atomicAdd(&grid[0], 1u);
        let base = ticket - ticket % params.groups;
        var ok = 1u;
        var spins = 0u;
        loop {
            if atomicLoad(&grid[0]) - base >= params.groups {
                break;
            }
            spins = spins + 1u;
            if spins >= coop.spin_limit || ((spins & 63u) == 0u && atomicLoad(&grid[1]) != 0u) {
                ok = 0u;
                atomicStore(&grid[1], 1u);
                if (coop.flags & COOP_PROBE) == 0u {
                    atomicStore(&state[0], STATUS_GRID_TIMEOUT);
                }
                break;
            }
        }
        wg_grid_ok = ok;
    }
    // The others' stores before their arrivals, visible to this workgroup's loads (acquire).
    storageBarrier();
    return workgroupUniformLoad(&wg_grid_ok) == 1u;
}

// Thread 0 of workgroup 0 stops the solve with `status` at residual index `at`.
fn stop_at(status: u32, at: u32, ids: Ids) {
    if is_leader(ids) {
        atomicStore(&state[0], status);
        atomicStore(&state[2], at);
    }
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if ids.lid == 0u {
        wg_status = atomicLoad(&state[0]);
        wg_its = atomicLoad(&state[1]);
        wg_tol2 = scalars[2];
        wg_grid_ok = 1u - min(atomicLoad(&grid[1]), 1u);
    }
    if (coop.flags & COOP_PROBE) != 0u {
        _ = grid_barrier(ids);
        return;
    }
    if workgroupUniformLoad(&wg_status) != STATUS_RUNNING
        || workgroupUniformLoad(&wg_grid_ok) == 0u {
        return;
    }
    // Residual norms recorded so far: the index of the next one.
    var its = workgroupUniformLoad(&wg_its);
    let tol2 = workgroupUniformLoad(&wg_tol2);
    let first = (coop.flags & COOP_FIRST) != 0u;
    for (var k = 0u; k < coop.iters; k = k + 1u) {
        cur = (k + coop.parity) % 2u;
        let slot_in = 1u - cur;
        let slot_out = cur;
        var s: vec4<Real>;
        if first && k == 0u {
            let a = sum_partials(0u, coop.setup_groups, ids);
            let b = sum_partials(coop.setup_groups, coop.setup_groups, ids);
            s = vec4<Real>(a.x, a.y, b.x, b.y);
        } else {
            s = coop_total(slot_in, ids);
            let rr = s.y;
            let rz = s.x;
            if its > coop.limit {
                // Recorded up to the limit by an earlier launch: nothing left to do.
                mark_stopped(slot_out, ids);
                break;
            }
            if is_leader(ids) {
                history[min(its, arrayLength(&history) - 1u)] = rr;
            }
            let at = its;
            its = its + 1u;
            if !is_finite(rr) {
                stop_at(STATUS_NON_FINITE, at, ids);
            } else if rr <= tol2 {
                stop_at(STATUS_CONVERGED, at, ids);
            } else if rr > Real(0.0) && !(rz > Real(0.0)) {
                // ⟨r, D⁻¹r⟩ ≤ 0 with r ≠ 0: D or A not positive definite.
                stop_at(STATUS_NOT_SPD, at, ids);
            }
            if !is_finite(rr) || rr <= tol2 || (rr > Real(0.0) && !(rz > Real(0.0)))
                || its > coop.limit {
                mark_stopped(slot_out, ids);
                break;
            }
        }
        // update_cg's check: ⟨p,Ap⟩ ≤ 0 stops the solve before anything is changed.
        let pap = s.z;
        if !(pap > Real(0.0)) || !is_finite(pap) {
            stop_at(select(STATUS_NON_FINITE, STATUS_NOT_SPD, is_finite(pap)), its, ids);
            mark_stopped(slot_out, ids);
            break;
        }
        alpha = s.x / pap;
        beta = alpha * alpha * s.w / s.x - Real(1.0);
        var acc = vec4<Real>(Real(0.0));
        for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
            let q = spmv_pass(chunk, ids.lid);
            if q.valid {
                acc = acc + store_row(q);
            }
        }
        coop_store(slot_out, acc, ids);
        if !grid_barrier(ids) {
            // (The workgroup whose wait ran out set the status; the host solves again.)
            break;
        }
    }
    if is_leader(ids) {
        atomicStore(&state[1], its);
    }
}
