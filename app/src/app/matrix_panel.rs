//! The Matrix panel (top of the left side): open a file, a sample or a generated problem, and
//! the facts of the matrix loaded (size, symmetry, sparsity, memory per GPU format).

use std::path::PathBuf;

use egui::{RichText, Ui};
use krylov_wgpu::gpu::RuleTarget;
use krylov_wgpu::gpu::format::FormatEstimate;

use super::StudioApp;
use super::widgets::{labelled, text_row};
use crate::problem::{self, Facts, Family, Source, human_bytes};

impl StudioApp {
    pub(super) fn matrix_controls(&mut self, ui: &mut Ui) {
        ui.heading("Matrix");
        let busy = self.is_busy();
        ui.add_enabled_ui(!busy, |ui| {
            if ui.button("Open .mtx file…").clicked() {
                let picked = rfd::FileDialog::new()
                    .add_filter("Matrix Market", &["mtx", "gz"])
                    .pick_file();
                match picked {
                    Some(p) => {
                        self.path_text = p.display().to_string();
                        self.start_load(Source::File(p));
                    }
                    None => {
                        self.notice = Some(
                            "no file chosen (the file dialog needs an xdg-desktop-portal): type \
                             a path below or drop the file onto the window"
                                .into(),
                        )
                    }
                }
            }
            ui.horizontal(|ui| {
                let edit = labelled(ui, "Path", |ui| {
                    ui.add(
                        egui::TextEdit::singleline(&mut self.path_text)
                            .hint_text("/path/to/matrix.mtx(.gz)")
                            .desired_width(190.0),
                    )
                });
                let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if (ui.button("Load").clicked() || enter) && !self.path_text.trim().is_empty() {
                    let p = PathBuf::from(self.path_text.trim());
                    self.start_load(Source::File(p));
                }
            });
            ui.label(RichText::new("…or drop a .mtx / .mtx.gz file onto the window").weak());
            let current = match self.problem.as_ref().map(|p| &p.source) {
                Some(Source::Sample(name)) => Some(*name),
                _ => None,
            };
            if let Some(sample) = crate::sample_menu::ui(ui, current) {
                self.start_load(Source::Sample(sample.name));
            }
            ui.add_space(4.0);
            let before = (self.family, self.size);
            egui::ComboBox::from_label("Problem")
                .selected_text(self.family.label())
                .show_ui(ui, |ui| {
                    for f in Family::ALL {
                        ui.selectable_value(&mut self.family, f, f.label());
                    }
                });
            if self.family != before.0 && !self.family.size_range().contains(&self.size) {
                self.size = self.family.default_size();
            }
            ui.add(
                egui::Slider::new(&mut self.size, self.family.size_range())
                    .logarithmic(true)
                    .text(self.family.size_name()),
            );
            if (self.family, self.size) != before {
                self.spec = self.family.spec(self.size);
            }
            ui.horizontal(|ui| {
                let edit = labelled(ui, "Spec", |ui| {
                    ui.add(egui::TextEdit::singleline(&mut self.spec).desired_width(150.0))
                })
                .on_hover_text(krylov_wgpu::matrix::generators::SPEC_HELP);
                if edit.changed()
                    && let Some((family, size)) = problem::family_of_spec(&self.spec)
                {
                    self.family = family;
                    self.size = size;
                }
                if ui.button("Generate").clicked() {
                    let spec = self.spec.trim().to_string();
                    self.start_load(Source::Spec(spec));
                }
            });
            ui.label(RichText::new(format!("{} unknowns", self.family.unknowns(self.size))).weak());
        });
        if let Some((source, _)) = &self.loading {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("loading {}…", source.name()));
            });
        }
        if let Some(p) = &self.problem {
            ui.add_space(6.0);
            ui.label(RichText::new(p.source.name()).strong());
            ui.horizontal_top(|ui| {
                facts_grid(ui, &p.facts);
                if let Some(tex) = &self.thumbnail {
                    ui.add(egui::Image::new((tex.id(), egui::vec2(112.0, 112.0))))
                        .on_hover_text("sparsity pattern (stored entries binned 128 × 128)");
                }
            });
            // The rule of the device the solver panel will use (a CPU's when none is open).
            let target = self.device.state.gpu().map_or(RuleTarget::Cpu, |g| {
                RuleTarget::from_device_type(&g.device_type)
            });
            memory_grid(ui, &p.facts, target);
        }
    }
}

/// Size, nonzeros and structure of the matrix loaded.
fn facts_grid(ui: &mut Ui, f: &Facts) {
    let yn = |b: bool| if b { "yes" } else { "no" };
    egui::Grid::new("facts").num_columns(2).show(ui, |ui| {
        let n = if f.nrows == f.ncols {
            f.nrows.to_string()
        } else {
            format!("{} × {}", f.nrows, f.ncols)
        };
        text_row(ui, "n", n);
        text_row(ui, "nnz", f.nnz.to_string());
        text_row(
            ui,
            "nnz/row",
            format!("{} / {:.2} / {}", f.row_min, f.row_mean, f.row_max),
        )
        .on_hover_text("minimum / mean / maximum stored entries per row");
        text_row(ui, "symmetric", yn(f.symmetric));
        text_row(ui, "diag. dominant", yn(f.diagonally_dominant));
        if f.zero_diagonal {
            text_row(ui, "zero diagonal", "yes (no Jacobi)");
        }
    });
}

/// The matrix's bytes on the GPU, f32 and f64: CSR, ELL and auto's format (every format in
/// the tooltip).
fn memory_grid(ui: &mut Ui, f: &Facts, target: RuleTarget) {
    let auto = f.auto(target);
    egui::Grid::new("memory").num_columns(3).show(ui, |ui| {
        let estimate = |e: &FormatEstimate| {
            if e.fits {
                human_bytes(e.bytes as usize)
            } else {
                format!("– ({:.1}× fill)", e.fill)
            }
        };
        let every: String = f
            .format_estimates(4)
            .iter()
            .zip(f.format_estimates(8))
            .map(|(a, b)| format!("{}: {} / {}\n", a.format, estimate(a), estimate(&b)))
            .collect();
        ui.label("memory").on_hover_text(format!(
            "every GPU format, f32 / f64 (– : over the padding budget)\n{every}\nauto: {}",
            auto.reason
        ));
        ui.label("f32");
        ui.label("f64");
        ui.end_row();
        let m32 = f.memory_per_format(4, auto.format);
        let m64 = f.memory_per_format(8, auto.format);
        let cell = |b: Option<usize>| b.map_or("–".to_string(), human_bytes);
        for (a, b) in m32.iter().zip(&m64) {
            ui.label(&a.0);
            ui.label(cell(a.1));
            ui.label(cell(b.1));
            ui.end_row();
        }
    });
}
