//! The outer half of mixed-precision refinement on the GPU: x, b and A in the outer precision
//! on the device, r = b − Ax and x += s·d computed there ([`GpuOuter`]).
//!
//! * **f64** (SHADER_F64): A in CSR f64 (the storage-format library's CSR row loop),
//!   `refine_residual` and `refine_update` built with Real = f64.
//! * **double-single** (any GPU): every f64 value v is stored as the pair (hi, lo) =
//!   (f32(v), f32(v − hi)), 48 significant bits; `refine_residual_ds` accumulates each row
//!   b_i − Σ a_ij x_j with exact products and double-single sums (`shaders/lib/ds.wgsl`) and
//!   `refine_update_ds` adds s·d in double-single. A, b and x take twice the f32 bytes.

use crate::base::error::Result;
use crate::base::{Format, Precision};
use crate::cpu::ds::Ds;
use crate::cpu::mixed::Outer;
use crate::gpu::kernels::{Params, SolverBuffers, solver_kernel};
use crate::gpu::{Engine, GpuMatrix, Kernel};
use crate::matrix::Csr;
use crate::solvers::driver::sum_component;

/// The outer precision's arrays on the device.
enum Arrays {
    F64 {
        /// A, kept allocated with the bind group that reads it.
        _a: GpuMatrix<f64>,
        hint: wgpu::Buffer,
        scale: wgpu::Buffer,
    },
    DoubleSingle {
        hint: wgpu::Buffer,
        scale: wgpu::Buffer,
    },
}

/// The outer half of refinement on one engine (see the module documentation).
pub struct GpuOuter<'e> {
    engine: &'e Engine,
    n: usize,
    arrays: Arrays,
    x: wgpu::Buffer,
    /// x before the last update (copied on the GPU in the update's batch), for `undo`.
    x_prev: wgpu::Buffer,
    r32: wgpu::Buffer,
    d: wgpu::Buffer,
    bufs: SolverBuffers,
    residual: (Kernel, wgpu::BindGroup),
    update: (Kernel, wgpu::BindGroup),
    /// The hint last set ([`Self::set_hint`]): the double-single norm is of r·hint.
    hint: std::cell::Cell<f64>,
}

/// v as the double-single pair [hi, lo] ([`Ds::from_f64`]).
fn split(v: f64) -> [f32; 2] {
    let d = Ds::from_f64(v);
    [d.hi, d.lo]
}

/// Every value of `v` split ([`split`]), interleaved hi, lo.
fn split_all(v: &[f64]) -> Vec<f32> {
    v.iter().flat_map(|&x| split(x)).collect()
}

impl<'e> GpuOuter<'e> {
    /// Uploads A, b and x0 (or 0) in the outer precision and binds the two kernels.
    pub fn upload(
        engine: &'e Engine,
        a: &Csr<f64>,
        b: &[f64],
        x0: Option<&[f64]>,
        double_single: bool,
    ) -> Result<Self> {
        let n = a.nrows();
        let groups = engine.reduction_groups(n);
        let params = Params {
            n: n as u32,
            groups,
            ..Default::default()
        };
        let params = engine.uniform_from("refine params", &params);
        let r32 = engine.storage_zeroed::<f32>("refine r32", n)?;
        let d = engine.storage_zeroed::<f32>("refine d", n)?;
        if double_single {
            let bufs = SolverBuffers::new::<f32>(engine, groups, 1, 2)?;
            let x = match x0 {
                Some(x0) => engine.storage_from("refine x", &split_all(x0))?,
                None => engine.storage_zeroed::<f32>("refine x", 2 * n)?,
            };
            let x_prev = engine.storage_zeroed::<f32>("refine x before", 2 * n)?;
            let b = engine.storage_from("refine b", &split_all(b))?;
            let rows = engine.storage_from("refine A rows", a.row_ptr())?;
            let cols = engine.storage_from("refine A cols", a.col_idx())?;
            let vals = engine.storage_from("refine A values", &split_all(a.values()))?;
            let hint = engine.storage_zeroed::<f32>("refine hint", 1)?;
            let scale = engine.storage_zeroed::<f32>("refine scale", 2)?;
            let config = engine.shader_config(Precision::F32);
            let rk = solver_kernel::<f32>(engine, "refine_residual_ds", config)?;
            let uk = solver_kernel::<f32>(engine, "refine_update_ds", config)?;
            let rb = engine.bind_group_at(
                &rk,
                &[
                    (1, &bufs.partials),
                    (4, &params),
                    (5, &rows),
                    (6, &cols),
                    (7, &vals),
                    (8, &x),
                    (9, &b),
                    (10, &r32),
                    (11, &hint),
                ],
            );
            let ub = engine.bind_group_at(&uk, &[(4, &params), (5, &x), (6, &d), (7, &scale)]);
            // A, b and their index arrays live in the bind group.
            return Ok(GpuOuter {
                engine,
                n,
                arrays: Arrays::DoubleSingle { hint, scale },
                x,
                x_prev,
                r32,
                d,
                bufs,
                residual: (rk, rb),
                update: (uk, ub),
                hint: std::cell::Cell::new(1.0),
            });
        }
        let bufs = SolverBuffers::new::<f64>(engine, groups, 1, 2)?;
        let gpu_a = GpuMatrix::upload_with(engine, a, Format::Csr, f64::INFINITY)?;
        let x = match x0 {
            Some(x0) => engine.storage_from("refine x", x0)?,
            None => engine.storage_zeroed::<f64>("refine x", n)?,
        };
        let x_prev = engine.storage_zeroed::<f64>("refine x before", n)?;
        let b = engine.storage_from("refine b", b)?;
        let hint = engine.storage_zeroed::<f64>("refine hint", 1)?;
        let scale = engine.storage_zeroed::<f64>("refine scale", 1)?;
        let rk = solver_kernel::<f64>(engine, "refine_residual", gpu_a.shader_config(engine))?;
        let uk = solver_kernel::<f64>(
            engine,
            "refine_update",
            engine.shader_config(Precision::F64),
        )?;
        let mut e = vec![
            (1, &bufs.partials),
            (4, &params),
            (8, &x),
            (9, &b),
            (10, &r32),
            (11, &hint),
        ];
        e.extend(gpu_a.bindings(false));
        let rb = engine.bind_group_at(&rk, &e);
        let ub = engine.bind_group_at(&uk, &[(4, &params), (5, &x), (6, &d), (7, &scale)]);
        Ok(GpuOuter {
            engine,
            n,
            arrays: Arrays::F64 {
                _a: gpu_a,
                hint,
                scale,
            },
            x,
            x_prev,
            r32,
            d,
            bufs,
            residual: (rk, rb),
            update: (uk, ub),
            hint: std::cell::Cell::new(1.0),
        })
    }

    /// Sets the power of two r is scaled by in f32 (`r32 = f32(r·hint)`).
    pub(crate) fn set_hint(&self, hint: f64) {
        self.hint.set(hint);
        match &self.arrays {
            Arrays::F64 { hint: h, .. } => self.engine.write(h, 0, &[hint]),
            Arrays::DoubleSingle { hint: h, .. } => self.engine.write(h, 0, &[hint as f32]),
        }
    }

    /// Sets the factor `refine_update` multiplies d by (x += scale·d).
    pub(crate) fn set_scale(&self, scale: f64) {
        match &self.arrays {
            Arrays::F64 { scale: s, .. } => self.engine.write(s, 0, &[scale]),
            Arrays::DoubleSingle { scale: s, .. } => self.engine.write(s, 0, &split(scale)),
        }
    }

    /// Records the fold of a reliable update of mixed CG into `batch`: x += scale·x32 in the
    /// outer precision, x32 := 0 (copied from `zeros`), and r = b − Ax in the outer precision
    /// with f32(r·hint) in [`Self::r32`] (and the partials of ‖r‖² left for
    /// [`Self::submit_norm`]). Two launches and two copies, no host transfer.
    pub(crate) fn record_fold(
        &self,
        batch: &mut crate::gpu::Batch<'_>,
        x32: &wgpu::Buffer,
        zeros: &wgpu::Buffer,
    ) {
        let bytes = 4 * self.n as u64;
        batch.copy(x32, 0, &self.d, 0, bytes);
        batch.dispatch(&self.update.0, &self.update.1, self.bufs.groups);
        batch.copy(zeros, 0, x32, 0, bytes);
        batch.dispatch(&self.residual.0, &self.residual.1, self.bufs.groups);
    }

    /// ‖b − Ax‖₂ in the outer precision from one residual launch with `hint` (r·hint stays
    /// on the device, in [`Self::r32`]).
    pub(crate) fn residual_norm(&self, hint: f64) -> Result<f64> {
        self.set_hint(hint);
        let mut batch = self.engine.begin("refine residual");
        batch.dispatch(&self.residual.0, &self.residual.1, self.bufs.groups);
        self.submit_norm(batch)
    }

    /// The f32 residual r·hint the last residual launch wrote.
    pub(crate) fn r32(&self) -> &wgpu::Buffer {
        &self.r32
    }

    /// Submits `batch` (ending in a residual launch) and returns ‖r‖₂ in the outer precision
    /// from its partial sums.
    pub(crate) fn submit_norm(&self, batch: crate::gpu::Batch<'_>) -> Result<f64> {
        let g = self.bufs.groups as usize;
        // The double-single kernel squares r·hint in f32 (r itself may underflow there);
        // the f64 kernel squares r.
        Ok(match &self.arrays {
            Arrays::DoubleSingle { .. } => {
                let parts: Vec<f32> = batch.submit_and_read(&self.bufs.partials, 0, 4 * g)?;
                sum_component(&parts, g, 0, 0).max(0.0).sqrt() / self.hint.get()
            }
            Arrays::F64 { .. } => {
                let parts: Vec<f64> = batch.submit_and_read(&self.bufs.partials, 0, 4 * g)?;
                sum_component(&parts, g, 0, 0).max(0.0).sqrt()
            }
        })
    }

    /// x's bytes: n f64, or n (hi, lo) f32 pairs.
    fn x_bytes(&self) -> u64 {
        8 * self.n as u64
    }

    fn double_single(&self) -> bool {
        matches!(self.arrays, Arrays::DoubleSingle { .. })
    }
}

impl Outer for GpuOuter<'_> {
    fn precision(&self) -> &'static str {
        if self.double_single() {
            "double-single"
        } else {
            "f64"
        }
    }

    /// One `refine_residual[_ds]` launch; reads the partials of ‖r‖² and r·hint in f32.
    fn residual(&mut self, hint: f64) -> Result<(f64, Vec<f32>)> {
        let norm = self.residual_norm(hint)?;
        let r32: Vec<f32> = self.engine.read(&self.r32, 0, self.n)?;
        Ok((norm, r32))
    }

    /// Uploads d and `scale`; copies x aside, then one `refine_update[_ds]` launch.
    fn update(&mut self, d: &[f32], scale: f64) -> Result<()> {
        let engine = self.engine;
        engine.write(&self.d, 0, d);
        self.set_scale(scale);
        let mut batch = engine.begin("refine update");
        batch.copy(&self.x, 0, &self.x_prev, 0, self.x_bytes());
        batch.dispatch(&self.update.0, &self.update.1, self.bufs.groups);
        batch.submit()
    }

    /// Copies the x of before the last update back (one GPU copy, one submit).
    fn undo(&mut self) -> Result<()> {
        let mut batch = self.engine.begin("refine undo");
        batch.copy(&self.x_prev, 0, &self.x, 0, self.x_bytes());
        batch.submit()
    }

    fn solution(&mut self) -> Result<Vec<f64>> {
        Ok(if self.double_single() {
            let x: Vec<f32> = self.engine.read(&self.x, 0, 2 * self.n)?;
            x.chunks_exact(2)
                .map(|p| p[0] as f64 + p[1] as f64)
                .collect()
        } else {
            self.engine.read(&self.x, 0, self.n)?
        })
    }
}
