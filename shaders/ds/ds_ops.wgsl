// ds_ops: the primitives of shaders/lib/ds.wgsl applied elementwise, for tests/gpu_ds.rs (which
// compares every result bit for bit with src/cpu/ds.rs). Entry i of `ds_in` holds two
// double-single operands x = (hi, lo), y = (hi, lo); `ds_params.op` selects the operation
// (DS_OP_* below, mirrored by `DsOp` in the test). Compiled for f32 (the f64 build exists for
// the translation test only: it widens the f32 results).

struct DsOpsParams {
    n: u32,
    op: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> ds_params: DsOpsParams;
@group(0) @binding(1) var<storage, read> ds_in: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> ds_out: array<vec2<Real>>;

const DS_OP_TWO_SUM: u32 = 0u;        // two_sum(x.hi, y.hi)
const DS_OP_QUICK_TWO_SUM: u32 = 1u;  // quick_two_sum(x.hi, y.hi)
const DS_OP_SPLIT: u32 = 2u;          // ds_split(x.hi)
const DS_OP_TWO_PROD_FMA: u32 = 3u;   // two_prod_fma(x.hi, y.hi)
const DS_OP_TWO_PROD_SPLIT: u32 = 4u; // two_prod_split(x.hi, y.hi)
const DS_OP_TWO_PROD: u32 = 5u;       // two_prod(x.hi, y.hi) (DS_FMA's choice)
const DS_OP_ADD: u32 = 6u;            // ds_add(x, y)
const DS_OP_SUB: u32 = 7u;            // ds_sub(x, y)
const DS_OP_ADD_F32: u32 = 8u;        // ds_add_f32(x, y.hi)
const DS_OP_MUL_F32: u32 = 9u;        // ds_mul_f32(x, y.hi)
const DS_OP_MUL: u32 = 10u;           // ds_mul(x, y)
const DS_OP_FMA_F32: u32 = 11u;       // ds_fma_f32(x, y.hi, y.lo)
const DS_OP_NEG: u32 = 12u;           // ds_neg(x)
const DS_OP_FROM_F32: u32 = 13u;      // ds_from_f32(x.hi)

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= ds_params.n {
        return;
    }
    let v = ds_in[i];
    let x = v.xy;
    let y = v.zw;
    var r = vec2<f32>(0.0);
    switch ds_params.op {
        case DS_OP_TWO_SUM: { r = two_sum(x.x, y.x); }
        case DS_OP_QUICK_TWO_SUM: { r = quick_two_sum(x.x, y.x); }
        case DS_OP_SPLIT: { r = ds_split(x.x); }
        case DS_OP_TWO_PROD_FMA: { r = two_prod_fma(x.x, y.x); }
        case DS_OP_TWO_PROD_SPLIT: { r = two_prod_split(x.x, y.x); }
        case DS_OP_TWO_PROD: { r = two_prod(x.x, y.x); }
        case DS_OP_ADD: { r = ds_add(x, y); }
        case DS_OP_SUB: { r = ds_sub(x, y); }
        case DS_OP_ADD_F32: { r = ds_add_f32(x, y.x); }
        case DS_OP_MUL_F32: { r = ds_mul_f32(x, y.x); }
        case DS_OP_MUL: { r = ds_mul(x, y); }
        case DS_OP_FMA_F32: { r = ds_fma_f32(x, y.x, y.y); }
        case DS_OP_NEG: { r = ds_neg(x); }
        case DS_OP_FROM_F32: { r = ds_from_f32(x.x); }
        default: { r = vec2<f32>(bitcast<f32>(0x7fc00000u)); }
    }
    ds_out[i] = vec2<Real>(r);
}
