//! The solver thread: it owns the library's GPU device and runs solves off the UI thread.
//!
//! Device choice: the worker opens its **own** device with [`GpuContext::new`] (the library's
//! adapter ranking: Vulkan/Metal/DX12 first, GL only when none of them has an adapter;
//! `KRYLOV_ADAPTER` selects one) instead of sharing eframe's. That device has every feature
//! the solvers can use (SHADER_F64, SUBGROUP, TIMESTAMP_QUERY) and the adapter's own limits,
//! whatever eframe asked for; long solver submissions never queue in front of the UI's frames;
//! and the app behaves the same in a window and in the headless kittest harness.
//!
//! Progress reaches the UI through the library's [`ChannelMonitor`] (one channel per run);
//! the UI polls it every frame. Stop raises the shared cancel flag, which the solvers poll
//! between batches.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use krylov_wgpu::gpu::{AdapterSummary, DeviceRequest, Engine, GpuContext, Tuning};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::{
    ChannelMonitor, Method, Progress, SolveOptions, SolveReport, Variant, on_gpu, solve_gpu,
};
use krylov_wgpu::{KrylovError, Precision, Scalar, cpu};

use crate::problem::one_line;

/// One solve job: the same system solved once per variant, in order.
#[derive(Debug, Clone)]
pub struct SolveJob {
    pub id: u64,
    pub matrix: Arc<Csr<f64>>,
    pub variants: Vec<Variant>,
    /// Options; `variant` is overwritten per run.
    pub opts: SolveOptions,
    pub precision: Precision,
    /// Time every kernel with GPU timestamps.
    pub profile: bool,
    pub cancel: Arc<AtomicBool>,
}

/// The result of one run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub report: SolveReport,
    /// The solution, in f64.
    pub x: Vec<f64>,
}

/// What the worker tells the UI.
#[derive(Debug)]
pub enum WorkerEvent {
    /// The device was opened (or not: then solves run on the CPU).
    Device(Result<AdapterSummary, String>),
    /// A run began; its residuals arrive on `progress`.
    RunStarted {
        job: u64,
        variant: Variant,
        /// `"gpu"` or `"cpu"`.
        device: &'static str,
        /// Why a run went to the CPU, or other remarks.
        note: Option<String>,
        b_norm: f64,
        progress: Receiver<Progress>,
    },
    /// A run ended with a report, or failed with a readable message.
    RunFinished {
        job: u64,
        variant: Variant,
        outcome: Box<Result<RunOutcome, String>>,
    },
    /// Every run of the job is done (or the job failed before any run).
    JobFinished { job: u64, error: Option<String> },
}

/// Handle to the solver thread.
pub struct Worker {
    jobs: Option<Sender<SolveJob>>,
    pub events: Receiver<WorkerEvent>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the thread; it opens the device at once and reports it. `wake` is called after
    /// every event (the app passes `egui::Context::request_repaint`).
    pub fn spawn(wake: impl Fn() + Send + 'static) -> Self {
        let (job_tx, job_rx) = channel::<SolveJob>();
        let (ev_tx, ev_rx) = channel::<WorkerEvent>();
        let thread = std::thread::Builder::new()
            .name("krylov-solver".into())
            .spawn(move || run_worker(job_rx, ev_tx, wake))
            .expect("spawn the solver thread");
        Worker {
            jobs: Some(job_tx),
            events: ev_rx,
            thread: Some(thread),
        }
    }

    /// Queues a job (jobs run one after another).
    pub fn submit(&self, job: SolveJob) -> Result<(), String> {
        self.jobs
            .as_ref()
            .ok_or_else(|| "the solver thread has stopped".to_string())?
            .send(job)
            .map_err(|_| "the solver thread has stopped".to_string())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the job channel ends the thread's loop; running jobs see their cancel flag
        // (the app raises it before dropping the worker).
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Engines {
    ctx: Arc<GpuContext>,
    plain: Engine,
    profiled: Option<Engine>,
}

impl Engines {
    fn get(&mut self, profile: bool) -> &Engine {
        if !profile {
            return &self.plain;
        }
        let ctx = self.ctx.clone();
        self.profiled.get_or_insert_with(|| {
            Engine::with_tuning(
                ctx,
                Tuning {
                    profile: true,
                    ..Default::default()
                },
            )
        })
    }
}

fn run_worker(jobs: Receiver<SolveJob>, events: Sender<WorkerEvent>, wake: impl Fn()) {
    let send = |e: WorkerEvent| {
        let _ = events.send(e);
        wake();
    };
    let opened = std::panic::catch_unwind(|| GpuContext::new(&DeviceRequest::from_env()))
        .unwrap_or_else(|p| Err(KrylovError::Gpu(panic_message(&p))));
    let mut engines = match opened {
        Ok(ctx) => {
            send(WorkerEvent::Device(Ok(ctx.summary.clone())));
            Some(Engines {
                plain: Engine::new(ctx.clone()),
                ctx,
                profiled: None,
            })
        }
        Err(e) => {
            send(WorkerEvent::Device(Err(one_line(&e.to_string()))));
            None
        }
    };
    while let Ok(job) = jobs.recv() {
        let error =
            std::panic::catch_unwind(AssertUnwindSafe(|| run_job(&job, engines.as_mut(), &send)))
                .unwrap_or_else(|p| Err(format!("internal error: {}", panic_message(&p))))
                .err();
        send(WorkerEvent::JobFinished { job: job.id, error });
    }
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".into()
    }
}

fn run_job(
    job: &SolveJob,
    engines: Option<&mut Engines>,
    send: &dyn Fn(WorkerEvent),
) -> Result<(), String> {
    let a = &*job.matrix;
    a.require_square().map_err(|e| e.to_string())?;
    if job.opts.method == Method::Cg && !a.is_symmetric(1e-10) {
        return Err(
            "CG needs a symmetric positive definite matrix and this one is not symmetric: \
             choose BiCGStab or GMRES"
                .into(),
        );
    }
    // b = A·1, so the exact solution is all ones (as the CLI does).
    let b = a
        .mul_vec(&vec![1.0; a.ncols()])
        .map_err(|e| e.to_string())?;
    match job.precision {
        Precision::F64 => run_variants::<f64>(job, a, &b, engines, send),
        Precision::F32 => {
            let a32 = a.cast::<f32>().map_err(|e| e.to_string())?;
            run_variants::<f32>(job, &a32, &b, engines, send)
        }
    }
}

fn run_variants<T: Scalar>(
    job: &SolveJob,
    a: &Csr<T>,
    b: &[f64],
    mut engines: Option<&mut Engines>,
    send: &dyn Fn(WorkerEvent),
) -> Result<(), String> {
    let b: Vec<T> = b.iter().map(|&v| T::from_f64(v)).collect();
    if b.iter().any(|v| !v.is_finite()) {
        return Err(format!(
            "the right-hand side overflows {} (values too large for this precision)",
            T::PRECISION
        ));
    }
    let b_norm = b
        .iter()
        .map(|v| v.as_f64() * v.as_f64())
        .sum::<f64>()
        .sqrt();
    for &variant in &job.variants {
        if job.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let opts = SolveOptions {
            variant,
            ..job.opts.clone()
        };
        let (tx, rx) = channel();
        let mut monitor = ChannelMonitor {
            sender: tx,
            cancel: job.cancel.clone(),
        };
        let engine = match engines.as_deref_mut() {
            Some(e) if on_gpu(opts.method, variant) && e.ctx.supports(T::PRECISION) => {
                Ok(e.get(job.profile))
            }
            Some(e) if !e.ctx.supports(T::PRECISION) => Err(format!(
                "{} has no {} shaders: solving on the CPU",
                e.ctx.summary.name,
                T::PRECISION
            )),
            Some(_) => Err(format!(
                "{} {} does not run on the GPU yet: solving on the CPU",
                variant, opts.method
            )),
            None => Err("no GPU device: solving on the CPU".to_string()),
        };
        let profile_note = match &engine {
            Ok(e) if job.profile && !e.profiling() => {
                Some("this device has no timestamps inside passes: no kernel times".to_string())
            }
            _ => None,
        };
        send(WorkerEvent::RunStarted {
            job: job.id,
            variant,
            device: if engine.is_ok() { "gpu" } else { "cpu" },
            note: engine.as_ref().err().cloned().or(profile_note),
            b_norm,
            progress: rx,
        });
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| match &engine {
            Ok(engine) => solve_gpu(engine, a, &b, None, &opts, &mut monitor),
            Err(_) => cpu::solve(a, &b, None, &opts),
        }));
        let outcome = match result {
            Ok(Ok(sol)) => Ok(RunOutcome {
                x: sol.x.iter().map(|v| v.as_f64()).collect(),
                report: sol.report,
            }),
            Ok(Err(e)) => Err(one_line(&e.to_string())),
            Err(p) => Err(format!("internal error: {}", panic_message(&p))),
        };
        send(WorkerEvent::RunFinished {
            job: job.id,
            variant,
            outcome: Box::new(outcome),
        });
    }
    Ok(())
}
