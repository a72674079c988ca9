// spmv_dot_bicgstab_p: kernel 1 of pipelined BiCGStab (paper 000 §3.2, Alg. 4 lines 6–7).
//
// 1. Second reduction stage of ⟨r,r0*⟩ and ⟨r,r⟩ from partials slot 0 (written by
//    update_xrp_bicgstab — or ⟨s,s⟩ on its early exit — or by bicgstab_init in the setup),
//    redundantly in every workgroup.
//    `device` mode: workgroup 0 records the tracked residual of the iteration that just
//    ended and tests ρ = ⟨r,r0*⟩ for breakdown (the test the CPU reference makes at the start
//    of the next iteration). `paper` mode (FLAG_PAPER): the host does that from the partial
//    sums it reads; the kernel never changes the status.
// 2. Ap = A·D⁻¹p — Jacobi right preconditioning fused into the reads, p̂ = D⁻¹p is never
//    stored — and the first reduction stage of ⟨Ap,r0*⟩ and ⟨Ap,Ap⟩ (the scale of the
//    breakdown test of ⟨Ap,r0*⟩) into slot 1.
//
// The tracked residual mirrors the CPU reference: the paper's estimate
// ⟨r,r⟩ = ⟨s,s⟩ − 2ω⟨s,As⟩ + ω²⟨As,As⟩ (scalars[S_EST], left by update_xrp_bicgstab), and,
// when that estimate claims convergence, the directly reduced ⟨r,r⟩ instead (the estimate
// cancels badly once ‖r‖ ≪ ‖s‖). FLAG_FIRST (setup): the residual is r0 itself, and
// ⟨r0*,r0*⟩ = ⟨r0,r0⟩ is stored for the breakdown tests.

const S_RSTAR2: u32 = 3u;
const S_EST: u32 = 8u;
const S_EPS: u32 = 9u;
const FLAG_FIRST: u32 = 16u;
const FLAG_PAPER: u32 = 64u;
const BREAKDOWN_RHO: u32 = 1u;

// p is `spmv_in` and Ap `spmv_out` of lib/bicgstab_spmv.wgsl.
fn spmv_terms(row: u32, sum: Real) -> vec4<Real> {
    return vec4<Real>(sum * rstar[row], sum * sum, Real(0.0), Real(0.0));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let t = sum_partials(0u, params.groups, ids);
    if is_leader(ids) && (params.flags & FLAG_PAPER) == 0u {
        var rr = t.y;
        if (params.flags & FLAG_FIRST) != 0u {
            scalars[S_RSTAR2] = t.y;
        } else {
            let est = scalars[S_EST];
            if !(est <= scalars[2]) {
                rr = est;
            }
        }
        record_residual(rr);
        if atomicLoad(&state[0]) == STATUS_RUNNING {
            let rho = t.x;
            let scale = scalars[S_EPS] * sqrt(max(rr, Real(0.0))) * sqrt(scalars[S_RSTAR2]);
            if !is_finite(rho) {
                stop_solve(STATUS_NON_FINITE, 0u);
            } else if is_finite(scale) && abs(rho) <= scale {
                stop_solve(STATUS_BREAKDOWN, BREAKDOWN_RHO);
            }
        }
    }
    spmv_partials(1u, ids);
}
