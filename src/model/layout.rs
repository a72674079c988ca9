//! Bytes one SpMV moves in each storage format, counted on the layout the GPU really gets:
//! the same host conversions [`crate::gpu::GpuMatrix::upload_with`] runs (ELL's padded
//! width, DIA's diagonals, SELL-C-σ's slices with C = the device's subgroup size, BCSR's
//! blocks, block-row groups and `Bx` from [`crate::gpu::format::bcsr_bx`]), without a GPU.
//!
//! Paper 003's count (Table 3), as `krylov bench --spmv` reports it: every stored value —
//! padding included — costs one matrix load and one load of the vector entry it multiplies;
//! the index arrays are read once; the product writes one entry per row:
//!
//! ```text
//!   bytes(SpMV) = index_bytes + 2 · stored · s + nrows · s        (s = bytes per value)
//! ```
//!
//! plus the gather excess of x ([`super::gather`]): sectors of x a workgroup's rows touch
//! beyond one value per stored entry, counted here on the same layout, weighted per format
//! by the profile.

use crate::base::Format;
use crate::base::error::KrylovError;
use crate::gpu::format::{bcsr_block, bcsr_bx};
use crate::matrix::{Bcsr, Csr, Dia, Ell, Sell};

use super::gather::{GatherCount, excess_for};

/// The formats the model ranks: every concrete one, in [`Format::ALL`] order.
pub const MODEL_FORMATS: [Format; 8] = [
    Format::Csr,
    Format::Ell,
    Format::Dia,
    Format::Bcsr1,
    Format::Bcsr2,
    Format::Bcsr4,
    Format::Bcsr8,
    Format::Sell,
];

/// What a device's uploads depend on (recorded in its profile).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayoutParams {
    /// Threads per workgroup of the solver kernels (BCSR groups block rows by it).
    pub workgroup_size: usize,
    /// SELL-C-σ slice height ([`crate::gpu::format::sell_c`]).
    pub sell_c: usize,
    /// Most stored entries per non-zero a format may use.
    pub max_padding: f64,
}

/// The arrays of one matrix in one format, as they are uploaded.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SpmvLayout {
    pub format: Format,
    pub nrows: usize,
    /// Values stored, padding included (paper 003's `e`).
    pub stored: u64,
    /// Bytes of the index arrays (row pointers, column indices, offsets, permutations,
    /// block-row tables).
    pub index_bytes: u64,
    /// Gather excess of x for 4- and 8-byte values ([`super::gather`]): bytes of sectors
    /// touched beyond one value per stored entry.
    pub gather_excess: [u64; 2],
    /// Row chunks (passes) the SpMV loops over, one workgroup's work each: WG rows, WG SELL
    /// slots, or one BCSR pass of `by` block rows.
    pub passes: u64,
    /// The longest loop one thread runs: the steps of the product's critical path
    /// ([`super::chain`]) — the longest row (CSR, SELL), the padded width (ELL), the
    /// diagonals (DIA), or a BCSR pass's steps.
    pub chain: u64,
}

impl SpmvLayout {
    /// Bytes of the format's arrays on the GPU with `s`-byte values.
    pub fn matrix_bytes(&self, s: usize) -> u64 {
        self.index_bytes + self.stored * s as u64
    }

    /// Bytes one product y = A·x moves with `s`-byte values (the module's formula).
    pub fn spmv_bytes(&self, s: usize) -> u64 {
        let s = s as u64;
        self.index_bytes + 2 * self.stored * s + self.nrows as u64 * s
    }

    /// Bytes of x's sectors beyond one value per stored entry, with `s`-byte values.
    pub fn gather_excess_bytes(&self, s: usize) -> u64 {
        excess_for(self.gather_excess, s)
    }
}

const U32: u64 = 4;

/// The layout of `a` in `format` (never `Auto`), or why the upload would refuse it (the
/// same refusals: padding over the budget, blocks larger than a workgroup).
pub fn spmv_layout(
    a: &Csr<f64>,
    format: Format,
    p: &LayoutParams,
) -> std::result::Result<SpmvLayout, String> {
    let n = a.nrows();
    let refusal = |e: KrylovError| match e {
        KrylovError::InvalidOption(reason) => reason,
        other => other.to_string(),
    };
    // The rows one workgroup multiplies together (CSR and ELL: one thread per row): they
    // share the L1 of one multiprocessor, so a sector another of its subgroups fetched is
    // not fetched again. (Per subgroup, a stencil's bands would count the alignment slack
    // of 8-row runs as traffic the measured times do not show.)
    let wg = p.workgroup_size.max(1);
    let row_passes = n.div_ceil(wg) as u64;
    let (stored, index_bytes, gather_excess, passes, chain) = match format {
        Format::Csr => {
            let rows = (0..n).collect::<Vec<_>>();
            let excess = row_groups(a, rows.chunks(wg), |g| {
                g.iter().map(|&r| a.row(r).0.len() as u64).sum()
            });
            let longest = (0..n).map(|r| a.row(r).0.len()).max().unwrap_or(0);
            (
                a.nnz(),
                (n + 1 + a.nnz()) as u64 * U32,
                excess,
                row_passes,
                longest as u64,
            )
        }
        Format::Ell => {
            let e = Ell::from_csr(a, p.max_padding).map_err(refusal)?;
            let rows = (0..n).collect::<Vec<_>>();
            // Padding slots read x at their own row (a few sectors per group): left out.
            let excess = row_groups(a, rows.chunks(wg), |g| (g.len() * e.width()) as u64);
            (
                e.values().len(),
                e.col_idx().len() as u64 * U32,
                excess,
                row_passes,
                e.width() as u64,
            )
        }
        Format::Dia => {
            let d = Dia::from_csr(a, p.max_padding).map_err(refusal)?;
            // Each diagonal is one contiguous run of x: no gather.
            let offsets = d.offsets().len() as u64 * U32;
            let diagonals = d.offsets().len() as u64;
            (d.values().len(), offsets, [0, 0], row_passes, diagonals)
        }
        Format::Sell => {
            let c = p.sell_c;
            let s =
                Sell::from_csr(a, c, p.workgroup_size.max(c), p.max_padding).map_err(refusal)?;
            let index = s.slice_ptr().len() + s.col_idx().len() + s.perm().len();
            // A workgroup's slots: wg / C slices of sorted rows, `perm` maps slots to rows.
            let per_group = (wg / c).max(1);
            let slices: Vec<Vec<usize>> = s
                .perm()
                .chunks(per_group * c)
                .map(|sl| {
                    sl.iter()
                        .filter(|&&r| r != u32::MAX)
                        .map(|&r| r as usize)
                        .collect()
                })
                .collect();
            let ptr = s.slice_ptr();
            let mut k = 0;
            let excess = row_groups(a, slices.iter().map(Vec::as_slice), |_| {
                let end = (k + per_group).min(ptr.len() - 1);
                let stored = u64::from(ptr[end] - ptr[k]);
                k = end;
                stored
            });
            let passes = s.nslots().div_ceil(wg) as u64;
            // A slice is as wide as its longest row.
            let widest = ptr
                .windows(2)
                .map(|w| u64::from(w[1] - w[0]) / c as u64)
                .max()
                .unwrap_or(0);
            (s.values().len(), index as u64 * U32, excess, passes, widest)
        }
        Format::Bcsr1 | Format::Bcsr2 | Format::Bcsr4 | Format::Bcsr8 => {
            let nb = bcsr_block(format).expect("a BCSR format");
            let wg = p.workgroup_size;
            if nb * nb > wg {
                return Err(format!(
                    "{nb}×{nb} blocks need a workgroup of at least {}",
                    nb * nb
                ));
            }
            let bx = bcsr_bx(a, nb, wg);
            let b = Bcsr::from_csr(a, nb, bx, wg, p.max_padding).map_err(refusal)?;
            let index = b.pass_ptr().len() + b.block_col().len() + b.block_row().len();
            let excess = bcsr_excess(a, &b);
            let steps = (0..b.npasses()).map(|p| b.steps(p)).max().unwrap_or(0);
            (
                b.values().len(),
                index as u64 * U32,
                excess,
                b.npasses() as u64,
                steps as u64,
            )
        }
        Format::Auto => return Err("auto is not a layout".into()),
    };
    Ok(SpmvLayout {
        format,
        nrows: n,
        stored: stored as u64,
        index_bytes,
        gather_excess,
        passes,
        chain,
    })
}

/// The gather excess of groups of rows each read element by element (CSR, ELL, SELL);
/// `stored` gives a group's stored entries.
fn row_groups<'a>(
    a: &Csr<f64>,
    groups: impl Iterator<Item = &'a [usize]>,
    mut stored: impl FnMut(&[usize]) -> u64,
) -> [u64; 2] {
    let mut count = GatherCount::default();
    for g in groups {
        for &r in g {
            for &c in a.row(r).0 {
                count.read(u64::from(c), 1);
            }
        }
        count.end_group(stored(g));
    }
    count.finish()
}

/// BCSR's gather excess: a workgroup (chunk) multiplies the `by` block-row slots of one pass;
/// each block reads the N values of x under its block column.
fn bcsr_excess(a: &Csr<f64>, b: &Bcsr<f64>) -> [u64; 2] {
    let nb = b.n_block();
    let per_group = b.by().max(1);
    let mut count = GatherCount::default();
    let mut cols = Vec::new();
    for slots in b.block_row().chunks(per_group) {
        let mut blocks = 0;
        for &br in slots.iter().filter(|&&br| br != u32::MAX) {
            // The block row's non-empty blocks, by block column.
            cols.clear();
            let first = br as usize * nb;
            for r in first..(first + nb).min(a.nrows()) {
                cols.extend(a.row(r).0.iter().map(|&c| c as usize / nb));
            }
            cols.sort_unstable();
            cols.dedup();
            blocks += cols.len() as u64;
            for &bc in &cols {
                count.read((bc * nb) as u64, nb as u64);
            }
        }
        count.end_group(blocks * (nb * nb) as u64);
    }
    count.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ```text
    /// [ 4 1 0 0 ]
    /// [ 1 4 1 0 ]
    /// [ 0 1 4 1 ]
    /// [ 0 0 1 4 ]     n = 4, nnz = 10, 3 diagonals, longest row 3
    /// ```
    fn tridiagonal() -> Csr<f64> {
        Csr::new(
            4,
            4,
            vec![0, 2, 5, 8, 10],
            vec![0, 1, 0, 1, 2, 1, 2, 3, 2, 3],
            vec![4.0, 1.0, 1.0, 4.0, 1.0, 1.0, 4.0, 1.0, 1.0, 4.0],
        )
        .unwrap()
    }

    fn params() -> LayoutParams {
        LayoutParams {
            workgroup_size: 64,
            sell_c: 4,
            max_padding: 16.0,
        }
    }

    fn bytes(format: Format) -> (u64, u64, u64) {
        let l = spmv_layout(&tridiagonal(), format, &params()).unwrap();
        (l.stored, l.index_bytes, l.spmv_bytes(4))
    }

    #[test]
    fn csr_ell_and_dia_bytes_match_a_hand_count() {
        // CSR: 10 values; row_ptr 5 + col_idx 10 = 15 u32; SpMV 60 + 2·10·4 + 4·4 = 156.
        assert_eq!(bytes(Format::Csr), (10, 60, 60 + 80 + 16));
        // ELL: 4 rows × width 3 = 12 slots (2 padded); 12 column indices.
        assert_eq!(bytes(Format::Ell), (12, 48, 48 + 96 + 16));
        // DIA: 3 diagonals × 4 rows = 12 slots; 3 offsets.
        assert_eq!(bytes(Format::Dia), (12, 12, 12 + 96 + 16));
    }

    #[test]
    fn sell_bytes_match_a_hand_count() {
        // One slice of C = 4 rows, sorted within σ = 64: width 3, 12 slots; slice_ptr 2,
        // col_idx 12, perm 4 → 18 u32.
        assert_eq!(bytes(Format::Sell), (12, 72, 72 + 96 + 16));
    }

    #[test]
    fn bcsr_bytes_match_a_hand_count() {
        // The upload pads every pass of `by = WG/(Bx·N²)` block-row slots to its longest
        // block row in steps of Bx blocks (paper 003 §3.4–3.5); with WG = 64:
        // N = 1: 4 block rows of ≤ 3 blocks, mean 2.5 → Bx = 2, by = 32; one pass of
        // ⌈3/2⌉ = 2 steps · 32 slots · 2 = 128 blocks; index: pass_ptr 2 + block_col 128
        // + block_row 32 = 162 words.
        assert_eq!(
            bytes(Format::Bcsr1),
            (128, 162 * 4, 162 * 4 + 2 * 128 * 4 + 16)
        );
        // N = 2: 2 block rows of 2 blocks → Bx = 2, by = 8: 1 step · 8 · 2 = 16 blocks of
        // 4 values; index 2 + 16 + 8 = 26 words.
        assert_eq!(bytes(Format::Bcsr2), (64, 26 * 4, 26 * 4 + 2 * 64 * 4 + 16));
        // N = 4: one block → Bx = 1, by = 4: 4 slots of 16 values; index 2 + 4 + 4.
        assert_eq!(bytes(Format::Bcsr4), (64, 10 * 4, 10 * 4 + 2 * 64 * 4 + 16));
        // N = 8: one 8×8 block fills the workgroup: Bx = 1, by = 1; index 2 + 1 + 1.
        assert_eq!(bytes(Format::Bcsr8), (64, 4 * 4, 4 * 4 + 2 * 64 * 4 + 16));
        // The same counts as the arrays the upload binds.
        let a = tridiagonal();
        for f in [Format::Bcsr1, Format::Bcsr2, Format::Bcsr4, Format::Bcsr8] {
            let nb = bcsr_block(f).unwrap();
            let b = Bcsr::from_csr(&a, nb, bcsr_bx(&a, nb, 64), 64, 16.0).unwrap();
            let l = spmv_layout(&a, f, &params()).unwrap();
            assert_eq!(l.matrix_bytes(8), b.storage_bytes() as u64, "{f}");
        }
    }

    /// An arrow: row 0 holds all 8 columns, row i > 0 holds (i, 0) and (i, i).
    fn arrow() -> Csr<f64> {
        let mut ptr = vec![0u32];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        for i in 0..8u32 {
            let row: Vec<u32> = if i == 0 { (0..8).collect() } else { vec![0, i] };
            for c in row {
                cols.push(c);
                vals.push(if c == i { 10.0 } else { 1.0 });
            }
            ptr.push(cols.len() as u32);
        }
        Csr::new(8, 8, ptr, cols, vals).unwrap()
    }

    #[test]
    fn the_chain_is_the_longest_loop_of_one_thread() {
        let chain = |a: &Csr<f64>, f: Format| spmv_layout(a, f, &params()).unwrap().chain;
        // Tridiagonal: rows of ≤ 3, 3 diagonals; BCSR 1×1 runs ⌈3/2⌉ = 2 steps (Bx = 2, as
        // in bcsr_bytes_match_a_hand_count), the larger blocks one step.
        let t = tridiagonal();
        for f in [Format::Csr, Format::Ell, Format::Dia, Format::Sell] {
            assert_eq!(chain(&t, f), 3, "{f}");
        }
        assert_eq!(chain(&t, Format::Bcsr1), 2);
        for f in [Format::Bcsr2, Format::Bcsr4, Format::Bcsr8] {
            assert_eq!(chain(&t, f), 1, "{f}");
        }
        // The arrow's first row is the one thread with 8 terms in CSR, ELL (every row padded
        // to 8) and SELL (its slice is 8 wide); DIA loops over the 15 diagonals ±0…7.
        let a = arrow();
        assert_eq!(chain(&a, Format::Csr), 8);
        assert_eq!(chain(&a, Format::Ell), 8);
        assert_eq!(chain(&a, Format::Sell), 8);
        assert_eq!(chain(&a, Format::Dia), 15);
        // BCSR 1×1 splits the long row over Bx threads.
        let bx = bcsr_bx(&a, 1, 64);
        let b = Bcsr::from_csr(&a, 1, bx, 64, 16.0).unwrap();
        assert!(bx > 1, "Bx {bx}");
        assert_eq!(chain(&a, Format::Bcsr1), 8usize.div_ceil(bx) as u64);
        assert_eq!(b.npasses(), 1);
    }

    #[test]
    fn refusals_are_reasons_not_panics() {
        let tight = LayoutParams {
            max_padding: 1.1,
            ..params()
        };
        let a = tridiagonal();
        // ELL and DIA store 12 for 10 non-zeros: 1.2 > 1.1.
        assert!(spmv_layout(&a, Format::Ell, &tight).is_err());
        assert!(spmv_layout(&a, Format::Dia, &tight).is_err());
        assert!(spmv_layout(&a, Format::Csr, &tight).is_ok());
        let small_wg = LayoutParams {
            workgroup_size: 32,
            ..params()
        };
        let why = spmv_layout(&a, Format::Bcsr8, &small_wg).unwrap_err();
        assert!(
            why.contains("8×8 blocks need a workgroup of at least 64"),
            "{why}"
        );
        assert!(spmv_layout(&a, Format::Auto, &params()).is_err());
    }
}
