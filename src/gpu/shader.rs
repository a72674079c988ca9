//! WGSL sources and their compilation for one precision.
//!
//! Every kernel lives in `shaders/<name>.wgsl` and is written against the type alias `Real`,
//! the constants `WG` (workgroup size) and `REAL_MAX`. The host prepends a prelude that defines
//! them (`alias Real = f32;` or `f64`), so one source serves both precisions. Solver kernels
//! also get the shared pieces in `shaders/lib/`: a workgroup reduction (subgroup or
//! workgroup-memory flavour, same interface) and the solver state bindings.

use crate::scalar::Precision;

/// One WGSL kernel file.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// File stem in `shaders/`, also the kernel's name in reports and on the host side.
    pub name: &'static str,
    pub source: &'static str,
    /// Whether the kernel is built on `shaders/lib/` (reduction + solver state).
    pub solver: bool,
}

/// `shaders/lib/reduce_workgroup.wgsl`.
pub const REDUCE_WORKGROUP: &str = include_str!("../../shaders/lib/reduce_workgroup.wgsl");
/// `shaders/lib/reduce_subgroup.wgsl`.
pub const REDUCE_SUBGROUP: &str = include_str!("../../shaders/lib/reduce_subgroup.wgsl");
/// `shaders/lib/solver_state.wgsl`.
pub const SOLVER_STATE: &str = include_str!("../../shaders/lib/solver_state.wgsl");

macro_rules! kernel {
    ($name:literal, $solver:expr) => {
        KernelSource {
            name: $name,
            source: include_str!(concat!("../../shaders/", $name, ".wgsl")),
            solver: $solver,
        }
    };
}

/// Every kernel shipped in `shaders/` (the naga portability test walks this list).
pub const KERNELS: &[KernelSource] = &[
    kernel!("spmv_csr", false),
    kernel!("stream_triad", false),
    kernel!("stream_update4", false),
    kernel!("stream_update4_status", false),
    kernel!("stream_update4_reduce", false),
    kernel!("cg_init", true),
    kernel!("spmv_dot_cg", true),
    kernel!("spmv_dot_cg_ell", true),
    kernel!("update_cg", true),
    kernel!("dot", true),
    kernel!("dot_finish", true),
    kernel!("axpy", true),
    kernel!("xpay", true),
    kernel!("diag_scale", true),
    kernel!("gmres_residual", true),
    kernel!("gmres_spmv_dot", true),
    kernel!("gmres_basis_dots", true),
    kernel!("gmres_gs_update", true),
    kernel!("gmres_normalize", true),
    kernel!("gmres_update_x", true),
    kernel!("gmres_basis_spmv", true),
    kernel!("gmres_basis_diag", true),
    kernel!("gmres_basis_axpy", true),
    kernel!("gmres_basis_scale", true),
    kernel!("gmres_finish", true),
    kernel!("bicgstab_init", true),
    kernel!("spmv_dot_bicgstab_p", true),
    kernel!("update_s_bicgstab", true),
    kernel!("spmv_dot_bicgstab_s", true),
    kernel!("update_xrp_bicgstab", true),
    kernel!("bicgstab_finish", true),
    kernel!("bicg_init", true),
    kernel!("bicg_direction_spmv", true),
    kernel!("bicg_update", true),
    kernel!("bicg_finish", true),
    kernel!("jacobi_sweep", true),
];

/// Looks a kernel up by name.
pub fn kernel_source(name: &str) -> Option<&'static KernelSource> {
    KERNELS.iter().find(|k| k.name == name)
}

/// How a kernel is specialised at pipeline creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShaderConfig {
    pub precision: Precision,
    /// Threads per workgroup (`WG` in the source); a power of two.
    pub workgroup_size: u32,
    /// Reduce with subgroup operations (needs the SUBGROUP feature) instead of a
    /// workgroup-memory tree.
    pub subgroups: bool,
}

impl ShaderConfig {
    /// The default for a precision: 256 threads per workgroup, workgroup-memory reductions.
    pub fn new(precision: Precision) -> Self {
        ShaderConfig {
            precision,
            workgroup_size: 256,
            subgroups: false,
        }
    }
}

/// The full WGSL text of `kernel` for `config`: prelude, shared pieces, source.
pub fn specialise(kernel: &KernelSource, config: ShaderConfig) -> String {
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
    if kernel.solver {
        text.push_str(if config.subgroups {
            REDUCE_SUBGROUP
        } else {
            REDUCE_WORKGROUP
        });
        text.push('\n');
        text.push_str(SOLVER_STATE);
        text.push('\n');
    }
    text.push_str(kernel.source);
    text
}
