//! The engine: the only place that records dispatches, submits work, uploads and reads back.
//! Everything it does goes through [`Counters`], so launch and transfer counts are exact.

use std::sync::{Arc, Mutex};

use bytemuck::Pod;
use wgpu::util::DeviceExt;

use super::batch::Batch;
use super::counters::Counters;
use super::device::GpuContext;
pub(super) use super::profiler::{MAX_TIMED, Profiler};
use super::shader::{KernelSource, Piece, ShaderConfig, specialise_with};
use crate::base::error::{KrylovError, Result};

/// A compiled compute pipeline for one kernel in one configuration. Cheap to clone (the
/// pipeline and layout are reference-counted handles).
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: &'static str,
    pub config: ShaderConfig,
    pub(super) pipeline: wgpu::ComputePipeline,
    pub(super) layout: wgpu::BindGroupLayout,
    /// Bindings of group 0 the entry point uses (the automatic layout holds only these).
    pub(super) bindings: Vec<u32>,
    /// Global reductions one launch starts ([`REDUCTIONS`](super::shader::REDUCTIONS)),
    /// counted by every dispatch.
    pub(super) reductions: u32,
}

impl Kernel {
    /// Global reductions one launch of this kernel starts (what a dispatch adds to
    /// [`WorkCounts::reductions`](crate::base::WorkCounts::reductions)).
    pub fn reductions(&self) -> u32 {
        self.reductions
    }

    /// The same kernel for launches in a mode that starts no reduction (an empty range of
    /// inner products, a flag that skips its first stage): the one exception to the table
    /// [`REDUCTIONS`](super::shader::REDUCTIONS), named at the call site.
    pub fn without_reduction(&self) -> Kernel {
        self.with_reductions(0)
    }

    /// The same kernel for launches that run `n` iterations of what the table counts once
    /// (`cg_cooperative`: one global reduction per iteration, several per launch).
    pub fn with_reductions(&self, n: u32) -> Kernel {
        Kernel {
            reductions: n,
            ..self.clone()
        }
    }
}

/// The group-0 bindings that entry point `main` of `wgsl` uses, from naga's analysis.
fn used_bindings(wgsl: &str, name: &str) -> Result<Vec<u32>> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| {
        KrylovError::Gpu(format!("kernel `{name}` does not parse: {}", e.message()))
    })?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::empty(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| {
        KrylovError::Gpu(format!(
            "kernel `{name}` does not validate: {}",
            e.as_inner()
        ))
    })?;
    let ep = module
        .entry_points
        .iter()
        .position(|e| e.name == "main")
        .ok_or_else(|| KrylovError::Gpu(format!("kernel `{name}` has no entry point `main`")))?;
    let uses = info.get_entry_point(ep);
    let mut bindings: Vec<u32> = module
        .global_variables
        .iter()
        .filter(|(h, _)| !uses[*h].is_empty())
        .filter_map(|(_, g)| {
            g.binding
                .as_ref()
                .filter(|b| b.group == 0)
                .map(|b| b.binding)
        })
        .collect();
    bindings.sort_unstable();
    Ok(bindings)
}

impl Kernel {
    /// The workgroup count covering `n` items with one thread each.
    pub fn groups_for(&self, n: usize) -> u32 {
        n.div_ceil(self.config.workgroup_size as usize).max(1) as u32
    }
}

/// Runs kernels on a [`GpuContext`] and counts every operation.
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let buf = engine.storage_from("x", &[1.0f32, 2.0, 3.0])?;
/// assert_eq!(engine.read::<f32>(&buf, 0, 3)?, vec![1.0, 2.0, 3.0]);
/// assert_eq!(engine.counters().snapshot().readbacks, 1);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub struct Engine {
    pub(super) ctx: Arc<GpuContext>,
    pub(super) counters: Arc<Counters>,
    pub(super) staging: Mutex<Vec<wgpu::Buffer>>,
    pub(super) tuning: Tuning,
    pub(super) profiler: Option<Profiler>,
    /// Kernels compiled so far, by name and configuration: a solve after the first reuses
    /// them instead of paying shader translation and driver compilation again.
    pub(super) kernels: Mutex<std::collections::HashMap<(&'static str, ShaderConfig), Kernel>>,
    /// The opaque zero of double-single kernels (`ds_guard` of `shaders/lib/ds.wgsl`), bound
    /// by [`Engine::bind_group_at`] to every kernel that uses it; made on first use.
    pub(super) ds_guard: std::sync::OnceLock<wgpu::Buffer>,
    /// Host time inside `CommandEncoder::finish` and `Queue::submit`, in nanoseconds.
    pub(super) queue_nanos: std::sync::atomic::AtomicU64,
    /// Workgroups found resident at once per cooperative kernel and configuration
    /// ([`Engine::resident_groups`], `gpu/residency.rs`).
    pub(super) resident: Mutex<std::collections::HashMap<(&'static str, ShaderConfig), u32>>,
}

pub use super::tuning::{SPIN_WAIT_LIMIT, Tuning};

/// Bytes of the read-back buffer an engine makes at creation (partial sums and cycle buffers
/// fit; larger reads make their own).
const FIRST_STAGING_BYTES: u64 = 64 * 1024;

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("ctx", &self.ctx).finish()
    }
}

impl Engine {
    /// An engine with fresh counters.
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        Self::with_tuning(ctx, Tuning::default())
    }

    /// An engine with explicit launch configuration.
    ///
    /// Its staging pool starts with one read-back buffer of 64 KiB: the
    /// first host-readable buffer of a device makes the driver set up a block of
    /// host-visible memory, which took 18–29 ms on an H200 (BENCHMARKS, "a short solve's
    /// fixed cost") — paid here, with the device's set-up, instead of inside the first
    /// solve's timed loop at its first read.
    pub fn with_tuning(ctx: Arc<GpuContext>, tuning: Tuning) -> Self {
        let profiler = (tuning.profile && ctx.has_timestamps()).then(|| Profiler::new(&ctx));
        let engine = Engine {
            ctx,
            counters: Arc::new(Counters::default()),
            staging: Mutex::new(Vec::new()),
            tuning,
            profiler,
            kernels: Mutex::new(Default::default()),
            ds_guard: Default::default(),
            queue_nanos: Default::default(),
            resident: Mutex::new(Default::default()),
        };
        engine.give_staging(engine.take_staging(FIRST_STAGING_BYTES));
        engine
    }

    /// Host seconds this engine has spent in wgpu's `CommandEncoder::finish` and
    /// `Queue::submit` (validation, resource tracking, the driver's submit) — of the host's
    /// submitting time, the part that is not recording. A clock read per submit.
    pub fn queue_submit_seconds(&self) -> f64 {
        self.queue_nanos.load(std::sync::atomic::Ordering::Relaxed) as f64 * 1e-9
    }

    /// Number of distinct kernels compiled by this engine so far.
    pub fn compiled_kernels(&self) -> usize {
        self.kernels.lock().expect("kernel cache").len()
    }

    /// Whether dispatches are being timed (profiling asked for and timestamps available).
    pub fn profiling(&self) -> bool {
        self.profiler.is_some()
    }

    /// GPU time per kernel so far: (name, calls, seconds), sorted by name. Empty unless
    /// profiling.
    pub fn kernel_times(&self) -> Vec<crate::base::KernelTime> {
        let Some(p) = &self.profiler else {
            return Vec::new();
        };
        let totals = p.totals.lock().expect("profiler totals");
        totals
            .iter()
            .map(|(name, (calls, seconds))| crate::base::KernelTime {
                name: name.to_string(),
                calls: *calls,
                seconds: *seconds,
            })
            .collect()
    }

    /// The launch configuration.
    pub fn tuning(&self) -> Tuning {
        self.tuning
    }

    /// Whether read-backs are waited for by polling first ([`Tuning::spin_wait`]; by default
    /// on hardware adapters).
    pub fn spins(&self) -> bool {
        self.tuning.spin_wait.unwrap_or(!self.ctx.summary.software)
    }

    /// The kernel configuration for `precision` under this engine's tuning.
    pub fn shader_config(&self, precision: crate::base::Precision) -> ShaderConfig {
        ShaderConfig {
            precision,
            workgroup_size: self.tuning.workgroup_size,
            // (Subgroups of fewer than 4 lanes would overflow the reduction's scratch, which
            // has one entry per 4 threads: `shader::red_scratch_entries`.)
            subgroups: self.tuning.subgroups.unwrap_or(self.ctx.has_subgroups())
                && self.ctx.summary.subgroup_min_size >= 4,
            format: Default::default(),
            compensated: false,
            pool_parts: 1,
            workgroup_vector: 0,
        }
    }

    /// Workgroups of a reducing kernel over `n` entries: enough for one entry per thread,
    /// at most `max_groups`.
    pub fn reduction_groups(&self, n: usize) -> u32 {
        (n.div_ceil(self.tuning.workgroup_size as usize) as u32)
            .clamp(1, self.tuning.max_groups.max(1))
    }

    /// Workgroups of a solver whose kernels fuse a product with an operator of `passes` row
    /// chunks ([`GpuOperator::passes`](super::GpuOperator::passes)) with their reductions:
    /// [`reduction_groups`](Self::reduction_groups)`(n)`, or one per chunk where the chunks
    /// outnumber them (BCSR on a small matrix has n·Bx·N / WG block-row slots), at most
    /// [`Tuning::max_chunk_groups`] (and `max_groups`). Otherwise each of ⌈n / WG⌉ workgroups would run its chunks one after
    /// another — latency-bound chains — while the rest of the GPU idles.
    ///
    /// ```no_run
    /// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
    /// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
    /// let n = 2000; // ⌈2000 / 256⌉ = 8 workgroups (256 threads each) for the vector kernels
    /// assert_eq!(engine.fused_groups(n, 8), engine.reduction_groups(n));
    /// assert_eq!(engine.fused_groups(n, 500), 500); // under the cap of 512
    /// assert_eq!(engine.fused_groups(n, 900), engine.tuning().max_chunk_groups);
    /// # Ok::<(), krylov_wgpu::KrylovError>(())
    /// ```
    pub fn fused_groups(&self, n: usize, passes: u32) -> u32 {
        self.reduction_groups(n).max(
            passes.min(
                self.tuning
                    .max_chunk_groups
                    .min(self.tuning.max_groups)
                    .max(1),
            ),
        )
    }

    /// The device this engine runs on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// The most workgroups a launch puts in one grid dimension: the adapter's limit, or
    /// [`Tuning::max_groups_per_dimension`] below it. Larger launches go out as 2D grids
    /// (`Batch::dispatch`).
    ///
    /// ```no_run
    /// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext, Tuning};
    /// let ctx = GpuContext::new(&DeviceRequest::from_env())?;
    /// let tuning = Tuning { max_groups_per_dimension: Some(4), ..Tuning::default() };
    /// assert_eq!(Engine::with_tuning(ctx, tuning).groups_per_dimension(), 4);
    /// # Ok::<(), krylov_wgpu::KrylovError>(())
    /// ```
    pub fn groups_per_dimension(&self) -> u32 {
        let hard = self.ctx.limits.max_compute_workgroups_per_dimension.max(1);
        self.tuning
            .max_groups_per_dimension
            .map_or(hard, |t| t.clamp(1, hard))
    }

    /// The largest array one storage binding holds: the adapter's binding and buffer limits,
    /// or [`Tuning::max_binding_bytes`] below them.
    pub fn binding_limit(&self) -> u64 {
        let l = &self.ctx.limits;
        let hard = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
        self.tuning.max_binding_bytes.map_or(hard, |t| t.min(hard))
    }

    /// The counters of everything this engine did.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Compiles `source` for `config` into a pipeline (auto layout, entry point `main`), or
    /// returns the one this engine compiled before.
    /// Shader or pipeline validation errors come back as [`KrylovError::Gpu`] naming the kernel.
    pub fn kernel(&self, source: &KernelSource, config: ShaderConfig) -> Result<Kernel> {
        // Kernels without a matrix compile the same for every format: one cache entry.
        let config = if source.matrices == 0 {
            ShaderConfig {
                format: Default::default(),
                ..config
            }
        } else {
            config
        };
        if let Some(k) = self
            .kernels
            .lock()
            .expect("kernel cache")
            .get(&(source.name, config))
        {
            return Ok(k.clone());
        }
        let kernel = self.compile(source, config)?;
        self.kernels
            .lock()
            .expect("kernel cache")
            .insert((source.name, config), kernel.clone());
        Ok(kernel)
    }

    fn compile(&self, source: &KernelSource, config: ShaderConfig) -> Result<Kernel> {
        self.ctx.require(config.precision)?;
        if config.subgroups && !self.ctx.has_subgroups() {
            return Err(KrylovError::MissingFeature {
                adapter: self.ctx.summary.name.clone(),
                feature: "SUBGROUP",
            });
        }
        let device = &self.ctx.device;
        // Double-single kernels: the adapter's exact product (probed once per adapter).
        let two_prod = if source.pieces.contains(&Piece::Ds) {
            self.two_prod()
        } else {
            crate::base::scalar::TwoProd::Split
        };
        let overridden = super::shader_dir::shader_override(source)?;
        let source = overridden.as_ref().unwrap_or(source);
        let wgsl = specialise_with(source, config, two_prod);
        let bindings = used_bindings(&wgsl, source.name)?;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let desc = wgpu::ShaderModuleDescriptor {
            label: Some(source.name),
            source: wgpu::ShaderSource::Wgsl(wgsl.into()),
        };
        let module = if self.tuning.unchecked {
            // SAFETY: see `Tuning::unchecked` — the kernels never index out of bounds for
            // inputs that passed `Csr::new`, and every vector is allocated with the length
            // the kernel's `params.n` guard assumes.
            unsafe {
                device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
            }
        } else {
            device.create_shader_module(desc)
        };
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(source.name),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(KrylovError::Gpu(format!(
                "kernel `{}` ({}) failed to compile: {}",
                source.name,
                config.precision,
                super::one_line(&e.to_string())
            )));
        }
        let layout = pipeline.get_bind_group_layout(0);
        Ok(Kernel {
            name: source.name,
            config,
            pipeline,
            layout,
            bindings,
            reductions: super::shader::reductions_started(source.name),
        })
    }

    /// A bind group binding `buffers[i]` (whole) at binding `i` of group 0.
    pub fn bind_group(&self, kernel: &Kernel, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        let pairs: Vec<(u32, &wgpu::Buffer)> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| (i as u32, *b))
            .collect();
        self.bind_group_at(kernel, &pairs)
    }

    /// A bind group binding each `(binding, buffer)` pair (whole buffers) of group 0.
    /// Pairs for bindings the kernel does not use are skipped, so callers can pass the
    /// bindings every solver kernel shares. A double-single kernel also gets its opaque zero
    /// (binding [`super::ds::GUARD_BINDING`]) without asking.
    pub fn bind_group_at(
        &self,
        kernel: &Kernel,
        buffers: &[(u32, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let guard = super::ds::GUARD_BINDING;
        let ds = (kernel.bindings.contains(&guard) && !buffers.iter().any(|(i, _)| *i == guard))
            .then(|| (guard, self.ds_guard()));
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .chain(ds.as_ref())
            .filter(|(i, _)| kernel.bindings.contains(i))
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: *i,
                resource: b.as_entire_binding(),
            })
            .collect();
        self.ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(kernel.name),
                layout: &kernel.layout,
                entries: &entries,
            })
    }

    const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
        .union(wgpu::BufferUsages::COPY_SRC)
        .union(wgpu::BufferUsages::COPY_DST);

    /// A storage buffer initialised from `data` (one counted upload). Empty data gets a
    /// 16-byte buffer so that bindings stay valid.
    pub fn storage_from<T: Pod>(&self, label: &str, data: &[T]) -> Result<wgpu::Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        self.ctx.check_binding(label, bytes.len() as u64)?;
        let contents: &[u8] = if bytes.is_empty() { &[0u8; 16] } else { bytes };
        let buf = self
            .ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: Self::STORAGE,
            });
        self.counters.upload(bytes.len() as u64);
        Ok(buf)
    }

    /// A storage buffer of consecutive segments (`segments[i]` elements of `T` each) that the
    /// host writes in parallel: see [`Self::write_segments`]. One counted upload.
    pub fn storage_segments<T: Pod + Send + Sync>(
        &self,
        label: &str,
        segments: &[usize],
        fill: impl Fn(usize, &mut SegmentWriter<'_, T>) + Sync,
    ) -> Result<wgpu::Buffer> {
        let len: usize = segments.iter().sum();
        let buf = self.storage_zeroed::<T>(label, len)?;
        self.write_segments(&buf, 0, segments, fill)?;
        Ok(buf)
    }

    /// Writes consecutive segments (`segments[i]` elements of `T` each) into `buffer` from
    /// element `offset`, straight into the queue's staging memory, the segments in parallel on
    /// every core: `fill(i, w)` writes segment `i` front to back through
    /// [`SegmentWriter::put`]. One counted upload and no intermediate copy — for large packed
    /// inputs (the batched solver's matrices).
    ///
    /// # Panics
    /// If `fill` does not write exactly its segment's length.
    pub fn write_segments<T: Pod + Send + Sync>(
        &self,
        buffer: &wgpu::Buffer,
        offset: usize,
        segments: &[usize],
        fill: impl Fn(usize, &mut SegmentWriter<'_, T>) + Sync,
    ) -> Result<()> {
        use rayon::prelude::*;
        let size_t = std::mem::size_of::<T>();
        let bytes = segments.iter().sum::<usize>() * size_t;
        let Some(size) = wgpu::BufferSize::new(bytes as u64) else {
            return Ok(());
        };
        let mut view = self
            .ctx
            .queue
            .write_buffer_with(buffer, (offset * size_t) as u64, size)
            .ok_or_else(|| KrylovError::Gpu("write_buffer_with refused the write".into()))?;
        {
            let mut rest = view.slice(..);
            let mut parts = Vec::with_capacity(segments.len());
            for &n in segments {
                let (head, tail) = rest.split_at(n * size_t);
                parts.push(SendSegment(head));
                rest = tail;
            }
            parts.into_par_iter().enumerate().for_each(|(i, out)| {
                let mut w = SegmentWriter {
                    out: out.0,
                    at: 0,
                    _t: std::marker::PhantomData,
                };
                fill(i, &mut w);
                assert_eq!(w.at, segments[i] * size_t, "segment {i} not filled");
            });
        }
        drop(view);
        self.counters.upload(bytes as u64);
        self.ctx.take_error()
    }

    /// A zero-initialised storage buffer of `len` elements of `T` (no transfer).
    pub fn storage_zeroed<T: Pod>(&self, label: &str, len: usize) -> Result<wgpu::Buffer> {
        let bytes = (len * std::mem::size_of::<T>()) as u64;
        self.ctx.check_binding(label, bytes)?;
        Ok(self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(16).next_multiple_of(4),
            usage: Self::STORAGE,
            mapped_at_creation: false,
        }))
    }

    /// A uniform buffer holding `value` (one counted upload).
    pub fn uniform_from<T: Pod>(&self, label: &str, value: &T) -> wgpu::Buffer {
        let bytes = bytemuck::bytes_of(value);
        self.counters.upload(bytes.len() as u64);
        self.ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            })
    }

    /// Writes `data` at element `offset` of `buffer` (one counted upload).
    pub fn write<T: Pod>(&self, buffer: &wgpu::Buffer, offset: usize, data: &[T]) {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        self.counters.upload(bytes.len() as u64);
        self.ctx
            .queue
            .write_buffer(buffer, (offset * std::mem::size_of::<T>()) as u64, bytes);
    }

    /// Starts recording a batch of dispatches that will share one compute pass.
    pub fn begin(&self, label: &str) -> Batch<'_> {
        let encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        Batch::new(self, encoder)
    }

    /// Reads `count` elements of `T` from element `offset` of `buffer` (one submit, one
    /// counted readback).
    pub fn read<T: Pod>(
        &self,
        buffer: &wgpu::Buffer,
        offset: usize,
        count: usize,
    ) -> Result<Vec<T>> {
        self.begin("read").submit_and_read(buffer, offset, count)
    }

    pub(super) fn take_staging(&self, bytes: u64) -> wgpu::Buffer {
        let mut pool = self.staging.lock().expect("staging pool");
        if let Some(i) = pool.iter().position(|b| b.size() >= bytes) {
            return pool.swap_remove(i);
        }
        self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("staging"),
            size: bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT).max(16),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    pub(super) fn give_staging(&self, buf: wgpu::Buffer) {
        let mut pool = self.staging.lock().expect("staging pool");
        if pool.len() < 8 {
            pool.push(buf);
        }
    }

    pub(super) fn wait(&self) -> Result<()> {
        self.ctx
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| KrylovError::Gpu(format!("poll failed: {e}")))?;
        self.ctx.take_error()
    }
}

/// A disjoint piece of a mapped buffer on its way to a worker thread.
struct SendSegment<'a>(wgpu::WriteOnly<'a, [u8]>);

// SAFETY: a `WriteOnly<[u8]>` is an exclusive, write-only view of bytes (wgpu implements
// `Send` for it only for sized contents, not for slices); the pieces `write_segments`
// hands out are disjoint (`split_at`) and live no longer than the staging view they come from.
unsafe impl Send for SendSegment<'_> {}

/// Writes one segment of [`Engine::write_segments`], front to back.
pub struct SegmentWriter<'a, T> {
    out: wgpu::WriteOnly<'a, [u8]>,
    at: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Pod> SegmentWriter<'_, T> {
    /// Appends `data` to the segment.
    pub fn put(&mut self, data: &[T]) {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        self.out
            .slice(self.at..self.at + bytes.len())
            .copy_from_slice(bytes);
        self.at += bytes.len();
    }
}
