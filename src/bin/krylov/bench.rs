//! `krylov bench`: the command-line side of [`krylov_wgpu::bench`]: time per iteration (the
//! default), time to solution (`--tts`), SpMV bandwidth per format (`--spmv`) and the
//! bandwidth probes (`--probe-n`), as a table or JSON lines.

use std::path::PathBuf;
use std::process::ExitCode;

use krylov_wgpu::bench::{
    BenchCase, Heater, SpmvBench, bench_matrix, bench_spmv, dependent_dispatch_us,
    measure_bandwidth, probe_update4_variant, run_case_on, spmv_table_header, spmv_table_row,
    table_header, table_row, time_to_solution, with_heater_paused,
};
use krylov_wgpu::gpu::{Engine, GpuContext, Tuning};
use krylov_wgpu::matrix::market::read_matrix_market;
use krylov_wgpu::matrix::{Csr, generators};
use krylov_wgpu::solvers::{CheckMode, Format, Method, Variant};
use krylov_wgpu::{KrylovError, Precision, Result, Scalar};

use crate::args::{MatrixTask, device_request, parse_enum, parse_precision, run_in};

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Problem families (poisson2d, laplace3d), comma-separated, each at every --sizes
    /// (default poisson2d unless --generate or --mtx names the matrices).
    #[arg(long, value_delimiter = ',')]
    problem: Vec<String>,
    /// Generated matrices by `solve --generate` spec (e.g. convdiff3d:24:circular),
    /// comma-separated; each is benchmarked at its own size.
    #[arg(long, value_delimiter = ',')]
    generate: Vec<String>,
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
    /// CA-GMRES block sizes s, comma-separated (a row per s; the restart a multiple of each).
    #[arg(long, value_delimiter = ',', default_value = "5")]
    s_step: Vec<usize>,
    /// Storage format of the SpMV (csr, ell, dia, bcsr1|2|4|8, sell, auto).
    #[arg(long, default_value = "csr", value_parser = parse_enum::<Format>)]
    format: Format,
    /// GPU time per kernel from timestamps (adds an uncounted readback per submit).
    #[arg(long)]
    profile: bool,
    /// Threads per workgroup of the solver kernels (default 256, or KRYLOV_WORKGROUP_SIZE).
    #[arg(long)]
    workgroup_size: Option<u32>,
    /// Most workgroups of a reducing kernel (partial sums per inner product; default 1024,
    /// or KRYLOV_MAX_GROUPS).
    #[arg(long)]
    max_groups: Option<u32>,
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
    /// Several formats, comma-separated: a row per format (instead of --format; for --spmv
    /// the default is every concrete format). A format over the padding budget of a
    /// matrix is a note, not an error.
    #[arg(long, value_delimiter = ',', value_parser = parse_enum::<Format>)]
    formats: Vec<Format>,
    /// Matrix Market files, comma-separated, benchmarked at their own size.
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

pub fn bench(args: &BenchArgs) -> Result<ExitCode> {
    let tuning = bench_tuning(args)?;
    let engine = Engine::with_tuning(GpuContext::new(&device_request(&args.adapter))?, tuning);
    let sizes = parse_sizes(&args.sizes)?;
    let heater = if args.no_heat || engine.context().summary.device_type == "Cpu" {
        None
    } else {
        Some(Heater::start(engine.context().clone())?)
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
    let adapter = &engine.context().summary.name;
    if args.probe_n > 0 {
        run_probes(&engine, args.probe_n, heater)?;
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
        return spmv_formats(&engine, args, &sizes, heater);
    }
    if !args.json && !args.tts {
        println!("{}", table_header());
    }
    for source in matrix_sources(args, &sizes) {
        for &precision in &args.precision {
            if !supported(&engine, precision) {
                continue;
            }
            let group = Group {
                engine: &engine,
                args,
                source: &source,
                bandwidth,
                heater,
            };
            match precision {
                Precision::F32 => group.run::<f32>()?,
                Precision::F64 => group.run::<f64>()?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The launch configuration of `krylov bench`: the `KRYLOV_*` environment of
/// [`Tuning::from_env`], then the command's launch flags.
fn bench_tuning(args: &BenchArgs) -> Result<Tuning> {
    let mut t = Tuning::from_env();
    if let Some(wg) = args.workgroup_size {
        if !wg.is_power_of_two() || !(32..=1024).contains(&wg) {
            return Err(KrylovError::InvalidOption(format!(
                "--workgroup-size {wg}: a power of two from 32 to 1024"
            )));
        }
        t.workgroup_size = wg;
    }
    if let Some(g) = args.max_groups {
        if g == 0 {
            return Err(KrylovError::InvalidOption(
                "--max-groups must be at least 1".into(),
            ));
        }
        t.max_groups = g;
    }
    t.subgroups = match args.subgroups.as_str() {
        "auto" => t.subgroups,
        "on" => Some(true),
        "off" => Some(false),
        other => {
            return Err(KrylovError::InvalidOption(format!(
                "--subgroups {other}: auto, on or off"
            )));
        }
    };
    t.profile |= args.profile;
    t.unchecked |= args.unchecked;
    Ok(t)
}

/// `--sizes`: positive numbers, `1e3` notation allowed, rounded to integers.
fn parse_sizes(sizes: &[String]) -> Result<Vec<usize>> {
    sizes
        .iter()
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| *v >= 1.0 && v.is_finite())
                .map(|v| v.round() as usize)
                .ok_or_else(|| KrylovError::InvalidOption(format!("bad size `{s}` in --sizes")))
        })
        .collect()
}

/// Where a benchmarked matrix comes from: a problem family at a size, a generator spec or
/// a Matrix Market file.
enum MatrixSource {
    Family(String, usize),
    Generated(String),
    File(PathBuf),
}

impl MatrixSource {
    /// The matrix in `T`.
    fn load<T: Scalar>(&self) -> Result<Csr<T>> {
        match self {
            MatrixSource::Family(problem, n) => bench_matrix::<T>(problem, *n),
            MatrixSource::Generated(spec) => generators::from_spec::<T>(spec),
            MatrixSource::File(path) => read_matrix_market::<T>(path),
        }
    }

    /// A per-iteration row's `problem`: the family (its rows are in `n`), the spec, or the
    /// file's name.
    fn name(&self) -> String {
        match self {
            MatrixSource::Family(problem, _) => problem.clone(),
            MatrixSource::Generated(spec) => spec.clone(),
            MatrixSource::File(path) => path.file_name().map_or_else(
                || path.display().to_string(),
                |f| f.to_string_lossy().into_owned(),
            ),
        }
    }

    /// An SpMV row's matrix: `family:rows`, the spec, or the file's name.
    fn label(&self, rows: usize) -> String {
        match self {
            MatrixSource::Family(problem, _) => format!("{problem}:{rows}"),
            _ => self.name(),
        }
    }
}

/// The matrices of a run: --problem × --sizes (poisson2d when no matrix is named), then
/// --generate, then --mtx.
fn matrix_sources(args: &BenchArgs, sizes: &[usize]) -> Vec<MatrixSource> {
    let default = args.problem.is_empty() && args.generate.is_empty() && args.mtx.is_empty();
    let problems = if default {
        vec!["poisson2d".to_string()]
    } else {
        args.problem.clone()
    };
    let mut out: Vec<MatrixSource> = problems
        .iter()
        .flat_map(|p| sizes.iter().map(|&n| MatrixSource::Family(p.clone(), n)))
        .collect();
    out.extend(args.generate.iter().cloned().map(MatrixSource::Generated));
    out.extend(args.mtx.iter().cloned().map(MatrixSource::File));
    out
}

/// False, after a note on stderr, when the adapter cannot compute in `precision`.
fn supported(engine: &Engine, precision: Precision) -> bool {
    let ok = engine.context().supports(precision);
    if !ok {
        eprintln!(
            "note: {} has no f64: skipping {precision}",
            engine.context().summary.name
        );
    }
    ok
}

/// `--probe-n`: launch latency, then the update probes in several launch shapes.
fn run_probes(engine: &Engine, n: usize, heater: Option<&Heater>) -> Result<()> {
    for reps in [100, 1000] {
        let us = with_heater_paused(heater, || dependent_dispatch_us(engine, reps))?;
        println!("probe dependent dispatch ({reps} per submit): {us:.2} µs each");
    }
    for name in [
        "stream_update4",
        "stream_update4_status",
        "stream_update4_reduce",
    ] {
        for (wg, groups) in [(256, 1024), (256, 4096), (256, 0), (1024, 0)] {
            let gbs = with_heater_paused(heater, || {
                probe_update4_variant(engine, name, n, wg, groups)
            })?;
            let shape = if groups == 0 {
                "one entry per thread".to_string()
            } else {
                format!("{groups} groups, grid-stride")
            };
            println!("probe {name} n={n} wg={wg} {shape}: {gbs:.0} GB/s");
        }
    }
    Ok(())
}

/// `krylov bench --spmv`: every format on the generated problems and the --mtx files.
fn spmv_formats(
    engine: &Engine,
    args: &BenchArgs,
    sizes: &[usize],
    heater: Option<&Heater>,
) -> Result<ExitCode> {
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
    for source in matrix_sources(args, sizes) {
        let a = source.load::<f64>()?;
        matrices.push((source.label(a.nrows()), a));
    }
    for (name, a) in &matrices {
        for &precision in &args.precision {
            if !supported(engine, precision) {
                continue;
            }
            let task = SpmvRows {
                engine,
                name,
                formats: &formats,
                args,
                heater,
            };
            run_in(precision, a, task)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One matrix in one precision, a row per format.
struct SpmvRows<'a> {
    engine: &'a Engine,
    name: &'a str,
    formats: &'a [Format],
    args: &'a BenchArgs,
    heater: Option<&'a Heater>,
}

impl MatrixTask for SpmvRows<'_> {
    type Output = ();

    fn run<T: Scalar>(self, a: &Csr<T>) -> Result<()> {
        let how = SpmvBench {
            runs: self.args.runs,
            repeat: self.args.repeat,
            max_padding: self.args.max_padding,
        };
        for &format in self.formats {
            let row = bench_spmv(self.engine, a, self.name, format, how, self.heater)?;
            if self.args.json {
                println!("{}", serde_json::to_string(&row).expect("serialisable row"));
            } else {
                println!("{}", spmv_table_row(&row));
            }
        }
        Ok(())
    }
}

/// Every method × variant × check mode of `args` on one generated matrix.
struct Group<'a> {
    engine: &'a Engine,
    args: &'a BenchArgs,
    source: &'a MatrixSource,
    bandwidth: f64,
    heater: Option<&'a Heater>,
}

impl Group<'_> {
    /// The group in `T`.
    fn run<T: Scalar>(&self) -> Result<()> {
        let a = self.source.load::<T>()?;
        let problem = self.source.name();
        if self.args.tts {
            self.time_to_solution(&problem, &a);
            Ok(())
        } else {
            self.per_iteration(&problem, &a)
        }
    }

    /// `--tts`: a row per method; a solve that fails is a note, not an error.
    fn time_to_solution<T: Scalar>(&self, problem: &str, a: &Csr<T>) {
        let Self {
            engine,
            args,
            heater,
            ..
        } = *self;
        let n = a.nrows();
        for &method in &args.method {
            // Time to solution keeps `auto` (the choice is part of a user's solve).
            match time_to_solution(
                engine,
                a,
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
    }

    /// Time per iteration: a row per format × method × variant × check mode; a
    /// configuration the device or the format cannot hold is a note.
    fn per_iteration<T: Scalar>(&self, problem: &str, a: &Csr<T>) -> Result<()> {
        let Self {
            engine,
            args,
            bandwidth,
            heater,
            ..
        } = *self;
        let formats = if args.formats.is_empty() {
            vec![args.format]
        } else {
            args.formats.clone()
        };
        let methods: Vec<(Method, usize)> = args
            .method
            .iter()
            .flat_map(|&m| {
                let s = if m == Method::CaGmres {
                    args.s_step.clone()
                } else {
                    vec![5]
                };
                s.into_iter().map(move |s| (m, s))
            })
            .collect();
        for format in formats {
            // `auto` is resolved once per matrix (every run would otherwise recompute the
            // same statistics).
            let format = if format == Format::Auto {
                let target = krylov_wgpu::gpu::RuleTarget::of(engine.context());
                krylov_wgpu::gpu::choose_format_for(a, args.max_padding, target).format
            } else {
                format
            };
            for &(method, s_step) in &methods {
                // (Fused is CG's and GMRES's: the other methods skip it.)
                for &variant in args
                    .variant
                    .iter()
                    .filter(|v| Variant::of(method).contains(v))
                {
                    for &check_mode in &args.check_mode {
                        let case = BenchCase {
                            problem: problem.to_string(),
                            n: a.nrows(),
                            method,
                            variant,
                            precision: T::PRECISION,
                            check_mode,
                            iterations: args.iterations,
                            runs: args.runs,
                            restart: args.restart,
                            s_step,
                            format,
                        };
                        match run_case_on(engine, &case, a, bandwidth, heater) {
                            Ok(row) => print_row(&row, args.json),
                            // A configuration the device cannot hold (e.g. an f64 GMRES basis
                            // over the binding limit), a format over the padding budget or a
                            // method not on the GPU is reported and skipped.
                            Err(
                                e @ (KrylovError::Unsupported(_)
                                | KrylovError::BufferTooLarge { .. }
                                | KrylovError::FormatRefused { .. }),
                            ) => eprintln!(
                                "note: {problem} n={} {} {format} {method} {variant}: {e}",
                                a.nrows(),
                                T::PRECISION
                            ),
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// One per-iteration row as a JSON line or a table row (with its kernels' GPU times when
/// profiling).
fn print_row(row: &krylov_wgpu::bench::BenchRow, json: bool) {
    if json {
        println!("{}", serde_json::to_string(row).expect("serialisable"));
        return;
    }
    println!("{}", table_row(row));
    if !row.kernel_us_per_iteration.is_empty() {
        let k: Vec<String> = row
            .kernel_us_per_iteration
            .iter()
            .map(|(name, us)| format!("{name} {us:.2}"))
            .collect();
        println!("    GPU µs/iteration per kernel: {}", k.join(", "));
    }
}
