//! SELL-C-σ storage: ELL in slices of `C` rows, each slice padded only to its own longest row,
//! with rows sorted by length inside windows of `σ` rows so that a slice's rows are alike.

use super::Csr;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;

/// A sparse matrix in SELL-C-σ form.
///
/// Layout (the SELL kernels depend on it exactly):
///
/// * **Sorting.** Rows are grouped into windows of `σ` consecutive rows (`w·σ .. w·σ + σ`,
///   the last one shorter). Within each window the rows are stably sorted by length, longest
///   first, and placed in the window's own slots: `perm[slot]` is the original row stored in
///   `slot`. There are `nslots = nslices·C` slots, `nslices = ceil(nrows / C)`; the padding
///   slots `nrows .. nslots` have `perm = u32::MAX` and length 0.
/// * **Slices.** Slice `s` is the slots `s·C .. s·C + C`. It stores `len_s` entries per slot,
///   `len_s` the longest row length among its slots, in `C·len_s` consecutive entries starting
///   at `slice_ptr[s]` (`slice_ptr`: `u32`, length `nslices + 1`, counted in entries).
/// * **Entries.** Entry `k` (the row's `k`-th CSR entry, columns ascending) of slot `j` (slice
///   `s = j / C`, lane `j % C`) is at `slice_ptr[s] + k·C + lane`, in `col_idx` (`u32`) and
///   `values`. Entries `k ≥ row length` (and all of a padding slot) are padding: column 0,
///   value 0.
///
/// A kernel runs one thread per slot, sums `k = 0 .. len_s` in order and writes
/// `y[perm[slot]]` unless `perm[slot] == u32::MAX`, as [`Sell::mul_vec`] does.
///
/// ```
/// use krylov_wgpu::matrix::{Csr, Sell};
/// // [[1, 0, 0], [2, 3, 4], [0, 5, 0]]
/// let a = Csr::<f64>::new(3, 3, vec![0, 1, 4, 5], vec![0, 0, 1, 2, 1], vec![1.0, 2.0, 3.0, 4.0, 5.0])?;
/// let s = Sell::from_csr(&a, 2, 2, 3.0)?;
/// assert_eq!(s.perm(), &[1, 0, 2, u32::MAX]); // window {0, 1} sorted, window {2} alone
/// assert_eq!(s.slice_ptr(), &[0, 6, 8]);
/// assert_eq!(s.mul_vec(&[1.0, 1.0, 1.0]), vec![1.0, 9.0, 5.0]);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Sell<T> {
    nrows: usize,
    ncols: usize,
    nnz: usize,
    c: usize,
    sigma: usize,
    slice_ptr: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    perm: Vec<u32>,
}

impl<T: Scalar> Sell<T> {
    /// Converts a CSR matrix (square or not) with slice height `c` and sorting window `sigma`.
    ///
    /// # Errors
    /// [`KrylovError::InvalidOption`] when `c = 0`, when `sigma` is not a positive multiple of
    /// `c`, when the padded storage would exceed `max_padding` times the CSR entry count, or when
    /// the storage or the slot count exceeds `u32` indexing.
    pub fn from_csr(a: &Csr<T>, c: usize, sigma: usize, max_padding: f64) -> Result<Self> {
        if c == 0 {
            return Err(KrylovError::InvalidOption(
                "SELL slice height C must be at least 1".into(),
            ));
        }
        if sigma == 0 || !sigma.is_multiple_of(c) {
            return Err(KrylovError::InvalidOption(format!(
                "SELL sorting window σ = {sigma} must be a positive multiple of the slice height C = {c}"
            )));
        }
        let n = a.nrows();
        let nslices = n.div_ceil(c);
        let nslots = nslices as u128 * c as u128;
        if nslots > u32::MAX as u128 {
            return Err(KrylovError::InvalidOption(format!(
                "SELL with C = {c} needs {nslots} slots, over u32 indexing"
            )));
        }
        let nslots = nslots as usize;
        let rp = a.row_ptr();
        let len = |i: usize| (rp[i + 1] - rp[i]) as usize;

        // Sort each window, longest first (stable: ties keep the original order).
        let mut perm: Vec<u32> = (0..n as u32).collect();
        for window in perm.chunks_mut(sigma) {
            window.sort_by_key(|&i| std::cmp::Reverse(len(i as usize)));
        }
        perm.resize(nslots, u32::MAX);

        let slot_len = |j: usize| match perm[j] {
            u32::MAX => 0,
            i => len(i as usize),
        };
        let mut slice_ptr = Vec::with_capacity(nslices + 1);
        slice_ptr.push(0u128);
        let mut total: u128 = 0;
        for s in 0..nslices {
            let w = (s * c..s * c + c).map(slot_len).max().unwrap_or(0);
            total += (w * c) as u128;
            slice_ptr.push(total);
        }
        if a.nnz() > 0 && total as f64 > max_padding * a.nnz() as f64 {
            let (_, _, longest) = a.row_length_stats();
            return Err(KrylovError::InvalidOption(format!(
                "SELL-{c}-{sigma} would store {total} entries for {} non-zeros (longest row {longest}), over the padding budget of {max_padding}×",
                a.nnz()
            )));
        }
        if total > u32::MAX as u128 {
            return Err(KrylovError::InvalidOption(format!(
                "SELL storage of {total} entries exceeds u32 indexing"
            )));
        }
        let slice_ptr: Vec<u32> = slice_ptr.into_iter().map(|p| p as u32).collect();
        let total = total as usize;
        let mut col_idx = vec![0u32; total];
        let mut values = vec![T::zero(); total];
        for (j, &row) in perm.iter().enumerate() {
            if row == u32::MAX {
                continue;
            }
            let base = slice_ptr[j / c] as usize + j % c;
            let (cols, vals) = a.row(row as usize);
            for (k, (&col, &v)) in cols.iter().zip(vals).enumerate() {
                col_idx[base + k * c] = col;
                values[base + k * c] = v;
            }
        }
        Ok(Sell {
            nrows: n,
            ncols: a.ncols(),
            nnz: a.nnz(),
            c,
            sigma,
            slice_ptr,
            col_idx,
            values,
            perm,
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
    /// Slice height C (slots per slice).
    pub fn c(&self) -> usize {
        self.c
    }
    /// Sorting window σ (rows).
    pub fn sigma(&self) -> usize {
        self.sigma
    }
    /// Number of slices, `ceil(nrows / C)`.
    pub fn nslices(&self) -> usize {
        self.slice_ptr.len() - 1
    }
    /// Number of slots, `nslices·C` (≥ nrows).
    pub fn nslots(&self) -> usize {
        self.perm.len()
    }
    /// Start of each slice in entries (`nslices + 1` values, the last the total).
    pub fn slice_ptr(&self) -> &[u32] {
        &self.slice_ptr
    }
    /// Column index of each stored entry (0 in the padding).
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Value of each stored entry (0 in the padding).
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Original row of each slot, `u32::MAX` for the padding slots.
    pub fn perm(&self) -> &[u32] {
        &self.perm
    }
    /// Bytes of the four arrays.
    pub fn storage_bytes(&self) -> usize {
        4 * (self.slice_ptr.len() + self.col_idx.len() + self.perm.len())
            + std::mem::size_of::<T>() * self.values.len()
    }

    /// y = A·x in `T`, returned in the original row order; each row sums its slice's
    /// `k = 0 .. len_s` entries (padding included) in stored order, as the SELL kernel does.
    ///
    /// # Panics
    /// If `x` is shorter than a column index it needs.
    pub fn mul_vec(&self, x: &[T]) -> Vec<T> {
        let c = self.c;
        let mut y = vec![T::zero(); self.nrows];
        for (j, &row) in self.perm.iter().enumerate() {
            if row == u32::MAX {
                continue;
            }
            let s = j / c;
            let (start, end) = (self.slice_ptr[s] as usize, self.slice_ptr[s + 1] as usize);
            let mut acc = T::zero();
            for idx in (start + j % c..end).step_by(c) {
                acc += self.values[idx] * x[self.col_idx[idx] as usize];
            }
            y[row as usize] = acc;
        }
        y
    }
}
