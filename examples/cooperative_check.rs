//! Cooperative CG against fused CG with the same workgroups, bit for bit, on a hardware GPU
//! (the lavapipe tests run one workgroup): `cooperative_check GRID GROUPS ITERATIONS` solves
//! the 2D Poisson system of GRID² rows with both, four times, in both check modes and
//! precisions, and prints whether histories and solutions agree (bench/gpu/cooperative_call.sh).
use krylov_wgpu::Scalar;
use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext, Tuning};
use krylov_wgpu::matrix::generators::poisson_2d_fd;
use krylov_wgpu::solvers::{CheckMode, SolveOptions, Variant, cg};

fn run<T: Scalar>(engine: &Engine, k: usize, iters: usize, mode: CheckMode) {
    let a = poisson_2d_fd::<T>(k);
    let b: Vec<T> = (0..a.nrows())
        .map(|i| T::from_f64(1.0 + (i % 7) as f64 * 0.1))
        .collect();
    let solve = |v| {
        let opts = SolveOptions {
            variant: v,
            check_mode: mode,
            rtol: 0.0,
            atol: 0.0,
            max_iter: iters,
            ..Default::default()
        };
        cg::solve(engine, &a, &b, None, &opts, &mut ()).unwrap()
    };
    let f = solve(Variant::Fused);
    for rep in 0..4 {
        let c = solve(Variant::Cooperative);
        let same_h = f.report.history == c.report.history;
        let same_x =
            f.x.iter()
                .zip(&c.x)
                .all(|(p, q)| p.as_f64().to_bits() == q.as_f64().to_bits());
        let dx =
            f.x.iter()
                .zip(&c.x)
                .map(|(p, q)| (p.as_f64() - q.as_f64()).abs())
                .fold(0.0, f64::max);
        println!(
            "{} n={} {mode} rep {rep}: fused it {} {:?}, coop it {} {:?} {:?}; history equal {same_h}, x equal {same_x} (max |dx| {dx:e}); rel res {:e} / {:e}",
            T::PRECISION,
            a.nrows(),
            f.report.iterations,
            f.report.reason,
            c.report.iterations,
            c.report.reason,
            c.report.notes,
            f.report.relative_residual,
            c.report.relative_residual
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let k: usize = args[1].parse().unwrap();
    let g: u32 = args[2].parse().unwrap();
    let iters: usize = args[3].parse().unwrap();
    let ctx = GpuContext::new(&DeviceRequest::from_env()).unwrap();
    let f64_ok = ctx.summary.shader_f64;
    let engine = Engine::with_tuning(
        ctx,
        Tuning {
            max_groups: g,
            ..Tuning::default()
        },
    );
    for mode in [CheckMode::Device, CheckMode::Paper] {
        run::<f32>(&engine, k, iters, mode);
        if f64_ok {
            run::<f64>(&engine, k, iters, mode);
        }
    }
}
