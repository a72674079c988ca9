//! Time per iteration: a solver loop of exactly `iterations` iterations, `runs` times, the
//! median reported against the roofline of [`bytes_per_iteration`].

use super::{Heater, bench_matrix, bytes_per_iteration, lead_columns, median};
use crate::base::error::Result;
use crate::base::scalar::{Precision, Scalar};
use crate::gpu::Engine;
use crate::matrix::Csr;
use crate::solvers::{CheckMode, KernelTime, Method, Precond, SolveOptions, Variant, solve_gpu};

/// One configuration to time.
#[derive(Debug, Clone)]
pub struct BenchCase {
    /// Generator spec family: `poisson2d` or `laplace3d` (sized to about `n` unknowns).
    pub problem: String,
    pub n: usize,
    pub method: Method,
    pub variant: Variant,
    pub precision: Precision,
    pub check_mode: CheckMode,
    pub iterations: usize,
    pub runs: usize,
    pub restart: usize,
    /// CA-GMRES's block size s (ignored by the other methods).
    pub s_step: usize,
    pub format: crate::base::Format,
}

/// The measured result of one [`BenchCase`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchRow {
    pub problem: String,
    pub n: usize,
    pub nnz: usize,
    pub format: String,
    pub method: Method,
    /// CA-GMRES's block size s (0 for the other methods).
    pub s_step: usize,
    pub variant: Variant,
    pub precision: Precision,
    pub check_mode: CheckMode,
    pub iterations: usize,
    /// Median over the runs of loop seconds / iterations recorded, in µs.
    pub us_per_iteration: f64,
    /// All runs' µs per iteration.
    pub us_runs: Vec<f64>,
    pub dispatches_per_iteration: f64,
    pub transfers_per_iteration: f64,
    /// Bytes one iteration must move at least (model in [`bytes_per_iteration`]).
    pub bytes_per_iteration: f64,
    pub gb_per_s: f64,
    /// bytes_per_iteration / measured streaming bandwidth, in µs (0 when not measured).
    pub roofline_us: f64,
    /// us_per_iteration / roofline_us.
    pub roofline_ratio: f64,
    /// GPU time per kernel per iteration (µs), when profiling.
    pub kernel_us_per_iteration: Vec<(String, f64)>,
    pub adapter: String,
    /// Iterations the last run really performed and why it stopped (a run that stopped
    /// before `iterations` makes the timing meaningless: the table flags it).
    pub iterations_done: usize,
    pub reason: String,
    /// Restarts of the last run (a breakdown, a residual replacement, a GMRES cycle) and why.
    pub restarts: usize,
    pub restart_log: Vec<String>,
    /// Which draw of the right-hand side the last run used (0 unless a run with an earlier
    /// draw did not run as timed; see [`run_case_on`]).
    pub rhs_draw: u64,
}

impl BenchRow {
    /// Whether the last run's loop ran every iteration it recorded: no early stop, and no
    /// batch abandoned by a breakdown or a residual replacement (its remaining launches exit
    /// at once but are recorded, so they would count as cheap iterations in `µs/iter`).
    pub fn ran_as_timed(&self) -> bool {
        self.iterations_done == self.iterations
    }
}

/// Times one case; `bandwidth_gbs` (0 if unknown) gives the roofline.
pub fn run_case(engine: &Engine, case: &BenchCase, bandwidth_gbs: f64) -> Result<BenchRow> {
    match case.precision {
        Precision::F32 => {
            let a = bench_matrix::<f32>(&case.problem, case.n)?;
            run_case_on(engine, case, &a, bandwidth_gbs, None)
        }
        Precision::F64 => {
            let a = bench_matrix::<f64>(&case.problem, case.n)?;
            run_case_on(engine, case, &a, bandwidth_gbs, None)
        }
    }
}

/// Times one case on a matrix built already (`case.precision` must be `T`'s).
pub fn run_case_on<T: Scalar>(
    engine: &Engine,
    case: &BenchCase,
    a: &Csr<T>,
    bandwidth_gbs: f64,
    heater: Option<&Heater>,
) -> Result<BenchRow> {
    let opts = SolveOptions {
        method: case.method,
        variant: case.variant,
        check_mode: case.check_mode,
        rtol: 0.0,
        atol: 0.0,
        max_iter: case.iterations,
        batch: case.iterations,
        restart: case.restart,
        s_step: case.s_step,
        format: case.format,
        precond: Precond::None,
        ..Default::default()
    };
    let solve = |b: &[T]| match heater {
        // Warm clocks during the setup, paused for the timed loop.
        Some(h) => {
            let sol = solve_gpu(engine, a, b, None, &opts, &mut h.monitor());
            h.resume();
            sol
        }
        None => solve_gpu(engine, a, b, None, &opts, &mut ()),
    };
    // f32 BiCGStab's test of ⟨r, r₀*⟩ can still fire for one draw of b (poisson2d:40 at
    // iteration 19 on lavapipe) and not for the next: a run that did not run every iteration
    // it recorded is redone on the next draw, up to RHS_DRAWS draws in all.
    let mut seed = 0;
    let mut b = timing_rhs::<T>(a.nrows(), seed);
    let mut us_runs = Vec::new();
    let mut last = None;
    for _ in 0..case.runs.max(1) {
        let mut r = solve(&b)?.report;
        while r.iterations < r.iterations_recorded && seed + 1 < RHS_DRAWS {
            seed += 1;
            b = timing_rhs::<T>(a.nrows(), seed);
            r = solve(&b)?.report;
        }
        if r.iterations_recorded > 0 {
            us_runs.push(r.loop_seconds / r.iterations_recorded as f64 * 1e6);
        }
        last = Some(r);
    }
    let r = last.expect("at least one run");
    let us = median(&mut us_runs.clone());
    let bytes = bytes_per_iteration(
        case.method,
        case.variant,
        a.nrows(),
        a.nnz(),
        T::PRECISION.size(),
        case.restart,
    );
    let roofline_us = if bandwidth_gbs > 0.0 {
        bytes / (bandwidth_gbs * 1e9) * 1e6
    } else {
        0.0
    };
    let per_it = |k: &KernelTime| {
        (
            k.name.clone(),
            k.seconds / r.iterations_recorded.max(1) as f64 * 1e6,
        )
    };
    Ok(BenchRow {
        problem: case.problem.clone(),
        n: a.nrows(),
        nnz: a.nnz(),
        // The format the solve ran on (`auto` resolved).
        format: r.format.clone(),
        method: case.method,
        s_step: if case.method == Method::CaGmres {
            case.s_step
        } else {
            0
        },
        variant: case.variant,
        precision: T::PRECISION,
        check_mode: case.check_mode,
        iterations: r.iterations_recorded,
        us_per_iteration: us,
        us_runs,
        dispatches_per_iteration: r.dispatches_per_iteration,
        transfers_per_iteration: r.transfers_per_iteration,
        bytes_per_iteration: bytes,
        gb_per_s: bytes / (us * 1e-6) / 1e9,
        roofline_us,
        roofline_ratio: if roofline_us > 0.0 {
            us / roofline_us
        } else {
            0.0
        },
        kernel_us_per_iteration: r.kernel_times.iter().map(per_it).collect(),
        adapter: engine.context().summary.name.clone(),
        iterations_done: r.iterations,
        reason: r.reason.name().to_string(),
        restarts: r.restarts,
        restart_log: r.restart_log.clone(),
        rhs_draw: seed,
    })
}

/// Right-hand sides [`run_case_on`] tries before it reports a loop that did not run as timed.
const RHS_DRAWS: u64 = 3;

/// The right-hand side of a timed loop: uniform draws in [−1, 1), the `seed`-th of a fixed
/// sequence.
///
/// A timed loop must not converge. With b = A·1 a fast-converging matrix reaches f32's
/// floor within 40 iterations, where BiCGStab's ⟨r, r₀*⟩ breaks down and the solve restarts
/// (jpwh_991 at iteration 1, convdiff3d:24 at 36, pde2961 at 33 on lavapipe); the abandoned
/// batch's remaining launches exit at once and were counted as iterations, so `krylov bench`
/// measured BiCGStab 15–50 % faster than it runs. A random b has every eigencomponent.
fn timing_rhs<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x6b72_796c + seed);
    (0..n)
        .map(|_| T::from_f64(rng.random_range(-1.0..1.0)))
        .collect()
}

/// Width of the problem column of [`table_header`].
const PROBLEM_WIDTH: usize = 10;

/// One line of the table `krylov bench` prints.
pub fn table_header() -> String {
    let head = lead_columns("problem", PROBLEM_WIDTH, "n", "nnz");
    format!(
        "{head} {:<6} {:<8} {:<4} {:<10} {:<6} {:>10} {:>8} {:>8} {:>8} {:>10} {:>7}",
        "format",
        "method",
        "prec",
        "variant",
        "check",
        "µs/iter",
        "disp/it",
        "xfer/it",
        "GB/s",
        "roof µs",
        "×roof"
    )
}

/// The row formatted under [`table_header`].
pub fn table_row(r: &BenchRow) -> String {
    // A loop that stopped (converged, broke down) or recorded iterations it did not run (a
    // restart abandoned a batch; a GMRES cycle ended before its m steps): not a time per
    // iteration of the method.
    let flag = if r.ran_as_timed() {
        String::new()
    } else if r.restart_log.is_empty() && r.reason != "max_iterations" {
        format!(
            "  (stopped early: {} after {} iterations)",
            r.reason, r.iterations_done
        )
    } else {
        let why = if r.restart_log.is_empty() {
            "a cycle ended before its steps".to_string()
        } else {
            r.restart_log.join("; ")
        };
        format!(
            "  (ran {} of {} recorded iterations: {why}; not a time per iteration)",
            r.iterations_done, r.iterations
        )
    };
    let row = format!(
        "{} {:<6} {:<8} {:<4} {:<10} {:<6} {:>10.2} {:>8.2} {:>8.3} {:>8.1} {:>10.2} {:>7.2}",
        lead_columns(&r.problem, PROBLEM_WIDTH, r.n, r.nnz),
        r.format,
        method_label(r),
        r.precision.wgsl(),
        r.variant.as_str(),
        r.check_mode.as_str(),
        r.us_per_iteration,
        r.dispatches_per_iteration,
        r.transfers_per_iteration,
        r.gb_per_s,
        r.roofline_us,
        r.roofline_ratio
    );
    row + &flag
}

/// The method column: CA-GMRES with its s (`ca-s10`), the others by name.
fn method_label(r: &BenchRow) -> String {
    match r.method {
        Method::CaGmres => format!("ca-s{}", r.s_step),
        m => m.as_str().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_table_row_lines_up_under_the_header() {
        assert_eq!(
            table_header(),
            "problem            n        nnz format method   prec variant    check     µs/iter  disp/it  xfer/it     GB/s    roof µs   ×roof"
        );
        let row = BenchRow {
            problem: "poisson2d".into(),
            n: 1024,
            nnz: 4992,
            format: "csr".into(),
            method: Method::Cg,
            s_step: 0,
            variant: Variant::Pipelined,
            precision: Precision::F32,
            check_mode: CheckMode::Device,
            iterations: 30,
            us_per_iteration: 12.345,
            us_runs: vec![12.345],
            dispatches_per_iteration: 2.0,
            transfers_per_iteration: 0.0333,
            bytes_per_iteration: 1e5,
            gb_per_s: 8.1,
            roofline_us: 5.0,
            roofline_ratio: 2.469,
            kernel_us_per_iteration: Vec::new(),
            adapter: "test".into(),
            iterations_done: 12,
            reason: "converged".into(),
            restarts: 0,
            restart_log: Vec::new(),
            rhs_draw: 0,
        };
        assert_eq!(
            table_row(&row),
            "poisson2d       1024       4992 csr    cg       f32  pipelined  device      12.35     2.00    0.033      8.1       5.00    2.47  (stopped early: converged after 12 iterations)"
        );
        // A breakdown abandoned the first batch: 40 iterations ran, 79 were recorded.
        let restarted = BenchRow {
            method: Method::Bicgstab,
            iterations: 79,
            iterations_done: 40,
            reason: "max_iterations".into(),
            restarts: 1,
            restart_log: vec!["breakdown of <r, r0*> at iteration 1".into()],
            ..row
        };
        assert!(!restarted.ran_as_timed());
        assert!(table_row(&restarted).ends_with(
            "(ran 40 of 79 recorded iterations: breakdown of <r, r0*> at iteration 1; not a time per iteration)"
        ));
    }

    #[test]
    fn timing_rhs_is_fixed_and_spans_both_signs() {
        let b = timing_rhs::<f32>(1000, 0);
        assert_eq!(b, timing_rhs::<f32>(1000, 0));
        assert_ne!(b, timing_rhs::<f32>(1000, 1));
        assert!(b.iter().all(|v| (-1.0..1.0).contains(v)));
        assert!(b.iter().any(|v| *v < -0.5) && b.iter().any(|v| *v > 0.5));
    }
}
