//! Paper 003's throughput curve (its Eq. 3) and its Levenberg–Marquardt fit.
//!
//! ```text
//!   B(x) = ν / (1 + exp(−(log₂ x − μ) / σ))        throughput in bytes/s at x bytes moved
//!   t(x) = x / B(x) + t_d                            seconds of one launch moving x bytes
//! ```
//!
//! The paper counts transferred elements; here x is bytes, so curves of kernels with
//! different element sizes are comparable. `t_d` is the cost of one dependent dispatch,
//! measured apart ([`super::Profile::dispatch_seconds`]); the fit adjusts μ, σ and ν so that
//! t(x) matches the measured launch times, minimising the *relative* time error (every size
//! counts alike, a few KB as much as a few hundred MB).

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::storage::Owned;
use nalgebra::{DVector, Dyn, U3, Vector3};

/// The three parameters of paper 003's Eq. 3 for one kind of kernel on one device.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sigmoid {
    /// log₂ of the bytes at which half the peak throughput is reached.
    pub mu: f64,
    /// Width of the rise, in powers of two (> 0).
    pub sigma: f64,
    /// Peak throughput, bytes/s (> 0).
    pub nu: f64,
}

impl Sigmoid {
    /// B(x): throughput in bytes/s of a launch moving `bytes`.
    pub fn throughput(&self, bytes: f64) -> f64 {
        let z = (bytes.max(1.0).log2() - self.mu) / self.sigma;
        self.nu / (1.0 + (-z).exp())
    }

    /// x / B(x): seconds a launch spends moving `bytes` (without the dispatch cost).
    pub fn seconds(&self, bytes: f64) -> f64 {
        if bytes <= 0.0 {
            return 0.0;
        }
        bytes / self.throughput(bytes)
    }

    /// Whether the parameters describe a curve (finite, σ and ν positive).
    pub fn is_valid(&self) -> bool {
        self.mu.is_finite()
            && self.sigma.is_finite()
            && self.nu.is_finite()
            && self.sigma > 0.0
            && self.nu > 0.0
    }
}

/// One measurement: a launch that moved `bytes` took `seconds` (dispatch cost included).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub bytes: f64,
    pub seconds: f64,
}

/// The fitted curve with its residuals.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fit {
    pub curve: Sigmoid,
    /// Root mean square of the relative time errors (t_model − t_measured) / t_measured.
    pub rms_relative_error: f64,
    /// The largest |relative time error| over the samples.
    pub max_relative_error: f64,
    /// The samples the curve was fitted to.
    pub samples: Vec<Sample>,
    /// Outliers left out of the final fit ([`fit_robust`]; empty for [`fit`]).
    #[serde(default)]
    pub outliers: Vec<Sample>,
}

/// Why a fit failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("a sigmoid fit needs at least 4 samples with positive bytes and time, got {0}")]
    TooFewSamples(usize),
    #[error("the Levenberg–Marquardt fit did not converge ({0})")]
    NoConvergence(String),
}

/// The least-squares problem in the parameters p = (μ, ln σ, ln ν): the logarithms keep σ
/// and ν positive without constraints.
struct CurveProblem<'a> {
    samples: &'a [Sample],
    dispatch: f64,
    /// ln of the best throughput measured (bytes / seconds): the prior on ln ν.
    ln_nu_seen: f64,
    p: Vector3<f64>,
}

/// Weight of the prior residual `PRIOR · (ln ν − ln ν_seen)`: where the data never show the
/// curve level off (noise, or sizes that stop below saturation) the three parameters are
/// not determined and an unregularised fit runs off to a power law (μ and ν huge), which
/// extrapolates without bound; the prior keeps ν near the best throughput seen at the cost
/// of at most a few percent of residual where the data do saturate.
const PRIOR: f64 = 0.2;

impl CurveProblem<'_> {
    fn curve(&self) -> Sigmoid {
        Sigmoid {
            mu: self.p[0],
            sigma: self.p[1].exp(),
            nu: self.p[2].exp(),
        }
    }
}

impl LeastSquaresProblem<f64, Dyn, U3> for CurveProblem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, U3>;
    type ParameterStorage = Owned<f64, U3>;

    fn set_params(&mut self, p: &Vector3<f64>) {
        self.p = *p;
    }

    fn params(&self) -> Vector3<f64> {
        self.p
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        let c = self.curve();
        let r = self
            .samples
            .iter()
            .map(|s| (c.seconds(s.bytes) + self.dispatch - s.seconds) / s.seconds)
            .chain(std::iter::once(PRIOR * (self.p[2] - self.ln_nu_seen)));
        let r = DVector::from_iterator(self.samples.len() + 1, r);
        r.iter().all(|v| v.is_finite()).then_some(r)
    }

    fn jacobian(&self) -> Option<nalgebra::OMatrix<f64, Dyn, U3>> {
        let c = self.curve();
        let mut j = nalgebra::OMatrix::<f64, Dyn, U3>::zeros(self.samples.len() + 1);
        for (i, s) in self.samples.iter().enumerate() {
            // t = x / B, B = ν g, g = 1/(1 + e^(−z)), z = (log₂x − μ)/σ.
            let z = (s.bytes.log2() - c.mu) / c.sigma;
            let g = 1.0 / (1.0 + (-z).exp());
            let b = c.nu * g;
            // dt/dB = −x/B²; dB/dμ = ν g(1−g)(−1/σ); dB/d(ln σ) = ν g(1−g)(−z); dB/d(ln ν) = B.
            let dt_db = -s.bytes / (b * b) / s.seconds;
            let dg = c.nu * g * (1.0 - g);
            j[(i, 0)] = dt_db * dg * (-1.0 / c.sigma);
            j[(i, 1)] = dt_db * dg * (-z);
            j[(i, 2)] = dt_db * b;
        }
        j[(self.samples.len(), 2)] = PRIOR;
        j.iter().all(|v| v.is_finite()).then_some(j)
    }
}

/// Fits t(x) = x / B(x) + `dispatch` to `samples` with Levenberg–Marquardt (the
/// `levenberg-marquardt` crate), from starts read off the data: ν the best measured
/// throughput, μ where the measured throughput crosses ν/2, σ = 0.5, 2 and 6 (the best fit
/// is kept). One extra residual, `PRIOR · ln(ν / ν_seen)`, keeps ν near the best throughput
/// seen when the data do not determine it.
pub fn fit(samples: &[Sample], dispatch: f64) -> Result<Fit, FitError> {
    let samples: Vec<Sample> = samples
        .iter()
        .copied()
        .filter(|s| s.bytes > 0.0 && s.seconds > 0.0 && s.seconds.is_finite())
        .collect();
    if samples.len() < 4 {
        return Err(FitError::TooFewSamples(samples.len()));
    }
    let dispatch = dispatch.max(0.0);
    // Throughput with the dispatch cost taken out (at least a tenth of the time remains).
    let measured = |s: &Sample| s.bytes / (s.seconds - dispatch).max(0.1 * s.seconds);
    let nu0 = samples
        .iter()
        .map(|s| s.bytes / s.seconds)
        .fold(0.0, f64::max);
    let mut sorted = samples.clone();
    sorted.sort_by(|a, b| a.bytes.total_cmp(&b.bytes));
    let mu0 = sorted
        .iter()
        .find(|s| measured(s) >= 0.5 * nu0)
        .map_or(20.0, |s| s.bytes.log2());
    let mut best: Option<(f64, Sigmoid)> = None;
    // A few starting widths: LM finds the nearest minimum, the best one is kept.
    for sigma0 in [0.5_f64, 2.0, 6.0] {
        let problem = CurveProblem {
            samples: &samples,
            dispatch,
            ln_nu_seen: nu0.ln(),
            p: Vector3::new(mu0, sigma0.ln(), nu0.ln()),
        };
        let (solved, report) = LevenbergMarquardt::new()
            .with_patience(200)
            .minimize(problem);
        if report.termination.was_usage_issue() {
            continue;
        }
        let curve = solved.curve();
        if !curve.is_valid() {
            continue;
        }
        let cost = solved
            .residuals()
            .map_or(f64::INFINITY, |r| r.norm_squared());
        if best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, curve));
        }
    }
    let Some((_, curve)) = best else {
        return Err(FitError::NoConvergence(
            "no start gave finite positive parameters".into(),
        ));
    };
    let errors: Vec<f64> = samples
        .iter()
        .map(|s| (curve.seconds(s.bytes) + dispatch - s.seconds) / s.seconds)
        .collect();
    let rms = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt();
    let max = errors.iter().map(|e| e.abs()).fold(0.0, f64::max);
    Ok(Fit {
        curve,
        rms_relative_error: rms,
        max_relative_error: max,
        samples,
        outliers: Vec::new(),
    })
}

/// [`fit`], then once more without the outliers: samples whose relative error exceeds
/// three times the median |relative error| (and 20 %) — a launch slowed down by another
/// process, say — when at least 4 samples remain. The residuals are those of the samples
/// kept; the outliers are listed in the result.
pub fn fit_robust(samples: &[Sample], dispatch: f64) -> Result<Fit, FitError> {
    let first = fit(samples, dispatch)?;
    let errors: Vec<f64> = first
        .samples
        .iter()
        .map(|s| ((first.curve.seconds(s.bytes) + dispatch - s.seconds) / s.seconds).abs())
        .collect();
    let mut sorted = errors.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let limit = (3.0 * sorted[sorted.len() / 2]).max(0.2);
    let (kept, outliers): (Vec<_>, Vec<_>) = first
        .samples
        .iter()
        .zip(&errors)
        .partition(|(_, e)| **e <= limit);
    if outliers.is_empty() || kept.len() < 4 {
        return Ok(first);
    }
    let kept: Vec<Sample> = kept.into_iter().map(|(s, _)| *s).collect();
    let mut second = fit(&kept, dispatch)?;
    second.outliers = outliers.into_iter().map(|(s, _)| *s).collect();
    Ok(second)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn synthetic(truth: Sigmoid, dispatch: f64, noise: f64, seed: u64) -> Vec<Sample> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (10..=30)
            .map(|k| {
                let bytes = 2f64.powf(k as f64);
                let t = truth.seconds(bytes) + dispatch;
                let factor = 1.0 + noise * (2.0 * rng.random::<f64>() - 1.0);
                Sample {
                    bytes,
                    seconds: t * factor,
                }
            })
            .collect()
    }

    #[test]
    fn the_fit_recovers_known_parameters_from_noisy_samples() {
        let truth = Sigmoid {
            mu: 21.0,
            sigma: 1.5,
            nu: 800e9,
        };
        let dispatch = 4e-6;
        let fit = fit(&synthetic(truth, dispatch, 0.03, 7), dispatch).unwrap();
        let c = fit.curve;
        assert!((c.mu - truth.mu).abs() < 0.3, "{c:?}");
        assert!((c.sigma - truth.sigma).abs() < 0.3, "{c:?}");
        assert!((c.nu / truth.nu - 1.0).abs() < 0.05, "{c:?}");
        assert!(fit.rms_relative_error < 0.03, "{fit:?}");
        assert!(fit.max_relative_error <= 0.06, "{fit:?}");
    }

    #[test]
    fn the_fit_is_exact_on_noiseless_samples_of_a_slow_device() {
        let truth = Sigmoid {
            mu: 14.0,
            sigma: 0.8,
            nu: 12e9,
        };
        let fit = fit(&synthetic(truth, 30e-6, 0.0, 1), 30e-6).unwrap();
        assert!((fit.curve.mu - 14.0).abs() < 1e-3, "{:?}", fit.curve);
        assert!((fit.curve.sigma - 0.8).abs() < 1e-3, "{:?}", fit.curve);
        assert!((fit.curve.nu / 12e9 - 1.0).abs() < 1e-4, "{:?}", fit.curve);
        assert!(fit.rms_relative_error < 1e-6);
    }

    #[test]
    fn the_robust_fit_leaves_out_disturbed_samples() {
        let truth = Sigmoid {
            mu: 18.0,
            sigma: 1.2,
            nu: 5e9,
        };
        let mut samples = synthetic(truth, 0.0, 0.02, 3);
        // Three launches slowed down 3× by something else on the machine.
        for i in [2, 9, 15] {
            samples[i].seconds *= 3.0;
        }
        let plain = fit(&samples, 0.0).unwrap();
        let robust = fit_robust(&samples, 0.0).unwrap();
        assert_eq!(robust.outliers.len(), 3, "{robust:?}");
        assert_eq!(robust.samples.len(), samples.len() - 3);
        assert!(robust.rms_relative_error < 0.03, "{robust:?}");
        assert!(plain.rms_relative_error > 0.2, "{plain:?}");
        assert!(
            (robust.curve.nu / truth.nu - 1.0).abs() < 0.05,
            "{robust:?}"
        );
        assert!((robust.curve.mu - truth.mu).abs() < 0.3, "{robust:?}");
    }

    #[test]
    fn data_that_never_level_off_keep_nu_near_the_best_throughput_seen() {
        // A power law, t ∝ x^0.7: no saturation in the range.
        let samples: Vec<Sample> = (10..=24)
            .map(|k| {
                let bytes = 2f64.powi(k);
                Sample {
                    bytes,
                    seconds: 1e-9 * bytes.powf(0.7),
                }
            })
            .collect();
        let seen = samples
            .iter()
            .map(|s| s.bytes / s.seconds)
            .fold(0.0, f64::max);
        let f = fit(&samples, 0.0).unwrap();
        assert!(f.curve.is_valid());
        assert!(f.curve.nu < 3.0 * seen, "{:?} vs {seen:e}", f.curve);
        // Extrapolating 16× past the data stays bounded by ν.
        let far = 2f64.powi(28);
        assert!(far / f.curve.seconds(far) <= f.curve.nu);
    }

    #[test]
    fn too_few_samples_are_an_error_not_a_panic() {
        let s = [Sample {
            bytes: 1024.0,
            seconds: 1e-5,
        }; 3];
        assert_eq!(fit(&s, 0.0).unwrap_err(), FitError::TooFewSamples(3));
        let bad = [Sample {
            bytes: 0.0,
            seconds: 0.0,
        }; 10];
        assert_eq!(fit(&bad, 0.0).unwrap_err(), FitError::TooFewSamples(0));
    }

    #[test]
    fn the_curve_rises_to_nu_and_halves_at_mu() {
        let c = Sigmoid {
            mu: 20.0,
            sigma: 1.0,
            nu: 100.0,
        };
        assert!((c.throughput(2f64.powi(20)) - 50.0).abs() < 1e-9);
        assert!(c.throughput(2f64.powi(40)) > 99.9);
        assert!(c.throughput(2f64.powi(5)) < 1e-4);
        assert_eq!(c.seconds(0.0), 0.0);
        assert!(!Sigmoid { sigma: -1.0, ..c }.is_valid());
    }
}
