//! `krylov`: the command-line front end of krylov-wgpu.
//!
//! Every error prints one line on stderr and exits non-zero (1: bad input or device
//! problem, 2: bad command line, 3: the solve did not converge; its report is still printed).
//!
//! One module per subcommand (`info`, `solve`, `batch`, `spmv`, `bench`; `model` for `calibrate`
//! and `predict`); `args` holds what they
//! share, `report` how `solve` prints its report.

mod args;
mod batch;
mod bench;
mod info;
mod model;
mod report;
mod solve;
mod spmv;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use krylov_wgpu::matrix::{generators, samples};

#[derive(Parser)]
#[command(
    name = "krylov",
    version,
    about = "Portable GPU Krylov solvers (CG, BiCGStab, GMRES) on wgpu"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every GPU adapter (backend, type, software or not, f64/subgroup/timestamp
    /// support, key limits) and the device `--device auto` picks for f64 and f32.
    Info {
        /// Print one JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Solve A x = b.
    Solve(solve::SolveArgs),
    /// Solve many independent SPD systems in one batched GPU run (batched CG, each system
    /// or block of four right-hand sides in one workgroup): a folder of .mtx files, one
    /// matrix with a file of many right-hand sides, or generated variants.
    Batch(batch::BatchArgs),
    /// Compute y = A·x on the GPU and compare with the f64 CPU product.
    Spmv(spmv::SpmvArgs),
    /// Time GPU solvers per iteration (fixed iteration count, median of runs) against the
    /// measured streaming bandwidth; prints a table (or JSON lines).
    Bench(bench::BenchArgs),
    /// Measure this device's kernels (vector updates, reductions, SpMV per format, dispatch
    /// and round-trip costs), fit paper 003's throughput model and store the device profile
    /// that `predict` and `solve --format auto` use.
    Calibrate(model::CalibrateArgs),
    /// Predict the time per iteration of every format, precision and solver variant on a
    /// matrix from the device profile, without solving; prints a ranked table.
    Predict(model::PredictArgs),
}

impl Command {
    /// The matrix arguments of the subcommands that read one.
    fn matrix(&self) -> Option<&args::MatrixArgs> {
        match self {
            Command::Solve(a) => Some(&a.matrix),
            Command::Spmv(a) => Some(&a.matrix),
            Command::Info { .. }
            | Command::Batch(_)
            | Command::Bench(_)
            | Command::Calibrate(_)
            | Command::Predict(_) => None,
        }
    }
}

/// The Vulkan loader prints "XDG_RUNTIME_DIR is invalid" on headless machines when the
/// variable is unset; give it a private directory so a user sees only our output.
fn quiet_vulkan_loader() {
    let valid =
        std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| std::path::Path::new(&d).is_dir());
    if valid {
        return;
    }
    let dir = std::env::temp_dir().join("krylov-runtime-dir");
    if std::fs::create_dir_all(&dir).is_ok() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        }
        // SAFETY: called first thing in main, before any other thread exists.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    }
}

fn main() -> ExitCode {
    quiet_vulkan_loader();
    let cli = Cli::parse();
    if let Some(m) = cli.command.matrix() {
        // `--generate help` and `--sample help` list the choices instead of running.
        if m.generate.as_deref() == Some("help") {
            println!("{}", generators::SPEC_HELP);
            return ExitCode::SUCCESS;
        }
        if m.sample.as_deref() == Some("help") {
            println!("{}", samples::help());
            return ExitCode::SUCCESS;
        }
    }
    let result = match cli.command {
        Command::Info { json } => info::info(json),
        Command::Solve(args) => solve::solve(&args),
        Command::Batch(args) => batch::batch(&args),
        Command::Spmv(args) => spmv::spmv(&args),
        Command::Bench(args) => bench::bench(&args),
        Command::Calibrate(args) => model::run_calibrate(&args),
        Command::Predict(args) => model::run_predict(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // One line, whatever the error's text holds.
            let text = e.to_string();
            let line: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("error: {}", line.join(" "));
            ExitCode::from(1)
        }
    }
}
