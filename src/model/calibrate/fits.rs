//! The fits of `krylov calibrate` once the samples are in: each format's curves of the kernels
//! with A together with its chain step τ, the per-launch correction (timestamp overhead or
//! dispatch gap) and its subtraction from every timed sample.

use std::collections::BTreeMap;

use super::super::chain::{ChainSample, fit_step, rms_relative_error};
use super::super::sigmoid::{Fit, Sample, fit_robust};
use super::{MatrixSample, Samples};

/// Rounds of the alternating fit of a format's curves and its chain step τ (the change
/// after the second is below the samples' noise on the H200 and lavapipe).
const CHAIN_ROUNDS: usize = 3;

/// The curves of one format's kernels with A and its chain step τ ([`super::chain`]),
/// fitted in turn: curves on the samples less τ·(L − L₀), then τ from what the curves
/// leave, for [`CHAIN_ROUNDS`]. L₀, the reference chain, is the shortest among the samples
/// (a stencil's rows): the curves describe kernels of that chain, whose loop is mostly
/// latency the curve has anyway, and τ charges only the steps beyond it. Returns the fits
/// and `(τ, L₀)`, `None` (and plain fits) when the chains do not vary.
pub(super) fn fit_with_chain(
    format: &str,
    samples: &[MatrixSample],
    log: &mut dyn FnMut(&str),
) -> (BTreeMap<String, Fit>, Option<(f64, f64)>) {
    let shortest = samples
        .iter()
        .map(|m| m.steps)
        .fold(f64::INFINITY, f64::min);
    let longest = samples.iter().map(|m| m.steps).fold(0.0, f64::max);
    let beyond = |m: &MatrixSample| (m.steps - shortest).max(0.0);
    let mut fit_curves = |tau: f64| {
        let mut by_key: BTreeMap<&str, Vec<Sample>> = BTreeMap::new();
        for m in samples {
            let seconds =
                (m.sample.seconds - tau * beyond(m)).max(MIN_SAMPLE_SHARE * m.sample.seconds);
            by_key.entry(&m.key).or_default().push(Sample {
                bytes: m.sample.bytes,
                seconds,
            });
        }
        let mut fits = BTreeMap::new();
        for (key, s) in by_key {
            match fit_robust(&s, 0.0) {
                Ok(f) => {
                    fits.insert(key.to_string(), f);
                }
                Err(e) => log(&format!("{key}: not fitted ({e})")),
            }
        }
        fits
    };
    let on = |fits: &BTreeMap<String, Fit>| -> Vec<ChainSample> {
        samples
            .iter()
            .filter_map(|m| {
                fits.get(&m.key).map(|f| ChainSample {
                    curve_seconds: f.curve.seconds(m.sample.bytes),
                    seconds: m.sample.seconds,
                    steps: beyond(m),
                })
            })
            .collect()
    };
    let plain = fit_curves(0.0);
    let before = rms_relative_error(&on(&plain), 0.0);
    let mut tau = None;
    let mut fits = plain;
    for _ in 0..CHAIN_ROUNDS {
        let Some(t) = fit_step(&on(&fits)) else {
            break;
        };
        tau = Some(t);
        fits = fit_curves(t);
    }
    match tau {
        Some(t) => log(&format!(
            "chain step {format}: {:.3} µs per step beyond {shortest} (chains \
             {shortest}–{longest}; rms error of its kernels {:.1}% without, {:.1}% with)",
            t * 1e6,
            100.0 * before,
            100.0 * rms_relative_error(&on(&fits), t)
        )),
        None => log(&format!(
            "chain step {format}: not fitted (chains {shortest}–{longest} do not vary enough)"
        )),
    }
    (fits, tau.map(|t| (t, shortest)))
}

/// `(t_d, t_ts)` from the signed per-launch excesses of the calibration's cases (untimed
/// wall − timed kernels − round trips, per launch): their median `g`; `g ≥ 0` is a dispatch
/// gap (`(g, 0)`), `g < 0` the time GPU timestamps add to every timed launch (`(0, −g)`).
/// Sorts `gaps`; `(0, 0)` when there are none.
pub fn launch_correction(gaps: &mut [f64]) -> (f64, f64) {
    let g = median(gaps);
    if g >= 0.0 { (g, 0.0) } else { (0.0, -g) }
}

/// The smallest share of a timed sample kept after the timestamp overhead is subtracted (a
/// launch never costs nothing).
pub const MIN_SAMPLE_SHARE: f64 = 0.1;

/// Subtracts the timestamp overhead `t_ts` from every kernel sample and finishing time (each
/// one launch), keeping at least [`MIN_SAMPLE_SHARE`] of it.
pub(super) fn subtract_overhead(samples: &mut Samples, overhead: f64) {
    let less = |t: f64| (t - overhead).max(MIN_SAMPLE_SHARE * t);
    for s in samples.curves.values_mut().flatten() {
        s.seconds = less(s.seconds);
    }
    for t in samples.finish.values_mut().flatten() {
        *t = less(*t);
    }
    for m in samples.matrix.values_mut().flatten() {
        m.sample.seconds = less(m.sample.seconds);
    }
    for (_, g, _) in samples.gather.values_mut().flatten() {
        g.seconds = less(g.seconds);
    }
}

pub(super) fn describe(key: &str, f: &Fit) -> String {
    format!(
        "{key}: mu {:.2} sigma {:.2} nu {:.2} GB/s; rms error {:.1}%, worst {:.1}% ({} samples, {} outliers)",
        f.curve.mu,
        f.curve.sigma,
        f.curve.nu / 1e9,
        100.0 * f.rms_relative_error,
        100.0 * f.max_relative_error,
        f.samples.len(),
        f.outliers.len()
    )
}

pub(super) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_launch_excess_is_the_timestamp_overhead() {
        // Timed kernels read 3 µs longer per launch than the untimed loop's walls allow.
        let mut gaps = vec![-3.1e-6, -2.9e-6, -3.0e-6, 1.0e-6, -3.2e-6];
        assert_eq!(launch_correction(&mut gaps), (0.0, 3.0e-6));
        // A positive excess is a gap between launches.
        let mut gaps = vec![2.0e-6, 1.0e-6, 3.0e-6];
        assert_eq!(launch_correction(&mut gaps), (2.0e-6, 0.0));
        assert_eq!(launch_correction(&mut []), (0.0, 0.0));
    }

    #[test]
    fn the_overhead_is_subtracted_from_every_timed_launch() {
        let mut s = Samples::default();
        s.curves.insert(
            "axpy".into(),
            vec![
                Sample {
                    bytes: 1e3,
                    seconds: 8e-6,
                },
                Sample {
                    bytes: 1e8,
                    seconds: 53e-6,
                },
                Sample {
                    bytes: 1e2,
                    seconds: 2e-6,
                },
            ],
        );
        s.finish.insert("dot_finish".into(), vec![9e-6]);
        subtract_overhead(&mut s, 3e-6);
        let t: Vec<f64> = s.curves["axpy"].iter().map(|x| x.seconds).collect();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
        assert!(close(t[0], 5e-6) && close(t[1], 50e-6), "{t:?}");
        // Never below a tenth of the timed sample.
        assert!(close(t[2], 0.2e-6), "{t:?}");
        assert!(close(s.finish["dot_finish"][0], 6e-6));
    }
}
