//! `krylov bench`'s time per iteration: every iteration it records must run. A solve that
//! restarts abandons the rest of its batch (those launches exit at once), so a loop that
//! restarted measures cheap no-op iterations, not the method.

mod common;

use krylov_wgpu::base::scalar::Precision;
use krylov_wgpu::bench::{BenchCase, run_case_on, table_row};
use krylov_wgpu::matrix::{Csr, generators, market};
use krylov_wgpu::solvers::{CheckMode, Format, Method, SolveOptions, Variant, solve_gpu};

fn case(method: Method, n: usize, iterations: usize) -> BenchCase {
    BenchCase {
        problem: "test".into(),
        n,
        method,
        variant: Variant::Pipelined,
        precision: Precision::F32,
        check_mode: CheckMode::Device,
        iterations,
        runs: 1,
        restart: 30,
        s_step: 5,
        format: Format::Csr,
    }
}

#[test]
fn bicgstab_bench_on_jpwh_991_runs_every_recorded_iteration() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a: Csr<f32> = market::read_matrix_market(common::data("jpwh_991.mtx")).unwrap();
    let opts = SolveOptions {
        method: Method::Bicgstab,
        variant: Variant::Pipelined,
        rtol: 0.0,
        atol: 0.0,
        max_iter: 40,
        batch: 40,
        format: Format::Csr,
        ..Default::default()
    };
    // Why the benchmark does not use b = A·1: here ⟨r, r₀*⟩ breaks down at once, the solve
    // restarts, and the first batch's 39 remaining launches are recorded but skipped.
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let ones = solve_gpu(&engine, &a, &b, None, &opts, &mut ())
        .unwrap()
        .report;
    assert!(ones.restarts >= 1, "{:?}", ones.restart_log);
    assert!(ones.iterations_recorded > ones.iterations);

    let row = run_case_on(
        &engine,
        &case(Method::Bicgstab, a.nrows(), 40),
        &a,
        0.0,
        None,
    )
    .unwrap();
    assert!(row.ran_as_timed(), "{}", table_row(&row));
    assert_eq!((row.iterations, row.iterations_done), (40, 40));
    assert_eq!(row.restarts, 0, "{:?}", row.restart_log);
    assert!(row.us_per_iteration.is_finite() && row.us_per_iteration > 0.0);
}

#[test]
fn every_timed_method_runs_as_timed_on_a_stencil() {
    let Some(engine) = common::engine() else {
        return;
    };
    // 40 × 40: at 20 × 20 pipelined GMRES(30)'s first f32 cycle ends before its 30 steps and
    // the row is flagged (`ran 40 of 51 recorded iterations`).
    let a = generators::poisson_2d_fd::<f32>(40);
    for method in [Method::Cg, Method::Bicgstab, Method::Gmres, Method::CaGmres] {
        let row = run_case_on(&engine, &case(method, a.nrows(), 40), &a, 0.0, None).unwrap();
        assert!(row.ran_as_timed(), "{}", table_row(&row));
        assert_eq!(row.iterations_done, 40, "{}", table_row(&row));
    }
}
