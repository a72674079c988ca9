//! What a solver's untimed loop takes per launch beyond its kernels' curves, per method and
//! variant and by size: the model's last correction, fitted end to end on the calibration's
//! own solves.
//!
//! The curves are fitted on GPU timestamps of one kernel at a time, less one timestamp
//! overhead for every launch (`Profile::timestamp_overhead_seconds`, the median over all
//! cases). The loop a solve runs differs from that sum by an amount that depends on the
//! method and the size: on the H200 the untimed wall less the timed kernels ranged from
//! −15.9 to +1.7 µs per launch over the 376 cases of one calibration, and the model
//! over-predicted pipelined BiCGStab at 9e4–2.6e5 rows by 30–48 % (BENCHMARKS.md,
//! 2026-11-29). After the fits, each calibration case is predicted with the new profile and
//! compared with its measured untimed wall; the residual per launch, median over the formats
//! of one matrix, is a point `(rows, seconds)` of its method and variant, and a prediction
//! adds the residual interpolated linearly in log(rows) between the points (the end points'
//! values beyond them).
//!
//! ```
//! use krylov_wgpu::model::loop_residual::{at, points};
//! // Two matrices of 1e3 and 1e5 rows; the second had two formats.
//! let p = points(&[(1000, -1.0e-6), (100_000, -4.0e-6), (100_000, -6.0e-6)]);
//! assert_eq!(p, vec![[1e3, -1.0e-6], [1e5, -0.5 * (4.0e-6 + 6.0e-6)]]);
//! assert!((at(&p, 1e4) - -3e-6).abs() < 1e-15); // halfway in log(rows)
//! assert_eq!(at(&p, 10.0), -1e-6); // clamped
//! assert_eq!(at(&[], 1e4), 0.0);
//! ```

use std::collections::BTreeMap;

use super::kernels::Shape;
use super::layout::SpmvLayout;
use super::predict::{PredictRequest, predict_on_layouts};
use super::profile::Profile;
use crate::base::{CheckMode, Format, Method, Precision, Variant};

/// One calibration solve timed without timestamps: what the residual is fitted on.
#[derive(Debug, Clone)]
pub struct LoopCase {
    pub method: Method,
    pub variant: Variant,
    pub format: Format,
    pub layout: SpmvLayout,
    /// Iterations per submit of the timed loop (`device` mode, f32) and GMRES's restart.
    pub shape: Shape,
    /// Its wall time per iteration.
    pub wall_seconds: f64,
}

/// The residual points per `method/variant` key of `cases` on `profile` (whose own
/// residuals are ignored): each case's (wall − predicted) per launch, [`points`] over the
/// cases of one key.
pub fn fit(profile: &Profile, cases: &[LoopCase]) -> BTreeMap<String, Vec<[f64; 2]>> {
    let bare = Profile {
        launch_residuals: BTreeMap::new(),
        ..profile.clone()
    };
    let mut by_key: BTreeMap<String, Vec<(usize, f64)>> = BTreeMap::new();
    for c in cases {
        let Some(p) = predict_case(&bare, c) else {
            continue;
        };
        let launches = p.dispatches_per_iteration.max(1.0);
        let r = (c.wall_seconds - p.seconds_per_iteration) / launches;
        by_key
            .entry(key(c.method, c.variant))
            .or_default()
            .push((c.layout.nrows, r));
    }
    by_key
        .into_iter()
        .map(|(k, v)| (k, points(&v)))
        .filter(|(_, p)| !p.is_empty())
        .collect()
}

/// The profile's key of a method and variant: `bicgstab/pipelined`.
pub fn key(method: Method, variant: Variant) -> String {
    format!("{method}/{variant}")
}

/// `case` predicted on `profile` as it was timed (f32, `device` mode, its batch), or `None`
/// when the profile refuses it.
fn predict_case(profile: &Profile, case: &LoopCase) -> Option<super::predict::Prediction> {
    let req = PredictRequest {
        formats: vec![case.format],
        precisions: vec![Precision::F32],
        variants: vec![(case.method, case.variant)],
        check_mode: CheckMode::Device,
        shape: case.shape,
        iterations: 1,
        max_padding: f64::INFINITY,
    };
    predict_on_layouts(profile, &[(case.format, Ok(case.layout))], &req)
        .into_iter()
        .next()
        .filter(|p| p.refused.is_none())
}

/// The residual curve of `cases` (rows, residual seconds per launch): the median residual
/// per distinct row count, sorted by rows. Non-finite residuals and empty matrices are left
/// out.
pub fn points(cases: &[(usize, f64)]) -> Vec<[f64; 2]> {
    let mut by_rows: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for &(rows, r) in cases.iter().filter(|(n, r)| *n > 0 && r.is_finite()) {
        by_rows.entry(rows).or_default().push(r);
    }
    by_rows
        .into_iter()
        .map(|(rows, mut v)| [rows as f64, crate::bench::median(&mut v)])
        .collect()
}

/// The residual at `rows`: linear in log(rows) between the points, the end points' values
/// beyond them, 0 without points.
pub fn at(points: &[[f64; 2]], rows: f64) -> f64 {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return 0.0;
    };
    if rows <= first[0] {
        return first[1];
    }
    if rows >= last[0] {
        return last[1];
    }
    let x = rows.ln();
    for w in points.windows(2) {
        let ([x0, y0], [x1, y1]) = (w[0], w[1]);
        if rows <= x1 {
            let t = (x - x0.ln()) / (x1.ln() - x0.ln());
            return y0 + t * (y1 - y0);
        }
    }
    last[1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_take_the_median_per_size_and_sort() {
        let p = points(&[
            (4096, 3.0),
            (256, 1.0),
            (4096, 1.0),
            (4096, 2.0),
            (256, f64::NAN),
            (0, 5.0),
        ]);
        assert_eq!(p, vec![[256.0, 1.0], [4096.0, 2.0]]);
        assert!(points(&[]).is_empty());
    }

    #[test]
    fn interpolation_is_linear_in_log_rows_and_clamped() {
        let p = [[100.0, -2.0], [10_000.0, 2.0], [1e6, 0.0]];
        assert_eq!(at(&p, 50.0), -2.0);
        assert_eq!(at(&p, 100.0), -2.0);
        assert!((at(&p, 1000.0) - 0.0).abs() < 1e-12);
        assert!((at(&p, 1e5) - 1.0).abs() < 1e-12);
        assert_eq!(at(&p, 1e7), 0.0);
        assert_eq!(at(&[[10.0, 7.0]], 1e9), 7.0);
    }

    #[test]
    fn the_fit_recovers_a_loop_residual_per_method_and_size() {
        use crate::matrix::generators::poisson_2d_fd;
        use crate::model::layout::spmv_layout;
        use crate::model::profile::tests::sample_profile;
        let profile = sample_profile();
        let params = profile.layout_params(10.0);
        let mut cases = Vec::new();
        let mut want = Vec::new();
        // Walls = the prediction + r(n) per launch, r = −1 µs at 256 rows, −4 µs at 4096.
        for (k, r) in [(16usize, -1e-6), (64, -4e-6)] {
            let a = poisson_2d_fd::<f64>(k);
            let mut case = LoopCase {
                method: Method::Cg,
                variant: Variant::Pipelined,
                format: Format::Csr,
                layout: spmv_layout(&a, Format::Csr, &params).unwrap(),
                shape: Shape::batch(30),
                wall_seconds: 0.0,
            };
            let p = predict_case(&profile, &case).unwrap();
            case.wall_seconds = p.seconds_per_iteration + r * p.dispatches_per_iteration;
            cases.push(case);
            want.push([(k * k) as f64, r]);
        }
        let fitted = fit(&profile, &cases);
        let got = &fitted["cg/pipelined"];
        assert_eq!(got.len(), 2);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g[0], w[0]);
            assert!((g[1] - w[1]).abs() < 1e-12, "{g:?} against {w:?}");
        }
        // A profile carrying the residuals predicts the walls.
        let with = Profile {
            launch_residuals: fitted,
            ..profile.clone()
        };
        for c in &cases {
            let p = predict_case(&with, c).unwrap();
            let (got, want) = (p.seconds_per_iteration, c.wall_seconds);
            assert!((got - want).abs() < 1e-12, "{got} against {want}");
        }
        // Other methods have no residual.
        assert_eq!(
            with.launch_residual(Method::Bicgstab, Variant::Pipelined, 1000),
            0.0
        );
    }

    #[test]
    fn keys_name_method_and_variant() {
        assert_eq!(
            key(Method::Bicgstab, Variant::Pipelined),
            "bicgstab/pipelined"
        );
    }
}
