// batch_cg_block: batched CG with a block of four right-hand sides of one matrix per work
// item (the algorithm is the piece shaders/lib/batch_cg.wgsl): a column is a lane of
// vec4<Real>, so A·P reads each matrix entry once for all four columns, and every inner
// product is four lane-wise sums in one workgroup reduction.

alias Col = vec4<Real>;
const LANES: u32 = 4u;

struct Pair {
    a: vec4<Real>,
    b: vec4<Real>,
}

fn col_zero() -> Col {
    return vec4<Real>(0.0);
}

fn col_to4(c: Col) -> vec4<Real> {
    return c;
}

fn col_from4(v: vec4<Real>) -> Col {
    return v;
}

fn sum_one(a: vec4<Real>, ids: Ids) -> vec4<Real> {
    return workgroup_sum(a, ids);
}

fn sum_pair(a: vec4<Real>, b: vec4<Real>, ids: Ids) -> Pair {
    return Pair(workgroup_sum(a, ids), workgroup_sum(b, ids));
}
