//! `krylov solve --variant auto` after the model, for CG and GMRES on a GPU: one-workgroup CG
//! for a small system (`gpu::choose_workgroup_for`), else the fused variant (GMRES: p1) where
//! `gpu::choose_variant_for` finds it measured faster than pipelined — unless the model chose
//! the variant with a profile that predicts the fused variant (CG's, or GMRES's beside p1).

use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::{Format, Method, Precond, Side, Variant};

use super::SolveArgs;
use crate::args::PrecisionArg;
use crate::model::{ModelDecision, VariantArg};

/// `--variant auto` for CG and GMRES on a GPU where the model did not weigh the fused
/// variant (a preconditioner; a profile calibrated before it described fused CG or GMRES,
/// or a quick one, which cannot price launches): fused (GMRES: p1) where `choose_variant_for` finds it measured faster than
/// pipelined, with a note saying why. Mixed precision keeps the pipelined variant (its
/// reliable updates are written for pipelined CG).
pub(super) fn fused_by_rule(
    args: &SolveArgs,
    a: &Csr<f64>,
    device: &krylov_wgpu::gpu::ChosenDevice,
    format: Format,
    variant: Variant,
    decision: &Option<ModelDecision>,
    mixed: bool,
) -> (Variant, Option<String>) {
    let Some(ctx) = device.context.as_deref() else {
        return (variant, None);
    };
    let resolved = match format {
        Format::Auto => {
            let target = krylov_wgpu::gpu::RuleTarget::of(ctx);
            krylov_wgpu::gpu::choose_format_for(a, args.max_padding, target).format
        }
        f => f,
    };
    if let Some(small) = workgroup_by_rule(args, (a.nrows(), a.nnz()), ctx, resolved, mixed) {
        return (Variant::Workgroup, Some(small));
    }
    if decision
        .as_ref()
        .is_some_and(|d| d.variant_auto && d.predicts_fused && !d.quick_profile)
    {
        return (variant, None); // the model weighed fused against pipelined: its note says
    }
    if args.variant != VariantArg::Auto
        || !matches!(args.method, Method::Cg | Method::Gmres)
        || variant != Variant::Pipelined
        || args.matrix.precision == PrecisionArg::Mixed
        || !fuses_preconditioner(args)
    {
        return (variant, None);
    }
    let mut rule = krylov_wgpu::gpu::choose_variant_for(args.method, a.nrows(), resolved);
    // p(1)-GMRES keeps a step's coefficients in workgroup memory: a longer cycle runs fused.
    if rule.variant == Variant::P1 && args.restart > krylov_wgpu::solvers::gmres::P1_MAX_RESTART {
        rule.variant = Variant::Fused;
        rule.reason = format!(
            "{}; fused, as restart {} > p(1)-GMRES's {}",
            rule.reason,
            args.restart,
            krylov_wgpu::solvers::gmres::P1_MAX_RESTART
        );
    }
    let note = match (rule.variant, decision) {
        (Variant::Fused, Some(d)) => {
            let why = if d.predicts_fused {
                "the profile is a quick calibration, whose predictions do not price a loop's \
                 launches: `krylov calibrate` without --quick to let the model weigh fused CG"
            } else {
                "the profile does not describe fused CG: `krylov calibrate` again to let the \
                 model weigh it"
            };
            format!(
                "variant auto: fused in place of the model's pipelined ({}; {why})",
                rule.reason
            )
        }
        (v, _) => format!("variant auto: {v} ({})", rule.reason),
    };
    (rule.variant, Some(note))
}

/// `--variant auto` for CG and GMRES on a GPU, before the model and the fused rule:
/// one-workgroup CG or GMRES for a small system that fits the adapter's workgroup memory
/// (`gpu::choose_workgroup_for`; the model does not describe them), with its note. Not under mixed precision (reliable
/// updates are pipelined CG's) nor with a preconditioner the kernel does not apply.
fn workgroup_by_rule(
    args: &SolveArgs,
    (n, nnz): (usize, usize),
    ctx: &krylov_wgpu::gpu::GpuContext,
    format: Format,
    mixed: bool,
) -> Option<String> {
    if args.variant != VariantArg::Auto
        || mixed
        || args.matrix.precision == PrecisionArg::Mixed
        || !fuses_preconditioner(args)
    {
        return None;
    }
    let subgroups = ctx.has_subgroups() && ctx.summary.subgroup_min_size >= 4;
    let precision = args.matrix.precision.working();
    let (rows, threads) = match args.method {
        Method::Gmres if args.restart <= krylov_wgpu::solvers::gmres::workgroup::MAX_RESTART => {
            krylov_wgpu::solvers::gmres::workgroup::auto_rows(
                &ctx.limits,
                subgroups,
                precision,
                format,
            )
        }
        Method::Gmres => return None,
        _ => krylov_wgpu::solvers::cg::workgroup::auto_rows(
            &ctx.limits,
            subgroups,
            precision,
            format,
        ),
    };
    let rule = krylov_wgpu::gpu::choose_workgroup_for(args.method, n, nnz, rows, threads)?;
    Some(format!("variant auto: workgroup ({})", rule.reason))
}

/// Whether the pipelined and fused kernels apply `args`' preconditioner themselves: none, or
/// Jacobi on the right (a factored M or a left one runs the classical variant, whatever
/// `auto` picks, and the report says so).
fn fuses_preconditioner(args: &SolveArgs) -> bool {
    match args.precond {
        Precond::None => true,
        Precond::Jacobi => args.method == Method::Cg || args.side == Side::Right,
        _ => false,
    }
}
