//! [`CaSystem`]'s traffic with the host: submitting what is recorded (all at once when the
//! host needs a value, or early while a deferred cycle records hundreds of launches), reads
//! of the cycle buffer and of x, writes into the cycle buffer, and the measurements made
//! after a solve (the basis's orthogonality, the double-single true residual).

use super::{CaSystem, distance_from_identity};
use crate::base::error::Result;
use crate::base::scalar::Scalar;

impl<'e, T: Scalar> CaSystem<'e, T> {
    /// Submits what is recorded once it is at least `launches` launches (no wait): a
    /// deferred cycle records hundreds of launches before its one readback, and the GPU
    /// should not sit idle while the host records and submits them all at once.
    pub(crate) fn submit_after(&self, launches: usize) -> Result<()> {
        if self.unsubmitted.get() >= launches {
            self.flush()?;
        }
        Ok(())
    }

    /// Submits what is recorded (no wait); nothing when nothing is.
    pub(crate) fn flush(&self) -> Result<()> {
        self.unsubmitted.set(0);
        match self.batch.borrow_mut().take() {
            Some(b) => b.submit(),
            None => Ok(()),
        }
    }

    /// What is recorded (or an empty batch), taken to be submitted with a read.
    fn take_for_read(&self) -> crate::gpu::Batch<'e> {
        self.unsubmitted.set(0);
        self.batch
            .borrow_mut()
            .take()
            .unwrap_or_else(|| self.engine.begin("cagmres read"))
    }

    /// Submits what is recorded and reads `count` entries of the cycle buffer from `at`
    /// (one host sync).
    pub(crate) fn read(&self, at: usize, count: usize) -> Result<Vec<f64>> {
        let batch = self.take_for_read();
        let v: Vec<T> = batch.submit_and_read(&self.cyc, at, count)?;
        Ok(v.into_iter().map(|x| x.as_f64()).collect())
    }

    /// [`Self::read`] without waiting: a distributed solve submits every device's read
    /// before it waits for any.
    pub(crate) fn read_pending(
        &self,
        at: usize,
        count: usize,
    ) -> Result<crate::gpu::PendingRead<'e, T>> {
        let batch = self.take_for_read();
        batch.submit_read(&self.cyc, at, count)
    }

    /// Writes `values` into the cycle buffer at `at` after submitting what is recorded
    /// (recorded launches must not see a value written after them).
    pub(crate) fn write(&self, at: usize, values: &[f64]) -> Result<()> {
        self.flush()?;
        let v: Vec<T> = values.iter().map(|&x| T::from_f64(x)).collect();
        self.engine.write(&self.cyc, at, &v);
        Ok(())
    }

    /// The solution x (one readback).
    pub(crate) fn read_x(&self) -> Result<Vec<T>> {
        self.flush()?;
        let (buf, at) = self.pool.locate(self.x());
        self.engine.read(buf, at, self.n)
    }

    /// ‖I − QᵀQ‖_F over q₁ … q_k (the Gram matrix on the GPU, column by column; one
    /// readback; outside the per-iteration counts).
    pub(crate) fn orthogonality_loss(&self, k: usize) -> Result<Option<f64>> {
        if k == 0 {
            return Ok(None);
        }
        for j in 0..k {
            self.record_dots(1, k, 1 + j, 1, self.lay.vtv + k * j, None);
        }
        let g = self.read(self.lay.vtv, k * k)?;
        Ok(Some(distance_from_identity(&g, k)))
    }

    /// ‖b − Ax‖² in f64 for an f32 solve: the double-single true residual from the pool's x
    /// and b (as GMRES does).
    pub(crate) fn true_residual_ds(&self) -> Result<crate::gpu::ds::TrueResidualDs> {
        self.flush()?;
        crate::gpu::ds::TrueResidualDs::at(
            self.engine,
            self.a.as_ref().expect("A is on the device"),
            self.pool.locate(self.x()),
            self.pool.locate(self.b()),
        )
    }
}
