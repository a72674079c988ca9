//! One device's row block of a distributed solve: its part of A (local numbering, halo
//! columns after the owned ones), its vectors, and the launches of `shaders/dist/`.

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::kernels::solver_kernel;
use crate::gpu::{Batch, Engine, Kernel};
use crate::matrix::partition::LocalPart;

/// Partial-sum slots of a block: the update's ⟨r,z⟩, ⟨r,r⟩, then the product's ⟨p,Ap⟩,
/// ⟨Ap,D⁻¹Ap⟩ over interior rows and over boundary rows.
pub(super) const SLOT_UPDATE: u32 = 0;
pub(super) const SLOT_INTERIOR: u32 = 1;
pub(super) const SLOT_BOUNDARY: u32 = 2;
const SLOTS: u32 = 3;

/// Mirrors `struct Dist` of `shaders/lib/dist.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct DistParams {
    begin: u32,
    end: u32,
    groups: u32,
    slot: u32,
    jacobi: u32,
    split: u32,
    count: u32,
    zero: u32,
}

/// A launch over a row range: its bind group and workgroup count.
struct Launch {
    bind: wgpu::BindGroup,
    groups: u32,
}

/// The buffers and launches of one device's block.
pub(super) struct DeviceBlock<T> {
    pub(super) engine: Engine,
    pub(super) local: LocalPart<T>,
    pub(super) x: wgpu::Buffer,
    pub(super) r: wgpu::Buffer,
    /// `[p; p_halo]`: the owned entries of p, then the halo the exchange writes.
    pub(super) p_ext: wgpu::Buffer,
    pub(super) partials: wgpu::Buffer,
    pub(super) coef: wgpu::Buffer,
    pub(super) send: wgpu::Buffer,
    pub(super) send_len: usize,
    /// Partials entries per slot.
    pub(super) groups: u32,
    pub(super) split: bool,
    update: Launch,
    interior: Option<Launch>,
    boundary: Option<Launch>,
    gather: Option<Launch>,
    kernels: [Kernel; 3],
}

impl<T: Scalar> DeviceBlock<T> {
    /// Uploads `local` (and D⁻¹ of its rows when `dinv` is given, local order) to `engine`'s
    /// device and binds the launches; `send` lists the owned entries other blocks read.
    pub(super) fn new(
        engine: Engine,
        local: LocalPart<T>,
        dinv: Option<Vec<T>>,
        send: &[u32],
    ) -> Result<Self> {
        let ctx = engine.context().clone();
        ctx.require(T::PRECISION)?;
        let nloc = local.nloc();
        let next = nloc + local.halo.len();
        let size = std::mem::size_of::<T>() as u64;
        let limit = engine.binding_limit();
        for (what, bytes) in [
            ("a block's vector with its halo", next as u64 * size),
            ("a block's row pointers", (nloc as u64 + 1) * 4),
        ] {
            if bytes > limit {
                return Err(KrylovError::FormatRefused {
                    format: "csr".into(),
                    reason: format!(
                        "{what} needs {bytes} bytes, over the {limit}-byte binding limit of `{}`: use more devices",
                        ctx.summary.name
                    ),
                });
            }
        }
        // Column indices and values over two bindings where the values exceed one.
        let nnz = local.nnz();
        let split_at = if nnz as u64 * size > limit {
            (limit / size) as usize
        } else {
            nnz
        };
        if (nnz - split_at) as u64 * size > limit {
            return Err(KrylovError::FormatRefused {
                format: "csr".into(),
                reason: format!(
                    "a block's {nnz} values exceed two {limit}-byte bindings of `{}`: use more devices",
                    ctx.summary.name
                ),
            });
        }
        let row_ptr = engine.storage_from("dist row_ptr", &local.row_ptr)?;
        let cols = engine.storage_from("dist cols", &local.col_idx[..split_at])?;
        let vals = engine.storage_from("dist vals", &local.values[..split_at])?;
        let cols_hi = engine.storage_from("dist cols hi", &local.col_idx[split_at..])?;
        let vals_hi = engine.storage_from("dist vals hi", &local.values[split_at..])?;
        // Poisoned until the solve writes them: an entry the kernels never set shows as NaN.
        let nan = T::from_f64(f64::NAN);
        let x = engine.storage_from("dist x", &vec![nan; nloc.max(1)])?;
        let r = engine.storage_from("dist r", &vec![nan; nloc.max(1)])?;
        let p_ext = engine.storage_from("dist p_ext", &vec![nan; next.max(1)])?;
        let ap = engine.storage_from("dist ap", &vec![nan; nloc.max(1)])?;
        let jacobi = dinv.is_some();
        let dinv = engine.storage_from("dist dinv", &dinv.unwrap_or_else(|| vec![T::one()]))?;
        let groups = engine.reduction_groups(nloc);
        let partials =
            engine.storage_zeroed::<[T; 4]>("dist partials", (SLOTS * groups) as usize)?;
        let coef = engine.storage_zeroed::<T>("dist coef", 4)?;
        let send_idx = engine.storage_from("dist send_idx", send)?;
        let send_buf = engine.storage_from("dist send", &vec![nan; send.len().max(1)])?;

        let config = engine.shader_config(T::PRECISION);
        let k_spmv = solver_kernel::<T>(&engine, "dist_spmv_dot", config)?;
        let k_update = solver_kernel::<T>(&engine, "dist_update_cg", config)?;
        let k_gather = solver_kernel::<T>(&engine, "dist_gather", config)?;
        let wg = k_spmv.config.workgroup_size as usize;
        let launch = |kernel: &Kernel, begin: usize, end: usize, slot: u32, count: usize| {
            let params = DistParams {
                begin: begin as u32,
                end: end as u32,
                groups,
                slot,
                jacobi: jacobi as u32,
                split: split_at as u32,
                count: count as u32,
                zero: 0,
            };
            let uniform = engine.uniform_from("dist params", &params);
            let bind = engine.bind_group_at(
                kernel,
                &[
                    (1, &partials),
                    (5, &row_ptr),
                    (6, &cols),
                    (7, &vals),
                    (8, &p_ext),
                    (9, &ap),
                    (10, &dinv),
                    (11, &cols_hi),
                    (12, &vals_hi),
                    (13, &coef),
                    (14, &send_idx),
                    (15, &uniform),
                    (16, &send_buf),
                    (17, &x),
                    (18, &r),
                ],
            );
            let rows = (end - begin).max(count);
            Launch {
                bind,
                groups: (rows.div_ceil(wg) as u32).clamp(1, groups),
            }
        };
        let update = launch(&k_update, 0, nloc, SLOT_UPDATE, 0);
        let interior =
            (local.interior > 0).then(|| launch(&k_spmv, 0, local.interior, SLOT_INTERIOR, 0));
        let boundary = (local.interior < nloc)
            .then(|| launch(&k_spmv, local.interior, nloc, SLOT_BOUNDARY, 0));
        let gather = (!send.is_empty()).then(|| launch(&k_gather, 0, 0, 0, send.len()));
        Ok(DeviceBlock {
            engine,
            local,
            x,
            r,
            p_ext,
            partials,
            coef,
            send: send_buf,
            send_len: send.len(),
            groups,
            split: split_at < nnz,
            update,
            interior,
            boundary,
            gather,
            kernels: [k_spmv, k_update, k_gather],
        })
    }

    /// Records x += αp, r −= αAp, p = D⁻¹r + βp with the first stage of ⟨r,z⟩, ⟨r,r⟩, then
    /// the gather of the entries other blocks read.
    pub(super) fn record_update(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.kernels[1], &self.update.bind, self.update.groups);
        if let Some(g) = &self.gather {
            batch.dispatch(&self.kernels[2], &g.bind, g.groups);
        }
    }

    /// Records the product over the interior rows (no halo needed).
    pub(super) fn record_interior(&self, batch: &mut Batch<'_>) {
        if let Some(l) = &self.interior {
            batch.dispatch(&self.kernels[0], &l.bind, l.groups);
        }
    }

    /// Records the product over the boundary rows (after the halo arrived); its sums continue
    /// the interior launch's reduction.
    pub(super) fn record_boundary(&self, batch: &mut Batch<'_>) {
        if let Some(l) = &self.boundary {
            let kernel = if self.interior.is_some() {
                self.kernels[0].without_reduction()
            } else {
                self.kernels[0].clone()
            };
            batch.dispatch(&kernel, &l.bind, l.groups);
        }
    }

    /// Workgroups whose partials slot `slot` holds this iteration.
    pub(super) fn used_groups(&self, slot: u32) -> usize {
        match slot {
            SLOT_UPDATE => self.update.groups as usize,
            SLOT_INTERIOR => self.interior.as_ref().map_or(0, |l| l.groups as usize),
            _ => self.boundary.as_ref().map_or(0, |l| l.groups as usize),
        }
    }

    /// Sum over the used workgroups of slot `slot`'s components 0 and 1, in f64.
    pub(super) fn slot_sum(&self, partials: &[T], slot: u32) -> [f64; 2] {
        let base = (slot * self.groups) as usize;
        let mut s = [0.0; 2];
        for g in 0..self.used_groups(slot) {
            s[0] += partials[4 * (base + g)].as_f64();
            s[1] += partials[4 * (base + g) + 1].as_f64();
        }
        s
    }
}
