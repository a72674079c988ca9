//! The left panel: the Matrix controls (file, sample, generator, facts) and the Solver
//! settings.

use std::path::PathBuf;

use egui::{RichText, Ui};
use krylov_wgpu::Precision;
use krylov_wgpu::solvers::{CheckMode, GramSchmidt, Method, Precond};

use super::{RunMode, StudioApp};
use crate::device_panel::DeviceState;
use crate::problem::{self, Family, Source, human_bytes};

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
                let l = ui.label("Path");
                let edit = ui
                    .add(
                        egui::TextEdit::singleline(&mut self.path_text)
                            .hint_text("/path/to/matrix.mtx(.gz)")
                            .desired_width(190.0),
                    )
                    .labelled_by(l.id);
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
                let l = ui.label("Spec");
                let edit = ui
                    .add(egui::TextEdit::singleline(&mut self.spec).desired_width(150.0))
                    .labelled_by(l.id)
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
            let f = &p.facts;
            let yn = |b: bool| if b { "yes" } else { "no" };
            ui.horizontal_top(|ui| {
                egui::Grid::new("facts").num_columns(2).show(ui, |ui| {
                    ui.label("n");
                    ui.label(if f.nrows == f.ncols {
                        f.nrows.to_string()
                    } else {
                        format!("{} × {}", f.nrows, f.ncols)
                    });
                    ui.end_row();
                    ui.label("nnz");
                    ui.label(f.nnz.to_string());
                    ui.end_row();
                    ui.label("nnz/row");
                    ui.label(format!("{} / {:.2} / {}", f.row_min, f.row_mean, f.row_max))
                        .on_hover_text("minimum / mean / maximum stored entries per row");
                    ui.end_row();
                    ui.label("symmetric");
                    ui.label(yn(f.symmetric));
                    ui.end_row();
                    ui.label("diag. dominant");
                    ui.label(yn(f.diagonally_dominant));
                    ui.end_row();
                    if f.zero_diagonal {
                        ui.label("zero diagonal");
                        ui.label("yes (no Jacobi)");
                        ui.end_row();
                    }
                });
                if let Some(tex) = &self.thumbnail {
                    ui.add(egui::Image::new((tex.id(), egui::vec2(112.0, 112.0))))
                        .on_hover_text("sparsity pattern (stored entries binned 128 × 128)");
                }
            });
            egui::Grid::new("memory").num_columns(3).show(ui, |ui| {
                let every: String = f
                    .format_estimates(4)
                    .iter()
                    .zip(f.format_estimates(8))
                    .map(|(a, b)| {
                        let cell = |e: &krylov_wgpu::gpu::format::FormatEstimate| {
                            if e.fits {
                                human_bytes(e.bytes as usize)
                            } else {
                                format!("– ({:.1}× fill)", e.fill)
                            }
                        };
                        format!("{}: {} / {}\n", a.format, cell(a), cell(&b))
                    })
                    .collect();
                ui.label("memory").on_hover_text(format!(
                    "every GPU format, f32 / f64 (– : over the padding budget)\n{every}\nauto: {}",
                    f.auto.reason
                ));
                ui.label("f32");
                ui.label("f64");
                ui.end_row();
                let m32 = f.memory_per_format(4);
                let m64 = f.memory_per_format(8);
                let cell = |b: Option<usize>| b.map_or("–".to_string(), human_bytes);
                for (a, b) in m32.iter().zip(&m64) {
                    ui.label(&a.0);
                    ui.label(cell(a.1));
                    ui.label(cell(b.1));
                    ui.end_row();
                }
            });
        }
    }

    pub(super) fn solver_controls(&mut self, ui: &mut Ui) {
        let running = self.running_job.is_some();
        ui.horizontal(|ui| {
            ui.heading("Solver");
            ui.add_space(8.0);
            let can_solve = !self.is_busy()
                && self.problem.is_some()
                && !matches!(self.device.state, DeviceState::Opening);
            if ui
                .add_enabled(
                    can_solve,
                    egui::Button::new(RichText::new("Solve").strong()),
                )
                .clicked()
            {
                self.start_solve();
            }
            if ui.add_enabled(running, egui::Button::new("Stop")).clicked() {
                self.stop();
            }
            if running {
                ui.spinner();
            }
        });
        let f64_ok = self.device.f64_ok();
        ui.add_enabled_ui(!running, |ui| {
            ui.horizontal(|ui| {
                ui.radio_value(&mut self.run_mode, RunMode::Classical, "classical");
                ui.radio_value(&mut self.run_mode, RunMode::Pipelined, "pipelined");
                ui.radio_value(&mut self.run_mode, RunMode::Both, "both, side by side");
            });
            egui::Grid::new("solver").num_columns(2).show(ui, |ui| {
                let l = ui.label("Method");
                egui::ComboBox::from_id_salt("method")
                    .selected_text(self.method.as_str())
                    .show_ui(ui, |ui| {
                        for &m in Method::ALL {
                            ui.selectable_value(&mut self.method, m, m.as_str());
                        }
                    })
                    .response
                    .labelled_by(l.id);
                ui.end_row();

                let l = ui.label("Precision");
                let mut precision = self.precision();
                egui::ComboBox::from_id_salt("precision")
                    .selected_text(precision.to_string())
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut precision, Precision::F32, "f32");
                        ui.add_enabled_ui(f64_ok, |ui| {
                            ui.selectable_value(&mut precision, Precision::F64, "f64")
                                .on_disabled_hover_text("this adapter has no SHADER_F64");
                        });
                    })
                    .response
                    .labelled_by(l.id);
                if precision != self.precision() {
                    self.precision_choice = Some(precision);
                    // Auto may pick another device for this precision.
                    if let Some(selection) = self.device.reopen_for(precision) {
                        self.select_device(selection);
                    }
                }
                ui.end_row();

                let l = ui.label("Format");
                egui::ComboBox::from_id_salt("format")
                    .selected_text(self.format.as_str())
                    .show_ui(ui, |ui| {
                        for &f in krylov_wgpu::solvers::Format::ALL {
                            ui.selectable_value(&mut self.format, f, f.as_str());
                        }
                    })
                    .response
                    .labelled_by(l.id)
                    .on_hover_text(
                        "the storage format of the GPU SpMV; auto chooses from the matrix \
                         (the result table says which and why)",
                    );
                ui.end_row();

                let l = ui.label("Preconditioner");
                egui::ComboBox::from_id_salt("precond")
                    .selected_text(self.precond.as_str())
                    .show_ui(ui, |ui| {
                        for &p in Precond::ALL {
                            ui.selectable_value(&mut self.precond, p, p.as_str());
                        }
                    })
                    .response
                    .labelled_by(l.id);
                ui.end_row();

                let l = ui.label("Check mode");
                egui::ComboBox::from_id_salt("check")
                    .selected_text(self.check_mode.as_str())
                    .show_ui(ui, |ui| {
                        for &c in CheckMode::ALL {
                            ui.selectable_value(&mut self.check_mode, c, c.as_str());
                        }
                    })
                    .response
                    .labelled_by(l.id)
                    .on_hover_text(
                        "paper: partial sums read back every iteration (paper 000)\n\
                         device: scalars stay on the GPU, residuals read once per batch",
                    );
                ui.end_row();

                let l = ui.label("rtol");
                ui.add(egui::TextEdit::singleline(&mut self.rtol_text).desired_width(80.0))
                    .labelled_by(l.id)
                    .on_hover_text("stop when |r| <= max(rtol·|b|, atol)");
                ui.end_row();
                let l = ui.label("atol");
                ui.add(egui::TextEdit::singleline(&mut self.atol_text).desired_width(80.0))
                    .labelled_by(l.id);
                ui.end_row();
                let l = ui.label("Max iterations");
                ui.add(egui::DragValue::new(&mut self.max_iter).range(1..=100_000_000))
                    .labelled_by(l.id);
                ui.end_row();
                let gmres = self.method == Method::Gmres;
                let l = ui.label("Restart m");
                ui.add_enabled(
                    gmres,
                    egui::DragValue::new(&mut self.restart).range(1..=1000),
                )
                .labelled_by(l.id)
                .on_disabled_hover_text("GMRES only");
                ui.end_row();
                let l = ui.label("Gram-Schmidt");
                ui.add_enabled_ui(gmres, |ui| {
                    egui::ComboBox::from_id_salt("gs")
                        .selected_text(self.gs.as_str())
                        .show_ui(ui, |ui| {
                            for &g in GramSchmidt::ALL {
                                ui.selectable_value(&mut self.gs, g, g.as_str());
                            }
                        })
                        .response
                        .labelled_by(l.id);
                });
                ui.end_row();
                let l = ui.label("Batch k");
                ui.add_enabled(
                    self.check_mode == CheckMode::Device,
                    egui::DragValue::new(&mut self.batch).range(0..=1024),
                )
                .labelled_by(l.id)
                .on_hover_text("iterations per submit in device mode (0: adaptive)");
                ui.end_row();
            });
            ui.checkbox(&mut self.profile, "GPU time per kernel (timestamps)");
        });
    }
}
