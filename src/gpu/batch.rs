//! A recording of launches, copies and read-backs that [`Engine::begin`] opens and one
//! submit ends: the only way work reaches the queue, so the engine's counters see every
//! dispatch, submit and transfer.

use bytemuck::Pod;

use super::engine::{Engine, Kernel, MAX_TIMED};
use crate::base::error::{KrylovError, Result};

/// Dispatches recorded into one command encoder, in one compute pass where possible.
/// Dropping a batch without submitting discards it.
pub struct Batch<'e> {
    engine: &'e Engine,
    encoder: Option<wgpu::CommandEncoder>,
    pass: Option<wgpu::ComputePass<'static>>,
    /// Kernel names of the timed dispatches, in order (profiling only).
    timed: Vec<&'static str>,
}

impl<'e> Batch<'e> {
    /// An empty batch recording into `encoder` (see [`Engine::begin`]).
    pub(super) fn new(engine: &'e Engine, encoder: wgpu::CommandEncoder) -> Self {
        Batch {
            engine,
            encoder: Some(encoder),
            pass: None,
            timed: Vec::new(),
        }
    }

    fn pass(&mut self) -> &mut wgpu::ComputePass<'static> {
        if self.pass.is_none() {
            let enc = self.encoder.as_mut().expect("batch not yet submitted");
            let pass = enc
                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("krylov batch"),
                    timestamp_writes: None,
                })
                .forget_lifetime();
            self.pass = Some(pass);
        }
        self.pass.as_mut().expect("pass just created")
    }

    fn end_pass(&mut self) {
        self.pass = None;
    }

    /// Records one dispatch of `groups` workgroups (one counted dispatch, and the global
    /// reductions the kernel starts: [`Kernel::reductions`]). Counts above the
    /// per-dimension limit (65535 typically) are split into a 2D grid; kernels recover the
    /// linear workgroup index as `wid.y * nwg.x + wid.x`.
    pub fn dispatch(&mut self, kernel: &Kernel, bind_group: &wgpu::BindGroup, groups: u32) {
        let max = self.engine.groups_per_dimension();
        let (x, y) = if groups <= max {
            (groups, 1)
        } else {
            (max, groups.div_ceil(max))
        };
        let timed = match &self.engine.profiler {
            Some(p) if self.timed.len() < MAX_TIMED => {
                Some((&p.query_set, 2 * self.timed.len() as u32))
            }
            _ => None,
        };
        let pass = self.pass();
        pass.set_pipeline(&kernel.pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        if let Some((qs, i)) = timed {
            pass.write_timestamp(qs, i);
        }
        pass.dispatch_workgroups(x, y, 1);
        if let Some((qs, i)) = timed {
            pass.write_timestamp(qs, i + 1);
            self.timed.push(kernel.name);
        }
        self.engine.counters.dispatch(kernel.reductions());
    }

    /// Copies `bytes` bytes between buffers on the GPU (no host transfer).
    pub fn copy(
        &mut self,
        src: &wgpu::Buffer,
        src_offset: u64,
        dst: &wgpu::Buffer,
        dst_offset: u64,
        bytes: u64,
    ) {
        self.end_pass();
        self.encoder
            .as_mut()
            .expect("batch not yet submitted")
            .copy_buffer_to_buffer(src, src_offset, dst, dst_offset, bytes);
    }

    /// Zeroes `bytes` bytes of `buffer` from `offset` on the GPU (no host transfer; both
    /// multiples of 4).
    pub fn clear(&mut self, buffer: &wgpu::Buffer, offset: u64, bytes: u64) {
        self.end_pass();
        self.encoder
            .as_mut()
            .expect("batch not yet submitted")
            .clear_buffer(buffer, offset, Some(bytes));
    }

    /// Submits the batch (one counted submit) without waiting (profiling waits for the
    /// timestamps).
    pub fn submit(mut self) -> Result<()> {
        self.submit_inner().map(|_| ())
    }

    fn submit_inner(&mut self) -> Result<wgpu::SubmissionIndex> {
        self.end_pass();
        let mut enc = self.encoder.take().expect("batch not yet submitted");
        let timed = std::mem::take(&mut self.timed);
        if let (Some(p), false) = (&self.engine.profiler, timed.is_empty()) {
            let q = 2 * timed.len() as u32;
            enc.resolve_query_set(&p.query_set, 0..q, &p.resolve, 0);
            enc.copy_buffer_to_buffer(&p.resolve, 0, &p.readback, 0, q as u64 * 8);
        }
        let t = std::time::Instant::now();
        let index = self.engine.ctx.queue.submit([enc.finish()]);
        self.engine.queue_nanos.fetch_add(
            t.elapsed().as_nanos() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        self.engine.counters.submit();
        if let (Some(p), false) = (&self.engine.profiler, timed.is_empty()) {
            p.collect(self.engine, &timed)?;
        }
        self.engine.ctx.take_error()?;
        Ok(index)
    }

    /// Submits the batch followed by a copy of `count` elements of `T` from element `offset`
    /// of `buffer`, waits, and returns them: one submit and one counted readback.
    pub fn submit_and_read<T: Pod>(
        self,
        buffer: &wgpu::Buffer,
        offset: usize,
        count: usize,
    ) -> Result<Vec<T>> {
        self.submit_read(buffer, offset, count)?.wait()
    }

    /// Submits the batch followed by a copy of `count` elements of `T` from element `offset`
    /// of `buffer` into a staging buffer, and returns at once: [`PendingRead::wait`] waits for
    /// this submission only, so the next batch can be recorded and submitted meanwhile. One
    /// submit and (once waited for) one counted readback.
    pub fn submit_read<T: Pod>(
        mut self,
        buffer: &wgpu::Buffer,
        offset: usize,
        count: usize,
    ) -> Result<PendingRead<'e, T>> {
        let size = std::mem::size_of::<T>();
        let bytes = (count * size) as u64;
        let padded = bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT).max(4);
        let src_off = (offset * size) as u64;
        if src_off + padded > buffer.size() {
            return Err(KrylovError::Gpu(format!(
                "read of {bytes} bytes at offset {src_off} beyond a buffer of {} bytes",
                buffer.size()
            )));
        }
        let engine = self.engine;
        let staging = engine.take_staging(padded);
        self.copy(buffer, src_off, &staging, 0, padded);
        let submission = self.submit_inner()?;
        // Counted when submitted: a read dropped unwaited still crossed the bus.
        engine.counters.readback(bytes);
        let (tx, rx) = std::sync::mpsc::channel();
        staging
            .slice(..padded)
            .map_async(wgpu::MapMode::Read, move |r| {
                let _ = tx.send(r);
            });
        Ok(PendingRead {
            engine,
            staging,
            bytes,
            padded,
            rx,
            submission,
            _t: std::marker::PhantomData,
        })
    }
}

/// A readback submitted with [`Batch::submit_read`], not yet waited for.
pub struct PendingRead<'e, T> {
    engine: &'e Engine,
    staging: wgpu::Buffer,
    bytes: u64,
    padded: u64,
    rx: std::sync::mpsc::Receiver<std::result::Result<(), wgpu::BufferAsyncError>>,
    submission: wgpu::SubmissionIndex,
    _t: std::marker::PhantomData<T>,
}

impl<T: Pod> PendingRead<'_, T> {
    /// Waits for the submission that holds this read (not for later ones) and returns the data.
    pub fn wait(self) -> Result<Vec<T>> {
        let engine = self.engine;
        let device = &engine.ctx.device;
        let mut mapped = None;
        if engine.spins() {
            // Poll without blocking until the map callback has run (it runs inside poll).
            let t = std::time::Instant::now();
            while mapped.is_none() && t.elapsed() < super::engine::SPIN_WAIT_LIMIT {
                device
                    .poll(wgpu::PollType::Poll)
                    .map_err(|e| KrylovError::Gpu(format!("poll failed: {e}")))?;
                match self.rx.try_recv() {
                    Ok(r) => mapped = Some(Ok(r)),
                    Err(std::sync::mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => mapped = Some(Err(())),
                }
            }
        }
        let mapped = match mapped {
            Some(m) => m,
            None => {
                device
                    .poll(wgpu::PollType::Wait {
                        submission_index: Some(self.submission),
                        timeout: None,
                    })
                    .map_err(|e| KrylovError::Gpu(format!("poll failed: {e}")))?;
                self.rx.recv().map_err(|_| ())
            }
        };
        engine.ctx.take_error()?;
        mapped
            .map_err(|_| KrylovError::Gpu("map callback never ran".into()))?
            .map_err(|e| KrylovError::Gpu(format!("map_async failed: {e}")))?;
        let bytes = self.bytes;
        let slice = self.staging.slice(..self.padded);
        let out = {
            let view = slice
                .get_mapped_range()
                .map_err(|e| KrylovError::Gpu(format!("get_mapped_range failed: {e}")))?;
            bytemuck::pod_collect_to_vec::<u8, T>(&view[..bytes as usize])
        };
        self.staging.unmap();
        engine.give_staging(self.staging);
        Ok(out)
    }
}
