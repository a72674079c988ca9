// spmv_dot_cg: kernel 2 of pipelined CG (paper 000, Alg. 2 lines 13–15).
//
// 1. Second reduction stage of ⟨r,z⟩, ⟨r,r⟩ from slot 0 (written by update_cg or cg_init),
//    done redundantly by every workgroup; workgroup 0 stores them (scalars[0] = ⟨r,z⟩,
//    scalars[1] = ⟨r,r⟩), records ‖r‖² in the history and tests convergence.
// 2. Ap = A·p fused with the first reduction stage of ⟨p,Ap⟩ and ⟨Ap,D⁻¹Ap⟩ (⟨Ap,Ap⟩
//    without preconditioning) into slot 1.

@group(0) @binding(8) var<storage, read> p: array<Real>;
@group(0) @binding(9) var<storage, read_write> ap: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;

fn spmv_x(col: u32) -> Real {
    return p[col];
}

// Stores (Ap)_row and returns its (⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩) terms.
fn store_row(q: SpmvRow) -> vec4<Real> {
    let row = q.row;
    var d = Real(1.0);
    if params.jacobi != 0u {
        d = dinv[row];
    }
    ap[row] = q.value;
    return vec4<Real>(p[row] * q.value, q.value * d * q.value, Real(0.0), Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    // The workgroup's first row chunk is multiplied before the status word and the partial
    // sums are read, so its loads overlap their latency (at small n it is the only chunk).
    // Nothing is stored unless the solve is running.
    let passes = spmv_passes();
    var first = SpmvRow(0u, Real(0.0), false);
    if ids.wid.x < passes {
        first = spmv_pass(ids.wid.x, ids.lid);
    }
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let s = sum_partials(0u, params.groups, ids);
    if is_leader(ids) {
        scalars[0] = s.x;
        scalars[1] = s.y;
        record_residual(s.y);
        // With a preconditioner ⟨r, D⁻¹r⟩ ≤ 0 for r ≠ 0 means D is not positive definite.
        if s.y > Real(0.0) && !(s.x > Real(0.0)) && atomicLoad(&state[0]) == STATUS_RUNNING {
            atomicStore(&state[0], STATUS_NOT_SPD);
            atomicStore(&state[2], atomicLoad(&state[1]) - 1u);
        }
    }
    var acc = sum_zero();
    if first.valid {
        acc = sum_of(store_row(first));
    }
    for (var chunk = ids.wid.x + params.groups; chunk < passes; chunk = chunk + params.groups) {
        let q = spmv_pass(chunk, ids.lid);
        if q.valid {
            acc = sum_add(acc, store_row(q));
        }
    }
    store_sum(1u, acc, ids);
}
