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

fn sum_one(a: vec4<Real>, ids: Ids) -> vec4<Real> {
    let z = Real(0.0);
    return vec4<Real>(workgroup_sum2(vec2<Real>(a.x, z), ids).x, z, z, z);
}

fn sum_pair(a: vec4<Real>, b: vec4<Real>, ids: Ids) -> Pair {
    // Two components, the second stage once (`workgroup_sum2`): every iteration reduces.
    let s = workgroup_sum2(vec2<Real>(a.x, b.x), ids);
    let z = Real(0.0);
    return Pair(vec4<Real>(s.x, z, z, z), vec4<Real>(s.y, z, z, z));
}
