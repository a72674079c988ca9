// pool_read.wgsl: gmres_pool.wgsl's `pool_get` for a kernel that only reads the pool
// (CA-GMRES's ca_block_dots): the pool bound read-only, which lets the driver take its
// read-only load path (the same kernel reading a read_write binding ran 25 % slower on an
// H100, BENCHMARKS "CA-GMRES's pool over two bindings"). Over several bindings
// (`ShaderConfig::pool_parts`) the host generates its text (`gpu::shader::pool_source`).

@group(0) @binding(5) var<storage, read> pool: array<Real>;

fn pool_get(i: u32) -> Real {
    return pool[i];
}
