//! The residual plot: |r|/|b| per iteration on a log scale, one line per run, the tolerance
//! dashed.

use egui::{Color32, Ui};
use egui_plot::{GridInput, GridMark, HLine, HoverPosition, Legend, Line, LineStyle, Plot};
use krylov_wgpu::solvers::Variant;

use super::{StudioApp, variant_color};

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
                for run in &self.runs {
                    let pts = run.points();
                    if pts.is_empty() {
                        continue;
                    }
                    // Classical drawn wide underneath: where both variants produce the same
                    // residuals (as they should in exact arithmetic) both stay visible.
                    let width = match run.variant {
                        Variant::Classical => 5.0,
                        Variant::Pipelined => 2.0,
                    };
                    plot_ui.line(
                        Line::new(format!("{} {}", run.variant, self.method), pts)
                            .color(variant_color(run.variant))
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
