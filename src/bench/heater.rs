//! Keeps the GPU's clocks up between timed loops.
//!
//! Measured on the H200 (bench/NOTES.md, 2026-11-22): after a few seconds of low utilisation
//! — the CPU building, converting and uploading the next matrix while the GPU idles — the
//! driver drops the SM clock from 1980 to 345 MHz, and the next timed loop of pipelined CG
//! on 10⁷ unknowns runs 3× slower (870 vs 275 µs per iteration); a fresh process or a
//! sustained load brings the clock back. A benchmark that times short loops after long CPU
//! phases therefore measures the power governor, not the kernels. The [`Heater`] runs small
//! streaming kernels from a second thread whenever no timed loop runs; the benchmark pauses it
//! (waiting for its last submit to finish) right before timing and resumes it after.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::thread::JoinHandle;

use crate::base::error::Result;
use crate::base::scalar::Precision;
use crate::gpu::shader::{ShaderConfig, kernel_source};
use crate::gpu::{Engine, GpuContext};
use crate::solvers::Monitor;

const RUN: u8 = 0;
const PAUSE_REQUESTED: u8 = 1;
const PAUSED: u8 = 2;
const EXIT: u8 = 3;

/// A background thread submitting `stream_triad` batches on its own [`Engine`] (its
/// launches are not in the solver's counters) until paused or dropped.
pub struct Heater {
    state: Arc<AtomicU8>,
    handle: Option<JoinHandle<()>>,
}

impl Heater {
    /// Starts heating on `ctx` (a separate engine on the same device and queue).
    pub fn start(ctx: Arc<GpuContext>) -> Result<Self> {
        let engine = Engine::new(ctx);
        let cfg = ShaderConfig::new(Precision::F32);
        let kernel = engine.kernel(kernel_source("stream_triad").expect("registered"), cfg)?;
        // 2²⁰ vec4 entries (48 MiB moved per launch): ~15 µs on an H200, a few ms on lavapipe.
        let n4 = 1usize << 18;
        let x = engine.storage_zeroed::<[f32; 4]>("heater x", n4)?;
        let y = engine.storage_zeroed::<[f32; 4]>("heater y", n4)?;
        let groups = (n4 / cfg.workgroup_size as usize) as u32;
        let params = engine.uniform_from(
            "heater params",
            &[n4 as u32, groups, 0.5f32.to_bits(), 0u32],
        );
        let bg = engine.bind_group(&kernel, &[&params, &x, &y]);
        let state = Arc::new(AtomicU8::new(RUN));
        let s = state.clone();
        let handle = std::thread::spawn(move || {
            loop {
                match s.load(Ordering::Acquire) {
                    EXIT => return,
                    PAUSE_REQUESTED => {
                        s.store(PAUSED, Ordering::Release);
                        continue;
                    }
                    PAUSED => {
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        continue;
                    }
                    _ => {}
                }
                let mut batch = engine.begin("heater");
                for _ in 0..8 {
                    batch.dispatch(&kernel, &bg, groups);
                }
                // Waits for the batch: a pause request is honoured only once the GPU is idle.
                if batch.submit_and_read::<f32>(&y, 0, 1).is_err() {
                    s.store(EXIT, Ordering::Release);
                    return;
                }
            }
        });
        Ok(Heater {
            state,
            handle: Some(handle),
        })
    }

    /// Stops submitting and returns once the heater's last batch has finished.
    pub fn pause(&self) {
        if self
            .state
            .compare_exchange(RUN, PAUSE_REQUESTED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        while self.state.load(Ordering::Acquire) == PAUSE_REQUESTED {
            std::thread::yield_now();
        }
    }

    /// Starts submitting again.
    pub fn resume(&self) {
        let _ = self
            .state
            .compare_exchange(PAUSED, RUN, Ordering::AcqRel, Ordering::Acquire);
    }

    /// A solver monitor that pauses the heater when the timed loop starts (after the setup:
    /// [`Monitor::on_loop_start`]).
    pub fn monitor(&self) -> PauseAtLoopStart<'_> {
        PauseAtLoopStart(self)
    }
}

/// Runs `f` with `heater` (if any) paused, and resumes it afterwards whatever `f` returns.
pub fn with_heater_paused<R>(heater: Option<&Heater>, f: impl FnOnce() -> R) -> R {
    if let Some(h) = heater {
        h.pause();
    }
    let out = f();
    if let Some(h) = heater {
        h.resume();
    }
    out
}

impl Drop for Heater {
    fn drop(&mut self) {
        self.state.store(EXIT, Ordering::Release);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// See [`Heater::monitor`].
pub struct PauseAtLoopStart<'a>(&'a Heater);

impl Monitor for PauseAtLoopStart<'_> {
    fn on_loop_start(&mut self) {
        self.0.pause();
    }
}

/// One [`Heater`] per hardware device of a solve (software adapters get none: their "GPU" is
/// the host's cores), and the monitor that pauses them all when the timed loop starts: the
/// CLI's `solve --heat`, so a benchmark's loop starts at the clocks a busy GPU runs at
/// instead of those the driver lowered to during a long set-up.
///
/// ```no_run
/// use krylov_wgpu::bench::Heaters;
/// use krylov_wgpu::gpu::{DeviceList, open_devices};
/// let devices = open_devices(&DeviceList::Count(2))?;
/// let mut heaters = Heaters::start(&devices)?; // heating from here …
/// // … to the first `on_loop_start` of a solve given `&mut heaters` as its monitor.
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
pub struct Heaters(Vec<Heater>);

impl Heaters {
    /// Starts heating every hardware device in `contexts`.
    pub fn start(contexts: &[Arc<GpuContext>]) -> Result<Self> {
        let mut v = Vec::new();
        for ctx in contexts.iter().filter(|c| !c.summary.software) {
            v.push(Heater::start(ctx.clone())?);
        }
        Ok(Heaters(v))
    }

    /// How many devices are heated.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no device is heated.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Monitor for Heaters {
    fn on_loop_start(&mut self) {
        for h in &self.0 {
            h.pause();
        }
    }
}
