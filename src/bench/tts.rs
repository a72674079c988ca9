//! Time to solution: a whole pipelined device-mode solve, from the host matrix to the host
//! solution.

use std::time::Instant;

use super::{Heater, median, with_heater_paused};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::Engine;
use crate::matrix::Csr;
use crate::solvers::{CheckMode, Method, SolveOptions, Variant, solve_gpu};

/// Time to solution of one configuration: wall time of [`solve_gpu`] from the host matrix to
/// the host solution (upload, pipeline creation, the solve to `rtol`, download of x), median
/// of `runs`. Returns (median seconds, iterations, converged).
pub fn time_to_solution<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    method: Method,
    precision_rtol: f64,
    runs: usize,
    format: crate::base::Format,
    heater: Option<&Heater>,
) -> Result<(f64, usize, bool)> {
    let b = a.mul_vec(&vec![T::one(); a.ncols()])?;
    let opts = SolveOptions {
        method,
        variant: Variant::Pipelined,
        check_mode: CheckMode::Device,
        rtol: precision_rtol,
        max_iter: 100_000,
        format,
        ..Default::default()
    };
    let mut times = Vec::new();
    let mut last = (0, false);
    for _ in 0..runs.max(1) {
        // The whole solve is timed (upload included): the heater rests throughout.
        let t = Instant::now();
        let sol = with_heater_paused(heater, || solve_gpu(engine, a, &b, None, &opts, &mut ()));
        times.push(t.elapsed().as_secs_f64());
        let sol = sol?;
        last = (sol.report.iterations, sol.report.converged);
    }
    Ok((median(&mut times), last.0, last.1))
}
