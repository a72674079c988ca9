// dist_pool.wgsl: a distributed block's pool of vectors at binding 23 (issue #19; host side
// `solvers::pool::PoolBuffers`): distributed GMRES's basis (lib/dist_basis.wgsl) and
// CA-GMRES's block pool (the dist_ca_* kernels), vector k at k·n. The kernels read and write
// it only through `pool_get` / `pool_set`, so a pool larger than one storage binding compiles
// them with the text `gpu::shader::pool_source` generates for `PoolLayout::Dist` instead
// (same interface, up to 8 bindings: `ShaderConfig::pool_parts`). dist_pool_read.wgsl for a
// kernel that only reads it.

@group(0) @binding(23) var<storage, read_write> pool: array<Real>;

fn pool_get(i: u32) -> Real {
    return pool[i];
}

fn pool_set(i: u32, v: Real) {
    pool[i] = v;
}
