// gmres_pool.wgsl: GMRES's pool (the basis v_0 … v_m and the work vectors, vector k at k·n)
// at binding 5. The GMRES kernels read and write it only through `pool_get` / `pool_set`, so
// a pool larger than one storage binding compiles them with the text
// `gpu::shader::pool_source` generates instead (same interface, up to 32 bindings:
// `ShaderConfig::pool_parts`). One binding keeps every GMRES kernel within 8 storage buffers.

@group(0) @binding(5) var<storage, read_write> pool: array<Real>;

fn pool_get(i: u32) -> Real {
    return pool[i];
}

fn pool_set(i: u32, v: Real) {
    pool[i] = v;
}
