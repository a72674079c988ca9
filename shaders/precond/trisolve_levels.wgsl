// trisolve_levels: one stage of a level-scheduled sparse triangular solve x = T⁻¹ rhs (the
// exact apply of ILU(0)/IC(0) factors; CPU twin: TriFactor::solve in src/cpu/trisolve.rs).
//
// T's row i holds its strictly triangular entries at tri_ptr[i] .. tri_ptr[i+1] − 1 and
// 1/tᵢᵢ at tri_ptr[i+1] − 1, so xᵢ = (rhsᵢ − Σⱼ tᵢⱼ xⱼ) · (1/tᵢᵢ). Rows of one level depend
// only on earlier levels. sched = [level pointers (levels + 1) | rows in level order].
//
// A stage is either one WIDE level (the whole grid shares its rows) or a run of narrow levels
// that workgroup 0 sweeps alone, with a storage barrier between levels — so many small levels
// cost one dispatch instead of one each (paper 004's launch overhead, without the busy-waiting
// of self-scheduled kernels, which WGSL cannot make safe). The host cuts a run whose serial
// work would pass STAGE_STEP_BUDGET loop steps (src/cpu/trisolve.rs): llvmpipe ends an
// invocation's loops silently after 65535 steps.

struct TriStage {
    level_begin: u32,
    level_end: u32,
    rows_at: u32,
    wide: u32,
}

@group(0) @binding(5) var<storage, read> tri_ptr: array<u32>;
@group(0) @binding(6) var<storage, read> tri_col: array<u32>;
@group(0) @binding(7) var<storage, read> tri_val: array<Real>;
@group(0) @binding(8) var<storage, read> sched: array<u32>;
@group(0) @binding(9) var<storage, read> rhs: array<Real>;
@group(0) @binding(10) var<storage, read_write> x: array<Real>;
@group(0) @binding(12) var<uniform> stage: TriStage;

fn solve_row(i: u32) {
    let last = tri_ptr[i + 1u] - 1u;
    var s = rhs[i];
    for (var p = tri_ptr[i]; p < last; p = p + 1u) {
        s = s - tri_val[p] * x[tri_col[p]];
    }
    x[i] = s * tri_val[last];
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    var first = ids.lid;
    var stride = WG;
    if stage.wide == 1u {
        first = ids.wid.x * WG + ids.lid;
        stride = ids.nwg.x * WG;
    } else if ids.wid.x != 0u {
        return;
    }
    for (var l = stage.level_begin; l < stage.level_end; l = l + 1u) {
        let end = sched[l + 1u];
        for (var k = sched[l] + first; k < end; k = k + stride) {
            solve_row(sched[stage.rows_at + k]);
        }
        storageBarrier();
    }
}
