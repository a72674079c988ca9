//! Row partitions of a square matrix over several devices (issue #19): contiguous row blocks
//! balanced by non-zeros, each block's local matrix with its halo (the remote entries of x its
//! rows read), and the exchange plan that fills every halo from the blocks that own it.
//!
//! Pure host data: `solvers::dist` uploads each [`LocalPart`] to its own device and runs the
//! [`Exchange`] between products.
//!
//! ```
//! use krylov_wgpu::matrix::{generators, partition::{RowPartition, LocalPart, Exchange}};
//! let a = generators::poisson_2d_fd::<f64>(8); // 64 rows, 5-point stencil
//! let part = RowPartition::balanced(&a, 2)?;
//! let locals: Vec<_> = (0..2).map(|p| LocalPart::build(&a, &part, p)).collect();
//! // Each block reads one grid line (8 entries) of the other.
//! assert_eq!(locals[0].halo.len(), 8);
//! assert_eq!(Exchange::plan(&part, &locals).values(), 16);
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use std::ops::Range;

use rayon::prelude::*;

use super::csr::Csr;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;

/// Contiguous row blocks: part `p` owns rows `bounds[p]..bounds[p + 1]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowPartition {
    pub bounds: Vec<usize>,
}

impl RowPartition {
    /// `parts` blocks whose non-zero counts are as equal as whole rows allow (every block gets
    /// at least one row).
    pub fn balanced<T: Scalar>(a: &Csr<T>, parts: usize) -> Result<Self> {
        let n = a.nrows();
        if parts == 0 || parts > n {
            return Err(KrylovError::InvalidOption(format!(
                "cannot split {n} rows into {parts} parts (need 1 ≤ parts ≤ rows)"
            )));
        }
        let rp = a.row_ptr();
        let nnz = a.nnz() as f64;
        let mut bounds = vec![0usize];
        for p in 1..parts {
            let target = (nnz * p as f64 / parts as f64).round() as u32;
            // First row whose start reaches the target, kept strictly inside the remaining rows.
            let row = rp.partition_point(|&v| v < target);
            let lo = bounds[p - 1] + 1;
            let hi = n - (parts - p);
            bounds.push(row.clamp(lo, hi));
        }
        bounds.push(n);
        Ok(RowPartition { bounds })
    }

    /// A partition from explicit bounds (`0 = b₀ < b₁ < … < b_k = n`).
    pub fn from_bounds(n: usize, bounds: Vec<usize>) -> Result<Self> {
        let ok = bounds.len() >= 2
            && bounds[0] == 0
            && *bounds.last().expect("non-empty") == n
            && bounds.windows(2).all(|w| w[0] < w[1]);
        if !ok {
            return Err(KrylovError::InvalidOption(format!(
                "row bounds {bounds:?} are not 0 < … < {n} strictly increasing"
            )));
        }
        Ok(RowPartition { bounds })
    }

    /// Number of parts.
    pub fn parts(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Rows of part `p`.
    pub fn rows(&self, p: usize) -> Range<usize> {
        self.bounds[p]..self.bounds[p + 1]
    }

    /// The part owning global row (or column) `g`.
    pub fn owner(&self, g: usize) -> usize {
        self.bounds.partition_point(|&b| b <= g) - 1
    }
}

/// One block of rows in local numbering: its rows reordered interior first (rows that read
/// only owned entries), then boundary rows; columns renumbered so that owned columns follow
/// the rows' order and remote ones come after them as the halo, `nloc + h` for halo entry `h`.
/// The product of a block is then `y = A_loc · [x_loc; x_halo]` over a vector of
/// `nloc + halo.len()` entries, and the interior rows can run before the halo arrives.
#[derive(Debug, Clone)]
pub struct LocalPart<T> {
    /// Which part of the partition this is.
    pub part: usize,
    /// The global rows the part owns.
    pub rows: Range<usize>,
    /// Local index → global row.
    pub order: Vec<u32>,
    /// Rows `0..interior` (local numbering) read no halo entry.
    pub interior: usize,
    /// CSR of the block in local numbering: `nloc + 1` row pointers.
    pub row_ptr: Vec<u32>,
    pub col_idx: Vec<u32>,
    pub values: Vec<T>,
    /// Global column of each halo entry, ascending (so grouped by owner, in part order).
    pub halo: Vec<u32>,
}

impl<T: Scalar> LocalPart<T> {
    /// Builds part `p` of `partition` of `a` (in parallel over its rows: a block of 1e8 rows
    /// is one pass over its entries per core).
    pub fn build(a: &Csr<T>, partition: &RowPartition, p: usize) -> Self {
        const CHUNK: usize = 1 << 16;
        let rows = partition.rows(p);
        let nloc = rows.len();
        let (rp, ci, va) = (a.row_ptr(), a.col_idx(), a.values());
        let own = |c: u32| rows.contains(&(c as usize));
        let span = |g: usize| rp[g] as usize..rp[g + 1] as usize;
        let is_boundary = |g: &u32| ci[span(*g as usize)].iter().any(|&c| !own(c));
        // Interior rows then boundary rows, each ascending (rayon's partition keeps order).
        let (boundary, mut order): (Vec<u32>, Vec<u32>) = rows
            .clone()
            .into_par_iter()
            .map(|g| g as u32)
            .partition(is_boundary);
        let interior = order.len();
        order.extend(boundary);
        // Global row of this part → local index.
        let mut local = vec![0u32; nloc];
        for (i, &g) in order.iter().enumerate() {
            local[g as usize - rows.start] = i as u32;
        }
        let mut halo: Vec<u32> = order[interior..]
            .par_iter()
            .flat_map_iter(|&g| ci[span(g as usize)].iter().copied().filter(|&c| !own(c)))
            .collect();
        halo.par_sort_unstable();
        halo.dedup();
        // Each row's entries in local numbering, kept in A's column order (each row sums its
        // products in the order one device does), chunk by chunk in parallel.
        let pieces: Vec<(Vec<u32>, Vec<u32>, Vec<T>)> = order
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut lens = Vec::with_capacity(chunk.len());
                let (mut cols, mut vals) = (Vec::new(), Vec::new());
                for &g in chunk {
                    let sp = span(g as usize);
                    lens.push(sp.len() as u32);
                    cols.extend(ci[sp.clone()].iter().map(|&c| {
                        if own(c) {
                            local[c as usize - rows.start]
                        } else {
                            (nloc + halo.binary_search(&c).expect("halo holds c")) as u32
                        }
                    }));
                    vals.extend_from_slice(&va[sp]);
                }
                (lens, cols, vals)
            })
            .collect();
        let nnz: usize = pieces.iter().map(|p| p.1.len()).sum();
        let mut row_ptr = Vec::with_capacity(nloc + 1);
        row_ptr.push(0u32);
        let (mut col_idx, mut values) = (Vec::with_capacity(nnz), Vec::with_capacity(nnz));
        for (lens, cols, vals) in pieces {
            for l in lens {
                let last = *row_ptr.last().expect("row_ptr starts at 0");
                row_ptr.push(last + l);
            }
            col_idx.extend_from_slice(&cols);
            values.extend_from_slice(&vals);
        }
        LocalPart {
            part: p,
            rows,
            order,
            interior,
            row_ptr,
            col_idx,
            values,
            halo,
        }
    }

    /// Rows the part owns.
    pub fn nloc(&self) -> usize {
        self.order.len()
    }

    /// Stored entries of the block.
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }

    /// The part's entries of a global vector, in local order.
    pub fn gather<U: Copy>(&self, global: &[U]) -> Vec<U> {
        self.order.iter().map(|&g| global[g as usize]).collect()
    }

    /// `[x_loc; x_halo]` of a global vector: what the block's product reads.
    pub fn extended<U: Copy>(&self, global: &[U]) -> Vec<U> {
        let mut v = self.gather(global);
        v.extend(self.halo.iter().map(|&g| global[g as usize]));
        v
    }

    /// y_loc = A_loc · ext in f64 (the CPU twin of one block's product, `dist_spmv_dot`).
    pub fn mul_ext(&self, ext: &[f64]) -> Vec<f64> {
        (0..self.nloc())
            .map(|i| {
                let span = self.row_ptr[i] as usize..self.row_ptr[i + 1] as usize;
                self.col_idx[span.clone()]
                    .iter()
                    .zip(&self.values[span])
                    .map(|(&c, v)| v.as_f64() * ext[c as usize])
                    .sum()
            })
            .collect()
    }
}

/// The local index of global row `g` on the part whose rows in local order are `order`
/// (interior rows `0..interior` first, each half ascending, as [`LocalPart::order`]).
pub fn local_index(order: &[u32], interior: usize, g: u32) -> u32 {
    let (int, bnd) = order.split_at(interior);
    match int.binary_search(&g) {
        Ok(i) => i as u32,
        Err(_) => (interior + bnd.binary_search(&g).expect("the part holds g")) as u32,
    }
}

/// One copy of the exchange: `len` values from `from`'s send buffer at `src` into `to`'s halo
/// at `dst` (halo numbering).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    pub from: usize,
    pub to: usize,
    pub src: usize,
    pub dst: usize,
    pub len: usize,
}

/// What each part sends and where it lands: part `p` gathers `send[p]` (local indices) into
/// its send buffer; the transfers copy slices of it into the other parts' halos.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    pub send: Vec<Vec<u32>>,
    pub transfers: Vec<Transfer>,
}

impl Exchange {
    /// The plan for `locals` (every part of `partition`, in order).
    pub fn plan<T: Scalar>(partition: &RowPartition, locals: &[LocalPart<T>]) -> Self {
        let halos: Vec<&[u32]> = locals.iter().map(|l| l.halo.as_slice()).collect();
        Self::for_halos(partition, &halos, |o, g| {
            local_index(&locals[o].order, locals[o].interior, g)
        })
    }

    /// The plan filling every part's `halos[p]` (global rows, ascending, so grouped by owner)
    /// from their owners; `local_of(owner, g)` is g's local index on its owner. CA-GMRES's
    /// matrix powers exchange deeper halos with it (`solvers::dist::mpk`).
    pub fn for_halos(
        partition: &RowPartition,
        halos: &[&[u32]],
        local_of: impl Fn(usize, u32) -> u32,
    ) -> Self {
        let k = partition.parts();
        let mut send: Vec<Vec<u32>> = vec![Vec::new(); k];
        let mut transfers = Vec::new();
        for (to, halo) in halos.iter().enumerate() {
            let mut h = 0;
            while h < halo.len() {
                let from = partition.owner(halo[h] as usize);
                let end = h + halo[h..]
                    .iter()
                    .take_while(|&&g| partition.owner(g as usize) == from)
                    .count();
                let src = send[from].len();
                send[from].extend(halo[h..end].iter().map(|&g| local_of(from, g)));
                transfers.push(Transfer {
                    from,
                    to,
                    src,
                    dst: h,
                    len: end - h,
                });
                h = end;
            }
        }
        Exchange { send, transfers }
    }

    /// Values moved per exchange (every halo entry once).
    pub fn values(&self) -> usize {
        self.transfers.iter().map(|t| t.len).sum()
    }

    /// Bytes one exchange moves through the host for values of `size` bytes: every halo entry
    /// read back from its owner and written to its reader.
    pub fn bytes(&self, size: usize) -> u64 {
        (2 * self.values() * size) as u64
    }
}
