// dist_ca_mpk_step: step k of a distributed matrix powers block (paper 002 Fig. 4's loop) on
// one device, over the extended rows of solvers::dist::mpk::ExtBlock (the owned rows, then the
// ghost rows by level: step k computes the first step.rows of them, those of levels ≤ s − k):
//   z[k][t] = c_A · Σ_e vals[e]·D⁻¹[c]·z[k−1][c] + c_s · z[k−1][t] + c_p · z[k−2][t]
//             (c = ext_cols[e] over row r's entries, t = target[r]; D⁻¹ only with mpk.jacobi)
//   pool[src + k][t] = z[k][t]   for owned t < n
// with (c_A, c_s, c_p) = coef[3(k−1) ..] (cpu::cagmres::powers::step_coefficients). No
// exchange between steps: the ghost rows computed at step k are what step k + 1 reads.
// z_k lives in slot k mod 3 of `z` (three slots of mpk.next entries): a step reads only the
// two vectors before it, so z_{k−3}'s slot is free, and the extended vectors take 3 slots
// whatever the depth (s + 1 made an f64 block at 5e7 exceed one storage binding).
// Library: lib/dist_ca.wgsl, lib/dist_pool.wgsl. CPU twin: solvers::dist::mpk::ExtBlock::powers.

struct MpkStep {
    k: u32,
    rows: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(25) var<storage, read_write> z: array<Real>;
@group(0) @binding(29) var<storage, read> ext_row_ptr: array<u32>;
@group(0) @binding(30) var<storage, read> ext_cols: array<u32>;
@group(0) @binding(31) var<storage, read> ext_vals: array<Real>;
@group(0) @binding(32) var<storage, read> target_of: array<u32>;
@group(0) @binding(33) var<storage, read> dinv_ext: array<Real>;
@group(0) @binding(34) var<storage, read> coef: array<Real>;
@group(0) @binding(35) var<uniform> mstep: MpkStep;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let k = mstep.k;
    let c_a = coef[3u * (k - 1u)];
    let c_s = coef[3u * (k - 1u) + 1u];
    let c_p = coef[3u * (k - 1u) + 2u];
    let cur = ((k - 1u) % 3u) * mpk.next;
    let prev = (select(k - 1u, k - 2u, k >= 2u) % 3u) * mpk.next;
    let dst_at = (k % 3u) * mpk.next;
    let stride = ids.nwg.x * WG;
    for (var r = ids.wid.x * WG + ids.lid; r < mstep.rows; r = r + stride) {
        var s = Real(0.0);
        let e_end = ext_row_ptr[r + 1u];
        if mpk.jacobi != 0u {
            for (var e = ext_row_ptr[r]; e < e_end; e = e + 1u) {
                let c = ext_cols[e];
                s = s + ext_vals[e] * (dinv_ext[c] * z[cur + c]);
            }
        } else {
            for (var e = ext_row_ptr[r]; e < e_end; e = e + 1u) {
                s = s + ext_vals[e] * z[cur + ext_cols[e]];
            }
        }
        let t = target_of[r];
        var v = c_a * s + c_s * z[cur + t];
        if c_p != Real(0.0) {
            v = v + c_p * z[prev + t];
        }
        z[dst_at + t] = v;
        if t < mpk.n {
            pool_set((mpk.src + k) * mpk.n + t, v);
        }
    }
}
