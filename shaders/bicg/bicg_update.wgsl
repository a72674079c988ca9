// bicg_update: kernel 2 of pipelined BiCG (paper 001 §3.1 lines "α ← ρ/⟨p̃,q⟩" to
// "r̃ ← r̃ − αq̃", plus the first stage of the next ρ and of ‖r‖).
//
// 1. Second reduction stage of (⟨p̃,q⟩, ⟨p̃,p̃⟩, ⟨q,q⟩) from slot 1 (bicg_direction_spmv),
//    redundantly in every workgroup. With BICG_CHECKS (device mode) a non-finite ⟨p̃,q⟩ or
//    α, or |⟨p̃,q⟩| ≤ ε·‖p̃‖‖q‖ (breakdown "<p~, Ap>", code 2 in state[3]), stops the solve
//    before anything is changed.
// 2. α = ρ/⟨p̃,q⟩ (ρ = scalars[0]);  x += αp,  r −= αq,  r̃ −= αq̃.
// 3. First reduction stage of (⟨z,r̃⟩, ⟨z,z⟩, ⟨r̃,r̃⟩, ⟨r,r⟩) of the new residuals into
//    slot 0 (z = D⁻¹r with Jacobi, r otherwise; z̃ is never needed in a sum). Workgroup 0
//    moves ρ to scalars[1] (β's denominator in the next direction kernel).
//
// With BICG_STACKED (the concurrent variant with a factored M) binding 6 holds [r; r̃]
// (2n entries; binding 7 is not touched) and step 3 is left to bicg_rho, which runs after
// the stacked apply [z; z̃] = [M⁻¹r; M⁻ᵀr̃].

@group(0) @binding(5) var<storage, read_write> x: array<Real>;
@group(0) @binding(6) var<storage, read_write> r: array<Real>;
@group(0) @binding(7) var<storage, read_write> rt: array<Real>;
@group(0) @binding(8) var<storage, read> p: array<Real>;
@group(0) @binding(9) var<storage, read> q: array<Real>;
@group(0) @binding(10) var<storage, read> qt: array<Real>;
@group(0) @binding(11) var<storage, read> dinv: array<Real>;

const BICG_CHECKS: u32 = 16u;
const BICG_STACKED: u32 = 128u;
const BICG_CODE_PTQ: u32 = 2u;
const BICG_S_RHO: u32 = 0u;
const BICG_S_RHO_OLD: u32 = 1u;
const BICG_S_EPS: u32 = 4u;

var<workgroup> wg_coef: vec2<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let s = sum_partials(params.groups, params.groups, ids);
    if ids.lid == 0u {
        wg_coef = vec2<Real>(scalars[BICG_S_RHO], scalars[BICG_S_EPS]);
    }
    let c = workgroupUniformLoad(&wg_coef);
    let ptq = s.x;
    let alpha = c.x / ptq;
    let checks = (params.flags & BICG_CHECKS) != 0u;
    let non_finite = !is_finite(ptq) || !is_finite(alpha);
    let breakdown = abs(ptq) <= c.y * sqrt(s.y) * sqrt(s.z);
    if checks && (non_finite || breakdown) {
        if is_leader(ids) {
            if !is_finite(ptq) || !breakdown {
                atomicStore(&state[0], STATUS_NON_FINITE);
            } else {
                atomicStore(&state[0], STATUS_BREAKDOWN);
                atomicStore(&state[3], BICG_CODE_PTQ);
            }
            atomicStore(&state[2], atomicLoad(&state[1]));
        }
        return;
    }
    let stacked = (params.flags & BICG_STACKED) != 0u;
    var acc = sum_zero();
    for (var i = ids.wid.x * WG + ids.lid; i < params.n; i = i + params.groups * WG) {
        x[i] = x[i] + alpha * p[i];
        let ri = r[i] - alpha * q[i];
        r[i] = ri;
        if stacked {
            r[params.n + i] = r[params.n + i] - alpha * qt[i];
            continue;
        }
        let rti = rt[i] - alpha * qt[i];
        rt[i] = rti;
        var zi = ri;
        if params.jacobi != 0u {
            zi = dinv[i] * ri;
        }
        acc = sum_add(acc, vec4<Real>(zi * rti, zi * zi, rti * rti, ri * ri));
    }
    if !stacked {
        store_sum(0u, acc, ids);
    }
    if is_leader(ids) {
        scalars[BICG_S_RHO_OLD] = c.x;
    }
}
