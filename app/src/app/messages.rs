//! The top bar (the device part from [`crate::device_panel`], the drop hint) and the message
//! lines above the plot (error, notice, the runs' notes).

use egui::{Color32, RichText, Ui};

use super::StudioApp;
use crate::device_panel::DeviceState;

impl StudioApp {
    pub(super) fn top_bar(&mut self, ui: &mut Ui) {
        let can_switch =
            self.running_job.is_none() && !matches!(self.device.state, DeviceState::Opening);
        if let Some(selection) = self.device.ui(ui, can_switch) {
            self.select_device(selection);
        }
        let hovering = ui.ctx().input(|i| !i.raw.hovered_files.is_empty());
        if hovering {
            ui.label(RichText::new("Drop the .mtx / .mtx.gz file to load it").strong());
        }
    }

    pub(super) fn messages(&self, ui: &mut Ui) {
        if let Some(e) = &self.error {
            ui.colored_label(Color32::from_rgb(220, 50, 50), format!("Error: {e}"));
        }
        if let Some(n) = &self.notice {
            ui.label(n);
        }
        for run in &self.runs {
            if let Some(note) = &run.note {
                ui.colored_label(
                    Color32::from_rgb(200, 120, 0),
                    format!("note ({}): {note}", run.kind),
                );
            }
        }
    }
}
