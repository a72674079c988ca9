//! What every solver's device block shares: its part of A (local numbering, halo columns
//! after the owned ones; over two bindings where the values exceed one), the partial-sum
//! slots, the send list and buffer of the halo exchange, and how a launch over a row range
//! is bound (`shaders/lib/dist.wgsl`'s `Dist` uniform).

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::kernels::solver_kernel;
use crate::gpu::{Batch, Engine, Kernel};
use crate::matrix::partition::LocalPart;

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
    quad_stride: u32,
}

/// A launch over a row range: its kernel, bind group and workgroup count.
pub(super) struct Launch {
    kernel: Kernel,
    bind: wgpu::BindGroup,
    groups: u32,
    /// The partials slot it writes (`None`: no sums): its first, when it writes several.
    slot: Option<u32>,
    /// Slots between successive quads of sums (lib/dist_basis.wgsl's `dist.quad_stride`).
    quad_stride: u32,
    /// Quads of sums it writes this phase (distributed GMRES: as many as the step's inner
    /// products need).
    quads: std::cell::Cell<u32>,
}

impl Launch {
    /// Records the launch.
    pub(super) fn record(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.kernel, &self.bind, self.groups);
    }

    /// Records the launch as the continuation of another launch's reduction (its sums add to
    /// the same inner products: one global reduction, counted once).
    pub(super) fn record_continuing(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.kernel.without_reduction(), &self.bind, self.groups);
    }

    /// Sets the quads of sums the launch writes from now on.
    pub(super) fn set_quads(&self, quads: u32) {
        self.quads.set(quads.max(1));
    }

    /// The slots it writes: its first, then every `quad_stride`-th, `quads` in all.
    fn last_slot(&self) -> Option<u32> {
        self.slot
            .map(|s| s + self.quad_stride * (self.quads.get() - 1))
    }
}

/// Which rows a launch covers.
#[derive(Debug, Clone, Copy)]
pub(super) enum Rows {
    All,
    Interior,
    Boundary,
    /// The send list (dist_gather).
    Send,
}

/// One device's block of A and the buffers every distributed kernel binds.
pub(super) struct BlockCore<T> {
    pub(super) engine: Engine,
    pub(super) local: LocalPart<T>,
    row_ptr: wgpu::Buffer,
    cols: wgpu::Buffer,
    vals: wgpu::Buffer,
    cols_hi: wgpu::Buffer,
    vals_hi: wgpu::Buffer,
    split_at: usize,
    pub(super) partials: wgpu::Buffer,
    /// Partials entries per slot.
    pub(super) groups: u32,
    /// The host's scalars for the kernels (α, β, ω, …).
    pub(super) coef: wgpu::Buffer,
    send_idx: wgpu::Buffer,
    pub(super) send: wgpu::Buffer,
    pub(super) send_len: usize,
    pub(super) jacobi: bool,
    wg: usize,
}

impl<T: Scalar> BlockCore<T> {
    /// Uploads `local` to `engine`'s device with `slots` partial-sum slots; `send` lists the
    /// owned entries other blocks read.
    pub(super) fn new(
        engine: Engine,
        local: LocalPart<T>,
        send: &[u32],
        slots: u32,
        jacobi: bool,
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
        let groups = engine.reduction_groups(nloc);
        let partials =
            engine.storage_zeroed::<[T; 4]>("dist partials", (slots * groups) as usize)?;
        let coef = engine.storage_zeroed::<T>("dist coef", 4)?;
        let send_idx = engine.storage_from("dist send_idx", send)?;
        let send_buf = poisoned::<T>(&engine, "dist send", send.len())?;
        let wg = engine.shader_config(T::PRECISION).workgroup_size as usize;
        Ok(BlockCore {
            engine,
            local,
            row_ptr,
            cols,
            vals,
            cols_hi,
            vals_hi,
            split_at,
            partials,
            groups,
            coef,
            send_idx,
            send: send_buf,
            send_len: send.len(),
            jacobi,
            wg,
        })
    }

    /// Whether the block's matrix went over two bindings.
    pub(super) fn split(&self) -> bool {
        self.split_at < self.local.nnz()
    }

    /// Compiles kernel `name` for `T`.
    pub(super) fn kernel(&self, name: &str) -> Result<Kernel> {
        self.pool_kernel(name, 1)
    }

    /// [`Self::kernel`] for a kernel on a pool (`lib/dist_pool.wgsl`) over `parts` bindings.
    pub(super) fn pool_kernel(&self, name: &str, parts: u8) -> Result<Kernel> {
        let config = crate::gpu::ShaderConfig {
            pool_parts: parts,
            ..self.engine.shader_config(T::PRECISION)
        };
        solver_kernel::<T>(&self.engine, name, config)
    }

    /// A launch of `kernel` over `rows`, writing its sums to `slot`, with the block's
    /// matrix, partials, coefficients and send list bound beside `vectors`. `None` when the
    /// range is empty.
    pub(super) fn launch(
        &self,
        kernel: &Kernel,
        rows: Rows,
        slot: Option<u32>,
        vectors: &[(u32, &wgpu::Buffer)],
    ) -> Option<Launch> {
        self.launch_quads(kernel, rows, slot, 1, vectors)
    }

    /// [`Self::launch`] for a kernel that writes several quads of sums, quad q to slot
    /// `slot + q · quad_stride` ([`Launch::set_quads`] says how many).
    pub(super) fn launch_quads(
        &self,
        kernel: &Kernel,
        rows: Rows,
        slot: Option<u32>,
        quad_stride: u32,
        vectors: &[(u32, &wgpu::Buffer)],
    ) -> Option<Launch> {
        let nloc = self.local.nloc();
        let (begin, end, count) = match rows {
            Rows::All => (0, nloc, 0),
            Rows::Interior => (0, self.local.interior, 0),
            Rows::Boundary => (self.local.interior, nloc, 0),
            Rows::Send => (0, 0, self.send_len),
        };
        let items = (end - begin).max(count);
        if items == 0 {
            return None;
        }
        let params = DistParams {
            begin: begin as u32,
            end: end as u32,
            groups: self.groups,
            slot: slot.unwrap_or(0),
            jacobi: self.jacobi as u32,
            split: self.split_at as u32,
            count: count as u32,
            quad_stride,
        };
        let uniform = self.engine.uniform_from("dist params", &params);
        let mut entries: Vec<(u32, &wgpu::Buffer)> = vec![
            (1, &self.partials),
            (5, &self.row_ptr),
            (6, &self.cols),
            (7, &self.vals),
            (11, &self.cols_hi),
            (12, &self.vals_hi),
            (13, &self.coef),
            (14, &self.send_idx),
            (15, &uniform),
            (16, &self.send),
        ];
        entries.extend_from_slice(vectors);
        let bind = self.engine.bind_group_at(kernel, &entries);
        Some(Launch {
            kernel: kernel.clone(),
            bind,
            groups: (items.div_ceil(self.wg) as u32).clamp(1, self.groups),
            slot,
            quad_stride,
            quads: std::cell::Cell::new(1),
        })
    }

    /// Workgroups whose sums `launch` leaves in its slot.
    fn used_groups(launch: &Option<Launch>) -> usize {
        launch.as_ref().map_or(0, |l| l.groups as usize)
    }

    /// Every quad of sums `launch` left in its slots (4 values per quad), added over
    /// workgroups in f64, from `partials`; empty when it did not run.
    pub(super) fn sums_wide(&self, partials: &Partials<T>, launch: &Option<Launch>) -> Vec<f64> {
        let Some((l, slot)) = launch.as_ref().and_then(|l| l.slot.map(|s| (l, s))) else {
            return Vec::new();
        };
        let mut s = vec![0.0; 4 * l.quads.get() as usize];
        for q in 0..l.quads.get() {
            let base = ((slot + q * l.quad_stride - partials.first) * self.groups) as usize;
            for g in 0..l.groups as usize {
                for c in 0..4 {
                    s[4 * q as usize + c] += partials.data[4 * (base + g) + c].as_f64();
                }
            }
        }
        s
    }

    /// Components 0–2 of the sums the launches left in their slots, added over workgroups and
    /// launches in f64, from `partials` (slots `first..` as a phase reads them).
    pub(super) fn sums(&self, partials: &Partials<T>, launches: &[&Option<Launch>]) -> [f64; 3] {
        let mut s = [0.0; 3];
        for launch in launches {
            let Some(slot) = launch.as_ref().and_then(|l| l.slot) else {
                continue;
            };
            let base = ((slot - partials.first) * self.groups) as usize;
            for g in 0..Self::used_groups(launch) {
                for (c, v) in s.iter_mut().enumerate() {
                    *v += partials.data[4 * (base + g) + c].as_f64();
                }
            }
        }
        s
    }

    /// The slots `launches` write, as the range a phase reads back (one slot when none does:
    /// the read is the phase's synchronisation all the same).
    pub(super) fn slot_range(launches: &[&Option<Launch>]) -> std::ops::Range<u32> {
        let first = launches
            .iter()
            .filter_map(|l| l.as_ref().and_then(|l| l.slot));
        let last = launches
            .iter()
            .filter_map(|l| l.as_ref().and_then(Launch::last_slot));
        match (first.min(), last.max()) {
            (Some(lo), Some(hi)) => lo..hi + 1,
            _ => 0..1,
        }
    }
}

/// Partial sums read back by a phase: slots `first..` of a block's partials buffer.
pub(super) struct Partials<T> {
    pub(super) first: u32,
    pub(super) data: Vec<T>,
}

/// A vector of `len` entries (at least one) poisoned with NaN: an entry the solve never writes
/// shows as NaN.
pub(super) fn poisoned<T: Scalar>(
    engine: &Engine,
    label: &str,
    len: usize,
) -> Result<wgpu::Buffer> {
    engine.storage_from(label, &vec![T::from_f64(f64::NAN); len.max(1)])
}
