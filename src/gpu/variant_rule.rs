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
//! sizes need. p(1)-GMRES (`gmres_p1_step`) runs a step in ONE launch; on an H100
//! (BENCHMARKS.md, 2026-12-07) it was 24–35 % faster per step than fused GMRES up to n = 1e5
//! (f32 and f64, 600-step loops) and faster to the solution on every shared and generated
//! nonsymmetric matrix tried but pores_1 in f32 (more restarts: its R_{i,i} from Pythagoras
//! lost), and slower at 1e6 (its row update reads u_1 … u_i as well as the v_j). So `auto`
//! takes p1 up to [`FUSED_MAX_ROWS`] — a solve whose cycles keep losing R_{i,i} goes on as
//! fused GMRES by itself — and pipelined GMRES above.

//!
//! One-workgroup GMRES (`gmres_workgroup`) runs a whole cycle in one launch; `auto` takes it
//! up to [`GMRES_WORKGROUP_MAX_ROWS`] rows (measured faster than p1 there, slower beyond).
//!
//! One-workgroup CG (`cg_workgroup`) runs 32 whole iterations per launch in one workgroup
//! with no global reduction. On an H200 (BENCHMARKS.md, 2026-11-29) it was 1.3–3× faster per
//! iteration than fused CG on 2D and 3D stencils up to about 15 stored entries per thread
//! (3025 rows of a 2D stencil, 2197 of a 3D one, on 1024 threads) and on the small shared
//! matrices, even at about 19, and slower beyond (each thread walks its rows one after
//! another, a chain of dependent loads per entry: one core does the work the whole GPU shares
//! in the other variants; bcsstk21, 3600 rows and 26 entries per thread, ran 1.1× (f32) and
//! 2× (f64) slower). So `auto` takes it up to [`WORKGROUP_MAX_ENTRIES_PER_THREAD`] entries
//! and 4 rows per thread, where the system fits the adapter's workgroup memory
//! ([`choose_workgroup_for`]).

use crate::base::{Format, Method, Variant};

/// Up to this many rows `auto` runs GMRES in one workgroup (`gmres_workgroup`): on an H100
/// (BENCHMARKS.md, 2026-12-07; 600-step loops of GMRES(30) on 2D Poisson) its step took
/// 0.77–0.89× p(1)-GMRES's up to 1024 rows, f32 and f64, and 1.18–1.38× at 2025 rows (one
/// workgroup's serial loads and barriers grow with the rows; p1's launch does not).
pub const GMRES_WORKGROUP_MAX_ROWS: usize = 1024;

/// Up to this many stored entries per thread `auto` runs CG in one workgroup.
pub const WORKGROUP_MAX_ENTRIES_PER_THREAD: usize = 16;

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
/// assert_eq!(choose_variant_for(Method::Gmres, 1000, Format::Csr).variant, Variant::P1);
/// assert_eq!(choose_variant_for(Method::Gmres, 10_000_000, Format::Dia).variant, Variant::Pipelined);
/// assert_eq!(choose_variant_for(Method::Bicgstab, 1000, Format::Csr).variant, Variant::Pipelined);
/// ```
pub fn choose_variant_for(method: Method, n: usize, format: Format) -> VariantChoice {
    let choice = |variant, reason: String| VariantChoice { variant, reason };
    if method == Method::Gmres {
        return if n <= FUSED_MAX_ROWS {
            choice(
                Variant::P1,
                format!(
                    "n = {n} ≤ {FUSED_MAX_ROWS}: launch-bound, one launch per step (p(1)-GMRES) \
                     instead of four"
                ),
            )
        } else {
            choice(
                Variant::Pipelined,
                format!(
                    "n = {n} > {FUSED_MAX_ROWS}: bandwidth-bound, where pipelined GMRES's separate \
                     product and inner-product launches run faster than fused or p(1)-GMRES's \
                     one"
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

/// The one-workgroup variant `auto` runs `method` with on a GPU for a system of `n` rows and
/// `nnz` stored entries, or `None`: CG up to `rows_cap` rows (what the adapter's workgroup
/// memory holds at 4 rows per thread: [`crate::solvers::cg::workgroup::auto_rows`]) and
/// [`WORKGROUP_MAX_ENTRIES_PER_THREAD`] entries per thread of `threads`; GMRES the same up to
/// [`GMRES_WORKGROUP_MAX_ROWS`] rows (`rows_cap`: GMRES's,
/// [`crate::solvers::gmres::workgroup::auto_rows`]; its restart the caller checks).
///
/// ```
/// use krylov_wgpu::gpu::choose_workgroup_for;
/// use krylov_wgpu::solvers::{Method, Variant};
/// // 1000 rows of a 3D stencil on 1024 threads: 6.4 entries per thread.
/// let small = choose_workgroup_for(Method::Cg, 1000, 6400, 4096, 1024).unwrap();
/// assert_eq!(small.variant, Variant::Workgroup);
/// assert!(choose_workgroup_for(Method::Cg, 1000, 6400, 700, 1024).is_none()); // does not fit
/// assert!(choose_workgroup_for(Method::Cg, 3600, 26_600, 4096, 1024).is_none()); // too long
/// assert_eq!(choose_workgroup_for(Method::Gmres, 1000, 6400, 4096, 1024).unwrap().variant, Variant::Workgroup);
/// assert!(choose_workgroup_for(Method::Gmres, 2000, 12_800, 4096, 1024).is_none()); // p1's size
/// assert!(choose_workgroup_for(Method::Bicgstab, 1000, 6400, 4096, 1024).is_none());
/// ```
pub fn choose_workgroup_for(
    method: Method,
    n: usize,
    nnz: usize,
    rows_cap: usize,
    threads: usize,
) -> Option<VariantChoice> {
    let per_thread = nnz.div_ceil(threads.max(1));
    if n > rows_cap || per_thread > WORKGROUP_MAX_ENTRIES_PER_THREAD {
        return None;
    }
    let reason = match method {
        Method::Cg => format!(
            "n = {n}, {per_thread} stored entries per thread of {threads}: whole iterations \
             in one workgroup, 32 per launch, no global reduction (up to \
             {WORKGROUP_MAX_ENTRIES_PER_THREAD} entries and 4 rows per thread, within this \
             adapter's workgroup memory)"
        ),
        Method::Gmres if n <= GMRES_WORKGROUP_MAX_ROWS => format!(
            "n = {n} ≤ {GMRES_WORKGROUP_MAX_ROWS}, {per_thread} stored entries per thread of \
             {threads}: a whole GMRES cycle in one launch of one workgroup, no global \
             reduction in its steps"
        ),
        _ => return None,
    };
    Some(VariantChoice {
        variant: Variant::Workgroup,
        reason,
    })
}
