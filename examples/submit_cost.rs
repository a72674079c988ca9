//! What one host-side submit costs in wgpu, piece by piece (issue #19: the distributed solvers
//! spend most of a small iteration recording and submitting, BENCHMARKS.md). On the adapter
//! `GpuContext::new` picks (`KRYLOV_ADAPTER` to choose), each case is repeated `REPS` times;
//! the host time of the recording + `Queue::submit` (and of `Queue::write_buffer` where the
//! case has one) is timed, the queue is drained after every repetition outside the timed
//! part, and the median is printed as one JSON line per case:
//!
//! `cargo run --release --example submit_cost` (or the built example on the GPU machine).
//!
//! Cases: an empty command buffer; a 16-byte `write_buffer` then an empty submit; one
//! one-workgroup dispatch binding 2, 4 or 8 storage buffers; five such dispatches (one pass);
//! the 8-buffer dispatch after a 16-byte `write_buffer`; a 16-byte copy from a buffer the
//! host filled earlier (no `write_buffer`) before the dispatch; one and five dispatches with
//! the earlier submissions still in flight (not drained); a dispatch followed by a 16 kB copy
//! into a buffer mapped for reading after the submit (a solve's read of its sums).

use std::time::Instant;

use krylov_wgpu::gpu::{DeviceRequest, GpuContext};

const REPS: usize = 400;

/// A kernel binding `k` storage buffers, each thread 0 adding 1 to element 0 of the last.
fn shader(k: usize) -> String {
    let mut s = String::new();
    for i in 0..k {
        s.push_str(&format!(
            "@group(0) @binding({i}) var<storage, read_write> b{i}: array<f32>;\n"
        ));
    }
    s.push_str("@compute @workgroup_size(64)\nfn main(@builtin(local_invocation_index) l: u32) {\n    if l == 0u {\n        var t = 0.0;\n");
    for i in 0..k - 1 {
        s.push_str(&format!("        t = t + b{i}[0];\n"));
    }
    s.push_str(&format!(
        "        b{}[0] = b{}[0] + 1.0 + 0.0 * t;\n    }}\n}}\n",
        k - 1,
        k - 1
    ));
    s
}

struct Kernel {
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
}

fn kernel(ctx: &GpuContext, bufs: &[wgpu::Buffer], k: usize) -> Kernel {
    let module = ctx
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("submit_cost"),
            source: wgpu::ShaderSource::Wgsl(shader(k).into()),
        });
    let pipeline = ctx
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("submit_cost"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
    let entries: Vec<wgpu::BindGroupEntry<'_>> = (0..k)
        .map(|i| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: bufs[i].as_entire_binding(),
        })
        .collect();
    let bind = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("submit_cost"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    Kernel { pipeline, bind }
}

/// Median host µs of `step` (which records and submits), the queue drained after each.
fn time(ctx: &GpuContext, step: impl FnMut()) -> f64 {
    time_with(ctx, true, step)
}

/// [`time`], or with `drain` false the repetitions back to back (earlier submissions still
/// in flight, as in a solve), the queue drained once at the end.
fn time_with(ctx: &GpuContext, drain: bool, mut step: impl FnMut()) -> f64 {
    let mut t = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        let start = Instant::now();
        step();
        t.push(start.elapsed().as_secs_f64() * 1e6);
        if drain {
            ctx.device
                .poll(wgpu::PollType::wait_indefinitely())
                .expect("device poll");
        }
    }
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("device poll");
    t.sort_by(|a, b| a.total_cmp(b));
    t[REPS / 2]
}

fn main() {
    let ctx = GpuContext::new(&DeviceRequest::from_env()).expect("a GPU adapter");
    let bufs: Vec<wgpu::Buffer> = (0..8)
        .map(|i| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&format!("submit_cost {i}")),
                size: 1 << 20,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        })
        .collect();
    for b in &bufs {
        ctx.queue.write_buffer(b, 0, &vec![0u8; 1 << 20]);
    }
    ctx.queue.submit([]);
    let kernels: Vec<(usize, Kernel)> = [2, 4, 8].map(|k| (k, kernel(&ctx, &bufs, k))).into();
    let coef = [1.0f32, 2.0, 3.0, 4.0];
    let bytes: &[u8] = bytemuck::cast_slice(&coef);
    let dispatch = |n: usize, k: &Kernel, pre: &dyn Fn(&mut wgpu::CommandEncoder)| {
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        pre(&mut enc);
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for _ in 0..n {
                pass.set_pipeline(&k.pipeline);
                pass.set_bind_group(0, &k.bind, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        ctx.queue.submit([enc.finish()]);
    };
    let none = |_: &mut wgpu::CommandEncoder| {};
    let mut rows: Vec<(String, f64)> = Vec::new();
    rows.push((
        "empty submit".into(),
        time(&ctx, || {
            let enc = ctx.device.create_command_encoder(&Default::default());
            ctx.queue.submit([enc.finish()]);
        }),
    ));
    rows.push((
        "write_buffer 16 B + empty submit".into(),
        time(&ctx, || {
            ctx.queue.write_buffer(&bufs[0], 0, bytes);
            let enc = ctx.device.create_command_encoder(&Default::default());
            ctx.queue.submit([enc.finish()]);
        }),
    ));
    for (k, kern) in &kernels {
        rows.push((
            format!("1 dispatch, {k} buffers"),
            time(&ctx, || dispatch(1, kern, &none)),
        ));
    }
    let k8 = &kernels[2].1;
    rows.push((
        "5 dispatches, 8 buffers".into(),
        time(&ctx, || dispatch(5, k8, &none)),
    ));
    rows.push((
        "write_buffer 16 B + 1 dispatch, 8 buffers".into(),
        time(&ctx, || {
            ctx.queue.write_buffer(&bufs[0], 0, bytes);
            dispatch(1, k8, &none)
        }),
    ));
    rows.push((
        "copy 16 B + 1 dispatch, 8 buffers".into(),
        time(&ctx, || {
            dispatch(1, k8, &|enc: &mut wgpu::CommandEncoder| {
                enc.copy_buffer_to_buffer(&bufs[1], 0, &bufs[0], 0, 16);
            })
        }),
    ));
    rows.push((
        "1 dispatch, 8 buffers, earlier submits in flight".into(),
        time_with(&ctx, false, || dispatch(1, k8, &none)),
    ));
    rows.push((
        "5 dispatches, 8 buffers, earlier submits in flight".into(),
        time_with(&ctx, false, || dispatch(5, k8, &none)),
    ));
    // As a solve's read of its partial sums: a copy into a mappable buffer, mapped after the
    // submit (the map is waited for outside the timed part).
    let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("submit_cost staging"),
        size: 16 << 10,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mapped = std::cell::Cell::new(false);
    rows.push((
        "1 dispatch, 8 buffers + 16 kB read mapped".into(),
        time(&ctx, || {
            if mapped.replace(true) {
                staging.unmap();
            }
            dispatch(1, k8, &|enc: &mut wgpu::CommandEncoder| {
                enc.copy_buffer_to_buffer(&bufs[2], 0, &staging, 0, 16 << 10);
            });
            staging
                .slice(..)
                .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
        }),
    ));
    staging.unmap();
    for (case, us) in rows {
        println!(
            "{{\"adapter\": {:?}, \"case\": {case:?}, \"median_us\": {us:.2}, \"reps\": {REPS}}}",
            ctx.summary.name
        );
    }
}
