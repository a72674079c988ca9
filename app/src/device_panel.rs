//! The device part of the top bar: which device solves and why, the adapter's facts, and the
//! Device menu that switches between Auto, the CPU reference and every adapter seen.

use egui::{Color32, RichText, Ui};
use krylov_wgpu::Precision;
use krylov_wgpu::gpu::{AdapterSummary, DeviceInfo};

use crate::device::{self, DeviceSelection, Opened, adapter_label};
use crate::problem::human_bytes;

/// The solver device as the UI knows it.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // one value per app
pub enum DeviceState {
    /// The solver thread is opening a device.
    Opening,
    Ready(ActiveDevice),
}

/// The device solves run on, and why.
#[derive(Debug, Clone)]
pub struct ActiveDevice {
    /// A GPU adapter or the CPU reference.
    pub info: DeviceInfo,
    /// Why this device (the library's reason, or the user's choice).
    pub reason: String,
    /// The opened GPU's facts (the device's features and limits); `None` on the CPU.
    pub adapter: Option<AdapterSummary>,
}

impl DeviceState {
    /// The open device, unless one is being opened.
    pub fn active(&self) -> Option<&ActiveDevice> {
        match self {
            DeviceState::Opening => None,
            DeviceState::Ready(d) => Some(d),
        }
    }

    /// The opened GPU adapter, if the device is one.
    pub fn gpu(&self) -> Option<&AdapterSummary> {
        self.active().and_then(|d| d.adapter.as_ref())
    }
}

/// The device state, the adapters seen and the Device menu's selection.
#[derive(Debug)]
pub struct DevicePanel {
    pub state: DeviceState,
    pub adapters: Vec<AdapterSummary>,
    pub selection: DeviceSelection,
    /// The precision the open device was chosen for (Auto depends on it).
    resolved_for: Precision,
}

impl DevicePanel {
    /// A panel waiting for `selection` to open (the worker opens it at start).
    pub fn opening(selection: DeviceSelection, precision: Precision) -> Self {
        DevicePanel {
            state: DeviceState::Opening,
            adapters: Vec::new(),
            selection,
            resolved_for: precision,
        }
    }

    /// Marks a switch to `selection` as under way.
    pub fn switching(&mut self, selection: DeviceSelection, precision: Precision) {
        self.state = DeviceState::Opening;
        self.selection = selection;
        self.resolved_for = precision;
    }

    /// Takes the worker's report of an opened device; returns the error to show, if any.
    pub fn opened(&mut self, o: Opened) -> Option<String> {
        self.adapters = o.adapters;
        self.resolved_for = o.precision;
        self.selection = if o.error.is_some() {
            DeviceSelection::Cpu
        } else {
            o.selection
        };
        self.state = DeviceState::Ready(ActiveDevice {
            info: o.chosen.info,
            reason: o.chosen.reason,
            adapter: o.adapter,
        });
        o.error
            .map(|e| format!("could not open {}: {e}", o.selection.label(&self.adapters)))
    }

    /// Whether the open device runs f64 kernels (the CPU reference computes in f64).
    pub fn f64_ok(&self) -> bool {
        self.state.gpu().is_none_or(|s| s.shader_f64)
    }

    /// The precision to use when the user chose none: f64 unless the GPU lacks it.
    pub fn default_precision(&self) -> Precision {
        if self.f64_ok() {
            Precision::F64
        } else {
            Precision::F32
        }
    }

    /// When the selection is Auto and `precision` changed what Auto would pick (an f64-less
    /// GPU for f32, say), the selection to reopen; otherwise `None`.
    pub fn reopen_for(&mut self, precision: Precision) -> Option<DeviceSelection> {
        if precision == self.resolved_for || self.selection != DeviceSelection::Auto {
            return None;
        }
        let current = self.state.active()?.adapter.as_ref().map(|a| a.index);
        self.resolved_for = precision;
        device::plan_differs(self.selection, precision, &self.adapters, current)
            .then_some(self.selection)
    }

    /// The device lines of the top bar, with the Device menu (enabled when `can_switch`).
    /// Returns the selection the user picked, if it changed.
    pub fn ui(&self, ui: &mut Ui, can_switch: bool) -> Option<DeviceSelection> {
        let mut picked = None;
        ui.horizontal_wrapped(|ui| {
            ui.heading("krylov-studio");
            ui.separator();
            picked = self.menu(ui, can_switch);
            ui.separator();
            match &self.state {
                DeviceState::Opening => {
                    ui.spinner();
                    ui.label(format!(
                        "opening {}…",
                        match self.selection {
                            DeviceSelection::Auto => "the device".to_string(),
                            s => s.label(&self.adapters),
                        }
                    ));
                }
                DeviceState::Ready(d) => {
                    let text = match &d.adapter {
                        Some(_) => format!("Device: {}", d.info),
                        None => "Device: CPU reference".to_string(),
                    };
                    let l = ui.label(RichText::new(text).strong());
                    if let Some(s) = &d.adapter {
                        l.on_hover_text(format!("driver: {}", s.driver));
                    }
                }
            }
        });
        if let DeviceState::Ready(d) = &self.state {
            let reason = format!("Why: {}", d.reason);
            if d.info.is_gpu() {
                ui.label(RichText::new(reason).weak());
            } else {
                ui.colored_label(Color32::from_rgb(200, 120, 0), reason);
            }
            if let Some(s) = &d.adapter {
                ui.label(facts_line(s));
            }
        }
        picked
    }

    fn menu(&self, ui: &mut Ui, can_switch: bool) -> Option<DeviceSelection> {
        let mut choice = self.selection;
        let l = ui.label("Device");
        ui.add_enabled_ui(can_switch, |ui| {
            egui::ComboBox::from_id_salt("device")
                .selected_text(self.selection.label(&self.adapters))
                .width(260.0)
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut choice, DeviceSelection::Auto, "Auto")
                        .on_hover_text(
                            "the best hardware GPU with the features the solve needs, else the \
                             CPU reference (KRYLOV_REQUIRE_GPU=1 admits software adapters)",
                        );
                    ui.selectable_value(&mut choice, DeviceSelection::Cpu, "CPU reference")
                        .on_hover_text("the library's f64 CPU solvers");
                    ui.selectable_value(
                        &mut choice,
                        DeviceSelection::AnyGpu,
                        DeviceSelection::AnyGpu.label(&self.adapters),
                    )
                    .on_hover_text(
                        "the best adapter of any kind that can run the solve, software included",
                    );
                    for a in &self.adapters {
                        ui.selectable_value(
                            &mut choice,
                            DeviceSelection::Adapter(a.index),
                            adapter_label(a),
                        )
                        .on_hover_text(format!(
                            "{} · {} · f64 {} · driver {}",
                            a.backend,
                            a.device_type,
                            if a.shader_f64 { "yes" } else { "no" },
                            a.driver
                        ));
                    }
                })
                .response
                .labelled_by(l.id)
                .on_disabled_hover_text("wait for the solve (or the device) to finish");
        });
        (choice != self.selection).then_some(choice)
    }
}

/// `Vulkan · DiscreteGpu · f64 yes · subgroups yes (32..32) · …` for an opened GPU.
fn facts_line(s: &AdapterSummary) -> String {
    let yn = |b: bool| if b { "yes" } else { "no" };
    format!(
        "{} · {} · f64 {} · subgroups {} · timestamps {} · max binding {} · max buffer {}",
        s.backend,
        s.device_type,
        yn(s.shader_f64),
        if s.subgroup {
            format!("yes ({}..{})", s.subgroup_min_size, s.subgroup_max_size)
        } else {
            "no".into()
        },
        yn(s.timestamp_query),
        human_bytes(s.max_storage_buffer_binding_size as usize),
        human_bytes(s.max_buffer_size as usize),
    )
}
