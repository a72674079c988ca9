//! Beside the counters, for runs split over several devices (the Solver panel's "Devices"):
//! each device's block of rows — adapter, rows, interior rows, non-zeros, halo and sends — and
//! the exchange per iteration with its share of the loop.

use egui::{RichText, Ui};

use super::{StudioApp, kind_color};
use crate::problem::human_bytes;

impl StudioApp {
    /// One grid per finished run that ran on several devices.
    pub(super) fn devices_table(&self, ui: &mut Ui) {
        for run in &self.runs {
            let Some(d) = run.report().and_then(|r| r.devices.as_ref()) else {
                continue;
            };
            ui.label(
                RichText::new(format!("{} run on {} devices", run.kind, d.devices.len()))
                    .strong()
                    .color(kind_color(run.kind)),
            );
            egui::Grid::new(("devices", run.kind.as_str()))
                .striped(true)
                .num_columns(7)
                .show(ui, |ui| {
                    for h in [
                        "device",
                        "adapter",
                        "rows",
                        "interior",
                        "non-zeros",
                        "halo",
                        "sends",
                    ] {
                        ui.label(RichText::new(h).strong());
                    }
                    ui.end_row();
                    for (i, p) in d.devices.iter().enumerate() {
                        ui.label(format!("device {i}"));
                        ui.label(format!("{} ({})", p.adapter, p.adapter_index));
                        ui.label(p.rows.to_string());
                        ui.label(p.interior_rows.to_string());
                        ui.label(p.nnz.to_string());
                        ui.label(p.halo.to_string());
                        ui.label(p.send.to_string());
                        ui.end_row();
                    }
                });
            ui.label(format!(
                "exchange: {} values ({}) per iteration through the host; {:.1} % of the loop copying halos",
                d.exchange_values_per_iteration,
                human_bytes(d.exchange_bytes_per_iteration as usize),
                100.0 * d.exchange_share
            ));
            ui.add_space(6.0);
        }
    }
}
