//! `krylov`: the command-line front end of krylov-wgpu.
//!
//! Every error prints one line on stderr and exits non-zero (1: bad input or device
//! problem, 2: bad command line, 3: the solve did not converge; its report is still printed).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use krylov_wgpu::gpu::{
    ChosenDevice, DeviceChoice, DevicePlan, DevicePreference, DeviceRequest, Engine, GpuContext,
    list_adapters,
};
use krylov_wgpu::matrix::{Csr, generators, market, samples};
use krylov_wgpu::solvers::{
    CheckMode, Format, GramSchmidt, Method, Precond, SolveOptions, SolveReport, Variant, on_gpu,
    solve_on,
};
use krylov_wgpu::{KrylovError, Precision, Result, Scalar};

/// The problem solved when no matrix is given: 2D Poisson, 5-point stencil, 256×256 grid.
const DEFAULT_PROBLEM: &str = "poisson2d:256";

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
    Solve(SolveArgs),
    /// Compute y = A·x on the GPU and compare with the f64 CPU product.
    Spmv(SpmvArgs),
    /// Time GPU solvers per iteration (fixed iteration count, median of runs) against the
    /// measured streaming bandwidth; prints a table (or JSON lines).
    Bench(BenchArgs),
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Problem families (poisson2d, laplace3d), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "poisson2d")]
    problem: Vec<String>,
    /// Approximate numbers of unknowns, comma-separated (1e3 notation allowed).
    #[arg(long, value_delimiter = ',', default_value = "1e3,1e4,1e5")]
    sizes: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "cg", value_parser = parse_enum::<Method>)]
    method: Vec<Method>,
    #[arg(long, value_delimiter = ',', default_value = "classical,pipelined", value_parser = parse_enum::<Variant>)]
    variant: Vec<Variant>,
    #[arg(long, value_delimiter = ',', default_value = "f32", value_parser = parse_precision)]
    precision: Vec<Precision>,
    #[arg(long, value_delimiter = ',', default_value = "paper,device", value_parser = parse_enum::<CheckMode>)]
    check_mode: Vec<CheckMode>,
    /// Iterations per run.
    #[arg(long, default_value_t = 30)]
    iterations: usize,
    /// Runs per configuration (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// GMRES restart length.
    #[arg(long, default_value_t = 30)]
    restart: usize,
    /// Storage format of the SpMV (csr, ell, dia, bcsr1|2|4|8, sell, auto).
    #[arg(long, default_value = "csr", value_parser = parse_enum::<Format>)]
    format: Format,
    /// GPU time per kernel from timestamps (adds an uncounted readback per submit).
    #[arg(long)]
    profile: bool,
    /// Threads per workgroup of the solver kernels.
    #[arg(long, default_value_t = 256)]
    workgroup_size: u32,
    /// Most workgroups of a reducing kernel (partial sums per inner product).
    #[arg(long, default_value_t = 1024)]
    max_groups: u32,
    /// Reduce with subgroup operations: auto, on or off.
    #[arg(long, default_value = "auto")]
    subgroups: String,
    /// Compile kernels without runtime bounds checks.
    #[arg(long)]
    unchecked: bool,
    /// Entries of the streaming-bandwidth probe (0: skip it).
    #[arg(long, default_value_t = 1 << 24)]
    bandwidth_n: usize,
    #[arg(long)]
    adapter: Option<String>,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    json: bool,
    /// Measure time to solution (upload + solve to --tts-rtol + download) of pipelined
    /// device-mode solves instead of time per iteration.
    #[arg(long)]
    tts: bool,
    #[arg(long, default_value_t = 1e-6)]
    tts_rtol: f64,
    /// Also run the bandwidth probes (stream_update4 with several launch shapes) on this
    /// many entries.
    #[arg(long, default_value_t = 0)]
    probe_n: usize,
    /// Time y = A·x in every storage format instead of solvers: GB/s as paper 003 Table 3
    /// counts bytes (2 × stored values + index data), GFLOP/s on the true non-zeros.
    #[arg(long)]
    spmv: bool,
    /// Formats for --spmv (default: every concrete format).
    #[arg(long, value_delimiter = ',', value_parser = parse_enum::<Format>)]
    formats: Vec<Format>,
    /// Matrix Market files to add to the --spmv matrices.
    #[arg(long, value_delimiter = ',')]
    mtx: Vec<PathBuf>,
    /// Products per submit for --spmv.
    #[arg(long, default_value_t = 100)]
    repeat: usize,
    /// Most stored entries per non-zero a format may use (--spmv).
    #[arg(long, default_value_t = krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET)]
    max_padding: f64,
    /// Do not keep the GPU busy between timed loops (by default a background thread runs
    /// small kernels whenever nothing is timed, so the driver does not lower the clocks
    /// during CPU-side setup; off on CPU adapters).
    #[arg(long)]
    no_heat: bool,
}

#[derive(clap::Args)]
struct MatrixArgs {
    /// Matrix Market file (.mtx or .mtx.gz). Without one (and without --generate or
    /// --sample), the embedded default problem `poisson2d:256` is solved.
    matrix: Option<PathBuf>,
    /// Generate the matrix instead of reading it, e.g. `poisson2d:512`, `laplace3d:64`,
    /// `convdiff3d:32:circular`, `random-spd:10000:7` (see `--generate help`).
    #[arg(long, conflicts_with = "matrix")]
    generate: Option<String>,
    /// One of the real sample matrices built into the binary, e.g. `bcsstk01`, `sherman4`
    /// (`--sample help` lists them with their provenance).
    #[arg(long, conflicts_with_all = ["matrix", "generate"])]
    sample: Option<String>,
    /// Precision of the computation.
    #[arg(long, default_value = "f64", value_parser = parse_precision)]
    precision: Precision,
    /// GPU adapter: index from `krylov info` or a name substring (default: $KRYLOV_ADAPTER or the best).
    #[arg(long)]
    adapter: Option<String>,
}

#[derive(clap::Args)]
struct SolveArgs {
    #[command(flatten)]
    matrix: MatrixArgs,
    /// Right-hand side (Matrix Market vector). Default: b = A·1, so the exact solution is all ones.
    #[arg(long)]
    rhs: Option<PathBuf>,
    #[arg(long, default_value = "cg", value_parser = parse_enum::<Method>)]
    method: Method,
    #[arg(long, default_value = "pipelined", value_parser = parse_enum::<Variant>)]
    variant: Variant,
    /// Where to solve: `auto` (a hardware GPU with the features the solve needs, else the
    /// CPU reference; software adapters only with --adapter or KRYLOV_REQUIRE_GPU=1), `gpu`
    /// (any adapter, software included; an error if none can) or `cpu`.
    #[arg(long, default_value = "auto", value_parser = parse_enum::<DevicePreference>)]
    device: DevicePreference,
    /// Stop when ‖r‖₂ ≤ max(rtol·‖b‖₂, atol).
    #[arg(long, default_value_t = 1e-6, allow_hyphen_values = true)]
    rtol: f64,
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    atol: f64,
    #[arg(long, default_value_t = 10_000)]
    max_iter: usize,
    /// GMRES restart length m.
    #[arg(long, default_value_t = 30)]
    restart: usize,
    #[arg(long, default_value = "none", value_parser = parse_enum::<Precond>)]
    precond: Precond,
    /// Orthogonalisation of classical GMRES.
    #[arg(long, default_value = "cgs", value_parser = parse_enum::<GramSchmidt>)]
    gs: GramSchmidt,
    /// GPU convergence checks: `paper` reads the partial sums back every iteration (paper 000),
    /// `device` finishes them on the GPU and reads the history once per batch.
    #[arg(long, default_value = "device", value_parser = parse_enum::<CheckMode>)]
    check_mode: CheckMode,
    /// Iterations per submit in `device` mode (0: adapt to the convergence rate).
    #[arg(long, default_value_t = 0)]
    batch: usize,
    /// Storage format of the GPU SpMV: csr, ell, dia, bcsr1, bcsr2, bcsr4, bcsr8, sell, or
    /// auto (chosen from the matrix's statistics; the JSON report says which and why).
    #[arg(long, default_value = "auto", value_parser = parse_enum::<Format>)]
    format: Format,
    /// Most stored entries (padding included) per non-zero a format may use.
    #[arg(long, default_value_t = krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET)]
    max_padding: f64,
    /// Write the solution as a Matrix Market vector.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the residual history as CSV (iteration,residual,relative_residual).
    #[arg(long)]
    history: Option<PathBuf>,
    /// Print one JSON object (the full report) instead of a summary.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct SpmvArgs {
    #[command(flatten)]
    matrix: MatrixArgs,
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

fn parse_enum<T: std::str::FromStr<Err = String>>(s: &str) -> std::result::Result<T, String> {
    s.parse()
}

fn parse_precision(s: &str) -> std::result::Result<Precision, String> {
    s.parse()
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
    let generate = match &cli.command {
        Command::Solve(a) => a.matrix.generate.as_deref(),
        Command::Spmv(a) => a.matrix.generate.as_deref(),
        Command::Info { .. } | Command::Bench(_) => None,
    };
    if generate == Some("help") {
        println!("{}", generators::SPEC_HELP);
        return ExitCode::SUCCESS;
    }
    let sample = match &cli.command {
        Command::Solve(a) => a.matrix.sample.as_deref(),
        Command::Spmv(a) => a.matrix.sample.as_deref(),
        Command::Info { .. } | Command::Bench(_) => None,
    };
    if sample == Some("help") {
        println!("{}", samples::help());
        return ExitCode::SUCCESS;
    }
    let result = match cli.command {
        Command::Info { json } => info(json),
        Command::Solve(args) => solve(&args),
        Command::Spmv(args) => spmv(&args),
        Command::Bench(args) => bench(&args),
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

fn info(json: bool) -> Result<ExitCode> {
    let adapters = list_adapters();
    // What `krylov solve` would pick with the same environment (KRYLOV_ADAPTER,
    // KRYLOV_REQUIRE_GPU), for each precision.
    let auto = |precision: Precision| {
        DeviceChoice::from_env(DevicePreference::Auto)
            .precision(precision)
            .plan(&adapters)
    };
    let plans = [
        (Precision::F64, auto(Precision::F64)?),
        (Precision::F32, auto(Precision::F32)?),
    ];
    let picked = |p: &DevicePlan| match p {
        DevicePlan::Gpu { index, .. } => Some(*index),
        DevicePlan::Cpu { .. } => None,
    };
    if json {
        let auto: serde_json::Map<String, serde_json::Value> = plans
            .iter()
            .map(|(precision, plan)| {
                let index = picked(plan);
                let device = match index {
                    Some(i) => krylov_wgpu::gpu::DeviceInfo::gpu(&adapters[i]),
                    None => krylov_wgpu::gpu::DeviceInfo::cpu(),
                };
                (
                    precision.to_string(),
                    serde_json::json!({"device": device, "index": index, "reason": plan.reason()}),
                )
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"adapters": adapters, "auto": auto})
        );
        return Ok(ExitCode::SUCCESS);
    }
    if adapters.is_empty() {
        println!("no GPU adapter found (no Vulkan, Metal, DX12 or GL driver)");
    }
    for a in &adapters {
        let yn = |b: bool| if b { "yes" } else { "no" };
        let marks: Vec<String> = plans
            .iter()
            .filter(|(_, plan)| picked(plan) == Some(a.index))
            .map(|(p, _)| p.to_string())
            .collect();
        println!(
            "[{}] {} ({}, {}{}){}",
            a.index,
            a.name,
            a.backend,
            a.device_type,
            if a.software { ", software" } else { "" },
            if marks.is_empty() {
                String::new()
            } else {
                format!("  <- auto for {}", marks.join(" and "))
            }
        );
        println!("    driver:            {}", a.driver);
        println!(
            "    f64: {}   subgroups: {} (size {}..{})   timestamps: {}",
            yn(a.shader_f64),
            yn(a.subgroup),
            a.subgroup_min_size,
            a.subgroup_max_size,
            yn(a.timestamp_query)
        );
        println!(
            "    max storage binding: {} MiB   max buffer: {} MiB   workgroups/dim: {}   invocations/wg: {}   wg memory: {} KiB",
            a.max_storage_buffer_binding_size >> 20,
            a.max_buffer_size >> 20,
            a.max_compute_workgroups_per_dimension,
            a.max_compute_invocations_per_workgroup,
            a.max_compute_workgroup_storage_size >> 10
        );
    }
    for (precision, plan) in &plans {
        let device = match picked(plan) {
            Some(i) => format!("[{i}] {}", adapters[i].name),
            None => "CPU reference".to_string(),
        };
        println!("auto for {precision}: {device}: {}", plan.reason());
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads or generates the matrix (in f64; cast later) and names it.
fn load_matrix(args: &MatrixArgs) -> Result<(Csr<f64>, String)> {
    if let Some(path) = &args.matrix {
        return Ok((
            market::read_matrix_market(path)?,
            path.display().to_string(),
        ));
    }
    if let Some(name) = &args.sample {
        let sample = samples::find(name)?;
        return Ok((sample.matrix()?, format!("sample {}", sample.name)));
    }
    let spec = args.generate.as_deref().unwrap_or(DEFAULT_PROBLEM);
    Ok((generators::from_spec(spec)?, spec.to_string()))
}

fn open_gpu(adapter: &Option<String>) -> Result<Engine> {
    let mut request = DeviceRequest::from_env();
    if adapter.is_some() {
        request.adapter = adapter.clone();
    }
    Ok(Engine::with_tuning(
        GpuContext::new(&request)?,
        krylov_wgpu::gpu::Tuning::from_env(),
    ))
}

fn solve(args: &SolveArgs) -> Result<ExitCode> {
    let (a, name) = load_matrix(&args.matrix)?;
    a.require_square()?;
    let sample_rhs = match &args.matrix.sample {
        Some(name) => samples::find(name)?.rhs()?,
        None => None,
    };
    let (b, exact_known) = match (&args.rhs, sample_rhs) {
        (Some(path), _) => (market::read_vector::<f64>(path)?, false),
        (None, Some(rhs)) => (rhs, false),
        (None, None) => (a.mul_vec(&vec![1.0; a.ncols()])?, true),
    };
    if args.method == Method::Cg && !a.is_symmetric(1e-10) {
        return Err(KrylovError::MethodMismatch(format!(
            "cg needs a symmetric (positive definite) matrix and {name} is not symmetric; use --method bicgstab or gmres"
        )));
    }
    let opts = SolveOptions {
        method: args.method,
        variant: args.variant,
        rtol: args.rtol,
        atol: args.atol,
        max_iter: args.max_iter,
        restart: args.restart,
        precond: args.precond,
        gs: args.gs,
        check_mode: args.check_mode,
        batch: args.batch,
        format: args.format,
        max_padding: args.max_padding,
    };
    let device = DeviceChoice::from_env(args.device)
        .adapter(args.matrix.adapter.clone())
        .precision(args.matrix.precision)
        .cpu_only(
            (!on_gpu(args.method, args.variant))
                .then(|| format!("{} does not run on the GPU yet", args.method)),
        )
        .resolve()?;
    let (x, report): (Vec<f64>, SolveReport) = match args.matrix.precision {
        Precision::F64 => run_solve::<f64>(&device, &a, &b, &opts)?,
        Precision::F32 => run_solve::<f32>(&device, &a.cast::<f32>()?, &b, &opts)?,
    };
    finish_solve(args, &name, &x, &report, exact_known)
}

/// Runs the solve in `T` on the chosen device.
fn run_solve<T: Scalar>(
    device: &ChosenDevice,
    a: &Csr<T>,
    b: &[f64],
    opts: &SolveOptions,
) -> Result<(Vec<f64>, SolveReport)> {
    let b: Vec<T> = b.iter().map(|&v| T::from_f64(v)).collect();
    if let Some(index) = b.iter().position(|v| !v.is_finite()) {
        return Err(KrylovError::NonFinite {
            what: "right-hand side after conversion to the solve precision",
            index,
        });
    }
    let engine = device
        .context
        .as_ref()
        .map(|ctx| Engine::with_tuning(ctx.clone(), krylov_wgpu::gpu::Tuning::from_env()));
    let sol = solve_on(device, engine.as_ref(), a, &b, None, opts, &mut ())?;
    Ok((sol.x.iter().map(|v| v.as_f64()).collect(), sol.report))
}

fn finish_solve(
    args: &SolveArgs,
    name: &str,
    x: &[f64],
    report: &SolveReport,
    exact_known: bool,
) -> Result<ExitCode> {
    let solution_error = exact_known
        .then(|| (x.iter().map(|v| (v - 1.0).powi(2)).sum::<f64>() / x.len().max(1) as f64).sqrt());
    if let Some(path) = &args.out {
        market::write_vector(path, x)?;
    }
    if let Some(path) = &args.history {
        let mut csv = String::from("iteration,residual,relative_residual\n");
        for (k, r) in report.history.iter().enumerate() {
            let rel = if report.b_norm > 0.0 {
                r / report.b_norm
            } else {
                *r
            };
            csv.push_str(&format!("{k},{r:e},{rel:e}\n"));
        }
        std::fs::write(path, csv).map_err(|e| KrylovError::Io {
            path: path.clone(),
            source: e,
        })?;
    }
    if args.json {
        let mut v = serde_json::to_value(report).expect("serialisable");
        v["matrix"] = name.into();
        v["solution_error"] = solution_error.map_or(serde_json::Value::Null, Into::into);
        println!("{v}");
    } else {
        println!(
            "{name}: n = {}, nnz = {}; {} {} {}",
            report.n, report.nnz, report.variant, report.method, report.precision,
        );
        println!("device: {}: {}", report.device, report.device_reason);
        println!(
            "{} after {} iterations: {}; true relative residual {:.3e}; {:.3} s",
            if report.converged {
                "converged"
            } else {
                "NOT converged"
            },
            report.iterations,
            report.reason_detail,
            report.relative_residual,
            report.seconds
        );
        if report.device.is_gpu() {
            println!(
                "{:.2} dispatches and {:.3} host transfers per iteration",
                report.dispatches_per_iteration, report.transfers_per_iteration
            );
            println!(
                "format {} ({} on the GPU): {}",
                report.format,
                human_bytes(report.matrix_bytes),
                report.format_reason
            );
        }
        if let Some(err) = solution_error {
            println!("RMS error against the exact solution (all ones): {err:.3e}");
        }
    }
    Ok(if report.converged {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: not converged: {}", report.reason_detail);
        ExitCode::from(3)
    })
}

fn spmv(args: &SpmvArgs) -> Result<ExitCode> {
    let (a, name) = load_matrix(&args.matrix)?;
    let engine = open_gpu(&args.matrix.adapter)?;
    match args.matrix.precision {
        Precision::F32 => spmv_in::<f32>(&engine, &a.cast()?, &name, args),
        Precision::F64 => spmv_in::<f64>(&engine, &a, &name, args),
    }
}

fn spmv_in<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    name: &str,
    args: &SpmvArgs,
) -> Result<ExitCode> {
    // The benchmark's product: upload, compare with the f64 CPU product, time `repeat`
    // products in one submit.
    let how = krylov_wgpu::bench::SpmvBench {
        runs: 1,
        repeat: args.repeat,
        max_padding: args.max_padding,
    };
    let row = krylov_wgpu::bench::bench_spmv(engine, a, name, args.format, how, None)?;
    if let Some(reason) = row.refused {
        return Err(KrylovError::FormatRefused {
            format: row.format.to_string(),
            reason,
        });
    }
    let rel = row.relative_error;
    if args.json {
        let mut v = serde_json::to_value(&row).expect("serialisable row");
        v["device"] =
            serde_json::to_value(krylov_wgpu::gpu::DeviceInfo::gpu(&engine.context().summary))
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

fn bench(args: &BenchArgs) -> Result<ExitCode> {
    use krylov_wgpu::bench::{measure_bandwidth, table_header, with_heater_paused};
    let mut request = DeviceRequest::from_env();
    if args.adapter.is_some() {
        request.adapter = args.adapter.clone();
    }
    let tuning = krylov_wgpu::gpu::Tuning {
        profile: args.profile,
        ..Default::default()
    };
    let engine = Engine::with_tuning(GpuContext::new(&request)?, tuning);
    let sizes: Vec<usize> = args
        .sizes
        .iter()
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| *v >= 1.0 && v.is_finite())
                .map(|v| v.round() as usize)
                .ok_or_else(|| KrylovError::InvalidOption(format!("bad size `{s}` in --sizes")))
        })
        .collect::<Result<_>>()?;
    let heater = if args.no_heat || engine.context().summary.device_type == "Cpu" {
        None
    } else {
        Some(krylov_wgpu::bench::Heater::start(engine.context().clone())?)
    };
    let heater = heater.as_ref();
    let bandwidth = if args.bandwidth_n > 0 {
        // Clocks up first (0.3 s of load), then the probe alone on the GPU.
        if heater.is_some() {
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        with_heater_paused(heater, || measure_bandwidth(&engine, args.bandwidth_n))?
    } else {
        0.0
    };
    let adapter = engine.context().summary.name.clone();
    if args.probe_n > 0 {
        for reps in [100, 1000] {
            let us = with_heater_paused(heater, || {
                krylov_wgpu::bench::dependent_dispatch_us(&engine, reps)
            })?;
            println!("probe dependent dispatch ({reps} per submit): {us:.2} µs each");
        }
        for name in [
            "stream_update4",
            "stream_update4_status",
            "stream_update4_reduce",
        ] {
            for (wg, groups) in [(256, 1024), (256, 4096), (256, 0), (1024, 0)] {
                let gbs = with_heater_paused(heater, || {
                    krylov_wgpu::bench::probe_update4_variant(
                        &engine,
                        name,
                        args.probe_n,
                        wg,
                        groups,
                    )
                })?;
                let shape = if groups == 0 {
                    "one entry per thread".to_string()
                } else {
                    format!("{groups} groups, grid-stride")
                };
                println!(
                    "probe {name} n={} wg={wg} {shape}: {gbs:.0} GB/s",
                    args.probe_n
                );
            }
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::json!({"adapter": adapter, "stream_gb_per_s": bandwidth, "stream_n": args.bandwidth_n})
        );
    } else {
        println!(
            "adapter: {adapter}; streaming bandwidth (stream_triad, {} f32): {bandwidth:.1} GB/s",
            args.bandwidth_n
        );
    }
    if args.spmv {
        return bench_spmv(&engine, args, &sizes, heater);
    }
    if !args.json && !args.tts {
        println!("{}", table_header());
    }
    for problem in &args.problem {
        for &n in &sizes {
            for &precision in &args.precision {
                if !engine.context().supports(precision) {
                    eprintln!("note: {adapter} has no f64: skipping {precision}");
                    continue;
                }
                match precision {
                    Precision::F32 => {
                        bench_group::<f32>(&engine, args, problem, n, bandwidth, heater)?
                    }
                    Precision::F64 => {
                        bench_group::<f64>(&engine, args, problem, n, bandwidth, heater)?
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `krylov bench --spmv`: every format on the generated problems and the --mtx files.
fn bench_spmv(
    engine: &Engine,
    args: &BenchArgs,
    sizes: &[usize],
    heater: Option<&krylov_wgpu::bench::Heater>,
) -> Result<ExitCode> {
    use krylov_wgpu::bench::{bench_matrix, spmv_table_header};
    let formats: Vec<Format> = if args.formats.is_empty() {
        Format::ALL
            .iter()
            .copied()
            .filter(|&f| f != Format::Auto)
            .collect()
    } else {
        args.formats.clone()
    };
    if !args.json {
        println!("{}", spmv_table_header());
    }
    let mut matrices: Vec<(String, Csr<f64>)> = Vec::new();
    for problem in &args.problem {
        for &n in sizes {
            let a = bench_matrix::<f64>(problem, n)?;
            matrices.push((format!("{problem}:{}", a.nrows()), a));
        }
    }
    for path in &args.mtx {
        let a: Csr<f64> = krylov_wgpu::matrix::market::read_matrix_market(path)?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        );
        matrices.push((name, a));
    }
    for (name, a) in &matrices {
        for &precision in &args.precision {
            if !engine.context().supports(precision) {
                eprintln!(
                    "note: {} has no f64: skipping {precision}",
                    engine.context().summary.name
                );
                continue;
            }
            for &format in &formats {
                let row = match precision {
                    Precision::F32 => {
                        spmv_row::<f32>(engine, &a.cast()?, name, format, args, heater)?
                    }
                    Precision::F64 => spmv_row::<f64>(engine, a, name, format, args, heater)?,
                };
                if args.json {
                    println!("{}", serde_json::to_string(&row).expect("serialisable row"));
                } else {
                    println!("{}", krylov_wgpu::bench::spmv_table_row(&row));
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn spmv_row<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    name: &str,
    format: Format,
    args: &BenchArgs,
    heater: Option<&krylov_wgpu::bench::Heater>,
) -> Result<krylov_wgpu::bench::SpmvRow> {
    krylov_wgpu::bench::bench_spmv(
        engine,
        a,
        name,
        format,
        krylov_wgpu::bench::SpmvBench {
            runs: args.runs,
            repeat: args.repeat,
            max_padding: args.max_padding,
        },
        heater,
    )
}

/// Every method × variant × check mode of `args` on one generated matrix.
fn bench_group<T: Scalar>(
    engine: &Engine,
    args: &BenchArgs,
    problem: &str,
    n: usize,
    bandwidth: f64,
    heater: Option<&krylov_wgpu::bench::Heater>,
) -> Result<()> {
    use krylov_wgpu::bench::{BenchCase, bench_matrix, run_case_on, table_row, time_to_solution};
    let a = bench_matrix::<T>(problem, n)?;
    // `auto` is resolved once per matrix for the per-iteration runs (every run would
    // otherwise recompute the same statistics); time to solution keeps `auto` (the choice is
    // part of a user's solve).
    let format = if args.format == Format::Auto && !args.tts {
        krylov_wgpu::gpu::choose_format(&a, args.max_padding).format
    } else {
        args.format
    };
    if args.tts {
        for &method in &args.method {
            match time_to_solution(
                engine,
                &a,
                method,
                args.tts_rtol,
                args.runs,
                args.format,
                heater,
            ) {
                Ok((secs, iterations, converged)) => {
                    let row = serde_json::json!({
                        "kind": "tts", "problem": problem, "n": a.nrows(), "nnz": a.nnz(),
                        "method": method, "precision": T::PRECISION, "rtol": args.tts_rtol,
                        "seconds": secs, "iterations": iterations, "converged": converged,
                    });
                    if args.json {
                        println!("{row}");
                    } else {
                        println!(
                            "time to solution {problem} n={} {method} {}: {:.2} ms, {iterations} iterations, converged {converged}",
                            a.nrows(),
                            T::PRECISION,
                            secs * 1e3
                        );
                    }
                }
                Err(e) => eprintln!(
                    "note: {problem} n={n} {} {method} time to solution: {e}",
                    T::PRECISION
                ),
            }
        }
        return Ok(());
    }
    for &method in &args.method {
        for &variant in &args.variant {
            for &check_mode in &args.check_mode {
                let case = BenchCase {
                    problem: problem.to_string(),
                    n,
                    method,
                    variant,
                    precision: T::PRECISION,
                    check_mode,
                    iterations: args.iterations,
                    runs: args.runs,
                    restart: args.restart,
                    format,
                };
                match run_case_on(engine, &case, &a, bandwidth, heater) {
                    Ok(row) if args.json => {
                        println!("{}", serde_json::to_string(&row).expect("serialisable"))
                    }
                    Ok(row) => {
                        println!("{}", table_row(&row));
                        if !row.kernel_us_per_iteration.is_empty() {
                            let k: Vec<String> = row
                                .kernel_us_per_iteration
                                .iter()
                                .map(|(name, us)| format!("{name} {us:.2}"))
                                .collect();
                            println!("    GPU µs/iteration per kernel: {}", k.join(", "));
                        }
                    }
                    // A configuration the device cannot hold (e.g. an f64 GMRES basis over the
                    // binding limit) or a method not on the GPU is reported and skipped.
                    Err(e @ (KrylovError::Unsupported(_) | KrylovError::BufferTooLarge { .. })) => {
                        eprintln!(
                            "note: {problem} n={n} {} {method} {variant}: {e}",
                            T::PRECISION
                        )
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(())
}

/// `1234567` → `1.2 MB`.
fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1_000_000_000 => format!("{:.2} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}
