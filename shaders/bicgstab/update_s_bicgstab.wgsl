// update_s_bicgstab: kernel 2 of pipelined BiCGStab (paper 000 §3.2, Alg. 4 lines 8–9).
//
// Every workgroup finishes ⟨r,r0*⟩ (slot 0) and ⟨Ap,r0*⟩, ⟨Ap,Ap⟩ (slot 1) redundantly and
// computes α = ⟨r,r0*⟩/⟨Ap,r0*⟩ itself (workgroup 0 stores it for update_xrp_bicgstab), then
//   s = r − α·Ap
// fused with the first reduction stage of ⟨s,s⟩ into slot 2.
// `device` mode: a non-finite ⟨Ap,r0*⟩ or α stops the solve (STATUS_NON_FINITE), and
// |⟨Ap,r0*⟩| ≤ ε·‖Ap‖‖r0*‖ is a breakdown of "<Ap, r0*>" (state[3] = 2) — the thresholds of
// the CPU reference. FLAG_PAPER: the host makes these tests.

const S_RSTAR2: u32 = 3u;
const S_ALPHA: u32 = 7u;
const S_EPS: u32 = 9u;
const FLAG_PAPER: u32 = 64u;
const BREAKDOWN_APR: u32 = 2u;

@group(0) @binding(5) var<storage, read> r: array<Real>;
@group(0) @binding(6) var<storage, read> ap: array<Real>;
@group(0) @binding(7) var<storage, read_write> s: array<Real>;

var<workgroup> wg_sc: vec4<Real>;

// The status this kernel stops with (0: none); uniform inputs give a uniform answer.
fn check(apr: Real, ap_ap: Real, alpha: Real, eps: Real, rstar2: Real) -> vec2<u32> {
    let scale = eps * sqrt(ap_ap) * sqrt(rstar2);
    if !is_finite(apr) {
        return vec2<u32>(STATUS_NON_FINITE, 0u);
    }
    if is_finite(scale) && abs(apr) <= scale {
        return vec2<u32>(STATUS_BREAKDOWN, BREAKDOWN_APR);
    }
    if !is_finite(alpha) {
        return vec2<u32>(STATUS_NON_FINITE, 0u);
    }
    return vec2<u32>(0u, 0u);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let t = sum_partials(0u, params.groups, ids);
    let u = sum_partials(params.groups, params.groups, ids);
    if ids.lid == 0u {
        wg_sc = vec4<Real>(scalars[S_EPS], scalars[S_RSTAR2], Real(0.0), Real(0.0));
    }
    let sc = workgroupUniformLoad(&wg_sc);
    let alpha = t.x / u.x;
    if (params.flags & FLAG_PAPER) == 0u {
        let stop = check(u.x, u.y, alpha, sc.x, sc.y);
        if stop.x != 0u {
            if is_leader(ids) {
                stop_solve(stop.x, stop.y);
            }
            return;
        }
    }
    if is_leader(ids) {
        scalars[S_ALPHA] = alpha;
    }
    var acc = sum_zero();
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        let si = r[i] - alpha * ap[i];
        s[i] = si;
        acc = sum_add_x(acc, si * si);
    }
    store_sum(2u, acc, ids);
}
