//! Host side of `shaders/blas/spmv.wgsl`: y = A·x for any [`GpuOperator`] (a
//! [`GpuMatrix`](super::GpuMatrix) in any storage format).

use std::marker::PhantomData;

use super::engine::{Engine, Kernel};
use super::operator::GpuOperator;
use super::shader::{ShaderConfig, kernel_source};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;

/// The `spmv` kernel compiled for one matrix's format, reused for any number of products.
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext, GpuMatrix, Spmv};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::Format;
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = GpuMatrix::upload(&engine, &poisson_2d_fd::<f32>(64), Format::Sell)?;
/// let y = Spmv::new(&engine, &a)?.apply(&engine, &a, &vec![1.0; a.ncols])?;
/// assert_eq!(y.len(), a.nrows);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug)]
pub struct Spmv<T> {
    kernel: Kernel,
    /// Workgroups per dispatch at most (the engine's tuning).
    max_groups: u32,
    _t: PhantomData<T>,
}

impl<T: Scalar> Spmv<T> {
    /// Compiles the kernel for `T` and `a`'s format (an error if `T` is f64 and the device
    /// lacks SHADER_F64).
    pub fn new(engine: &Engine, a: &dyn GpuOperator<T>) -> Result<Self> {
        Self::with_config(engine, a, engine.shader_config(T::PRECISION))
    }

    /// Compiles the kernel with an explicit configuration (workgroup size must be the one
    /// `a` was converted for); `config.precision` must be `T`'s.
    pub fn with_config(
        engine: &Engine,
        a: &dyn GpuOperator<T>,
        config: ShaderConfig,
    ) -> Result<Self> {
        if config.precision != T::PRECISION {
            return Err(KrylovError::InvalidOption(format!(
                "spmv<{}> compiled for {}",
                T::PRECISION,
                config.precision
            )));
        }
        let src = kernel_source("spmv").expect("spmv is registered");
        Ok(Spmv {
            kernel: engine.kernel(
                src,
                ShaderConfig {
                    format: a.kernel_format(),
                    ..config
                },
            )?,
            max_groups: engine.tuning().max_groups.max(1),
            _t: PhantomData,
        })
    }

    /// A bind group computing `y = A·x` for these buffers (create once, dispatch many times).
    pub fn bind(
        &self,
        engine: &Engine,
        a: &dyn GpuOperator<T>,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let mut entries = vec![(0, x), (1, y)];
        entries.extend(a.bindings(false));
        engine.bind_group_at(&self.kernel, &entries)
    }

    /// Records one dispatch of y = A·x into `batch`.
    pub fn record(
        &self,
        batch: &mut super::Batch<'_>,
        a: &dyn GpuOperator<T>,
        bind_group: &wgpu::BindGroup,
    ) {
        let groups = a.passes().clamp(1, self.max_groups);
        batch.dispatch(&self.kernel, bind_group, groups);
    }

    /// Uploads `x`, computes A·x and reads the result back (a convenience for tests and the CLI).
    pub fn apply(&self, engine: &Engine, a: &dyn GpuOperator<T>, x: &[T]) -> Result<Vec<T>> {
        if x.len() != a.ncols() {
            return Err(KrylovError::DimensionMismatch {
                what: "x length vs matrix columns",
                expected: a.ncols(),
                found: x.len(),
            });
        }
        let xb = engine.storage_from("x", x)?;
        let yb = engine.storage_zeroed::<T>("y", a.nrows())?;
        self.apply_buffers(engine, a, &xb, &yb)
    }

    /// Computes y = A·x on existing buffers and reads y back.
    pub fn apply_buffers(
        &self,
        engine: &Engine,
        a: &dyn GpuOperator<T>,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
    ) -> Result<Vec<T>> {
        let bg = self.bind(engine, a, x, y);
        let mut batch = engine.begin("spmv");
        self.record(&mut batch, a, &bg);
        batch.submit_and_read(y, 0, a.nrows())
    }
}
