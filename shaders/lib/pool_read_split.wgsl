// pool_read_split.wgsl: pool_read.wgsl's interface for a pool over two storage bindings
// (gmres_pool_split.wgsl's layout, both bindings read-only).

@group(0) @binding(5) var<storage, read> pool: array<Real>;
// x: the first element held by `pool_hi`.
@group(0) @binding(17) var<uniform> pool_split: vec4<u32>;
@group(0) @binding(18) var<storage, read> pool_hi: array<Real>;

fn pool_get(i: u32) -> Real {
    if i < pool_split.x {
        return pool[i];
    }
    return pool_hi[i - pool_split.x];
}
