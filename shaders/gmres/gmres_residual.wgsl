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

@group(0) @binding(11) var<storage, read> dinv: array<Real>;

const GM_FLAG_WRITE_Z: u32 = 1u;

fn spmv_x(col: u32) -> Real {
    return pool_get(params.comp * params.n + col);
}

// Stores r = (b − A·x)[row] (and z = D⁻¹r); returns the row's term of ‖r‖².
fn spmv_store(row: u32, ax: Real) -> vec4<Real> {
    let n = params.n;
    let ri = pool_get(params.den * n + row) - ax;
    pool_set(params.dst * n + row, ri);
    if params.jacobi != 0u && (params.flags & GM_FLAG_WRITE_Z) != 0u {
        pool_set(params.num * n + row, dinv[row] * ri);
    }
    return vec4<Real>(ri * ri, Real(0.0), Real(0.0), Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    spmv_partials(GM_SLOT_RESIDUAL, ids);
    if is_leader(ids) {
        atomicStore(&state[0], STATUS_RUNNING);
        scalars[GM_H_STOP] = Real(0.0);
        scalars[GM_H_STEP] = Real(0.0);
    }
}
