//! The matrices `krylov calibrate` times: 5- and 7-point stencils, stencils of dense 8×8
//! blocks (the BCSR formats' samples), stencils with hub rows (long per-thread loops, the
//! chain step's samples) and random-column matrices (the gather weights' samples).

use std::collections::BTreeMap;

use crate::base::Format;
use crate::base::error::Result;
use crate::matrix::{Csr, generators};

/// Random-column SPD matrices whose gathers of x scatter over the vector: the gather
/// weights' samples. Seed 1 and sizes unlike the validation's (`bench/model_matrices_gpu.txt`
/// has random-spd:20000:7 and random-spd:1000000:7 with seed 0), so that no validated matrix
/// is calibrated on. 131 k and 524 k rows: x of 0.5 and 2 MB, in an H100's or H200's L2 like
/// most solves'.
pub const GATHER_MATRICES: [&str; 2] = ["random-spd:131072:7:1", "random-spd:524288:7:1"];

/// Whether the calibration matrix `spec` (as [`matrices`] names them) is a plain 5- or
/// 7-point stencil: the loop residuals ([`super::loop_residual`]) are fitted on these alone,
/// since the other kinds' rows carry the model's matrix terms (chain, blocks, gather), not
/// the solver loop's.
pub(super) fn plain_stencil(spec: &str) -> bool {
    (spec.starts_with("poisson2d:") || spec.starts_with("laplace3d:")) && !spec.contains(' ')
}

/// Whether the calibration matrix `spec` gives its samples of A's kernels to BCSR with
/// blocks of 2 and more only: the stencils of dense 8×8 blocks (`⊗ 8×8`). There the scalar
/// formats (and BCSR 1×1, a scalar format) re-read x from cache — the 8 rows of a block row
/// read the same 40 columns, in runs of 8 — and the largest (36 MB) stays in the H200's
/// 50 MB L2 from one iteration to the next, so they ran faster than their bytes allow: ELL
/// moved 35.7 MB in 7.1 µs, SELL in 6.6 µs, where a stencil's 10 MB took 9 µs. Fitted with
/// the stencils, those samples made the outliers of the large stencils (ELL) or bent the
/// curves (SELL 33 % rms), and SELL at 1e6 rows was predicted 33–40 % too fast (2026-11-29).
pub(super) fn block_samples_only(spec: &str, format: Format) -> bool {
    spec.contains('⊗') && crate::gpu::format::bcsr_block(format).is_none_or(|n| n < 2)
}

/// The matrices of a calibration: 5- and 7-point stencils, a 5-point stencil whose every
/// entry is a dense 8×8 block (where the BCSR formats store no padding), and 5-point
/// stencils with a few hub rows of thousands of entries ([`with_hubs`]: the long
/// per-thread loops of circuit matrices, which fit the chain steps τ of every format).
pub(super) fn matrices(quick: bool) -> Result<Vec<(String, Csr<f64>)>> {
    let (p2, l3, kron): (&[usize], &[usize], &[usize]) = if quick {
        (&[16, 64, 160], &[20], &[4, 8, 12, 16])
    } else {
        // The largest: 1M rows (poisson2d:1024, laplace3d:100) and 590k rows of 8×8 blocks
        // (~94 MB of f32 values), all beyond the H200's 50 MB L2; larger ones made the
        // calibration run past 5 minutes (the host converts each case's matrix per run).
        (&[16, 64, 256, 1024], &[12, 48, 100], &[4, 16, 48, 96])
    };
    let mut out = Vec::new();
    for k in p2 {
        let spec = format!("poisson2d:{k}");
        out.push((spec.clone(), generators::from_spec(&spec)?));
    }
    for k in l3 {
        let spec = format!("laplace3d:{k}");
        out.push((spec.clone(), generators::from_spec(&spec)?));
    }
    for &k in kron {
        let a = generators::poisson_2d_fd::<f64>(k);
        out.push((format!("poisson2d:{k} ⊗ 8×8"), dense_blocks(&a, 8)?));
    }
    let hubs: &[(usize, usize)] = if quick {
        &[(16, 128)]
    } else {
        &[(64, 1024), (128, 4096)]
    };
    for &(k, len) in hubs {
        let a = generators::poisson_2d_fd::<f64>(k);
        out.push((
            format!("poisson2d:{k} + 4 hubs of {len}"),
            with_hubs(&a, 4, len)?,
        ));
    }
    // The quick calibration (tests, CI on lavapipe) leaves the gather out: its profiles
    // weigh the excess at γ = 1.
    if !quick {
        for spec in GATHER_MATRICES {
            out.push((spec.to_string(), generators::from_spec(spec)?));
        }
    }
    Ok(out)
}

/// A ⊗ B with B = I + 0.1·(ones) of size `nb` (symmetric positive definite when A is): every
/// entry of `a` becomes a dense `nb`×`nb` block.
pub fn dense_blocks(a: &Csr<f64>, nb: usize) -> Result<Csr<f64>> {
    let n = a.nrows() * nb;
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut cols = Vec::with_capacity(a.nnz() * nb * nb);
    let mut vals = Vec::with_capacity(a.nnz() * nb * nb);
    row_ptr.push(0u32);
    for i in 0..a.nrows() {
        let (acols, avals) = a.row(i);
        for r in 0..nb {
            for (&c, &v) in acols.iter().zip(avals) {
                for q in 0..nb {
                    cols.push(c * nb as u32 + q as u32);
                    vals.push(v * (0.1 + f64::from(u8::from(q == r))));
                }
            }
            row_ptr.push(cols.len() as u32);
        }
    }
    Csr::new(n, a.ncols() * nb, row_ptr, cols, vals)
}

/// `a` (symmetric, diagonally dominant) with `hubs` of its rows tied to `len` others each,
/// spread evenly over the matrix, with weight −0.01 both ways; each row's diagonal grows by
/// what it gained, so the result stays symmetric and diagonally dominant (SPD when `a` is).
/// A hub row holds `len` more entries than its stencil's: the long loop of a circuit's
/// supply net.
pub fn with_hubs(a: &Csr<f64>, hubs: usize, len: usize) -> Result<Csr<f64>> {
    let n = a.nrows();
    let mut extra: Vec<BTreeMap<usize, f64>> = vec![BTreeMap::new(); n];
    let stride = (n / len.max(1)).max(1);
    for h in 0..hubs {
        let hub = h * n / hubs.max(1);
        for t in 0..len.min(n - 1) {
            let j = (hub + 1 + t * stride) % n;
            if j != hub && a.get(hub, j) == 0.0 {
                *extra[hub].entry(j).or_default() -= 0.01;
                *extra[j].entry(hub).or_default() -= 0.01;
            }
        }
    }
    let mut t = Vec::with_capacity(a.nnz() + 2 * hubs * len);
    for (i, row) in extra.iter().enumerate() {
        let (cols, vals) = a.row(i);
        let gained: f64 = row.values().map(|v| v.abs()).sum();
        for (&c, &v) in cols.iter().zip(vals) {
            t.push((i, c as usize, if c as usize == i { v + gained } else { v }));
        }
        t.extend(row.iter().map(|(&j, &v)| (i, j, v)));
    }
    Csr::from_triplets(n, &t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_plain_stencils_are_plain() {
        let plain: Vec<String> = matrices(true)
            .unwrap()
            .into_iter()
            .map(|(spec, _)| spec)
            .filter(|spec| plain_stencil(spec))
            .collect();
        assert_eq!(
            plain,
            [
                "poisson2d:16",
                "poisson2d:64",
                "poisson2d:160",
                "laplace3d:20"
            ]
        );
        for other in [
            "poisson2d:16 ⊗ 8×8",
            "poisson2d:64 + 4 hubs of 1024",
            GATHER_MATRICES[0],
        ] {
            assert!(!plain_stencil(other), "{other}");
        }
    }

    #[test]
    fn dense_block_samples_go_to_bcsr_with_blocks_only() {
        let blocks = "poisson2d:16 ⊗ 8×8";
        for f in [
            Format::Csr,
            Format::Ell,
            Format::Dia,
            Format::Sell,
            Format::Bcsr1,
        ] {
            assert!(block_samples_only(blocks, f), "{f}");
            assert!(!block_samples_only("poisson2d:64", f), "{f}");
        }
        for f in [Format::Bcsr2, Format::Bcsr4, Format::Bcsr8] {
            assert!(!block_samples_only(blocks, f), "{f}");
        }
    }

    #[test]
    fn hubs_are_long_symmetric_rows_of_a_diagonally_dominant_matrix() {
        let a = generators::poisson_2d_fd::<f64>(16);
        let h = with_hubs(&a, 4, 128).unwrap();
        let len = |m: &Csr<f64>, i: usize| m.row(i).0.len();
        // Hub rows 0, 64, 128, 192 reach every second row from hub + 1 on: 128 columns, of
        // which hub + 1 is already the stencil's, so 127 new ones each, mirrored.
        for hub in [0, 64, 128, 192] {
            assert_eq!(len(&h, hub), len(&a, hub) + 127, "hub {hub}");
        }
        assert_eq!(h.nnz(), a.nnz() + 2 * 4 * 127);
        for i in 0..h.nrows() {
            let (cols, vals) = h.row(i);
            let mut off = 0.0;
            for (&c, &v) in cols.iter().zip(vals) {
                assert_eq!(h.get(c as usize, i), v, "({i}, {c}) symmetric");
                if c as usize != i {
                    off += v.abs();
                }
            }
            assert!(h.get(i, i) >= off, "row {i} diagonally dominant");
        }
    }
}
