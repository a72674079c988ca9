// ds.wgsl: double-single ("float-float", double-word) arithmetic on vec2<f32>(hi, lo), the
// unevaluated sum hi + lo with |lo| ≤ ulp(hi)/2: about 48 significant bits. CPU twin, bit for
// bit: src/cpu/ds.rs (same algorithms, same operation order; its tests check the bounds).
//
// API (u = 2⁻²⁴, the unit round-off of f32; bounds relative to the exact result, for
// round-to-nearest without underflow or overflow; JMP = Joldes, Muller, Popescu, "Tight and
// rigorous error bounds for basic building blocks of double-word arithmetic", ACM TOMS 2017):
//
//   two_sum(a, b: f32) -> vec2<f32>          s + e = a + b exactly (Knuth, JMP Alg. 1)
//   quick_two_sum(a, b: f32) -> vec2<f32>    the same when |a| ≥ |b| (Fast2Sum, JMP Alg. 2)
//   ds_split(a: f32) -> vec2<f32>            a = hi + lo, hi ≤ 12 bits, lo ≤ 11 bits (exact)
//   two_prod_fma(a, b: f32) -> vec2<f32>     p + e = a·b exactly if `fma` is fused (JMP Alg. 3)
//   two_prod_split(a, b: f32) -> vec2<f32>   p + e = a·b exactly with any f32 arithmetic (Dekker)
//   two_prod(a, b: f32) -> vec2<f32>         one of the two, chosen by DS_FMA (below)
//   ds_from_f32(a: f32) -> vec2<f32>         (a, 0)
//   ds_neg(a) -> vec2<f32>                   −a (exact)
//   ds_add(a, b) -> vec2<f32>                a + b, AccurateDWPlusDW (JMP Alg. 6): 3u² + 13u³
//   ds_sub(a, b) -> vec2<f32>                a − b = ds_add(a, ds_neg(b))
//   ds_add_f32(a, b: f32) -> vec2<f32>       a + b, DWPlusFP (JMP Alg. 4): 2u²
//   ds_mul_f32(a, b: f32) -> vec2<f32>       a·b, DWTimesFP1 (JMP Alg. 7): 1.5u² + 4u³
//   ds_mul(a, b) -> vec2<f32>                a·b: DS_FMA DWTimesDW3 (JMP Alg. 12): 5u² (4u²
//                                            shown by Muller–Rideau 2022); else DWTimesDW1
//                                            (JMP Alg. 10): 7u²
//   ds_fma_f32(acc, a, b: f32) -> vec2<f32>  acc + a·b, the product exact (two_prod), then
//                                            ds_add: 3u² + 13u³ — the step of a Ds dot product
//
// DS_FMA (a bool constant the host puts in the prelude of every kernel built on this piece;
// src/gpu/ds.rs decides it per adapter by probing whether `fma` rounds once): true selects
// the fma algorithms, false Dekker's product. The exact transformations hold for |a·b| ≥ 2⁻¹⁰²
// (the error term not subnormal; GPUs may flush subnormals) and, for the split, |a|, |b| <
// (2 − 2⁻¹²)·2¹²⁷.
//
// Optimisers: WGSL lets a compiler reassociate and fuse floating-point operations (WGSL
// §15.7.5), and some do exactly what error-free transformations cannot survive: Mesa's NIR
// rewrites −a + (a + b) to b, so TwoSum's error term becomes 0 on lavapipe. No WGSL
// construct forbids it, so the values such a rewrite would look through go through
// `ds_fence`: an integer OR with `ds_guard`, a zero the compiler cannot know (a uniform the
// engine binds at GUARD_BINDING = 30 to every kernel using it; src/gpu/ds.rs). A fenced value
// is opaque, so no algebraic identity applies to it; fencing costs one integer OR. Fenced:
// the sum of two_sum and quick_two_sum, two_sum's b' = s − a, and every product p of
// two_prod (which also keeps a compiler from fusing a·b into a later use of p), and the
// rounded products that an addition follows in ds_mul_f32 and ds_mul without DS_FMA (so that
// no contraction changes their rounding: the GPU computes what the CPU twin does).
//
// Contraction: a compiler may fuse x·y + z into an fma. The algorithms here are written so
// that this cannot break them: two_sum/quick_two_sum have no products; every product in
// Dekker's two_prod_split is exact (≤ 24 bits), so fusing it changes nothing; the split uses
// integer operations instead of Veltkamp's C·a − a (whose contraction into fma(C, a, −a)
// would break the split); the DS_FMA algorithms spell their fmas out; the other rounded
// products are fenced (above).

@group(0) @binding(30) var<uniform> ds_guard: vec4<u32>;

// x, opaque to the optimiser (ds_guard.x is 0).
fn ds_fence(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) | ds_guard.x);
}

fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = ds_fence(a + b);
    let bb = ds_fence(s - a);
    let e = (a - (s - bb)) + (b - bb);
    return vec2<f32>(s, e);
}

fn quick_two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = ds_fence(a + b);
    let e = b - (s - a);
    return vec2<f32>(s, e);
}

// hi = a rounded to 12 significant bits on its encoding (add half the unit of the 12 dropped
// bits, clear them; a carry into the exponent is the correct rounding), lo = a − hi (exact).
fn ds_split(a: f32) -> vec2<f32> {
    let hi = bitcast<f32>((bitcast<u32>(a) + 0x800u) & 0xfffff000u);
    return vec2<f32>(hi, a - hi);
}

fn two_prod_fma(a: f32, b: f32) -> vec2<f32> {
    let p = ds_fence(a * b);
    return vec2<f32>(p, fma(a, b, -p));
}

fn two_prod_split(a: f32, b: f32) -> vec2<f32> {
    let p = ds_fence(a * b);
    let x = ds_split(a);
    let y = ds_split(b);
    let e = (((x.x * y.x - p) + x.x * y.y) + x.y * y.x) + x.y * y.y;
    return vec2<f32>(p, e);
}

fn two_prod(a: f32, b: f32) -> vec2<f32> {
    if DS_FMA {
        return two_prod_fma(a, b);
    }
    return two_prod_split(a, b);
}

fn ds_from_f32(a: f32) -> vec2<f32> {
    return vec2<f32>(a, 0.0);
}

fn ds_neg(a: vec2<f32>) -> vec2<f32> {
    return -a;
}

fn ds_add(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let s = two_sum(a.x, b.x);
    let t = two_sum(a.y, b.y);
    let c = s.y + t.x;
    let v = quick_two_sum(s.x, c);
    let w = t.y + v.y;
    return quick_two_sum(v.x, w);
}

fn ds_sub(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return ds_add(a, ds_neg(b));
}

fn ds_add_f32(a: vec2<f32>, b: f32) -> vec2<f32> {
    let s = two_sum(a.x, b);
    let v = a.y + s.y;
    return quick_two_sum(s.x, v);
}

fn ds_mul_f32(a: vec2<f32>, b: f32) -> vec2<f32> {
    let c = two_prod(a.x, b);
    let cl2 = ds_fence(a.y * b);
    let t = quick_two_sum(c.x, cl2);
    let tl2 = t.y + c.y;
    return quick_two_sum(t.x, tl2);
}

fn ds_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    if DS_FMA {
        let c = two_prod_fma(a.x, b.x);
        let tl0 = a.y * b.y;
        let tl1 = fma(a.x, b.y, tl0);
        let cl2 = fma(a.y, b.x, tl1);
        let cl3 = c.y + cl2;
        return quick_two_sum(c.x, cl3);
    }
    let c = two_prod_split(a.x, b.x);
    let tl1 = ds_fence(a.x * b.y);
    let tl2 = ds_fence(a.y * b.x);
    let cl2 = tl1 + tl2;
    let cl3 = c.y + cl2;
    return quick_two_sum(c.x, cl3);
}

fn ds_fma_f32(acc: vec2<f32>, a: f32, b: f32) -> vec2<f32> {
    return ds_add(acc, two_prod(a, b));
}
