// gmres_residual: the start of every GMRES(m) cycle (paper 000, Alg. 5/6 l.2–3), both variants.
//
//   r = b − A·x                  → vector `params.dst` of the Krylov pool (x and b are pool
//                                   vectors `params.comp` and `params.den`)
//   z = D⁻¹r  (Jacobi, pipelined) → vector `params.num` of the pool (flag 1)
//   first reduction stage of ‖r‖² → partials slot 0 (component x)
//
// It also re-opens the cycle: workgroup 0, thread 0 sets the status word to running and
// clears the stop code / stop step in the cycle buffer (`scalars`, bound to the GMRES cycle
// buffer: header indices 0 and 1). It runs whatever the status is, so it never reads it.
//
// The pool holds the vectors of the solve back to back (vector k at offset k·n); see
// src/solvers/gmres/basis.rs for its layout and for the cycle buffer's.

@group(0) @binding(5) var<storage, read_write> pool: array<Real>;
@group(0) @binding(11) var<storage, read> dinv: array<Real>;

const GM_H_STOP: u32 = 0u;
const GM_H_STEP: u32 = 1u;
const GM_SLOT_RESIDUAL: u32 = 0u;
const GM_FLAG_WRITE_Z: u32 = 1u;

fn spmv_x(col: u32) -> Real {
    return pool[params.comp * params.n + col];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let r_off = params.dst * n;
    let z_off = params.num * n;
    let b_off = params.den * n;
    let write_z = params.jacobi != 0u && (params.flags & GM_FLAG_WRITE_Z) != 0u;
    var acc = Real(0.0);
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let ax_row = spmv_pass(chunk, ids.lid);
        if ax_row.valid {
            let row = ax_row.row;
            let ri = pool[b_off + row] - ax_row.value;
            pool[r_off + row] = ri;
            if write_z {
                pool[z_off + row] = dinv[row] * ri;
            }
            acc = acc + ri * ri;
        }
    }
    let t = workgroup_sum(vec4<Real>(acc, Real(0.0), Real(0.0), Real(0.0)), ids);
    if ids.lid == 0u {
        partials[GM_SLOT_RESIDUAL * params.groups + ids.wid.x] = t;
    }
    if is_leader(ids) {
        atomicStore(&state[0], STATUS_RUNNING);
        scalars[GM_H_STOP] = Real(0.0);
        scalars[GM_H_STEP] = Real(0.0);
    }
}
