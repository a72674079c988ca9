//! What the subcommands share: the matrix arguments of `solve` and `spmv`, the value parsers,
//! loading the matrix, opening the GPU, and running generic code in the chosen precision.

use std::path::PathBuf;

use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext};
use krylov_wgpu::matrix::{Csr, generators, market, samples};
use krylov_wgpu::solvers::Method;
use krylov_wgpu::{Precision, Result, Scalar};

/// The problem solved when no matrix is given: 2D Poisson, 5-point stencil, 256×256 grid.
const DEFAULT_PROBLEM: &str = "poisson2d:256";

#[derive(clap::Args, Clone)]
pub struct MatrixArgs {
    /// Matrix Market file (.mtx or .mtx.gz). Without one (and without --generate or
    /// --sample), the embedded default problem `poisson2d:256` is solved.
    pub matrix: Option<PathBuf>,
    /// Generate the matrix instead of reading it, e.g. `poisson2d:512`, `laplace3d:64`,
    /// `convdiff3d:32:circular`, `random-spd:10000:7` (see `--generate help`).
    #[arg(long, conflicts_with = "matrix")]
    pub generate: Option<String>,
    /// One of the real sample matrices built into the binary, e.g. `bcsstk01`, `sherman4`
    /// (`--sample help` lists them with their provenance).
    #[arg(long, conflicts_with_all = ["matrix", "generate"])]
    pub sample: Option<String>,
    /// Precision of the computation: f64, f32, or (solve only) mixed — f32 inner solves
    /// refined by an outer loop in f64 or, on a GPU without f64, double-single.
    #[arg(long, default_value = "f64", value_parser = parse_precision_arg)]
    pub precision: PrecisionArg,
    /// GPU adapter: index from `krylov info` or a name substring (default: $KRYLOV_ADAPTER or the best).
    #[arg(long)]
    pub adapter: Option<String>,
}

impl MatrixArgs {
    /// Reads or generates the matrix (in f64; cast later) and names it.
    pub fn load(&self) -> Result<(Csr<f64>, String)> {
        if let Some(path) = &self.matrix {
            return Ok((
                market::read_matrix_market(path)?,
                path.display().to_string(),
            ));
        }
        if let Some(name) = &self.sample {
            let sample = samples::find(name)?;
            return Ok((sample.matrix()?, format!("sample {}", sample.name)));
        }
        let spec = self.generate.as_deref().unwrap_or(DEFAULT_PROBLEM);
        Ok((generators::from_spec(spec)?, spec.to_string()))
    }
}

pub fn parse_enum<T: std::str::FromStr<Err = String>>(s: &str) -> std::result::Result<T, String> {
    s.parse()
}

pub fn parse_precision(s: &str) -> std::result::Result<Precision, String> {
    s.parse()
}

/// `--precision` of `solve` and `spmv`: one precision, or mixed-precision refinement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrecisionArg {
    Plain(Precision),
    Mixed,
}

impl PrecisionArg {
    /// The precision of the kernels: f32 for `mixed` (its inner solves).
    pub fn working(self) -> Precision {
        match self {
            PrecisionArg::Plain(p) => p,
            PrecisionArg::Mixed => Precision::F32,
        }
    }

    /// The precision of a command that has no `mixed` (an error naming `what` for it).
    pub fn plain(self, what: &str) -> Result<Precision> {
        match self {
            PrecisionArg::Plain(p) => Ok(p),
            PrecisionArg::Mixed => Err(krylov_wgpu::KrylovError::InvalidOption(format!(
                "{what} runs in f32 or f64; --precision mixed is for `krylov solve`"
            ))),
        }
    }
}

pub fn parse_precision_arg(s: &str) -> std::result::Result<PrecisionArg, String> {
    match s {
        "mixed" => Ok(PrecisionArg::Mixed),
        other => other
            .parse()
            .map(PrecisionArg::Plain)
            .map_err(|e: String| format!("{e} (or mixed)")),
    }
}

/// The environment's device request ($KRYLOV_ADAPTER, KRYLOV_REQUIRE_GPU), `--adapter`
/// taking precedence.
pub fn device_request(adapter: &Option<String>) -> DeviceRequest {
    let mut request = DeviceRequest::from_env();
    if adapter.is_some() {
        request.adapter = adapter.clone();
    }
    request
}

/// An engine on the requested GPU, tuned from the environment.
pub fn open_gpu(adapter: &Option<String>) -> Result<Engine> {
    Ok(Engine::with_tuning(
        GpuContext::new(&device_request(adapter))?,
        krylov_wgpu::gpu::Tuning::from_env(),
    ))
}

/// Work written once for both precisions, on a matrix read in f64 (see [`run_in`]).
pub trait MatrixTask {
    type Output;
    fn run<T: Scalar>(self, a: &Csr<T>) -> Result<Self::Output>;
}

/// Runs `task` in `precision`: on `a` itself in f64, on an f32 copy of it in f32.
pub fn run_in<K: MatrixTask>(precision: Precision, a: &Csr<f64>, task: K) -> Result<K::Output> {
    match precision {
        Precision::F32 => task.run(&a.cast::<f32>()?),
        Precision::F64 => task.run(a),
    }
}

/// `--method` of `solve`: a method, or `auto` (CG for a symmetric matrix with a positive
/// diagonal, GMRES otherwise: `solvers::choose_method_for`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodArg {
    Auto,
    Fixed(Method),
}

pub fn parse_method_arg(s: &str) -> std::result::Result<MethodArg, String> {
    match s {
        "auto" => Ok(MethodArg::Auto),
        other => other
            .parse()
            .map(MethodArg::Fixed)
            .map_err(|e: String| format!("{e} (or auto)")),
    }
}

/// `--precond` of `solve`: a preconditioner, or `auto` (none; a solve that stops without
/// converging is solved again with IC(0) for CG or ILUT for GMRES and BiCGStab).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrecondArg {
    Auto,
    Fixed(krylov_wgpu::solvers::Precond),
}

pub fn parse_precond_arg(s: &str) -> std::result::Result<PrecondArg, String> {
    match s {
        "auto" => Ok(PrecondArg::Auto),
        other => other
            .parse()
            .map(PrecondArg::Fixed)
            .map_err(|e: String| format!("{e} (or auto)")),
    }
}
