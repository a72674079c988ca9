// sum_compensated.wgsl: the running sums of the reductions with error terms (issue 15;
// ShaderConfig::compensated, `--reduction compensated`). Same interface as sum_plain.wgsl.
//
// A Sum is an unevaluated pair s + e: s the running sum, e the sum of the rounding errors
// made on the way, each found exactly by TwoSum (Knuth: 6 flops, no branch, any order of
// magnitudes). Every stage carries the pair:
//   - per thread, the grid-stride loop's terms (sum_add: cascaded TwoSum, Sum2 of Ogita,
//     Rump and Oishi),
//   - across the workgroup, a tree through workgroup memory with TwoSum at each level, the
//     errors of both children added to the level's own (also in the subgroup flavour: there
//     is no compensated subgroupAdd),
//   - between workgroups, each partial is stored as fl(s + e) in partials[i] with the exact
//     remainder in the buffer's upper half, partials[arrayLength / 2 + i] (the host
//     allocates twice the slots: gpu::kernels::partials_len); the device-side second stage
//     (sum_partials) adds pairs with TwoSum again.
// The result is within about one rounding of the exact sum of the terms, plus n·u² of the
// sum of their magnitudes, where the plain tree is within (log2 n)·u of the magnitudes.
// The terms themselves (the products x_i·y_i) are rounded once each: WGSL's fma is not
// guaranteed to be fused, so there is no exact TwoProduct. A host that reads only the lower
// half (the f64 finish of `paper` mode) gets each workgroup's sum rounded once.

struct Sum {
    s: vec4<Real>,
    e: vec4<Real>,
}

var<workgroup> red_err: array<vec4<Real>, WG>;
var<workgroup> red_pair: Sum;

// TwoSum's error is 0 in real arithmetic, and shader compilers apply real-arithmetic rules
// to float code not marked exact (SPIR-V's NoContraction, GLSL's `precise`, has no WGSL
// spelling): on lavapipe the plain spelling of TwoSum returns e = 0 for 1e8 + 1, and so does
// a barrier through a zero the compiler can prove (arrayLength(..) >> 31). So every
// intermediate passes through `sum_hide`, an integer xor with `params.zero`, a uniform the
// host leaves 0 and the compiler cannot know: no float rule sees through it. Five integer
// operations per TwoSum (tests/gpu_compensated.rs checks e on the adapter it runs on).
fn sum_hide(v: vec4<Real>) -> vec4<Real> {
    return bitcast<vec4<Real>>(bitcast<vec4<u32>>(v) ^ vec4<u32>(params.zero));
}

fn sum_hide1(v: Real) -> Real {
    return bitcast<Real>(bitcast<u32>(v) ^ params.zero);
}

// a + b = s + e exactly (Knuth's TwoSum), componentwise.
fn sum_two(a: vec4<Real>, b: vec4<Real>) -> Sum {
    let s = sum_hide(a + b);
    let bb = sum_hide(s - a);
    let e = sum_hide(a - sum_hide(s - bb)) + sum_hide(b - bb);
    return Sum(s, e);
}

fn sum_zero() -> Sum {
    return Sum(vec4<Real>(Real(0.0)), vec4<Real>(Real(0.0)));
}

fn sum_of(v: vec4<Real>) -> Sum {
    return Sum(v, vec4<Real>(Real(0.0)));
}

fn sum_add(a: Sum, v: vec4<Real>) -> Sum {
    let t = sum_two(a.s, v);
    return Sum(t.s, a.e + t.e);
}

fn sum_add_x(a: Sum, v: Real) -> Sum {
    let s = sum_hide1(a.s.x + v);
    let bb = sum_hide1(s - a.s.x);
    let e = sum_hide1(a.s.x - sum_hide1(s - bb)) + sum_hide1(v - bb);
    var r = a;
    r.s.x = s;
    r.e.x = a.e.x + e;
    return r;
}

fn sum_merge(a: Sum, b: Sum) -> Sum {
    let t = sum_two(a.s, b.s);
    return Sum(t.s, t.e + (a.e + b.e));
}

fn sum_value(a: Sum) -> vec4<Real> {
    return a.s + a.e;
}

fn workgroup_total(a: Sum, ids: Ids) -> Sum {
    red_scratch[ids.lid] = a.s;
    red_err[ids.lid] = a.e;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if ids.lid < s {
            let t = sum_two(red_scratch[ids.lid], red_scratch[ids.lid + s]);
            red_scratch[ids.lid] = t.s;
            red_err[ids.lid] = t.e + (red_err[ids.lid] + red_err[ids.lid + s]);
        }
        workgroupBarrier();
    }
    if ids.lid == 0u {
        red_pair = Sum(red_scratch[0], red_err[0]);
    }
    // workgroupUniformLoad makes the result uniform (and is the barrier before reuse).
    return workgroupUniformLoad(&red_pair);
}

fn partial_store(i: u32, a: Sum) {
    // Renormalise: the lower half holds the sum rounded once, the upper half the remainder.
    let t = sum_two(a.s, a.e);
    partials[i] = t.s;
    partials[arrayLength(&partials) / 2u + i] = t.e;
}

fn partial_load(i: u32) -> Sum {
    return Sum(partials[i], partials[arrayLength(&partials) / 2u + i]);
}

fn partial_copy_x_as_y(dst: u32, src: u32) {
    let a = partial_load(src);
    let z = Real(0.0);
    partial_store(dst, Sum(vec4<Real>(z, a.s.x, z, z), vec4<Real>(z, a.e.x, z, z)));
}
