//! GPU timestamps around every dispatch (`KRYLOV_PROFILE=1`, [`Tuning::profile`]), summed per
//! kernel name: the engine's profiler, read back after each timed batch.
//!
//! [`Tuning::profile`]: super::engine::Tuning

use std::sync::Mutex;

use super::device::GpuContext;
use super::engine::Engine;
use crate::base::error::{KrylovError, Result};

/// Dispatches timed per batch at most (two timestamps each, QUERY_SET_MAX_QUERIES = 4096).
pub(super) const MAX_TIMED: usize = 2048;

/// GPU timestamps around every dispatch, summed per kernel name.
pub(super) struct Profiler {
    pub(super) query_set: wgpu::QuerySet,
    pub(super) resolve: wgpu::Buffer,
    pub(super) readback: wgpu::Buffer,
    pub(super) period_ns: f64,
    pub(super) totals: Mutex<std::collections::BTreeMap<&'static str, (u64, f64)>>,
}

impl Profiler {
    pub(super) fn new(ctx: &GpuContext) -> Self {
        let bytes = (2 * MAX_TIMED * 8) as u64;
        Profiler {
            query_set: ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("kernel timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: (2 * MAX_TIMED) as u32,
            }),
            resolve: ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps resolve"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps readback"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            period_ns: ctx.queue.get_timestamp_period() as f64,
            totals: Mutex::new(Default::default()),
        }
    }

    /// Reads the resolved timestamps of one batch and adds them to the per-kernel totals
    /// (profiling only; not counted as a transfer).
    pub(super) fn collect(&self, engine: &Engine, timed: &[&'static str]) -> Result<()> {
        let p = self;
        let bytes = (timed.len() * 16) as u64;
        let slice = p.readback.slice(..bytes);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        engine.wait()?;
        rx.recv()
            .map_err(|_| KrylovError::Gpu("map callback never ran".into()))?
            .map_err(|e| KrylovError::Gpu(format!("map_async failed: {e}")))?;
        {
            let view = slice
                .get_mapped_range()
                .map_err(|e| KrylovError::Gpu(format!("get_mapped_range failed: {e}")))?;
            let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&view[..]);
            let mut totals = p.totals.lock().expect("profiler totals");
            for (i, name) in timed.iter().enumerate() {
                let dt = ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64 * p.period_ns * 1e-9;
                let e = totals.entry(name).or_insert((0, 0.0));
                e.0 += 1;
                e.1 += dt;
            }
        }
        p.readback.unmap();
        Ok(())
    }
}
