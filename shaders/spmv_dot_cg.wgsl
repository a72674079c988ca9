// spmv_dot_cg: kernel 2 of pipelined CG (paper 000, Alg. 2 lines 13–15).
//
// 1. Second reduction stage of ⟨r,z⟩, ⟨r,r⟩ from slot 0 (written by update_cg or cg_init),
//    done redundantly by every workgroup; workgroup 0 stores them (scalars[0] = ⟨r,z⟩,
//    scalars[1] = ⟨r,r⟩), records ‖r‖² in the history and tests convergence.
// 2. Ap = A·p fused with the first reduction stage of ⟨p,Ap⟩ and ⟨Ap,D⁻¹Ap⟩ (⟨Ap,Ap⟩
//    without preconditioning) into slot 1.

@group(0) @binding(5) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(6) var<storage, read> col_idx: array<u32>;
@group(0) @binding(7) var<storage, read> values: array<Real>;
@group(0) @binding(8) var<storage, read> p: array<Real>;
@group(0) @binding(9) var<storage, read_write> ap: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
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
    var acc = vec4<Real>(Real(0.0));
    for (var row = ids.wid.x * WG + ids.lid; row < params.n; row = row + params.groups * WG) {
        var sum = Real(0.0);
        let end = row_ptr[row + 1u];
        for (var k = row_ptr[row]; k < end; k = k + 1u) {
            sum = sum + values[k] * p[col_idx[k]];
        }
        ap[row] = sum;
        var w = sum;
        if params.jacobi != 0u {
            w = dinv[row] * sum;
        }
        acc = acc + vec4<Real>(p[row] * sum, sum * w, Real(0.0), Real(0.0));
    }
    let t = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[params.groups + ids.wid.x] = t;
    }
}
