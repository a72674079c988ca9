// update_xrp_bicgstab: kernel 4 of pipelined BiCGStab (paper 000 §3.2, Alg. 4 lines 13–20).
//
// Every workgroup finishes ⟨Ap,r0*⟩ (slot 1), ⟨s,s⟩ (slot 2) and ⟨As,s⟩, ⟨As,As⟩, ⟨As,r0*⟩
// (slot 3) redundantly, takes α from scalars[S_ALPHA] (update_s_bicgstab) and computes
//   β = −⟨As,r0*⟩/⟨Ap,r0*⟩,   ω = ⟨As,s⟩/⟨As,As⟩
//   x += α·D⁻¹p + ω·D⁻¹s,   r = s − ω·As,   p = r + β·(p − ω·Ap)
// fused with the first reduction stage of ⟨r,r0*⟩ and ⟨r,r⟩ into slot 0 (finished by the
// next spmv_dot_bicgstab_p). Workgroup 0 stores the paper's residual estimate
// ⟨s,s⟩ − 2ω⟨s,As⟩ + ω²⟨As,As⟩ in scalars[S_EST] for the next spmv_dot_bicgstab_p to record.
//
// `device` mode, in the order of the CPU reference: ⟨s,s⟩ ≤ tol² is the early exit of the
// half step — only x += α·D⁻¹p, and ⟨s,s⟩ handed to the next spmv_dot_bicgstab_p to record
// as the residual (which converges there, after every workgroup here has updated x); a
// non-finite ⟨As,As⟩ or β stops the solve; ⟨As,As⟩ ≤ 0 or |⟨As,s⟩| ≤ ε·‖As‖‖s‖ is a
// breakdown of "omega" (state[3] = 3), with x left unchanged.
// FLAG_PAPER: the host has made those tests (it submits this kernel only to update);
// FLAG_PAPER | FLAG_HALF_STEP: the host's early exit, x += α·D⁻¹p only.

const S_ALPHA: u32 = 7u;
const S_EST: u32 = 8u;
const S_EPS: u32 = 9u;
const FLAG_HALF_STEP: u32 = 32u;
const FLAG_PAPER: u32 = 64u;
const BREAKDOWN_OMEGA: u32 = 3u;

@group(0) @binding(5) var<storage, read_write> x: array<Real>;
@group(0) @binding(6) var<storage, read_write> r: array<Real>;
@group(0) @binding(7) var<storage, read_write> p: array<Real>;
@group(0) @binding(8) var<storage, read> s: array<Real>;
@group(0) @binding(9) var<storage, read> ap: array<Real>;
@group(0) @binding(10) var<storage, read> asv: array<Real>;
@group(0) @binding(11) var<storage, read> rstar: array<Real>;
@group(0) @binding(12) var<storage, read> dinv: array<Real>;

var<workgroup> wg_sc: vec4<Real>;

// The status this kernel stops with after the half-step test (0: none).
fn check(as_s: Real, as_as: Real, ss: Real, beta: Real, eps: Real) -> vec2<u32> {
    if !is_finite(as_as) {
        return vec2<u32>(STATUS_NON_FINITE, 0u);
    }
    let scale = eps * sqrt(as_as) * sqrt(ss);
    if !(as_as > Real(0.0)) || (is_finite(scale) && abs(as_s) <= scale) {
        return vec2<u32>(STATUS_BREAKDOWN, BREAKDOWN_OMEGA);
    }
    if !is_finite(beta) {
        return vec2<u32>(STATUS_NON_FINITE, 0u);
    }
    return vec2<u32>(0u, 0u);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let u = sum_partials(params.groups, params.groups, ids);
    let v = sum_partials(2u * params.groups, params.groups, ids);
    let w = sum_partials(3u * params.groups, params.groups, ids);
    if ids.lid == 0u {
        wg_sc = vec4<Real>(scalars[S_ALPHA], scalars[2], scalars[S_EPS], Real(0.0));
    }
    let sc = workgroupUniformLoad(&wg_sc);
    let alpha = sc.x;
    let apr = u.x;
    let ss = v.x;
    let as_s = w.x;
    let as_as = w.y;
    let as_r = w.z;
    let beta = -as_r / apr;
    let omega = as_s / as_as;
    let paper = (params.flags & FLAG_PAPER) != 0u;
    let early = !paper && ss <= sc.y;
    if !paper && !early {
        let stop = check(as_s, as_as, ss, beta, sc.z);
        if stop.x != 0u {
            if is_leader(ids) {
                stop_solve(stop.x, stop.y);
            }
            return;
        }
    }
    let jacobi = params.jacobi != 0u;
    let stride = params.groups * WG;
    if early || (params.flags & FLAG_HALF_STEP) != 0u {
        for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + stride) {
            var ph = p[i];
            if jacobi {
                ph = dinv[i] * ph;
            }
            x[i] = x[i] + alpha * ph;
        }
        if early {
            // The status must not change inside this dispatch (a workgroup starting after
            // the leader stored a stop would skip its share of x). Instead ⟨s,s⟩'s partial
            // sums go to slot 0 as ⟨r,r⟩ and ⟨s,s⟩ to S_EST: the next spmv_dot_bicgstab_p
            // finishes the same sums in the same order, records ⟨s,s⟩ and converges.
            if ids.lid == 0u {
                partial_copy_x_as_y(ids.wid.x, 2u * params.groups + ids.wid.x);
            }
            if is_leader(ids) {
                scalars[S_EST] = ss;
            }
        }
        return;
    }
    if is_leader(ids) {
        scalars[S_EST] = ss - (omega + omega) * as_s + omega * omega * as_as;
    }
    var acc = sum_zero();
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + stride) {
        let pi = p[i];
        let si = s[i];
        var ph = pi;
        var sh = si;
        if jacobi {
            ph = dinv[i] * pi;
            sh = dinv[i] * si;
        }
        x[i] = x[i] + (alpha * ph + omega * sh);
        let ri = si - omega * asv[i];
        r[i] = ri;
        p[i] = ri + beta * (pi - omega * ap[i]);
        acc = sum_add(acc, vec4<Real>(ri * rstar[i], ri * ri, Real(0.0), Real(0.0)));
    }
    store_sum(0u, acc, ids);
}
