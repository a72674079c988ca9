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

struct Entry {
    x: Real,
    r: Real,
    p: Real,
    ap: Real,
    dinv: Real,
}

fn load_entry(i: u32) -> Entry {
    var e: Entry;
    e.x = x[i];
    e.r = r[i];
    e.p = p[i];
    e.ap = ap[i];
    e.dinv = Real(1.0);
    if params.jacobi != 0u {
        e.dinv = dinv[i];
    }
    return e;
}

// x += αp, r −= αAp, z = D⁻¹r, p = z + βp; returns this entry's (⟨r,z⟩, ⟨r,r⟩) terms.
fn update_entry(i: u32, e: Entry, alpha: Real, beta: Real) -> vec4<Real> {
    let ri = e.r - alpha * e.ap;
    var zi = ri;
    if params.jacobi != 0u {
        zi = e.dinv * ri;
    }
    x[i] = e.x + alpha * e.p;
    r[i] = ri;
    p[i] = zi + beta * e.p;
    return vec4<Real>(ri * zi, ri * ri, Real(0.0), Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    // This thread's first entry is loaded before the status word and the partial sums, so
    // its memory latency overlaps theirs (at n ≤ WG·groups it is the thread's only entry).
    // Loads only: nothing is stored unless the solve is running.
    let first = ids.wid.x * WG + ids.lid;
    var e_first: Entry;
    if first < params.n {
        e_first = load_entry(first);
    }
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
    // Four entries per thread and loop trip, all loads before any store: x, r and p are
    // read_write bindings the compiler must assume may alias, so a store would otherwise
    // hold back the next loads and leave one load in flight per thread.
    let stride = params.groups * WG;
    var acc = sum_zero();
    for (var i = first; i < params.n; i = i + 4u * stride) {
        let i1 = i + stride;
        let i2 = i1 + stride;
        let i3 = i2 + stride;
        var e0 = e_first;
        if i != first {
            e0 = load_entry(i);
        }
        var e1 = e0;
        var e2 = e0;
        var e3 = e0;
        if i1 < params.n {
            e1 = load_entry(i1);
        }
        if i2 < params.n {
            e2 = load_entry(i2);
        }
        if i3 < params.n {
            e3 = load_entry(i3);
        }
        acc = sum_add(acc, update_entry(i, e0, alpha, beta));
        if i1 < params.n {
            acc = sum_add(acc, update_entry(i1, e1, alpha, beta));
        }
        if i2 < params.n {
            acc = sum_add(acc, update_entry(i2, e2, alpha, beta));
        }
        if i3 < params.n {
            acc = sum_add(acc, update_entry(i3, e3, alpha, beta));
        }
    }
    store_sum(0u, acc, ids);
}
