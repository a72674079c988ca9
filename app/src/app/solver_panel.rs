//! The Solver panel (bottom of the left side): Solve and Stop, the runs to make (classical,
//! pipelined, both; for GMRES also fused, p1, workgroup, CA-GMRES and all three; for CG fused,
//! workgroup, cooperative and all three), and the settings of the solve.

use egui::{RichText, Ui};
use krylov_wgpu::Precision;
use krylov_wgpu::solvers::cg::cooperative;
use krylov_wgpu::solvers::gmres::workgroup as gmres_workgroup;
use krylov_wgpu::solvers::{
    Basis, CheckMode, Format, GramSchmidt, Method, Precond, Side, Trisolve, Tsqr,
};

use super::widgets::{enum_combo, labelled};
use super::{MAX_S, MAX_SWEEPS, RunMode, StudioApp, TrisolveMode};
use crate::device_panel::DeviceState;

/// The methods the Method box offers: CA-GMRES is not one of them but a run of GMRES.
const METHODS: &[Method] = &[
    Method::Cg,
    Method::Bicgstab,
    Method::Gmres,
    Method::Bicg,
    Method::Jacobi,
];

/// What the CA-GMRES radio buttons say when disabled by a left preconditioner.
const CA_NO_PRECOND: &str = "CA-GMRES applies the preconditioner on the right (x = M⁻¹y): \
                             set Side to right";

impl StudioApp {
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
            let gmres = self.method == Method::Gmres;
            if gmres {
                // Fused, p1 and workgroup (pipelined GMRES's steps in fewer launches) beside
                // GMRES's two variants, CA-GMRES and all three on a row of their own (one row
                // is wider than the panel); CA-GMRES preconditions on the right only.
                let plain = self.precond == Precond::None || self.side == Side::Right;
                ui.horizontal(|ui| {
                    ui.radio_value(&mut self.run_mode, RunMode::Fused, "fused")
                        .on_hover_text(
                            "pipelined GMRES's step in two launches instead of four (the basis \
                             kept unnormalised, each vector divided by its norm where it is read)",
                        );
                    ui.radio_value(&mut self.run_mode, RunMode::P1, "p1")
                        .on_hover_text(
                            "p(1)-GMRES: one launch and one global reduction per step (a second \
                             basis u = A·v by a recurrence; a cycle whose norm loses its accuracy \
                             restarts)",
                        );
                    ui.radio_value(&mut self.run_mode, RunMode::Workgroup, "workgroup")
                        .on_hover_text(format!(
                            "pipelined GMRES's steps in one workgroup, a whole cycle per launch \
                             and no global reduction in its steps: for systems of up to a few \
                             thousand rows (restart m at most {})",
                            gmres_workgroup::MAX_RESTART
                        ));
                });
                ui.horizontal(|ui| {
                    ui.add_enabled_ui(plain, |ui| {
                        ui.radio_value(&mut self.run_mode, RunMode::Ca, "CA-GMRES")
                            .on_hover_text(
                                "communication-avoiding GMRES(s, m): s basis vectors per block \
                                 from the matrix powers kernel, one block orthogonalisation \
                                 and TSQR per block",
                            )
                            .on_disabled_hover_text(CA_NO_PRECOND);
                        ui.radio_value(&mut self.run_mode, RunMode::All, "all three")
                            .on_hover_text("classical, pipelined and CA-GMRES, side by side")
                            .on_disabled_hover_text(CA_NO_PRECOND);
                    });
                });
            }
            if self.method == Method::Cg {
                // Fused, one-workgroup and cooperative CG beside CG's two variants.
                ui.horizontal(|ui| {
                    ui.radio_value(&mut self.run_mode, RunMode::Fused, "fused")
                        .on_hover_text(
                            "pipelined CG's recurrences in one launch and one global reduction \
                             per iteration (the product forms the new direction on the fly)",
                        );
                    ui.radio_value(&mut self.run_mode, RunMode::Workgroup, "workgroup")
                        .on_hover_text(
                            "classical CG in one workgroup, 32 whole iterations per launch and \
                             no global reduction: for systems of up to a few thousand rows",
                        );
                    ui.radio_value(&mut self.run_mode, RunMode::Cooperative, "cooperative")
                        .on_hover_text(format!(
                            "fused CG's iteration {} times per launch by workgroups that meet \
                             at a grid barrier: one global reduction per iteration (falls back \
                             to fused CG where the workgroups are not all resident at once)",
                            cooperative::ITERATIONS_PER_LAUNCH
                        ));
                    ui.radio_value(&mut self.run_mode, RunMode::All, "all three")
                        .on_hover_text("classical, pipelined and fused, side by side");
                });
            }
            egui::Grid::new("solver").num_columns(2).show(ui, |ui| {
                labelled(ui, "Method", |ui| {
                    enum_combo(ui, "method", &mut self.method, METHODS, Method::as_str)
                });
                // CA-GMRES is GMRES's only.
                self.run_mode = self.run_mode.for_method(self.method);
                ui.end_row();

                let mut precision = self.precision();
                labelled(ui, "Precision", |ui| {
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
                });
                if precision != self.precision() {
                    self.precision_choice = Some(precision);
                    // Auto may pick another device for this precision.
                    if let Some(selection) = self.device.reopen_for(precision) {
                        self.select_device(selection);
                    }
                }
                ui.end_row();

                labelled(ui, "Format", |ui| {
                    enum_combo(ui, "format", &mut self.format, Format::ALL, Format::as_str)
                })
                .on_hover_text(
                    "the storage format of the GPU SpMV; auto chooses from the matrix \
                     (the result table says which and why)",
                );
                ui.end_row();

                labelled(ui, "Preconditioner", |ui| {
                    enum_combo(
                        ui,
                        "precond",
                        &mut self.precond,
                        Precond::ALL,
                        Precond::as_str,
                    )
                });
                ui.end_row();

                let sided = matches!(self.method, Method::Gmres | Method::Bicgstab);
                labelled(ui, "Side", |ui| {
                    ui.add_enabled_ui(sided, |ui| {
                        enum_combo(ui, "side", &mut self.side, Side::ALL, Side::as_str)
                    })
                    .inner
                })
                .on_hover_text(
                    "the side of the preconditioner (GMRES and BiCGStab)\n\
                     left: M⁻¹A x = M⁻¹b, monitors the preconditioned residual |M⁻¹r|\n\
                     right: A M⁻¹ y = b, monitors the true residual |b - Ax|",
                )
                .on_disabled_hover_text("GMRES and BiCGStab only");
                ui.end_row();

                let factored = matches!(self.precond, Precond::Ilu0 | Precond::Ic0 | Precond::Ilut);
                labelled(ui, "Triangular solve", |ui| {
                    ui.add_enabled_ui(factored, |ui| {
                        ui.horizontal(|ui| {
                            let combo = enum_combo(
                                ui,
                                "trisolve",
                                &mut self.trisolve,
                                TrisolveMode::ALL,
                                TrisolveMode::as_str,
                            );
                            let k = ui.label("K");
                            ui.add_enabled(
                                self.trisolve == TrisolveMode::Sweeps,
                                egui::DragValue::new(&mut self.sweeps).range(1..=MAX_SWEEPS),
                            )
                            .labelled_by(k.id)
                            .on_hover_text("Jacobi sweeps per triangular solve");
                            combo
                        })
                        .inner
                    })
                    .inner
                })
                .on_hover_text(format!(
                    "how ilu0 and ic0 apply their triangular factors\n\
                     levels: exact solves by level scheduling (about a dispatch per level)\n\
                     sweeps: K Jacobi sweeps, a dispatch each (exact once K reaches the \
                     level count, approximate before)\n\
                     auto: levels when a solve needs at most {} dispatches, else {} sweeps",
                    Trisolve::AUTO_MAX_DISPATCHES,
                    Trisolve::AUTO_SWEEPS
                ))
                .on_disabled_hover_text("ilu0 and ic0 only");
                ui.end_row();

                labelled(ui, "Check mode", |ui| {
                    enum_combo(
                        ui,
                        "check",
                        &mut self.check_mode,
                        CheckMode::ALL,
                        CheckMode::as_str,
                    )
                })
                .on_hover_text(
                    "paper: partial sums read back every iteration (paper 000)\n\
                     device: scalars stay on the GPU, residuals read once per batch",
                );
                ui.end_row();

                labelled(ui, "rtol", |ui| {
                    ui.add(egui::TextEdit::singleline(&mut self.rtol_text).desired_width(80.0))
                })
                .on_hover_text("stop when |r| <= max(rtol·|b|, atol)");
                ui.end_row();
                labelled(ui, "atol", |ui| {
                    ui.add(egui::TextEdit::singleline(&mut self.atol_text).desired_width(80.0))
                });
                ui.end_row();
                labelled(ui, "Max iterations", |ui| {
                    ui.add(egui::DragValue::new(&mut self.max_iter).range(1..=100_000_000))
                });
                ui.end_row();
                labelled(ui, "Restart m", |ui| {
                    ui.add_enabled(
                        gmres,
                        egui::DragValue::new(&mut self.restart).range(1..=1000),
                    )
                })
                .on_disabled_hover_text("GMRES only");
                ui.end_row();
                labelled(ui, "Gram-Schmidt", |ui| {
                    ui.add_enabled_ui(gmres, |ui| {
                        enum_combo(
                            ui,
                            "gs",
                            &mut self.gs,
                            GramSchmidt::ALL,
                            GramSchmidt::as_str,
                        )
                    })
                    .inner
                });
                ui.end_row();
                if gmres {
                    let ca = self.run_mode.has_ca(self.method);
                    self.ca_rows(ui, ca);
                }
                labelled(ui, "Batch k", |ui| {
                    ui.add_enabled(
                        self.check_mode == CheckMode::Device,
                        egui::DragValue::new(&mut self.batch).range(0..=1024),
                    )
                })
                .on_hover_text("iterations per submit in device mode (0: adaptive)");
                ui.end_row();
                labelled(ui, "Devices", |ui| {
                    ui.add(egui::TextEdit::singleline(&mut self.devices_text).desired_width(60.0))
                })
                .on_hover_text(
                    "split the rows over several devices (CG, BiCGStab, GMRES and CA-GMRES; BiCG puts its \
                     A- and A^T-recurrences on two): a count N or adapter indices like 0,1 \
                     (an index may repeat); empty: one device",
                );
                ui.end_row();
            });
            ui.checkbox(&mut self.profile, "GPU time per kernel (timestamps)");
        });
    }

    /// CA-GMRES's rows of the Solver grid (GMRES only; enabled when a CA-GMRES run is
    /// selected): s, the TSQR and the basis. m is the restart above, shared with GMRES so
    /// that the runs compare at the same m.
    fn ca_rows(&mut self, ui: &mut Ui, ca: bool) {
        let hint = "choose CA-GMRES or all three to run it";
        labelled(ui, "CA block s", |ui| {
            ui.add_enabled(ca, egui::DragValue::new(&mut self.s_step).range(1..=MAX_S))
        })
        .on_hover_text(format!(
            "CA-GMRES: basis vectors per block (one matrix powers call, one block \
             orthogonalisation and TSQR each); the restart m must be a multiple of s \
             (at most {MAX_S} on the GPU)"
        ))
        .on_disabled_hover_text(hint);
        ui.end_row();
        labelled(ui, "TSQR", |ui| {
            ui.add_enabled_ui(ca, |ui| {
                enum_combo(ui, "tsqr", &mut self.tsqr, &Tsqr::ALL, Tsqr::as_str)
            })
            .inner
        })
        .on_hover_text(
            "CA-GMRES: the tall-skinny QR of each block (cholqr2: 2 reductions, 2 host syncs; \
             cholqr, svqr, caqr: 1 and 1; cgs2, cgs, mgs: 3s-2, 2s-1, s(s+1)/2 reductions, no sync; \
             the GPU reads a cholqr/cholqr2/cgs2/cgs/mgs cycle once)",
        )
        .on_disabled_hover_text(hint);
        ui.end_row();
        labelled(ui, "Basis", |ui| {
            ui.add_enabled_ui(ca, |ui| {
                enum_combo(ui, "basis", &mut self.basis, &Basis::ALL, Basis::as_str)
            })
            .inner
        })
        .on_hover_text(
            "CA-GMRES: the basis of the matrix powers\n\
             newton: shifted by Leja-ordered Ritz values of a first, standard GMRES cycle\n\
             monomial: v, Av, A²v, … (its condition number grows fast with s)",
        )
        .on_disabled_hover_text(hint);
        ui.end_row();
    }
}
