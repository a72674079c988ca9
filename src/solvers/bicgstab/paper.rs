//! The host's side of `paper` mode, shared by both variants: the partial sums finished,
//! the scalar tests of Alg. 3/4 (breakdowns named like the CPU reference), and the loop that
//! counts each host-driven iteration into the loop counts.

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::Engine;
use crate::solvers::driver::{LoopEnd, Run, counted, sum_component};

/// Per-workgroup partial sums read back from the device, finished on the host.
pub(super) struct Partials<T> {
    pub(super) parts: Vec<T>,
    pub(super) groups: usize,
}

impl<T: Scalar> Partials<T> {
    /// Component `comp` of slot `slot` (counted from the first slot read), summed in f64.
    pub(super) fn f64(&self, slot: usize, comp: usize) -> f64 {
        sum_component(&self.parts, self.groups, slot, comp)
    }

    /// The same rounded to T, the precision the device holds it in.
    pub(super) fn get(&self, slot: usize, comp: usize) -> T {
        T::from_f64(self.f64(slot, comp))
    }
}

/// Why a `paper`-mode iteration ended before its last line: the loop stops, or an error.
pub(super) enum Halt {
    End(LoopEnd),
    Error(KrylovError),
}

impl From<KrylovError> for Halt {
    fn from(e: KrylovError) -> Self {
        Halt::Error(e)
    }
}

/// A step of a `paper`-mode iteration: a value to go on with, or a halt (`?` passes it on).
pub(super) type Flow<V = ()> = std::result::Result<V, Halt>;

/// Stops the `paper` loop with `end`.
pub(super) fn halt<V>(end: LoopEnd) -> Flow<V> {
    Err(Halt::End(end))
}

/// `paper` mode's loop, shared by both variants: stops on a cancel or at the iteration
/// limit, otherwise runs one host-driven `iteration` and adds all the engine counted during
/// it — every stop inside included — to the loop counts.
pub(super) fn paper_iterations<'m>(
    engine: &Engine,
    run: &mut Run<'m>,
    max_iter: usize,
    mut iteration: impl FnMut(&mut Run<'m>) -> Flow,
) -> Result<LoopEnd> {
    loop {
        if let Some(end) = run.paper_stop(max_iter) {
            return Ok(end);
        }
        match counted(engine, run, &mut iteration) {
            Ok(()) => {}
            Err(Halt::End(end)) => return Ok(end),
            Err(Halt::Error(e)) => return Err(e),
        }
    }
}

/// The last residual the host accepted (the setup's ‖r0‖ = ‖r0*‖ at the loop's start).
pub(super) fn last_residual(run: &Run<'_>) -> f64 {
    *run.history.last().expect("the setup residual")
}

/// `cpu::bicgstab`'s `nrm`: √max(v, 0) of a value in T.
pub(super) fn nrm<T: Scalar>(v: T) -> f64 {
    v.as_f64().max(0.0).sqrt()
}

/// The guard of Alg. 3/4 l.5: ρ_i = ⟨r_i,r0*⟩ finite and not numerically zero against
/// ‖r_i‖‖r0*‖.
pub(super) fn check_rho<T: Scalar>(rho: T, r_norm: f64, rstar_norm: f64) -> Flow {
    if !rho.is_finite() {
        return halt(LoopEnd::NonFinite);
    }
    if crate::cpu::is_breakdown::<T>(rho.as_f64(), r_norm * rstar_norm) {
        return halt(LoopEnd::Breakdown("<r, r0*>".into()));
    }
    Ok(())
}

/// l.7–8: ⟨Ap_i,r0*⟩ finite and not numerically zero against ‖Ap_i‖‖r0*‖; then
/// α_i = ρ_i/⟨Ap_i,r0*⟩, finite.
pub(super) fn alpha<T: Scalar>(rho: T, apr: T, ap_norm: f64, rstar_norm: f64) -> Flow<T> {
    if !apr.is_finite() {
        return halt(LoopEnd::NonFinite);
    }
    if crate::cpu::is_breakdown::<T>(apr.as_f64(), ap_norm * rstar_norm) {
        return halt(LoopEnd::Breakdown("<Ap, r0*>".into()));
    }
    let alpha = rho / apr;
    if !alpha.is_finite() {
        return halt(LoopEnd::NonFinite);
    }
    Ok(alpha)
}

/// l.14: ω_i = ⟨As_i,s_i⟩/⟨As_i,As_i⟩, with ⟨As,As⟩ finite and positive
/// and ⟨As,s⟩ not numerically zero against ‖As‖‖s‖ (else ω = 0 and β divides by it).
pub(super) fn omega<T: Scalar>(as_s: T, as_as: T, s_norm: f64) -> Flow<T> {
    if !as_as.is_finite() {
        return halt(LoopEnd::NonFinite);
    }
    if as_as <= T::zero() || crate::cpu::is_breakdown::<T>(as_s.as_f64(), nrm(as_as) * s_norm) {
        return halt(LoopEnd::Breakdown("omega".into()));
    }
    Ok(as_s / as_as)
}
