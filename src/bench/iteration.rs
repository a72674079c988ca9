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
    let b = a.mul_vec(&vec![T::one(); a.ncols()])?;
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
    let mut us_runs = Vec::new();
    let mut last = None;
    for _ in 0..case.runs.max(1) {
        let sol = match heater {
            // Warm clocks during the setup, paused for the timed loop.
            Some(h) => {
                let sol = solve_gpu(engine, a, &b, None, &opts, &mut h.monitor());
                h.resume();
                sol?
            }
            None => solve_gpu(engine, a, &b, None, &opts, &mut ())?,
        };
        let r = sol.report;
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
    })
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
    let flag = if r.iterations_done < r.iterations {
        format!(
            "  (stopped early: {} after {} iterations)",
            r.reason, r.iterations_done
        )
    } else {
        String::new()
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
        };
        assert_eq!(
            table_row(&row),
            "poisson2d       1024       4992 csr    cg       f32  pipelined  device      12.35     2.00    0.033      8.1       5.00    2.47  (stopped early: converged after 12 iterations)"
        );
    }
}
