//! Double-single arithmetic on the device: which exact product (`two_prod` of
//! `shaders/lib/ds.wgsl`) an adapter gets.
//!
//! WGSL's `fma` may be fused (one rounding: then `fma(a, b, −a·b)` is the exact error of a
//! product, 2 operations) or evaluated as a rounded product and a rounded sum (then it is
//! useless for TwoProd, and Dekker's product of split halves, 15 operations, is the exact
//! one). Whether it is fused is a fact of the adapter and its driver that no API reports, so
//! [`exact_fma`] measures it once per adapter: the kernel `fma_probe` computes
//! fma(a, b, −a·b) on products whose error the host knows, and the fma counts as exact only
//! if every result is that error, bit for bit. [`Engine::two_prod`] is the choice a kernel
//! built on [`Piece::Ds`](super::shader::Piece::Ds) is compiled with; [`Tuning::two_prod`]
//! forces one (tests run both).
//!
//! The probe is the adapter's business, not the solve's: its upload, launch and read use the
//! device directly and are not counted in the engine's [`Counters`](super::Counters).
//!
//! Every double-single kernel also binds `ds_guard` (binding [`GUARD_BINDING`]): a uniform
//! zero that keeps the optimiser from seeing through the error-free transformations (see
//! `shaders/lib/ds.wgsl`). [`Engine::bind_group_at`] adds it to any bind group of a kernel
//! that uses it; like the pipeline, it is made once per engine, uncounted.

use std::collections::HashMap;
use std::sync::Mutex;

use wgpu::util::DeviceExt;

use super::device::GpuContext;
use super::engine::{Engine, Tuning};
use super::shader::{ShaderConfig, kernel_source, specialise};
use crate::base::scalar::{Precision, TwoProd};

/// The binding of `ds_guard` in `shaders/lib/ds.wgsl` (after the matrix bindings 20–29).
pub const GUARD_BINDING: u32 = 30;

/// The guard's contents: four zero words.
fn guard_buffer(device: &wgpu::Device) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("ds_guard"),
        contents: bytemuck::cast_slice(&[0u32; 4]),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

/// The probe's products: (a, b) with a nonzero rounding error, in f32's normal range.
pub fn probe_pairs() -> Vec<[f32; 2]> {
    let mut pairs = vec![
        // (1 + 2⁻²³)² = 1 + 2⁻²² + 2⁻⁴⁶: error 2⁻⁴⁶.
        [f32::from_bits(0x3f80_0001), f32::from_bits(0x3f80_0001)],
        [f32::from_bits(0x3fff_ffff), f32::from_bits(0x3fff_ffff)],
        [f32::from_bits(0x3faa_aaab), 3.0],
        [-1.1, 0.3],
        [1e20, 3.3e-10],
    ];
    // A fixed pseudo-random set (xorshift): significands with all 24 bits used.
    let mut s: u32 = 0x9e37_79b9;
    while pairs.len() < 64 {
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            // Exponent in [−20, 20], a full significand, either sign.
            f32::from_bits((s & 0x807f_ffff) | ((107 + (s >> 8) % 41) << 23))
        };
        let (a, b) = (next(), next());
        if exact_error(a, b) != 0.0 {
            pairs.push([a, b]);
        }
    }
    pairs
}

/// The exact rounding error of the f32 product a·b (computed in f64, where a·b is exact).
pub fn exact_error(a: f32, b: f32) -> f32 {
    (a as f64 * b as f64 - (a * b) as f64) as f32
}

/// Whether `fma` on `ctx` rounds once (measured by the `fma_probe` kernel on the first call
/// for an adapter, then remembered for the process). A probe that fails to run counts as
/// "not exact" (Dekker's product is exact everywhere).
pub fn exact_fma(ctx: &GpuContext) -> bool {
    static SEEN: Mutex<Option<HashMap<wgpu::AdapterInfo, bool>>> = Mutex::new(None);
    let info = ctx.adapter.get_info();
    if let Some(&known) = SEEN
        .lock()
        .expect("fma probe cache")
        .get_or_insert_with(HashMap::new)
        .get(&info)
    {
        return known;
    }
    let exact = probe(ctx).unwrap_or(false);
    SEEN.lock()
        .expect("fma probe cache")
        .get_or_insert_with(HashMap::new)
        .insert(info, exact);
    exact
}

/// Runs `fma_probe` on the pairs of [`probe_pairs`]: `Some(true)` if every result is the
/// exact error, `None` if the probe could not run.
fn probe(ctx: &GpuContext) -> Option<bool> {
    let pairs = probe_pairs();
    let results = run_probe(ctx, &pairs)?;
    Some(
        pairs
            .iter()
            .zip(&results)
            .all(|(&[a, b], &e)| e.to_bits() == exact_error(a, b).to_bits()),
    )
}

/// fma(a, b, −a·b) on the device for each pair (the raw probe; tests print it).
pub fn run_probe(ctx: &GpuContext, pairs: &[[f32; 2]]) -> Option<Vec<f32>> {
    let source = kernel_source("fma_probe").expect("fma_probe is registered");
    let config = ShaderConfig {
        workgroup_size: 64,
        ..ShaderConfig::new(Precision::F32)
    };
    let guard = guard_buffer(&ctx.device);
    let device = &ctx.device;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("fma_probe"),
        source: wgpu::ShaderSource::Wgsl(specialise(source, config).into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("fma_probe"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bytes = (pairs.len() * 4) as u64;
    let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("fma_probe in"),
        contents: bytemuck::cast_slice(pairs),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("fma_probe out"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("fma_probe read"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("fma_probe"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: output.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: GUARD_BINDING,
                resource: guard.as_entire_binding(),
            },
        ],
    });
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups((pairs.len() as u32).div_ceil(64), 1, 1);
    }
    enc.copy_buffer_to_buffer(&output, 0, &staging, 0, bytes);
    ctx.queue.submit([enc.finish()]);
    if pollster::block_on(scope.pop()).is_some() {
        return None;
    }
    let slice = staging.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely()).ok()?;
    rx.recv().ok()?.ok()?;
    let out = bytemuck::pod_collect_to_vec(&slice.get_mapped_range().ok()?[..]);
    staging.unmap();
    Some(out)
}

impl Engine {
    /// The `ds_guard` buffer of this engine's device.
    pub(super) fn ds_guard(&self) -> &wgpu::Buffer {
        self.ds_guard.get_or_init(|| guard_buffer(&self.ctx.device))
    }

    /// The exact product double-single kernels are compiled with: [`Tuning::two_prod`] when
    /// set, otherwise [`TwoProd::Fma`] where the adapter's `fma` is exact ([`exact_fma`]).
    pub fn two_prod(&self) -> TwoProd {
        self.tuning().two_prod.unwrap_or_else(|| {
            if exact_fma(self.context()) {
                TwoProd::Fma
            } else {
                TwoProd::Split
            }
        })
    }
}

/// `KRYLOV_TWO_PROD=fma|split` for [`Tuning::from_env`].
pub(super) fn two_prod_from_env(t: &mut Tuning) {
    match std::env::var("KRYLOV_TWO_PROD").ok().as_deref() {
        Some("fma") => t.two_prod = Some(TwoProd::Fma),
        Some("split") => t.two_prod = Some(TwoProd::Split),
        _ => {}
    }
}

/// ‖b − A·x‖² of a system on the device, in double-single: the kernel `true_residual_ds`
/// (every product exact, rows, residuals and squares summed in double-single through the
/// row loop of `a`'s storage format with `shaders/lib/ds_rows.wgsl`) and the sum of its
/// per-workgroup (hi, lo) pairs in f64 on the host. x and b are only read, and the partial
/// sums go to a buffer of its own: nothing a solver keeps is touched. One evaluation is one
/// dispatch, one submit and one readback of 16 bytes per workgroup (at most
/// [`Tuning::max_groups`]), never a download of x.
///
/// For f32 systems (`T = f32`); an f64 system compiles, but its values are rounded to f32.
///
/// Accuracy, with u = 2⁻²⁴ and k the longest row: each row's (A·x)ᵢ is within
/// (k + 1)(3u² + 13u³)·Σⱼ|aᵢⱼxⱼ| of its exact value (exact products, one Ds addition each),
/// rᵢ = bᵢ − (A·x)ᵢ adds 2u²|rᵢ|, rᵢ² 7u², and the sums of the squares (positive terms) at
/// most (n + log₂ WG)·3u² relatively: so ‖r‖ is within about
/// (k + 1)·3.1u²·‖|A||x|‖₂ + 4u²·‖r‖₂ + 1.5(n + 8)u²‖r‖₂ of the exact residual of the f32
/// data — about 2⁻⁴⁵·k relative to ‖|A||x|‖, where the f32 SpMV's own rounding is 2⁻²⁴·k.
#[derive(Debug)]
pub struct TrueResidualDs {
    kernel: super::Kernel,
    bind_group: wgpu::BindGroup,
    partials: wgpu::Buffer,
    groups: u32,
}

impl TrueResidualDs {
    /// Compiles `true_residual_ds` for `a`'s format and binds it to `x` and `b` (one counted
    /// upload: the launch parameters).
    pub fn new<T: crate::base::scalar::Scalar>(
        engine: &Engine,
        a: &dyn super::GpuOperator<T>,
        x: &wgpu::Buffer,
        b: &wgpu::Buffer,
    ) -> crate::base::error::Result<Self> {
        Self::at(engine, a, (x, 0), (b, 0))
    }

    /// [`Self::new`] for x and b stored from an element offset of their buffers (GMRES's
    /// pool vectors): `(buffer, offset)` each.
    pub fn at<T: crate::base::scalar::Scalar>(
        engine: &Engine,
        a: &dyn super::GpuOperator<T>,
        (x, x_at): (&wgpu::Buffer, usize),
        (b, b_at): (&wgpu::Buffer, usize),
    ) -> crate::base::error::Result<Self> {
        let kernel = super::kernels::solver_kernel::<T>(
            engine,
            "true_residual_ds",
            super::operator::operator_config(engine, a),
        )?;
        let groups = a.passes().clamp(1, engine.tuning().max_groups.max(1));
        let params = engine.uniform_from(
            "true_residual_ds params",
            &super::kernels::Params {
                n: a.nrows() as u32,
                groups,
                num: x_at as u32,
                den: b_at as u32,
                ..Default::default()
            },
        );
        let partials =
            engine.storage_zeroed::<[T; 4]>("true_residual_ds partials", groups as usize)?;
        let mut entries = vec![(1, &partials), (4, &params), (8, x), (9, b)];
        entries.extend(a.bindings(false));
        let bind_group = engine.bind_group_at(&kernel, &entries);
        Ok(TrueResidualDs {
            kernel,
            bind_group,
            partials,
            groups,
        })
    }

    /// Records the launch into `batch`.
    pub fn record(&self, batch: &mut super::Batch<'_>) {
        batch.dispatch(&self.kernel, &self.bind_group, self.groups);
    }

    /// ‖b − A·x‖² for the current x: one launch, one submit, one readback of the partials.
    pub fn norm2<T: crate::base::scalar::Scalar>(
        &self,
        engine: &Engine,
    ) -> crate::base::error::Result<f64> {
        let mut batch = engine.begin("true residual (double-single)");
        self.record(&mut batch);
        let parts: Vec<T> = batch.submit_and_read(&self.partials, 0, 4 * self.groups as usize)?;
        Ok(parts
            .chunks_exact(4)
            .map(|p| p[0].as_f64() + p[1].as_f64())
            .sum())
    }
}
