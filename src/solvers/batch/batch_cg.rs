//! Host side of the batched CG kernels `batch_cg` (one right-hand side per work item) and
//! `batch_cg_block` (a block of four right-hand sides of one matrix per item), both built on
//! `shaders/lib/batch_cg.wgsl`: packing a part of the batch into the kernels' seven storage
//! bindings, and the launches.

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{SolverBuffers, solver_kernel};
use crate::gpu::{Engine, Kernel};

/// Words of an item record in the `index` binding (`ITEM_WORDS` of the WGSL piece).
pub const ITEM_WORDS: usize = 8;
/// Vector regions of the `vecs` binding: x, b, r, p, q.
pub const VECTORS: usize = 5;
/// `STATUS_RUNNING` and `STATUS_IDLE` (a lane without a right-hand side).
pub const STATUS_RUNNING: u32 = 0;
pub const STATUS_IDLE: u32 = 6;

/// Mirrors `struct BatchParams` of the WGSL piece.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BatchParams {
    pub items: u32,
    pub iters: u32,
    pub max_iter: u32,
    pub history_len: u32,
    pub init: u32,
    pub jacobi: u32,
    pub col_base: u32,
    pub stride: u32,
}

/// Which kernel an item runs on: `lanes` columns per item (1 or 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    Single,
    Block,
}

impl ItemKind {
    pub fn lanes(self) -> usize {
        match self {
            ItemKind::Single => 1,
            ItemKind::Block => 4,
        }
    }

    pub fn kernel(self) -> &'static str {
        match self {
            ItemKind::Single => "batch_cg",
            ItemKind::Block => "batch_cg_block",
        }
    }
}

/// One work item: system `system`, its right-hand sides `first .. first + count`.
#[derive(Debug, Clone, Copy)]
pub struct Item {
    pub system: usize,
    pub first: usize,
    pub count: usize,
}

/// The host arrays of one part (items of one kind), ready to upload.
pub struct Packed<T> {
    pub index: Vec<u32>,
    pub reals: Vec<T>,
    /// The b region of the vectors (`lanes` entries per row); x, r, p and q start as zeros
    /// on the device.
    pub b: Vec<T>,
    /// Per item [status, iterations] as 2 × 4 words.
    pub flags: Vec<u32>,
    /// Per item [ρ, ‖r‖², threshold²] as 3 × 4 reals.
    pub sums: Vec<T>,
    pub col_base: u32,
    /// Rows × lanes of one vector region (x's length in `T`s).
    pub stride: usize,
    /// Offset of each item's rows in a region, in rows.
    pub row_offset: Vec<usize>,
}

/// The bytes each binding of a part takes: `index`, `reals`, `vecs`, `history` are the large
/// ones; the part must keep each within the adapter's binding limit.
pub fn part_bytes<T: Scalar>(
    rows: usize,
    nnz: usize,
    matrices_rows: usize,
    items: usize,
    lanes: usize,
    history_len: usize,
) -> [u64; 4] {
    let t = std::mem::size_of::<T>() as u64;
    [
        4 * (items * ITEM_WORDS + matrices_rows + 1 + nnz) as u64,
        t * (nnz + matrices_rows) as u64,
        t * (VECTORS * rows * lanes) as u64,
        t * (items * lanes * history_len) as u64,
    ]
}

/// A system as [`pack`] needs it.
pub struct PackSystem<'a, T> {
    pub a: &'a crate::matrix::Csr<T>,
    pub rhs: &'a [&'a [T]],
    /// D⁻¹ for Jacobi.
    pub dinv: Option<&'a [T]>,
    /// threshold² per right-hand side.
    pub thresholds2: &'a [f64],
}

/// Packs `items` (all of one kind) of the batch. Matrices used by several items are stored
/// once.
pub fn pack<T: Scalar>(kind: ItemKind, items: &[Item], systems: &[PackSystem<'_, T>]) -> Packed<T> {
    let lanes = kind.lanes();
    // Each matrix once, in order of first use.
    let mut mat_of: Vec<Option<usize>> = vec![None; systems.len()];
    let mut mats: Vec<usize> = Vec::new();
    for it in items {
        if mat_of[it.system].is_none() {
            mat_of[it.system] = Some(mats.len());
            mats.push(it.system);
        }
    }
    let header = items.len() * ITEM_WORDS;
    let ptr_words: usize = mats.iter().map(|&s| systems[s].a.nrows() + 1).sum();
    let nnz: usize = mats.iter().map(|&s| systems[s].a.nnz()).sum();
    let col_base = header + ptr_words;
    let mut index = vec![0u32; col_base + nnz];
    let mut reals: Vec<T> = Vec::with_capacity(nnz + mats.len());
    let mut ptr_at = vec![0usize; mats.len()];
    let mut diag_at = vec![0usize; mats.len()];
    let mut w = header;
    for (m, &s) in mats.iter().enumerate() {
        let a = systems[s].a;
        ptr_at[m] = w;
        let base = reals.len();
        for (i, p) in a.row_ptr().iter().enumerate() {
            index[w + i] = (base + *p as usize) as u32;
        }
        w += a.nrows() + 1;
        for (k, c) in a.col_idx().iter().enumerate() {
            index[col_base + base + k] = *c;
        }
        reals.extend_from_slice(a.values());
    }
    for (m, &s) in mats.iter().enumerate() {
        diag_at[m] = reals.len();
        if let Some(d) = systems[s].dinv {
            reals.extend_from_slice(d);
        }
    }
    let mut row_offset = Vec::with_capacity(items.len());
    let mut rows = 0usize;
    for it in items {
        row_offset.push(rows);
        rows += systems[it.system].a.nrows();
    }
    let stride = rows * lanes;
    let mut b_region = vec![T::zero(); stride];
    let mut flags = vec![0u32; 8 * items.len()];
    let mut sums = vec![T::zero(); 12 * items.len()];
    for (i, it) in items.iter().enumerate() {
        let PackSystem {
            a,
            rhs,
            thresholds2,
            ..
        } = &systems[it.system];
        let m = mat_of[it.system].expect("packed matrix");
        let n = a.nrows();
        let rec = &mut index[i * ITEM_WORDS..(i + 1) * ITEM_WORDS];
        rec[0] = n as u32;
        rec[1] = ptr_at[m] as u32;
        rec[2] = row_offset[i] as u32;
        rec[3] = diag_at[m] as u32;
        rec[4] = it.count as u32;
        for lane in 0..lanes {
            let active = lane < it.count;
            flags[8 * i + lane] = if active { STATUS_RUNNING } else { STATUS_IDLE };
            if active {
                let b = rhs[it.first + lane];
                for (row, v) in b.iter().enumerate() {
                    b_region[(row_offset[i] + row) * lanes + lane] = *v;
                }
                sums[12 * i + 8 + lane] = T::from_f64(thresholds2[it.first + lane]);
            }
        }
    }
    Packed {
        index,
        reals,
        b: b_region,
        flags,
        sums,
        col_base: col_base as u32,
        stride,
        row_offset,
    }
}

/// The buffers and the two bind groups (start from x; go on) of one uploaded part.
pub struct PartBuffers {
    pub kernel: Kernel,
    pub solver: SolverBuffers,
    pub vecs: wgpu::Buffer,
    pub flags: wgpu::Buffer,
    pub bg_start: wgpu::BindGroup,
    pub bg_go_on: wgpu::BindGroup,
    pub items: u32,
    pub groups: u32,
}

impl PartBuffers {
    /// Uploads a packed part (one counted upload per buffer) and builds its bind groups;
    /// each launch runs at most `iters` iterations of every item.
    #[allow(clippy::too_many_arguments)]
    pub fn upload<T: Scalar>(
        engine: &Engine,
        kind: ItemKind,
        packed: &Packed<T>,
        items: usize,
        jacobi: bool,
        max_iter: usize,
        history_len: usize,
        iters: usize,
    ) -> Result<Self> {
        let cfg = engine.shader_config(T::PRECISION);
        let kernel = solver_kernel::<T>(engine, kind.kernel(), cfg)?;
        // `state[0]` counts stopped items; the history (poisoned −1) is solver_state's.
        let solver =
            SolverBuffers::new::<T>(engine, 1, 1, (items * kind.lanes() * history_len).max(1))?;
        let index = engine.storage_from("batch index", &packed.index)?;
        let reals = engine.storage_from("batch reals", &packed.reals)?;
        // Only b crosses the bus: x = 0 and r, p, q are the start launch's.
        let vecs = engine.storage_zeroed::<T>("batch vectors", VECTORS * packed.stride)?;
        engine.write(&vecs, packed.stride, &packed.b);
        let flags = engine.storage_from("batch flags", &packed.flags)?;
        let sums = engine.storage_from("batch sums", &packed.sums)?;
        let params = |init: u32| BatchParams {
            items: items as u32,
            iters: iters as u32,
            max_iter: max_iter.min(u32::MAX as usize) as u32,
            history_len: history_len as u32,
            init,
            jacobi: jacobi as u32,
            col_base: packed.col_base,
            stride: (packed.stride / kind.lanes()) as u32,
        };
        let p_start = engine.uniform_from("batch params (start)", &params(1));
        let p_go_on = engine.uniform_from("batch params", &params(0));
        let bind = |p: &wgpu::Buffer| {
            engine.bind_group_at(
                &kernel,
                &[
                    (0, &solver.state),
                    (3, &solver.history),
                    (5, p),
                    (6, &index),
                    (7, &reals),
                    (8, &vecs),
                    (9, &flags),
                    (10, &sums),
                ],
            )
        };
        let bg_start = bind(&p_start);
        let bg_go_on = bind(&p_go_on);
        let max_groups = engine
            .context()
            .limits
            .max_compute_workgroups_per_dimension
            .max(1);
        Ok(PartBuffers {
            groups: (items as u32).min(max_groups),
            kernel,
            solver,
            vecs,
            flags,
            bg_start,
            bg_go_on,
            items: items as u32,
        })
    }
}
