//! Gather locality of an SpMV: the memory sectors of x a group of rows really touches, and
//! the weight of the traffic beyond paper 003's count, fitted by calibration.
//!
//! Paper 003 charges one value of x per stored entry (`stored · s` bytes). That is right, or
//! an over-count the fitted curves absorb, when the rows a subgroup processes together read
//! neighbouring columns (stencils, FEM meshes, blocks): their loads share sectors. With
//! random columns every entry fetches its own sector (32 bytes for a 4-byte value), which the
//! count misses: random-spd:1000000:7 ran at 104 µs per iteration on an H200 against 54.5 µs
//! predicted (BENCHMARKS.md, issue 18, run 4). So, per group of rows one workgroup processes
//! (WG consecutive rows for CSR and ELL, WG slots of sorted rows for SELL-C-σ, the block-row
//! slots of one pass for BCSR; they share one multiprocessor's L1), the distinct sectors of x
//! its entries read are counted and the bytes beyond the per-entry count are the group's
//! gather excess:
//!
//! ```text
//!   excess(s)  = Σ_groups max(0, SECTOR · sectors_g(s) − s · stored_g)
//!   bytes(SpMV) = paper 003's count + γ_format · excess(s)
//! ```
//!
//! The max keeps the calibration's own matrices (stencils and dense blocks, excess 0) on
//! their curves unchanged; γ (per format, [`fit_weight`]) is what one excess byte costs
//! relative to a streamed one — below 1 when x sits in the last-level cache, since the
//! sectors then come from L2 and not from memory. DIA reads each diagonal as one contiguous
//! run: no excess. Cost O(nnz log g) for groups of g entries.

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::storage::Owned;
use nalgebra::{DVector, Dyn, U1, Vector1};

use super::sigmoid::Sigmoid;

/// Bytes of one memory sector: the granularity of NVIDIA's L2 and DRAM accesses (a 128-byte
/// line is 4 sectors) and of the loads the count assumes elsewhere.
pub const SECTOR_BYTES: u64 = 32;

/// The value sizes the excess is counted for: f32 and f64.
pub const VALUE_SIZES: [usize; 2] = [4, 8];

/// Accumulates the excess of [`VALUE_SIZES`] group by group.
#[derive(Default)]
pub struct GatherCount {
    excess: [u64; 2],
    sectors: Vec<u64>,
    ranges: Vec<(u64, u64)>,
}

impl GatherCount {
    /// Adds x's index range `[first, first + len)` read by the current group.
    pub fn read(&mut self, first: u64, len: u64) {
        self.ranges.push((first, len));
    }

    /// Closes the current group, which stores `stored` entries (padding included).
    pub fn end_group(&mut self, stored: u64) {
        for (slot, &s) in VALUE_SIZES.iter().enumerate() {
            let s = s as u64;
            self.sectors.clear();
            for &(first, len) in &self.ranges {
                let lo = first * s / SECTOR_BYTES;
                let hi = ((first + len) * s).div_ceil(SECTOR_BYTES);
                self.sectors.extend(lo..hi);
            }
            self.sectors.sort_unstable();
            self.sectors.dedup();
            let touched = self.sectors.len() as u64 * SECTOR_BYTES;
            self.excess[slot] += touched.saturating_sub(s * stored);
        }
        self.ranges.clear();
    }

    /// The excess bytes for 4- and 8-byte values.
    pub fn finish(self) -> [u64; 2] {
        debug_assert!(self.ranges.is_empty(), "a group was left open");
        self.excess
    }
}

/// The excess for `s`-byte values out of a layout's pair (0 for other sizes).
pub fn excess_for(excess: [u64; 2], s: usize) -> u64 {
    VALUE_SIZES
        .iter()
        .position(|&v| v == s)
        .map_or(0, |i| excess[i])
}

/// One timed launch on a calibration matrix with scattered columns: the kernel's curve, the
/// bytes of paper 003's count and the gather excess.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GatherSample {
    pub bytes: f64,
    pub excess: f64,
    pub seconds: f64,
}

/// The fitted weight γ of one format with its residuals.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WeightFit {
    pub weight: f64,
    /// Root mean square relative time error with the fitted γ, and with γ = 0 (the count
    /// of paper 003 alone) for comparison.
    pub rms_relative_error: f64,
    pub rms_relative_error_without: f64,
    pub samples: usize,
}

/// The one-parameter problem in ln γ (γ > 0): residuals (t(bytes + γ·excess) − t)/t, each
/// sample on its own kernel's curve.
struct WeightProblem<'a> {
    samples: &'a [(Sigmoid, GatherSample)],
    p: Vector1<f64>,
}

impl WeightProblem<'_> {
    fn residual(&self, gamma: f64, c: &Sigmoid, s: &GatherSample) -> f64 {
        (c.seconds(s.bytes + gamma * s.excess) - s.seconds) / s.seconds
    }
}

impl LeastSquaresProblem<f64, Dyn, U1> for WeightProblem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, U1>;
    type ParameterStorage = Owned<f64, U1>;

    fn set_params(&mut self, p: &Vector1<f64>) {
        self.p = *p;
    }

    fn params(&self) -> Vector1<f64> {
        self.p
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        let g = self.p[0].exp();
        let r = DVector::from_iterator(
            self.samples.len(),
            self.samples.iter().map(|(c, s)| self.residual(g, c, s)),
        );
        r.iter().all(|v| v.is_finite()).then_some(r)
    }

    fn jacobian(&self) -> Option<nalgebra::OMatrix<f64, Dyn, U1>> {
        // Central differences in ln γ: t(x) = x / B(x) has no simple closed derivative worth
        // the code, and one parameter costs two residual sweeps.
        let h = 1e-6;
        let g = self.p[0];
        let col = self.samples.iter().map(|(c, s)| {
            (self.residual((g + h).exp(), c, s) - self.residual((g - h).exp(), c, s)) / (2.0 * h)
        });
        let j = nalgebra::OMatrix::<f64, Dyn, U1>::from_iterator(self.samples.len(), col);
        j.iter().all(|v| v.is_finite()).then_some(j)
    }
}

/// Fits γ of one format to `samples` (each with its kernel's fitted curve) with
/// Levenberg–Marquardt (the `levenberg-marquardt` crate). `None` without samples that have
/// an excess, or when the fit fails.
pub fn fit_weight(samples: &[(Sigmoid, GatherSample)]) -> Option<WeightFit> {
    let samples: Vec<_> = samples
        .iter()
        .copied()
        .filter(|(_, s)| s.excess > 0.0 && s.seconds > 0.0 && s.seconds.is_finite())
        .collect();
    if samples.is_empty() {
        return None;
    }
    let mut best: Option<(f64, f64)> = None;
    // Starts on both sides of 1 (L2-served sectors are cheaper than streamed bytes,
    // memory-served ones may cost more); the best minimum is kept.
    for start in [0.1_f64, 1.0, 4.0] {
        let problem = WeightProblem {
            samples: &samples,
            p: Vector1::new(start.ln()),
        };
        let (solved, report) = LevenbergMarquardt::new()
            .with_patience(100)
            .minimize(problem);
        if report.termination.was_usage_issue() {
            continue;
        }
        let gamma = solved.p[0].exp();
        let cost = solved
            .residuals()
            .map_or(f64::INFINITY, |r| r.norm_squared());
        if gamma.is_finite() && cost.is_finite() && best.is_none_or(|(c, _)| cost < c) {
            best = Some((cost, gamma));
        }
    }
    let (_, weight) = best?;
    let rms = |g: f64| {
        let p = WeightProblem {
            samples: &samples,
            p: Vector1::new(0.0),
        };
        let sq: f64 = samples
            .iter()
            .map(|(c, s)| p.residual(g, c, s).powi(2))
            .sum();
        (sq / samples.len() as f64).sqrt()
    };
    Some(WeightFit {
        weight,
        rms_relative_error: rms(weight),
        rms_relative_error_without: rms(0.0),
        samples: samples.len(),
    })
}

/// The profile's key of γ for a product that gathers `vectors` vectors at each stored entry
/// in `format`: the format's name for one (every SpMV), `"{format}:{vectors}"` for more
/// (fused CG's product reads r, Ap and p at each entry: three dependent loads from three
/// arrays, whose misses cost differently from one vector's — on the H200 a scattered matrix
/// took fused CG 2× pipelined CG's time in ELL and BCSR 1×1, where one γ per format
/// predicted 1×).
///
/// ```
/// use krylov_wgpu::model::gather::weight_key;
/// assert_eq!(weight_key("ell", 1.0), "ell");
/// assert_eq!(weight_key("ell", 3.0), "ell:3");
/// ```
pub fn weight_key(format: &str, vectors: f64) -> String {
    if vectors <= 1.0 {
        format.to_string()
    } else {
        format!("{format}:{vectors}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_beyond_the_per_entry_count_are_the_excess() {
        let mut g = GatherCount::default();
        // 8 entries on 8 consecutive columns: one sector of f32 (32 ≤ 8·4), two of f64.
        for c in 0..8 {
            g.read(c, 1);
        }
        g.end_group(8);
        // 2 entries 1000 apart: 2 sectors = 64 bytes against 8 (f32) or 16 (f64).
        g.read(0, 1);
        g.read(1000, 1);
        g.end_group(2);
        // An 8-wide block column starting at 4: f32 bytes 16..48 → sectors 0 and 1 (64
        // bytes against 32: the misalignment costs 32); f64 bytes 32..96 → sectors 1, 2 (64
        // against 64: none).
        g.read(4, 8);
        g.end_group(8);
        assert_eq!(g.finish(), [(64 - 8) + (64 - 32), 64 - 16]);
        assert_eq!(excess_for([5, 7], 8), 7);
        assert_eq!(excess_for([5, 7], 2), 0);
    }

    #[test]
    fn the_weight_fit_recovers_a_known_weight() {
        let c = Sigmoid {
            mu: 20.0,
            sigma: 1.5,
            nu: 2e12,
        };
        let truth = 0.35;
        let samples: Vec<_> = [1e5, 1e6, 1e7, 1e8]
            .iter()
            .enumerate()
            .map(|(i, &bytes)| {
                let excess = 3.0 * bytes;
                // ±2 % noise, alternating.
                let noise = if i % 2 == 0 { 1.02 } else { 0.98 };
                let seconds = c.seconds(bytes + truth * excess) * noise;
                (
                    c,
                    GatherSample {
                        bytes,
                        excess,
                        seconds,
                    },
                )
            })
            .collect();
        let f = fit_weight(&samples).unwrap();
        assert!((f.weight - truth).abs() < 0.05, "{f:?}");
        assert!(f.rms_relative_error < 0.03, "{f:?}");
        assert!(f.rms_relative_error_without > 0.3, "{f:?}");
        assert!(fit_weight(&[]).is_none());
    }
}
