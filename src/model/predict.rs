//! Predicted time per iteration from a [`Profile`] and a matrix's layouts, and the
//! model's choice of format and variant.

use super::kernels::{Curve, IterationPlan, MODELLED, Shape, SpmvBytes, curve_key, iteration_plan};
use super::layout::{MODEL_FORMATS, SpmvLayout, spmv_layout};
use super::profile::Profile;
use crate::base::{CheckMode, Format, Method, Precision, Variant};
use crate::matrix::Csr;

/// The prediction for one (format, precision, method, variant).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Prediction {
    pub format: Format,
    pub precision: Precision,
    pub method: Method,
    pub variant: Variant,
    pub check_mode: CheckMode,
    /// Why the format cannot hold this matrix (then no time is predicted).
    pub refused: Option<String>,
    /// Predicted seconds per iteration (NaN when refused).
    pub seconds_per_iteration: f64,
    /// `iterations ×` the above: the loop's time for that many iterations.
    pub seconds_for_iterations: f64,
    pub iterations: usize,
    /// GMRES's restart length m (its plan is a cycle: per iteration is over m steps).
    pub restart: Option<usize>,
    pub dispatches_per_iteration: f64,
    pub round_trips_per_iteration: f64,
    pub bytes_per_iteration: f64,
    /// Bytes of one SpMV in this format (the layout's index data, 2 × stored values, y).
    pub spmv_bytes: u64,
    /// Bytes of the matrix's arrays on the GPU.
    pub matrix_bytes: u64,
    /// Bytes of x's sectors beyond one value per stored entry ([`super::gather`]) and the
    /// profile's weight of them: the SpMV is timed at `spmv_bytes + weight · excess` (fused
    /// CG's product, which gathers three vectors, with its own weight of three times the
    /// excess: [`super::kernels::SpmvBytes`]).
    pub gather_excess_bytes: u64,
    pub gather_weight: f64,
    /// Row chunks the SpMV loops over ([`SpmvLayout::passes`]).
    pub spmv_passes: u64,
    /// The SpMV's longest per-thread loop ([`SpmvLayout::chain`]), the profile's time per
    /// step of it, and what each launch with A adds for it ([`Profile::chain_seconds_for`]:
    /// the steps beyond the format's reference chain; fused CG's product has its own τ).
    pub spmv_chain: u64,
    pub chain_step_seconds: f64,
    pub chain_seconds: f64,
    /// Seconds the solver's loop takes per launch beyond its kernels at this size
    /// ([`Profile::launch_residual`], included in `seconds_per_iteration`; not in
    /// `kernel_seconds`).
    pub launch_residual_seconds: f64,
    /// Predicted seconds of each launch of one iteration (GMRES: of one cycle), in launch
    /// order.
    pub kernel_seconds: Vec<(String, f64)>,
}

/// What to predict.
#[derive(Debug, Clone)]
pub struct PredictRequest {
    pub formats: Vec<Format>,
    pub precisions: Vec<Precision>,
    pub variants: Vec<(Method, Variant)>,
    pub check_mode: CheckMode,
    /// Iterations per submit in `device` mode, GMRES's restart length.
    pub shape: Shape,
    /// Iterations of `seconds_for_iterations`.
    pub iterations: usize,
    pub max_padding: f64,
}

impl PredictRequest {
    /// Every format, both precisions, every modelled variant of `method` (all modelled
    /// methods for `None`).
    pub fn all(method: Option<Method>, check_mode: CheckMode, max_padding: f64) -> Self {
        PredictRequest {
            formats: MODEL_FORMATS.to_vec(),
            precisions: vec![Precision::F32, Precision::F64],
            variants: MODELLED
                .iter()
                .copied()
                .filter(|(m, _)| method.is_none_or(|x| x == *m))
                .collect(),
            check_mode,
            shape: Shape::batch(32),
            iterations: 1000,
            max_padding,
        }
    }
}

/// Seconds of one iteration of `plan` on the profiled device, per launch: t = x / B(x) + t_d
/// with the launch's curve (its format's for launches that multiply by A, plus `chain`
/// seconds for their longest per-thread loop; a constant for the finishing launches; t_d
/// alone for a [`Curve::Launch`]), plus the round trips, over the iterations the plan
/// covers; `Err` names a curve the profile lacks.
fn time_plan(
    profile: &Profile,
    plan: &IterationPlan,
    format: Format,
    chain_steps: u64,
) -> Result<(f64, Vec<(String, f64)>), String> {
    let mut per_kernel = Vec::with_capacity(plan.kernels.len());
    for k in &plan.kernels {
        let key = curve_key(k, format);
        let chain = || profile.chain_seconds_for(format, k.gathers, chain_steps);
        let busy = match k.curve {
            Curve::Finish => profile.constants.get(&key).copied(),
            Curve::Matrix => profile.curve(&key).map(|c| c.seconds(k.bytes) + chain()),
            Curve::Streaming => profile.curve(&key).map(|c| c.seconds(k.bytes)),
            Curve::Launch => Some(0.0),
        };
        let busy = busy.ok_or_else(|| format!("the profile has no curve for {key}"))?;
        per_kernel.push((k.name.to_string(), busy + profile.dispatch_seconds));
    }
    let total = per_kernel.iter().map(|(_, t)| t).sum::<f64>() / plan.iterations
        + plan.round_trips * profile.round_trip_seconds;
    Ok((total, per_kernel))
}

/// The layouts of `a` in every requested format (or why not) on the profiled device.
pub fn layouts(
    profile: &Profile,
    a: &Csr<f64>,
    formats: &[Format],
    max_padding: f64,
) -> Vec<(Format, Result<SpmvLayout, String>)> {
    let params = profile.layout_params(max_padding);
    formats
        .iter()
        .map(|&f| (f, spmv_layout(a, f, &params)))
        .collect()
}

/// Predicts every combination of `req` on `a`, fastest first (refused ones last).
pub fn predict(profile: &Profile, a: &Csr<f64>, req: &PredictRequest) -> Vec<Prediction> {
    let layouts = layouts(profile, a, &req.formats, req.max_padding);
    predict_on_layouts(profile, &layouts, req)
}

/// [`predict`] on layouts computed already.
pub fn predict_on_layouts(
    profile: &Profile,
    layouts: &[(Format, Result<SpmvLayout, String>)],
    req: &PredictRequest,
) -> Vec<Prediction> {
    let mut out = Vec::new();
    for (format, layout) in layouts {
        for &precision in &req.precisions {
            for &(method, variant) in &req.variants {
                out.push(predict_one(
                    profile, *format, layout, precision, method, variant, req,
                ));
            }
        }
    }
    out.sort_by(|a, b| {
        a.refused
            .is_some()
            .cmp(&b.refused.is_some())
            .then(a.seconds_per_iteration.total_cmp(&b.seconds_per_iteration))
    });
    out
}

fn predict_one(
    profile: &Profile,
    format: Format,
    layout: &Result<SpmvLayout, String>,
    precision: Precision,
    method: Method,
    variant: Variant,
    req: &PredictRequest,
) -> Prediction {
    let s = precision.size();
    let mut p = Prediction {
        format,
        precision,
        method,
        variant,
        check_mode: req.check_mode,
        refused: None,
        seconds_per_iteration: f64::NAN,
        seconds_for_iterations: f64::NAN,
        iterations: req.iterations,
        restart: (method == Method::Gmres).then_some(req.shape.restart),
        dispatches_per_iteration: 0.0,
        round_trips_per_iteration: 0.0,
        bytes_per_iteration: 0.0,
        spmv_bytes: 0,
        matrix_bytes: 0,
        gather_excess_bytes: 0,
        gather_weight: 0.0,
        spmv_passes: 0,
        spmv_chain: 0,
        chain_step_seconds: 0.0,
        chain_seconds: 0.0,
        launch_residual_seconds: 0.0,
        kernel_seconds: Vec::new(),
    };
    let layout = match layout {
        Ok(l) => l,
        Err(why) => {
            p.refused = Some(why.clone());
            return p;
        }
    };
    p.spmv_bytes = layout.spmv_bytes(s);
    p.matrix_bytes = layout.matrix_bytes(s);
    p.gather_excess_bytes = layout.gather_excess_bytes(s);
    p.gather_weight = profile.gather_weight(format);
    p.spmv_passes = layout.passes;
    p.spmv_chain = layout.chain;
    p.chain_step_seconds = profile.chain_step(format);
    p.chain_seconds = profile.chain_seconds(format, layout.chain);
    let largest = (layout.stored * s as u64).max(layout.index_bytes);
    if largest > profile.max_binding_bytes {
        p.refused = Some(format!(
            "an array of {largest} bytes exceeds the adapter's binding limit of {}",
            profile.max_binding_bytes
        ));
        return p;
    }
    let Some(plan) = iteration_plan(
        method,
        variant,
        req.check_mode,
        layout.nrows,
        SpmvBytes::of(
            layout,
            s,
            profile.gather_weight(format),
            profile.gather_weight_for(format, 3.0),
        ),
        s,
        req.shape,
    ) else {
        let longest = crate::solvers::gmres::P1_MAX_RESTART;
        p.refused = Some(match (method, variant) {
            (Method::Gmres, _) if req.check_mode != CheckMode::Device => {
                "GMRES is modelled in device mode only".to_string()
            }
            (Method::Gmres, Variant::P1) if req.shape.restart > longest => {
                format!("p1 GMRES runs cycles of at most {longest} steps")
            }
            _ => format!("{variant} {method} is not modelled"),
        });
        return p;
    };
    // The weight of the product's excess: its own for a product gathering several vectors.
    let vectors = plan.kernels.iter().map(|k| k.gathers).fold(1.0, f64::max);
    p.gather_weight = profile.gather_weight_for(format, vectors);
    p.chain_step_seconds = profile.chain_step_for(format, vectors).0;
    p.chain_seconds = profile.chain_seconds_for(format, vectors, layout.chain);
    let (t, kernels) = match time_plan(profile, &plan, format, layout.chain) {
        Ok(timed) => timed,
        Err(why) => {
            p.refused = Some(why);
            return p;
        }
    };
    // The loop's residual per launch (negative where the loop overlaps its launches), never
    // taking an iteration below half its kernels' sum.
    p.launch_residual_seconds = profile.launch_residual(method, variant, layout.nrows);
    let t = (t + plan.dispatches() * p.launch_residual_seconds).max(0.5 * t);
    p.seconds_per_iteration = t;
    p.seconds_for_iterations = t * req.iterations as f64;
    p.dispatches_per_iteration = plan.dispatches();
    p.round_trips_per_iteration = plan.round_trips;
    p.bytes_per_iteration = plan.bytes();
    p.kernel_seconds = kernels;
    p
}

/// The model's choice: the fastest prediction and a sentence saying so.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChoice {
    pub format: Format,
    pub variant: Variant,
    pub predicted_seconds_per_iteration: f64,
    pub reason: String,
}

/// The fastest of the first predictions (as [`predict`] sorts them), or `None` when every
/// one was refused.
pub fn best(predictions: &[Prediction], profile: &Profile) -> Option<ModelChoice> {
    let first = predictions.first().filter(|p| p.refused.is_none())?;
    let runner_up = predictions
        .iter()
        .skip(1)
        .find(|p| p.refused.is_none())
        .map(|p| {
            format!(
                "; next {} {} at {:.2} µs",
                p.format,
                p.variant,
                p.seconds_per_iteration * 1e6
            )
        })
        .unwrap_or_default();
    Some(ModelChoice {
        format: first.format,
        variant: first.variant,
        predicted_seconds_per_iteration: first.seconds_per_iteration,
        reason: format!(
            "model (profile of {}, {}): {} {} predicted fastest at {:.2} µs per iteration{runner_up}",
            profile.device.name,
            profile.created,
            first.format,
            first.variant,
            first.seconds_per_iteration * 1e6
        ),
    })
}

/// Predictions within this share of the fastest one are a tie: the model's median error
/// is of this order (7.5–9 % on the H200 in BENCHMARKS.md's issue 18 runs of 2026-11-29),
/// and below 20 µs per iteration the measured times of one format spread by as much from
/// run to run and from machine to machine, so the model cannot rank such formats (5 %
/// until then, under half the error: small stencils went to SELL by margins of 2–7 %
/// that the measurements reversed).
pub const TIE_TOLERANCE: f64 = 0.10;

/// [`best`], except that when the statistics rule's format `rule`
/// ([`crate::gpu::format::choose_format`]) is predicted within [`TIE_TOLERANCE`] of the
/// fastest, the tie falls to the rule: its fastest prediction is chosen.
pub fn best_or_rule(
    predictions: &[Prediction],
    profile: &Profile,
    rule: Format,
) -> Option<ModelChoice> {
    let fastest = best(predictions, profile)?;
    if fastest.format == rule {
        return Some(fastest);
    }
    let limit = fastest.predicted_seconds_per_iteration * (1.0 + TIE_TOLERANCE);
    let Some(tied) = predictions
        .iter()
        .find(|p| p.refused.is_none() && p.format == rule && p.seconds_per_iteration <= limit)
    else {
        return Some(fastest);
    };
    Some(ModelChoice {
        format: tied.format,
        variant: tied.variant,
        predicted_seconds_per_iteration: tied.seconds_per_iteration,
        reason: format!(
            "model (profile of {}, {}): {} {} predicted at {:.2} µs per iteration, within {:.0}% \
             of the fastest ({} {} at {:.2} µs): a tie, which the statistics rule decides",
            profile.device.name,
            profile.created,
            tied.format,
            tied.variant,
            tied.seconds_per_iteration * 1e6,
            100.0 * TIE_TOLERANCE,
            fastest.format,
            fastest.variant,
            fastest.predicted_seconds_per_iteration * 1e6
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::generators::poisson_2d_fd;
    use crate::model::profile::tests::sample_profile;

    #[test]
    fn predictions_add_up_the_kernels_and_round_trips() {
        let profile = sample_profile();
        let a = poisson_2d_fd::<f64>(16);
        let req = PredictRequest {
            check_mode: CheckMode::Paper,
            ..PredictRequest::all(Some(Method::Cg), CheckMode::Paper, 8.0)
        };
        let preds = predict(&profile, &a, &req);
        assert_eq!(preds.len(), 8 * 2 * 3);
        // The sample profile predates fused CG: refused, naming the missing curve.
        let fused = preds
            .iter()
            .find(|p| p.format == Format::Csr && p.variant == Variant::Fused)
            .unwrap();
        assert_eq!(
            fused.refused.as_deref(),
            Some("the profile has no curve for update_spmv_dot_cg:csr")
        );
        let p = preds
            .iter()
            .find(|p| {
                p.format == Format::Csr
                    && p.precision == Precision::F32
                    && p.variant == Variant::Pipelined
            })
            .unwrap();
        // CSR f32 on n = 256, nnz = 1216: (257 + 1216)·4 + 2·1216·4 + 256·4 bytes.
        assert_eq!(p.spmv_bytes, 1473 * 4 + 9728 + 1024);
        // Rows of at most 5 terms: the sample profile's reference chain for CSR, so nothing
        // is added.
        assert_eq!((p.spmv_chain, p.chain_step_seconds), (5, 0.2e-6));
        assert_eq!(p.chain_seconds, 0.0);
        let expected = profile.curve("update_cg").unwrap().seconds(7.0 * 1024.0)
            + profile
                .curve("spmv_dot_cg:csr")
                .unwrap()
                .seconds(p.spmv_bytes as f64)
            + 2.0 * profile.dispatch_seconds
            + profile.round_trip_seconds;
        assert!((p.seconds_per_iteration - expected).abs() < 1e-15, "{p:?}");
        assert_eq!(p.dispatches_per_iteration, 2.0);
        // Sorted: refused last, the rest by time.
        let times: Vec<f64> = preds
            .iter()
            .filter(|p| p.refused.is_none())
            .map(|p| p.seconds_per_iteration)
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        let choice = best(&preds, &profile).unwrap();
        assert_eq!(choice.predicted_seconds_per_iteration, times[0]);
        assert!(
            choice.reason.starts_with("model (profile of llvmpipe"),
            "{}",
            choice.reason
        );
    }

    #[test]
    fn a_long_row_costs_its_steps_in_every_product_with_a() {
        let profile = sample_profile();
        let req = PredictRequest {
            variants: vec![(Method::Cg, Variant::Pipelined)],
            precisions: vec![Precision::F32],
            formats: vec![Format::Csr],
            ..PredictRequest::all(None, CheckMode::Device, 1e9)
        };
        let a = poisson_2d_fd::<f64>(16);
        // The same matrix with row 0 holding every column: one thread runs 256 steps.
        let mut t: Vec<(usize, usize, f64)> = (1..256)
            .flat_map(|i| {
                let (cols, vals) = a.row(i);
                cols.iter()
                    .zip(vals)
                    .map(move |(&j, &v)| (i, j as usize, v))
            })
            .collect();
        t.extend((0..256).map(|j| (0, j, if j == 0 { 300.0 } else { -1.0 })));
        let long = Csr::from_triplets(256, &t).unwrap();
        let short = &predict(&profile, &a, &req)[0];
        let dense_row = &predict(&profile, &long, &req)[0];
        assert_eq!((short.spmv_chain, dense_row.spmv_chain), (5, 256));
        // One product with A per iteration, 251 steps beyond the reference chain of 5; the
        // bytes grow by 251 entries, a little.
        assert!(dense_row.refused.is_none() && short.refused.is_none());
        assert_eq!(short.chain_seconds, 0.0);
        assert!((dense_row.chain_seconds - 251.0 * 0.2e-6).abs() < 1e-18);
        let curves = |p: &Prediction| p.seconds_per_iteration - p.chain_seconds;
        let extra = dense_row.seconds_per_iteration - short.seconds_per_iteration;
        assert!(
            (extra - 251.0 * 0.2e-6 - (curves(dense_row) - curves(short))).abs() < 1e-15,
            "{extra:e}"
        );
        assert!(curves(dense_row) - curves(short) < 0.1 * extra, "{extra:e}");
    }

    #[test]
    fn refused_formats_are_ranked_last_with_their_reason() {
        let profile = sample_profile();
        let a = poisson_2d_fd::<f64>(16);
        let req = PredictRequest::all(Some(Method::Cg), CheckMode::Device, 1.2);
        let preds = predict(&profile, &a, &req);
        let last = preds.last().unwrap();
        assert!(last.refused.is_some());
        assert!(last.seconds_per_iteration.is_nan());
        assert!(preds[0].refused.is_none());
    }

    #[test]
    fn ties_within_the_tolerance_fall_to_the_statistics_rule() {
        let profile = sample_profile();
        let a = poisson_2d_fd::<f64>(16);
        let req = PredictRequest {
            variants: vec![(Method::Cg, Variant::Pipelined)],
            precisions: vec![Precision::F32],
            ..PredictRequest::all(Some(Method::Cg), CheckMode::Device, 8.0)
        };
        let mut preds = predict(&profile, &a, &req);
        let fastest = preds[0].clone();
        // Another format 3% slower than the fastest: a tie the rule decides.
        let other = preds
            .iter()
            .position(|p| p.refused.is_none() && p.format != fastest.format)
            .unwrap();
        preds[other].seconds_per_iteration = fastest.seconds_per_iteration * 1.03;
        let rule = preds[other].format;
        let choice = best_or_rule(&preds, &profile, rule).unwrap();
        assert_eq!(choice.format, rule);
        assert!(choice.reason.contains("a tie"), "{}", choice.reason);
        // 20% slower: the model's fastest stands.
        preds[other].seconds_per_iteration = fastest.seconds_per_iteration * 1.2;
        let choice = best_or_rule(&preds, &profile, rule).unwrap();
        assert_eq!(choice.format, fastest.format);
        // The rule's own pick is the fastest: unchanged.
        assert_eq!(
            best_or_rule(&preds, &profile, fastest.format).unwrap(),
            best(&preds, &profile).unwrap()
        );
    }
}
