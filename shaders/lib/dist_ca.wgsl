// dist_ca.wgsl: the parameters of a distributed CA-GMRES's own kernels (solvers::dist::cagmres,
// solvers::dist::mpk): `ca` for a product's operand load and step (dist_ca_load,
// dist_ca_powers), `mpk` for the matrix powers from one exchange (dist_ca_mpk_load,
// dist_ca_mpk_step). Both index the device's CA-GMRES pool (vector k at k·n).

struct DistCa {
    // Rows of the block (the pool's vector stride).
    n: u32,
    src: u32,
    prev: u32,
    dst: u32,
    // CA_DIST_DINV: the load scales by D⁻¹.
    flags: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

struct Mpk {
    // Owned rows (the pool's vector stride), extended rows (z's slot stride).
    n: u32,
    next: u32,
    // The block's start vector in the pool.
    src: u32,
    // Entries of the deep send list.
    count: u32,
    jacobi: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(22) var<uniform> ca: DistCa;
@group(0) @binding(28) var<uniform> mpk: Mpk;
