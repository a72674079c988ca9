//! Benchmarks behind `krylov bench`: time per iteration of the GPU solvers at a fixed
//! iteration count, launches and transfers per iteration, achieved bandwidth against a
//! measured streaming bandwidth (the roofline), and GPU time per kernel.
//!
//! Timing rules: every configuration runs `runs` times, the median of the loop time per
//! iteration is reported; the loop runs exactly `iterations` iterations (rtol = atol = 0,
//! `device` mode records them all in one submit). Nothing here is a pass/fail test.

use std::time::Instant;

mod heater;
pub use heater::{Heater, PauseAtLoopStart, with_heater_paused};

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::{Precision, Scalar};
use crate::gpu::shader::{ShaderConfig, kernel_source};
use crate::gpu::{Engine, Kernel};
use crate::matrix::{Csr, generators};
use crate::solvers::{CheckMode, KernelTime, Method, Precond, SolveOptions, Variant, solve_gpu};

/// One configuration to time.
#[derive(Debug, Clone)]
pub struct BenchCase {
    /// Generator spec family: `poisson2d` or `laplace3d` (sized to about `n` unknowns).
    pub problem: String,
    pub n: usize,
    pub method: Method,
    pub variant: Variant,
    pub precision: Precision,
    pub check_mode: CheckMode,
    pub iterations: usize,
    pub runs: usize,
    pub restart: usize,
    pub format: crate::solvers::Format,
}

/// The measured result of one [`BenchCase`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchRow {
    pub problem: String,
    pub n: usize,
    pub nnz: usize,
    pub format: String,
    pub method: Method,
    pub variant: Variant,
    pub precision: Precision,
    pub check_mode: CheckMode,
    pub iterations: usize,
    /// Median over the runs of loop seconds / iterations recorded, in µs.
    pub us_per_iteration: f64,
    /// All runs' µs per iteration.
    pub us_runs: Vec<f64>,
    pub dispatches_per_iteration: f64,
    pub transfers_per_iteration: f64,
    /// Bytes one iteration must move at least (model in [`bytes_per_iteration`]).
    pub bytes_per_iteration: f64,
    pub gb_per_s: f64,
    /// bytes_per_iteration / measured streaming bandwidth, in µs (0 when not measured).
    pub roofline_us: f64,
    /// us_per_iteration / roofline_us.
    pub roofline_ratio: f64,
    /// GPU time per kernel per iteration (µs), when profiling.
    pub kernel_us_per_iteration: Vec<(String, f64)>,
    pub adapter: String,
    /// Iterations the last run really performed and why it stopped (a run that stopped
    /// before `iterations` makes the timing meaningless: the table flags it).
    pub iterations_done: usize,
    pub reason: String,
}

/// The matrix of a case: `poisson2d` → k = round(√n), `laplace3d` → k = round(∛n).
pub fn bench_matrix<T: Scalar>(problem: &str, n: usize) -> Result<Csr<T>> {
    let spec = match problem {
        "poisson2d" => format!("poisson2d:{}", (n as f64).sqrt().round().max(2.0) as usize),
        "laplace3d" => format!("laplace3d:{}", (n as f64).cbrt().round().max(2.0) as usize),
        other => {
            return Err(KrylovError::InvalidOption(format!(
                "unknown bench problem `{other}` (poisson2d or laplace3d)"
            )));
        }
    };
    generators::from_spec(&spec)
}

/// Minimum bytes an iteration moves (CSR, perfect reuse of the gathered vector): SpMV reads
/// values + column indices + row pointers + the input vector and writes the output; every
/// vector operation reads/writes its n-vectors once.
///
/// | method | variant | vector passes per iteration (besides SpMV) |
/// |---|---|---|
/// | CG | pipelined | update: read x,r,p,Ap, write x,r,p = 7; SpMV reads p, writes Ap = 2 → 9 |
/// | CG | classical | dot 2 + axpy 3 + axpy 3 + dot 1 + xpay 3 + SpMV 2 = 14 |
///
/// Other methods count two SpMVs (BiCGStab, BiCG) or one (GMRES) plus their vector passes,
/// roughly: BiCGStab pipelined 2 SpMV + 18 (its four kernels read/write 3 + 3 + 3 + 9 vectors),
/// classical 2 SpMV + 36 (7 dots, 5 axpys, 1 xpay, 2 SpMV vector passes); GMRES one SpMV plus the
/// Gram–Schmidt reads of the basis (≈ m/2 + 4 vectors on average over a cycle of m).
pub fn bytes_per_iteration(
    method: Method,
    variant: Variant,
    n: usize,
    nnz: usize,
    s: usize,
    restart: usize,
) -> f64 {
    let (n, nnz, s) = (n as f64, nnz as f64, s as f64);
    let spmv = (4.0 + s) * nnz + 4.0 * (n + 1.0);
    let passes = |k: f64| k * s * n;
    match (method, variant) {
        (Method::Cg, Variant::Pipelined) => spmv + passes(9.0),
        (Method::Cg, Variant::Classical) => spmv + passes(14.0),
        (Method::Bicgstab, Variant::Pipelined) => 2.0 * spmv + passes(18.0),
        (Method::Bicgstab, Variant::Classical) => 2.0 * spmv + passes(36.0),
        (Method::Bicg, _) => 2.0 * spmv + passes(16.0),
        (Method::Gmres, _) => spmv + passes(restart as f64 / 2.0 + 6.0),
        (Method::Jacobi, _) => spmv + passes(5.0),
    }
}

/// Streaming bandwidth of the device in GB/s, measured with `shaders/stream_triad.wgsl`
/// (y = a·x + y on `n` f32 entries, 12 bytes each; median of 5 batches of 20 launches,
/// GPU timestamps when profiling, wall time otherwise).
pub fn measure_bandwidth(engine: &Engine, n: usize) -> Result<f64> {
    let n4 = n.div_ceil(4);
    let cfg = ShaderConfig::new(Precision::F32);
    let kernel: Kernel = engine.kernel(kernel_source("stream_triad").expect("registered"), cfg)?;
    let x = engine.storage_zeroed::<[f32; 4]>("x", n4)?;
    let y = engine.storage_zeroed::<[f32; 4]>("y", n4)?;
    let groups = (n4.div_ceil(cfg.workgroup_size as usize) as u32).clamp(1, 4096);
    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    struct P {
        n4: u32,
        groups: u32,
        a: f32,
        pad: u32,
    }
    let params = engine.uniform_from(
        "stream params",
        &P {
            n4: n4 as u32,
            groups,
            a: 0.5,
            pad: 0,
        },
    );
    let bg = engine.bind_group(&kernel, &[&params, &x, &y]);
    let reps = 20;
    let mut samples = Vec::new();
    for _ in 0..6 {
        let before = engine.kernel_times();
        let t = Instant::now();
        let mut batch = engine.begin("bandwidth");
        for _ in 0..reps {
            batch.dispatch(&kernel, &bg, groups);
        }
        batch.submit_and_read::<f32>(&y, 0, 1)?;
        let wall = t.elapsed().as_secs_f64();
        let gpu: f64 = crate::solvers::kernel_times_since(&before, &engine.kernel_times())
            .iter()
            .map(|k| k.seconds)
            .sum();
        let secs = if gpu > 0.0 { gpu } else { wall };
        samples.push(12.0 * (4 * n4) as f64 * reps as f64 / secs / 1e9);
    }
    samples.remove(0); // warm-up
    Ok(median(&mut samples))
}

/// The floor of a kernel launch that depends on the previous one: wall time per dispatch of
/// `reps` back-to-back `stream_triad` launches on 256 entries in one compute pass (each
/// reads and writes y, so the driver must finish one before starting the next — the
/// situation of every solver kernel, which reads what the previous one wrote). Median of 5
/// batches after one warm-up, in µs. A pipelined iteration of k launches cannot take less
/// than k times this.
pub fn dependent_dispatch_us(engine: &Engine, reps: usize) -> Result<f64> {
    let cfg = ShaderConfig::new(Precision::F32);
    let kernel: Kernel = engine.kernel(kernel_source("stream_triad").expect("registered"), cfg)?;
    let x = engine.storage_zeroed::<[f32; 4]>("x", 64)?;
    let y = engine.storage_zeroed::<[f32; 4]>("y", 64)?;
    let params = engine.uniform_from("latency params", &[64u32, 1, 0.5f32.to_bits(), 0]);
    let bg = engine.bind_group(&kernel, &[&params, &x, &y]);
    let mut samples = Vec::new();
    for _ in 0..6 {
        let t = Instant::now();
        let mut batch = engine.begin("latency");
        for _ in 0..reps {
            batch.dispatch(&kernel, &bg, 1);
        }
        batch.submit_and_read::<f32>(&y, 0, 1)?;
        samples.push(t.elapsed().as_secs_f64() / reps as f64 * 1e6);
    }
    samples.remove(0);
    Ok(median(&mut samples))
}

/// Bandwidth probes for diagnosing the solver kernels (GB/s, median of 5 batches of 20
/// launches, wall time): `stream_update4` — update_cg's 4 reads + 3 writes per entry without
/// its reductions — on `n` f32 entries with `groups` workgroups of `wg` threads (grid-stride;
/// `groups = 0` launches one thread per entry).
pub fn probe_update4(engine: &Engine, n: usize, wg: u32, groups: u32) -> Result<f64> {
    probe_update4_variant(engine, "stream_update4", n, wg, groups)
}

/// [`probe_update4`] for one of the probe kernels: `stream_update4`, `stream_update4_status`
/// (+ the solver kernels' atomic status test) or `stream_update4_reduce` (+ their
/// workgroup-reduction epilogue).
pub fn probe_update4_variant(
    engine: &Engine,
    kernel_name: &str,
    n: usize,
    wg: u32,
    groups: u32,
) -> Result<f64> {
    let cfg = ShaderConfig {
        workgroup_size: wg,
        ..ShaderConfig::new(Precision::F32)
    };
    let source = kernel_source(kernel_name)
        .ok_or_else(|| KrylovError::InvalidOption(format!("no kernel {kernel_name}")))?;
    let kernel: Kernel = engine.kernel(source, cfg)?;
    let v: Vec<f32> = (0..n).map(|i| 1.0 + (i % 13) as f32 * 0.01).collect();
    let bufs = [
        engine.storage_from("x", &v)?,
        engine.storage_from("r", &v)?,
        engine.storage_from("p", &v)?,
        engine.storage_from("q", &v)?,
    ];
    let groups = if groups == 0 {
        n.div_ceil(wg as usize) as u32
    } else {
        groups
    };
    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    struct P {
        n: u32,
        groups: u32,
        a: f32,
        pad: u32,
    }
    let params = engine.uniform_from(
        "probe params",
        &P {
            n: n as u32,
            groups,
            a: 1e-3,
            pad: 0,
        },
    );
    let extra = engine.storage_zeroed::<[f32; 4]>("probe extra", (groups as usize).max(4))?;
    let bg = engine.bind_group_at(
        &kernel,
        &[
            (0, &params),
            (1, &bufs[0]),
            (2, &bufs[1]),
            (3, &bufs[2]),
            (4, &bufs[3]),
            (5, &extra),
        ],
    );
    let reps = 20;
    let mut samples = Vec::new();
    for _ in 0..6 {
        let t = Instant::now();
        let mut batch = engine.begin("probe");
        for _ in 0..reps {
            batch.dispatch(&kernel, &bg, groups);
        }
        batch.submit_and_read::<f32>(&bufs[0], 0, 1)?;
        samples.push(28.0 * n as f64 * reps as f64 / t.elapsed().as_secs_f64() / 1e9);
    }
    samples.remove(0);
    Ok(median(&mut samples))
}

fn median(v: &mut [f64]) -> f64 {
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

/// Times one case; `bandwidth_gbs` (0 if unknown) gives the roofline.
pub fn run_case(engine: &Engine, case: &BenchCase, bandwidth_gbs: f64) -> Result<BenchRow> {
    match case.precision {
        Precision::F32 => {
            let a = bench_matrix::<f32>(&case.problem, case.n)?;
            run_case_on(engine, case, &a, bandwidth_gbs, None)
        }
        Precision::F64 => {
            let a = bench_matrix::<f64>(&case.problem, case.n)?;
            run_case_on(engine, case, &a, bandwidth_gbs, None)
        }
    }
}

/// Times one case on a matrix built already (`case.precision` must be `T`'s).
pub fn run_case_on<T: Scalar>(
    engine: &Engine,
    case: &BenchCase,
    a: &Csr<T>,
    bandwidth_gbs: f64,
    heater: Option<&Heater>,
) -> Result<BenchRow> {
    let b = a.mul_vec(&vec![T::one(); a.ncols()])?;
    let opts = SolveOptions {
        method: case.method,
        variant: case.variant,
        check_mode: case.check_mode,
        rtol: 0.0,
        atol: 0.0,
        max_iter: case.iterations,
        batch: case.iterations,
        restart: case.restart,
        format: case.format,
        precond: Precond::None,
        ..Default::default()
    };
    let mut us_runs = Vec::new();
    let mut last = None;
    for _ in 0..case.runs.max(1) {
        let sol = match heater {
            // Warm clocks during the setup, paused for the timed loop.
            Some(h) => {
                let sol = solve_gpu(engine, a, &b, None, &opts, &mut h.monitor());
                h.resume();
                sol?
            }
            None => solve_gpu(engine, a, &b, None, &opts, &mut ())?,
        };
        let r = sol.report;
        if r.iterations_recorded > 0 {
            us_runs.push(r.loop_seconds / r.iterations_recorded as f64 * 1e6);
        }
        last = Some(r);
    }
    let r = last.expect("at least one run");
    let us = median(&mut us_runs.clone());
    let bytes = bytes_per_iteration(
        case.method,
        case.variant,
        a.nrows(),
        a.nnz(),
        T::PRECISION.size(),
        case.restart,
    );
    let roofline_us = if bandwidth_gbs > 0.0 {
        bytes / (bandwidth_gbs * 1e9) * 1e6
    } else {
        0.0
    };
    let per_it = |k: &KernelTime| {
        (
            k.name.clone(),
            k.seconds / r.iterations_recorded.max(1) as f64 * 1e6,
        )
    };
    Ok(BenchRow {
        problem: case.problem.clone(),
        n: a.nrows(),
        nnz: a.nnz(),
        // The format the solve ran on (`auto` resolved).
        format: r.format.clone(),
        method: case.method,
        variant: case.variant,
        precision: T::PRECISION,
        check_mode: case.check_mode,
        iterations: r.iterations_recorded,
        us_per_iteration: us,
        us_runs,
        dispatches_per_iteration: r.dispatches_per_iteration,
        transfers_per_iteration: r.transfers_per_iteration,
        bytes_per_iteration: bytes,
        gb_per_s: bytes / (us * 1e-6) / 1e9,
        roofline_us,
        roofline_ratio: if roofline_us > 0.0 {
            us / roofline_us
        } else {
            0.0
        },
        kernel_us_per_iteration: r.kernel_times.iter().map(per_it).collect(),
        adapter: engine.context().summary.name.clone(),
        iterations_done: r.iterations,
        reason: r.reason.name().to_string(),
    })
}

/// One line of the table `krylov bench` prints.
pub fn table_header() -> String {
    format!(
        "{:<10} {:>9} {:>10} {:<8} {:<4} {:<10} {:<6} {:>10} {:>8} {:>8} {:>8} {:>10} {:>7}",
        "problem",
        "n",
        "nnz",
        "method",
        "prec",
        "variant",
        "check",
        "µs/iter",
        "disp/it",
        "xfer/it",
        "GB/s",
        "roof µs",
        "×roof"
    )
}

/// The row formatted under [`table_header`].
pub fn table_row(r: &BenchRow) -> String {
    let flag = if r.iterations_done < r.iterations {
        format!(
            "  (stopped early: {} after {} iterations)",
            r.reason, r.iterations_done
        )
    } else {
        String::new()
    };
    let row = format!(
        "{:<10} {:>9} {:>10} {:<8} {:<4} {:<10} {:<6} {:>10.2} {:>8.2} {:>8.3} {:>8.1} {:>10.2} {:>7.2}",
        r.problem,
        r.n,
        r.nnz,
        r.method.as_str(),
        r.precision.wgsl(),
        r.variant.as_str(),
        r.check_mode.as_str(),
        r.us_per_iteration,
        r.dispatches_per_iteration,
        r.transfers_per_iteration,
        r.gb_per_s,
        r.roofline_us,
        r.roofline_ratio
    );
    row + &flag
}

/// Time to solution of one configuration: wall time of [`solve_gpu`] from the host matrix to
/// the host solution (upload, pipeline creation, the solve to `rtol`, download of x), median
/// of `runs`. Returns (median seconds, iterations, converged).
pub fn time_to_solution<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    method: Method,
    precision_rtol: f64,
    runs: usize,
    format: crate::solvers::Format,
    heater: Option<&Heater>,
) -> Result<(f64, usize, bool)> {
    let b = a.mul_vec(&vec![T::one(); a.ncols()])?;
    let opts = SolveOptions {
        method,
        variant: Variant::Pipelined,
        check_mode: CheckMode::Device,
        rtol: precision_rtol,
        max_iter: 100_000,
        format,
        ..Default::default()
    };
    let mut times = Vec::new();
    let mut last = (0, false);
    for _ in 0..runs.max(1) {
        // The whole solve is timed (upload included): the heater rests throughout.
        let t = Instant::now();
        let sol = with_heater_paused(heater, || solve_gpu(engine, a, &b, None, &opts, &mut ()));
        times.push(t.elapsed().as_secs_f64());
        let sol = sol?;
        last = (sol.report.iterations, sol.report.converged);
    }
    Ok((median(&mut times), last.0, last.1))
}

/// One row of `krylov bench --spmv`: y = A·x in one storage format.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SpmvRow {
    pub kind: &'static str,
    pub matrix: String,
    pub n: usize,
    pub nnz: usize,
    pub precision: Precision,
    pub format: crate::solvers::Format,
    /// Why the format was not run (padding budget, binding limit), `None` when it ran.
    pub refused: Option<String>,
    /// Bytes of the format's arrays.
    pub matrix_bytes: u64,
    /// Stored values including padding (paper 003's `e`).
    pub stored: u64,
    /// Bytes moved per product as paper 003 Table 3 counts them: 2·e values (matrix and
    /// vector element per stored value) plus the index data.
    pub model_bytes: u64,
    /// Median wall time of one product (`repeat` products per submit).
    pub seconds: f64,
    pub gb_per_s: f64,
    /// 2·nnz / time: useful work, comparable across formats.
    pub gflops: f64,
    /// ‖y − y_f64‖ / ‖y_f64‖ against the f64 CPU product.
    pub relative_error: f64,
}

/// How `krylov bench --spmv` times one format.
#[derive(Debug, Clone, Copy)]
pub struct SpmvBench {
    /// Timed batches (the median is reported), after one untimed batch.
    pub runs: usize,
    /// Products per batch (one submit).
    pub repeat: usize,
    /// Padding budget of the conversion.
    pub max_padding: f64,
}

/// Times `repeat` products y = A·x in one submit, `runs` times, for `format` (median).
/// A refused format gives a row with `refused` set, not an error.
pub fn bench_spmv<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    matrix: &str,
    format: crate::solvers::Format,
    how: SpmvBench,
    heater: Option<&Heater>,
) -> Result<SpmvRow> {
    let SpmvBench {
        runs,
        repeat,
        max_padding,
    } = how;
    use crate::gpu::{GpuMatrix, Spmv};
    let mut row = SpmvRow {
        kind: "spmv",
        matrix: matrix.to_string(),
        n: a.nrows(),
        nnz: a.nnz(),
        precision: T::PRECISION,
        format,
        refused: None,
        matrix_bytes: 0,
        stored: 0,
        model_bytes: 0,
        seconds: f64::NAN,
        gb_per_s: f64::NAN,
        gflops: f64::NAN,
        relative_error: f64::NAN,
    };
    let ga = match GpuMatrix::upload_with(engine, a, format, max_padding) {
        Ok(ga) => ga,
        Err(KrylovError::FormatRefused { reason, .. }) => {
            row.refused = Some(reason);
            return Ok(row);
        }
        Err(e @ KrylovError::BufferTooLarge { .. }) => {
            row.refused = Some(e.to_string());
            return Ok(row);
        }
        Err(e) => return Err(e),
    };
    row.format = ga.format();
    let kernel = Spmv::new(engine, &ga)?;
    let x: Vec<T> = (0..a.ncols())
        .map(|i| T::from_f64(1.0 + (i % 7) as f64 / 7.0))
        .collect();
    let xb = engine.storage_from("x", &x)?;
    let yb = engine.storage_zeroed::<T>("y", a.nrows())?;
    let bg = kernel.bind(engine, &ga, &xb, &yb);
    let y = kernel.apply_buffers(engine, &ga, &xb, &yb)?;
    let exact = crate::cpu::spmv_f64(a, &x);
    let num: f64 = y
        .iter()
        .zip(&exact)
        .map(|(g, r)| (g.as_f64() - r).powi(2))
        .sum();
    let den: f64 = exact.iter().map(|r| r * r).sum();
    row.relative_error = if den > 0.0 {
        (num / den).sqrt()
    } else {
        num.sqrt()
    };
    let repeat = repeat.max(1);
    // One untimed batch first (pipeline and caches warm), then the timed ones.
    let mut times: Vec<f64> = with_heater_paused(heater, || {
        (0..runs.max(1) + 1)
            .map(|_| {
                let start = Instant::now();
                let mut batch = engine.begin("spmv bench");
                for _ in 0..repeat {
                    kernel.record(&mut batch, &ga, &bg);
                }
                batch
                    .submit_and_read::<T>(&yb, 0, 1)
                    .map(|_| start.elapsed().as_secs_f64() / repeat as f64)
            })
            .collect::<Result<_>>()
    })?;
    times.remove(0);
    let s = std::mem::size_of::<T>() as u64;
    row.matrix_bytes = ga.bytes();
    row.stored = ga.stored_elements();
    row.model_bytes = 2 * row.stored * s + ga.index_bytes();
    row.seconds = median(&mut times);
    row.gb_per_s = row.model_bytes as f64 / row.seconds / 1e9;
    row.gflops = 2.0 * a.nnz() as f64 / row.seconds / 1e9;
    Ok(row)
}

/// The header of [`spmv_table_row`]'s table.
pub fn spmv_table_header() -> String {
    format!(
        "{:<22} {:>9} {:>10} {:<5} {:<6} {:>11} {:>9} {:>9} {:>8} {:>9}",
        "matrix", "n", "nnz", "prec", "format", "bytes", "µs/spmv", "GB/s", "GFLOP/s", "rel.err"
    )
}

/// One line of the `krylov bench --spmv` table.
pub fn spmv_table_row(r: &SpmvRow) -> String {
    let head = format!(
        "{:<22} {:>9} {:>10} {:<5} {:<6}",
        r.matrix,
        r.n,
        r.nnz,
        r.precision.to_string(),
        r.format.as_str()
    );
    match &r.refused {
        Some(why) => format!("{head} refused: {why}"),
        None => format!(
            "{head} {:>11} {:>9.2} {:>9.1} {:>8.2} {:>9.1e}",
            r.matrix_bytes,
            r.seconds * 1e6,
            r.gb_per_s,
            r.gflops,
            r.relative_error
        ),
    }
}
