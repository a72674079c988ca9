//! The one accounting point: every dispatch, submit, readback and upload is counted here.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::base::WorkCounts;

/// Thread-safe counters of GPU work. [`Engine`](super::Engine) owns one; solvers take
/// [`snapshot`](Counters::snapshot)s before and after a loop and report the difference.
#[derive(Debug, Default)]
pub struct Counters {
    dispatches: AtomicU64,
    submits: AtomicU64,
    readbacks: AtomicU64,
    uploads: AtomicU64,
    bytes_read_back: AtomicU64,
    bytes_uploaded: AtomicU64,
}

impl Counters {
    pub(crate) fn dispatch(&self) {
        self.dispatches.fetch_add(1, Relaxed);
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
