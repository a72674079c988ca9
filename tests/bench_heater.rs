//! The benchmark's clock heater: pausing waits for its work, its launches stay out of the
//! solver's counters, and a solve with it running gives the same exact counts and answer.

mod common;

use krylov_wgpu::bench::{Heater, Heaters};
use krylov_wgpu::matrix::generators::poisson_2d_fd;
use krylov_wgpu::solvers::{Method, SolveOptions, Variant, solve_gpu};

#[test]
fn heater_pauses_resumes_and_stays_out_of_the_counts() {
    let Some(engine) = common::engine() else {
        return;
    };
    let a = poisson_2d_fd::<f32>(24);
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let opts = SolveOptions {
        method: Method::Cg,
        variant: Variant::Pipelined,
        rtol: 1e-5,
        ..Default::default()
    };
    let quiet = solve_gpu(&engine, &a, &b, None, &opts, &mut ()).unwrap();
    let heater = Heater::start(engine.context().clone()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = engine.counters().snapshot();
    let heated = solve_gpu(&engine, &a, &b, None, &opts, &mut heater.monitor()).unwrap();
    heater.resume();
    // The heater has its own engine: nothing it launched shows up here.
    assert_eq!(
        engine.counters().snapshot().since(&before),
        heated.report.counts
    );
    assert_eq!(heated.report.counts, quiet.report.counts);
    assert_eq!(heated.report.iterations, quiet.report.iterations);
    assert_eq!(
        heated.x, quiet.x,
        "same kernels, same order: bitwise the same x"
    );
    // Pausing twice and resuming twice is harmless; dropping joins the thread.
    heater.pause();
    heater.pause();
    heater.resume();
    heater.resume();
    drop(heater);
}

#[test]
fn heaters_leave_software_adapters_alone_and_pause_at_the_loop_start() {
    let Some(engine) = common::engine() else {
        return;
    };
    let ctx = engine.context().clone();
    let mut heaters = Heaters::start(std::slice::from_ref(&ctx)).unwrap();
    // lavapipe's "GPU" is the host's cores: no heater there (a hardware adapter gets one).
    assert_eq!(heaters.len(), usize::from(!ctx.summary.software));
    let a = poisson_2d_fd::<f32>(16);
    let b = a.mul_vec(&vec![1.0; a.ncols()]).unwrap();
    let opts = SolveOptions {
        method: Method::Cg,
        variant: Variant::Pipelined,
        rtol: 1e-5,
        ..Default::default()
    };
    let quiet = solve_gpu(&engine, &a, &b, None, &opts, &mut ()).unwrap();
    let heated = solve_gpu(&engine, &a, &b, None, &opts, &mut heaters).unwrap();
    assert_eq!(heated.report.counts, quiet.report.counts);
    assert_eq!(heated.x, quiet.x);
}
