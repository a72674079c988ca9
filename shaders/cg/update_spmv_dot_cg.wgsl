// update_spmv_dot_cg: a whole iteration of pipelined CG in one launch (variant `fused`;
// paper 000, Alg. 2 with eq. 3 — the recurrences of update_cg and spmv_dot_cg unchanged).
//
// Launch k reads iterate k−1 (x, r, p, Ap in the "in" set) and the first reduction stage
// of its four inner products (⟨r,z⟩, ⟨r,r⟩, ⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩) from partials slot
// `params.slot`, and
// 1. finishes them redundantly in every workgroup (all reach the same values and the same
//    decisions); workgroup 0 records ‖r‖² and sets the status on convergence or failure;
// 2. α = ⟨r,z⟩/⟨p,Ap⟩, β = α²⟨Ap,D⁻¹Ap⟩/⟨r,z⟩ − 1 (eq. 3);
// 3. Ap' = A·p' where the new direction p' = D⁻¹(r − αAp) + βp is formed on the fly
//    wherever the product reads it (its neighbours' entries come from the "in" set, which no
//    launch writes while another reads it: the host alternates two sets);
// 4. for its own rows: x += αp (in place: only the row's own thread reads or writes it),
//    r' = r − αAp, p' and Ap' into the "out" set, and the first reduction stage of the four
//    inner products of iterate k into slot `params.dst`.
// So an iteration costs one launch and one global reduction instead of two; the product
// reads r, Ap and p where it read p (three gathers for one: free while launches dominate).
//
// Flags: FUSED_FIRST — the launch after cg_init + spmv_dot_cg: the sums come from slots 0
// (⟨r,z⟩, ⟨r,r⟩) and 1 (⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩), and ‖r‖² is already recorded (by
// spmv_dot_cg). FUSED_RECORD_ONLY — the last launch an iteration limit allows: records and
// tests iterate k−1, changes nothing (so x is the iterate the history ends with).

const FUSED_FIRST: u32 = 16u;
const FUSED_RECORD_ONLY: u32 = 32u;

@group(0) @binding(5) var<storage, read_write> x: array<Real>;
@group(0) @binding(6) var<storage, read> r_in: array<Real>;
@group(0) @binding(7) var<storage, read> p_in: array<Real>;
@group(0) @binding(8) var<storage, read> ap_in: array<Real>;
@group(0) @binding(9) var<storage, read> dinv: array<Real>;
@group(0) @binding(10) var<storage, read_write> r_out: array<Real>;
@group(0) @binding(11) var<storage, read_write> p_out: array<Real>;
@group(0) @binding(12) var<storage, read_write> ap_out: array<Real>;

var<workgroup> wg_tol2: Real;

fn r_prev(i: u32) -> Real {
    return r_in[i];
}

fn p_prev(i: u32) -> Real {
    return p_in[i];
}

fn ap_prev(i: u32) -> Real {
    return ap_in[i];
}

// Stores the row's new r, p, Ap (x in next_row); returns its terms of the four sums.
fn store_row(q: SpmvRow) -> vec4<Real> {
    let next = next_row(q);
    r_out[q.row] = next.r;
    p_out[q.row] = next.p;
    ap_out[q.row] = q.value;
    return next.terms;
}

// A launch that stops (or finds the solve stopped) writes ‖r‖² = −1 per workgroup into its
// slot instead of sums: a `paper`-mode host reading the slot sees a negative ‖r‖² and asks the
// status word why (the slot would otherwise hold an older launch's sums).
fn mark_stopped(ids: Ids) {
    if ids.lid == 0u {
        let stopped = vec4<Real>(Real(0.0), Real(-1.0), Real(0.0), Real(0.0));
        partial_store(params.dst * params.groups + ids.wid.x, sum_of(stopped));
    }
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    // The status word, tol² and the partial sums are independent loads, issued together so
    // that their latencies overlap (the sums of a stopped solve are read and then ignored).
    if ids.lid == 0u {
        wg_status = atomicLoad(&state[0]);
        wg_tol2 = scalars[2];
    }
    let first = (params.flags & FUSED_FIRST) != 0u;
    var s: vec4<Real>;
    if first {
        let a = sum_partials(0u, params.groups, ids);
        let b = sum_partials(params.groups, params.groups, ids);
        s = vec4<Real>(a.x, a.y, b.x, b.y);
    } else {
        s = sum_partials(params.slot * params.groups, params.groups, ids);
    }
    if workgroupUniformLoad(&wg_status) != STATUS_RUNNING {
        mark_stopped(ids);
        return;
    }
    let rz = s.x;
    let rr = s.y;
    let pap = s.z;
    let tol2 = workgroupUniformLoad(&wg_tol2);
    if !first {
        // spmv_dot_cg's checks on iterate k−1, made here by every workgroup alike.
        if is_leader(ids) {
            record_residual(rr);
            if rr > Real(0.0) && !(rz > Real(0.0)) && atomicLoad(&state[0]) == STATUS_RUNNING {
                atomicStore(&state[0], STATUS_NOT_SPD);
                atomicStore(&state[2], atomicLoad(&state[1]) - 1u);
            }
        }
        if !is_finite(rr) || rr <= tol2 || (rr > Real(0.0) && !(rz > Real(0.0))) {
            mark_stopped(ids);
            return;
        }
        if (params.flags & FUSED_RECORD_ONLY) != 0u {
            return;
        }
    }
    // update_cg's check: ⟨p,Ap⟩ ≤ 0 stops the solve before anything is changed.
    if !(pap > Real(0.0)) || !is_finite(pap) {
        if is_leader(ids) {
            if is_finite(pap) {
                atomicStore(&state[0], STATUS_NOT_SPD);
            } else {
                atomicStore(&state[0], STATUS_NON_FINITE);
            }
            atomicStore(&state[2], atomicLoad(&state[1]));
        }
        mark_stopped(ids);
        return;
    }
    alpha = rz / pap;
    beta = alpha * alpha * s.w / rz - Real(1.0);
    var acc = sum_zero();
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let q = spmv_pass(chunk, ids.lid);
        if q.valid {
            acc = sum_add(acc, store_row(q));
        }
    }
    store_sum(params.dst, acc, ids);
}
