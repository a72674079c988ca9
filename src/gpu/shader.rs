//! WGSL sources and their compilation for one precision.
//!
//! Every kernel lives in `shaders/<folder>/<name>.wgsl`, one folder per concern (`blas`,
//! `cg`, `bicg`, `bicgstab`, `gmres`, `jacobi`, `precond`, `bench`; see `shaders/README.md`),
//! and is written against the type alias `Real`, the constants `WG` (workgroup size) and
//! `REAL_MAX`. The host prepends a prelude that defines them (`alias Real = f32;` or `f64`), so
//! one source serves both precisions. Solver kernels also get the shared pieces in
//! `shaders/lib/`: a workgroup reduction (subgroup or workgroup-memory flavour, same
//! interface) and the solver state bindings; kernels that multiply by a matrix get the
//! storage format's library, and some kernels further [`Piece`]s of `shaders/lib/`.

use crate::base::scalar::{Precision, TwoProd};

pub use super::shader_parts::{
    MAX_CSR_PARTS, MAX_POOL_PARTS, POOL_PARTS_BY_COMPARISON, PoolLayout, csr_part_bindings,
    csr_parts_source, pool_source,
};

/// One WGSL kernel file.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// File stem, also the kernel's name in reports and on the host side.
    pub name: &'static str,
    /// The folder of `shaders/` the file is in (`cg`, `gmres`, `blas`, …): see [`Self::path`].
    pub folder: &'static str,
    pub source: &'static str,
    /// Whether the kernel is built on `shaders/lib/` (reduction + solver state).
    pub solver: bool,
    /// Sparse matrices the kernel multiplies by (0, 1, or 2 for BiCG's A and Aᵀ): each gets
    /// the storage format's `shaders/lib/format_*.wgsl` (see `shaders/lib/spmv_row.wgsl`).
    pub matrices: u8,
    /// Further library pieces the kernel is built on, prepended after the format library.
    pub pieces: &'static [Piece],
}

impl KernelSource {
    /// The kernel's file, relative to the crate root: `shaders/<folder>/<name>.wgsl`.
    pub fn path(&self) -> String {
        format!("shaders/{}/{}.wgsl", self.folder, self.name)
    }
}

/// A piece of `shaders/lib/` that only some kernels are built on: code several kernels share,
/// written once. Like the format libraries, a piece may call a function the kernel defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Piece {
    /// `residual.wgsl`: r = b − A·x row by row with the first reduction stage of the row terms
    /// the kernel returns (the init kernels of CG, BiCG and BiCGStab).
    Residual,
    /// `blas_update.wgsl`: the coefficient scalars\[num\] / scalars\[den\] and the loop of
    /// y ← f(x, y), four entries per thread (axpy, xpay).
    BlasUpdate,
    /// `probe.wgsl`: parameters, vectors and entry update of the `stream_update4*` probes.
    Probe,
    /// `spmv_partials.wgsl`: y = A·x row by row with the first reduction stage of the row
    /// terms the kernel returns (with [`Piece::Residual`], [`Piece::BicgstabSpmv`], and the
    /// GMRES kernels `gmres_residual`, `gmres_spmv_dot`).
    SpmvPartials,
    /// `bicgstab_spmv.wgsl`: the Jacobi-fused product of the pipelined BiCGStab kernels
    /// `spmv_dot_bicgstab_p` and `spmv_dot_bicgstab_s` (on [`Piece::SpmvPartials`]).
    BicgstabSpmv,
    /// `gmres.wgsl`: the cycle-buffer header, stop codes and partials slots of the GMRES(m)
    /// kernels, and the stop of a cycle.
    Gmres,
    /// `gmres_open.wgsl` (on [`Piece::Gmres`] and [`Piece::GmresPool`]): step 1's opening of
    /// a cycle (ρ0, its stop tests, v_0 = r/ρ0), shared by pipelined and fused GMRES.
    GmresOpen,
    /// `ds.wgsl`: double-single arithmetic on `vec2<f32>` (TwoSum, TwoProd, Ds add/mul, the
    /// exact-product accumulation `ds_fma_f32`); the prelude of a kernel built on it defines
    /// `DS_FMA` ([`TwoProd`]; see [`specialise_with`]).
    Ds,
    /// `ds_rows.wgsl`: the format libraries' rows accumulated in double-single (exact products,
    /// Ds sums; on [`Piece::Ds`]) instead of `row_sum.wgsl`'s plain sum in `Real`.
    DsRows,
    /// `ca_leaf.wgsl`: the row blocks (leaves) of CA-GMRES's CAQR kernels `ca_tsqr_leaf` and
    /// `ca_tsqr_apply` (on [`Piece::GmresPool`]'s pool).
    CaLeaf,
    /// `ca_block_tile.wgsl`: the 4 × 4 tiles of CA-GMRES's block inner products
    /// (`ca_block_dots`, `ca_block_dots_pairs`: their set-up, loads and partial sums).
    CaBlockTile,
    /// `gmres_pool.wgsl`: GMRES's and CA-GMRES's pool (basis and work vectors) with
    /// `pool_get`/`pool_set`; [`pool_source`] (several bindings) when
    /// [`ShaderConfig::pool_parts`] > 1.
    GmresPool,
    /// `pool_read.wgsl`: [`Piece::GmresPool`]'s `pool_get` over a read-only binding, for a kernel
    /// that only reads the pool; [`pool_source`] when [`ShaderConfig::pool_parts`] > 1.
    PoolRead,
    /// `batch_cg.wgsl`: batched CG, whole iterations of one work item per workgroup, written
    /// against the column type `Col` the kernels `batch_cg` and `batch_cg_block` define.
    BatchCg,
    /// `dist.wgsl`: the launch parameters of one device's row block in a distributed solve
    /// and the store of its per-workgroup partial sums (the `dist_*` kernels).
    Dist,
    /// `dist_rows.wgsl` (on [`Piece::Dist`]): the row product of a device's block of A for the
    /// distributed products; the kernel defines `dist_x(col)`.
    DistRows,
    /// `dist_ca.wgsl`: the parameters of distributed CA-GMRES's operand loads, products and
    /// matrix powers (`dist_ca_*`).
    DistCa,
    /// `dist_basis.wgsl` (on [`Piece::Dist`]): distributed GMRES's Krylov basis on a row
    /// block, its Gram–Schmidt combination and inner products; the kernel declares `basis`
    /// (and `w` for the inner products).
    DistBasis,
    /// `dist_pool.wgsl`: a distributed block's pool (distributed GMRES's basis, CA-GMRES's
    /// block pool) at binding 23 with `pool_get`/`pool_set`; over several bindings
    /// [`pool_source`] with [`PoolLayout::Dist`] when [`ShaderConfig::pool_parts`] > 1.
    DistPool,
    /// `dist_pool_read.wgsl`: [`Piece::DistPool`]'s `pool_get` over a read-only binding.
    DistPoolRead,
    /// `cg_next_row.wgsl`: fused CG's next iterate formed on the fly (the product's vector
    /// p' and a row's r', p', x and inner-product terms), for `update_spmv_dot_cg` and
    /// `cg_cooperative`; the kernel defines where iterate j's r, p, Ap are read.
    CgNextRow,
    /// `gmres_own_dots.wgsl`: the first stage of ⟨v_j, w⟩ over the rows a workgroup's product
    /// wrote (fused GMRES's `gmres_scale_spmv_dots`, p(1)-GMRES's `gmres_p1_step`).
    GmresOwnDots,
}

impl Piece {
    /// Every piece.
    pub const ALL: [Piece; 22] = [
        Piece::Residual,
        Piece::BlasUpdate,
        Piece::Probe,
        Piece::SpmvPartials,
        Piece::BicgstabSpmv,
        Piece::Gmres,
        Piece::GmresOpen,
        Piece::Ds,
        Piece::DsRows,
        Piece::CaLeaf,
        Piece::CaBlockTile,
        Piece::BatchCg,
        Piece::GmresPool,
        Piece::PoolRead,
        Piece::Dist,
        Piece::DistRows,
        Piece::DistBasis,
        Piece::DistCa,
        Piece::DistPool,
        Piece::DistPoolRead,
        Piece::CgNextRow,
        Piece::GmresOwnDots,
    ];

    /// The piece's WGSL source.
    pub fn source(self) -> &'static str {
        self.file().1
    }

    /// The piece's file, relative to the crate root.
    pub fn path(self) -> &'static str {
        self.file().0
    }

    fn file(self) -> (&'static str, &'static str) {
        macro_rules! lib_file {
            ($file:literal) => {
                (
                    concat!("shaders/lib/", $file),
                    include_str!(concat!("../../shaders/lib/", $file)),
                )
            };
        }
        match self {
            Piece::Residual => lib_file!("residual.wgsl"),
            Piece::BlasUpdate => lib_file!("blas_update.wgsl"),
            Piece::Probe => lib_file!("probe.wgsl"),
            Piece::SpmvPartials => lib_file!("spmv_partials.wgsl"),
            Piece::BicgstabSpmv => lib_file!("bicgstab_spmv.wgsl"),
            Piece::Gmres => lib_file!("gmres.wgsl"),
            Piece::GmresOpen => lib_file!("gmres_open.wgsl"),
            Piece::Ds => lib_file!("ds.wgsl"),
            Piece::DsRows => lib_file!("ds_rows.wgsl"),
            Piece::CaLeaf => lib_file!("ca_leaf.wgsl"),
            Piece::CaBlockTile => lib_file!("ca_block_tile.wgsl"),
            Piece::BatchCg => lib_file!("batch_cg.wgsl"),
            Piece::GmresPool => lib_file!("gmres_pool.wgsl"),
            Piece::PoolRead => lib_file!("pool_read.wgsl"),
            Piece::Dist => lib_file!("dist.wgsl"),
            Piece::DistRows => lib_file!("dist_rows.wgsl"),
            Piece::DistBasis => lib_file!("dist_basis.wgsl"),
            Piece::DistCa => lib_file!("dist_ca.wgsl"),
            Piece::DistPool => lib_file!("dist_pool.wgsl"),
            Piece::DistPoolRead => lib_file!("dist_pool_read.wgsl"),
            Piece::CgNextRow => lib_file!("cg_next_row.wgsl"),
            Piece::GmresOwnDots => lib_file!("gmres_own_dots.wgsl"),
        }
    }
}

/// `shaders/lib/reduce_workgroup.wgsl`.
pub const REDUCE_WORKGROUP: &str = include_str!("../../shaders/lib/reduce_workgroup.wgsl");
/// `shaders/lib/reduce_subgroup.wgsl`.
pub const REDUCE_SUBGROUP: &str = include_str!("../../shaders/lib/reduce_subgroup.wgsl");
/// `shaders/lib/sum_plain.wgsl`: the reductions' running sums, plain.
pub const SUM_PLAIN: &str = include_str!("../../shaders/lib/sum_plain.wgsl");
/// `shaders/lib/sum_compensated.wgsl`: the reductions' running sums with error terms.
pub const SUM_COMPENSATED: &str = include_str!("../../shaders/lib/sum_compensated.wgsl");
/// `shaders/lib/solver_state.wgsl`.
pub const SOLVER_STATE: &str = include_str!("../../shaders/lib/solver_state.wgsl");
/// `shaders/lib/spmv_row.wgsl`: the interface of the format libraries.
pub const SPMV_ROW: &str = include_str!("../../shaders/lib/spmv_row.wgsl");
/// `shaders/lib/row_sum.wgsl`: how the format libraries accumulate a row, in `Real` (every
/// kernel with a matrix but those built on [`Piece::DsRows`]).
pub const ROW_SUM: &str = include_str!("../../shaders/lib/row_sum.wgsl");

/// How a kernel reads its sparse matrix: the storage format it is specialised for
/// (`shaders/lib/format_*.wgsl`) with the format's compile-time constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FormatKernel {
    /// `format_csr.wgsl`.
    #[default]
    Csr,
    /// CSR with its column indices and values over `parts` (2 ..= [`MAX_CSR_PARTS`])
    /// bindings each (arrays larger than one storage binding): `format_csr_split.wgsl` for
    /// two, [`csr_parts_source`] beyond.
    CsrSplit { parts: u8 },
    /// `format_ell.wgsl`.
    Ell,
    /// `format_dia.wgsl`.
    Dia,
    /// `format_sell.wgsl` with slices of `c` rows.
    Sell { c: u32 },
    /// `format_bcsr.wgsl` with `n`×`n` blocks, `bx` blocks per block row and step.
    Bcsr { n: u32, bx: u32 },
}

impl FormatKernel {
    /// The format library's WGSL source (the row-per-thread formats with
    /// `shaders/lib/format_rows.wgsl`, which provides their row chunks).
    pub fn source(self) -> String {
        const ROWS: &str = include_str!("../../shaders/lib/format_rows.wgsl");
        let rows = |file: &str| format!("{file}\n{ROWS}");
        match self {
            FormatKernel::Csr => rows(include_str!("../../shaders/lib/format_csr.wgsl")),
            FormatKernel::CsrSplit { parts: 2 } => {
                rows(include_str!("../../shaders/lib/format_csr_split.wgsl"))
            }
            FormatKernel::CsrSplit { parts } => rows(&csr_parts_source(parts)),
            FormatKernel::Ell => rows(include_str!("../../shaders/lib/format_ell.wgsl")),
            FormatKernel::Dia => rows(include_str!("../../shaders/lib/format_dia.wgsl")),
            FormatKernel::Sell { .. } => {
                include_str!("../../shaders/lib/format_sell.wgsl").to_string()
            }
            FormatKernel::Bcsr { .. } => {
                include_str!("../../shaders/lib/format_bcsr.wgsl").to_string()
            }
        }
    }

    /// Compile-time constants of the format for workgroup size `wg`.
    fn constants(self, wg: u32) -> String {
        match self {
            FormatKernel::Sell { c } => format!("const SELL_C: u32 = {c}u;\n"),
            FormatKernel::Bcsr { n, bx } => format!(
                "const BCSR_N: u32 = {n}u;\nconst BCSR_BX: u32 = {bx}u;\nconst BCSR_BY: u32 = {}u;\n",
                wg / (bx * n * n)
            ),
            _ => String::new(),
        }
    }
}

/// The second matrix of a two-matrix kernel (BiCG's Aᵀ): the format library with its
/// identifiers renamed (`mat_` → `matt_`, `spmv_` → `spmvt_`) and bindings 20–24 → 25–29
/// (a split CSR's parts at [`csr_part_bindings`]`(k, true)`).
fn second_matrix(source: &str) -> String {
    let mut s = source.replace("mat_", "matt_").replace("spmv_", "spmvt_");
    let rename = |s: String, from: u32, to: u32| {
        s.replace(&format!("@binding({from})"), &format!("@binding({to})"))
    };
    for b in 20..25 {
        s = rename(s, b, b + 5);
    }
    for k in 1..MAX_CSR_PARTS {
        for w in 0..2 {
            let from = csr_part_bindings(k, false);
            let to = csr_part_bindings(k, true);
            let (from, to) = if w == 0 {
                (from.0, to.0)
            } else {
                (from.1, to.1)
            };
            s = rename(s, from, to);
        }
    }
    s
}

/// `kernel!(folder, name, solver[, matrices[, [pieces]]])`: the file
/// `shaders/<folder>/<name>.wgsl` with what [`specialise`] prepends to it.
macro_rules! kernel {
    ($folder:literal, $name:literal, $solver:expr) => {
        kernel!($folder, $name, $solver, 0)
    };
    ($folder:literal, $name:literal, $solver:expr, $matrices:expr) => {
        kernel!($folder, $name, $solver, $matrices, [])
    };
    ($folder:literal, $name:literal, $solver:expr, $matrices:expr, [$($piece:ident),*]) => {
        KernelSource {
            name: $name,
            folder: $folder,
            source: include_str!(concat!("../../shaders/", $folder, "/", $name, ".wgsl")),
            solver: $solver,
            matrices: $matrices,
            pieces: &[$(Piece::$piece),*],
        }
    };
}

/// Every kernel shipped in `shaders/` (the naga portability test walks this list, and checks
/// it against the files).
pub const KERNELS: &[KernelSource] = &[
    // Classical building blocks: SpMV and BLAS-1 with device-side scalars.
    kernel!("blas", "spmv", false, 1),
    kernel!("blas", "dot", true),
    kernel!("blas", "dot_finish", true),
    kernel!("blas", "axpy", true, 0, [BlasUpdate]),
    kernel!("blas", "xpay", true, 0, [BlasUpdate]),
    // Preconditioners applied as their own launch.
    kernel!("precond", "diag_scale", true),
    kernel!("precond", "trisolve_levels", true),
    kernel!("precond", "trisolve_sweep", true),
    // Bandwidth probes of `krylov bench`.
    kernel!("bench", "stream_triad", false),
    kernel!("bench", "stream_update4", false, 0, [Probe]),
    kernel!("bench", "stream_update4_status", false, 0, [Probe]),
    kernel!("bench", "stream_update4_reduce", false, 0, [Probe]),
    // CG (classical and pipelined).
    kernel!("cg", "cg_init", true, 1, [SpmvPartials, Residual]),
    kernel!("cg", "spmv_dot_cg", true, 1),
    kernel!("cg", "update_cg", true),
    kernel!("cg", "update_spmv_dot_cg", true, 1, [CgNextRow]),
    kernel!("cg", "cg_workgroup", true, 1),
    kernel!("cg", "cg_cooperative", true, 1, [CgNextRow]),
    // GMRES(m).
    kernel!(
        "gmres",
        "gmres_residual",
        true,
        1,
        [Gmres, SpmvPartials, GmresPool]
    ),
    kernel!(
        "gmres",
        "gmres_spmv_dot",
        true,
        1,
        [Gmres, GmresOpen, SpmvPartials, GmresPool]
    ),
    kernel!(
        "gmres",
        "gmres_scale_spmv_dots",
        true,
        1,
        [Gmres, GmresOpen, SpmvPartials, GmresPool, GmresOwnDots]
    ),
    kernel!(
        "gmres",
        "gmres_p1_step",
        true,
        1,
        [Gmres, GmresOpen, SpmvPartials, GmresPool, GmresOwnDots]
    ),
    kernel!(
        "gmres",
        "gmres_workgroup",
        true,
        1,
        [Gmres, GmresOpen, GmresPool]
    ),
    kernel!("gmres", "gmres_basis_dots", true, 0, [GmresPool]),
    kernel!("gmres", "gmres_gs_update", true, 0, [Gmres, GmresPool]),
    kernel!("gmres", "gmres_normalize", true, 0, [Gmres, GmresPool]),
    kernel!("gmres", "gmres_update_x", true, 0, [GmresPool]),
    kernel!("gmres", "gmres_basis_spmv", true, 1, [GmresPool]),
    kernel!("gmres", "gmres_basis_diag", true, 0, [GmresPool]),
    kernel!("gmres", "gmres_basis_axpy", true, 0, [GmresPool]),
    kernel!("gmres", "gmres_basis_scale", true, 0, [GmresPool]),
    kernel!("gmres", "gmres_finish", true, 0, [Gmres]),
    // CA-GMRES(s, m).
    kernel!("cagmres", "ca_powers", true, 1, [GmresPool]),
    kernel!("cagmres", "ca_block_dots", true, 0, [PoolRead, CaBlockTile]),
    kernel!(
        "cagmres",
        "ca_block_dots_pairs",
        true,
        0,
        [PoolRead, CaBlockTile]
    ),
    kernel!("cagmres", "ca_block_dots_staged", true, 0, [PoolRead]),
    kernel!("cagmres", "ca_block_finish", true),
    kernel!("cagmres", "ca_block_update", true, 0, [GmresPool]),
    kernel!("cagmres", "ca_cholqr", true),
    kernel!("cagmres", "ca_tsqr_leaf", true, 0, [GmresPool, CaLeaf]),
    kernel!("cagmres", "ca_tsqr_apply", true, 0, [GmresPool, CaLeaf]),
    // Batched CG: many small systems, one workgroup each (one column, or a block of four).
    kernel!("batch", "batch_cg", true, 0, [BatchCg]),
    kernel!("batch", "batch_cg_block", true, 0, [BatchCg]),
    // BiCGStab.
    kernel!(
        "bicgstab",
        "bicgstab_init",
        true,
        1,
        [SpmvPartials, Residual]
    ),
    kernel!(
        "bicgstab",
        "spmv_dot_bicgstab_p",
        true,
        1,
        [SpmvPartials, BicgstabSpmv]
    ),
    kernel!("bicgstab", "update_s_bicgstab", true),
    kernel!(
        "bicgstab",
        "spmv_dot_bicgstab_s",
        true,
        1,
        [SpmvPartials, BicgstabSpmv]
    ),
    kernel!("bicgstab", "update_xrp_bicgstab", true),
    kernel!("bicgstab", "bicgstab_finish", true),
    kernel!("bicgstab", "bicgstab_left_init", true),
    // BiCG (A and Aᵀ).
    kernel!("bicg", "bicg_init", true, 1, [SpmvPartials, Residual]),
    kernel!("bicg", "bicg_direction_spmv", true, 2),
    kernel!("bicg", "bicg_update", true),
    kernel!("bicg", "bicg_finish", true),
    kernel!("bicg", "bicg_rho", true),
    // Mixed-precision refinement's outer loop.
    kernel!(
        "mixed",
        "refine_residual",
        true,
        1,
        [SpmvPartials, Residual]
    ),
    kernel!("mixed", "refine_update", true),
    kernel!("mixed", "refine_residual_ds", true, 0, [Ds]),
    kernel!("mixed", "refine_update_ds", true, 0, [Ds]),
    kernel!("mixed", "reliable_replace", true),
    // The Jacobi method.
    kernel!("jacobi", "jacobi_sweep", true, 1),
    // Distributed pipelined CG: one device's row block (src/solvers/dist/).
    kernel!("dist", "dist_spmv_dot", true, 0, [Dist, DistRows]),
    kernel!("dist", "dist_update_cg", true, 0, [Dist]),
    kernel!("dist", "dist_gather", true, 0, [Dist]),
    kernel!("dist", "dist_cg_xr", true, 0, [Dist]),
    kernel!("dist", "dist_cg_p", true, 0, [Dist]),
    kernel!("dist", "dist_bicgstab_spmv", true, 0, [Dist, DistRows]),
    kernel!("dist", "dist_bicgstab_s", true, 0, [Dist]),
    kernel!("dist", "dist_bicgstab_xr", true, 0, [Dist]),
    kernel!("dist", "dist_bicgstab_p", true, 0, [Dist]),
    kernel!(
        "dist",
        "dist_gmres_spmv_dots",
        true,
        0,
        [Dist, DistRows, DistBasis, DistPoolRead]
    ),
    kernel!(
        "dist",
        "dist_gmres_orth",
        true,
        0,
        [Dist, DistBasis, DistPoolRead]
    ),
    kernel!(
        "dist",
        "dist_gmres_prepare",
        true,
        0,
        [Dist, DistBasis, DistPool]
    ),
    kernel!(
        "dist",
        "dist_gmres_update_x",
        true,
        0,
        [Dist, DistBasis, DistPoolRead]
    ),
    kernel!("dist", "dist_gmres_residual", true, 0, [Dist, DistRows]),
    kernel!(
        "dist",
        "dist_ca_load",
        true,
        0,
        [Dist, DistCa, DistPoolRead]
    ),
    kernel!(
        "dist",
        "dist_ca_powers",
        true,
        0,
        [Dist, DistRows, DistCa, DistPool]
    ),
    kernel!("dist", "dist_ca_mpk_load", true, 0, [DistCa, DistPoolRead]),
    kernel!("dist", "dist_ca_mpk_step", true, 0, [DistCa, DistPool]),
    // Double-single arithmetic (f32 kernels): the fma probe of src/gpu/ds.rs and the
    // primitives applied elementwise (tests/gpu_ds.rs).
    kernel!("ds", "fma_probe", false, 0, [Ds]),
    kernel!("ds", "ds_ops", false, 0, [Ds]),
    kernel!("ds", "true_residual_ds", true, 1, [Ds, DsRows]),
];

/// Looks a kernel up by name.
pub fn kernel_source(name: &str) -> Option<&'static KernelSource> {
    KERNELS.iter().find(|k| k.name == name)
}

// The reductions each kernel starts: a table of its own (`shader_reductions.rs`), read here.
pub use super::shader_reductions::{REDUCTIONS, reductions_started};

/// How a kernel is specialised at pipeline creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShaderConfig {
    pub precision: Precision,
    /// Threads per workgroup (`WG` in the source); a power of two.
    pub workgroup_size: u32,
    /// Reduce with subgroup operations (needs the SUBGROUP feature) instead of a
    /// workgroup-memory tree.
    pub subgroups: bool,
    /// Storage format of the matrix operand (kernels without one ignore it).
    pub format: FormatKernel,
    /// Compensated reductions (`shaders/lib/sum_compensated.wgsl`: TwoSum error terms in
    /// every stage; issue 15) instead of plain sums (`sum_plain.wgsl`). A kernel compiled
    /// with it needs a partials buffer of twice the slots ([`partials_entries`]).
    pub compensated: bool,
    /// The storage bindings GMRES's and CA-GMRES's pool spreads over (1 ..=
    /// [`MAX_POOL_PARTS`]; [`Piece::GmresPool`] from [`pool_source`] when above 1): for
    /// a basis larger than one binding.
    pub pool_parts: u8,
    /// Entries of the vector a kernel keeps in workgroup memory (`WG_VECTOR` in the source,
    /// at least 1): `cg_workgroup`'s direction p, sized to the system within the adapter's limit
    /// ([`workgroup_vector_cap`](crate::gpu::kernels::workgroup_vector_cap)).
    pub workgroup_vector: u32,
}

/// Entries (`vec4<Real>`) of the workgroup reduction's scratch (`red_scratch`) of a solver
/// kernel compiled with `config`: one per subgroup with subgroup reductions (subgroups of at
/// least 4 lanes: the engine uses them only where the adapter's are), every thread's where
/// the compensated f32 tree (`sum_compensated.wgsl`) or the workgroup-memory tree walks it.
pub fn red_scratch_entries(config: ShaderConfig) -> u32 {
    let compensated = config.compensated && config.precision == Precision::F32;
    if config.subgroups && !compensated {
        (config.workgroup_size / 4).max(1)
    } else {
        config.workgroup_size
    }
}

/// Entries (`vec4`s) of a partials buffer of `slots` slots of `groups` partials: twice as
/// many for compensated kernels, whose error terms fill the upper half.
pub fn partials_entries(slots: u32, groups: u32, compensated: bool) -> usize {
    (slots * groups) as usize * if compensated { 2 } else { 1 }
}

impl ShaderConfig {
    /// The default for a precision: 256 threads per workgroup, workgroup-memory reductions.
    pub fn new(precision: Precision) -> Self {
        ShaderConfig {
            precision,
            workgroup_size: 256,
            subgroups: false,
            format: FormatKernel::Csr,
            compensated: false,
            pool_parts: 1,
            workgroup_vector: 0,
        }
    }
}

/// The full WGSL text of `kernel` for `config`: prelude, reduction, running sums and solver
/// state (solver kernels), format library (kernels with a matrix), the kernel's [`Piece`]s, source.
///
/// A kernel built on [`Piece::Ds`] gets Dekker's product here ([`TwoProd::Split`], exact
/// everywhere); the engine compiles it with [`specialise_with`] and the adapter's choice.
pub fn specialise(kernel: &KernelSource, config: ShaderConfig) -> String {
    specialise_with(kernel, config, TwoProd::Split)
}

/// [`specialise`] with the exact product of double-single kernels chosen: the prelude of a
/// kernel built on [`Piece::Ds`] defines `const DS_FMA: bool` (true for [`TwoProd::Fma`]).
pub fn specialise_with(kernel: &KernelSource, config: ShaderConfig, two_prod: TwoProd) -> String {
    let real_max = match config.precision {
        Precision::F32 => "3.40282347e38",
        Precision::F64 => "1.7976931348623157e308",
    };
    let mut text = format!(
        "// krylov-wgpu prelude: {name} in {p}\nalias Real = {p};\nconst WG: u32 = {wg}u;\nconst REAL_MAX: Real = {real_max};\n\n",
        name = kernel.name,
        p = config.precision.wgsl(),
        wg = config.workgroup_size,
    );
    // (Every kernel gets it, so that each parses alone; only `cg_workgroup` sizes by it.)
    text.push_str(&format!(
        "const WG_VECTOR: u32 = {}u;\n\n",
        config.workgroup_vector.max(1)
    ));
    if kernel.pieces.contains(&Piece::Ds) {
        let fma = two_prod == TwoProd::Fma;
        text.push_str(&format!("const DS_FMA: bool = {fma};\n\n"));
    }
    if kernel.solver {
        if config.subgroups {
            text.push_str(&format!(
                "const RED_SCRATCH: u32 = {}u;\n\n",
                red_scratch_entries(config)
            ));
        }
        text.push_str(if config.subgroups {
            REDUCE_SUBGROUP
        } else {
            REDUCE_WORKGROUP
        });
        text.push('\n');
        // Compensated sums are f32 only (their barrier is a bitcast to u32): f64 runs plain.
        text.push_str(
            if config.compensated && config.precision == Precision::F32 {
                SUM_COMPENSATED
            } else {
                SUM_PLAIN
            },
        );
        text.push('\n');
        text.push_str(SOLVER_STATE);
        text.push('\n');
    }
    if kernel.matrices > 0 {
        text.push_str(&config.format.constants(config.workgroup_size));
        text.push_str(SPMV_ROW);
        text.push('\n');
        if !kernel.pieces.contains(&Piece::DsRows) {
            text.push_str(ROW_SUM);
            text.push('\n');
        }
        let format = config.format.source();
        text.push_str(&format);
        text.push('\n');
        if kernel.matrices > 1 {
            text.push_str(&second_matrix(&format));
            text.push('\n');
        }
    }
    for piece in kernel.pieces {
        let pool = match piece {
            Piece::GmresPool => Some((PoolLayout::Solver, false)),
            Piece::PoolRead => Some((PoolLayout::Solver, true)),
            Piece::DistPool => Some((PoolLayout::Dist, false)),
            Piece::DistPoolRead => Some((PoolLayout::Dist, true)),
            _ => None,
        };
        if let (Some((layout, read_only)), true) = (pool, config.pool_parts > 1) {
            text.push_str(&pool_source(layout, config.pool_parts, read_only));
        } else {
            text.push_str(piece.source());
        }
        text.push('\n');
    }
    text.push_str(kernel.source);
    text
}
