//! The chain term of a product with A: each thread of an SpMV kernel runs one loop — a
//! row's terms (CSR, SELL), the padded width (ELL), the diagonals (DIA) or a pass's steps
//! (BCSR) — whose steps are dependent loads (a column index, then x at it). The launch
//! lasts at least as long as its longest loop ([`super::layout::SpmvLayout::chain`]),
//! whatever the bytes: a circuit matrix's dense row, or ELL padded to it, keeps one thread
//! busy while the rest of the GPU idles. Bytes alone cannot see it, so the model adds
//!
//! ```text
//! t = curve(bytes) + τ_f · L
//! ```
//!
//! per launch that multiplies by A, with `L` the layout's chain and `τ_f` one time per step
//! and format, fitted by the calibration jointly with the format's curves ([`fit_step`]):
//! its stencils (rows of 5 and 7) and its stencils of dense 8×8 blocks (rows of 40) differ
//! in L at the same bytes. On a GPU that hides a dependent load behind other threads' work
//! τ is small; on the H200 it is most of the difference between formats on small irregular
//! matrices (BENCHMARKS.md, issue 18).
//!
//! ```
//! use krylov_wgpu::model::chain::{ChainSample, fit_step};
//! // Kernels whose curve predicts 10 µs, measured 10 µs + 0.25 µs per step of their chain.
//! let samples: Vec<ChainSample> = [5.0, 7.0, 40.0]
//!     .iter()
//!     .map(|&steps| ChainSample { curve_seconds: 10e-6, seconds: 10e-6 + 0.25e-6 * steps, steps })
//!     .collect();
//! let tau = fit_step(&samples).unwrap();
//! assert!((tau - 0.25e-6).abs() < 1e-12);
//! ```

/// One timed launch of a kernel with A: what its curve predicts from its bytes alone, what
/// was measured, and its chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainSample {
    pub curve_seconds: f64,
    pub seconds: f64,
    pub steps: f64,
}

/// Chains must differ by this factor among a format's samples for τ to be told apart from
/// the curve's own latency (with one chain length the two are the same constant).
pub const MIN_CHAIN_SPREAD: f64 = 2.0;

/// τ ≥ 0 minimising Σ ((curve + τ·L − measured) / measured)², the relative errors the
/// curves are fitted by (a linear least-squares problem in τ, solved in closed form).
/// `None` when the samples' chains do not vary by [`MIN_CHAIN_SPREAD`] or none is usable.
pub fn fit_step(samples: &[ChainSample]) -> Option<f64> {
    let usable: Vec<&ChainSample> = samples
        .iter()
        .filter(|s| s.seconds > 0.0 && s.seconds.is_finite() && s.curve_seconds.is_finite())
        .collect();
    let shortest = usable.iter().map(|s| s.steps).fold(f64::INFINITY, f64::min);
    let longest = usable.iter().map(|s| s.steps).fold(0.0, f64::max);
    if usable.is_empty() || longest < MIN_CHAIN_SPREAD * shortest.max(1.0) {
        return None;
    }
    let (mut num, mut den) = (0.0, 0.0);
    for s in usable {
        let b = s.steps / s.seconds;
        num += b * (s.seconds - s.curve_seconds) / s.seconds;
        den += b * b;
    }
    (den > 0.0).then(|| (num / den).max(0.0))
}

/// The rms relative error of `curve + τ·L` against the measured times.
pub fn rms_relative_error(samples: &[ChainSample], tau: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let sq: f64 = samples
        .iter()
        .map(|s| ((s.curve_seconds + tau * s.steps - s.seconds) / s.seconds).powi(2))
        .sum();
    (sq / samples.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(curve: f64, steps: f64, tau: f64, noise: f64) -> ChainSample {
        ChainSample {
            curve_seconds: curve,
            seconds: (curve + tau * steps) * (1.0 + noise),
            steps,
        }
    }

    #[test]
    fn recovers_the_step_from_noisy_samples() {
        let tau = 0.2e-6;
        // Small kernels (latency-bound) and large ones, rows of 5, 7 and 40, ±3 % noise.
        let mut s = Vec::new();
        for (i, &curve) in [8e-6, 9e-6, 12e-6, 40e-6, 150e-6].iter().enumerate() {
            for (j, &steps) in [5.0, 7.0, 40.0].iter().enumerate() {
                let noise = 0.03 * (((i * 3 + j) % 5) as f64 - 2.0) / 2.0;
                s.push(sample(curve, steps, tau, noise));
            }
        }
        let fit = fit_step(&s).unwrap();
        assert!(
            (fit - tau).abs() < 0.1 * tau,
            "fitted {fit:e}, true {tau:e}"
        );
        assert!(rms_relative_error(&s, fit) < rms_relative_error(&s, 0.0));
    }

    #[test]
    fn no_step_without_a_spread_of_chains_and_never_a_negative_one() {
        // One chain length: τ and the curve's latency cannot be told apart.
        let same: Vec<_> = (0..4)
            .map(|i| sample(1e-5 * (i + 1) as f64, 5.0, 1e-7, 0.0))
            .collect();
        assert_eq!(fit_step(&same), None);
        assert_eq!(fit_step(&[]), None);
        // Longer chains measured faster than the curve: τ = 0, not negative.
        let faster = [sample(1e-5, 5.0, 0.0, 0.0), sample(1e-5, 40.0, 0.0, -0.2)];
        assert_eq!(fit_step(&faster), Some(0.0));
        // A NaN measurement is left out, not propagated.
        let mut with_nan = vec![sample(1e-5, 5.0, 1e-7, 0.0), sample(1e-5, 40.0, 1e-7, 0.0)];
        with_nan.push(ChainSample {
            curve_seconds: 1e-5,
            seconds: f64::NAN,
            steps: 20.0,
        });
        let fit = fit_step(&with_nan).unwrap();
        assert!((fit - 1e-7).abs() < 1e-12, "{fit:e}");
    }
}
