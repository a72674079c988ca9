// spmv_dot_cg_ell: spmv_dot_cg with A in ELL storage (column-major, `params.ell_width`
// entries per row, padding = value 0): kernel 2 of pipelined CG (paper 000, Alg. 2 lines 13–15).
//
// 1. Second reduction stage of ⟨r,z⟩, ⟨r,r⟩ from slot 0 (written by update_cg or cg_init),
//    done redundantly by every workgroup; workgroup 0 stores them (scalars[0] = ⟨r,z⟩,
//    scalars[1] = ⟨r,r⟩), records ‖r‖² in the history and tests convergence.
// 2. Ap = A·p fused with the first reduction stage of ⟨p,Ap⟩ and ⟨Ap,D⁻¹Ap⟩ (⟨Ap,Ap⟩
//    without preconditioning) into slot 1.

@group(0) @binding(6) var<storage, read> col_idx: array<u32>;
@group(0) @binding(7) var<storage, read> values: array<Real>;
@group(0) @binding(8) var<storage, read> p: array<Real>;
@group(0) @binding(9) var<storage, read_write> ap: array<Real>;
@group(0) @binding(10) var<storage, read> dinv: array<Real>;

// (A·p)_row, p_row and D⁻¹_row (1 without preconditioning).
fn load_row(row: u32) -> vec3<Real> {
    // Entry k of every row is contiguous across rows: consecutive threads load adjacent words.
    var sum = Real(0.0);
    for (var k = 0u; k < params.ell_width; k = k + 1u) {
        let idx = k * params.n + row;
        sum = sum + values[idx] * p[col_idx[idx]];
    }
    var d = Real(1.0);
    if params.jacobi != 0u {
        d = dinv[row];
    }
    return vec3<Real>(sum, p[row], d);
}

// Stores (Ap)_row and returns its (⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩) terms.
fn store_row(row: u32, q: vec3<Real>) -> vec4<Real> {
    ap[row] = q.x;
    return vec4<Real>(q.y * q.x, q.x * q.z * q.x, Real(0.0), Real(0.0));
}

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
    // Four rows per thread and loop trip, every load before any store (see update_cg).
    let stride = params.groups * WG;
    var acc = vec4<Real>(Real(0.0));
    for (var row = ids.wid.x * WG + ids.lid; row < params.n; row = row + 4u * stride) {
        let r1 = row + stride;
        let r2 = r1 + stride;
        let r3 = r2 + stride;
        let q0 = load_row(row);
        var q1 = q0;
        var q2 = q0;
        var q3 = q0;
        if r1 < params.n {
            q1 = load_row(r1);
        }
        if r2 < params.n {
            q2 = load_row(r2);
        }
        if r3 < params.n {
            q3 = load_row(r3);
        }
        acc = acc + store_row(row, q0);
        if r1 < params.n {
            acc = acc + store_row(r1, q1);
        }
        if r2 < params.n {
            acc = acc + store_row(r2, q2);
        }
        if r3 < params.n {
            acc = acc + store_row(r3, q3);
        }
    }
    let t = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[params.groups + ids.wid.x] = t;
    }
}
