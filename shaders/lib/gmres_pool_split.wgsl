// gmres_pool_split.wgsl: gmres_pool.wgsl's interface for a pool over two storage bindings
// (issue #16: no size refused), chosen by `ShaderConfig::split_pool`: elements from
// `pool_split.x` on (a whole number of vectors) are in `pool_hi`. One storage buffer more
// than the single-binding pool, so only a solve whose pool needs it compiles this.

@group(0) @binding(5) var<storage, read_write> pool: array<Real>;
// x: the first element held by `pool_hi`.
@group(0) @binding(17) var<uniform> pool_split: vec4<u32>;
@group(0) @binding(18) var<storage, read_write> pool_hi: array<Real>;

fn pool_get(i: u32) -> Real {
    if i < pool_split.x {
        return pool[i];
    }
    return pool_hi[i - pool_split.x];
}

fn pool_set(i: u32, v: Real) {
    if i < pool_split.x {
        pool[i] = v;
    } else {
        pool_hi[i - pool_split.x] = v;
    }
}
