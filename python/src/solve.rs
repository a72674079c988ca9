//! `_native.solve`: one solve of a [`NativeMatrix`] on the device the options choose, with
//! the GIL released, and `_native.devices`.
//!
//! Devices are opened once per process and kept (adapter enumeration and device creation
//! cost far more than a small solve), one [`Session`] for each distinct device request; a
//! session's engine also keeps the compiled kernels. Solves on one session run one at a time.

use std::sync::{Arc, Mutex};

use krylov_wgpu::gpu::{
    ChosenDevice, DeviceChoice, DeviceList, DevicePreference, Engine, Tuning, open_devices,
};
use krylov_wgpu::solvers::dist::{DistConfig, solve_dist_with};
use krylov_wgpu::solvers::{
    self, KeptUploads, Method, OuterPrecision, Precond, RefineOptions, SolveOptions, SolveReport,
    mixed,
};
use krylov_wgpu::{KrylovError, Precision, Result, Scalar};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{IntoPy, invalid_option};
use crate::matrix::{NativeMatrix, vector};
use crate::monitor::PyMonitor;
use crate::precond_auto::{self, Solved};
use krylov_wgpu::solvers::Monitor;

/// What a solve computes in: one precision, or f32 solves refined to f64 accuracy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SolvePrecision {
    Plain(Precision),
    Mixed,
}

impl SolvePrecision {
    fn parse(s: &str) -> PyResult<Self> {
        match s {
            "f64" | "float64" | "double" => Ok(Self::Plain(Precision::F64)),
            "f32" | "float32" | "single" => Ok(Self::Plain(Precision::F32)),
            "mixed" => Ok(Self::Mixed),
            other => Err(invalid_option(format!(
                "precision `{other}`: expected f64, f32 or mixed"
            ))),
        }
    }

    /// The precision of the kernels (the inner solves' for mixed).
    fn kernels(self) -> Precision {
        match self {
            Self::Plain(p) => p,
            Self::Mixed => Precision::F32,
        }
    }
}

/// Everything that decides which device a solve gets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeviceKey {
    pub(crate) preference: DevicePreference,
    pub(crate) adapter: Option<String>,
    pub(crate) precision: Precision,
    pub(crate) allow_mixed: bool,
    pub(crate) no_f64: bool,
    pub(crate) cpu_only: Option<String>,
}

/// An opened device (or the CPU reference) and its engine, kept for the process.
pub(crate) struct Session {
    id: usize,
    key: DeviceKey,
    pub(crate) device: ChosenDevice,
    pub(crate) engine: Option<Engine>,
    /// Why an f64 request runs mixed refinement here (`allow_mixed`), for the report.
    mixed_because: Option<String>,
    /// Held while a solve runs: the engine's counters must see one solve at a time.
    pub(crate) busy: Mutex<()>,
}

static SESSIONS: Mutex<Vec<Arc<Session>>> = Mutex::new(Vec::new());

/// The session for `key`, opened now if no earlier solve opened it.
pub(crate) fn session(key: DeviceKey) -> Result<Arc<Session>> {
    let mut sessions = SESSIONS
        .lock()
        .map_err(|_| KrylovError::Gpu("device table poisoned".into()))?;
    if let Some(s) = sessions.iter().find(|s| s.key == key) {
        return Ok(s.clone());
    }
    let choice = DeviceChoice::from_env(key.preference)
        .adapter(key.adapter.clone())
        .precision(key.precision)
        .without_f64(key.no_f64)
        .cpu_only(key.cpu_only.clone());
    let (device, mixed_because) = if key.allow_mixed {
        choice.resolve_allowing_mixed()?
    } else {
        (choice.resolve()?, None)
    };
    let engine = device
        .context
        .as_ref()
        .map(|ctx| Engine::with_tuning(ctx.clone(), Tuning::from_env()));
    let s = Arc::new(Session {
        id: sessions.len(),
        key,
        device,
        engine,
        mixed_because,
        busy: Mutex::new(()),
    });
    sessions.push(s.clone());
    Ok(s)
}

pub(crate) fn get<'py, T: FromPyObjectOwned<'py>>(
    options: &Bound<'py, PyDict>,
    key: &str,
    default: T,
) -> PyResult<T> {
    match options.get_item(key)? {
        Some(v) if !v.is_none() => v
            .extract()
            .map_err(|e| invalid_option(format!("{key}: {}", Into::<PyErr>::into(e)))),
        _ => Ok(default),
    }
}

use pyo3::conversion::FromPyObjectOwned;

pub(crate) fn parsed<T: std::str::FromStr<Err = String>>(
    options: &Bound<'_, PyDict>,
    key: &str,
    default: &str,
) -> PyResult<T> {
    let s: String = get(options, key, default.to_string())?;
    s.parse()
        .map_err(|e: String| invalid_option(format!("{key}: {e}")))
}

/// The option names `solve` knows (anything else is a typo, refused).
const KNOWN: &[&str] = &[
    "method",
    "variant",
    "precision",
    "device",
    "adapter",
    "rtol",
    "atol",
    "maxiter",
    "restart",
    "s_step",
    "tsqr",
    "basis",
    "precond",
    "side",
    "trisolve",
    "reorder",
    "equilibrate",
    "gs",
    "check_mode",
    "batch",
    "format",
    "max_padding",
    "reduction",
    "no_f64",
    "allow_mixed",
    "inner_rtol",
    "max_outer",
    "outer_precision",
    "refinement",
    "devices",
    // kw.gmres's limit when `maxiter` is not given (SciPy's 10·n restart cycles); a limit
    // passed here is the default, not the user's (`precond="auto"` still retries at it).
    "_maxiter_default",
];

/// Refuses an option name not in `known` (a typo), listing the known ones.
pub(crate) fn check_known(options: &Bound<'_, PyDict>, known: &[&str]) -> PyResult<()> {
    for key in options.keys() {
        let key: String = key.extract()?;
        if !known.contains(&key.as_str()) {
            let public: Vec<&str> = known
                .iter()
                .copied()
                .filter(|k| !k.starts_with('_'))
                .collect();
            return Err(invalid_option(format!(
                "unknown option `{key}` (known: {})",
                public.join(", ")
            )));
        }
    }
    Ok(())
}

/// The solve's options, refinement options and device request from the Python dict.
/// `method="auto"`: CG for a symmetric matrix with a positive diagonal, GMRES otherwise
/// (`solvers::choose_method_for`), and the note that says so.
fn method_option(
    options: &Bound<'_, PyDict>,
    matrix: &NativeMatrix,
) -> PyResult<(Method, Option<String>)> {
    let name: String = get(options, "method", "auto".to_string())?;
    if name != "auto" {
        let method = name
            .parse()
            .map_err(|e: String| invalid_option(format!("method: {e} (or auto)")))?;
        return Ok((method, None));
    }
    let choice = if matrix.symmetric() {
        solvers::choose_method_for(&matrix.a64)
    } else {
        solvers::MethodChoice {
            method: Method::Gmres,
            reason: "A is not symmetric: GMRES".into(),
        }
    };
    Ok((
        choice.method,
        Some(format!("method auto: {}", choice.reason)),
    ))
}

/// The `precond` option: a preconditioner, or `auto` (none, and `precond_auto`'s retry).
fn precond_option(options: &Bound<'_, PyDict>) -> PyResult<(Precond, bool)> {
    let name: String = get(options, "precond", "none".to_string())?;
    if name == "auto" {
        return Ok((Precond::None, true));
    }
    let precond = name
        .parse()
        .map_err(|e: String| invalid_option(format!("precond: {e} (or auto)")))?;
    Ok((precond, false))
}

fn options(
    options: &Bound<'_, PyDict>,
    n: usize,
    method: Method,
) -> PyResult<(SolveOptions, RefineOptions, SolvePrecision, DeviceKey)> {
    let d = SolveOptions::default();
    let default_max_iter = get(options, "_maxiter_default", 10 * n.max(1))?;
    let opts = SolveOptions {
        method,
        variant: parsed(options, "variant", "pipelined")?,
        rtol: get(options, "rtol", 1e-5)?,
        atol: get(options, "atol", 0.0)?,
        max_iter: get(options, "maxiter", default_max_iter)?,
        restart: get(options, "restart", d.restart)?,
        s_step: get(options, "s_step", d.s_step)?,
        tsqr: parsed(options, "tsqr", d.tsqr.as_str())?,
        basis: parsed(options, "basis", d.basis.as_str())?,
        precond: precond_option(options)?.0,
        side: parsed(options, "side", "right")?,
        trisolve: parsed(options, "trisolve", "auto")?,
        reorder: parsed(options, "reorder", "auto")?,
        gs: parsed(options, "gs", "cgs")?,
        check_mode: parsed(options, "check_mode", "device")?,
        batch: get(options, "batch", 0)?,
        format: parsed(options, "format", "auto")?,
        max_padding: get(options, "max_padding", d.max_padding)?,
        reduction: parsed(options, "reduction", "plain")?,
        equilibrate: get(options, "equilibrate", false)?,
    };
    let r = RefineOptions::default();
    let refine = RefineOptions {
        inner_rtol: get(options, "inner_rtol", r.inner_rtol)?,
        max_outer: get(options, "max_outer", r.max_outer)?,
        outer: parsed::<OuterPrecision>(options, "outer_precision", "auto")?,
        refinement: parsed(options, "refinement", "auto")?,
    };
    let precision = SolvePrecision::parse(&get(options, "precision", "f64".to_string())?)?;
    let key = DeviceKey {
        preference: parsed(options, "device", "auto")?,
        adapter: get(options, "adapter", None)?,
        precision: precision.kernels(),
        allow_mixed: get(options, "allow_mixed", false)?
            && precision == SolvePrecision::Plain(Precision::F64),
        no_f64: get(options, "no_f64", false)?,
        cpu_only: (!solvers::on_gpu(opts.method, opts.variant))
            .then(|| format!("{} does not run on the GPU yet", opts.method)),
    };
    Ok((opts, refine, precision, key))
}

/// Solves A x = b; returns x (float64, or float32 for an f32 solve) and the report as the
/// CLI's JSON (with `residual_inf`, ‖b − Ax‖∞ of the returned x in f64). The GIL is released
/// while the solve runs; on a GPU `callback(residual_norm)` is called after each iteration
/// as the residuals reach the host (the CPU reference's are replayed by the Python side);
/// Ctrl-C cancels the solve and raises KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (matrix, b, x0, options, callback = None))]
pub fn solve<'py>(
    py: Python<'py>,
    matrix: &NativeMatrix,
    b: &Bound<'py, PyAny>,
    x0: Option<&Bound<'py, PyAny>>,
    options: &Bound<'py, PyDict>,
    callback: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    check_known(options, KNOWN)?;
    let (method, method_note) = method_option(options, matrix)?;
    let (opts, refine, precision, key) = self::options(options, matrix.a64.nrows(), method)?;
    let devices = devices_option(options)?;
    // `precond="auto"` where the CLI's `--precond auto` retries: one device, not mixed
    // precision, no `maxiter` given (a limit the user set is kept).
    let maxiter_given = options.get_item("maxiter")?.is_some_and(|v| !v.is_none());
    let precond_auto = precond_option(options)?.1 && !maxiter_given && devices.is_none();
    let b = vector(b, "b")?;
    let x0 = x0.map(|x| vector(x, "x0")).transpose()?;
    let monitor = PyMonitor::new(callback);
    let auto = method_note.is_some();
    let run = if let Some(list) = devices {
        let (monitor, b) = (monitor.clone(), &b);
        py.detach(move || {
            let watch = monitor.clone();
            krylov_wgpu::cpu::cancellable(
                move || watch.cancelled(),
                || run_on_devices(matrix, b, x0.as_deref(), &opts, precision, &list, monitor),
            )
        })
    } else {
        let (monitor, b) = (monitor.clone(), &b);
        py.detach(move || -> Result<Solved> {
            let session = session(key)?;
            let _busy = session.busy.lock();
            let kept = take_kept(matrix, session.id);
            let scope = solvers::reuse_uploads_from(kept);
            let watch = monitor.clone();
            let out = krylov_wgpu::cpu::cancellable(
                move || watch.cancelled(),
                || {
                    let solve = |opts: &SolveOptions, monitor: &mut dyn Monitor| {
                        run_solve(
                            &session,
                            matrix,
                            b,
                            x0.as_deref(),
                            opts,
                            &refine,
                            precision,
                            monitor,
                        )
                    };
                    // Mixed refinement (asked for, or on a device without f64 with
                    // `allow_mixed`) retries unwatched, as in the CLI.
                    let guard =
                        precision != SolvePrecision::Mixed && session.mixed_because.is_none();
                    let run = |opts: &SolveOptions| {
                        precond_auto::solve(opts, precond_auto, guard, &monitor, &solve)
                    };
                    let first = run(&opts)?;
                    // `auto` took CG and CG found A indefinite: GMRES takes it.
                    if auto
                        && opts.method == Method::Cg
                        && matches!(first.2.reason, solvers::StopReason::NotSpd)
                    {
                        let gmres = SolveOptions {
                            method: Method::Gmres,
                            ..opts.clone()
                        };
                        let (x, x32, mut report) = run(&gmres)?;
                        report.notes.insert(
                            0,
                            format!(
                                "method auto: CG found <p, Ap> <= 0 at iteration {} ({:.3} \
                                 s; A is not positive definite): solved again with GMRES",
                                first.2.iterations, first.2.seconds
                            ),
                        );
                        return Ok((x, x32, report));
                    }
                    Ok(first)
                },
            );
            put_kept(matrix, session.id, scope.keep());
            out
        })
    };
    if let Some(e) = monitor.take_error() {
        return Err(e);
    }
    let (x64, x32, mut report) = run.py()?;
    report.notes.splice(0..0, method_note);
    let residual_inf = matrix.a64.residual_inf(&b, &x64).py()?;
    let mut json = serde_json::to_value(&report).map_err(|e| invalid_option(e.to_string()))?;
    json["residual_inf"] =
        serde_json::Number::from_f64(residual_inf).map_or(serde_json::Value::Null, Into::into);
    let x = match x32 {
        Some(x) => x.into_pyarray(py).into_any(),
        None => x64.into_pyarray(py).into_any(),
    };
    Ok((x, json.to_string()))
}

fn take_kept(matrix: &NativeMatrix, session: usize) -> KeptUploads {
    let mut kept = matrix.kept.lock().unwrap_or_else(|p| p.into_inner());
    match kept.iter().position(|(id, _)| *id == session) {
        Some(i) => kept.swap_remove(i).1,
        None => solvers::reuse_uploads().keep(),
    }
}

fn put_kept(matrix: &NativeMatrix, session: usize, uploads: KeptUploads) {
    let mut kept = matrix.kept.lock().unwrap_or_else(|p| p.into_inner());
    kept.push((session, uploads));
}

/// The solve itself, on the session's device, in the requested precision.
#[allow(clippy::too_many_arguments)]
fn run_solve(
    session: &Session,
    matrix: &NativeMatrix,
    b: &[f64],
    x0: Option<&[f64]>,
    opts: &SolveOptions,
    refine: &RefineOptions,
    precision: SolvePrecision,
    monitor: &mut dyn Monitor,
) -> Result<Solved> {
    let (device, engine) = (&session.device, session.engine.as_ref());
    // The GPU CG checks symmetry itself; the CPU reference would run and fail later. The
    // input checks come first, so a non-square A or a wrong b says so.
    krylov_wgpu::matrix::validate_system(&matrix.a64, b, opts)?;
    if opts.method == Method::Cg && engine.is_none() && !matrix.symmetric() {
        return Err(KrylovError::MethodMismatch(
            "cg needs a symmetric positive definite matrix and this one is not symmetric; use \
             bicgstab or gmres"
                .into(),
        ));
    }
    if precision == SolvePrecision::Mixed || session.mixed_because.is_some() {
        let mut sol = mixed::solve_on(device, engine, &matrix.a64, b, x0, opts, refine, monitor)?;
        if let Some(why) = &session.mixed_because {
            sol.report.notes.insert(0, why.clone());
        }
        return Ok((sol.x, None, sol.report));
    }
    match precision.kernels() {
        Precision::F64 => {
            let sol = solvers::solve_on(device, engine, &matrix.a64, b, x0, opts, monitor)?;
            Ok((sol.x, None, sol.report))
        }
        Precision::F32 => {
            let a = matrix.a32()?;
            let b32 = cast(b, "right-hand side after conversion to f32")?;
            let x032 = x0
                .map(|x| cast(x, "x0 after conversion to f32"))
                .transpose()?;
            let sol = solvers::solve_on(device, engine, a, &b32, x032.as_deref(), opts, monitor)?;
            let x64 = sol.x.iter().map(|&v| f64::from(v)).collect();
            Ok((x64, Some(sol.x), sol.report))
        }
    }
}

/// The `devices` option: `None`, a count, a string (`"2"`, `"0,1"`) or a list of adapter
/// indices.
fn devices_option(options: &Bound<'_, PyDict>) -> PyResult<Option<DeviceList>> {
    let Some(v) = options.get_item("devices")?.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let bad = |e: String| invalid_option(format!("devices: {e}"));
    if let Ok(k) = v.extract::<usize>() {
        return k.to_string().parse().map(Some).map_err(bad);
    }
    if let Ok(text) = v.extract::<String>() {
        return text.parse().map(Some).map_err(bad);
    }
    match v.extract::<Vec<usize>>() {
        Ok(list) if !list.is_empty() => Ok(Some(DeviceList::Indices(list))),
        _ => Err(bad(
            "a count, a string like \"0,1\" or a list of adapter indices".into(),
        )),
    }
}

/// A solve split over several devices (`devices=`): CG, BiCGStab, GMRES or CA-GMRES, one row block per
/// device, or BiCG with its A- and Aᵀ-recurrences on two devices.
fn run_on_devices(
    matrix: &NativeMatrix,
    b: &[f64],
    x0: Option<&[f64]>,
    opts: &SolveOptions,
    precision: SolvePrecision,
    list: &DeviceList,
    mut monitor: PyMonitor,
) -> Result<(Vec<f64>, Option<Vec<f32>>, SolveReport)> {
    let SolvePrecision::Plain(p) = precision else {
        return Err(KrylovError::InvalidOption(
            "devices= runs in f32 or f64, not precision=\"mixed\"".into(),
        ));
    };
    let contexts = open_devices(list)?;
    let config = DistConfig::default();
    match p {
        Precision::F64 => {
            let sol = solve_dist_with(&contexts, &matrix.a64, b, x0, opts, &config, &mut monitor)?;
            Ok((sol.x, None, sol.report))
        }
        Precision::F32 => {
            let a = matrix.a32()?;
            let b32 = cast(b, "right-hand side after conversion to f32")?;
            let x032 = x0
                .map(|x| cast(x, "x0 after conversion to f32"))
                .transpose()?;
            let sol = solve_dist_with(
                &contexts,
                a,
                &b32,
                x032.as_deref(),
                opts,
                &config,
                &mut monitor,
            )?;
            let x64 = sol.x.iter().map(|&v| f64::from(v)).collect();
            Ok((x64, Some(sol.x), sol.report))
        }
    }
}

/// `v` in f32, refusing values that overflow it.
fn cast(v: &[f64], what: &'static str) -> Result<Vec<f32>> {
    let out: Vec<f32> = v.iter().map(|&x| f32::from_f64(x)).collect();
    match out.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(KrylovError::NonFinite { what, index }),
        None => Ok(out),
    }
}

/// The adapters the library sees, ranked, as JSON (one object per adapter), and auto's pick
/// for f64 and f32 with its reason.
#[pyfunction]
pub fn devices(py: Python<'_>) -> PyResult<String> {
    py.detach(|| -> Result<String> {
        let adapters = krylov_wgpu::gpu::list_adapters();
        let pick = |precision| -> serde_json::Value {
            match DeviceChoice::from_env(DevicePreference::Auto)
                .precision(precision)
                .plan(&adapters)
            {
                Ok(plan) => serde_json::json!({
                    "gpu": match &plan {
                        krylov_wgpu::gpu::DevicePlan::Gpu { index, .. } => serde_json::json!(index),
                        krylov_wgpu::gpu::DevicePlan::Cpu { .. } => serde_json::Value::Null,
                    },
                    "reason": plan.reason(),
                }),
                Err(e) => serde_json::json!({ "gpu": null, "reason": e.to_string() }),
            }
        };
        let out = serde_json::json!({
            "adapters": adapters,
            "auto_f64": pick(Precision::F64),
            "auto_f32": pick(Precision::F32),
        });
        Ok(out.to_string())
    })
    .py()
}
