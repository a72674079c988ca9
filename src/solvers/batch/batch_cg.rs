//! Host side of the batched CG kernels `batch_cg` (one right-hand side per work item) and
//! `batch_cg_block` (a block of four right-hand sides of one matrix per item), both built on
//! `shaders/lib/batch_cg.wgsl`: the layout of a part of the batch in the kernels' seven
//! storage bindings, the upload (written straight into mapped buffers, matrices in parallel),
//! and the bind groups of the launches.

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::solver_kernel;
use crate::gpu::{Engine, Kernel};
use crate::matrix::Csr;

/// Words of an item record in the `index` binding (`ITEM_WORDS` of the WGSL piece).
pub const ITEM_WORDS: usize = 8;
/// Vector regions of the `vecs` binding: x, b, r, p, q.
pub const VECTORS: usize = 5;
/// Entries (vec4s) per item of the `sums` binding: ρ, ‖r‖², threshold².
pub const SUMS: usize = 3;
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

/// Which kernel an item runs on, and with how many threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ItemKind {
    /// A block of four right-hand sides (`batch_cg_block`) rather than one (`batch_cg`).
    pub block: bool,
    /// Threads of the item's workgroup.
    pub threads: u32,
}

impl ItemKind {
    /// Columns per item: 1 or 4.
    pub fn lanes(self) -> usize {
        if self.block { 4 } else { 1 }
    }

    pub fn kernel(self) -> &'static str {
        if self.block {
            "batch_cg_block"
        } else {
            "batch_cg"
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

/// A system as a part's layout needs it.
pub struct PackSystem<'a, T> {
    pub a: &'a Csr<T>,
    pub rhs: &'a [&'a [T]],
    /// D⁻¹ for Jacobi.
    pub dinv: Option<&'a [T]>,
    /// threshold² per right-hand side.
    pub thresholds2: &'a [f64],
}

/// Where everything of one part lives in the kernels' bindings. Matrices used by several
/// items (the blocks of one system) are stored once.
pub struct Layout {
    /// The part's matrices (system indices), in order of first use.
    pub matrices: Vec<usize>,
    /// Per item: the matrix (index into `matrices`).
    pub matrix_of_item: Vec<usize>,
    /// Per matrix: offset of its row pointers in `index`, of its values and D⁻¹ in `reals`.
    pub ptr_at: Vec<usize>,
    pub values_at: Vec<usize>,
    pub diag_at: Vec<usize>,
    /// Offset of the column indices in `index`.
    pub col_base: usize,
    /// Rows of all items: one vector region of `vecs`, in columns.
    pub rows: usize,
    /// Offset of each item's rows in a region.
    pub row_offset: Vec<usize>,
    /// Per item [status, iterations] as 2 × 4 words.
    pub flags: Vec<u32>,
    pub lanes: usize,
}

impl Layout {
    pub fn new<T: Scalar>(kind: ItemKind, items: &[Item], systems: &[PackSystem<'_, T>]) -> Self {
        let lanes = kind.lanes();
        let mut slot: Vec<Option<usize>> = vec![None; systems.len()];
        let mut matrices = Vec::new();
        let mut matrix_of_item = Vec::with_capacity(items.len());
        for it in items {
            let m = *slot[it.system].get_or_insert_with(|| {
                matrices.push(it.system);
                matrices.len() - 1
            });
            matrix_of_item.push(m);
        }
        let (mut ptr_at, mut values_at) = (Vec::new(), Vec::new());
        let (mut w, mut v) = (items.len() * ITEM_WORDS, 0usize);
        for &s in &matrices {
            ptr_at.push(w);
            values_at.push(v);
            w += systems[s].a.nrows() + 1;
            v += systems[s].a.nnz();
        }
        let mut diag_at = Vec::new();
        for &s in &matrices {
            diag_at.push(v);
            if systems[s].dinv.is_some() {
                v += systems[s].a.nrows();
            }
        }
        let mut row_offset = Vec::with_capacity(items.len());
        let mut rows = 0usize;
        for it in items {
            row_offset.push(rows);
            rows += systems[it.system].a.nrows();
        }
        let mut flags = vec![0u32; 8 * items.len()];
        for (i, it) in items.iter().enumerate() {
            for lane in 0..lanes {
                flags[8 * i + lane] = if lane < it.count {
                    STATUS_RUNNING
                } else {
                    STATUS_IDLE
                };
            }
        }
        Layout {
            matrices,
            matrix_of_item,
            ptr_at,
            values_at,
            diag_at,
            col_base: w,
            rows,
            row_offset,
            flags,
            lanes,
        }
    }

    /// Columns of one vector region (rows × lanes), in `T`s.
    pub fn stride(&self) -> usize {
        self.rows * self.lanes
    }
}

/// The bytes each large binding of a part takes (`index`, `reals`, `vecs`, history): the
/// part must keep each within the adapter's binding limit.
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
        4 * (items * ITEM_WORDS + matrices_rows + nnz) as u64,
        t * (nnz + matrices_rows) as u64,
        t * (VECTORS * rows * lanes) as u64,
        t * (items * lanes * history_len) as u64,
    ]
}

/// The buffers and the two bind groups (start from x; go on) of one uploaded part.
pub struct PartBuffers {
    pub kernel: Kernel,
    /// `state[0]`: items stopped (bound as solver_state.wgsl's `state`).
    pub state: wgpu::Buffer,
    /// ‖r‖² per iteration, iteration-major: entry (k, slot) at k · slots + slot, slot =
    /// lanes · item + lane.
    pub history: wgpu::Buffer,
    pub vecs: wgpu::Buffer,
    pub flags: wgpu::Buffer,
    pub bg_start: wgpu::BindGroup,
    pub bg_go_on: wgpu::BindGroup,
    pub items: u32,
    pub groups: u32,
}

/// What a part's launches are asked to do.
pub struct LaunchSpec {
    pub jacobi: bool,
    pub max_iter: usize,
    pub history_len: usize,
    /// Iterations per launch.
    pub iters: usize,
}

impl PartBuffers {
    /// Uploads a part: the matrices, D⁻¹ and right-hand sides written straight into mapped
    /// buffers (one counted upload each, matrices in parallel), statuses and thresholds;
    /// x, r, p, q and the history start as zeros on the device.
    pub fn upload<T: Scalar>(
        engine: &Engine,
        kind: ItemKind,
        items: &[Item],
        systems: &[PackSystem<'_, T>],
        lay: &Layout,
        spec: &LaunchSpec,
    ) -> Result<Self> {
        let cfg = crate::gpu::ShaderConfig {
            workgroup_size: kind.threads,
            ..engine.shader_config(T::PRECISION)
        };
        let kernel = solver_kernel::<T>(engine, kind.kernel(), cfg)?;
        let lanes = lay.lanes;
        let mats = &lay.matrices;
        // index: item records | row pointers per matrix | column indices per matrix.
        let mut segments = vec![items.len() * ITEM_WORDS];
        segments.extend(mats.iter().map(|&s| systems[s].a.nrows() + 1));
        segments.extend(mats.iter().map(|&s| systems[s].a.nnz()));
        let index = engine.storage_segments::<u32>("batch index", &segments, |seg, w| {
            if seg == 0 {
                for (i, it) in items.iter().enumerate() {
                    let m = lay.matrix_of_item[i];
                    w.put(&[
                        systems[it.system].a.nrows() as u32,
                        lay.ptr_at[m] as u32,
                        lay.row_offset[i] as u32,
                        lay.diag_at[m] as u32,
                        it.count as u32,
                        0,
                        0,
                        0,
                    ]);
                }
            } else if seg <= mats.len() {
                let m = seg - 1;
                let base = lay.values_at[m] as u32;
                let ptr: Vec<u32> = systems[mats[m]]
                    .a
                    .row_ptr()
                    .iter()
                    .map(|p| base + p)
                    .collect();
                w.put(&ptr);
            } else {
                w.put(systems[mats[seg - 1 - mats.len()]].a.col_idx());
            }
        })?;
        // reals: values per matrix | D⁻¹ per matrix (Jacobi).
        let mut segments: Vec<usize> = mats.iter().map(|&s| systems[s].a.nnz()).collect();
        segments.extend(mats.iter().map(|&s| systems[s].dinv.map_or(0, |d| d.len())));
        let reals = engine.storage_segments::<T>("batch reals", &segments, |seg, w| {
            if seg < mats.len() {
                w.put(systems[mats[seg]].a.values());
            } else if let Some(d) = systems[mats[seg - mats.len()]].dinv {
                w.put(d);
            }
        })?;
        // vecs: x | b | r | p | q, each `stride` long; only b holds data (the rest stays
        // zero: wgpu zero-initialises buffers).
        let stride = lay.stride();
        let vecs = engine.storage_zeroed::<T>("batch vectors", VECTORS * stride)?;
        let segments: Vec<usize> = items
            .iter()
            .map(|it| systems[it.system].a.nrows() * lanes)
            .collect();
        engine.write_segments::<T>(&vecs, stride, &segments, |seg, w| {
            let it = items[seg];
            let rhs = systems[it.system].rhs;
            if lanes == 1 {
                w.put(rhs[it.first]);
                return;
            }
            let n = systems[it.system].a.nrows();
            let mut block = vec![T::zero(); n * lanes];
            for lane in 0..it.count {
                for (row, v) in rhs[it.first + lane].iter().enumerate() {
                    block[row * lanes + lane] = *v;
                }
            }
            w.put(&block);
        })?;
        let flags = engine.storage_from("batch flags", &lay.flags)?;
        let mut sums = vec![T::zero(); 4 * SUMS * items.len()];
        for (i, it) in items.iter().enumerate() {
            for lane in 0..it.count {
                // The threshold² is entry 2 of the item.
                sums[4 * SUMS * i + 8 + lane] =
                    T::from_f64(systems[it.system].thresholds2[it.first + lane]);
            }
        }
        let sums = engine.storage_from("batch sums", &sums)?;
        let state = engine.storage_zeroed::<u32>("batch state", 4)?;
        let history = engine.storage_zeroed::<T>(
            "batch history",
            (items.len() * lanes * spec.history_len).max(1),
        )?;
        let params = |init: u32| BatchParams {
            items: items.len() as u32,
            iters: spec.iters as u32,
            max_iter: spec.max_iter.min(u32::MAX as usize) as u32,
            history_len: spec.history_len as u32,
            init,
            jacobi: spec.jacobi as u32,
            col_base: lay.col_base as u32,
            stride: lay.rows as u32,
        };
        let p_start = engine.uniform_from("batch params (start)", &params(1));
        let p_go_on = engine.uniform_from("batch params", &params(0));
        let bind = |p: &wgpu::Buffer| {
            engine.bind_group_at(
                &kernel,
                &[
                    (0, &state),
                    (3, &history),
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
        let max_groups = engine.groups_per_dimension();
        Ok(PartBuffers {
            groups: (items.len() as u32).min(max_groups),
            kernel,
            state,
            history,
            vecs,
            flags,
            bg_start,
            bg_go_on,
            items: items.len() as u32,
        })
    }
}

/// Threads per workgroup for an item of `rows` rows: about four rows per thread, from 256 up
/// to the most the adapter allows for `T` (invocations, and the reduction's workgroup memory
/// of one `vec4<T>` per thread), a power of two. Depends on the item alone, so an item runs
/// the same arithmetic in any batch.
pub fn threads_for<T: Scalar>(engine: &Engine, rows: usize) -> u32 {
    let limits = &engine.context().limits;
    let vec4 = 4 * std::mem::size_of::<T>() as u32;
    // A few hundred bytes of the kernel's other workgroup variables.
    let by_memory = limits
        .max_compute_workgroup_storage_size
        .saturating_sub(512)
        / vec4;
    let cap = 1024
        .min(limits.max_compute_invocations_per_workgroup)
        .min(by_memory);
    let cap = if cap == 0 {
        1
    } else {
        1 << (31 - cap.leading_zeros())
    };
    let base = engine.tuning().workgroup_size.min(cap);
    let want = (rows.div_ceil(4) as u32).next_power_of_two();
    want.clamp(base, cap.max(base))
}
