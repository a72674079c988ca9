//! The solver thread: it owns the library's GPU device and runs solves off the UI thread.
//!
//! Device choice: the worker opens its **own** device with the library's `DeviceChoice`
//! rules (see [`crate::device`]: `auto` by default, honouring `KRYLOV_ADAPTER` and
//! `KRYLOV_REQUIRE_GPU`; the primary backends only) instead of sharing eframe's. That device
//! has every feature the solvers can use (SHADER_F64, SUBGROUP, TIMESTAMP_QUERY) and the
//! adapter's own limits, whatever eframe asked for; long solver submissions never queue in
//! front of the UI's frames; and the app behaves the same in a window and in the headless
//! kittest harness. Without a usable GPU the solves run on the CPU reference, and every
//! report says which device ran it and why ([`solve_on`]).
//!
//! Progress reaches the UI through the library's [`ChannelMonitor`] (one channel per run);
//! the UI polls it every frame. Stop raises the shared cancel flag, which the solvers poll
//! between batches.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use krylov_wgpu::gpu::{ChosenDevice, DeviceList, Engine, GpuContext, Tuning, open_devices_on};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::dist::{DistConfig, solve_dist_with};
use krylov_wgpu::solvers::{
    ChannelMonitor, Method, Progress, SolveOptions, SolveReport, on_gpu, solve_on,
};
use krylov_wgpu::{Precision, Scalar};

use crate::app::RunKind;
use crate::device::{self, DeviceSelection, Opened, panic_text};
use crate::problem::one_line;

/// One solve job: the same system solved once per run kind, in order.
#[derive(Debug, Clone)]
pub struct SolveJob {
    pub id: u64,
    pub matrix: Arc<Csr<f64>>,
    /// The right-hand side shipped with the matrix; `None`: b = A·1 (exact solution all ones).
    pub rhs: Option<Arc<Vec<f64>>>,
    pub kinds: Vec<RunKind>,
    /// Options; each run takes its own from them ([`RunKind::options`]: the variant, or
    /// CA-GMRES's method).
    pub opts: SolveOptions,
    pub precision: Precision,
    /// Time every kernel with GPU timestamps.
    pub profile: bool,
    /// Split the rows over these devices (CG, BiCGStab, GMRES and CA-GMRES; BiCG puts its two
    /// recurrences on two; other runs use the open device and say so); `None`: the open
    /// device alone.
    pub devices: Option<DeviceList>,
    pub cancel: Arc<AtomicBool>,
}

/// What the UI asks of the worker (handled one after another).
#[derive(Debug)]
pub enum Command {
    Job(SolveJob),
    /// Close the device and open `selection`, resolved for `precision`.
    SelectDevice {
        selection: DeviceSelection,
        precision: Precision,
    },
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
    /// A device was opened: a GPU, or the CPU reference (with the reason, and the error when
    /// the selection could not be opened), and the adapters seen.
    Device(Box<Opened>),
    /// A run began; its residuals arrive on `progress`.
    RunStarted {
        job: u64,
        kind: RunKind,
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
        kind: RunKind,
        outcome: Box<Result<RunOutcome, String>>,
    },
    /// Every run of the job is done (or the job failed before any run).
    JobFinished { job: u64, error: Option<String> },
}

/// Handle to the solver thread.
pub struct Worker {
    commands: Option<Sender<Command>>,
    pub events: Receiver<WorkerEvent>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the thread; it opens `selection` (resolved for `precision`) at once and reports
    /// it. `wake` is called after every event (the app passes `egui::Context::request_repaint`).
    pub fn spawn(
        selection: DeviceSelection,
        precision: Precision,
        wake: impl Fn() + Send + 'static,
    ) -> Self {
        let (cmd_tx, cmd_rx) = channel::<Command>();
        let (ev_tx, ev_rx) = channel::<WorkerEvent>();
        let _ = cmd_tx.send(Command::SelectDevice {
            selection,
            precision,
        });
        let thread = std::thread::Builder::new()
            .name("krylov-solver".into())
            .spawn(move || run_worker(cmd_rx, ev_tx, wake))
            .expect("spawn the solver thread");
        Worker {
            commands: Some(cmd_tx),
            events: ev_rx,
            thread: Some(thread),
        }
    }

    fn send(&self, command: Command) -> Result<(), String> {
        self.commands
            .as_ref()
            .ok_or_else(|| "the solver thread has stopped".to_string())?
            .send(command)
            .map_err(|_| "the solver thread has stopped".to_string())
    }

    /// Queues a job (jobs run one after another).
    pub fn submit(&self, job: SolveJob) -> Result<(), String> {
        self.send(Command::Job(job))
    }

    /// Queues a device switch; a [`WorkerEvent::Device`] follows.
    pub fn select_device(
        &self,
        selection: DeviceSelection,
        precision: Precision,
    ) -> Result<(), String> {
        self.send(Command::SelectDevice {
            selection,
            precision,
        })
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the command channel ends the thread's loop; running jobs see their cancel
        // flag (the app raises it before dropping the worker).
        self.commands = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The open device and its engines (built on first use), and the devices of the last
/// distributed job (kept while the list stays the same).
struct Current {
    chosen: ChosenDevice,
    plain: Option<Engine>,
    profiled: Option<Engine>,
    several: Option<(DeviceList, Vec<Arc<GpuContext>>)>,
}

impl Current {
    fn cpu() -> Self {
        Current {
            chosen: ChosenDevice::cpu("no device opened yet"),
            plain: None,
            profiled: None,
            several: None,
        }
    }

    /// The devices of `list` (opened on first use, on the primary backends).
    fn several(&mut self, list: &DeviceList) -> Result<Vec<Arc<GpuContext>>, String> {
        if let Some((l, ctxs)) = &self.several
            && l == list
        {
            return Ok(ctxs.clone());
        }
        let ctxs = open_devices_on(list, device::BACKENDS).map_err(|e| one_line(&e.to_string()))?;
        self.several = Some((list.clone(), ctxs.clone()));
        Ok(ctxs)
    }

    fn engine(&mut self, ctx: &Arc<GpuContext>, profile: bool) -> &Engine {
        let slot = if profile {
            &mut self.profiled
        } else {
            &mut self.plain
        };
        slot.get_or_insert_with(|| {
            Engine::with_tuning(
                ctx.clone(),
                Tuning {
                    profile,
                    ..Default::default()
                },
            )
        })
    }
}

fn run_worker(commands: Receiver<Command>, events: Sender<WorkerEvent>, wake: impl Fn()) {
    let send = |e: WorkerEvent| {
        let _ = events.send(e);
        wake();
    };
    let mut current = Current::cpu();
    while let Ok(command) = commands.recv() {
        match command {
            Command::SelectDevice {
                selection,
                precision,
            } => {
                // Drop the old device before opening the next.
                current = Current::cpu();
                let opened = device::open(selection, precision);
                current.chosen = opened.chosen.clone();
                send(WorkerEvent::Device(Box::new(opened)));
            }
            Command::Job(job) => {
                let error = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    run_job(&job, &mut current, &send)
                }))
                .unwrap_or_else(|p| Err(format!("internal error: {}", panic_text(&p))))
                .err();
                send(WorkerEvent::JobFinished { job: job.id, error });
            }
        }
    }
}

fn run_job(
    job: &SolveJob,
    current: &mut Current,
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
    let b = match &job.rhs {
        Some(rhs) if rhs.len() == a.nrows() => rhs.to_vec(),
        Some(rhs) => {
            return Err(format!(
                "the right-hand side has {} entries, the matrix {} rows",
                rhs.len(),
                a.nrows()
            ));
        }
        // b = A·1, so the exact solution is all ones (as the CLI does).
        None => a
            .mul_vec(&vec![1.0; a.ncols()])
            .map_err(|e| e.to_string())?,
    };
    match job.precision {
        Precision::F64 => run_kinds::<f64>(job, a, &b, current, send),
        Precision::F32 => {
            let a32 = a.cast::<f32>().map_err(|e| e.to_string())?;
            run_kinds::<f32>(job, &a32, &b, current, send)
        }
    }
}

fn run_kinds<T: Scalar>(
    job: &SolveJob,
    a: &Csr<T>,
    b: &[f64],
    current: &mut Current,
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
    for &kind in &job.kinds {
        if job.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let opts = kind.options(&job.opts);
        let (tx, rx) = channel();
        let mut monitor = ChannelMonitor {
            sender: tx,
            cancel: job.cancel.clone(),
        };
        // The chosen GPU runs the job unless it cannot: then the CPU reference, and the
        // report's device_reason (and the run's note) say why.
        // Several devices: the runs the distributed solvers have; the others run on the open
        // device and say so.
        let split = job.devices.as_ref().filter(|_| {
            matches!(
                opts.method,
                Method::Cg | Method::Bicgstab | Method::Gmres | Method::CaGmres | Method::Bicg
            )
        });
        if let Some(list) = split {
            let ctxs = current.several(list)?;
            let note = if opts.method == Method::Bicg {
                "the A- and A^T-recurrences on two devices (paper 004)".to_string()
            } else {
                format!("rows split over {} devices", ctxs.len())
            };
            send(WorkerEvent::RunStarted {
                job: job.id,
                kind,
                device: "gpu",
                note: Some(note),
                b_norm,
                progress: rx,
            });
            let config = DistConfig {
                partition: None,
                tuning: Tuning {
                    profile: job.profile,
                    ..Default::default()
                },
            };
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                solve_dist_with(&ctxs, a, &b, None, &opts, &config, &mut monitor)
            }));
            send(WorkerEvent::RunFinished {
                job: job.id,
                kind,
                outcome: Box::new(outcome(result)),
            });
            continue;
        }
        let ctx = current.chosen.context.clone();
        let (device, note) = match &ctx {
            Some(c) if !c.supports(T::PRECISION) => {
                let why = format!(
                    "{} has no {} shaders: solving on the CPU reference",
                    c.summary.name,
                    T::PRECISION
                );
                (ChosenDevice::cpu(why.clone()), Some(why))
            }
            Some(_) if !on_gpu(opts.method, opts.variant) => {
                let why = format!(
                    "{} does not run on the GPU yet: solving on the CPU reference",
                    kind.title(opts.method)
                );
                (ChosenDevice::cpu(why.clone()), Some(why))
            }
            _ => (current.chosen.clone(), None),
        };
        let engine = match (&device.context, &ctx) {
            (Some(_), Some(c)) => Some(current.engine(c, job.profile)),
            _ => None,
        };
        let note = match engine {
            Some(e) if job.profile && !e.profiling() => {
                Some("this device has no timestamps inside passes: no kernel times".to_string())
            }
            _ => note,
        };
        let note = match (&job.devices, note) {
            (Some(_), None) => Some(format!(
                "{} runs on one device (several devices run CG, BiCGStab, GMRES, CA-GMRES and BiCG)",
                kind.title(opts.method)
            )),
            (_, note) => note,
        };
        send(WorkerEvent::RunStarted {
            job: job.id,
            kind,
            device: if device.info.is_gpu() { "gpu" } else { "cpu" },
            note,
            b_norm,
            progress: rx,
        });
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
            solve_on(&device, engine, a, &b, None, &opts, &mut monitor)
        }));
        send(WorkerEvent::RunFinished {
            job: job.id,
            kind,
            outcome: Box::new(outcome(result)),
        });
    }
    Ok(())
}

/// A run's outcome from what its solve returned (or how it panicked).
fn outcome<T: Scalar>(
    result: std::thread::Result<krylov_wgpu::Result<krylov_wgpu::solvers::Solution<T>>>,
) -> Result<RunOutcome, String> {
    match result {
        Ok(Ok(sol)) => Ok(RunOutcome {
            x: sol.x.iter().map(|v| v.as_f64()).collect(),
            report: sol.report,
        }),
        Ok(Err(e)) => Err(one_line(&e.to_string())),
        Err(p) => Err(format!("internal error: {}", panic_text(&p))),
    }
}
