//! Host side of `shaders/spmv_csr.wgsl`: a CSR matrix resident on the GPU and y = A·x.

use std::marker::PhantomData;

use super::engine::{Engine, Kernel};
use super::shader::{ShaderConfig, kernel_source};
use crate::error::{KrylovError, Result};
use crate::matrix::Csr;
use crate::scalar::Scalar;

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SpmvParams {
    n_rows: u32,
    _pad: [u32; 3],
}

/// A CSR matrix uploaded to the GPU (three storage buffers plus its size uniform).
///
/// Arrays larger than the adapter's `max_storage_buffer_binding_size` are refused with
/// [`KrylovError::BufferTooLarge`] rather than split: every kernel sees each array in one binding.
#[derive(Debug)]
pub struct GpuCsr<T> {
    pub nrows: usize,
    pub ncols: usize,
    pub nnz: usize,
    pub row_ptr: wgpu::Buffer,
    pub col_idx: wgpu::Buffer,
    pub values: wgpu::Buffer,
    params: wgpu::Buffer,
    _t: PhantomData<T>,
}

impl<T: Scalar> GpuCsr<T> {
    /// Uploads `a` (four counted uploads: three arrays and the size uniform).
    pub fn upload(engine: &Engine, a: &Csr<T>) -> Result<Self> {
        engine.context().require(T::PRECISION)?;
        let ctx = engine.context();
        ctx.check_binding("CSR column indices", (a.nnz() * 4) as u64)?;
        ctx.check_binding("CSR values", (a.nnz() * std::mem::size_of::<T>()) as u64)?;
        Ok(GpuCsr {
            nrows: a.nrows(),
            ncols: a.ncols(),
            nnz: a.nnz(),
            row_ptr: engine.storage_from("csr.row_ptr", a.row_ptr())?,
            col_idx: engine.storage_from("csr.col_idx", a.col_idx())?,
            values: engine.storage_from("csr.values", a.values())?,
            params: engine.uniform_from(
                "csr.params",
                &SpmvParams {
                    n_rows: a.nrows() as u32,
                    _pad: [0; 3],
                },
            ),
            _t: PhantomData,
        })
    }

    /// Bytes this matrix occupies on the GPU.
    pub fn bytes(&self) -> u64 {
        self.row_ptr.size() + self.col_idx.size() + self.values.size()
    }
}

/// The `spmv_csr` kernel, compiled once and reused for any number of products.
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext, GpuCsr, SpmvCsr};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f32>(64);
/// let y = SpmvCsr::<f32>::new(&engine)?.apply(&engine, &GpuCsr::upload(&engine, &a)?, &vec![1.0; a.ncols()])?;
/// assert_eq!(y.len(), a.nrows());
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug)]
pub struct SpmvCsr<T> {
    kernel: Kernel,
    _t: PhantomData<T>,
}

impl<T: Scalar> SpmvCsr<T> {
    /// Compiles the kernel for `T` (an error if `T` is f64 and the device lacks SHADER_F64).
    pub fn new(engine: &Engine) -> Result<Self> {
        Self::with_config(engine, ShaderConfig::new(T::PRECISION))
    }

    /// Compiles the kernel with an explicit configuration (workgroup size); `config.precision`
    /// must be `T`'s.
    pub fn with_config(engine: &Engine, config: ShaderConfig) -> Result<Self> {
        if config.precision != T::PRECISION {
            return Err(KrylovError::InvalidOption(format!(
                "spmv_csr<{}> compiled for {}",
                T::PRECISION,
                config.precision
            )));
        }
        let src = kernel_source("spmv_csr").expect("spmv_csr is registered");
        Ok(SpmvCsr {
            kernel: engine.kernel(src, config)?,
            _t: PhantomData,
        })
    }

    /// A bind group computing `y = A·x` for these buffers (create once, dispatch many times).
    pub fn bind(
        &self,
        engine: &Engine,
        a: &GpuCsr<T>,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        engine.bind_group(
            &self.kernel,
            &[&a.params, &a.row_ptr, &a.col_idx, &a.values, x, y],
        )
    }

    /// Records one dispatch of y = A·x into `batch`.
    pub fn record(
        &self,
        batch: &mut super::Batch<'_>,
        a: &GpuCsr<T>,
        bind_group: &wgpu::BindGroup,
    ) {
        batch.dispatch(&self.kernel, bind_group, self.kernel.groups_for(a.nrows));
    }

    /// Uploads `x`, computes A·x and reads the result back (a convenience for tests and the CLI).
    pub fn apply(&self, engine: &Engine, a: &GpuCsr<T>, x: &[T]) -> Result<Vec<T>> {
        if x.len() != a.ncols {
            return Err(KrylovError::DimensionMismatch {
                what: "x length vs matrix columns",
                expected: a.ncols,
                found: x.len(),
            });
        }
        let xb = engine.storage_from("x", x)?;
        let yb = engine.storage_zeroed::<T>("y", a.nrows)?;
        self.apply_buffers(engine, a, &xb, &yb)
    }

    /// Computes y = A·x on existing buffers and reads y back.
    pub fn apply_buffers(
        &self,
        engine: &Engine,
        a: &GpuCsr<T>,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
    ) -> Result<Vec<T>> {
        let bg = self.bind(engine, a, x, y);
        let mut batch = engine.begin("spmv");
        self.record(&mut batch, a, &bg);
        batch.submit_and_read(y, 0, a.nrows)
    }
}
