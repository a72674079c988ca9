// batch_cg: batched CG, one right-hand side per work item (the algorithm is the piece
// shaders/lib/batch_cg.wgsl; this file says what a column is). A column is one Real; the
// lane-wise sums pack ⟨r, D⁻¹r⟩ and ‖r‖² into one workgroup reduction.

alias Col = Real;
const LANES: u32 = 1u;

struct Pair {
    a: vec4<Real>,
    b: vec4<Real>,
}

fn col_zero() -> Col {
    return Real(0.0);
}

fn col_to4(c: Col) -> vec4<Real> {
    return vec4<Real>(c, Real(0.0), Real(0.0), Real(0.0));
}

fn col_from4(v: vec4<Real>) -> Col {
    return v.x;
}

fn sum_pair(a: vec4<Real>, b: vec4<Real>, ids: Ids) -> Pair {
    let s = workgroup_sum(vec4<Real>(a.x, b.x, Real(0.0), Real(0.0)), ids);
    let z = Real(0.0);
    return Pair(vec4<Real>(s.x, z, z, z), vec4<Real>(s.y, z, z, z));
}
