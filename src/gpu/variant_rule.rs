//! `--variant auto`'s rule on a GPU (without a device profile, and after the model): which CG
//! or GMRES formulation the measurements favour for a matrix of n rows in a given storage
//! format.
//!
//! Fused CG (`update_spmv_dot_cg`) saves one launch and one global reduction per iteration
//! and reads three vectors (r, Ap, p) wherever pipelined CG's product reads one (p). On an
//! H200 (BENCHMARKS.md, 2026-11-29) that was 33–52 % faster per iteration up to n = 1e5 on
//! every structure measured (2D/3D stencils, a scattered random SPD matrix), 8–22 % faster on
//! banded matrices up to 1e7 in DIA, but 2× slower on the scattered matrix at n = 1e6 (three
//! gathers that miss the cache) and 5 % slower on the 3D stencil at 1e7 in CSR.
//!
//! Fused GMRES (`gmres_scale_spmv_dots` + `gmres_gs_update`) runs a step in two launches
//! instead of four. On an H200 (BENCHMARKS.md, 2026-11-29) it was 12–22 % faster per step up
//! to n = 1e5 (2D and 3D stencils, f32 and f64, CGS and CGS2, with Jacobi) and 1.6× faster on
//! a scattered matrix at 1e5, but 4–10 % slower at 1e6 and up to 30 % slower at 1e7 in f32:
//! its product and every inner product share one launch, whose occupancy the bandwidth-bound
//! sizes need. So it takes fused up to [`FUSED_MAX_ROWS`] in every format.

use crate::base::{Format, Method, Variant};

/// Up to this many rows fused CG takes the variant whatever the structure: an iteration is
/// bound by its launches, and the product's extra gathers stay in cache (measured to 1e5;
/// 2e5 rows of f64 are 1.6 MB a vector, far inside the last-level caches of current GPUs).
pub const FUSED_MAX_ROWS: usize = 200_000;

/// The rule's variant and why.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantChoice {
    pub variant: Variant,
    pub reason: String,
}

/// The variant `auto` runs `method` with on a GPU, for a matrix of `n` rows stored in
/// `format` (the resolved one, not `auto`).
///
/// ```
/// use krylov_wgpu::gpu::choose_variant_for;
/// use krylov_wgpu::solvers::{Format, Method, Variant};
/// assert_eq!(choose_variant_for(Method::Cg, 10_000, Format::Csr).variant, Variant::Fused);
/// assert_eq!(choose_variant_for(Method::Cg, 10_000_000, Format::Dia).variant, Variant::Fused);
/// assert_eq!(choose_variant_for(Method::Cg, 1_000_000, Format::Sell).variant, Variant::Pipelined);
/// assert_eq!(choose_variant_for(Method::Gmres, 1000, Format::Csr).variant, Variant::Fused);
/// assert_eq!(choose_variant_for(Method::Gmres, 10_000_000, Format::Dia).variant, Variant::Pipelined);
/// assert_eq!(choose_variant_for(Method::Bicgstab, 1000, Format::Csr).variant, Variant::Pipelined);
/// ```
pub fn choose_variant_for(method: Method, n: usize, format: Format) -> VariantChoice {
    let choice = |variant, reason: String| VariantChoice { variant, reason };
    if method == Method::Gmres {
        return if n <= FUSED_MAX_ROWS {
            choice(
                Variant::Fused,
                format!(
                    "n = {n} ≤ {FUSED_MAX_ROWS}: launch-bound, two launches per step instead of four"
                ),
            )
        } else {
            choice(
                Variant::Pipelined,
                format!(
                    "n = {n} > {FUSED_MAX_ROWS}: bandwidth-bound, where pipelined GMRES's separate \
                     product and inner-product launches run faster than fused GMRES's one"
                ),
            )
        };
    }
    if method != Method::Cg {
        return choice(
            Variant::Pipelined,
            format!("{method}'s formulation with the fewest launches"),
        );
    }
    if n <= FUSED_MAX_ROWS {
        choice(
            Variant::Fused,
            format!(
                "n = {n} ≤ {FUSED_MAX_ROWS}: launch-bound, one launch per iteration instead of two"
            ),
        )
    } else if format == Format::Dia {
        choice(
            Variant::Fused,
            "banded (dia): the fused product's three gathers read contiguous windows".into(),
        )
    } else {
        choice(
            Variant::Pipelined,
            format!(
                "n = {n} > {FUSED_MAX_ROWS} in {format}: the fused product's three gathers of \
                 scattered columns cost more than the launch they save"
            ),
        )
    }
}
