//! Host side of the solver kernels in `shaders/`: the launch parameters they share and the
//! buffers every solver kernel binds (state, partials, scalars, history: bindings 0–3 of
//! `shaders/lib/solver_state.wgsl`).

use super::engine::{Engine, Kernel};
use super::shader::{ShaderConfig, kernel_source, partials_entries};
use crate::base::error::Result;
use crate::base::scalar::Scalar;

/// Mirrors `struct Params` of `shaders/lib/solver_state.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Params {
    pub n: u32,
    pub groups: u32,
    pub jacobi: u32,
    pub slot: u32,
    pub dst: u32,
    pub num: u32,
    pub den: u32,
    pub flags: u32,
    pub comp: u32,
    pub comp_monitor: u32,
    /// ELL width (entries per row) for the ELL SpMV kernels.
    pub ell_width: u32,
    /// `zero` of the WGSL struct: must stay 0. The compensated sums
    /// (`shaders/lib/sum_compensated.wgsl`) use it as a zero the shader compiler cannot see.
    pub _pad: u32,
}

/// `FLAG_NEGATE` of the WGSL source: axpy subtracts.
pub const FLAG_NEGATE: u32 = 1;
/// `FLAG_SHIFT`: dot_finish moves `scalars[dst]` to `scalars[dst + 1]` first.
pub const FLAG_SHIFT: u32 = 2;
/// `FLAG_MONITOR`: dot_finish records the residual and tests convergence.
pub const FLAG_MONITOR: u32 = 4;
/// `FLAG_POSITIVE`: dot_finish stops the solve (not SPD) unless the value is > 0.
pub const FLAG_POSITIVE: u32 = 8;

/// Status words written by the kernels (`STATUS_*` in solver_state.wgsl).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuStatus {
    Running,
    Converged,
    NotSpd,
    NonFinite,
    Breakdown,
    Unknown(u32),
}

impl From<u32> for GpuStatus {
    fn from(v: u32) -> Self {
        match v {
            0 => GpuStatus::Running,
            1 => GpuStatus::Converged,
            2 => GpuStatus::NotSpd,
            3 => GpuStatus::NonFinite,
            4 => GpuStatus::Breakdown,
            other => GpuStatus::Unknown(other),
        }
    }
}

/// Compiles a solver kernel by name for `T`.
pub fn solver_kernel<T: Scalar>(
    engine: &Engine,
    name: &str,
    config: ShaderConfig,
) -> Result<Kernel> {
    let src = kernel_source(name).unwrap_or_else(|| panic!("kernel {name} is registered"));
    engine.kernel(
        src,
        ShaderConfig {
            precision: T::PRECISION,
            ..config
        },
    )
}

/// The buffers bound at 0–3 by every solver kernel.
#[derive(Debug)]
pub struct SolverBuffers {
    /// `array<atomic<u32>, 4>`: status, residuals recorded, iteration of the status change.
    pub state: wgpu::Buffer,
    /// `array<vec4<Real>>`: `slots × groups` per-workgroup partial sums (and as many error
    /// terms above them for compensated kernels).
    pub partials: wgpu::Buffer,
    /// `array<Real>`: finished scalars; index 2 holds tol².
    pub scalars: wgpu::Buffer,
    /// `array<Real>`: squared residual norms, one per recorded iteration.
    pub history: wgpu::Buffer,
    pub groups: u32,
    pub history_len: usize,
    /// Whether `partials` has room for the error terms of compensated kernels.
    pub compensated: bool,
}

/// Number of scalar slots in `SolverBuffers::scalars`.
pub const N_SCALARS: usize = 8;

impl SolverBuffers {
    /// Allocates the buffers: `slots` partial slots of `groups` entries and a history of
    /// `history_len` entries poisoned with −1 (entries the GPU never wrote stay negative).
    pub fn new<T: Scalar>(
        engine: &Engine,
        groups: u32,
        slots: u32,
        history_len: usize,
    ) -> Result<Self> {
        Self::with_reduction::<T>(engine, groups, slots, history_len, false)
    }

    /// [`Self::new`] for kernels compiled with `compensated` reductions
    /// ([`ShaderConfig::compensated`]): then `partials` holds twice the entries.
    pub fn with_reduction<T: Scalar>(
        engine: &Engine,
        groups: u32,
        slots: u32,
        history_len: usize,
        compensated: bool,
    ) -> Result<Self> {
        let entries = partials_entries(slots, groups, compensated);
        Ok(SolverBuffers {
            state: engine.storage_zeroed::<u32>("state", 4)?,
            partials: engine.storage_zeroed::<[T; 4]>("partials", entries)?,
            scalars: engine.storage_zeroed::<T>("scalars", N_SCALARS)?,
            history: engine.storage_from("history", &vec![-T::one(); history_len])?,
            groups,
            history_len,
            compensated,
        })
    }

    /// The (binding, buffer) pairs 0–3 every solver kernel binds, followed by `params` at 4.
    pub fn common<'a>(&'a self, params: &'a wgpu::Buffer) -> Vec<(u32, &'a wgpu::Buffer)> {
        vec![
            (0, &self.state),
            (1, &self.partials),
            (2, &self.scalars),
            (3, &self.history),
            (4, params),
        ]
    }

    /// A bind group of solver kernel `kernel`: the common bindings 0–4 ([`Self::common`])
    /// and `vecs`; the kernel keeps those it uses.
    pub fn bind(
        &self,
        engine: &Engine,
        kernel: &Kernel,
        params: &wgpu::Buffer,
        vecs: &[(u32, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let mut e = self.common(params);
        e.extend_from_slice(vecs);
        engine.bind_group_at(kernel, &e)
    }

    /// Sets the state to running with `recorded` residuals already in the history, and
    /// tol² (two counted uploads).
    pub fn reset<T: Scalar>(&self, engine: &Engine, recorded: u32, tol2: T) {
        engine.write(&self.state, 0, &[0u32, recorded, 0, 0]);
        engine.write(&self.scalars, 2, &[tol2]);
    }
}

/// The most rows whose vector a kernel compiled with `config` can keep in workgroup memory
/// (`cg_workgroup`'s direction p, [`ShaderConfig::workgroup_vector`]): the adapter's
/// `max_compute_workgroup_storage_size` less what the kernel's other workgroup arrays take
/// (the reduction's scratch of `vec4<Real>`: [`red_scratch_entries`](super::shader::red_scratch_entries),
/// its WG error terms when compensated, the BCSR product's WG partial row sums) and 256 bytes
/// of scalars, in entries of the precision; at most 16384.
///
/// ```
/// use krylov_wgpu::base::Precision;
/// use krylov_wgpu::gpu::{FormatKernel, ShaderConfig};
/// use krylov_wgpu::gpu::kernels::workgroup_vector_cap;
/// let f32_csr = ShaderConfig::new(Precision::F32);
/// // 48 KiB, 256 threads, a workgroup-memory tree: (49152 − 256·16 − 256) / 4.
/// assert_eq!(workgroup_vector_cap(49152, f32_csr), 11200);
/// let f64_bcsr = ShaderConfig { format: FormatKernel::Bcsr { n: 2, bx: 1 }, ..ShaderConfig::new(Precision::F64) };
/// assert_eq!(workgroup_vector_cap(49152, f64_bcsr), (49152 - 256 * 32 - 256 * 8 - 256) / 8);
/// // 1024 threads with subgroup sums: one scratch entry per 4 threads.
/// let f64_wide = ShaderConfig { workgroup_size: 1024, subgroups: true, ..ShaderConfig::new(Precision::F64) };
/// assert_eq!(workgroup_vector_cap(49152, f64_wide), (49152 - 256 * 32 - 256) / 8);
/// ```
pub fn workgroup_vector_cap(storage_bytes: u32, config: ShaderConfig) -> usize {
    let real = match config.precision {
        crate::base::Precision::F32 => 4,
        crate::base::Precision::F64 => 8,
    };
    let wg = config.workgroup_size as usize;
    let mut used = super::shader::red_scratch_entries(config) as usize * 4 * real + 256;
    if config.compensated && config.precision == crate::base::Precision::F32 {
        used += wg * 4 * real;
    }
    if matches!(config.format, super::shader::FormatKernel::Bcsr { .. }) {
        used += wg * real;
    }
    ((storage_bytes as usize).saturating_sub(used) / real).min(16384)
}
