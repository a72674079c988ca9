//! CA-GMRES's *cycle buffer* on the GPU: where each small matrix of a cycle lives
//! ([`CaLayout`], [`Slots`]), and the sizes that depend on it (CAQR's leaves, the powers
//! kernel's `prev` vector). [`super::system::CaSystem`] allocates and records against it.

/// The most leaves of a CAQR (workgroups of `ca_tsqr_leaf`): the host reads and factors their
/// stacked R factors, (leaves·s) × s, once per block, and uploads Q̂ of that size.
pub const CAQR_MAX_LEAVES: usize = 256;

/// The leaves of a CAQR of s columns of n rows: one per reduction workgroup (`groups`), at
/// most [`CAQR_MAX_LEAVES`], and few enough that every leaf has at least s rows.
pub(crate) fn caqr_leaves(n: usize, s: usize, groups: u32) -> usize {
    (groups as usize)
        .min(CAQR_MAX_LEAVES)
        .min(n / s.max(1))
        .max(1)
}

/// Rows per thread beyond which the tiles of one row chunk of `ca_block_dots(_pairs)` stop
/// sharing their rows through the cache. Per call on an H200 (CA-GMRES(15, 30), f32, 1024
/// chunks of 256 threads): 1.4 ms at n = 5e7 (190 rows per thread), 2.7 ms at 7e7 (269), 47 ms
/// at 1e8 (381) — and 3.2 ms at 1e8 with 4096 chunks (95 rows per thread). BENCHMARKS.md,
/// 2026-11-28.
pub const CA_ROWS_PER_THREAD: usize = 128;

/// The most workgroups (row chunks, partial sums per inner product) of the CA kernels.
pub const CA_MAX_GROUPS: usize = 16384;

/// The CA kernels' workgroups for n rows: `groups` (the solver's reduction workgroups), or
/// more where each of `groups`·`wg` threads would walk more than [`CA_ROWS_PER_THREAD`]
/// rows, at most [`CA_MAX_GROUPS`].
pub(crate) fn ca_groups(n: usize, wg: u32, groups: u32) -> u32 {
    let want = n
        .div_ceil(wg as usize * CA_ROWS_PER_THREAD)
        .min(CA_MAX_GROUPS);
    groups.max(want as u32)
}

/// vec4s of rows `ca_block_dots_staged` stages per launch workgroup (`CS_STAGE4` in the
/// kernel): a chunk of rows of every column of X and Y.
pub(crate) const STAGED_VEC4S: usize = 384;

/// The fewest vec4s of rows per column a chunk of `ca_block_dots_staged` may hold: below
/// that (more than 96 padded columns) its workgroups would meet at a barrier every few rows,
/// and `ca_block_dots` runs instead.
pub(crate) const STAGED_MIN_ROW4: usize = 4;

/// The largest workgroup `ca_block_dots_staged` is compiled for: its tree holds one running
/// sum per thread, 8 KiB at 256 threads in f64, beside the stage's 12 KiB (lavapipe allows
/// 32 KiB of workgroup memory).
pub(crate) const STAGED_MAX_WG: u32 = 256;

/// Whether `ca_block_dots_staged` takes D = XᵀY of nx × ny columns with workgroups of `wg`
/// threads: the padded columns fit its stage with [`STAGED_MIN_ROW4`] vec4s of rows each,
/// and every 4 × 4 tile has a thread (CA-GMRES(15, 60)'s largest, BOrth's fused second pass
/// [Q, W]ᵀW of 61 × 15, takes 80 padded columns).
pub(crate) fn staged_dots_fit(nx: usize, ny: usize, wg: u32) -> bool {
    let (quads, quartets) = (nx.div_ceil(4), ny.div_ceil(4));
    let cols = 4 * (quads + quartets);
    wg <= STAGED_MAX_WG
        && quads * quartets <= wg as usize
        && STAGED_VEC4S / cols.max(1) >= STAGED_MIN_ROW4
}

/// Where the small matrices live in the cycle buffer (`scalars` of the CA kernels), for
/// restart length m and block size s (all column-major):
///
/// `[‖r‖² | (−1, 0, 1) the restart's coefficients | powers coefficients 3s | C (m+1)·s |
/// R s·s | column norms² s | Gram s·s | CAQR stack leaves·s·s | D scratch (m+1+s)·s |
/// C₂·T (m+1)·s | T s·s | y (m+1) | VᵀV m·m | deferred blocks (m+1)·(m+2+s)·s]`
///
/// C, R, the norms, the Gram matrix and the CAQR stack (the leaves' R factors, then Q̂; empty
/// unless the solve runs CAQR) are contiguous: one readback per block gets them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CaLayout {
    pub(crate) rr: usize,
    pub(crate) pow: usize,
    pub(crate) c: usize,
    pub(crate) r: usize,
    pub(crate) nrm: usize,
    pub(crate) gram: usize,
    pub(crate) stack: usize,
    pub(crate) d: usize,
    /// C₂·T of a fused second BOrth pass and CholQR (`ca_cholqr`'s CA_FLAG_PIP), (m+1)·s.
    pub(crate) ct: usize,
    pub(crate) t: usize,
    pub(crate) y: usize,
    pub(crate) vtv: usize,
    /// ε of the working precision (`ca_cholqr`'s tolerance), then the eager flag slot.
    pub(crate) eps: usize,
    /// Deferred cycles: per block starting at column j, its own C, R and norms at
    /// `blocks + j·per_block` ([`CaLayout::slots_at`]).
    pub(crate) blocks: usize,
    pub(crate) per_block: usize,
    m: usize,
    pub(crate) len: usize,
}

/// Where a block's C (leading dimension j+1), R (leading dimension s) and column norms² go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slots {
    pub(crate) c: usize,
    pub(crate) r: usize,
    pub(crate) nrm: usize,
    /// A deferred CholQR2's second R (leading dimension `steps`, as `r` for CholQR).
    pub(crate) r2: usize,
    /// A deferred CholQR's failure flag (`ca_cholqr`).
    pub(crate) flag: usize,
}

impl CaLayout {
    pub(crate) fn new(m: usize, s: usize, leaves: usize) -> Self {
        let rr = 0;
        let pow = 4;
        let c = pow + 3 * s;
        let r = c + (m + 1) * s;
        let nrm = r + s * s;
        let gram = nrm + s;
        let stack = gram + s * s;
        let d = stack + leaves * s * s;
        let ct = d + (m + 1 + s) * s;
        let t = ct + (m + 1) * s;
        let y = t + s * s;
        let vtv = y + m + 1;
        let eps = vtv + m * m;
        let blocks = eps + 2;
        let per_block = (m + 1) * s + 2 * s * s + s + 1;
        CaLayout {
            rr,
            pow,
            c,
            r,
            nrm,
            gram,
            stack,
            d,
            ct,
            t,
            y,
            vtv,
            eps,
            blocks,
            per_block,
            m,
            len: blocks + (m + 1) * per_block,
        }
    }

    /// The shared slots of an eagerly read block.
    pub(crate) fn eager(&self) -> Slots {
        Slots {
            c: self.c,
            r: self.r,
            nrm: self.nrm,
            r2: self.r,
            flag: self.eps + 1,
        }
    }

    /// The slots of the block starting after column j in a deferred cycle.
    pub(crate) fn slots_at(&self, j: usize, s: usize) -> Slots {
        let base = self.blocks + j * self.per_block;
        let c_len = (self.m + 1) * s;
        Slots {
            c: base,
            r: base + c_len,
            nrm: base + c_len + s * s,
            r2: base + c_len + s * s + s,
            flag: base + c_len + 2 * s * s + s,
        }
    }
}

/// The `prev` vector of powers step k of the block from q_j (v_{k−1}; unused at k = 0,
/// where it is q_j itself so that the bind group is the same for every call).
pub(crate) fn powers_prev(j: usize, k: usize) -> usize {
    if k == 0 { j } else { j + k - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_row_loops_get_more_workgroups() {
        // Up to 128 rows per thread of 1024 workgroups of 256: the reduction's own count.
        assert_eq!(ca_groups(1024 * 256 * 128, 256, 1024), 1024);
        assert_eq!(ca_groups(1000, 256, 4), 4);
        // 1e8 rows: 3052 workgroups of 256 threads walk at most 128 rows each.
        assert_eq!(ca_groups(100_000_000, 256, 1024), 3052);
        assert!(100_000_000usize.div_ceil(3052 * 256) <= CA_ROWS_PER_THREAD);
        assert_eq!(ca_groups(usize::MAX / 2, 256, 1024), CA_MAX_GROUPS as u32);
    }

    #[test]
    fn the_staged_inner_products_take_blocks_their_stage_holds() {
        // BOrth's fused second pass of CA-GMRES(15, 60): [Q, W]ᵀW, 61 × 15 (80 padded
        // columns, 4 vec4s of rows each).
        assert!(staged_dots_fit(61, 15, 256));
        assert!(staged_dots_fit(1, 1, 32));
        // 16 + 9 quads: 100 padded columns, 3 vec4s each.
        assert!(!staged_dots_fit(64, 36, 256));
        // More tiles (8 × 3) than 16 threads; workgroups beyond the tree's size.
        assert!(!staged_dots_fit(31, 10, 16));
        assert!(!staged_dots_fit(31, 10, 512));
    }
}
