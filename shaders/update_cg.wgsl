// update_cg: kernel 1 of pipelined CG (paper 000, Alg. 2 lines 10–12, 16–17).
//
// Finishes ⟨p,Ap⟩ and ⟨Ap,D⁻¹Ap⟩ from slot 1 redundantly in every workgroup, then
//   α = ⟨r,z⟩/⟨p,Ap⟩,  β = α²⟨Ap,D⁻¹Ap⟩/⟨r,z⟩ − 1          (eq. 3, Jacobi-preconditioned)
//   x += αp,  r −= αAp,  z = D⁻¹r,  p = z + βp
// and writes the first reduction stage of the new ⟨r,z⟩, ⟨r,r⟩ into slot 0.
// ⟨p,Ap⟩ ≤ 0 stops the solve with STATUS_NOT_SPD before anything is changed.

@group(0) @binding(5) var<storage, read_write> x: array<Real>;
@group(0) @binding(6) var<storage, read_write> r: array<Real>;
@group(0) @binding(7) var<storage, read_write> p: array<Real>;
@group(0) @binding(8) var<storage, read> ap: array<Real>;
@group(0) @binding(9) var<storage, read> dinv: array<Real>;

var<workgroup> wg_rz: Real;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let s = sum_partials(params.groups, params.groups, ids);
    let pap = s.x;
    if !(pap > Real(0.0)) || !is_finite(pap) {
        if is_leader(ids) {
            if is_finite(pap) {
                atomicStore(&state[0], STATUS_NOT_SPD);
            } else {
                atomicStore(&state[0], STATUS_NON_FINITE);
            }
            atomicStore(&state[2], atomicLoad(&state[1]));
        }
        return;
    }
    if ids.lid == 0u {
        wg_rz = scalars[0];
    }
    let rz = workgroupUniformLoad(&wg_rz);
    let alpha = rz / pap;
    let beta = alpha * alpha * s.y / rz - Real(1.0);
    var acc = vec4<Real>(Real(0.0));
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        let pi = p[i];
        x[i] = x[i] + alpha * pi;
        let ri = r[i] - alpha * ap[i];
        r[i] = ri;
        var zi = ri;
        if params.jacobi != 0u {
            zi = dinv[i] * ri;
        }
        p[i] = zi + beta * pi;
        acc = acc + vec4<Real>(ri * zi, ri * ri, Real(0.0), Real(0.0));
    }
    let t = workgroup_sum(acc, ids);
    if ids.lid == 0u {
        partials[ids.wid.x] = t;
    }
}
