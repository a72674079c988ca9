// dist_pool_read.wgsl: dist_pool.wgsl's `pool_get` over a read-only binding (23), for a
// distributed kernel that only reads the pool (the driver's read-only load path; see
// lib/pool_read.wgsl). Over several bindings the host generates its text
// (`gpu::shader::pool_source`, `PoolLayout::Dist`).

@group(0) @binding(23) var<storage, read> pool: array<Real>;

fn pool_get(i: u32) -> Real {
    return pool[i];
}
