//! `krylov calibrate` and `krylov predict`: the command-line side of
//! [`krylov_wgpu::model`], and the profile lookup `krylov solve` shares.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use krylov_wgpu::gpu::{GpuContext, Tuning};
use krylov_wgpu::model::kernels::Shape;
use krylov_wgpu::model::{
    CalibrateOptions, DeviceIdentity, PredictRequest, Prediction, Profile, ProfileError, calibrate,
    default_profile_path, device_identity, predict,
};
use krylov_wgpu::solvers::{CheckMode, Method, Variant};
use krylov_wgpu::{KrylovError, Precision, Result};

use crate::args::{MatrixArgs, PrecisionArg, device_request, parse_enum, parse_precision};

#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// Fewer and smaller sizes (seconds on a software adapter).
    #[arg(long)]
    quick: bool,
    /// Write the profile here instead of the cache directory ($KRYLOV_PROFILE_DIR or the
    /// user's cache directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the profile as JSON.
    #[arg(long)]
    json: bool,
    /// GPU adapter: index from `krylov info` or a name substring.
    #[arg(long)]
    adapter: Option<String>,
}

#[derive(clap::Args)]
pub struct PredictArgs {
    /// Matrix Market file (.mtx or .mtx.gz); or --generate / --sample.
    matrix: Option<PathBuf>,
    /// Generate the matrix, e.g. `poisson2d:512` (see `krylov solve --generate help`).
    #[arg(long, conflicts_with = "matrix")]
    generate: Option<String>,
    /// One of the sample matrices built into the binary.
    #[arg(long, conflicts_with_all = ["matrix", "generate"])]
    sample: Option<String>,
    /// Precisions to rank, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "f32,f64", value_parser = parse_precision)]
    precision: Vec<Precision>,
    /// Only this method (cg or bicgstab); default both.
    #[arg(long, value_parser = parse_enum::<Method>)]
    method: Option<Method>,
    /// Convergence-check mode the solve will run in.
    #[arg(long, default_value = "device", value_parser = parse_enum::<CheckMode>)]
    check_mode: CheckMode,
    /// Iterations per submit in device mode (one round trip per batch).
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// GMRES's restart length m (its kernels read the basis: a step's cost grows with m).
    #[arg(long, default_value_t = 30)]
    restart: usize,
    /// Iterations of the "time for N iterations" column.
    #[arg(long, default_value_t = 1000)]
    iterations: usize,
    /// Most stored entries per non-zero a format may use.
    #[arg(long, default_value_t = krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET)]
    max_padding: f64,
    /// Device profile to use (default: this device's profile in the cache directory). An
    /// explicit profile may be another device's: no GPU is opened then.
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Print the first N rows only (0: all).
    #[arg(long, default_value_t = 0)]
    top: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[arg(long)]
    adapter: Option<String>,
}

fn profile_error(e: ProfileError) -> KrylovError {
    KrylovError::InvalidOption(e.to_string())
}

/// Where this device's profile lives by default.
fn default_path(device: &DeviceIdentity) -> Result<PathBuf> {
    default_profile_path(device).ok_or_else(|| {
        KrylovError::InvalidOption(
            "no cache directory for device profiles: set KRYLOV_PROFILE_DIR or pass --out/--profile"
                .into(),
        )
    })
}

pub fn run_calibrate(args: &CalibrateArgs) -> Result<ExitCode> {
    let ctx = GpuContext::new(&device_request(&args.adapter))?;
    let tuning = Tuning {
        profile: true,
        ..Tuning::default()
    };
    let engine = krylov_wgpu::gpu::Engine::with_tuning(ctx, tuning);
    let device = device_identity(engine.context());
    eprintln!(
        "calibrating {device}{}",
        if args.quick { " (quick)" } else { "" }
    );
    let profile = calibrate(
        &engine,
        CalibrateOptions { quick: args.quick },
        &mut |line| eprintln!("  {line}"),
    )?;
    let path = match &args.out {
        Some(p) => p.clone(),
        None => default_path(&device)?,
    };
    profile.save(&path).map_err(profile_error)?;
    if args.json {
        let mut v = serde_json::to_value(&profile).expect("serialisable");
        v["path"] = path.display().to_string().into();
        println!("{v}");
    } else {
        println!("profile written to {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The profile `solve` and `predict` use: `explicit` (any device when `current` is `None`),
/// else this device's default one. `Ok(None)`: no default profile exists.
pub fn find_profile(
    explicit: Option<&Path>,
    current: Option<&DeviceIdentity>,
) -> std::result::Result<Option<(Profile, PathBuf)>, ProfileError> {
    if let Some(path) = explicit {
        let p = match current {
            Some(dev) => Profile::load_for(path, dev)?,
            None => Profile::load(path)?,
        };
        return Ok(Some((p, path.to_path_buf())));
    }
    let Some(dev) = current else { return Ok(None) };
    let Some(path) = default_profile_path(dev) else {
        return Ok(None);
    };
    match Profile::load_for(&path, dev) {
        Ok(p) => Ok(Some((p, path))),
        Err(ProfileError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

pub fn run_predict(args: &PredictArgs) -> Result<ExitCode> {
    let margs = MatrixArgs {
        matrix: args.matrix.clone(),
        generate: args.generate.clone(),
        sample: args.sample.clone(),
        precision: PrecisionArg::Plain(Precision::F64),
        adapter: args.adapter.clone(),
    };
    let (a, name) = margs.load()?;
    let current = if args.profile.is_some() {
        None
    } else {
        Some(device_identity(&*GpuContext::new(&device_request(
            &args.adapter,
        ))?))
    };
    let (profile, path) = match find_profile(args.profile.as_deref(), current.as_ref()) {
        Ok(Some(found)) => found,
        Ok(None) => {
            let dev = current.expect("no explicit profile");
            return Err(profile_error(ProfileError::NotFound(default_path(&dev)?)));
        }
        Err(e) => return Err(profile_error(e)),
    };
    let req = PredictRequest {
        precisions: args.precision.clone(),
        shape: Shape {
            batch: args.batch.max(1),
            restart: args.restart.max(1),
        },
        iterations: args.iterations,
        ..PredictRequest::all(args.method, args.check_mode, args.max_padding)
    };
    let mut preds = predict(&profile, &a, &req);
    if args.top > 0 {
        preds.truncate(args.top);
    }
    if args.json {
        let v = serde_json::json!({
            "matrix": name,
            "n": a.nrows(),
            "nnz": a.nnz(),
            "profile": path.display().to_string(),
            "device": profile.device,
            "created": profile.created,
            "predictions": preds,
        });
        println!("{v}");
    } else {
        println!(
            "{name}: n = {}, nnz = {}; profile of {} ({})",
            a.nrows(),
            a.nnz(),
            profile.device.name,
            profile.created
        );
        println!("{}", table_header(args.iterations));
        for (i, p) in preds.iter().enumerate() {
            println!("{}", table_row(i + 1, p));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn table_header(iterations: usize) -> String {
    format!(
        "{:>4} {:<6} {:<4} {:<9} {:<10} {:>10} {:>12} {:>7} {:>11} {:>11}",
        "rank",
        "format",
        "prec",
        "method",
        "variant",
        "µs/iter",
        format!("s/{iterations} it"),
        "disp/it",
        "bytes/it",
        "spmv bytes"
    )
}

fn table_row(rank: usize, p: &Prediction) -> String {
    let head = format!(
        "{rank:>4} {:<6} {:<4} {:<9} {:<10}",
        p.format.as_str(),
        p.precision.wgsl(),
        p.method.as_str(),
        p.variant.as_str()
    );
    match &p.refused {
        Some(why) => format!("{head} refused: {why}"),
        None => format!(
            "{head} {:>10.2} {:>12.4} {:>7.2} {:>11.0} {:>11}",
            p.seconds_per_iteration * 1e6,
            p.seconds_for_iterations,
            p.dispatches_per_iteration,
            p.bytes_per_iteration,
            p.spmv_bytes
        ),
    }
}

/// `--variant` of `solve`: a variant, or `auto` (the model's choice with a profile,
/// pipelined without).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariantArg {
    Auto,
    Fixed(krylov_wgpu::solvers::Variant),
}

pub fn parse_variant_arg(s: &str) -> std::result::Result<VariantArg, String> {
    match s {
        "auto" => Ok(VariantArg::Auto),
        other => other
            .parse()
            .map(VariantArg::Fixed)
            .map_err(|e: String| format!("{e} (or auto)")),
    }
}

/// What the model decided for a solve, to be shown in its report.
pub struct ModelDecision {
    pub choice: krylov_wgpu::model::ModelChoice,
    pub profile: PathBuf,
    pub format_auto: bool,
    pub variant_auto: bool,
    /// The profile predicts the fused variant (a profile calibrated before the model
    /// described fused CG does not: then the variant rule decides between fused and
    /// pipelined).
    pub predicts_fused: bool,
    /// The profile is a quick calibration: it keeps no loop residuals, the term that prices
    /// a loop's launches beyond its kernels (on lavapipe ~80 µs per launch that a quick
    /// profile does not see), so it cannot weigh fused CG's one launch against pipelined
    /// CG's two: the variant rule decides between them.
    pub quick_profile: bool,
}

impl ModelDecision {
    /// Writes the decision into the report: the format reason (`auto: model …`) and a note
    /// for the variant.
    pub fn annotate(&self, report: &mut krylov_wgpu::solvers::SolveReport) {
        if self.format_auto {
            report.format_reason = format!("auto: {}", self.choice.reason);
        }
        if self.variant_auto {
            report.notes.push(format!(
                "variant auto: {} ({})",
                self.choice.variant, self.choice.reason
            ));
        }
    }

    /// The JSON report's model fields.
    pub fn json(&self, report: &krylov_wgpu::solvers::SolveReport) -> serde_json::Value {
        let measured = if report.iterations_recorded > 0 {
            serde_json::json!(report.loop_seconds / report.iterations_recorded as f64)
        } else {
            serde_json::Value::Null
        };
        serde_json::json!({
            "predicted_seconds_per_iteration": self.choice.predicted_seconds_per_iteration,
            "measured_seconds_per_iteration": measured,
            "model_choice": {
                "format": self.choice.format,
                "variant": self.choice.variant,
                "reason": self.choice.reason,
                "profile": self.profile.display().to_string(),
            },
        })
    }
}

/// The inputs of the model's choice for one solve.
pub struct AutoRequest<'a> {
    pub explicit_profile: Option<&'a Path>,
    pub device: Option<&'a GpuContext>,
    pub method: Method,
    /// No preconditioner: the model has none (with one, the rules decide).
    pub unpreconditioned: bool,
    /// The format given (`Auto` for the model's choice).
    pub format: krylov_wgpu::solvers::Format,
    /// The variant given, `None` for auto.
    pub variant: Option<krylov_wgpu::solvers::Variant>,
    pub precision: Precision,
    /// `--precision mixed`: its reliable updates are written for pipelined CG, so the fused
    /// variant is no candidate.
    pub mixed: bool,
    pub check_mode: CheckMode,
    pub batch: usize,
    /// GMRES's restart length.
    pub restart: usize,
    pub max_padding: f64,
}

/// The model's choice of format and/or variant for a solve on `a`, when a profile exists
/// and the solve is one the model covers (GPU, CG, BiCGStab or GMRES, no preconditioner; `Ok(None)`
/// otherwise: the rules decide). A default profile that cannot be used is a
/// warning on stderr and the rules; an explicit `--profile` that cannot be used is an error.
pub fn auto_choice(
    a: &krylov_wgpu::matrix::Csr<f64>,
    req: &AutoRequest<'_>,
) -> Result<Option<ModelDecision>> {
    let variant_auto = req.variant.is_none();
    let format_auto = req.format == krylov_wgpu::solvers::Format::Auto;
    if !format_auto && !variant_auto {
        return Ok(None);
    }
    let Some(ctx) = req.device.filter(|_| req.unpreconditioned) else {
        return Ok(None);
    };
    let current = device_identity(ctx);
    let (profile, path) = match find_profile(req.explicit_profile, Some(&current)) {
        Ok(Some(found)) => found,
        Ok(None) => return Ok(None),
        Err(e) if req.explicit_profile.is_some() => return Err(profile_error(e)),
        Err(e) => {
            eprintln!("warning: {e}; choosing by the rules");
            return Ok(None);
        }
    };
    let modelled = krylov_wgpu::model::kernels::MODELLED;
    let variants: Vec<_> = modelled
        .iter()
        .copied()
        .filter(|(m, v)| *m == req.method && req.variant.is_none_or(|x| x == *v))
        .filter(|(_, v)| !(req.mixed && req.variant.is_none() && *v == Variant::Fused))
        .collect();
    if variants.is_empty() {
        return Ok(None);
    }
    let formats = if format_auto {
        krylov_wgpu::model::MODEL_FORMATS.to_vec()
    } else {
        vec![req.format]
    };
    let request = PredictRequest {
        formats,
        precisions: vec![req.precision],
        variants,
        check_mode: req.check_mode,
        shape: Shape {
            batch: if req.batch == 0 { 32 } else { req.batch },
            restart: req.restart.max(1),
        },
        iterations: 1,
        max_padding: req.max_padding,
    };
    let preds = predict(&profile, a, &request);
    let predicts_fused = preds
        .iter()
        .any(|p| p.variant == Variant::Fused && p.refused.is_none());
    // Formats predicted within the model's error of the fastest are a tie: the statistics
    // rule (what `--format auto` does without a profile) decides among them.
    let choice = if format_auto {
        let target = krylov_wgpu::gpu::RuleTarget::of(ctx);
        let rule = krylov_wgpu::gpu::choose_format_for(a, req.max_padding, target).format;
        krylov_wgpu::model::predict::best_or_rule(&preds, &profile, rule)
    } else {
        krylov_wgpu::model::best(&preds, &profile)
    };
    Ok(choice.map(|choice| ModelDecision {
        choice,
        profile: path,
        format_auto,
        variant_auto,
        predicts_fused,
        quick_profile: profile.quick,
    }))
}
