//! The GPU layer: device selection, buffers, pipelines and the accounting of every dispatch
//! and transfer.
//!
//! [`GpuContext`] opens a device; [`Engine`] compiles kernels from `shaders/` and runs them,
//! counting every dispatch, submit, upload and readback in its [`Counters`].

mod batch;
mod choice;
mod counters;
mod device;
mod devices;
pub mod ds;
mod engine;
pub mod format;
mod format_rule;
pub mod kernels;
pub mod operator;
mod profiler;
pub mod residency;
pub mod shader;
mod shader_dir;
mod shader_parts;
mod shader_reductions;
mod spmv;
mod tuning;
mod variant_rule;

pub use crate::base::{DeviceInfo, DeviceKind};
pub use batch::{Batch, PendingRead};
pub use choice::{ChosenDevice, DeviceChoice, DevicePlan, DevicePreference};
pub use counters::Counters;
pub use device::{
    AdapterSummary, DeviceRequest, GpuContext, WANTED_FEATURES, is_software, list_adapters,
    list_adapters_for,
};
pub use devices::{DeviceList, adapter_count, open_devices, open_devices_on};
pub use engine::{Engine, Kernel, SegmentWriter, Tuning};
pub use format::{FormatChoice, GpuMatrix, RuleTarget, choose_format, choose_format_for};
pub use operator::GpuOperator;
pub use shader::FormatKernel;
pub use shader::{KERNELS, KernelSource, REDUCTIONS, ShaderConfig, reductions_started};
pub use spmv::Spmv;
pub use variant_rule::{
    FUSED_MAX_ROWS, GMRES_WORKGROUP_MAX_ROWS, VariantChoice, WORKGROUP_MAX_ENTRIES_PER_THREAD,
    choose_variant_for, choose_workgroup_for,
};

/// Whether tests must fail (rather than skip) when no adapter exists: `KRYLOV_REQUIRE_GPU=1`.
pub fn gpu_required() -> bool {
    std::env::var("KRYLOV_REQUIRE_GPU").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// Joins a multi-line wgpu error into one line (the CLI prints errors on one line).
pub(crate) fn one_line(s: &str) -> String {
    s.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
        .replace(":: ", ": ")
}
