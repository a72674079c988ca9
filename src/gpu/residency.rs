//! How many workgroups of a kernel the adapter keeps resident at once, found by launching
//! them: what a kernel whose workgroups wait for each other (`cg_cooperative`'s grid barrier)
//! may be launched with.
//!
//! WGSL promises nothing about it (no occupancy query, no forward progress for a workgroup
//! that waits on another), and it depends on the compiled pipeline (registers, workgroup
//! memory) and the adapter. So the kernel itself is the probe: a launch of g workgroups that
//! each arrive at one barrier and wait a bounded time. If every wait ends because all g
//! arrived, g workgroups were resident at once; if one runs out, they were not (the waits that
//! run out set a flag; workgroups that start later see it and leave at once). Nothing can hang.

use super::engine::{Engine, Kernel};
use crate::base::error::Result;

/// The most workgroups any probe tries: 1024, like the reducing kernels' cap.
pub const MAX_RESIDENT_PROBE: u32 = 1024;

impl Engine {
    /// The most workgroups of `kernel` (a power of two, ≤ [`MAX_RESIDENT_PROBE`]) found
    /// resident at once, probed on first use and remembered per kernel and configuration:
    /// `probe(g)` launches g workgroups and says whether all met (it is called with 1024,
    /// 512, … until one succeeds; 1 always does).
    pub fn resident_groups(
        &self,
        kernel: &Kernel,
        mut probe: impl FnMut(u32) -> Result<bool>,
    ) -> Result<u32> {
        let key = (kernel.name, kernel.config);
        if let Some(&g) = self.resident.lock().expect("residency cache").get(&key) {
            return Ok(g);
        }
        let mut g = MAX_RESIDENT_PROBE;
        while g > 1 && !probe(g)? {
            g /= 2;
        }
        self.resident
            .lock()
            .expect("residency cache")
            .insert(key, g);
        Ok(g)
    }
}
