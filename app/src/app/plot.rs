//! The residual plot: |r|/|b| per iteration on a log scale, one line per run, the tolerance
//! dashed.

use super::{RunKind, StudioApp, kind_color};
use egui::{Color32, Ui};
use egui_plot::{GridInput, GridMark, HLine, HoverPosition, Legend, Line, LineStyle, Plot};

impl StudioApp {
    pub(super) fn plot(&self, ui: &mut Ui, height: f32) {
        let tol = self
            .shown_opts
            .as_ref()
            .map(|o| o.rtol)
            .filter(|t| *t > 0.0);
        Plot::new("residuals")
            .height(height)
            .legend(Legend::default())
            .x_axis_label("iteration")
            .y_axis_label("|r| / |b|  (log scale)")
            .include_y(0.0)
            .include_x(0.0)
            .include_x(10.0)
            .include_y(tol.map_or(-6.0, f64::log10))
            .y_grid_spacer(log_decades)
            .y_axis_formatter(|mark, _| {
                if (mark.value - mark.value.round()).abs() < 1e-9 {
                    format!("1e{}", mark.value.round() as i64)
                } else {
                    String::new()
                }
            })
            .label_formatter(|pos| match pos {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => Some(format!(
                    "{plot_name}\niteration {:.0}\n|r|/|b| = {:.3e}",
                    position.x,
                    10f64.powf(position.y)
                )),
                HoverPosition::Elsewhere { position } => Some(format!(
                    "iteration {:.0}\n|r|/|b| = {:.3e}",
                    position.x,
                    10f64.powf(position.y)
                )),
            })
            .show(ui, |plot_ui| {
                // Wider lines drawn first, underneath: where the runs produce the same
                // residuals (classical and pipelined should, in exact arithmetic; CA-GMRES
                // too, until its basis loses accuracy) every line stays visible.
                let mut runs: Vec<_> = self.runs.iter().map(|r| (line_width(r.kind), r)).collect();
                runs.sort_by(|a, b| b.0.total_cmp(&a.0));
                for (width, run) in runs {
                    let pts = run.points();
                    if pts.is_empty() {
                        continue;
                    }
                    plot_ui.line(
                        Line::new(run.kind.title(self.method), pts)
                            .color(kind_color(run.kind))
                            .width(width),
                    );
                }
                if let Some(t) = tol {
                    plot_ui.hline(
                        HLine::new("tolerance", t.log10())
                            .color(Color32::GRAY)
                            .style(LineStyle::dashed_dense()),
                    );
                }
            });
    }
}

/// The width of a run's line: classical widest, CA-GMRES in between, pipelined thinner and
/// fused (the same iterates as pipelined), cooperative (fused's iterates) and p1 (GMRES's
/// iterates by another recurrence) thinnest, so overlapping curves stay visible.
fn line_width(kind: RunKind) -> f32 {
    match kind {
        RunKind::Classical => 5.0,
        RunKind::Ca => 3.5,
        RunKind::Pipelined => 2.0,
        RunKind::Fused => 1.0,
        RunKind::Workgroup => 1.5,
        RunKind::Cooperative => 1.0,
        RunKind::P1 => 1.0,
    }
}

/// Grid marks at whole decades of a log10 axis (every decade, or every few when zoomed out).
fn log_decades(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return Vec::new();
    }
    let step = ((hi - lo) / 10.0).ceil().max(1.0);
    let mut marks = Vec::new();
    let mut v = (lo / step).floor() * step;
    while v <= hi && marks.len() < 200 {
        if v >= lo {
            marks.push(GridMark {
                value: v,
                step_size: step,
            });
        }
        v += step;
    }
    marks
}
