//! BCSR in the MBR layout: block rows sorted by block count, passes of `by` block rows, steps
//! of `bx` blocks; density; refusals.

use std::collections::BTreeMap;

use krylov_wgpu::Scalar;
use krylov_wgpu::matrix::generators::from_spec;
use krylov_wgpu::matrix::{Bcsr, Csr, block_density};

use super::{check_product, empty_csr, for_each_in_zoo, invalid_option, random_csr};

/// Reference block structure: block row → (block column → dense N×N block in f64).
fn reference_blocks<T: Scalar>(a: &Csr<T>, nb: usize) -> Vec<BTreeMap<u32, Vec<f64>>> {
    let mut blocks = vec![BTreeMap::new(); a.nrows().div_ceil(nb)];
    for i in 0..a.nrows() {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            let b = blocks[i / nb]
                .entry(c / nb as u32)
                .or_insert_with(|| vec![0.0; nb * nb]);
            b[(i % nb) * nb + c as usize % nb] = v.as_f64();
        }
    }
    blocks
}

fn check_bcsr_layout<T: Scalar>(what: &str, a: &Csr<T>, b: &Bcsr<T>, wg: usize) {
    let (nb, bx) = (b.n_block(), b.bx());
    let nn = nb * nb;
    let by = wg / (bx * nn);
    assert_eq!(b.by(), by, "{what}: by");
    let blocks = reference_blocks(a, nb);
    let nbr = blocks.len();
    assert_eq!(b.nblock_rows(), nbr);
    let npasses = nbr.div_ceil(by);
    assert_eq!(b.npasses(), npasses, "{what}: npasses");
    assert_eq!(
        (b.nrows(), b.ncols(), b.nnz()),
        (a.nrows(), a.ncols(), a.nnz())
    );

    // block_row: permutation of 0..nbr sorted by block count (stable), then u32::MAX.
    let br = b.block_row();
    assert_eq!(br.len(), npasses * by, "{what}: slots");
    let mut seen = vec![false; nbr];
    for (slot, &r) in br.iter().enumerate() {
        if slot >= nbr {
            assert_eq!(r, u32::MAX, "{what}: padding slot {slot}");
        } else {
            assert!((r as usize) < nbr && !seen[r as usize], "{what}: block_row");
            seen[r as usize] = true;
        }
    }
    let count = |slot: usize| match br[slot] {
        u32::MAX => 0,
        r => blocks[r as usize].len(),
    };
    for s in 1..nbr {
        let (l0, l1) = (count(s - 1), count(s));
        assert!(
            l0 > l1 || (l0 == l1 && br[s - 1] < br[s]),
            "{what}: block rows not stably sorted at slot {s}"
        );
    }

    // pass_ptr, block index formula, padding, values.
    let pp = b.pass_ptr();
    assert_eq!(pp.len(), npasses + 1);
    assert_eq!(pp[0], 0);
    assert_eq!(pp[npasses] as usize, b.block_col().len());
    assert_eq!(b.values().len(), nn * b.block_col().len());
    let mut covered = vec![false; b.block_col().len()];
    let mut nonempty = 0;
    for p in 0..npasses {
        let br_max = (p * by..p * by + by).map(count).max().unwrap();
        let steps = br_max.div_ceil(bx);
        assert_eq!(b.steps(p), steps, "{what}: steps of pass {p}");
        assert_eq!(
            (pp[p + 1] - pp[p]) as usize,
            steps * by * bx,
            "{what}: pass {p} size"
        );
        for j in 0..by {
            let slot = p * by + j;
            let row_blocks: Vec<(&u32, &Vec<f64>)> = match br[slot] {
                u32::MAX => Vec::new(),
                r => blocks[r as usize].iter().collect(),
            };
            for t in 0..steps {
                for q in 0..bx {
                    let idx = pp[p] as usize + (t * by + j) * bx + q;
                    assert!(!covered[idx], "{what}: block {idx} used twice");
                    covered[idx] = true;
                    let k = t * bx + q;
                    let v = &b.values()[idx * nn..idx * nn + nn];
                    if let Some(&(&bc, vals)) = row_blocks.get(k) {
                        assert_eq!(b.block_col()[idx], bc, "{what}: slot {slot} block {k}");
                        for e in 0..nn {
                            assert_eq!(v[e].as_f64(), vals[e], "{what}: block value");
                        }
                        nonempty += 1;
                    } else {
                        assert_eq!(b.block_col()[idx], 0, "{what}: padding block col");
                        assert!(v.iter().all(|&z| z == T::zero()), "{what}: padding values");
                    }
                }
            }
        }
    }
    assert!(
        covered.iter().all(|&c| c),
        "{what}: every stored block reached"
    );
    let ref_blocks: usize = blocks.iter().map(|m| m.len()).sum();
    assert_eq!(nonempty, ref_blocks, "{what}: every block stored once");
    // Every original entry is in exactly one stored block at its place: the stored non-empty
    // blocks are exactly the reference ones (values compared above); count the non-zeros too.
    let stored_nonzeros = b.values().iter().filter(|v| **v != T::zero()).count();
    let nonzeros = a.values().iter().filter(|v| **v != T::zero()).count();
    assert_eq!(stored_nonzeros, nonzeros, "{what}: non-zero count");
    assert_eq!(b.nonempty_blocks(), ref_blocks);
    assert_eq!(b.padding_blocks(), b.block_col().len() - ref_blocks);
    let d = if ref_blocks == 0 {
        1.0
    } else {
        a.nnz() as f64 / (nn * ref_blocks) as f64
    };
    assert_eq!(b.density(), d, "{what}: density");
    assert_eq!(block_density(a, nb), d, "{what}: block_density");
    assert_eq!(
        b.storage_bytes(),
        4 * (pp.len() + b.block_col().len() + br.len()) + std::mem::size_of_val(b.values())
    );
}

/// BCSR of every matrix of the zoo for every block size, step width and workgroup: layout
/// and product (or the refusal of a step wider than the workgroup).
pub fn products<T: Scalar>() {
    for_each_in_zoo::<T>(23, |name, a, x| {
        for nb in [1, 2, 4, 8] {
            for bx in [1, 2, 4] {
                for wg in [64, 256] {
                    let what = format!("BCSR N={nb} Bx={bx} wg={wg} {name}");
                    let r = Bcsr::from_csr(a, nb, bx, wg, f64::INFINITY);
                    if bx * nb * nb > wg {
                        assert!(invalid_option(r), "{what}: Bx·N² over the workgroup");
                        continue;
                    }
                    let b = r.unwrap_or_else(|e| panic!("{what}: {e}"));
                    check_bcsr_layout(&what, a, &b, wg);
                    check_product(&what, a, x, &b.mul_vec(x));
                }
            }
        }
    });
}

#[test]
fn bcsr_dense_blocks_have_density_one() {
    // 2D Poisson on a 16×16 grid is not blocky, but the 8×8 all-ones matrix is one full block.
    let n = 8;
    let row_ptr: Vec<u32> = (0..=n as u32).map(|i| i * n as u32).collect();
    let col_idx: Vec<u32> = (0..n * n).map(|k| (k % n) as u32).collect();
    let a = Csr::<f64>::new(n, n, row_ptr, col_idx, vec![1.0; n * n]).unwrap();
    for nb in [1, 2, 4, 8] {
        assert_eq!(block_density(&a, nb), 1.0);
        let b = Bcsr::from_csr(&a, nb, 1, 256, f64::INFINITY).unwrap();
        assert_eq!(b.density(), 1.0);
    }
    let b = Bcsr::from_csr(&a, 8, 1, 64, 1.0).unwrap();
    assert_eq!((b.nblocks(), b.padding_blocks(), b.by()), (1, 0, 1));
    let p: Csr<f64> = from_spec("poisson2d:16").unwrap();
    assert!(block_density(&p, 2) < 1.0 && block_density(&p, 2) > block_density(&p, 8));
}

#[test]
fn bcsr_sorting_puts_long_block_rows_first() {
    let a = random_csr::<f64>(257, 257, 2, true, 31);
    let b = Bcsr::from_csr(&a, 2, 1, 64, f64::INFINITY).unwrap();
    // The long row is row 128, block row 64.
    assert_eq!(b.block_row()[0], 64);
}

#[test]
fn bcsr_refusals() {
    let a = random_csr::<f64>(33, 33, 3, false, 9);
    let inf = f64::INFINITY;
    for nb in [0, 3, 5, 16] {
        assert!(
            invalid_option(Bcsr::from_csr(&a, nb, 1, 256, inf)),
            "N = {nb}"
        );
    }
    for bx in [0, 3, 6] {
        assert!(
            invalid_option(Bcsr::from_csr(&a, 2, bx, 256, inf)),
            "Bx = {bx}"
        );
    }
    assert!(
        invalid_option(Bcsr::from_csr(&a, 8, 2, 64, inf)),
        "Bx·N² > wg"
    );
    assert!(invalid_option(Bcsr::from_csr(&a, 4, 1, 8, inf)), "N² > wg");
    assert!(invalid_option(Bcsr::from_csr(&a, 1, 1, 0, inf)), "wg = 0");
    assert!(
        invalid_option(Bcsr::from_csr(&a, 1, 1, 1 << 20, inf)),
        "wg huge"
    );
    assert!(
        invalid_option(Bcsr::from_csr(&a, 1, 1, usize::MAX, inf)),
        "wg max"
    );
    assert!(
        invalid_option(Bcsr::from_csr(&a, 8, 1 << 62, 64, inf)),
        "Bx·N² overflows"
    );
    assert!(Bcsr::from_csr(&a, 8, 1, 64, inf).is_ok());
    // Padding budget: 8×8 blocks of a random sparse matrix are mostly empty.
    let a = random_csr::<f64>(1001, 1001, 6, false, 10);
    assert!(invalid_option(Bcsr::from_csr(&a, 8, 1, 256, 3.0)));
    assert!(invalid_option(Bcsr::from_csr(&a, 1, 1, 256, -1.0)));
    assert!(Bcsr::from_csr(&empty_csr::<f64>(10, 10), 8, 1, 64, 0.0).is_ok());
}
