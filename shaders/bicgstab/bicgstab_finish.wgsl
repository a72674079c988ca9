// bicgstab_finish: classical BiCGStab in `device` mode — the second reduction stage of its
// inner products on the GPU (one workgroup, like dot_finish) and the scalars derived from
// them, with the breakdown tests of the CPU reference. `params.dst` selects the step:
//
// 0 (setup, after bicgstab_init): slot 0 = (⟨r0,r0*⟩, ⟨r0,r0⟩); stores ρ and ⟨r0*,r0*⟩,
//   records ‖r0‖².
// 1 (after the dots of Ap): ⟨Ap,r0*⟩ (slot 2), ⟨Ap,Ap⟩ (slot 3); stores ⟨Ap,r0*⟩, so axpy
//   forms α = ρ/⟨Ap,r0*⟩; non-finite ⟨Ap,r0*⟩ or α, or a breakdown of "<Ap, r0*>", stops.
// 2 (after the dots of As): ⟨s,s⟩ (slot 4), ⟨As,s⟩ (slot 5), ⟨As,As⟩ (slot 6); stores ⟨As,s⟩
//   and ⟨As,As⟩ (ω = their ratio, formed by axpy). ⟨s,s⟩ ≤ tol² is the CPU reference's
//   early exit: ω is set to 0 instead, so the updates make x += α·p̂ and r = s, and step 3
//   records ⟨r,r⟩ = ⟨s,s⟩ (the same dot of the same vector, bit for bit) and converges.
//   Otherwise a non-finite ⟨As,As⟩, ⟨As,As⟩ ≤ 0 or |⟨As,s⟩| ≤ ε‖As‖‖s‖ ("omega") stops.
// 3 (after the dots of the new r): ⟨r,r⟩ (slot 1), ⟨r,r0*⟩ (slot 0); records ‖r‖², then
//   β = (ρ_new/ρ)·(α/ω) (non-finite stops), stores β and ρ = ρ_new, and tests ρ_new for a
//   breakdown of "<r, r0*>" (the CPU reference's test at the start of the next iteration).

const S_RHO: u32 = 0u;
const S_BETA: u32 = 1u;
const S_RSTAR2: u32 = 3u;
const S_AS_S: u32 = 4u;
const S_AS_AS: u32 = 5u;
const S_APR: u32 = 6u;
const S_EPS: u32 = 9u;
const BREAKDOWN_RHO: u32 = 1u;
const BREAKDOWN_APR: u32 = 2u;
const BREAKDOWN_OMEGA: u32 = 3u;

// |v| ≤ scale with scale = ε·‖x‖‖y‖: ⟨x, y⟩ is numerically zero (cpu::is_breakdown).
fn numerically_zero(v: Real, scale: Real) -> bool {
    return is_finite(scale) && abs(v) <= scale;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let g = params.groups;
    let step = params.dst;
    // The sums first, in uniform control flow; then thread 0 alone.
    var a = vec4<Real>(Real(0.0));
    var b = vec4<Real>(Real(0.0));
    var c = vec4<Real>(Real(0.0));
    switch step {
        case 0u: {
            a = sum_partials(0u, g, ids);
        }
        case 1u: {
            a = sum_partials(2u * g, g, ids);
            b = sum_partials(3u * g, g, ids);
        }
        case 2u: {
            a = sum_partials(4u * g, g, ids);
            b = sum_partials(5u * g, g, ids);
            c = sum_partials(6u * g, g, ids);
        }
        default: {
            a = sum_partials(g, g, ids);
            b = sum_partials(0u, g, ids);
        }
    }
    if ids.lid != 0u {
        return;
    }
    let eps = scalars[S_EPS];
    switch step {
        case 0u: {
            let rho = a.x;
            let rr = a.y;
            scalars[S_RSTAR2] = rr;
            scalars[S_RHO] = rho;
            record_residual(rr);
            if atomicLoad(&state[0]) == STATUS_RUNNING {
                if !is_finite(rho) {
                    stop_solve(STATUS_NON_FINITE, 0u);
                } else if numerically_zero(rho, eps * sqrt(rr) * sqrt(rr)) {
                    stop_solve(STATUS_BREAKDOWN, BREAKDOWN_RHO);
                }
            }
        }
        case 1u: {
            let apr = a.x;
            scalars[S_APR] = apr;
            if !is_finite(apr) {
                stop_solve(STATUS_NON_FINITE, 0u);
            } else if numerically_zero(apr, eps * sqrt(b.x) * sqrt(scalars[S_RSTAR2])) {
                stop_solve(STATUS_BREAKDOWN, BREAKDOWN_APR);
            } else if !is_finite(scalars[S_RHO] / apr) {
                stop_solve(STATUS_NON_FINITE, 0u);
            }
        }
        case 2u: {
            let ss = a.x;
            let as_s = b.x;
            let as_as = c.x;
            if ss <= scalars[2] {
                scalars[S_AS_S] = Real(0.0);
                scalars[S_AS_AS] = Real(1.0);
            } else {
                scalars[S_AS_S] = as_s;
                scalars[S_AS_AS] = as_as;
                if !is_finite(as_as) {
                    stop_solve(STATUS_NON_FINITE, 0u);
                } else if !(as_as > Real(0.0)) || numerically_zero(as_s, eps * sqrt(as_as) * sqrt(ss)) {
                    stop_solve(STATUS_BREAKDOWN, BREAKDOWN_OMEGA);
                }
            }
        }
        default: {
            let rr = a.x;
            let rho_new = b.x;
            record_residual(rr);
            if atomicLoad(&state[0]) == STATUS_RUNNING {
                let rho = scalars[S_RHO];
                let alpha = rho / scalars[S_APR];
                let omega = scalars[S_AS_S] / scalars[S_AS_AS];
                let beta = (rho_new / rho) * (alpha / omega);
                if !is_finite(beta) {
                    stop_solve(STATUS_NON_FINITE, 0u);
                } else {
                    scalars[S_BETA] = beta;
                    scalars[S_RHO] = rho_new;
                    if numerically_zero(rho_new, eps * sqrt(rr) * sqrt(scalars[S_RSTAR2])) {
                        stop_solve(STATUS_BREAKDOWN, BREAKDOWN_RHO);
                    }
                }
            }
        }
    }
}
