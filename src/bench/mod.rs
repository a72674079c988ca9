//! Benchmarks behind `krylov bench`: time per iteration of the GPU solvers at a fixed
//! iteration count, launches and transfers per iteration, achieved bandwidth against a
//! measured streaming bandwidth (the roofline), and GPU time per kernel.
//!
//! Timing rules: every configuration runs `runs` times, the median of the loop time per
//! iteration is reported; the loop runs exactly `iterations` iterations (rtol = atol = 0,
//! `device` mode records them all in one submit). Nothing here is a pass/fail test.
//!
//! | file | what |
//! |---|---|
//! | `problem.rs` | the generated problems ([`bench_matrix`]) and the traffic model ([`bytes_per_iteration`]) |
//! | `iteration.rs` | time per iteration ([`BenchCase`] → [`BenchRow`], its table) |
//! | `tts.rs` | time to solution ([`time_to_solution`]) |
//! | `spmv.rs` | SpMV bandwidth per storage format ([`bench_spmv`] → [`SpmvRow`], its table) |
//! | `probe.rs` | streaming bandwidth and launch-latency probes ([`measure_bandwidth`]) |
//! | `heater.rs` | the clock [`Heater`] that runs between timed loops ([`Heaters`]: `solve --heat`) |

mod heater;
mod iteration;
mod probe;
mod problem;
mod spmv;
mod tts;

pub use heater::{Heater, Heaters, PauseAtLoopStart, with_heater_paused};
pub use iteration::{BenchCase, BenchRow, run_case, run_case_on, table_header, table_row};
pub use probe::{dependent_dispatch_us, measure_bandwidth, probe_update4, probe_update4_variant};
pub use problem::{bench_matrix, bytes_per_iteration};
pub use spmv::{SpmvBench, SpmvRow, bench_spmv, spmv_table_header, spmv_table_row};
pub use tts::time_to_solution;

use std::fmt::Display;

use crate::base::error::Result;

/// The columns every bench table starts with: the matrix (`width` wide), n and nnz.
fn lead_columns(name: &str, width: usize, n: impl Display, nnz: impl Display) -> String {
    format!("{name:<width$} {n:>9} {nnz:>10}")
}

/// The median of `v` (sorted in place); NaN when empty.
pub(crate) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

/// Takes one sample to warm up (pipelines, caches, clocks) and discards it, then the median
/// of `timed` more.
fn median_after_warmup(timed: usize, mut sample: impl FnMut() -> Result<f64>) -> Result<f64> {
    sample()?;
    let mut samples = (0..timed).map(|_| sample()).collect::<Result<Vec<f64>>>()?;
    Ok(median(&mut samples))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn bench_median_after_warmup_drops_the_first_sample() {
        let mut next = [100.0, 1.0, 3.0, 2.0].into_iter();
        let m = median_after_warmup(3, || Ok(next.next().unwrap())).unwrap();
        assert_eq!(m, 2.0);
        assert!(next.next().is_none());
    }
}
