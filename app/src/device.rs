//! Which device the solver thread opens: the adapters the app offers and how a selection in
//! the Device menu becomes a [`DeviceChoice`] (the library's `--device auto|gpu|cpu` rules).
//!
//! The app looks at the primary backends only (Vulkan, Metal, DX12): a second GL/EGL instance
//! beside a GL-rendered window panics with EGL BadAccess, and wgpu's GL backend has neither f64
//! nor subgroups. Without any of them the app solves on the CPU reference.

use krylov_wgpu::Precision;
use krylov_wgpu::gpu::{AdapterSummary, ChosenDevice, DeviceChoice, DevicePlan, DevicePreference};
use krylov_wgpu::wgpu;

/// The backends the solver thread may open.
pub const BACKENDS: wgpu::Backends = wgpu::Backends::PRIMARY;

/// What the Device menu selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceSelection {
    /// The library's `auto` rule: the best hardware GPU with the features, else the CPU
    /// (`KRYLOV_REQUIRE_GPU=1` admits software adapters, `KRYLOV_ADAPTER` selects one).
    #[default]
    Auto,
    /// The CPU reference solvers.
    Cpu,
    /// The library's `gpu` rule: the best adapter of any kind (software included) that can
    /// run the solve (`krylov-studio --device gpu`; the headless tests use it).
    AnyGpu,
    /// The adapter at this index of [`list_adapters`].
    Adapter(usize),
}

impl std::str::FromStr for DeviceSelection {
    type Err = String;
    /// `auto`, `gpu`, `cpu` (as the CLI's `--device`) or an adapter index.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "auto" => Ok(DeviceSelection::Auto),
            "gpu" => Ok(DeviceSelection::AnyGpu),
            "cpu" => Ok(DeviceSelection::Cpu),
            other => other
                .parse::<usize>()
                .map(DeviceSelection::Adapter)
                .map_err(|_| {
                    format!(
                        "unknown device `{other}` (expected auto, gpu, cpu or an adapter index)"
                    )
                }),
        }
    }
}

impl DeviceSelection {
    /// The menu entry.
    pub fn label(self, adapters: &[AdapterSummary]) -> String {
        match self {
            DeviceSelection::Auto => "Auto".into(),
            DeviceSelection::Cpu => "CPU reference".into(),
            DeviceSelection::AnyGpu => "Any GPU (software too)".into(),
            DeviceSelection::Adapter(i) => match adapters.iter().find(|a| a.index == i) {
                Some(a) => adapter_label(a),
                None => format!("adapter {i}"),
            },
        }
    }

    /// The library request for this selection. An adapter chosen by hand is opened whatever
    /// its features (f64 jobs then run on the CPU with a note, as the app's precision menu
    /// offers f32 there).
    pub fn choice(self, precision: Precision) -> DeviceChoice {
        let choice = match self {
            DeviceSelection::Auto => DeviceChoice::from_env(DevicePreference::Auto),
            DeviceSelection::Cpu => DeviceChoice::from_env(DevicePreference::Cpu),
            DeviceSelection::AnyGpu => DeviceChoice::from_env(DevicePreference::Gpu),
            DeviceSelection::Adapter(i) => DeviceChoice::from_env(DevicePreference::Gpu)
                .adapter(Some(i.to_string()))
                .precision(Precision::F32),
        };
        match self {
            DeviceSelection::Adapter(_) => choice,
            _ => choice.precision(precision),
        }
        .backends(BACKENDS)
    }
}

/// An adapter's menu entry: `0: NVIDIA H200 (Vulkan)`, `1: llvmpipe (…) (Vulkan, software)`.
pub fn adapter_label(a: &AdapterSummary) -> String {
    format!(
        "{}: {} ({}{})",
        a.index,
        a.name,
        a.backend,
        if a.software { ", software" } else { "" }
    )
}

/// Every adapter of [`BACKENDS`], in the order the library ranks them (so an index here is
/// what [`DeviceChoice::adapter`] selects with the same backends).
pub fn list_adapters() -> Vec<AdapterSummary> {
    krylov_wgpu::gpu::list_adapters_for(BACKENDS)
}

/// What opening a selection gave: the device (the CPU reference when it failed) and the
/// adapters seen.
#[derive(Debug, Clone)]
pub struct Opened {
    pub selection: DeviceSelection,
    /// The precision the choice was resolved for.
    pub precision: Precision,
    pub chosen: ChosenDevice,
    /// The opened GPU's facts (the *device's* features and limits), indexed as in `adapters`.
    pub adapter: Option<AdapterSummary>,
    pub adapters: Vec<AdapterSummary>,
    /// Why the selection could not be opened (then `chosen` is the CPU reference).
    pub error: Option<String>,
}

/// Lists the adapters and opens `selection` with the library's rules. Never panics: a failure
/// (or a panic inside wgpu) leaves the CPU reference with the error as its reason.
pub fn open(selection: DeviceSelection, precision: Precision) -> Opened {
    let caught = |p: Box<dyn std::any::Any + Send>| format!("internal error: {}", panic_text(&p));
    let adapters = std::panic::catch_unwind(list_adapters).unwrap_or_default();
    let choice = selection.choice(precision);
    let resolved = std::panic::catch_unwind(|| choice.resolve())
        .map_err(caught)
        .and_then(|r| r.map_err(|e| crate::problem::one_line(&e.to_string())));
    let (mut chosen, error) = match resolved {
        Ok(c) => (c, None),
        Err(e) => (
            ChosenDevice::cpu(format!(
                "{}: {e}; solving on the CPU reference",
                selection.label(&adapters)
            )),
            Some(e),
        ),
    };
    // The library's reasons name the CLI's flags; say what the user did here instead.
    match selection {
        DeviceSelection::Cpu if error.is_none() => {
            chosen.reason = "CPU reference chosen in the Device menu".into();
        }
        DeviceSelection::Adapter(_) if chosen.context.is_some() => {
            chosen.reason = format!("adapter {} chosen in the Device menu", chosen.info.name);
        }
        _ => {}
    }
    // The opened device's own facts, indexed as in the list the choice planned from.
    let adapter = chosen.context.as_ref().map(|ctx| ctx.summary.clone());
    Opened {
        selection,
        precision,
        chosen,
        adapter,
        adapters,
        error,
    }
}

/// Whether choosing `selection` for `precision` would open something other than `current`
/// (a GPU adapter's index, or `None` for the CPU reference), decided from the adapter list
/// alone (no device is opened).
pub fn plan_differs(
    selection: DeviceSelection,
    precision: Precision,
    adapters: &[AdapterSummary],
    current: Option<usize>,
) -> bool {
    match selection.choice(precision).plan(adapters) {
        Ok(DevicePlan::Gpu { index, .. }) => current != Some(index),
        Ok(DevicePlan::Cpu { .. }) => current.is_some(),
        Err(_) => true,
    }
}

pub(crate) fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(index: usize, name: &str, software: bool, f64: bool) -> AdapterSummary {
        let device_type = if software { "Cpu" } else { "DiscreteGpu" };
        AdapterSummary {
            index,
            ..AdapterSummary::described(name, "Vulkan", device_type, f64)
        }
    }

    #[test]
    fn labels_and_plans() {
        let list = [
            adapter(0, "GPU", false, false),
            adapter(1, "llvmpipe", true, true),
        ];
        assert_eq!(DeviceSelection::Auto.label(&list), "Auto");
        assert_eq!(DeviceSelection::Cpu.label(&list), "CPU reference");
        assert_eq!(
            DeviceSelection::Adapter(1).label(&list),
            "1: llvmpipe (Vulkan, software)"
        );
        assert_eq!(adapter_label(&list[0]), "0: GPU (Vulkan)");
        // A hand-picked adapter opens whatever its features.
        let pick = DeviceSelection::Adapter(0).choice(Precision::F64);
        assert!(matches!(
            pick.plan(&list),
            Ok(DevicePlan::Gpu { index: 0, .. })
        ));
        assert!(!plan_differs(
            DeviceSelection::Cpu,
            Precision::F64,
            &list,
            None
        ));
        assert!(plan_differs(
            DeviceSelection::Cpu,
            Precision::F64,
            &list,
            Some(0)
        ));
        assert!(!plan_differs(
            DeviceSelection::Adapter(1),
            Precision::F64,
            &list,
            Some(1)
        ));
    }
}
