// bicg_direction_spmv: kernel 1 of pipelined BiCG (paper 001 §3.1 lines "ρ ← ⟨r, r̃⟩" to
// "q̃ ← Aᵀp̃"; Aᵀ stored explicitly, in the same format as A, as in paper 004 §3.1, so both
// products run the same non-transposed row kernel: bindings 20–24 hold A, 25–29 Aᵀ).
//
// 1. Second reduction stage of (⟨z,r̃⟩, ⟨z,z⟩, ⟨r̃,r̃⟩, ⟨r,r⟩) from slot 0 (written by
//    bicg_update or bicg_init), done redundantly by every workgroup. Workgroup 0 stores
//    ρ = ⟨z,r̃⟩ in scalars[0], records ‖r‖² in the history and tests convergence; with
//    BICG_CHECKS (device mode) a non-finite ρ or |ρ| ≤ ε·‖z‖‖r̃‖ stops the solve (breakdown
//    "<r, r~>", code 1 in state[3]) and every workgroup returns before changing anything.
// 2. β = ρ/ρ_old (ρ_old = scalars[1]; 0 there means the first iteration: p = z, p̃ = z̃).
//    The new directions p = z + βp_old, p̃ = z̃ + βp̃_old are formed on the fly inside the two
//    products — every gather of q = A·p and q̃ = Aᵀ·p̃ recomputes its entry from r, r̃ (and
//    D⁻¹) and the old direction — and stored for row i into p, p̃ (the other buffer of a
//    ping-pong pair: no workgroup reads a vector another one writes in this dispatch).
//    This fuses the direction update into the SpMV launch.
// 3. First reduction stage of (⟨p̃,q⟩, ⟨p̃,p̃⟩, ⟨q,q⟩) into slot 1.
//
// With BICG_STACKED (the concurrent variant with a factored M) binding 11 holds [z; z̃]
// (2n entries: M⁻¹r and M⁻ᵀr̃, applied by the stacked triangular solves before this launch)
// and the directions are formed from it; bindings 12 and 19 are not read.

@group(0) @binding(11) var<storage, read> r: array<Real>;
@group(0) @binding(12) var<storage, read> rt: array<Real>;
@group(0) @binding(13) var<storage, read> p_old: array<Real>;
@group(0) @binding(14) var<storage, read> pt_old: array<Real>;
@group(0) @binding(15) var<storage, read_write> p: array<Real>;
@group(0) @binding(16) var<storage, read_write> pt: array<Real>;
@group(0) @binding(17) var<storage, read_write> q: array<Real>;
@group(0) @binding(18) var<storage, read_write> qt: array<Real>;
@group(0) @binding(19) var<storage, read> dinv: array<Real>;

// params.flags: the device checks breakdown itself (device mode; in paper mode the host does).
const BICG_CHECKS: u32 = 16u;
// params.flags: binding 11 is the stacked [z; z̃].
const BICG_STACKED: u32 = 128u;
// state[3] code of a breakdown of ρ = ⟨r, r̃⟩.
const BICG_CODE_RHO: u32 = 1u;
// scalars: ρ, ρ_old, and the breakdown factor ε_T·BREAKDOWN_FACTOR.
const BICG_S_RHO: u32 = 0u;
const BICG_S_RHO_OLD: u32 = 1u;
const BICG_S_EPS: u32 = 4u;

var<workgroup> wg_coef: vec2<Real>;

// Entry j of the new direction p = z + βp_old (z = D⁻¹r or r, or read from [z; z̃]), or
// with `shadow` of the new shadow direction p̃ = z̃ + βp̃_old (z̃ = D⁻ᵀr̃ = D⁻¹r̃ or r̃, or
// read); `first`: p = z (p̃ = z̃).
fn dir_entry(j: u32, beta: Real, first: bool, shadow: bool) -> Real {
    var v: Real;
    if (params.flags & BICG_STACKED) != 0u {
        v = r[select(j, params.n + j, shadow)];
    } else {
        if shadow {
            v = rt[j];
        } else {
            v = r[j];
        }
        if params.jacobi != 0u {
            v = dinv[j] * v;
        }
    }
    if !first {
        if shadow {
            v = v + beta * pt_old[j];
        } else {
            v = v + beta * p_old[j];
        }
    }
    return v;
}

// β and "first iteration" for the gathers of the two products (set once per dispatch).
var<private> dir_beta: Real;
var<private> dir_first: bool;

fn spmv_x(col: u32) -> Real {
    return dir_entry(col, dir_beta, dir_first, false);
}

fn spmvt_x(col: u32) -> Real {
    return dir_entry(col, dir_beta, dir_first, true);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let s = sum_partials(0u, params.groups, ids);
    if ids.lid == 0u {
        wg_coef = vec2<Real>(scalars[BICG_S_RHO_OLD], scalars[BICG_S_EPS]);
    }
    let c = workgroupUniformLoad(&wg_coef);
    let rho = s.x;
    let checks = (params.flags & BICG_CHECKS) != 0u;
    let non_finite = !is_finite(rho);
    let breakdown = abs(rho) <= c.y * sqrt(s.y) * sqrt(s.z);
    let stop = checks && (non_finite || breakdown);
    if is_leader(ids) {
        scalars[BICG_S_RHO] = rho;
        record_residual(s.w);
        if stop && atomicLoad(&state[0]) == STATUS_RUNNING {
            if non_finite {
                atomicStore(&state[0], STATUS_NON_FINITE);
            } else {
                atomicStore(&state[0], STATUS_BREAKDOWN);
                atomicStore(&state[3], BICG_CODE_RHO);
            }
            atomicStore(&state[2], atomicLoad(&state[1]) - 1u);
        }
    }
    if stop {
        return;
    }
    let first = c.x == Real(0.0);
    var beta = Real(0.0);
    if !first {
        beta = rho / c.x;
    }
    dir_beta = beta;
    dir_first = first;
    var acc = sum_zero();
    // q = A·p over A's row chunks: stores p and q of those rows, and the terms of
    // ⟨p̃,q⟩, ⟨p̃,p̃⟩, ⟨q,q⟩.
    for (var chunk = ids.wid.x; chunk < spmv_passes(); chunk = chunk + params.groups) {
        let out = spmv_pass(chunk, ids.lid);
        if out.valid {
            let row = out.row;
            let qi = out.value;
            p[row] = dir_entry(row, beta, first, false);
            let pti = dir_entry(row, beta, first, true);
            q[row] = qi;
            acc = sum_add(acc, vec4<Real>(pti * qi, pti * pti, qi * qi, Real(0.0)));
        }
    }
    // q̃ = Aᵀ·p̃ over Aᵀ's row chunks (formats that sort rows order them differently from A's,
    // hence the second loop): stores p̃ and q̃ of those rows.
    for (var chunk = ids.wid.x; chunk < spmvt_passes(); chunk = chunk + params.groups) {
        let out = spmvt_pass(chunk, ids.lid);
        if out.valid {
            pt[out.row] = dir_entry(out.row, beta, first, true);
            qt[out.row] = out.value;
        }
    }
    store_sum(1u, acc, ids);
}
