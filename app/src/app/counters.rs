//! The counter table: launches, transfers, global reductions, host syncs, iterations,
//! restarts and times of the runs shown (classical, pipelined, CA-GMRES), side by side; next
//! to it what the preconditioner costs, CA-GMRES's own record (s, m, TSQR, basis condition),
//! each run's notes (decisions the solver took) and restart log, and the GPU time per kernel.

use egui::{RichText, Ui};
use krylov_wgpu::solvers::{CaReport, PrecondInfo, SolveReport};

use super::{RunKind, RunView, StudioApp, kind_color};
use crate::problem::human_bytes;

impl StudioApp {
    pub(super) fn counters(&self, ui: &mut Ui) {
        if self.runs.is_empty() {
            ui.label(
                RichText::new(
                    "Solve to see the counts: kernel launches (dispatches), host transfers, \
                     global reductions and host syncs per iteration, classical vs pipelined \
                     (vs fused and workgroup for CG and GMRES, p1 and CA-GMRES for GMRES).",
                )
                .weak(),
            );
            return;
        }
        // The headline: launches per iteration side by side.
        let report = |k: RunKind| {
            let run = self.runs.iter().find(|r| r.kind == k);
            run.and_then(RunView::report)
        };
        if let (Some(c), Some(p)) = (report(RunKind::Classical), report(RunKind::Pipelined))
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
        // And CA-GMRES's global reductions and host syncs beside GMRES's.
        if let Some(ca) = report(RunKind::Ca) {
            let others: Vec<String> = [RunKind::Classical, RunKind::Pipelined]
                .into_iter()
                .filter_map(|k| Some((k, report(k)?)))
                .map(|(k, r)| {
                    format!(
                        "{k} {:.2} and {:.3}",
                        r.reductions_per_iteration, r.syncs_per_iteration
                    )
                })
                .collect();
            let vs = if others.is_empty() {
                String::new()
            } else {
                format!(" vs {}", others.join(", "))
            };
            ui.label(
                RichText::new(format!(
                    "CA-GMRES: {:.2} global reductions and {:.3} host syncs per iteration{vs}",
                    ca.reductions_per_iteration, ca.syncs_per_iteration
                ))
                .strong(),
            );
        }
        // And the fused (CG, GMRES), workgroup (CG, GMRES), cooperative (CG) and p1 (GMRES: 1
        // launch and 1 global reduction per step) variants' launches and reductions beside
        // pipelined's; one-workgroup GMRES's per restart cycle (a cycle is its launch).
        for kind in [
            RunKind::Fused,
            RunKind::Workgroup,
            RunKind::Cooperative,
            RunKind::P1,
        ] {
            let Some(f) = report(kind).filter(|f| f.device.is_gpu()) else {
                continue;
            };
            let vs = report(RunKind::Pipelined)
                .map(|p| {
                    format!(
                        " vs pipelined {:.2} and {:.2}",
                        p.dispatches_per_iteration, p.reductions_per_iteration
                    )
                })
                .unwrap_or_default();
            let text = match per_cycle(f) {
                Some((launches, reductions, cycles)) if kind == RunKind::Workgroup => format!(
                    "{kind} {}: {launches:.2} launches and {reductions:.2} global reductions per \
                     restart cycle ({cycles} cycle{}), {:.2} and {:.2} per iteration{vs}",
                    f.method,
                    if cycles == 1 { "" } else { "s" },
                    f.dispatches_per_iteration,
                    f.reductions_per_iteration
                ),
                _ => format!(
                    "{kind} {}: {:.2} launches and {:.2} global reductions per iteration{vs}",
                    f.method, f.dispatches_per_iteration, f.reductions_per_iteration
                ),
            };
            ui.label(RichText::new(text).strong());
        }
        // Three runs leave no room beside their columns: the side tables go below them.
        if self.runs.len() <= 2 {
            ui.horizontal_top(|ui| {
                self.counter_grid(ui);
                ui.separator();
                ui.vertical(|ui| self.side_tables(ui));
            });
        } else {
            self.counter_grid(ui);
            ui.separator();
            self.side_tables(ui);
        }
    }

    /// The counters, a column per run.
    fn counter_grid(&self, ui: &mut Ui) {
        egui::Grid::new("counters")
            .striped(true)
            .num_columns(self.runs.len() + 1)
            .min_col_width(120.0)
            .show(ui, |ui| {
                header_row(ui, "counter", &self.runs);
                let row = |ui: &mut Ui, name: &str, f: &dyn Fn(&RunView) -> String| {
                    text_cells(ui, name, &self.runs, f)
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
                row(ui, "restarts", &|v| rep_cell(v, |r| r.restarts.to_string()));
                row(ui, "true |b-Ax|/|b|", &|v| {
                    rep_cell(v, |r| format!("{:.3e}", r.relative_residual))
                });
                row(ui, "dispatches / iteration", &|v| {
                    gpu_cell(v, |r| format!("{:.2}", r.dispatches_per_iteration))
                });
                row(ui, "host transfers / iteration", &|v| {
                    gpu_cell(v, |r| format!("{:.3}", r.transfers_per_iteration))
                });
                row(ui, "global reductions / iteration", &|v| {
                    counted_cell(v, |r| format!("{:.2}", r.reductions_per_iteration))
                });
                row(ui, "host syncs / iteration", &|v| {
                    counted_cell(v, |r| format!("{:.3}", r.syncs_per_iteration))
                });
                row(ui, "host syncs / restart cycle", &|v| {
                    rep_cell(v, syncs_per_cycle)
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
    }

    /// Beside (or below) the counters: the preconditioner, CA-GMRES's record, the notes and
    /// the kernel times.
    fn side_tables(&self, ui: &mut Ui) {
        self.precond_table(ui);
        self.ca_table(ui);
        self.devices_table(ui);
        self.run_notes(ui);
        self.kernel_times(ui);
    }

    /// What the preconditioner of each run is and costs (nothing when no run has one).
    fn precond_table(&self, ui: &mut Ui) {
        let preconditioned = self
            .runs
            .iter()
            .filter_map(RunView::report)
            .any(|r| r.preconditioner.is_some());
        if !preconditioned {
            return;
        }
        egui::Grid::new("preconditioner")
            .striped(true)
            .num_columns(self.runs.len() + 1)
            .show(ui, |ui| {
                header_row(ui, "preconditioner", &self.runs);
                let row = |ui: &mut Ui, name: &str, f: &dyn Fn(&RunView) -> String| {
                    text_cells(ui, name, &self.runs, f)
                };
                row(ui, "kind / trisolve", &|v| precond_cell(v, precond_kind));
                row(ui, "levels L / U", &|v| precond_cell(v, precond_levels));
                row(ui, "dispatches / apply", &|v| {
                    gpu_cell(v, |r| {
                        r.preconditioner
                            .as_ref()
                            .map_or("none".into(), |p| p.dispatches_per_apply.to_string())
                    })
                });
                row(ui, "factor nnz / shift", &|v| {
                    precond_cell(v, precond_factor)
                });
                row(ui, "set-up", &|v| {
                    precond_cell(v, |p| format!("{:.1} ms", p.setup_seconds * 1e3))
                });
            });
        ui.add_space(6.0);
    }

    /// CA-GMRES's own record, when a CA-GMRES run finished: s, m, basis and TSQR, its cycles,
    /// the reductions and host syncs of a full CA cycle, the worst basis condition number and
    /// the TSQR fallbacks.
    fn ca_table(&self, ui: &mut Ui) {
        let Some((run, ca)) = self
            .runs
            .iter()
            .find_map(|r| Some((r, r.report()?.cagmres.as_ref()?)))
        else {
            return;
        };
        egui::Grid::new("cagmres")
            .striped(true)
            .num_columns(2)
            .show(ui, |ui| {
                ui.label(
                    RichText::new(run.kind.label())
                        .strong()
                        .color(kind_color(run.kind)),
                );
                ui.end_row();
                for (name, value) in ca_rows(ca) {
                    ui.label(name);
                    ui.label(value);
                    ui.end_row();
                }
            });
        ui.add_space(6.0);
    }

    /// Each finished run's notes (decisions the solver took, the preconditioner's shift) and
    /// its restart log, under a header in the run's colour; nothing for runs without any.
    fn run_notes(&self, ui: &mut Ui) {
        for run in &self.runs {
            let Some(rep) = run.report() else { continue };
            let notes = note_lines(&rep.notes, rep.preconditioner.as_ref());
            if notes.is_empty() && rep.restart_log.is_empty() {
                continue;
            }
            let title = format!(
                "{} run: {} note{}, {} restart{}",
                run.kind,
                notes.len(),
                if notes.len() == 1 { "" } else { "s" },
                rep.restarts,
                if rep.restarts == 1 { "" } else { "s" },
            );
            egui::CollapsingHeader::new(RichText::new(title).color(kind_color(run.kind)))
                .id_salt(("run-notes", run.kind.as_str()))
                .default_open(true)
                .show(ui, |ui| {
                    for note in &notes {
                        ui.label(format!("• {note}"));
                    }
                    if !rep.restart_log.is_empty() {
                        let n = rep.restart_log.len();
                        egui::CollapsingHeader::new(format!("restart log ({n})"))
                            .id_salt(("restart-log", run.kind.as_str()))
                            .default_open(n <= 5)
                            .show(ui, |ui| {
                                for (i, line) in rep.restart_log.iter().enumerate() {
                                    ui.label(format!("{}. {line}", i + 1));
                                }
                            });
                    }
                });
        }
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

/// A grid's first row: `title`, then each run's kind in its plot colour.
fn header_row(ui: &mut Ui, title: &str, runs: &[RunView]) {
    ui.label(RichText::new(title).strong());
    for run in runs {
        ui.label(
            RichText::new(run.kind.label())
                .strong()
                .color(kind_color(run.kind)),
        );
    }
    ui.end_row();
}

/// A grid row: `name`, then `f` of each run.
fn text_cells(ui: &mut Ui, name: &str, runs: &[RunView], f: &dyn Fn(&RunView) -> String) {
    ui.label(name);
    for run in runs {
        ui.label(f(run));
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

/// A cell of a count every GPU run reports and the CPU reference only for (CA-)GMRES (what
/// the algorithm needs): the value, or "CPU" where the CPU reference counted none.
fn counted_cell(run: &RunView, f: impl Fn(&SolveReport) -> String) -> String {
    match run.report() {
        Some(rep) if rep.device.is_gpu() || rep.reductions_per_iteration > 0.0 => f(rep),
        Some(_) => "CPU".into(),
        None => "–".into(),
    }
}

/// Host syncs per restart cycle and the cycles: `1.00 (12 cycles)`; a dash for methods
/// without restart cycles.
fn syncs_per_cycle(r: &SolveReport) -> String {
    match (r.syncs_per_cycle, r.cycles) {
        (Some(s), Some(c)) => format!("{s:.2} ({c} cycle{})", if c == 1 { "" } else { "s" }),
        _ => "–".into(),
    }
}

/// The iteration loop's launches and global reductions per restart cycle, and the cycles, of
/// a run with restart cycles (GMRES); `None` for methods without them.
fn per_cycle(r: &SolveReport) -> Option<(f64, f64, usize)> {
    let cycles = r.cycles.filter(|&c| c > 0)?;
    let c = cycles as f64;
    Some((
        r.loop_counts.dispatches as f64 / c,
        r.loop_counts.reductions as f64 / c,
        cycles,
    ))
}

/// The rows of CA-GMRES's table: (name, value).
fn ca_rows(ca: &CaReport) -> Vec<(&'static str, String)> {
    let o = &ca.options;
    let arnoldi = ca.cycles.iter().filter(|c| c.kind == "arnoldi").count();
    let cycles = if arnoldi > 0 {
        format!("{} ({arnoldi} Arnoldi)", ca.cycles.len())
    } else {
        ca.cycles.len().to_string()
    };
    let per_cycle = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.2}"));
    let cond = ca
        .cycles
        .iter()
        .filter(|c| c.kind != "arnoldi")
        .map(|c| c.basis_cond)
        .fold(f64::NAN, f64::max);
    let fallbacks = ca
        .cycles
        .iter()
        .flat_map(|c| &c.tsqr)
        .filter(|t| t.fallback_reason.is_some())
        .count();
    vec![
        (
            "s / m / basis / TSQR",
            format!("{} / {} / {} / {}", o.s, o.m, o.basis, o.tsqr),
        ),
        ("cycles", cycles),
        (
            "reductions / syncs per CA cycle",
            format!(
                "{} / {}",
                per_cycle(ca.reductions_per_cycle),
                per_cycle(ca.syncs_per_cycle)
            ),
        ),
        (
            "largest basis cond",
            if cond.is_finite() {
                format!("{cond:.2e}")
            } else {
                "–".into()
            },
        ),
        ("TSQR fallbacks", fallbacks.to_string()),
    ]
}

/// A preconditioner cell: `f` of the run's preconditioner, `none` without one, a dash while
/// there is no report.
fn precond_cell(run: &RunView, f: impl Fn(&PrecondInfo) -> String) -> String {
    rep_cell(run, |r| r.preconditioner.as_ref().map_or("none".into(), &f))
}

/// `ilu0 / levels`, `ic0 / sweeps:6`, `jacobi / –`.
fn precond_kind(p: &PrecondInfo) -> String {
    match p.trisolve {
        Some(t) => format!("{} / {t}", p.kind),
        None => format!("{} / –", p.kind),
    }
}

/// The level counts of the L and U solves: `12 / 12`, or a dash without levels.
fn precond_levels(p: &PrecondInfo) -> String {
    match p.levels {
        Some([l, u]) => format!("{l} / {u}"),
        None => "–".into(),
    }
}

/// The factors' stored entries and the diagonal shift: `4992 / 0`, `4992 / 1.00e-3 (3 tries)`;
/// a dash for a preconditioner without a factorisation.
fn precond_factor(p: &PrecondInfo) -> String {
    if p.factor_attempts == 0 {
        return "–".into();
    }
    if p.shift == 0.0 {
        format!("{} / 0", p.factor_nnz)
    } else {
        format!(
            "{} / {:.2e} ({} tries)",
            p.factor_nnz, p.shift, p.factor_attempts
        )
    }
}

/// What a run's notes section lists: the solver's notes, then the preconditioner's shift
/// notice.
fn note_lines(notes: &[String], p: Option<&PrecondInfo>) -> Vec<String> {
    let shift = p
        .and_then(|p| p.shift_notice.as_ref())
        .map(|n| format!("shift: {n}"));
    notes.iter().cloned().chain(shift).collect()
}

#[cfg(test)]
mod tests {
    use krylov_wgpu::solvers::{Precond, Trisolve};

    use super::*;

    fn ilu0() -> PrecondInfo {
        PrecondInfo {
            kind: Precond::Ilu0,
            shift: 0.0,
            factor_attempts: 1,
            shift_notice: None,
            factor_nnz: 4992,
            trisolve: Some(Trisolve::Levels),
            levels: Some([63, 63]),
            dispatches_per_apply: 8,
            setup_seconds: 0.002,
        }
    }

    #[test]
    fn preconditioner_cells() {
        let p = ilu0();
        assert_eq!(precond_kind(&p), "ilu0 / levels");
        assert_eq!(precond_levels(&p), "63 / 63");
        assert_eq!(precond_factor(&p), "4992 / 0");
        let shifted = PrecondInfo {
            shift: 1e-3,
            factor_attempts: 3,
            shift_notice: Some("zero pivot in row 7".into()),
            trisolve: Some(Trisolve::Sweeps(6)),
            levels: None,
            ..ilu0()
        };
        assert_eq!(precond_kind(&shifted), "ilu0 / sweeps:6");
        assert_eq!(precond_levels(&shifted), "–");
        assert_eq!(precond_factor(&shifted), "4992 / 1.00e-3 (3 tries)");
        let notes = vec!["ran the classical variant because …".to_string()];
        assert_eq!(
            note_lines(&notes, Some(&shifted)),
            vec![notes[0].clone(), "shift: zero pivot in row 7".to_string()]
        );
        assert_eq!(note_lines(&notes, Some(&p)), notes);
        assert!(note_lines(&[], None).is_empty());
        let jacobi = PrecondInfo {
            kind: Precond::Jacobi,
            factor_attempts: 0,
            factor_nnz: 0,
            trisolve: None,
            levels: None,
            ..ilu0()
        };
        assert_eq!(precond_kind(&jacobi), "jacobi / –");
        assert_eq!(precond_factor(&jacobi), "–");
    }
}
