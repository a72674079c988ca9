//! Which device a solve runs on: the rules of `--device auto|gpu|cpu`, in one place for the
//! CLI, the app and library users.
//!
//! * `auto` (the default) takes the best **hardware** GPU on Vulkan, Metal or DX12 that has
//!   every feature the request needs (SHADER_F64 for f64), discrete before integrated;
//!   otherwise the f64 CPU reference. Software adapters (lavapipe/llvmpipe, WARP,
//!   SwiftShader) are slower than the CPU reference on the problems a solver meets, so auto
//!   takes one only when asked: `--adapter NAME` (or `KRYLOV_ADAPTER`) names it, or
//!   `KRYLOV_REQUIRE_GPU=1` (CI, proving the kernels on lavapipe). OpenGL adapters are used
//!   only when asked as well (wgpu's GL backend has no f64 and no subgroups).
//! * `gpu` takes the best adapter of any kind that has the features, software included, and
//!   is an error naming what is missing when there is none.
//! * `cpu` is the CPU reference.
//!
//! [`DeviceChoice::plan`] decides from adapter summaries alone (a pure function, tested on
//! made-up adapters); [`DeviceChoice::resolve`] enumerates the real adapters, plans and opens
//! the device. Either way the decision comes with a one-line reason for the report.
//!
//! ```
//! use krylov_wgpu::gpu::{DeviceChoice, DevicePlan, DevicePreference};
//! use krylov_wgpu::Precision;
//! // No adapter at all: auto runs on the CPU reference and says why.
//! let plan = DeviceChoice::new(DevicePreference::Auto).precision(Precision::F64).plan(&[])?;
//! assert!(matches!(plan, DevicePlan::Cpu { ref reason } if reason.contains("no GPU adapter")));
//! // `--device gpu` with no adapter is an error.
//! assert!(DeviceChoice::new(DevicePreference::Gpu).plan(&[]).is_err());
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use crate::base::{DeviceInfo, DeviceKind};
use std::sync::Arc;

use super::device::{AdapterSummary, GpuContext, WANTED_FEATURES, ranked_adapters, summaries};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Precision;

/// Where the user asked a solve to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DevicePreference {
    /// A hardware GPU with the needed features, else the CPU reference.
    #[default]
    Auto,
    /// A GPU of any kind (software included), else an error.
    Gpu,
    /// The CPU reference.
    Cpu,
}

impl std::fmt::Display for DevicePreference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DevicePreference::Auto => "auto",
            DevicePreference::Gpu => "gpu",
            DevicePreference::Cpu => "cpu",
        })
    }
}

impl std::str::FromStr for DevicePreference {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(DevicePreference::Auto),
            "gpu" => Ok(DevicePreference::Gpu),
            "cpu" => Ok(DevicePreference::Cpu),
            _ => Err(format!("unknown device `{s}` (expected auto, gpu or cpu)")),
        }
    }
}

/// Report rows for GPU adapters (the struct itself lives in the ground floor, [`crate::base`]).
impl DeviceInfo {
    /// A GPU adapter.
    pub fn gpu(adapter: &AdapterSummary) -> Self {
        DeviceInfo {
            kind: DeviceKind::Gpu,
            name: adapter.name.clone(),
            backend: adapter.backend.clone(),
            software: adapter.software,
        }
    }
}

/// What [`DeviceChoice::plan`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevicePlan {
    /// Open the adapter at `index` of the list the plan was made from.
    Gpu { index: usize, reason: String },
    /// Run the CPU reference.
    Cpu { reason: String },
}

impl DevicePlan {
    /// The one-line reason for the report.
    pub fn reason(&self) -> &str {
        match self {
            DevicePlan::Gpu { reason, .. } | DevicePlan::Cpu { reason } => reason,
        }
    }
}

/// A resolved choice: an open GPU device or the CPU reference, and why.
#[derive(Debug, Clone)]
pub struct ChosenDevice {
    /// The opened device; `None` means the CPU reference. Its `summary.index` is the
    /// adapter's position in `adapters`.
    pub context: Option<Arc<GpuContext>>,
    pub info: DeviceInfo,
    pub reason: String,
    /// Every adapter the choice looked at, ranked (empty for `--device cpu`).
    pub adapters: Vec<AdapterSummary>,
}

impl ChosenDevice {
    /// The CPU reference, with the reason (and no adapters).
    pub fn cpu(reason: impl Into<String>) -> Self {
        ChosenDevice {
            context: None,
            info: DeviceInfo::cpu(),
            reason: reason.into(),
            adapters: Vec::new(),
        }
    }
}

/// A request for a device: preference, adapter selector, precision and whether the method
/// runs on the GPU. Build it, then [`plan`](Self::plan) or [`resolve`](Self::resolve) it.
///
/// ```
/// use krylov_wgpu::gpu::{DeviceChoice, DevicePreference};
/// use krylov_wgpu::Precision;
/// let chosen = DeviceChoice::from_env(DevicePreference::Auto).precision(Precision::F64).resolve()?;
/// println!("{}: {}", chosen.info, chosen.reason); // e.g. "cpu (CPU reference): no hardware GPU; …"
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone)]
pub struct DeviceChoice {
    pub preference: DevicePreference,
    /// Adapter index (in [`super::list_adapters`]' order) or case-insensitive name substring.
    pub adapter: Option<String>,
    /// The precision the kernels run in (f64 needs SHADER_F64).
    pub precision: Precision,
    /// Why the request cannot run on any GPU (a method not ported yet), or `None`.
    pub cpu_only: Option<String>,
    /// Let `auto` take software adapters (set by `KRYLOV_REQUIRE_GPU=1`).
    pub allow_software: bool,
    /// Backends to look at (the app leaves GL out beside its own window).
    pub backends: wgpu::Backends,
    /// Hide SHADER_F64 from every adapter (`--no-f64`): plan as if none had it and open the
    /// device without it, so any machine can run the f32-only path.
    pub no_f64: bool,
}

impl DeviceChoice {
    /// A request with `preference`, f64, every backend and no adapter selector.
    pub fn new(preference: DevicePreference) -> Self {
        DeviceChoice {
            preference,
            adapter: None,
            precision: Precision::F64,
            cpu_only: None,
            allow_software: false,
            backends: wgpu::Backends::all(),
            no_f64: false,
        }
    }

    /// Like [`new`](Self::new), honouring `KRYLOV_ADAPTER` (an adapter selector) and
    /// `KRYLOV_REQUIRE_GPU=1` (auto may take software adapters).
    pub fn from_env(preference: DevicePreference) -> Self {
        let mut c = Self::new(preference);
        c.adapter = super::DeviceRequest::from_env().adapter;
        c.allow_software = super::gpu_required();
        c
    }

    /// Selects an adapter by index or name substring (`None` keeps the current selector).
    pub fn adapter(mut self, selector: Option<String>) -> Self {
        if let Some(s) = selector.filter(|s| !s.trim().is_empty()) {
            self.adapter = Some(s);
        }
        self
    }

    pub fn precision(mut self, precision: Precision) -> Self {
        self.precision = precision;
        self
    }

    /// Marks the request as one no GPU can run, with the reason (e.g. a method not ported).
    pub fn cpu_only(mut self, why: Option<String>) -> Self {
        self.cpu_only = why;
        self
    }

    /// Hides SHADER_F64 from the adapters when `hide` is true (see [`Self::no_f64`]).
    pub fn without_f64(mut self, hide: bool) -> Self {
        self.no_f64 = hide;
        self
    }

    pub fn backends(mut self, backends: wgpu::Backends) -> Self {
        self.backends = backends;
        self
    }

    /// Whether `a` has every feature the request needs; `Err` names the missing one.
    fn usable(&self, a: &AdapterSummary) -> std::result::Result<(), &'static str> {
        if self.precision == Precision::F64 && !a.shader_f64 {
            return Err("SHADER_F64 (f64 kernels)");
        }
        Ok(())
    }

    /// Decides from `adapters` (ranked as [`super::list_adapters`] returns them). Errors only
    /// for `gpu` (nothing usable) and for an adapter selector that matches nothing.
    pub fn plan(&self, adapters: &[AdapterSummary]) -> Result<DevicePlan> {
        let cpu = |reason: String| Ok(DevicePlan::Cpu { reason });
        let auto = self.preference == DevicePreference::Auto;
        if self.preference == DevicePreference::Cpu {
            return cpu("asked for the CPU (--device cpu)".into());
        }
        if let Some(why) = &self.cpu_only {
            if auto {
                return cpu(format!("{why}: solving on the CPU reference"));
            }
            return Err(KrylovError::Unsupported(format!("{why}; use --device cpu")));
        }
        if let Some(sel) = &self.adapter {
            let a = select(adapters, sel)?;
            return match self.usable(a) {
                Ok(()) => Ok(DevicePlan::Gpu {
                    index: a.index,
                    reason: format!(
                        "adapter `{}` selected by --adapter/KRYLOV_ADAPTER `{sel}`",
                        a.name
                    ),
                }),
                Err(feature) if auto => cpu(format!(
                    "selected adapter `{}` has no {feature}: solving {} on the CPU reference \
                     (use --precision f32 to run on it)",
                    a.name, self.precision
                )),
                Err(feature) => Err(KrylovError::MissingFeature {
                    adapter: a.name.clone(),
                    feature,
                }),
            };
        }
        let eligible = |a: &&AdapterSummary| {
            if !auto {
                return true;
            }
            let primary = a.backend != "Gl";
            primary && (!a.software || self.allow_software)
        };
        if let Some(a) = adapters
            .iter()
            .filter(eligible)
            .find(|a| self.usable(a).is_ok())
        {
            let needs = self.needs();
            let what = match (auto, a.software) {
                (true, false) => format!("the best hardware GPU with {needs}"),
                (true, true) => format!(
                    "KRYLOV_REQUIRE_GPU=1 admits software adapters; the best one with {needs}"
                ),
                (false, false) => format!("--device gpu: the best adapter with {needs}"),
                (false, true) => {
                    format!("--device gpu: no hardware GPU with {needs}, so the software adapter")
                }
            };
            return Ok(DevicePlan::Gpu {
                index: a.index,
                reason: format!("{what}: {} ({}, {})", a.name, a.backend, a.device_type),
            });
        }
        // Nothing to run on: say what was seen and why each was passed over.
        let seen: Vec<String> = adapters
            .iter()
            .map(|a| {
                let why = match self.usable(a) {
                    Err(feature) => format!("no {feature}"),
                    Ok(()) if a.software => "software".to_string(),
                    Ok(()) => "OpenGL".to_string(),
                };
                format!("{} ({}, {why})", a.name, a.backend)
            })
            .collect();
        if !auto {
            if adapters.is_empty() {
                return Err(KrylovError::NoAdapter(
                    " (no Vulkan, Metal or DX12 driver: install one, e.g. `apt-get install \
                     mesa-vulkan-drivers`, or use --device cpu)"
                        .into(),
                ));
            }
            let feature = self
                .usable(&adapters[0])
                .err()
                .unwrap_or("a usable backend");
            return Err(KrylovError::NoUsableAdapter {
                needs: feature,
                seen: seen.join(", "),
            });
        }
        if adapters.is_empty() {
            return cpu(
                "no GPU adapter found (no Vulkan, Metal or DX12 driver): solving on the CPU reference"
                    .into(),
            );
        }
        let hardware: Vec<&AdapterSummary> = adapters.iter().filter(|a| !a.software).collect();
        let reason = if hardware.is_empty() {
            let names: Vec<String> = adapters
                .iter()
                .map(|a| format!("{} ({})", a.name, a.backend))
                .collect();
            let hint = if adapters.iter().any(|a| self.usable(a).is_ok()) {
                "use --device gpu"
            } else {
                // E.g. GL's llvmpipe, which has no f64.
                "--device gpu --precision f32 runs on it"
            };
            format!(
                "no hardware GPU; software adapter{} {} skipped ({hint})",
                if names.len() > 1 { "s" } else { "" },
                names.join(", ")
            )
        } else {
            // What would run it instead: f32 on a GPU that lacks only f64, or --device gpu
            // for software and OpenGL adapters.
            let mut hints = Vec::new();
            if let Some(a) = hardware
                .iter()
                .find(|a| self.precision == Precision::F64 && !a.shader_f64 && a.backend != "Gl")
            {
                hints.push(format!("--precision f32 runs on {}", a.name));
            }
            if let Some(a) = adapters.iter().find(|a| self.usable(a).is_ok()) {
                hints.push(format!("--device gpu takes {} ({})", a.name, a.backend));
            }
            format!(
                "no hardware GPU with {} on Vulkan, Metal or DX12; skipped: {}{}",
                self.needs(),
                seen.join(", "),
                if hints.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", hints.join("; "))
                }
            )
        };
        cpu(reason)
    }

    /// What the request needs, for reasons.
    fn needs(&self) -> &'static str {
        match self.precision {
            Precision::F64 => "f64",
            Precision::F32 => "f32",
        }
    }

    /// [`resolve`](Self::resolve), except that an f64 request no GPU can run (none has
    /// SHADER_F64, or [`no_f64`](Self::no_f64) hides it) goes to a GPU that can run f32 when
    /// there is one, with the note to put first in the report: the caller then runs
    /// mixed-precision refinement there (f64 accuracy from f32 solves, `--allow-mixed`)
    /// instead of the CPU reference. `None`: run the request as asked.
    pub fn resolve_allowing_mixed(&self) -> Result<(ChosenDevice, Option<String>)> {
        if self.precision != Precision::F64 {
            return Ok((self.resolve()?, None));
        }
        let f64_device = match self.resolve() {
            Ok(d) if d.context.is_some() => return Ok((d, None)),
            Ok(d) => Ok(d),
            Err(e @ (KrylovError::MissingFeature { .. } | KrylovError::NoUsableAdapter { .. })) => {
                Err(e)
            }
            Err(e) => return Err(e),
        };
        let gpu = self.clone().precision(Precision::F32).resolve()?;
        if gpu.context.is_none() {
            // No GPU for f32 either: the f64 outcome stands (the CPU, or the error).
            return f64_device.map(|d| (d, None));
        }
        let why = match &f64_device {
            Ok(cpu) => cpu.reason.clone(),
            Err(e) => e.to_string(),
        };
        Ok((
            gpu,
            Some(format!(
                "f64 asked for, but no GPU can run f64 kernels ({why}): ran --precision mixed \
                 (f32 inner solves, double-single outer loop) on the GPU, as --allow-mixed \
                 permits"
            )),
        ))
    }

    /// Enumerates the adapters, plans, and opens the planned device. In `auto` mode a device
    /// that fails to open falls back to the CPU reference (the reason says so).
    pub fn resolve(&self) -> Result<ChosenDevice> {
        let adapters = if self.preference == DevicePreference::Cpu {
            Vec::new()
        } else {
            ranked_adapters(self.backends)
        };
        let mut listed = summaries(&adapters);
        let mut features = WANTED_FEATURES;
        if self.no_f64 {
            for a in &mut listed {
                a.shader_f64 = false;
            }
            features.remove(wgpu::Features::SHADER_F64);
        }
        let cpu = |reason: String| ChosenDevice {
            adapters: listed.clone(),
            ..ChosenDevice::cpu(reason)
        };
        match self.plan(&listed)? {
            DevicePlan::Cpu { reason } => Ok(cpu(reason)),
            DevicePlan::Gpu { index, reason } => {
                let adapter = adapters.into_iter().nth(index).expect("planned index");
                match GpuContext::open_at(adapter, features, index) {
                    Ok(ctx) => Ok(ChosenDevice {
                        info: DeviceInfo::gpu(&listed[index]),
                        context: Some(ctx),
                        reason,
                        adapters: listed,
                    }),
                    Err(e) if self.preference == DevicePreference::Auto => Ok(cpu(format!(
                        "{}: {e}; solving on the CPU reference",
                        listed[index].name
                    ))),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// The adapter a selector names: an index into the list or a case-insensitive substring of
/// the name.
fn select<'a>(adapters: &'a [AdapterSummary], sel: &str) -> Result<&'a AdapterSummary> {
    let pick = match sel.trim().parse::<usize>() {
        Ok(i) => adapters.get(i),
        Err(_) => {
            let sel = sel.to_lowercase();
            adapters
                .iter()
                .find(|a| a.name.to_lowercase().contains(&sel))
        }
    };
    pick.ok_or_else(|| {
        let have: Vec<String> = adapters
            .iter()
            .map(|a| format!("{}: {} ({})", a.index, a.name, a.backend))
            .collect();
        KrylovError::NoAdapter(format!(
            " matching `{sel}` (have: {})",
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ))
    })
}
