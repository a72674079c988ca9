//! `krylov batch`: many independent systems in one batched solve (`solvers::batch`): every
//! matrix of a folder, one matrix with a block of right-hand sides, or `--count` variants of
//! a generated matrix; a summary or one JSON report with a report per right-hand side.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use krylov_wgpu::base::BatchReport;
use krylov_wgpu::gpu::{DeviceChoice, DevicePreference, Engine};
use krylov_wgpu::matrix::batch::OwnedBatch;
use krylov_wgpu::matrix::{Csr, generators, market};
use krylov_wgpu::solvers::batch::solve_batch_on;
use krylov_wgpu::solvers::{Method, Precond, SolveOptions};
use krylov_wgpu::{KrylovError, Precision, Result, Scalar};

use crate::args::{parse_enum, parse_precision};

#[derive(clap::Args)]
pub struct BatchArgs {
    /// A folder (every .mtx / .mtx.gz matrix in it, by name; `NAME_rhs.mtx` beside a matrix is
    /// its right-hand side, else b = A·1) or one Matrix Market matrix.
    #[arg(required_unless_present = "generate")]
    pub path: Option<PathBuf>,
    /// With one matrix: its right-hand sides, an n x k Matrix Market matrix (array or
    /// coordinate), solved as blocks of four (A read once per SpMV for the four).
    #[arg(long)]
    rhs: Option<PathBuf>,
    /// Generate the systems instead: `--count` variants A + (k mod 7)·0.01·I of this matrix
    /// (e.g. `poisson2d:32`, `random-spd:1000:7`), each with b = A_k·1.
    #[arg(long, conflicts_with = "path")]
    generate: Option<String>,
    /// Systems to generate with --generate.
    #[arg(long, default_value_t = 100)]
    count: usize,
    /// Precision of the computation: f64 or f32.
    #[arg(long, default_value = "f64", value_parser = parse_precision)]
    precision: Precision,
    /// Where to solve: auto, gpu or cpu (as for `krylov solve`).
    #[arg(long, default_value = "auto", value_parser = parse_enum::<DevicePreference>)]
    device: DevicePreference,
    /// GPU adapter: index from `krylov info` or a name substring.
    #[arg(long)]
    adapter: Option<String>,
    /// none or jacobi.
    #[arg(long, default_value = "jacobi", value_parser = parse_enum::<Precond>)]
    precond: Precond,
    /// Stop each right-hand side when ‖r‖₂ ≤ max(rtol·‖b‖₂, atol).
    #[arg(long, default_value_t = 1e-6, allow_hyphen_values = true)]
    rtol: f64,
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    atol: f64,
    #[arg(long, default_value_t = 10_000)]
    max_iter: usize,
    /// Iterations each system runs per launch (0: the default, 32).
    #[arg(long, default_value_t = 0)]
    batch: usize,
    /// Solve the systems one after the other with `krylov solve`'s pipelined CG instead (the
    /// same engine, kernels compiled once): the baseline batching is measured against.
    #[arg(long)]
    one_by_one: bool,
    /// Print one JSON object: the batch report with one report per right-hand side
    /// (`columns`) and the systems' names.
    #[arg(long)]
    json: bool,
}

/// The systems of a batch in f64: names, matrices, right-hand sides.
struct Loaded {
    names: Vec<String>,
    matrices: Vec<Csr<f64>>,
    rhs: Vec<Vec<Vec<f64>>>,
}

fn is_matrix_file(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = name
        .strip_suffix(".mtx.gz")
        .or_else(|| name.strip_suffix(".mtx"));
    stem.is_some_and(|s| !s.ends_with("_rhs"))
}

fn load(args: &BatchArgs) -> Result<Loaded> {
    if let Some(spec) = &args.generate {
        if args.count == 0 {
            return Err(KrylovError::InvalidOption(
                "--count must be at least 1".into(),
            ));
        }
        let a = generators::from_spec(spec)?;
        let mut out = Loaded {
            names: Vec::new(),
            matrices: Vec::new(),
            rhs: Vec::new(),
        };
        for k in 0..args.count {
            let shift = (k % 7) as f64 * 0.01;
            let ak = if shift == 0.0 {
                a.clone()
            } else {
                let mut t: Vec<(usize, usize, f64)> = Vec::with_capacity(a.nnz() + a.nrows());
                for i in 0..a.nrows() {
                    let (cols, vals) = a.row(i);
                    t.extend(cols.iter().zip(vals).map(|(c, v)| (i, *c as usize, *v)));
                    t.push((i, i, shift));
                }
                Csr::from_triplets(a.nrows(), &t)?
            };
            let b = ak.mul_vec(&vec![1.0; ak.ncols()])?;
            out.names.push(format!("{spec} #{k}"));
            out.matrices.push(ak);
            out.rhs.push(vec![b]);
        }
        return Ok(out);
    }
    let path = args
        .path
        .as_ref()
        .expect("clap requires a path without --generate");
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| KrylovError::Io {
                path: path.clone(),
                source: e,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && is_matrix_file(p))
            .collect();
        v.sort();
        if v.is_empty() {
            return Err(KrylovError::InvalidOption(format!(
                "{} holds no .mtx or .mtx.gz matrix",
                path.display()
            )));
        }
        if args.rhs.is_some() {
            return Err(KrylovError::InvalidOption(
                "--rhs takes one matrix, not a folder (put NAME_rhs.mtx beside each matrix)".into(),
            ));
        }
        v
    } else {
        vec![path.clone()]
    };
    let mut out = Loaded {
        names: Vec::new(),
        matrices: Vec::new(),
        rhs: Vec::new(),
    };
    for f in files {
        let a: Csr<f64> = market::read_matrix_market(&f)?;
        let name = f.display().to_string();
        let beside = {
            let s = name
                .strip_suffix(".mtx.gz")
                .or_else(|| name.strip_suffix(".mtx"))
                .unwrap_or(&name);
            PathBuf::from(format!("{s}_rhs.mtx"))
        };
        if !a.is_symmetric(1e-10) {
            return Err(KrylovError::MethodMismatch(format!(
                "batched CG needs symmetric positive definite matrices and {name} is not symmetric; solve it with `krylov solve --method bicgstab` or gmres"
            )));
        }
        let rhs = match &args.rhs {
            Some(r) => market::read_columns(r)?,
            None if path.is_dir() && beside.is_file() => vec![market::read_vector(&beside)?],
            None => vec![a.mul_vec(&vec![1.0; a.ncols()])?],
        };
        out.names.push(name);
        out.matrices.push(a);
        out.rhs.push(rhs);
    }
    Ok(out)
}

fn run<T: Scalar>(
    loaded: &Loaded,
    device: &krylov_wgpu::gpu::ChosenDevice,
    opts: &SolveOptions,
) -> Result<BatchReport> {
    let mats: Vec<&Csr<f64>> = loaded.matrices.iter().collect();
    let batch = OwnedBatch::<T>::from_f64(&mats, &loaded.rhs)?;
    let engine = device
        .context
        .as_ref()
        .map(|ctx| Engine::with_tuning(ctx.clone(), krylov_wgpu::gpu::Tuning::from_env()));
    Ok(solve_batch_on(device, engine.as_ref(), &batch.systems(), opts)?.report)
}

pub fn batch(args: &BatchArgs) -> Result<ExitCode> {
    let loaded = load(args)?;
    let opts = SolveOptions {
        method: Method::Cg,
        precond: args.precond,
        rtol: args.rtol,
        atol: args.atol,
        max_iter: args.max_iter,
        batch: args.batch,
        ..Default::default()
    };
    let device = DeviceChoice::from_env(args.device)
        .adapter(args.adapter.clone())
        .precision(args.precision)
        .resolve()?;
    if args.one_by_one {
        return one_by_one(args, &loaded, &device, &opts);
    }
    let report = match args.precision {
        Precision::F32 => run::<f32>(&loaded, &device, &opts)?,
        Precision::F64 => run::<f64>(&loaded, &device, &opts)?,
    };
    if args.json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            names: &'a [String],
            #[serde(flatten)]
            report: &'a BatchReport,
        }
        let out = Out {
            names: &loaded.names,
            report: &report,
        };
        println!(
            "{}",
            serde_json::to_string(&out).expect("the report serialises")
        );
    } else {
        print_text(&report, &loaded.names);
    }
    Ok(if report.all_converged {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "error: {} of {} right-hand sides did not converge",
            report.columns_total - report.converged,
            report.columns_total
        );
        ExitCode::from(3)
    })
}

/// What `--one-by-one` measured.
#[derive(serde::Serialize)]
struct OneByOne {
    mode: &'static str,
    precision: Precision,
    device: String,
    systems: usize,
    columns_total: usize,
    converged: usize,
    max_iterations: usize,
    /// Wall-clock seconds of all solves (`solve_on` each: uploads, iterations, readbacks).
    seconds: f64,
    systems_per_second: f64,
}

fn one_by_one_in<T: Scalar>(
    loaded: &Loaded,
    device: &krylov_wgpu::gpu::ChosenDevice,
    opts: &SolveOptions,
) -> Result<OneByOne> {
    let engine = device
        .context
        .as_ref()
        .map(|ctx| Engine::with_tuning(ctx.clone(), krylov_wgpu::gpu::Tuning::from_env()));
    let mats: Vec<Csr<T>> = loaded
        .matrices
        .iter()
        .map(|a| a.cast::<T>())
        .collect::<Result<_>>()?;
    let (mut converged, mut columns, mut max_iterations) = (0, 0, 0);
    let start = std::time::Instant::now();
    for (a, bs) in mats.iter().zip(&loaded.rhs) {
        for b in bs {
            let b: Vec<T> = b.iter().map(|v| T::from_f64(*v)).collect();
            let sol = krylov_wgpu::solvers::solve_on(
                device,
                engine.as_ref(),
                a,
                &b,
                None,
                opts,
                &mut (),
            )?;
            columns += 1;
            converged += sol.report.converged as usize;
            max_iterations = max_iterations.max(sol.report.iterations);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(OneByOne {
        mode: "one-by-one",
        precision: T::PRECISION,
        device: device.info.to_string(),
        systems: mats.len(),
        columns_total: columns,
        converged,
        max_iterations,
        seconds,
        systems_per_second: mats.len() as f64 / seconds.max(1e-12),
    })
}

fn one_by_one(
    args: &BatchArgs,
    loaded: &Loaded,
    device: &krylov_wgpu::gpu::ChosenDevice,
    opts: &SolveOptions,
) -> Result<ExitCode> {
    let r = match args.precision {
        Precision::F32 => one_by_one_in::<f32>(loaded, device, opts)?,
        Precision::F64 => one_by_one_in::<f64>(loaded, device, opts)?,
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&r).expect("the report serialises")
        );
    } else {
        println!(
            "one by one ({} pipelined CG, {}): {} of {} converged; at most {} iterations; \
             {:.4} s ({:.0} systems/s)",
            r.precision,
            r.device,
            r.converged,
            r.columns_total,
            r.max_iterations,
            r.seconds,
            r.systems_per_second
        );
    }
    Ok(if r.converged == r.columns_total {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}

/// At most this many per-column lines in the text summary.
const TEXT_ROWS: usize = 20;

fn print_text(r: &BatchReport, names: &[String]) {
    println!(
        "batch: {} systems, {} right-hand sides; {} {} CG, preconditioner: {}",
        r.systems,
        r.columns_total,
        r.kernels.join(" + "),
        r.precision,
        r.preconditioner
    );
    println!("device: {}: {}", r.device, r.device_reason);
    let launches = if r.launches > 0 {
        format!(
            "{} launches of up to {} iterations; ",
            r.launches, r.iterations_per_launch
        )
    } else {
        String::new()
    };
    println!(
        "{} of {} converged; at most {} iterations; {launches}{} restarts; {:.4} s \
         ({:.0} systems/s)",
        r.converged, r.columns_total, r.max_iterations, r.restarts, r.seconds, r.systems_per_second
    );
    let shown = r
        .columns
        .iter()
        .filter(|c| !c.converged)
        .chain(r.columns.iter().filter(|c| c.converged));
    for c in shown.take(TEXT_ROWS) {
        println!(
            "  {} [rhs {}]: n = {}, nnz = {}: {} after {} iterations, true relative residual {:.3e}",
            names.get(c.system).map_or("?", |s| s.as_str()),
            c.rhs,
            c.n,
            c.nnz,
            c.reason,
            c.iterations,
            c.relative_residual
        );
    }
    if r.columns.len() > TEXT_ROWS {
        println!(
            "  … {} more (--json lists every one)",
            r.columns.len() - TEXT_ROWS
        );
    }
}
