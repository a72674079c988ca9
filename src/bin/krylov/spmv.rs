//! `krylov spmv`: y = A·x on the GPU in one storage format, compared with the f64 CPU product
//! and timed.

use std::process::ExitCode;

use krylov_wgpu::bench::{SpmvBench, bench_spmv};
use krylov_wgpu::gpu::{DeviceInfo, Engine};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::Format;
use krylov_wgpu::{KrylovError, Result, Scalar};

use crate::args::{MatrixArgs, MatrixTask, open_gpu, parse_enum, run_in};

#[derive(clap::Args)]
pub struct SpmvArgs {
    #[command(flatten)]
    pub matrix: MatrixArgs,
    /// Number of products to time.
    #[arg(long, default_value_t = 10)]
    repeat: usize,
    /// Storage format (csr, ell, dia, bcsr1|2|4|8, sell, auto).
    #[arg(long, default_value = "auto", value_parser = parse_enum::<Format>)]
    format: Format,
    /// Most stored entries (padding included) per non-zero a format may use.
    #[arg(long, default_value_t = krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET)]
    max_padding: f64,
    #[arg(long)]
    json: bool,
}

pub fn spmv(args: &SpmvArgs) -> Result<ExitCode> {
    let (a, name) = args.matrix.load()?;
    let engine = open_gpu(&args.matrix.adapter)?;
    let task = SpmvCheck {
        engine: &engine,
        name: &name,
        args,
    };
    run_in(args.matrix.precision.plain("spmv")?, &a, task)
}

/// The benchmark's product: upload, compare with the f64 CPU product, time `repeat`
/// products in one submit; an error when the product is off by more than rounding.
struct SpmvCheck<'a> {
    engine: &'a Engine,
    name: &'a str,
    args: &'a SpmvArgs,
}

impl MatrixTask for SpmvCheck<'_> {
    type Output = ExitCode;

    fn run<T: Scalar>(self, a: &Csr<T>) -> Result<ExitCode> {
        let Self { engine, name, args } = self;
        let how = SpmvBench {
            runs: 1,
            repeat: args.repeat,
            max_padding: args.max_padding,
        };
        let row = bench_spmv(engine, a, name, args.format, how, None)?;
        if let Some(reason) = row.refused {
            return Err(KrylovError::FormatRefused {
                format: row.format.to_string(),
                reason,
            });
        }
        let rel = row.relative_error;
        if args.json {
            let mut v = serde_json::to_value(&row).expect("serialisable row");
            v["device"] = serde_json::to_value(DeviceInfo::gpu(&engine.context().summary))
                .expect("serialisable");
            println!("{v}");
        } else {
            println!(
                "{name}: n = {}, nnz = {}, {} {} on {}: relative error vs f64 CPU {rel:.2e}; {:.1} µs per SpMV ({:.2} GB/s)",
                row.n,
                row.nnz,
                row.format,
                T::PRECISION,
                engine.context().summary.name,
                row.seconds * 1e6,
                row.gb_per_s
            );
        }
        let tol = 64.0 * T::PRECISION.epsilon() * (a.row_length_stats().2.max(1) as f64);
        if !(rel.is_finite() && rel <= tol) {
            return Err(KrylovError::Gpu(format!(
                "SpMV relative error {rel:e} exceeds {tol:e}"
            )));
        }
        Ok(ExitCode::SUCCESS)
    }
}
