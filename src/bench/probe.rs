//! Streaming-bandwidth and launch-latency probes: the roofline of `krylov bench` and the
//! diagnostics of `krylov bench --probe-n`.

use std::time::Instant;

use super::median_after_warmup;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Precision;
use crate::gpu::shader::{ShaderConfig, kernel_source};
use crate::gpu::{Engine, Kernel};

/// Timed batches of every probe (after one untimed warm-up batch).
const BATCHES: usize = 5;

/// Launches per batch of [`measure_bandwidth`] and the update probes.
const REPS: usize = 20;

/// The uniform block of the streaming kernels (`stream_triad`, `stream_update4*`).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct StreamParams {
    /// Entries (vec4 entries for `stream_triad`).
    n: u32,
    /// Workgroups launched (grid-stride loop over `n`).
    groups: u32,
    a: f32,
    pad: u32,
}

/// Records `reps` launches of `kernel` in one submit and waits for them by reading one
/// value of `sync`.
fn dispatch_batch(
    engine: &Engine,
    label: &str,
    (kernel, bind_group): (&Kernel, &wgpu::BindGroup),
    groups: u32,
    reps: usize,
    sync: &wgpu::Buffer,
) -> Result<()> {
    let mut batch = engine.begin(label);
    for _ in 0..reps {
        batch.dispatch(kernel, bind_group, groups);
    }
    batch.submit_and_read::<f32>(sync, 0, 1)?;
    Ok(())
}

/// Streaming bandwidth of the device in GB/s, measured with `shaders/bench/stream_triad.wgsl`
/// (y = a·x + y on `n` f32 entries, 12 bytes each; median of 5 batches of 20 launches,
/// GPU timestamps when profiling, wall time otherwise).
pub fn measure_bandwidth(engine: &Engine, n: usize) -> Result<f64> {
    let n4 = n.div_ceil(4);
    let cfg = ShaderConfig::new(Precision::F32);
    let kernel: Kernel = engine.kernel(kernel_source("stream_triad").expect("registered"), cfg)?;
    let x = engine.storage_zeroed::<[f32; 4]>("x", n4)?;
    let y = engine.storage_zeroed::<[f32; 4]>("y", n4)?;
    let groups = (n4.div_ceil(cfg.workgroup_size as usize) as u32).clamp(1, 4096);
    let params = engine.uniform_from(
        "stream params",
        &StreamParams {
            n: n4 as u32,
            groups,
            a: 0.5,
            pad: 0,
        },
    );
    let bg = engine.bind_group(&kernel, &[&params, &x, &y]);
    median_after_warmup(BATCHES, || {
        let before = engine.kernel_times();
        let t = Instant::now();
        dispatch_batch(engine, "bandwidth", (&kernel, &bg), groups, REPS, &y)?;
        let wall = t.elapsed().as_secs_f64();
        let gpu: f64 = crate::solvers::kernel_times_since(&before, &engine.kernel_times())
            .iter()
            .map(|k| k.seconds)
            .sum();
        let secs = if gpu > 0.0 { gpu } else { wall };
        Ok(12.0 * (4 * n4) as f64 * REPS as f64 / secs / 1e9)
    })
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
    let params = engine.uniform_from(
        "latency params",
        &StreamParams {
            n: 64,
            groups: 1,
            a: 0.5,
            pad: 0,
        },
    );
    let bg = engine.bind_group(&kernel, &[&params, &x, &y]);
    median_after_warmup(BATCHES, || {
        let t = Instant::now();
        dispatch_batch(engine, "latency", (&kernel, &bg), 1, reps, &y)?;
        Ok(t.elapsed().as_secs_f64() / reps as f64 * 1e6)
    })
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
    let params = engine.uniform_from(
        "probe params",
        &StreamParams {
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
    median_after_warmup(BATCHES, || {
        let t = Instant::now();
        dispatch_batch(engine, "probe", (&kernel, &bg), groups, REPS, &bufs[0])?;
        Ok(28.0 * n as f64 * REPS as f64 / t.elapsed().as_secs_f64() / 1e9)
    })
}
