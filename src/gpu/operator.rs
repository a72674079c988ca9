//! The linear operator interface the solvers are written against: y = A·x on the device,
//! consumed by the stand-alone `spmv` kernel ([`super::Spmv`]) and by every fused kernel that
//! multiplies by A and starts a reduction in the same launch (`spmv_dot_cg`,
//! `gmres_spmv_dot`, `bicg_direction_spmv`, …). Those kernels are written against the row
//! interface of `shaders/lib/spmv_row.wgsl`; an operator supplies the library behind it
//! ([`GpuOperator::kernel_format`]: one of `shaders/lib/format_*.wgsl` with its constants)
//! and the arrays it binds at 20–24 (25–29 as a kernel's second operator, BiCG's Aᵀ).
//!
//! [`GpuMatrix`](super::GpuMatrix) — one matrix in one storage format on one device — is the
//! implementation today. A row block of A on one of k devices (with its halo of x) and a
//! double-single matrix (hi/lo value arrays, a row library that accumulates in two f32)
//! are further implementations: new row libraries and bindings, not new solvers.

use super::engine::Engine;
use super::shader::{FormatKernel, ShaderConfig};
use crate::base::scalar::Scalar;

/// A linear operator resident on a device, as the kernels consume it.
pub trait GpuOperator<T> {
    /// Rows of A (the length of y).
    fn nrows(&self) -> usize;
    /// Columns of A (the length of x).
    fn ncols(&self) -> usize;
    /// The row library (and its compile-time constants) kernels multiplying by A compile in.
    fn kernel_format(&self) -> FormatKernel;
    /// Row chunks of `WG` rows the kernels loop over (the `spmv` launch's workgroups).
    fn passes(&self) -> u32;
    /// The (binding, buffer) pairs of A's arrays: 20–24, or 25–29 as a second operator.
    fn bindings(&self, second: bool) -> Vec<(u32, &wgpu::Buffer)>;
}

/// The engine's kernel configuration for `T` with `a`'s row library: what every kernel of a
/// solve on `a` compiles with (kernels without an operator ignore the format).
pub fn operator_config<T: Scalar>(engine: &Engine, a: &dyn GpuOperator<T>) -> ShaderConfig {
    ShaderConfig {
        format: a.kernel_format(),
        ..engine.shader_config(T::PRECISION)
    }
}
