//! The counter table: launches, transfers, iterations and times of the runs shown, side by
//! side, with the GPU time per kernel next to it.

use egui::{RichText, Ui};
use krylov_wgpu::solvers::{SolveReport, Variant};

use super::{RunView, StudioApp, variant_color};
use crate::problem::human_bytes;

impl StudioApp {
    pub(super) fn counters(&self, ui: &mut Ui) {
        if self.runs.is_empty() {
            ui.label(
                RichText::new(
                    "Solve to see the counts: kernel launches (dispatches) and host transfers \
                     per iteration, classical vs pipelined.",
                )
                .weak(),
            );
            return;
        }
        // The headline: launches per iteration side by side.
        let report = |v: Variant| {
            let run = self.runs.iter().find(|r| r.variant == v);
            run.and_then(RunView::report)
        };
        if let (Some(c), Some(p)) = (report(Variant::Classical), report(Variant::Pipelined))
            && c.device.is_gpu()
            && p.device.is_gpu()
            && p.dispatches_per_iteration > 0.0
        {
            ui.label(
                RichText::new(format!(
                    "pipelined {}: {:.2} launches per iteration vs classical {:.2} ({:.1}× fewer); \
                     host transfers {:.3} vs {:.3}",
                    p.method,
                    p.dispatches_per_iteration,
                    c.dispatches_per_iteration,
                    c.dispatches_per_iteration / p.dispatches_per_iteration,
                    p.transfers_per_iteration,
                    c.transfers_per_iteration
                ))
                .strong(),
            );
        }
        ui.horizontal_top(|ui| {
            egui::Grid::new("counters")
                .striped(true)
                .num_columns(self.runs.len() + 1)
                .min_col_width(120.0)
                .show(ui, |ui| {
                    header_row(ui, "counter", &self.runs);
                    let row = |ui: &mut Ui, name: &str, f: &dyn Fn(&RunView) -> String| {
                        ui.label(name);
                        for run in &self.runs {
                            ui.label(f(run));
                        }
                        ui.end_row();
                    };
                    ui.label("device");
                    for run in &self.runs {
                        device_cell(ui, run);
                    }
                    ui.end_row();
                    row(ui, "status", &|r| r.status());
                    row(ui, "converged", &|v| {
                        rep_cell(v, |r| {
                            if r.converged {
                                "yes".into()
                            } else {
                                format!("no: {}", r.reason)
                            }
                        })
                    });
                    row(ui, "iterations", &|v| {
                        rep_cell(v, |r| r.iterations.to_string())
                    });
                    row(ui, "true |b-Ax|/|b|", &|v| {
                        rep_cell(v, |r| format!("{:.3e}", r.relative_residual))
                    });
                    row(ui, "dispatches / iteration", &|v| {
                        gpu_cell(v, |r| format!("{:.2}", r.dispatches_per_iteration))
                    });
                    row(ui, "host transfers / iteration", &|v| {
                        gpu_cell(v, |r| format!("{:.3}", r.transfers_per_iteration))
                    });
                    row(ui, "total dispatches", &|v| {
                        gpu_cell(v, |r| r.counts.dispatches.to_string())
                    });
                    row(ui, "submits / readbacks / uploads", &|v| {
                        gpu_cell(v, |r| {
                            format!(
                                "{} / {} / {}",
                                r.counts.submits, r.counts.readbacks, r.counts.uploads
                            )
                        })
                    });
                    row(ui, "bytes read back / uploaded", &|v| {
                        gpu_cell(v, |r| {
                            format!(
                                "{} / {}",
                                human_bytes(r.counts.bytes_read_back as usize),
                                human_bytes(r.counts.bytes_uploaded as usize)
                            )
                        })
                    });
                    row(ui, "format / matrix bytes", &|v| {
                        gpu_cell(v, |r| {
                            format!("{} / {}", r.format, human_bytes(r.matrix_bytes as usize))
                        })
                    });
                    row(ui, "check mode / batch / recorded", &|v| {
                        gpu_cell(v, |r| {
                            format!(
                                "{} / {} / {}",
                                r.check_mode.map_or("–", |c| c.as_str()),
                                r.batch_size,
                                r.iterations_recorded
                            )
                        })
                    });
                    row(ui, "µs / iteration", &|v| {
                        rep_cell(v, |r| {
                            let its = if r.device.is_gpu() {
                                r.iterations_recorded
                            } else {
                                r.iterations
                            };
                            // The CPU reference times no loop of its own: its whole solve.
                            let secs = if r.loop_seconds > 0.0 {
                                r.loop_seconds
                            } else {
                                r.seconds
                            };
                            if its > 0 {
                                format!("{:.1}", secs / its as f64 * 1e6)
                            } else {
                                "–".into()
                            }
                        })
                    });
                    row(ui, "solve time", &|v| {
                        rep_cell(v, |r| format!("{:.1} ms", r.seconds * 1e3))
                    });
                });
            ui.separator();
            ui.vertical(|ui| self.kernel_times(ui));
        });
    }

    /// GPU time per kernel (timestamps), per iteration recorded, one column per run.
    fn kernel_times(&self, ui: &mut Ui) {
        let mut kernels: Vec<&str> = self
            .runs
            .iter()
            .filter_map(RunView::report)
            .flat_map(|r| r.kernel_times.iter().map(|k| k.name.as_str()))
            .collect();
        kernels.sort_unstable();
        kernels.dedup();
        if kernels.is_empty() {
            if self.profile && self.runs.iter().all(|r| r.outcome.is_some()) {
                ui.label(RichText::new("no kernel timestamps from this device").weak());
            } else if !self.profile {
                ui.label(
                    RichText::new("tick \"GPU time per kernel\" for timestamps per kernel").weak(),
                );
            }
            return;
        }
        egui::Grid::new("kernel-times")
            .striped(true)
            .num_columns(self.runs.len() + 1)
            .show(ui, |ui| {
                header_row(ui, "GPU µs / iteration", &self.runs);
                for name in kernels {
                    ui.label(name);
                    for run in &self.runs {
                        let cell = run.report().and_then(|rep| {
                            let k = rep.kernel_times.iter().find(|k| k.name == name)?;
                            Some((
                                k.seconds * 1e6 / rep.iterations_recorded.max(1) as f64,
                                k.calls,
                            ))
                        });
                        match cell {
                            Some((us, calls)) => {
                                ui.label(format!("{us:.1}"))
                                    .on_hover_text(format!("{calls} calls in the whole solve"));
                            }
                            None => {
                                ui.label("–");
                            }
                        }
                    }
                    ui.end_row();
                }
            });
    }
}

/// A grid's first row: `title`, then each run's variant in its plot colour.
fn header_row(ui: &mut Ui, title: &str, runs: &[RunView]) {
    ui.label(RichText::new(title).strong());
    for run in runs {
        ui.label(
            RichText::new(run.variant.as_str())
                .strong()
                .color(variant_color(run.variant)),
        );
    }
    ui.end_row();
}

/// The device a run solves on (GPU or CPU reference); the report's device and the reason
/// it was chosen in the tooltip.
fn device_cell(ui: &mut Ui, run: &RunView) {
    match run.report() {
        Some(rep) => {
            let text = if rep.device.is_gpu() {
                "GPU"
            } else {
                "CPU (reference)"
            };
            ui.label(text)
                .on_hover_text(format!("{}\n{}", rep.device, rep.device_reason));
        }
        None => {
            ui.label(match run.device {
                "gpu" => "GPU",
                "cpu" => "CPU (reference)",
                other => other,
            });
        }
    }
}

/// A counter cell: the report's value, or a dash while there is no report.
fn rep_cell(run: &RunView, f: impl Fn(&SolveReport) -> String) -> String {
    run.report().map(f).unwrap_or_else(|| "–".into())
}

/// A GPU counter cell: the value for GPU runs, "CPU" for CPU runs (they have no GPU work).
fn gpu_cell(run: &RunView, f: impl Fn(&SolveReport) -> String) -> String {
    match run.report() {
        Some(rep) if rep.device.is_gpu() => f(rep),
        Some(_) => "CPU".into(),
        None => "–".into(),
    }
}
