//! The Sample menu of the Matrix panel: the real matrices embedded in the library.

use egui::Ui;
use krylov_wgpu::matrix::samples::{SAMPLES, Sample};

/// The menu entry of a sample: its name (the description shows on hover).
pub fn label(s: &Sample) -> String {
    s.name.to_string()
}

/// Shows the Sample menu (`current`: the sample loaded, if any); returns the sample picked.
pub fn ui(ui: &mut Ui, current: Option<&str>) -> Option<&'static Sample> {
    let mut picked = None;
    ui.horizontal(|ui| {
        let l = ui.label("Sample");
        egui::ComboBox::from_id_salt("sample")
            .selected_text(current.unwrap_or("choose a real matrix…"))
            .width(190.0)
            .show_ui(ui, |ui| {
                for s in SAMPLES {
                    let hover = format!(
                        "{}\n{}; try {}",
                        s.description,
                        if s.symmetric {
                            "symmetric"
                        } else {
                            "nonsymmetric"
                        },
                        s.suggested_method
                    );
                    if ui
                        .selectable_label(current == Some(s.name), label(s))
                        .on_hover_text(hover)
                        .clicked()
                    {
                        picked = Some(s);
                    }
                }
            })
            .response
            .labelled_by(l.id)
            .on_hover_text("real sample matrices built into krylov-wgpu (no file needed)");
    });
    picked
}
