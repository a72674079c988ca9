//! The one accounting point: every dispatch, submit, readback and upload is counted here,
//! and the global reductions the dispatched kernels start.
//!
//! **Reductions** (issue #17: what communication avoidance saves). A global reduction is a sum
//! across the whole device — every workgroup's share of one or more inner products or norms —
//! that some later step needs finished. Each is counted ONCE, at the launch that starts it
//! (its first stage: the per-workgroup partial sums): several inner products packed into one
//! launch (its vec4 components or several partials slots written together, as
//! `gmres_basis_dots` does for all ⟨v_j, w⟩) are one reduction; the second stage that finishes
//! it adds nothing, whether a one-workgroup launch (`dot_finish`, `gmres_finish`), the next
//! fused kernel (the redundant `sum_partials` of `spmv_dot_cg`) or the host reading the
//! partials back (`paper` mode). Kernels without sums (SpMV, axpy, triangular solves) count 0.
//! The number per kernel is the table [`REDUCTIONS`](super::shader::REDUCTIONS), read when a
//! kernel is compiled into [`Kernel::reductions`](super::Kernel::reductions), so every
//! [`Batch::dispatch`](super::Batch::dispatch) counts it; a launch in a mode that skips its
//! first stage uses [`Kernel::without_reduction`](super::Kernel::without_reduction).
//!
//! **Host syncs** are the readbacks: every one of this engine is waited for by the host before
//! it decides anything (a [`PendingRead`](super::PendingRead) is counted at submit; `device`
//! mode keeps the next batch queued while it waits, and drops at most the last one unwaited
//! when the loop has already stopped).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::base::WorkCounts;

/// Thread-safe counters of GPU work. [`Engine`](super::Engine) owns one; solvers take
/// [`snapshot`](Counters::snapshot)s before and after a loop and report the difference.
#[derive(Debug, Default)]
pub struct Counters {
    dispatches: AtomicU64,
    reductions: AtomicU64,
    submits: AtomicU64,
    readbacks: AtomicU64,
    uploads: AtomicU64,
    bytes_read_back: AtomicU64,
    bytes_uploaded: AtomicU64,
}

impl Counters {
    /// One dispatch of a kernel that starts `reductions` global reductions.
    pub(crate) fn dispatch(&self, reductions: u32) {
        self.dispatches.fetch_add(1, Relaxed);
        self.reductions.fetch_add(reductions as u64, Relaxed);
    }
    pub(crate) fn submit(&self) {
        self.submits.fetch_add(1, Relaxed);
    }
    pub(crate) fn readback(&self, bytes: u64) {
        self.readbacks.fetch_add(1, Relaxed);
        self.bytes_read_back.fetch_add(bytes, Relaxed);
    }
    pub(crate) fn upload(&self, bytes: u64) {
        self.uploads.fetch_add(1, Relaxed);
        self.bytes_uploaded.fetch_add(bytes, Relaxed);
    }

    /// The totals so far.
    pub fn snapshot(&self) -> WorkCounts {
        WorkCounts {
            dispatches: self.dispatches.load(Relaxed),
            reductions: self.reductions.load(Relaxed),
            submits: self.submits.load(Relaxed),
            readbacks: self.readbacks.load(Relaxed),
            uploads: self.uploads.load(Relaxed),
            bytes_read_back: self.bytes_read_back.load(Relaxed),
            bytes_uploaded: self.bytes_uploaded.load(Relaxed),
        }
    }
}

impl WorkCounts {
    /// `self − earlier`, field by field.
    pub fn since(&self, earlier: &WorkCounts) -> WorkCounts {
        WorkCounts {
            dispatches: self.dispatches - earlier.dispatches,
            reductions: self.reductions - earlier.reductions,
            submits: self.submits - earlier.submits,
            readbacks: self.readbacks - earlier.readbacks,
            uploads: self.uploads - earlier.uploads,
            bytes_read_back: self.bytes_read_back - earlier.bytes_read_back,
            bytes_uploaded: self.bytes_uploaded - earlier.bytes_uploaded,
        }
    }

    /// Host↔device transfers: readbacks plus uploads.
    pub fn transfers(&self) -> u64 {
        self.readbacks + self.uploads
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shader::{KERNELS, REDUCTIONS, reductions_started};

    #[test]
    fn the_table_names_every_kernel_once() {
        for k in KERNELS {
            let n = REDUCTIONS
                .iter()
                .filter(|(name, _)| *name == k.name)
                .count();
            assert_eq!(n, 1, "kernel `{}` is in REDUCTIONS {n} times", k.name);
        }
        for (name, r) in REDUCTIONS {
            assert!(
                KERNELS.iter().any(|k| k.name == *name),
                "`{name}` is no kernel"
            );
            assert!(*r <= 1, "`{name}`: one launch starts at most one reduction");
        }
    }

    #[test]
    fn a_finish_kernel_adds_no_reduction() {
        let c = Counters::default();
        c.dispatch(reductions_started("dot"));
        c.dispatch(reductions_started("dot_finish"));
        let after_dot = c.snapshot();
        assert_eq!((after_dot.dispatches, after_dot.reductions), (2, 1));
        for finish in [
            "dot_finish",
            "gmres_finish",
            "bicg_finish",
            "bicgstab_finish",
        ] {
            c.dispatch(reductions_started(finish));
        }
        let d = c.snapshot().since(&after_dot);
        assert_eq!((d.dispatches, d.reductions), (4, 0));
        // A fused kernel that finishes one reduction and starts the next counts once.
        c.dispatch(reductions_started("spmv_dot_cg"));
        assert_eq!(c.snapshot().since(&after_dot).reductions, 1);
    }
}
