//! `krylov solve --devices` and `--mpi`: the system's rows split over several devices or
//! MPI ranks, one block each (the distributed solvers of `solvers::dist`).

use std::process::ExitCode;

use krylov_wgpu::bench::Heaters;
use krylov_wgpu::gpu::DevicePreference;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::{Monitor, SolveOptions, SolveReport, Variant};
use krylov_wgpu::{KrylovError, Precision, Result, Scalar};

use super::{Run, SolveArgs, finish_solve};
use crate::args::{MatrixTask, PrecisionArg, run_in};
use crate::model::VariantArg;

/// `--devices`: CG, BiCGStab, GMRES or CA-GMRES over several devices, one row block each, or BiCG
/// with its two recurrences on two devices.
pub(super) fn solve_on_devices(
    args: &SolveArgs,
    list: &krylov_wgpu::gpu::DeviceList,
    (a, b): (&Csr<f64>, &[f64]),
    name: &str,
    exact_known: bool,
    method_notes: Vec<String>,
) -> Result<ExitCode> {
    let (opts, precision) = dist_options(args, "--devices")?;
    let contexts = krylov_wgpu::gpu::open_devices(list)?;
    let heaters = if args.heat {
        Some(Heaters::start(&contexts)?)
    } else {
        None
    };
    let task = RunDist {
        on: DistOn::Devices(&contexts),
        b,
        opts: &opts,
        heaters,
    };
    let (x, report) = run_in(precision, a, task)?;
    let run = Run {
        x: &x,
        report,
        exact_known,
        decision: None,
        method_notes,
        variant_note: None,
        slow: None,
    };
    finish_solve(args, name, (a, b), run)
}

/// The options of a distributed solve (`--devices` or `--mpi`, named by `flag`), and its
/// precision; what it does not take is refused.
fn dist_options(args: &SolveArgs, flag: &str) -> Result<(SolveOptions, Precision)> {
    let PrecisionArg::Plain(precision) = args.matrix.precision else {
        return Err(KrylovError::InvalidOption(format!(
            "{flag} runs in f32 or f64, not --precision mixed"
        )));
    };
    if args.device == DevicePreference::Cpu || args.matrix.adapter.is_some() {
        return Err(KrylovError::InvalidOption(format!(
            "{flag} picks the adapters itself: drop --device cpu / --adapter"
        )));
    }
    // Several devices run pipelined CG and BiCGStab unless classical is asked for.
    let variant = match args.variant {
        VariantArg::Auto => Variant::Pipelined,
        VariantArg::Fixed(v) => v,
    };
    let opts = SolveOptions {
        method: args.method,
        variant,
        rtol: args.rtol,
        atol: args.atol,
        max_iter: args.max_iter,
        precond: args.precond,
        restart: args.restart,
        s_step: args.s_step,
        tsqr: args.tsqr,
        basis: args.basis,
        side: args.side,
        gs: args.gs,
        trisolve: args.trisolve,
        ..SolveOptions::default()
    };
    Ok((opts, precision))
}

/// `--mpi` in a krylov built without MPI: what to install and how to build.
#[cfg(not(feature = "mpi"))]
pub(super) fn solve_with_mpi(
    _: &SolveArgs,
    _: (&Csr<f64>, &[f64]),
    _: &str,
    _: bool,
    _: Vec<String>,
) -> Result<ExitCode> {
    Err(KrylovError::Unsupported(
        "--mpi: this krylov was built without MPI; install Open MPI and libclang \
         (apt-get install libopenmpi-dev openmpi-bin libclang-dev) and build with \
         `cargo build --release --features mpi`, then run `mpirun -np 2 krylov solve --mpi …`"
            .into(),
    ))
}

/// `--mpi`: this rank's block of the distributed solve; rank 0 prints the report, every
/// rank exits with the same code.
#[cfg(feature = "mpi")]
pub(super) fn solve_with_mpi(
    args: &SolveArgs,
    (a, b): (&Csr<f64>, &[f64]),
    name: &str,
    exact_known: bool,
    method_notes: Vec<String>,
) -> Result<ExitCode> {
    use mpi::traits::Communicator;
    let (opts, precision) = dist_options(args, "--mpi")?;
    let universe = mpi::initialize()
        .ok_or_else(|| KrylovError::Unsupported("--mpi: MPI was already initialised".into()))?;
    let world = universe.world();
    let adapter = krylov_wgpu::solvers::dist::mpi::local_adapter()?;
    let list = krylov_wgpu::gpu::DeviceList::Indices(vec![adapter]);
    let device = krylov_wgpu::gpu::open_devices_on(&list, wgpu::Backends::PRIMARY)?.remove(0);
    let heaters = if args.heat {
        Some(Heaters::start(std::slice::from_ref(&device))?)
    } else {
        None
    };
    let task = RunDist {
        on: DistOn::Mpi(&world, device),
        b,
        opts: &opts,
        heaters,
    };
    // An error on one rank would leave the others waiting in a collective: it ends them all.
    let (x, report) = match run_in(precision, a, task) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("error: MPI rank {}: {e}", world.rank());
            world.abort(1)
        }
    };
    if world.rank() != 0 {
        return Ok(if report.converged {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(3)
        });
    }
    let run = Run {
        x: &x,
        report,
        exact_known,
        decision: None,
        method_notes,
        variant_note: None,
        slow: None,
    };
    finish_solve(args, name, (a, b), run)
}

/// Where a distributed solve's blocks run.
enum DistOn<'a> {
    /// One per device, in this process.
    Devices(&'a [std::sync::Arc<krylov_wgpu::gpu::GpuContext>]),
    /// This rank's, on this device.
    #[cfg(feature = "mpi")]
    Mpi(
        &'a mpi::topology::SimpleCommunicator,
        std::sync::Arc<krylov_wgpu::gpu::GpuContext>,
    ),
}

/// The distributed solve in `T`.
struct RunDist<'a> {
    on: DistOn<'a>,
    b: &'a [f64],
    opts: &'a SolveOptions,
    /// `--heat`: paused when the timed loop starts.
    heaters: Option<Heaters>,
}

impl MatrixTask for RunDist<'_> {
    type Output = (Vec<f64>, SolveReport);

    fn run<T: Scalar>(mut self, a: &Csr<T>) -> Result<Self::Output> {
        let b: Vec<T> = self.b.iter().map(|&v| T::from_f64(v)).collect();
        let mut none = ();
        let monitor: &mut dyn Monitor = match self.heaters.as_mut() {
            Some(h) => h,
            None => &mut none,
        };
        let sol = match self.on {
            DistOn::Devices(contexts) => krylov_wgpu::solvers::dist::solve_dist_with(
                contexts,
                a,
                &b,
                None,
                self.opts,
                &krylov_wgpu::solvers::dist::DistConfig::default(),
                monitor,
            )?,
            #[cfg(feature = "mpi")]
            DistOn::Mpi(world, device) => krylov_wgpu::solvers::dist::mpi::solve_mpi(
                world, device, a, &b, None, self.opts, monitor,
            )?,
        };
        Ok((sol.x.iter().map(|v| v.as_f64()).collect(), sol.report))
    }
}
