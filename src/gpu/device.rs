//! Instance and adapter selection, device creation, and the report of what was obtained.

use std::sync::{Arc, Mutex};

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Precision;

/// Facts about one adapter, as `krylov info` prints them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AdapterSummary {
    /// Position in the ranked list (what `--adapter N` selects).
    pub index: usize,
    pub name: String,
    pub backend: String,
    pub device_type: String,
    /// A software rasteriser (lavapipe/llvmpipe, WARP, SwiftShader): `--device auto` skips it.
    pub software: bool,
    pub driver: String,
    pub shader_f64: bool,
    pub subgroup: bool,
    pub timestamp_query: bool,
    pub subgroup_min_size: u32,
    pub subgroup_max_size: u32,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroup_storage_size: u32,
    pub max_storage_buffers_per_shader_stage: u32,
}

impl AdapterSummary {
    /// An adapter described by hand, for planning without the hardware (the device-choice
    /// tests, the app's tests): `device_type` as wgpu names it (`DiscreteGpu`,
    /// `IntegratedGpu`, `Cpu`, …; `Cpu` counts as software), subgroups of 32 and timestamps
    /// available, the limits of a typical discrete GPU.
    ///
    /// ```
    /// use krylov_wgpu::gpu::AdapterSummary;
    /// let a = AdapterSummary::described("llvmpipe", "Vulkan", "Cpu", true);
    /// assert!(a.software && a.shader_f64);
    /// ```
    pub fn described(name: &str, backend: &str, device_type: &str, shader_f64: bool) -> Self {
        AdapterSummary {
            index: 0,
            name: name.into(),
            backend: backend.into(),
            device_type: device_type.into(),
            software: device_type == "Cpu",
            driver: String::new(),
            shader_f64,
            subgroup: true,
            timestamp_query: true,
            subgroup_min_size: 32,
            subgroup_max_size: 32,
            max_storage_buffer_binding_size: 1 << 31,
            max_buffer_size: 1 << 32,
            max_compute_workgroups_per_dimension: 65535,
            max_compute_invocations_per_workgroup: 1024,
            max_compute_workgroup_storage_size: 49152,
            max_storage_buffers_per_shader_stage: 32,
        }
    }

    fn of(index: usize, adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        let software = is_software(&info);
        let f = adapter.features();
        let l = adapter.limits();
        AdapterSummary {
            index,
            name: info.name,
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            software,
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
            shader_f64: f.contains(wgpu::Features::SHADER_F64),
            subgroup: f.contains(wgpu::Features::SUBGROUP),
            timestamp_query: f.contains(wgpu::Features::TIMESTAMP_QUERY),
            subgroup_min_size: info.subgroup_min_size,
            subgroup_max_size: info.subgroup_max_size,
            max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
            max_buffer_size: l.max_buffer_size,
            max_compute_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
            max_compute_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
            max_compute_workgroup_storage_size: l.max_compute_workgroup_storage_size,
            max_storage_buffers_per_shader_stage: l.max_storage_buffers_per_shader_stage,
        }
    }
}

/// Which adapter to use: by index in the ranked list or by a case-insensitive name substring.
/// `None` takes the best ranked one; the `KRYLOV_ADAPTER` environment variable supplies
/// a default.
#[derive(Debug, Clone, Default)]
pub struct DeviceRequest {
    pub adapter: Option<String>,
}

impl DeviceRequest {
    /// A request honouring `KRYLOV_ADAPTER` when set.
    pub fn from_env() -> Self {
        DeviceRequest {
            adapter: std::env::var("KRYLOV_ADAPTER")
                .ok()
                .filter(|s| !s.trim().is_empty()),
        }
    }
}

/// Whether an adapter is a software rasteriser running on the CPU. wgpu reports lavapipe,
/// llvmpipe (GL) and WARP as `DeviceType::Cpu`; the names catch drivers that report
/// something else.
pub fn is_software(info: &wgpu::AdapterInfo) -> bool {
    const SOFTWARE: [&str; 6] = [
        "llvmpipe",
        "lavapipe",
        "softpipe",
        "swiftshader",
        "basic render driver",
        "warp",
    ];
    let name = info.name.to_lowercase();
    let driver = info.driver.to_lowercase();
    info.device_type == wgpu::DeviceType::Cpu
        || SOFTWARE
            .iter()
            .any(|s| name.contains(s) || driver.contains(s))
}

/// Sort key: Vulkan/Metal/DX12 before GL, hardware before software, then discrete,
/// integrated, virtual, CPU.
fn rank(info: &wgpu::AdapterInfo) -> (u8, bool, u8) {
    use wgpu::{Backend, DeviceType};
    let backend = match info.backend {
        Backend::Vulkan | Backend::Metal | Backend::Dx12 => 0,
        Backend::Gl => 1,
        _ => 2,
    };
    let kind = match info.device_type {
        DeviceType::DiscreteGpu => 0,
        DeviceType::IntegratedGpu => 1,
        DeviceType::VirtualGpu => 2,
        DeviceType::Cpu => 3,
        DeviceType::Other => 4,
    };
    (backend, is_software(info), kind)
}

fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    // `WGPU_BACKEND` narrows the choice; otherwise we ask for `backends`.
    if std::env::var_os("WGPU_BACKEND").is_none() {
        desc.backends = backends;
    }
    wgpu::Instance::new(desc)
}

/// Every adapter of `backends`, ranked (see [`rank`]). The primary backends (Vulkan, Metal,
/// DX12) and GL get instances of their own: a GL instance must not be created beside a
/// GL-rendered window (EGL refuses a second display connection), so the app asks for
/// [`wgpu::Backends::PRIMARY`] alone.
pub(crate) fn ranked_adapters(backends: wgpu::Backends) -> Vec<wgpu::Adapter> {
    let mut adapters = Vec::new();
    let primary = backends & wgpu::Backends::PRIMARY;
    if !primary.is_empty() {
        adapters.extend(pollster::block_on(
            instance(primary).enumerate_adapters(primary),
        ));
    }
    if backends.contains(wgpu::Backends::GL) {
        let gl = wgpu::Backends::GL;
        adapters.extend(pollster::block_on(instance(gl).enumerate_adapters(gl)));
    }
    adapters.sort_by_key(|a| rank(&a.get_info()));
    adapters
}

/// Every adapter found on every backend, ranked as `--adapter N` counts them.
pub fn list_adapters() -> Vec<AdapterSummary> {
    list_adapters_for(wgpu::Backends::all())
}

/// The adapters of `backends`, ranked as a [`super::DeviceChoice`] with the same backends
/// counts them (the app lists [`wgpu::Backends::PRIMARY`] alone: no GL instance beside its
/// window).
pub fn list_adapters_for(backends: wgpu::Backends) -> Vec<AdapterSummary> {
    summaries(&ranked_adapters(backends))
}

pub(crate) fn summaries(adapters: &[wgpu::Adapter]) -> Vec<AdapterSummary> {
    adapters
        .iter()
        .enumerate()
        .map(|(i, a)| AdapterSummary::of(i, a))
        .collect()
}

/// An open GPU device with the features and limits this library asked for.
///
/// Create one with [`GpuContext::new`] or wrap a device you already have (e.g. eframe's)
/// with [`GpuContext::from_existing`].
pub struct GpuContext {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// What was obtained (features of the *device*, limits of the *device*).
    pub summary: AdapterSummary,
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
    errors: Arc<Mutex<Vec<String>>>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.summary.name)
            .field("backend", &self.summary.backend)
            .finish()
    }
}

/// Features requested when the adapter has them.
pub const WANTED_FEATURES: wgpu::Features = wgpu::Features::SHADER_F64
    .union(wgpu::Features::SUBGROUP)
    .union(wgpu::Features::TIMESTAMP_QUERY)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    .union(wgpu::Features::MEMORY_DECORATION_COHERENT);

impl GpuContext {
    /// Picks an adapter (see [`DeviceRequest`]) and opens a device on it with
    /// SHADER_F64, SUBGROUP and TIMESTAMP_QUERY where available and the adapter's own limits.
    ///
    /// Software adapters count here (this is an explicit request for a GPU, as
    /// `--device gpu` is); [`super::DeviceChoice`] applies the `--device auto` rules.
    /// Returns [`KrylovError::NoAdapter`] when no adapter exists or the selector matches none.
    pub fn new(request: &DeviceRequest) -> Result<Arc<Self>> {
        Self::new_with_features(request, WANTED_FEATURES)
    }

    /// Like [`GpuContext::new`] but requests only the features in `wanted` that the adapter
    /// has (tests use this to open an f64-less device on an f64-capable adapter).
    pub fn new_with_features(request: &DeviceRequest, wanted: wgpu::Features) -> Result<Arc<Self>> {
        let choice = super::DeviceChoice::new(super::DevicePreference::Gpu)
            .adapter(request.adapter.clone())
            .precision(Precision::F32);
        let adapters = ranked_adapters(choice.backends);
        match choice.plan(&summaries(&adapters))? {
            super::DevicePlan::Gpu { index, .. } => Self::open(
                adapters.into_iter().nth(index).expect("planned index"),
                wanted,
            ),
            super::DevicePlan::Cpu { reason } => Err(KrylovError::NoAdapter(format!(": {reason}"))),
        }
    }

    /// Opens a device on `adapter` with the features of `wanted` it has and its own limits.
    pub fn open(adapter: wgpu::Adapter, wanted: wgpu::Features) -> Result<Arc<Self>> {
        Self::open_at(adapter, wanted, 0)
    }

    /// [`GpuContext::open`] for the adapter at `index` of a ranked list (kept in `summary`).
    pub(crate) fn open_at(
        adapter: wgpu::Adapter,
        wanted: wgpu::Features,
        index: usize,
    ) -> Result<Arc<Self>> {
        let required_features = adapter.features() & wanted;
        let required_limits = adapter.limits();
        let name = adapter.get_info().name;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("krylov-wgpu"),
            required_features,
            required_limits,
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| KrylovError::Gpu(format!("request_device on `{name}` failed: {e}")))?;
        let mut ctx = Self::wrap(adapter, device, queue);
        ctx.summary.index = index;
        Ok(Arc::new(ctx))
    }

    /// Wraps a device created elsewhere (for instance by eframe). The library uses only the
    /// features and limits that device was created with.
    pub fn from_existing(
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
    ) -> Arc<Self> {
        Arc::new(Self::wrap(adapter, device, queue))
    }

    fn wrap(adapter: wgpu::Adapter, device: wgpu::Device, queue: wgpu::Queue) -> Self {
        let mut summary = AdapterSummary::of(0, &adapter);
        let features = device.features();
        let limits = device.limits();
        summary.shader_f64 = features.contains(wgpu::Features::SHADER_F64);
        summary.subgroup = features.contains(wgpu::Features::SUBGROUP);
        summary.timestamp_query = features.contains(wgpu::Features::TIMESTAMP_QUERY);
        summary.max_storage_buffer_binding_size = limits.max_storage_buffer_binding_size;
        summary.max_buffer_size = limits.max_buffer_size;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut v) = sink.lock() {
                v.push(super::one_line(&e.to_string()));
            }
        }));
        GpuContext {
            adapter,
            device,
            queue,
            summary,
            features,
            limits,
            errors,
        }
    }

    /// Whether kernels can run in `precision` on this device.
    pub fn supports(&self, precision: Precision) -> bool {
        match precision {
            Precision::F32 => true,
            Precision::F64 => self.features.contains(wgpu::Features::SHADER_F64),
        }
    }

    /// Errors unless `precision` is supported.
    pub fn require(&self, precision: Precision) -> Result<()> {
        if self.supports(precision) {
            Ok(())
        } else {
            Err(KrylovError::MissingFeature {
                adapter: self.summary.name.clone(),
                feature: "SHADER_F64 (f64 kernels)",
            })
        }
    }

    /// Whether subgroup operations are available.
    pub fn has_subgroups(&self) -> bool {
        self.features.contains(wgpu::Features::SUBGROUP)
    }

    /// Whether storage buffers can be declared `@coherent` (cooperative CG's buffers, which
    /// one workgroup writes and another reads inside one launch).
    pub fn has_coherent(&self) -> bool {
        self.features
            .contains(wgpu::Features::MEMORY_DECORATION_COHERENT)
    }

    /// Whether GPU timestamps can be written inside compute passes.
    pub fn has_timestamps(&self) -> bool {
        self.features.contains(
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES,
        )
    }

    /// Returns (and clears) the first error the device reported since the last call.
    pub fn take_error(&self) -> Result<()> {
        let mut v = self
            .errors
            .lock()
            .map_err(|_| KrylovError::Gpu("error sink poisoned".into()))?;
        if v.is_empty() {
            Ok(())
        } else {
            let first = v.remove(0);
            v.clear();
            Err(KrylovError::Gpu(first))
        }
    }

    /// Checks that a storage binding of `bytes` fits the device limits.
    pub fn check_binding(&self, what: &str, bytes: u64) -> Result<()> {
        let binding = self.limits.max_storage_buffer_binding_size;
        if bytes > binding {
            return Err(KrylovError::BufferTooLarge {
                what: what.to_string(),
                bytes,
                limit: binding,
                limit_name: "max_storage_buffer_binding_size",
            });
        }
        if bytes > self.limits.max_buffer_size {
            return Err(KrylovError::BufferTooLarge {
                what: what.to_string(),
                bytes,
                limit: self.limits.max_buffer_size,
                limit_name: "max_buffer_size",
            });
        }
        Ok(())
    }
}
