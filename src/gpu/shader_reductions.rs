//! Global reductions per launch of each kernel of [`KERNELS`](super::shader::KERNELS): the
//! table every dispatch is counted from (re-exported by `gpu::shader`).

/// Global reductions ONE launch of each kernel starts — the table every dispatch is counted
/// from ([`Counters`](super::Counters), rule in `src/gpu/counters.rs`): 1 for a kernel that
/// writes the first stage of a reduction across the device (per-workgroup partial sums of one
/// or more inner products or norms, however many it packs into its slots), 0 for one that only
/// finishes one (the second stage: `dot_finish`, `gmres_finish`, `bicg_finish`,
/// `bicgstab_finish`) or has none. A kernel that finishes one reduction and starts the next
/// (`spmv_dot_cg`, `update_cg`, …) counts 1. The number is that of the kernel's usual mode; a
/// launch in a mode that starts none is recorded with [`Kernel::without_reduction`]
/// (`gmres_basis_dots` over an empty range, `gmres_gs_update` without its norm flag,
/// `bicg_update` with `BICG_STACKED`, `update_xrp_bicgstab`'s host half step). Launches that
/// return early on the status word (after convergence) are counted as recorded, like their
/// dispatches. The tests of `src/gpu/counters.rs` check that the table names every kernel of
/// [`KERNELS`](super::shader::KERNELS) once.
///
/// [`Kernel::without_reduction`]: super::Kernel::without_reduction
pub const REDUCTIONS: &[(&str, u32)] = &[
    // blas: one inner product per `dot`, finished by `dot_finish` (device) or the host.
    ("spmv", 0),
    ("dot", 1),
    ("dot_finish", 0),
    ("axpy", 0),
    ("xpay", 0),
    // cagmres: `ca_block_dots` (or `ca_block_dots_pairs`, `ca_block_dots_staged`) is one reduction for its whole block
    // of inner products (the Gram matrix VᵀW in one tree), finished by `ca_block_finish`; powers and updates sum
    // nothing. CAQR's `ca_tsqr_leaf` is one: the leaves' R factors are its first stage (each
    // leaf a workgroup's Householder QR), the host's QR of their stack the second; its
    // `ca_tsqr_apply` sums nothing.
    ("ca_powers", 0),
    ("ca_block_dots", 1),
    ("ca_block_dots_pairs", 1),
    ("ca_block_dots_staged", 1),
    ("ca_block_finish", 0),
    ("ca_block_update", 0),
    // `ca_cholqr` factors an s × s matrix in one thread: no sum over the device.
    ("ca_cholqr", 0),
    ("ca_tsqr_leaf", 1),
    ("ca_tsqr_apply", 0),
    // batch: every inner product of an item is a workgroup reduction inside its workgroup;
    // nothing is summed across the device.
    ("batch_cg", 0),
    ("batch_cg_block", 0),
    // dist: each device's first stage of ⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩ (product) and ⟨r,z⟩, ⟨r,r⟩
    // (update); the host finishes them over workgroups and devices. The product's boundary
    // launch adds to the interior launch's sums (recorded `without_reduction`).
    ("dist_spmv_dot", 1),
    ("dist_update_cg", 1),
    ("dist_gather", 0),
    // Classical CG: the x, r update starts ⟨r, z⟩, ⟨r, r⟩; the direction sums nothing (its
    // product is dist_spmv_dot's).
    ("dist_cg_xr", 1),
    ("dist_cg_p", 0),
    // BiCGStab's products (⟨Ap, r̂⟩, ⟨Ap, Ap⟩ or ⟨As, s⟩, ⟨As, As⟩), half step (⟨s, s⟩) and
    // x, r update (⟨r, r⟩, ⟨r, r̂⟩) each start one; the direction update sums nothing.
    ("dist_bicgstab_spmv", 1),
    ("dist_bicgstab_s", 1),
    ("dist_bicgstab_xr", 1),
    ("dist_bicgstab_p", 0),
    // GMRES: the product with the first Gram–Schmidt pass's inner products (all of them, one
    // reduction however many slots), the orthogonalisation with the second pass's, and the
    // restart residual's ‖r‖² each start one; the next basis vector and the update of x sum
    // nothing.
    ("dist_gmres_spmv_dots", 1),
    ("dist_gmres_orth", 1),
    ("dist_gmres_prepare", 0),
    ("dist_gmres_update_x", 0),
    ("dist_gmres_residual", 1),
    // CA-GMRES: the operand's load sums nothing; the powers step's launch starts the restart
    // residual's ‖r‖² (a matrix powers step records it `without_reduction`: its sums are
    // not read). BOrth's and the TSQR's inner products are `ca_block_dots`'.
    ("dist_ca_load", 0),
    ("dist_ca_powers", 1),
    ("dist_ca_mpk_load", 0),
    ("dist_ca_mpk_step", 0),
    // precond: elementwise scaling and triangular solves, no sums.
    ("diag_scale", 0),
    ("trisolve_levels", 0),
    ("trisolve_sweep", 0),
    // bench probes: `stream_update4_reduce` writes one partial per workgroup (the first stage
    // it measures); the others sum nothing.
    ("stream_triad", 0),
    ("stream_update4", 0),
    ("stream_update4_status", 0),
    ("stream_update4_reduce", 1),
    // cg: every kernel starts one (slot 0: ⟨r,z⟩, ⟨r,r⟩; slot 1: ⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩).
    ("cg_init", 1),
    ("spmv_dot_cg", 1),
    ("update_cg", 1),
    // The fused iteration starts one for all four (its record-only last launch, none).
    ("update_spmv_dot_cg", 1),
    // One workgroup's iterations: every inner product is a workgroup sum, none global.
    ("cg_workgroup", 0),
    // Fused CG's iteration, several per launch across a grid barrier: one per iteration (a
    // launch of k iterations is recorded with `Kernel::with_reductions(k)`).
    ("cg_cooperative", 1),
    // gmres: ‖r‖², (⟨v_{i−1},w⟩, ‖w‖²), the ⟨v_j,w⟩ of one launch (all j, however many
    // slots), ‖w‖² after the update (flag NORM), ξ_i = ⟨r,v_i⟩; the rest sums nothing or
    // finishes (`gmres_finish`).
    ("gmres_residual", 1),
    ("gmres_spmv_dot", 1),
    // Fused GMRES's product starts one for all its inner products (its CLOSE_ONLY launch,
    // which only finishes the previous step's sums, none).
    ("gmres_scale_spmv_dots", 1),
    // p(1)-GMRES's step starts one for all its inner products (its CLOSE_ONLY launch none).
    ("gmres_p1_step", 1),
    // One workgroup's steps (whole cycles): every inner product is a workgroup sum.
    ("gmres_workgroup", 0),
    ("gmres_basis_dots", 1),
    ("gmres_gs_update", 1),
    ("gmres_normalize", 1),
    ("gmres_update_x", 0),
    ("gmres_basis_spmv", 0),
    ("gmres_basis_diag", 0),
    ("gmres_basis_axpy", 0),
    ("gmres_basis_scale", 0),
    ("gmres_finish", 0),
    // bicgstab: the four pipelined kernels each start one (slots 1, 2, 3, 0), the inits one.
    ("bicgstab_init", 1),
    ("spmv_dot_bicgstab_p", 1),
    ("update_s_bicgstab", 1),
    ("spmv_dot_bicgstab_s", 1),
    ("update_xrp_bicgstab", 1),
    ("bicgstab_finish", 0),
    ("bicgstab_left_init", 1),
    // bicg: direction + SpMV (slot 1), update (slot 0; none when stacked: `bicg_rho` then).
    ("bicg_init", 1),
    ("bicg_direction_spmv", 1),
    ("bicg_update", 1),
    ("bicg_finish", 0),
    ("bicg_rho", 1),
    // mixed: the outer residual's ‖r‖², the reliable replacement's ⟨r,z⟩, ⟨r,r⟩.
    ("refine_residual", 1),
    ("refine_update", 0),
    ("refine_residual_ds", 1),
    ("refine_update_ds", 0),
    ("reliable_replace", 1),
    // jacobi: each sweep starts ‖r_d‖² (and finishes ‖r_{d−1}‖²).
    ("jacobi_sweep", 1),
    // ds: the f32 guard's ‖b − Ax‖² partials (finished on the host).
    ("fma_probe", 0),
    ("ds_ops", 0),
    ("true_residual_ds", 1),
];

/// The global reductions one launch of kernel `name` starts ([`REDUCTIONS`]; 0 for a name
/// the table does not hold).
pub fn reductions_started(name: &str) -> u32 {
    REDUCTIONS
        .iter()
        .find(|(k, _)| *k == name)
        .map_or(0, |&(_, r)| r)
}
