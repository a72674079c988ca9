//! `krylov solve`: A x = b on the chosen device, the report as text or JSON, the solution
//! and the residual history written on request.

use std::path::PathBuf;
use std::process::ExitCode;

use krylov_wgpu::bench::Heaters;
use krylov_wgpu::gpu::{ChosenDevice, DeviceChoice, DevicePreference, Engine};
use krylov_wgpu::matrix::{Csr, market, samples};
use krylov_wgpu::solvers::{
    Basis, CheckMode, Format, GramSchmidt, Method, Monitor, OuterPrecision, Precond, Reduction,
    RefineOptions, Refinement, Reorder, Side, SlowGuard, SlowWatch, SolveOptions, SolveReport,
    Trisolve, Tsqr, Variant, auto_precond_failed_note, auto_precond_for, auto_precond_note,
    auto_precond_retry_warranted, mixed, on_gpu, solve_on,
};
use krylov_wgpu::{KrylovError, Precision, Result, Scalar};

mod auto_variant;
mod dist;

use crate::args::{
    MatrixArgs, MatrixTask, MethodArg, PrecisionArg, PrecondArg, parse_enum, parse_method_arg,
    parse_precond_arg, run_in,
};
use crate::model::{AutoRequest, ModelDecision, VariantArg, auto_choice, parse_variant_arg};
use crate::report;
use auto_variant::fused_by_rule;
use dist::{solve_on_devices, solve_with_mpi};
use std::cell::RefCell;
use std::rc::Rc;

/// `--max-iter`'s default (a solve that reaches it is retried with a preconditioner under
/// `--precond auto`; one that reaches a limit the user set is not).
const DEFAULT_MAX_ITER: usize = 10_000;

#[derive(clap::Args, Clone)]
pub struct SolveArgs {
    #[command(flatten)]
    pub matrix: MatrixArgs,
    /// Right-hand side (Matrix Market vector). Default: b = A·1, so the exact solution is all ones.
    #[arg(long)]
    rhs: Option<PathBuf>,
    /// cg, bicgstab, gmres, cagmres, bicg, jacobi, or auto: CG for a symmetric matrix with a
    /// positive diagonal (solved again with GMRES, with a note, if CG finds it indefinite),
    /// GMRES for every other (`solvers::choose_method_for`).
    #[arg(long = "method", default_value = "auto", value_parser = parse_method_arg)]
    method_arg: MethodArg,
    /// The method `method_arg` resolves to for the loaded matrix.
    #[arg(skip = Method::Cg)]
    method: Method,
    /// classical, pipelined, fused (CG: pipelined CG in one launch and one global reduction per
    /// iteration; GMRES: pipelined GMRES's step in two launches instead of four), workgroup
    /// (for systems of up to a few thousand rows, in one workgroup: CG classical CG, 32
    /// iterations per launch; GMRES pipelined GMRES's steps, a whole cycle per launch),
    /// cooperative (CG: fused CG's iteration 16 times per launch by
    /// workgroups that meet at a grid barrier, as many as the GPU holds at once; falls back
    /// to fused where a barrier cannot hold), p1 (GMRES: p(1)-GMRES, one launch and one
    /// global reduction per step — a second basis u_i = A v_{i−1} by recurrence, R_ii by
    /// Pythagoras corrected by v's norm one step later; a step whose R_ii loses its accuracy
    /// ends the cycle early and GMRES restarts), or auto: on a GPU, workgroup for CG up to 2048 rows and for GMRES up to 1024 where they fit
    /// the adapter's workgroup memory; else with a device profile from `krylov calibrate` the
    /// variant the model predicts fastest, else pipelined; then, for CG and GMRES on a GPU,
    /// fused where it was measured faster (CG: n ≤ 2e5 or a banded matrix in DIA), for GMRES
    /// p1 where n ≤ 2e5 (`gpu::choose_variant_for`).
    /// Several devices (`--devices`, `--mpi`) run auto as pipelined.
    #[arg(long, default_value = "auto", value_parser = parse_variant_arg)]
    variant: VariantArg,
    /// Where to solve: `auto` (a hardware GPU with the features the solve needs, else the
    /// CPU reference; software adapters only with --adapter or KRYLOV_REQUIRE_GPU=1), `gpu`
    /// (any adapter, software included; an error if none can) or `cpu`.
    #[arg(long, default_value = "auto", value_parser = parse_enum::<DevicePreference>)]
    device: DevicePreference,
    /// Stop when ‖r‖₂ ≤ max(rtol·‖b‖₂, atol).
    #[arg(long, default_value_t = 1e-6, allow_hyphen_values = true)]
    rtol: f64,
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    atol: f64,
    #[arg(long, default_value_t = DEFAULT_MAX_ITER)]
    max_iter: usize,
    /// GMRES restart length m (cagmres: a multiple of --s-step).
    #[arg(long, default_value_t = 30)]
    restart: usize,
    /// cagmres: basis vectors per block s (one matrix powers call, one block
    /// orthogonalisation and one TSQR per s vectors; at most 16 on the GPU).
    #[arg(long, default_value_t = 5)]
    s_step: usize,
    /// cagmres: the TSQR of each block: cholqr2 (default), cholqr, svqr, cgs2, cgs, mgs, or
    /// caqr (Householder leaves, unconditionally stable). CholQR falls back to SVQR when the
    /// Cholesky fails.
    #[arg(long, default_value = "cholqr2", value_parser = parse_enum::<Tsqr>)]
    tsqr: Tsqr,
    /// cagmres: the basis of the matrix powers: newton (Leja-ordered Ritz values of a first
    /// GMRES cycle as shifts) or monomial.
    #[arg(long, default_value = "newton", value_parser = parse_enum::<Basis>)]
    basis: Basis,
    /// Preconditioner: none, jacobi, ilu0 (incomplete LU, general matrices), ic0
    /// (incomplete Cholesky, symmetric matrices), ilut (threshold incomplete LU with fill-in:
    /// indefinite or badly scaled matrices where ilu0 fails), or auto: none, and a solve on one
    /// device that stops without converging (stagnation, breakdown, divergence, or the default
    /// iteration limit) is solved again with ic0 (CG) or ilut (GMRES, BiCGStab), with a note.
    #[arg(long = "precond", default_value = "auto", value_parser = parse_precond_arg)]
    precond_arg: PrecondArg,
    /// The preconditioner `precond_arg` resolves to (`auto`: none, then the retry's).
    #[arg(skip = Precond::None)]
    precond: Precond,
    /// Side of the preconditioner for GMRES and BiCGStab: right (the method monitors the true
    /// residual) or left (the preconditioned one; the true residual still guards convergence).
    #[arg(long, default_value = "right", value_parser = parse_enum::<Side>)]
    side: Side,
    /// Triangular solves of ilu0/ic0: levels (exact, level-scheduled), sweeps:K (K Jacobi
    /// sweeps per factor) or auto (levels unless they need many dispatches).
    #[arg(long, default_value = "auto", value_parser = parse_enum::<Trisolve>)]
    trisolve: Trisolve,
    /// Reordering before the solve: auto (a maximum-product row matching, MC64-style, when a
    /// zero diagonal defeats Jacobi or ILU(0) of a non-CG solve, or ILUT meets a zero or weak
    /// diagonal), none, matching (always), or rcm (the unknowns renumbered by reverse
    /// Cuthill–McKee, x permuted back). The JSON report's `reordering` says what was done.
    #[arg(long, default_value = "auto", value_parser = parse_enum::<Reorder>)]
    reorder: Reorder,
    /// Balance rows and columns (max-norm scaling, iterated, powers of two) before the solve:
    /// the method runs on D_r·A·D_c, x is unscaled and its true residual rechecked. The JSON
    /// report's `equilibration` says what was done.
    #[arg(long)]
    equilibrate: bool,
    /// Orthogonalisation of classical GMRES.
    #[arg(long, default_value = "cgs", value_parser = parse_enum::<GramSchmidt>)]
    gs: GramSchmidt,
    /// GPU convergence checks: `paper` reads the partial sums back every iteration (paper 000),
    /// `device` finishes them on the GPU and reads the history once per batch.
    #[arg(long, default_value = "device", value_parser = parse_enum::<CheckMode>)]
    check_mode: CheckMode,
    /// Iterations per submit in `device` mode (0: adapt to the convergence rate).
    #[arg(long, default_value_t = 0)]
    batch: usize,
    /// Storage format of the GPU SpMV: csr, ell, dia, bcsr1, bcsr2, bcsr4, bcsr8, sell, or
    /// auto (with a device profile from `krylov calibrate`, the format the performance model
    /// predicts fastest; without one, chosen from the matrix's statistics; the JSON report
    /// says which and why).
    #[arg(long, default_value = "auto", value_parser = parse_enum::<Format>)]
    format: Format,
    /// Device profile for `--format auto` / `--variant auto` (default: this device's profile
    /// in the cache directory, if `krylov calibrate` wrote one).
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Most stored entries (padding included) per non-zero a format may use.
    #[arg(long, default_value_t = krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET)]
    max_padding: f64,
    /// Sums of the f32 GPU kernels' inner products and norms: plain, or compensated (TwoSum
    /// error terms in every reduction stage; f64 and the CPU reference always run plain).
    /// The JSON report's `reduction` says which ran.
    #[arg(long, default_value = "plain", value_parser = parse_enum::<Reduction>)]
    reduction: Reduction,
    /// Hide SHADER_F64 from every adapter: any machine then runs the f32-only path (f64
    /// requests go to the CPU, or with --allow-mixed to mixed refinement on the GPU).
    #[arg(long)]
    no_f64: bool,
    /// With --precision f64: when no GPU can run f64 kernels, run mixed-precision refinement
    /// on a GPU (f64 accuracy from f32 solves) instead of the CPU reference; the report's
    /// first note says so.
    #[arg(long)]
    allow_mixed: bool,
    /// Keep every hardware GPU of the solve busy with a streaming kernel until the timed loop
    /// starts, so the loop runs at the clocks of a busy GPU rather than those the driver
    /// lowered to during a long set-up (for benchmarks; `krylov bench` does this itself).
    #[arg(long)]
    heat: bool,
    /// --precision mixed: the relative tolerance of each inner f32 solve (the factor by which
    /// an outer iteration aims to shrink the residual).
    #[arg(long, default_value_t = 1e-4)]
    inner_rtol: f64,
    /// --precision mixed: the most outer iterations (inner solves).
    #[arg(long, default_value_t = 30)]
    max_outer: usize,
    /// --precision mixed: precision of the outer loop (x and r = b − Ax): auto (f64 where the
    /// device has it, else double-single), f64, or double-single.
    #[arg(long, default_value = "auto", value_parser = parse_enum::<OuterPrecision>)]
    outer_precision: OuterPrecision,
    /// --precision mixed: `auto` runs pipelined CG (no preconditioner or Jacobi) as one f32
    /// iteration with reliable updates (x folded into the high-precision x and the residual
    /// replaced by b − Ax in high precision, the search direction kept, each time the
    /// residual falls by 0.3); `restart` (and every other solve) refines by inner solves from
    /// scratch to --inner-rtol.
    #[arg(long, default_value = "auto", value_parser = parse_enum::<Refinement>)]
    refinement: Refinement,
    /// Write the solution as a Matrix Market vector.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the matrix (read, generated or sample) as a Matrix Market file before solving:
    /// the same problem for another solver (e.g. bench/gpu/cupy_ilu.py).
    #[arg(long)]
    write_matrix: Option<PathBuf>,
    /// Write the residual history as CSV (iteration,residual,relative_residual).
    #[arg(long)]
    history: Option<PathBuf>,
    /// Solve on several GPUs (CG, BiCGStab, GMRES or CA-GMRES; --precond none|jacobi): a count N (the first N
    /// adapters of `krylov info`) or adapter indices, `0,1`; an index may repeat (`0,0`: two
    /// logical devices on one adapter). A's rows are split in blocks balanced by non-zeros;
    /// the JSON report's `devices` has each block and the halo exchange.
    #[arg(long)]
    devices: Option<krylov_wgpu::gpu::DeviceList>,
    /// Solve with one row block per MPI rank: `mpirun -np N krylov solve --mpi …` (every rank
    /// reads or generates the system, drives the GPU of its rank on its machine, and rank 0
    /// prints the report). Needs a krylov built with `--features mpi`.
    #[arg(long, conflicts_with = "devices")]
    mpi: bool,
    /// Print one JSON object (the full report) instead of a summary.
    #[arg(long)]
    json: bool,
}

pub fn solve(args: &SolveArgs) -> Result<ExitCode> {
    let (a, name) = args.matrix.load()?;
    if let Some(path) = &args.write_matrix {
        market::write_matrix_market(path, &a)?;
    }
    a.require_square()?;
    let sample_rhs = match &args.matrix.sample {
        Some(name) => samples::find(name)?.rhs()?,
        None => None,
    };
    let (b, exact_known) = match (&args.rhs, sample_rhs) {
        (Some(path), _) => (market::read_vector::<f64>(path)?, false),
        (None, Some(rhs)) => (rhs, false),
        (None, None) => (a.mul_vec(&vec![1.0; a.ncols()])?, true),
    };
    let (method, method_note) = match args.method_arg {
        MethodArg::Fixed(Method::Cg) if !a.is_symmetric(krylov_wgpu::solvers::SYMMETRY_TOL) => {
            return Err(KrylovError::MethodMismatch(format!(
                "cg needs a symmetric (positive definite) matrix and {name} is not symmetric; \
                 use --method gmres, bicgstab or auto"
            )));
        }
        MethodArg::Fixed(m) => (m, None),
        MethodArg::Auto => {
            let choice = krylov_wgpu::solvers::choose_method_for(&a);
            (
                choice.method,
                Some(format!("method auto: {}", choice.reason)),
            )
        }
    };
    let args = &SolveArgs {
        method,
        precond: match args.precond_arg {
            PrecondArg::Fixed(p) => p,
            PrecondArg::Auto => Precond::None,
        },
        ..args.clone()
    };
    solve_system(
        args,
        (&a, &b),
        &name,
        exact_known,
        Vec::from_iter(method_note),
    )
}

/// `solve` after loading: the system on the chosen device(s), `notes` (what `auto` decided so
/// far) at the head of the report's.
fn solve_system(
    args: &SolveArgs,
    (a, b): (&Csr<f64>, &[f64]),
    name: &str,
    exact_known: bool,
    method_notes: Vec<String>,
) -> Result<ExitCode> {
    if let Some(list) = &args.devices {
        return solve_on_devices(args, list, (a, b), name, exact_known, method_notes);
    }
    if args.mpi {
        return solve_with_mpi(args, (a, b), name, exact_known, method_notes);
    }
    let (device, mixed_because) = choose_device(args)?;
    let auto = AutoRequest {
        explicit_profile: args.profile.as_deref(),
        device: device.context.as_deref(),
        method: args.method,
        unpreconditioned: args.precond == Precond::None,
        format: args.format,
        variant: match args.variant {
            VariantArg::Auto => None,
            VariantArg::Fixed(v) => Some(v),
        },
        precision: args.matrix.precision.working(),
        mixed: args.matrix.precision == PrecisionArg::Mixed,
        check_mode: args.check_mode,
        batch: args.batch,
        restart: args.restart,
        max_padding: args.max_padding,
    };
    let decision = auto_choice(a, &auto)?;
    let (format, variant) = match (&decision, args.variant) {
        (Some(d), _) => (d.choice.format, d.choice.variant),
        (None, VariantArg::Fixed(v)) => (args.format, v),
        (None, VariantArg::Auto) => (args.format, Variant::Pipelined),
    };
    let (variant, variant_note) = fused_by_rule(
        args,
        a,
        &device,
        format,
        variant,
        &decision,
        mixed_because.is_some(),
    );
    let opts = SolveOptions {
        method: args.method,
        variant,
        rtol: args.rtol,
        atol: args.atol,
        max_iter: args.max_iter,
        restart: args.restart,
        s_step: args.s_step,
        tsqr: args.tsqr,
        basis: args.basis,
        precond: args.precond,
        side: args.side,
        trisolve: args.trisolve,
        reorder: args.reorder,
        gs: args.gs,
        check_mode: args.check_mode,
        batch: args.batch,
        format,
        max_padding: args.max_padding,
        reduction: args.reduction,
        equilibrate: args.equilibrate,
    };
    if args.matrix.precision == PrecisionArg::Mixed || mixed_because.is_some() {
        let refine = RefineOptions {
            inner_rtol: args.inner_rtol,
            max_outer: args.max_outer,
            outer: args.outer_precision,
            refinement: args.refinement,
        };
        let engine = device
            .context
            .as_ref()
            .map(|ctx| Engine::with_tuning(ctx.clone(), krylov_wgpu::gpu::Tuning::from_env()));
        let mut sol = mixed::solve_on(
            &device,
            engine.as_ref(),
            a,
            b,
            None,
            &opts,
            &refine,
            &mut (),
        )?;
        if let Some(why) = mixed_because {
            sol.report.notes.insert(0, why);
        }
        let run = Run {
            x: &sol.x,
            report: sol.report,
            exact_known,
            decision: decision.as_ref(),
            method_notes,
            variant_note,
            slow: None,
        };
        return finish_solve(args, name, (a, b), run);
    }
    let heaters = match (&device.context, args.heat) {
        (Some(ctx), true) => Some(Heaters::start(std::slice::from_ref(ctx))?),
        _ => None,
    };
    let task = RunSolve {
        device: &device,
        b,
        opts: &opts,
        guard: auto_precond_retry(args).is_some(),
        heaters,
    };
    let (x, report, slow) = run_in(args.matrix.precision.working(), a, task)?;
    let run = Run {
        x: &x,
        report,
        exact_known,
        decision: decision.as_ref(),
        method_notes,
        variant_note,
        slow,
    };
    finish_solve(args, name, (a, b), run)
}

/// The device of the solve, and why it runs mixed-precision refinement when f64 was asked
/// for ([`DeviceChoice::resolve_allowing_mixed`] with `--allow-mixed`).
fn choose_device(args: &SolveArgs) -> Result<(ChosenDevice, Option<String>)> {
    let choice = DeviceChoice::from_env(args.device)
        .adapter(args.matrix.adapter.clone())
        .precision(args.matrix.precision.working())
        .without_f64(args.no_f64)
        .cpu_only(
            (!on_gpu(args.method, Variant::Pipelined))
                .then(|| format!("{} does not run on the GPU yet", args.method)),
        );
    let wants_f64 = args.matrix.precision == PrecisionArg::Plain(Precision::F64);
    if wants_f64 && args.allow_mixed {
        choice.resolve_allowing_mixed()
    } else {
        Ok((choice.resolve()?, None))
    }
}

/// The solve in `T` on the chosen device; the solution comes back in f64.
struct RunSolve<'a> {
    device: &'a ChosenDevice,
    b: &'a [f64],
    opts: &'a SolveOptions,
    /// Watch for a hopeless solve (`--precond auto` before its retry).
    guard: bool,
    /// `--heat`: paused when the timed loop starts.
    heaters: Option<Heaters>,
}

impl MatrixTask for RunSolve<'_> {
    type Output = (Vec<f64>, SolveReport, Option<String>);

    fn run<T: Scalar>(mut self, a: &Csr<T>) -> Result<Self::Output> {
        let b: Vec<T> = self.b.iter().map(|&v| T::from_f64(v)).collect();
        if let Some(index) = b.iter().position(|v| !v.is_finite()) {
            return Err(KrylovError::NonFinite {
                what: "right-hand side after conversion to the solve precision",
                index,
            });
        }
        let engine = self
            .device
            .context
            .as_ref()
            .map(|ctx| Engine::with_tuning(ctx.clone(), krylov_wgpu::gpu::Tuning::from_env()));
        let mut none = ();
        let inner: &mut dyn Monitor = match self.heaters.as_mut() {
            Some(h) => h,
            None => &mut none,
        };
        let o = self.opts;
        let watch = self
            .guard
            .then(|| Rc::new(RefCell::new(SlowWatch::new(o.rtol, o.atol, o.max_iter))));
        let mut monitor = SlowGuard {
            inner,
            watch: watch.clone(),
        };
        let mut run = || solve_on(self.device, engine.as_ref(), a, &b, None, o, &mut monitor);
        let sol = match watch.clone() {
            Some(w) => krylov_wgpu::cpu::cancellable_watching(
                move |k, r| w.borrow_mut().observe(k, r),
                run,
            ),
            None => run(),
        }?;
        let slow = watch.and_then(|w| w.borrow_mut().fired.take());
        Ok((sol.x.iter().map(|v| v.as_f64()).collect(), sol.report, slow))
    }
}

/// A finished solve: x, its report, and what the model decided.
struct Run<'a> {
    x: &'a [f64],
    report: SolveReport,
    exact_known: bool,
    decision: Option<&'a ModelDecision>,
    /// What `--method auto` decided (notes for the report).
    method_notes: Vec<String>,
    /// `--variant auto`'s rule, when it decided (a note for the report).
    variant_note: Option<String>,
    /// Why `--precond auto`'s guard stopped the solve early, if it did.
    slow: Option<String>,
}

/// The preconditioner `--precond auto` solves again with after a solve without one on one
/// device stops short ([`auto_precond_for`]: IC(0) for CG, ILUT for GMRES and BiCGStab) —
/// or `None` where it does not retry: an explicit preconditioner, an iteration limit the
/// user set or several devices (which take no factored M), other methods. Mixed precision
/// retries too (its outer loop, not the slow guard, stops a stalled first solve).
fn auto_precond_retry(args: &SolveArgs) -> Option<Precond> {
    if args.precond_arg != PrecondArg::Auto
        || args.precond != Precond::None
        || args.max_iter != DEFAULT_MAX_ITER
        || args.devices.is_some()
        || args.mpi
    {
        return None;
    }
    auto_precond_for(args.method)
}

/// `--precond auto`'s recovery: the preconditioner to solve again with when the solve stopped
/// for a reason a preconditioner addresses ([`auto_precond_retry_warranted`]; `slow`: why
/// the slow-convergence guard stopped the solve, if it did).
fn retry_preconditioned(
    args: &SolveArgs,
    report: &SolveReport,
    slow: Option<&str>,
) -> Option<Precond> {
    if !auto_precond_retry_warranted(report, slow.is_some()) {
        return None;
    }
    auto_precond_retry(args)
}

/// Writes the requested files, prints the report, and gives exit code 3 when the solve did
/// not converge.
fn finish_solve(
    args: &SolveArgs,
    name: &str,
    (a, b): (&Csr<f64>, &[f64]),
    run: Run<'_>,
) -> Result<ExitCode> {
    let Run {
        x,
        mut report,
        exact_known,
        decision,
        method_notes,
        variant_note,
        slow,
    } = run;
    // `--method auto` took CG for a symmetric matrix with a positive diagonal and CG found
    // ⟨p, Ap⟩ ≤ 0: A is indefinite, which GMRES takes — solved again, and said so.
    if args.method_arg == MethodArg::Auto
        && args.method == Method::Cg
        && matches!(report.reason, krylov_wgpu::solvers::StopReason::NotSpd)
    {
        let mut notes = method_notes;
        notes.push(format!(
            "method auto: CG found <p, Ap> <= 0 at iteration {} ({:.3} s; A is not positive \
             definite): solved again with GMRES",
            report.iterations, report.seconds
        ));
        let args = &SolveArgs {
            method: Method::Gmres,
            ..args.clone()
        };
        return solve_system(args, (a, b), name, exact_known, notes);
    }
    let mut method_notes = method_notes;
    if let Some(precond) = retry_preconditioned(args, &report, slow.as_deref()) {
        let mut notes = method_notes.clone();
        notes.push(auto_precond_note(
            args.method,
            &report,
            slow.as_deref(),
            precond,
        ));
        let retry = SolveArgs {
            precond,
            ..args.clone()
        };
        match solve_system(&retry, (a, b), name, exact_known, notes) {
            Ok(code) => return Ok(code),
            // The preconditioner could not be built: this report stands, and says why.
            Err(e) => method_notes.push(auto_precond_failed_note(precond, e)),
        }
    }
    if let Some(d) = decision {
        d.annotate(&mut report);
    }
    report.notes.extend(method_notes);
    report.notes.extend(variant_note);
    let report = &report;
    let solution_error = exact_known
        .then(|| (x.iter().map(|v| (v - 1.0).powi(2)).sum::<f64>() / x.len().max(1) as f64).sqrt());
    // ‖b − Ax‖∞ in f64 from the x returned (paper 001's error measure), for the JSON.
    let residual_inf = a.residual_inf(b, x)?;
    if let Some(path) = &args.out {
        market::write_vector(path, x)?;
    }
    if let Some(path) = &args.history {
        std::fs::write(path, report::history_csv(report)).map_err(|e| KrylovError::Io {
            path: path.clone(),
            source: e,
        })?;
    }
    if args.json {
        let extra = decision.map(|d| d.json(report));
        report::print_json(report, name, solution_error, residual_inf, extra);
    } else {
        report::print_text(report, name, solution_error);
    }
    Ok(if report.converged {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: not converged: {}", report.reason_detail);
        ExitCode::from(3)
    })
}
