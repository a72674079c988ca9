//! `krylov calibrate`: times our own solver kernels on the device and fits the model.
//!
//! * round trip `t_rt`: one dependent launch submitted alone and read back, minus the cost
//!   of a launch inside a pass ([`dependent_dispatch_us`]);
//! * kernel curves: CG (classical, pipelined, fused), BiCGStab (classical, pipelined) and
//!   GMRES(30) (pipelined, fused, p(1): one cycle of 30 steps), `device` mode, a fixed number
//!   of iterations, on `poisson2d` and `laplace3d` at sizes from a few KB of vectors to
//!   beyond the last-level cache, and on a stencil of dense 8×8 blocks ([`dense_blocks`],
//!   for the BCSR formats), in every format that takes them, with GPU timestamps: each kernel's GPU
//!   time per launch against the bytes [`super::kernels`] says it moves is one sample of
//!   its curve (the vector kernels' curves gather the samples of every format);
//! * per launch, the signed excess g = (wall time per iteration of the same case run without
//!   timestamps − the kernels' GPU time − t_rt / batch) / launches, and its median over the
//!   runs ([`launch_correction`]): timestamp queries slow every launch (on the H200 a timed
//!   dependent dispatch costs 13.8 µs, an untimed one 5.7 µs), so a timed kernel reads longer
//!   than the same launch in an untimed solve. A negative median is that timestamp overhead
//!   `t_ts`: it is subtracted from every kernel sample before the fits
//!   (`subtract_overhead`) and `t_d` = 0; a positive one is the dispatch gap `t_d` a solver
//!   loop sees between launches (the walls and the probes of `t_rt` come from an untimed
//!   engine on the same device);
//! * finishing kernels: the median GPU time per launch, less `t_ts`;
//! * chain steps τ ([`super::chain`]): the kernels with A are fitted per format together with
//!   τ, the time per step of the longest per-thread loop beyond the shortest sampled
//!   (`fit_with_chain`); stencils with hub rows ([`with_hubs`]) give the long loops;
//! * gather weights γ ([`super::gather`]): the full calibration also times random-column
//!   SPD matrices ([`GATHER_MATRICES`]), kept out of the curves; per format, γ is fitted
//!   (LM) so that each kernel's curve at `bytes + γ·excess` gives the time measured.
//!
//! Each curve is fitted with [`super::sigmoid::fit`] (LM). The calibration needs GPU
//! timestamps (`TIMESTAMP_QUERY`); without them it stops with an error.

use std::collections::BTreeMap;

use super::gather::{GatherSample, fit_weight, weight_key};
use super::kernels::{Curve, MODELLED, Shape, SpmvBytes, curve_key, iteration_plan};
use super::layout::{LayoutParams, MODEL_FORMATS, spmv_layout};
use super::loop_residual::LoopCase;
use super::profile::{DeviceIdentity, Profile, SCHEMA_VERSION, utc_now};
use super::sigmoid::{Fit, Sample, fit_robust};
use crate::base::error::{KrylovError, Result};
use crate::base::{CheckMode, Precision};
use crate::bench::{BenchCase, Heater, dependent_dispatch_us, run_case_on, with_heater_paused};
use crate::gpu::{Engine, GpuContext, Tuning};
use crate::matrix::Csr;

use super::calibration_matrices::{GATHER_MATRICES, block_samples_only, matrices, plain_stencil};

mod fits;

pub use super::calibration_matrices::{dense_blocks, with_hubs};
pub use fits::{MIN_SAMPLE_SHARE, launch_correction};
use fits::{describe, fit_with_chain, median, subtract_overhead};

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibrateOptions {
    /// Fewer, smaller sizes (seconds on a software adapter; for tests and CI).
    pub quick: bool,
}

/// The identity of an opened adapter, as profiles record it.
pub fn device_identity(ctx: &GpuContext) -> DeviceIdentity {
    let info = ctx.adapter.get_info();
    DeviceIdentity {
        name: info.name,
        vendor: info.vendor,
        device: info.device,
        backend: format!("{:?}", info.backend),
        driver: info.driver,
        driver_info: info.driver_info,
    }
}

/// What the timed runs gave: samples per curve key, finishing times, dispatch gaps.
#[derive(Default)]
struct Samples {
    /// The vector kernels' samples per curve key.
    curves: BTreeMap<String, Vec<Sample>>,
    /// Per format (per `format:vectors` for fused CG's product, [`weight_key`]): the samples
    /// of its kernels with A, fitted with its chain step.
    matrix: BTreeMap<String, Vec<MatrixSample>>,
    finish: BTreeMap<String, Vec<f64>>,
    gaps: Vec<f64>,
    /// Per γ key ([`weight_key`]: the format, or `format:vectors` for fused CG's product):
    /// (curve key, sample, chain steps) of the gather matrices.
    gather: BTreeMap<String, Vec<(String, GatherSample, f64)>>,
    /// The untimed solves, for the loops' residuals ([`super::loop_residual`]).
    loops: Vec<LoopCase>,
}

/// One launch of a kernel with A: its curve key, bytes and time, and its layout's chain.
struct MatrixSample {
    key: String,
    sample: Sample,
    steps: f64,
}

/// Calibrates the engine's device; an engine built with `Tuning { profile: true, .. }` on
/// an adapter with timestamps. Progress lines go to `log`.
pub fn calibrate(
    engine: &Engine,
    opts: CalibrateOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Profile> {
    if !engine.profiling() {
        return Err(KrylovError::Unsupported(format!(
            "calibration times each kernel with GPU timestamps, which {} does not offer \
             (TIMESTAMP_QUERY); no profile was written",
            engine.context().summary.name
        )));
    }
    let quick = opts.quick;
    let wg = engine.tuning().workgroup_size as usize;
    // Warm clocks, as `krylov bench` keeps them: between timed runs a hardware GPU's driver
    // drops its clock during the host-side set-up (the H200 from 1980 to 345 MHz), and a
    // calibration on cold clocks measured every launch 2-3x slower than a solve's loop sees
    // (a dependent dispatch of 11.8 µs instead of ~4 µs, kernels at half bandwidth).
    let heater = if engine.context().summary.device_type == "Cpu" {
        None
    } else {
        Some(Heater::start(engine.context().clone())?)
    };
    let heater = heater.as_ref();
    // The same device without timestamps: what a solve runs. Timestamp queries slow every
    // launch (on the H200 a timed dependent dispatch costs 13.8 µs, an untimed one ~4 µs), so
    // the gaps between launches and the round trip come from untimed runs, the kernels'
    // own times from timed ones.
    let untimed = Engine::with_tuning(
        engine.context().clone(),
        Tuning {
            profile: false,
            ..engine.tuning()
        },
    );
    let dispatch = with_heater_paused(heater, || dependent_dispatch_us(&untimed, 100))? * 1e-6;
    let single = with_heater_paused(heater, || dependent_dispatch_us(&untimed, 1))? * 1e-6;
    // A lone launch and its read-back, less a chained launch: at least zero (on a loaded CPU
    // device the lone launch has measured faster than a chained one; the log says so).
    let round_trip = (single - dispatch).max(0.0);
    log(&format!(
        "dependent dispatch {:.2} µs, round trip {:.2} µs{}",
        dispatch * 1e6,
        round_trip * 1e6,
        if single <= dispatch {
            format!(
                " (a lone launch measured {:.2} µs, no slower than a chained one: taken as 0)",
                single * 1e6
            )
        } else {
            String::new()
        }
    ));
    let params = LayoutParams {
        workgroup_size: wg,
        sell_c: crate::gpu::format::sell_c(engine),
        // What the timed solves use (SolveOptions' default): refused formats are skipped.
        max_padding: crate::gpu::format::DEFAULT_PADDING_BUDGET,
    };
    let iterations = if quick { 6 } else { 30 };
    // GMRES's timed loop is whole cycles: one of `iterations` steps.
    let shape = |batch| Shape {
        batch,
        restart: iterations,
    };
    // Timed runs per case after one warm-up run; each kernel's fastest run is kept (the
    // undisturbed time: another process on the machine only ever adds time).
    let runs = 2;
    let mut samples = Samples::default();
    let started = std::time::Instant::now();
    for (spec, a64) in matrices(quick)? {
        let gathers = GATHER_MATRICES.contains(&spec.as_str());
        let a32: Csr<f32> = a64.cast()?;
        for format in MODEL_FORMATS {
            let Ok(layout) = spmv_layout(&a64, format, &params) else {
                continue;
            };
            for (method, variant) in MODELLED {
                let case = BenchCase {
                    problem: spec.clone(),
                    n: a32.nrows(),
                    method,
                    variant,
                    precision: Precision::F32,
                    check_mode: CheckMode::Device,
                    iterations,
                    runs: 1,
                    restart: iterations,
                    s_step: 5,
                    format,
                };
                let Some(row) = fastest_runs(engine, &case, &a32, runs, heater)? else {
                    continue; // stopped early: the loop did not run what was timed
                };
                let plan = iteration_plan(
                    method,
                    variant,
                    CheckMode::Device,
                    a32.nrows(),
                    // γ = 0: the gather samples below fit it.
                    SpmvBytes::of(&layout, 4, 0.0, 0.0),
                    4,
                    shape(row.iterations),
                )
                .expect("a modelled variant");
                let measured: BTreeMap<&str, f64> = row
                    .kernel_us_per_iteration
                    .iter()
                    .map(|(k, us)| (k.as_str(), us * 1e-6))
                    .collect();
                let mut busy = 0.0;
                let mut complete = true;
                let mut seen = std::collections::BTreeSet::new();
                for k in plan.kernels.iter().filter(|k| k.curve != Curve::Launch) {
                    if !seen.insert(k.name) {
                        continue;
                    }
                    let Some(&t) = measured.get(k.name) else {
                        complete = false;
                        continue;
                    };
                    busy += t;
                    // A name launched c times per iteration (its launches that move data;
                    // a GMRES plan covers a cycle): per-launch time and mean bytes.
                    let (launches, bytes) = plan.launches_of(k.name);
                    let c = launches as f64 / plan.iterations;
                    match k.curve {
                        // The dense-block matrices' samples of A's kernels belong to BCSR.
                        Curve::Matrix if block_samples_only(&spec, format) => {}
                        Curve::Matrix if gathers => samples
                            .gather
                            .entry(weight_key(format.as_str(), k.gathers))
                            .or_default()
                            .push((
                                curve_key(k, format),
                                GatherSample {
                                    bytes,
                                    excess: k.gathers * layout.gather_excess_bytes(4) as f64,
                                    seconds: t / c,
                                },
                                layout.chain as f64,
                            )),
                        Curve::Matrix => samples
                            .matrix
                            .entry(weight_key(format.as_str(), k.gathers))
                            .or_default()
                            .push(MatrixSample {
                                key: curve_key(k, format),
                                sample: Sample {
                                    bytes,
                                    seconds: t / c,
                                },
                                steps: layout.chain as f64,
                            }),
                        Curve::Finish => samples
                            .finish
                            .entry(k.name.to_string())
                            .or_default()
                            .push(t / c),
                        // The vector kernels of a gather matrix stream like any other's.
                        Curve::Streaming => samples
                            .curves
                            .entry(curve_key(k, format))
                            .or_default()
                            .push(Sample {
                                bytes,
                                seconds: t / c,
                            }),
                        Curve::Launch => {}
                    }
                }
                if complete && !gathers {
                    // The wall time per iteration of the same case untimed.
                    let Some(plain) = fastest_runs(&untimed, &case, &a32, runs, heater)? else {
                        continue;
                    };
                    let wall = plain.us_per_iteration * 1e-6;
                    let gap = (wall - busy - plan.round_trips * round_trip) / plan.dispatches();
                    samples.gaps.push(gap);
                    if plain_stencil(&spec) {
                        samples.loops.push(LoopCase {
                            method,
                            variant,
                            format,
                            layout,
                            shape: shape(row.iterations),
                            wall_seconds: wall,
                        });
                    }
                }
            }
        }
        log(&format!(
            "{spec}: timed ({:.0} s)",
            started.elapsed().as_secs_f64()
        ));
    }
    let (dispatch_seconds, timestamp_overhead) = launch_correction(&mut samples.gaps);
    let quartile = |q: f64| {
        let g = &samples.gaps;
        g.get(((g.len() as f64 - 1.0) * q).round() as usize)
            .map_or(0.0, |x| x * 1e6)
    };
    log(&format!(
        "per launch: dispatch gap in solver loops {:.2} µs, timestamp overhead {:.2} µs \
         (median of {} cases; untimed wall − timed kernels per launch: quartiles {:.2} / \
         {:.2} µs, range {:.2} … {:.2} µs)",
        dispatch_seconds * 1e6,
        timestamp_overhead * 1e6,
        samples.gaps.len(),
        quartile(0.25),
        quartile(0.75),
        quartile(0.0),
        quartile(1.0)
    ));
    subtract_overhead(&mut samples, timestamp_overhead);
    let mut kernels = BTreeMap::new();
    for (key, s) in &samples.curves {
        // Kernel times from timestamps hold no dispatch gap: t_d = 0 in the fit.
        match fit_robust(s, 0.0) {
            Ok(f) => {
                log(&describe(key, &f));
                kernels.insert(key.clone(), f);
            }
            Err(e) => log(&format!("{key}: not fitted ({e})")),
        }
    }
    let mut chain_step_seconds = BTreeMap::new();
    let mut chain_reference_steps = BTreeMap::new();
    for (format, s) in &samples.matrix {
        let (fits, chain) = fit_with_chain(format, s, log);
        for (key, f) in fits {
            log(&describe(&key, &f));
            kernels.insert(key, f);
        }
        if let Some((tau, reference)) = chain {
            chain_step_seconds.insert(format.clone(), tau);
            chain_reference_steps.insert(format.clone(), reference);
        }
    }
    if kernels.is_empty() {
        return Err(KrylovError::Unsupported(
            "calibration got no kernel timings (timestamps returned nothing); no profile was written"
                .into(),
        ));
    }
    let mut gather_weights = BTreeMap::new();
    for (key, s) in &samples.gather {
        // The gather's excess is what the curve and the chain leave unexplained.
        // The chain of the same products (fused CG's own, else the format's).
        let format = key.split(':').next().unwrap_or(key);
        let chain_key = if chain_step_seconds.contains_key(key) {
            key.as_str()
        } else {
            format
        };
        let tau = chain_step_seconds.get(chain_key).copied().unwrap_or(0.0);
        let reference = chain_reference_steps.get(chain_key).copied().unwrap_or(0.0);
        let on_curves: Vec<_> = s
            .iter()
            .filter_map(|(key, g, steps)| {
                kernels.get(key).map(|f: &Fit| {
                    let chain = tau * (steps - reference).max(0.0);
                    let seconds = (g.seconds - chain).max(MIN_SAMPLE_SHARE * g.seconds);
                    (f.curve, GatherSample { seconds, ..*g })
                })
            })
            .collect();
        match fit_weight(&on_curves) {
            Some(w) => {
                log(&format!(
                    "gather weight {key}: {:.3} ({} samples; rms error {:.1}%, {:.1}% with \
                     paper 003's count alone)",
                    w.weight,
                    w.samples,
                    100.0 * w.rms_relative_error,
                    100.0 * w.rms_relative_error_without
                ));
                gather_weights.insert(key.clone(), w.weight);
            }
            None => log(&format!("gather weight {key}: not fitted")),
        }
    }
    let constants = samples
        .finish
        .iter_mut()
        .map(|(k, v)| (k.clone(), median(v)))
        .collect();
    let mut profile = Profile {
        schema_version: SCHEMA_VERSION,
        device: device_identity(engine.context()),
        created: utc_now(),
        quick,
        workgroup_size: wg,
        sell_c: params.sell_c,
        max_binding_bytes: engine.context().limits.max_storage_buffer_binding_size,
        dispatch_seconds,
        timestamp_overhead_seconds: timestamp_overhead,
        round_trip_seconds: round_trip,
        kernels,
        constants,
        gather_weights,
        chain_step_seconds,
        chain_reference_steps,
        launch_residuals: BTreeMap::new(),
    };
    // A quick calibration's loops run 6 iterations: their per-launch residual is mostly the
    // noise of one submit and one read-back. On lavapipe (2026-11-29) its points reached
    // −301 … +357 µs per launch and took the validation's median error from 24.5 % without
    // them to 34.3 %; a quick profile keeps none (predictions add 0).
    if quick {
        log("loop residuals: none (quick calibration: 6-iteration loops)");
    } else {
        profile.launch_residuals = super::loop_residual::fit(&profile, &samples.loops);
    }
    for (key, points) in &profile.launch_residuals {
        let list: Vec<String> = points
            .iter()
            .map(|[n, r]| format!("{n:.0}: {:+.2}", r * 1e6))
            .collect();
        log(&format!(
            "loop residual {key} per launch (rows: µs): {}",
            list.join(", ")
        ));
    }
    Ok(profile)
}

/// One warm-up run of `case`, then `runs` timed ones; the row of the last with each
/// kernel's time and the wall time per iteration replaced by their minimum over the timed
/// runs. `None` when a run stopped before its iterations or abandoned a batch (a restart).
fn fastest_runs(
    engine: &Engine,
    case: &BenchCase,
    a: &Csr<f32>,
    runs: usize,
    heater: Option<&Heater>,
) -> Result<Option<crate::bench::BenchRow>> {
    run_case_on(engine, case, a, 0.0, heater)?;
    let mut best: Option<crate::bench::BenchRow> = None;
    for _ in 0..runs.max(1) {
        let row = run_case_on(engine, case, a, 0.0, heater)?;
        if !row.ran_as_timed() || row.iterations_done < case.iterations {
            return Ok(None);
        }
        best = Some(match best {
            None => row,
            Some(mut b) => {
                b.us_per_iteration = b.us_per_iteration.min(row.us_per_iteration);
                for (name, us) in &mut b.kernel_us_per_iteration {
                    if let Some((_, t)) =
                        row.kernel_us_per_iteration.iter().find(|(k, _)| k == name)
                    {
                        *us = us.min(*t);
                    }
                }
                b
            }
        });
    }
    Ok(best)
}
