// trisolve_sweep: one Jacobi sweep of a sparse triangular solve, x_out = D⁻¹(rhs − (T − D)·x_prev)
// (the first sweep, `sweep.first = 1`, starts from x = 0: x_out = D⁻¹rhs). K launches give the
// synchronization-free approximate solve of iterative ILU apply: no level schedule, no barrier,
// every row independent; exact once K reaches the level count. CPU twin: TriFactor::sweeps.
// Layout of T as in trisolve_levels.wgsl.

struct TriSweep {
    first: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(5) var<storage, read> tri_ptr: array<u32>;
@group(0) @binding(6) var<storage, read> tri_col: array<u32>;
@group(0) @binding(7) var<storage, read> tri_val: array<Real>;
@group(0) @binding(8) var<storage, read> x_prev: array<Real>;
@group(0) @binding(9) var<storage, read> rhs: array<Real>;
@group(0) @binding(10) var<storage, read_write> x_out: array<Real>;
@group(0) @binding(12) var<uniform> sweep: TriSweep;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + ids.nwg.x * WG) {
        let last = tri_ptr[i + 1u] - 1u;
        var s = rhs[i];
        if sweep.first == 0u {
            for (var p = tri_ptr[i]; p < last; p = p + 1u) {
                s = s - tri_val[p] * x_prev[tri_col[p]];
            }
        }
        x_out[i] = s * tri_val[last];
    }
}
