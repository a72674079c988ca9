//! Block CSR storage laid out for the multiple-block-row (MBR) mapping of paper 003 §3.3–3.6:
//! N×N dense blocks, block rows sorted by length (§3.5), padded per workgroup and reordered so
//! that the blocks one workgroup loads in one step are contiguous (§3.4), `Bx` blocks per block
//! row and step (§3.6).

use super::Csr;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;

/// The block sizes N the BCSR kernels support.
pub const BCSR_BLOCK_SIZES: [usize; 4] = [1, 2, 4, 8];

/// The largest workgroup [`Bcsr::from_csr`] accepts (D3D12's and Metal's limit on invocations
/// per workgroup; WebGPU's default limit is 256).
pub const BCSR_MAX_WORKGROUP: usize = 1024;

/// A sparse matrix in BCSR form with the MBR layout of paper 003.
///
/// Definitions (N = [`n_block`](Bcsr::n_block)):
///
/// * `nbr = ceil(nrows / N)` block rows; an entry `(i, j)` lies in block row `i / N` and block
///   column `j / N`. A block is N×N values row-major: `value[r·N + c] = A[br·N + r, bc·N + c]`,
///   with explicit zeros where the matrix has no entry, and 0 beyond `nrows` / `ncols`.
/// * `by = workgroup_size / (Bx·N²)` block rows per pass (one pass = one GPU workgroup).
///
/// Layout (the BCSR kernels depend on it exactly):
///
/// * **Block-row sorting (§3.5).** Block rows are stably sorted by their number of non-empty
///   blocks, longest first: `block_row[slot]` is the original block row stored in `slot` (the
///   "extra row index"). The slots are padded to `npasses·by` with `u32::MAX`,
///   `npasses = ceil(nbr / by)`.
/// * **Passes and padding (§3.4).** Pass `p` covers slots `p·by .. p·by + by`. With `Br` the
///   largest number of blocks among its block rows, `steps_p = ceil(Br / Bx)` (0 if all are
///   empty), and every block row of the pass — the `u32::MAX` slots included — is padded with
///   empty blocks (block column 0, values 0) to `steps_p·Bx` blocks. `pass_ptr` (`u32`,
///   `npasses + 1` values, counted in blocks) has `pass_ptr[p+1] − pass_ptr[p] =
///   steps_p·by·Bx`.
/// * **Block reordering (§3.4).** Within pass `p`, block number
///   `pass_ptr[p] + (t·by + j)·Bx + q` is the `(t·Bx + q)`-th block (block columns ascending)
///   of slot `p·by + j`, loaded at step `t`: the `by·Bx` blocks a workgroup loads in one step
///   are contiguous.
/// * **Arrays.** `pass_ptr`, `block_col` (`u32`, one per stored block), `values`
///   (`N²` per stored block, block after block, so block `b` is `values[b·N² .. b·N² + N²]`),
///   `block_row`.
///
/// [`Bcsr::mul_vec`] walks this layout the way a GPU thread does.
///
/// ```
/// use krylov_wgpu::matrix::{Bcsr, Csr};
/// // [[1, 2, 0], [0, 3, 0], [0, 0, 4]] in 2×2 blocks: block row 0 = {block col 0},
/// // block row 1 = {block col 1}; one pass of by = 16 / (1·4) = 4 slots.
/// let a = Csr::<f64>::new(3, 3, vec![0, 2, 3, 4], vec![0, 1, 1, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let b = Bcsr::from_csr(&a, 2, 1, 16, 4.0)?;
/// assert_eq!((b.by(), b.npasses()), (4, 1));
/// assert_eq!(b.block_row(), &[0, 1, u32::MAX, u32::MAX]);
/// assert_eq!(b.pass_ptr(), &[0, 4]);
/// assert_eq!(b.block_col(), &[0, 1, 0, 0]);
/// assert_eq!(&b.values()[..8], &[1.0, 2.0, 0.0, 3.0, 4.0, 0.0, 0.0, 0.0]);
/// assert_eq!(b.density(), 0.5);
/// assert_eq!(b.mul_vec(&[1.0, 1.0, 1.0]), vec![3.0, 3.0, 4.0]);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Bcsr<T> {
    nrows: usize,
    ncols: usize,
    nnz: usize,
    n_block: usize,
    bx: usize,
    by: usize,
    nonempty_blocks: usize,
    pass_ptr: Vec<u32>,
    block_col: Vec<u32>,
    values: Vec<T>,
    block_row: Vec<u32>,
}

/// Calls `f(block_row, block_col)` once per distinct non-empty N×N block, block rows in order,
/// each block row's block columns in first-seen order. `marker` has one slot per block column.
fn for_each_block<T: Scalar>(a: &Csr<T>, n_block: usize, mut f: impl FnMut(usize, u32)) {
    let nbr = a.nrows().div_ceil(n_block);
    let nbc = a.ncols().div_ceil(n_block);
    let rp = a.row_ptr();
    let ci = a.col_idx();
    let mut marker = vec![usize::MAX; nbc];
    for br in 0..nbr {
        let (lo, hi) = (br * n_block, (br * n_block + n_block).min(a.nrows()));
        for &c in &ci[rp[lo] as usize..rp[hi] as usize] {
            let bc = c as usize / n_block;
            if marker[bc] != br {
                marker[bc] = br;
                f(br, bc as u32);
            }
        }
    }
}

/// Block density `d_N = nnz / (N²·non-empty N×N blocks)` of paper 003 Table 4: the fraction of
/// the values BCSR stores (before padding) that are entries of `a`. 1 for a matrix without
/// entries. Cost O(nnz + ncols / N).
///
/// ```
/// use krylov_wgpu::matrix::{Csr, block_density};
/// let a = Csr::<f64>::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 1.0, 1.0])?;
/// assert_eq!(block_density(&a, 1), 1.0);
/// assert_eq!(block_density(&a, 2), 0.75);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
///
/// # Panics
/// If `n_block` is 0.
pub fn block_density<T: Scalar>(a: &Csr<T>, n_block: usize) -> f64 {
    assert!(n_block > 0, "block size must be at least 1");
    let mut blocks = 0usize;
    for_each_block(a, n_block, |_, _| blocks += 1);
    density_of(a.nnz(), n_block, blocks)
}

fn density_of(nnz: usize, n_block: usize, blocks: usize) -> f64 {
    if blocks == 0 {
        1.0
    } else {
        nnz as f64 / (n_block * n_block) as f64 / blocks as f64
    }
}

impl<T: Scalar> Bcsr<T> {
    /// Converts a CSR matrix (square or not) with `n_block`×`n_block` blocks, `bx` blocks per
    /// block row and step, for workgroups of `workgroup_size` threads.
    ///
    /// # Errors
    /// [`KrylovError::InvalidOption`] when `n_block` is not 1, 2, 4 or 8, `bx` is not a power of
    /// two, `bx·n_block²` exceeds `workgroup_size`, `workgroup_size` exceeds
    /// [`BCSR_MAX_WORKGROUP`], the stored values (padding included) would exceed `max_padding`
    /// times the CSR entry count, or the storage exceeds `u32` indexing.
    pub fn from_csr(
        a: &Csr<T>,
        n_block: usize,
        bx: usize,
        workgroup_size: usize,
        max_padding: f64,
    ) -> Result<Self> {
        if !BCSR_BLOCK_SIZES.contains(&n_block) {
            return Err(KrylovError::InvalidOption(format!(
                "BCSR block size N = {n_block} is not supported (expected 1, 2, 4 or 8)"
            )));
        }
        if !bx.is_power_of_two() {
            return Err(KrylovError::InvalidOption(format!(
                "BCSR blocks per step Bx = {bx} must be a power of two ≥ 1"
            )));
        }
        if workgroup_size > BCSR_MAX_WORKGROUP {
            return Err(KrylovError::InvalidOption(format!(
                "BCSR workgroup size {workgroup_size} exceeds {BCSR_MAX_WORKGROUP}, the most invocations per workgroup any adapter allows"
            )));
        }
        let nn = n_block * n_block;
        if bx.checked_mul(nn).is_none_or(|t| t > workgroup_size) {
            return Err(KrylovError::InvalidOption(format!(
                "BCSR needs Bx·N² = {bx}·{nn} threads per block row, more than the workgroup size {workgroup_size}"
            )));
        }
        let by = workgroup_size / (bx * nn);
        let (n, m) = (a.nrows(), a.ncols());
        let nbr = n.div_ceil(n_block);

        // Block structure: block columns of each block row, ascending (block CSR).
        let mut brow_ptr = vec![0usize; nbr + 1];
        let mut bcols: Vec<u32> = Vec::new();
        for_each_block(a, n_block, |br, bc| {
            brow_ptr[br + 1] += 1;
            bcols.push(bc);
        });
        for br in 0..nbr {
            brow_ptr[br + 1] += brow_ptr[br];
            bcols[brow_ptr[br]..brow_ptr[br + 1]].sort_unstable();
        }
        let nonempty_blocks = bcols.len();
        let count = |br: usize| brow_ptr[br + 1] - brow_ptr[br];

        // §3.5: block rows sorted by block count, longest first (stable), padded slots.
        let npasses = nbr.div_ceil(by);
        let mut block_row: Vec<u32> = (0..nbr as u32).collect();
        block_row.sort_by_key(|&br| std::cmp::Reverse(count(br as usize)));
        block_row.resize(npasses * by, u32::MAX);
        let slot_count = |slot: usize| match block_row[slot] {
            u32::MAX => 0,
            br => count(br as usize),
        };

        // §3.4: per-pass padding to steps_p·Bx blocks per slot.
        let mut steps = Vec::with_capacity(npasses);
        let mut pass_ptr_wide = Vec::with_capacity(npasses + 1);
        pass_ptr_wide.push(0u128);
        let mut total: u128 = 0;
        for p in 0..npasses {
            let br_max = (p * by..p * by + by).map(slot_count).max().unwrap_or(0);
            let s = br_max.div_ceil(bx);
            steps.push(s);
            total += (s * by * bx) as u128;
            pass_ptr_wide.push(total);
        }
        let stored_values = total * nn as u128;
        if a.nnz() > 0 && stored_values as f64 > max_padding * a.nnz() as f64 {
            return Err(KrylovError::InvalidOption(format!(
                "BCSR with {n_block}×{n_block} blocks would store {stored_values} values ({total} blocks, {nonempty_blocks} non-empty, block density {:.3}) for {} non-zeros, over the padding budget of {max_padding}×",
                density_of(a.nnz(), n_block, nonempty_blocks),
                a.nnz()
            )));
        }
        if stored_values > u32::MAX as u128 {
            return Err(KrylovError::InvalidOption(format!(
                "BCSR storage of {stored_values} values exceeds u32 indexing"
            )));
        }
        let pass_ptr: Vec<u32> = pass_ptr_wide.into_iter().map(|p| p as u32).collect();
        let total = total as usize;

        // §3.4 reordering: block k of slot p·by + j goes to pass_ptr[p] + ((k / Bx)·by + j)·Bx
        // + k % Bx. `dest[b]` is the stored position of the b-th block in block CSR order.
        let mut block_col = vec![0u32; total];
        let mut dest = vec![0usize; nonempty_blocks];
        for p in 0..npasses {
            for j in 0..by {
                let br = block_row[p * by + j];
                if br == u32::MAX {
                    continue;
                }
                let br = br as usize;
                for k in 0..count(br) {
                    let pos = pass_ptr[p] as usize + ((k / bx) * by + j) * bx + k % bx;
                    block_col[pos] = bcols[brow_ptr[br] + k];
                    dest[brow_ptr[br] + k] = pos;
                }
            }
        }
        let mut values = vec![T::zero(); total * nn];
        for i in 0..n {
            let (br, r) = (i / n_block, i % n_block);
            let row_blocks = &bcols[brow_ptr[br]..brow_ptr[br + 1]];
            let (cols, vals) = a.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                let bc = c / n_block as u32;
                let k = row_blocks
                    .binary_search(&bc)
                    .expect("every entry's block was collected");
                let pos = dest[brow_ptr[br] + k];
                values[pos * nn + r * n_block + c as usize % n_block] = v;
            }
        }
        Ok(Bcsr {
            nrows: n,
            ncols: m,
            nnz: a.nnz(),
            n_block,
            bx,
            by,
            nonempty_blocks,
            pass_ptr,
            block_col,
            values,
            block_row,
        })
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Number of entries of the CSR matrix it was built from.
    pub fn nnz(&self) -> usize {
        self.nnz
    }
    /// Block size N (blocks are N×N).
    pub fn n_block(&self) -> usize {
        self.n_block
    }
    /// Blocks processed together per block row and step (Bx).
    pub fn bx(&self) -> usize {
        self.bx
    }
    /// Block rows per pass / workgroup (By = workgroup_size / (Bx·N²)).
    pub fn by(&self) -> usize {
        self.by
    }
    /// Number of passes (workgroups), `ceil(nbr / By)`.
    pub fn npasses(&self) -> usize {
        self.pass_ptr.len() - 1
    }
    /// Number of block rows, `ceil(nrows / N)`.
    pub fn nblock_rows(&self) -> usize {
        self.nrows.div_ceil(self.n_block)
    }
    /// Number of stored blocks, padding included.
    pub fn nblocks(&self) -> usize {
        self.block_col.len()
    }
    /// Number of non-empty blocks (blocks holding at least one entry).
    pub fn nonempty_blocks(&self) -> usize {
        self.nonempty_blocks
    }
    /// Number of empty blocks stored as padding (§3.4): `nblocks − nonempty_blocks`.
    pub fn padding_blocks(&self) -> usize {
        self.block_col.len() - self.nonempty_blocks
    }
    /// Block density `d_N = nnz / (N²·non-empty blocks)` (paper 003 Table 4); 1 without entries.
    pub fn density(&self) -> f64 {
        density_of(self.nnz, self.n_block, self.nonempty_blocks)
    }
    /// Steps of pass `p`: `(pass_ptr[p+1] − pass_ptr[p]) / (By·Bx)`.
    pub fn steps(&self, p: usize) -> usize {
        (self.pass_ptr[p + 1] - self.pass_ptr[p]) as usize / (self.by * self.bx)
    }
    /// First block of each pass (`npasses + 1` values, the last the block count).
    pub fn pass_ptr(&self) -> &[u32] {
        &self.pass_ptr
    }
    /// Block column of each stored block (0 for padding blocks).
    pub fn block_col(&self) -> &[u32] {
        &self.block_col
    }
    /// Block values, N² per block row-major, block after block.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Original block row of each slot, `u32::MAX` for padding slots.
    pub fn block_row(&self) -> &[u32] {
        &self.block_row
    }
    /// Bytes of the four arrays.
    pub fn storage_bytes(&self) -> usize {
        4 * (self.pass_ptr.len() + self.block_col.len() + self.block_row.len())
            + std::mem::size_of::<T>() * self.values.len()
    }

    /// y = A·x in `T`, walking the stored layout as a GPU thread does: for each pass, slot,
    /// step `t` and `q < Bx`, row `r` of the slot's block row accumulates
    /// `value[r·N + c]·x[bc·N + c]` over `c` (columns ≥ ncols skipped); rows ≥ nrows are dropped.
    /// Returned in the original row order.
    ///
    /// # Panics
    /// If `x` is shorter than a column index it needs.
    pub fn mul_vec(&self, x: &[T]) -> Vec<T> {
        let (nb, nn, by, bx) = (self.n_block, self.n_block * self.n_block, self.by, self.bx);
        let mut y = vec![T::zero(); self.nrows];
        let mut acc = vec![T::zero(); nb];
        for p in 0..self.npasses() {
            let steps = self.steps(p);
            for j in 0..by {
                let br = self.block_row[p * by + j];
                if br == u32::MAX {
                    continue;
                }
                acc.fill(T::zero());
                for t in 0..steps {
                    for q in 0..bx {
                        let b = self.pass_ptr[p] as usize + (t * by + j) * bx + q;
                        let col0 = self.block_col[b] as usize * nb;
                        let v = &self.values[b * nn..b * nn + nn];
                        for (r, a) in acc.iter_mut().enumerate() {
                            for c in 0..nb.min(self.ncols.saturating_sub(col0)) {
                                *a += v[r * nb + c] * x[col0 + c];
                            }
                        }
                    }
                }
                let row0 = br as usize * nb;
                for (r, &a) in acc.iter().enumerate() {
                    if row0 + r < self.nrows {
                        y[row0 + r] = a;
                    }
                }
            }
        }
        y
    }
}
