//! The 'predict' panel: the performance model's ranked time per iteration for the loaded
//! matrix on the open GPU (from the profile `krylov calibrate` wrote), beside the measured
//! time per iteration of the runs shown. Hidden while there is no GPU, no matrix or no
//! profile for the adapter.

use std::cell::RefCell;

use egui::{RichText, Ui};
use krylov_wgpu::Precision;
use krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET;
use krylov_wgpu::model::{
    PredictRequest, Prediction, find_for_adapter, find_for_adapter_in, predict,
};
use krylov_wgpu::solvers::{CheckMode, Method};

use super::StudioApp;

/// Rows of the ranked table.
const SHOWN: usize = 8;

/// What the panel computed for one (matrix, adapter, method, precision, mode).
#[derive(Default)]
pub struct PredictCache {
    key: Option<(usize, String, Method, Precision, CheckMode, usize)>,
    /// `None`: no profile for the adapter; `Err`: a profile that cannot be used.
    result: Option<Result<(Vec<Prediction>, String), String>>,
}

impl StudioApp {
    pub(super) fn predict_panel(&self, ui: &mut Ui, cache: &RefCell<PredictCache>) {
        let (Some(gpu), Some(problem)) = (self.device.state.gpu(), &self.problem) else {
            return;
        };
        let precision = self
            .precision_choice
            .unwrap_or_else(|| self.device.default_precision());
        let key = (
            std::sync::Arc::as_ptr(&problem.matrix) as usize,
            gpu.name.clone(),
            self.method,
            precision,
            self.check_mode,
            self.restart,
        );
        let mut cache = cache.borrow_mut();
        if cache.key.as_ref() != Some(&key) {
            let found = match &self.profile_dir {
                Some(dir) => find_for_adapter_in(dir, &gpu.name, &gpu.backend, &gpu.driver),
                None => find_for_adapter(&gpu.name, &gpu.backend, &gpu.driver),
            };
            cache.result = match found {
                Ok(None) => None,
                Err(e) => Some(Err(e.to_string())),
                Ok(Some((profile, _))) => {
                    let req = PredictRequest {
                        precisions: vec![precision],
                        // GMRES(m): a step's cost grows with m.
                        shape: krylov_wgpu::model::kernels::Shape {
                            batch: 32,
                            restart: self.restart.max(1),
                        },
                        ..PredictRequest::all(
                            Some(self.method),
                            self.check_mode,
                            DEFAULT_PADDING_BUDGET,
                        )
                    };
                    let preds = predict(&profile, &problem.matrix, &req);
                    Some(Ok((preds, profile.created.clone())))
                }
            };
            cache.key = Some(key);
        }
        let Some(result) = &cache.result else { return };
        ui.separator();
        ui.label(RichText::new("Predicted per iteration (performance model)").strong());
        let (preds, created) = match result {
            Ok(p) => p,
            Err(e) => {
                ui.label(RichText::new(e).weak());
                return;
            }
        };
        if preds.is_empty() || preds[0].refused.is_some() {
            ui.label(RichText::new(format!("{} is not modelled", self.method)).weak());
            return;
        }
        ui.label(
            RichText::new(format!(
                "{} {precision}, {} mode; profile of {created}",
                self.method, self.check_mode
            ))
            .weak(),
        );
        // Measured µs per iteration of the runs shown, by (format, variant); CA-GMRES runs
        // are not among the predictions.
        let measured = |p: &Prediction| {
            self.runs
                .iter()
                .filter(|r| r.kind.variant().is_some())
                .filter_map(|r| r.report())
                .find(|r| {
                    r.format == p.format.as_str()
                        && r.variant == p.variant
                        && r.precision == p.precision
                        && r.iterations_recorded > 0
                })
                .map(|r| r.loop_seconds / r.iterations_recorded as f64 * 1e6)
        };
        egui::Grid::new("predictions")
            .striped(true)
            .num_columns(5)
            .show(ui, |ui| {
                for h in [
                    "rank",
                    "format",
                    "variant",
                    "predicted µs/it",
                    "measured µs/it",
                ] {
                    ui.label(RichText::new(h).strong());
                }
                ui.end_row();
                for (i, p) in preds
                    .iter()
                    .filter(|p| p.refused.is_none())
                    .take(SHOWN)
                    .enumerate()
                {
                    ui.label(format!("{}", i + 1));
                    // One cell: a lone "pipelined" label would be a second widget of
                    // that name beside the solver panel's radio button.
                    ui.label(format!("{}, {}", p.format, p.variant));
                    ui.label(format!("{:.2}", p.seconds_per_iteration * 1e6));
                    ui.label(measured(p).map_or("—".into(), |m| format!("{m:.2}")));
                    ui.end_row();
                }
            });
    }
}
