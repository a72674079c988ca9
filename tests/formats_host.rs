//! DIA, SELL-C-σ and BCSR (MBR layout) on the host: layout invariants the GPU kernels rely on,
//! products against the f64 CSR oracle, refusals, and the structural statistics.

use std::collections::BTreeMap;

use krylov_wgpu::cpu::spmv_f64;
use krylov_wgpu::matrix::generators::{banded, from_spec};
use krylov_wgpu::matrix::{Bcsr, Csr, Dia, MatrixStats, Sell, block_density};
use krylov_wgpu::{KrylovError, Scalar};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---------------------------------------------------------------------------------------------
// Test matrices
// ---------------------------------------------------------------------------------------------

/// Random `nrows × ncols` matrix: row lengths uniform in `0..=2·mean_len` (so some rows are
/// empty), about one stored entry in 16 an explicit zero, and, when `long_row` is set, row
/// `nrows / 2` holding about half of the columns.
fn random_csr<T: Scalar>(
    nrows: usize,
    ncols: usize,
    mean_len: usize,
    long_row: bool,
    seed: u64,
) -> Csr<T> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut row_ptr = vec![0u32];
    let mut col_idx = Vec::new();
    let mut values = Vec::new();
    for i in 0..nrows {
        let mut len = if ncols == 0 {
            0
        } else {
            rng.random_range(0..=2 * mean_len).min(ncols)
        };
        if long_row && i == nrows / 2 {
            len = ncols.div_ceil(2);
        }
        let mut cols = std::collections::BTreeSet::new();
        while cols.len() < len {
            cols.insert(rng.random_range(0..ncols) as u32);
        }
        for c in cols {
            col_idx.push(c);
            let v = if rng.random_range(0..16) == 0 {
                0.0
            } else {
                rng.random_range(-1.0..1.0)
            };
            values.push(T::from_f64(v));
        }
        row_ptr.push(col_idx.len() as u32);
    }
    Csr::new(nrows, ncols, row_ptr, col_idx, values).unwrap()
}

fn empty_csr<T: Scalar>(nrows: usize, ncols: usize) -> Csr<T> {
    Csr::new(nrows, ncols, vec![0; nrows + 1], vec![], vec![]).unwrap()
}

/// The matrix zoo every format is tested on: odd sizes (not multiples of N or C), empty rows,
/// an all-empty matrix, degenerate shapes, one long row, non-square.
fn zoo<T: Scalar>() -> Vec<(String, Csr<T>)> {
    let mut v = Vec::new();
    for (seed, &(n, m, len, long)) in (1u64..).zip(&[
        (1, 1, 1, false),
        (7, 7, 2, false),
        (33, 33, 3, false),
        (257, 257, 5, false),
        (1001, 1001, 6, false),
        (257, 257, 3, true),
        (1001, 1001, 2, true),
        (7, 33, 4, false),
        (33, 7, 2, false),
        (257, 100, 4, true),
        (100, 257, 8, false),
        (1, 1001, 30, false),
        (1001, 1, 1, false),
    ]) {
        v.push((
            format!("random {n}x{m} len~{len} long={long}"),
            random_csr(n, m, len, long, seed),
        ));
    }
    v.push(("empty 33x33".into(), empty_csr(33, 33)));
    v.push(("empty 7x5".into(), empty_csr(7, 5)));
    v.push(("empty 5x0".into(), empty_csr(5, 0)));
    v.push(("empty 0x5".into(), empty_csr(0, 5)));
    v.push(("empty 0x0".into(), empty_csr(0, 0)));
    v.push(("identity 9".into(), Csr::identity(9)));
    v.push((
        "banded 101".into(),
        from_spec("banded:101:-7,-1,0,1,3:5").unwrap(),
    ));
    v
}

fn random_x<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| T::from_f64(rng.random_range(-1.0..1.0)))
        .collect()
}

/// Every entry of `y` (computed in `T`) against the f64 oracle: `|y_i − ŷ_i| ≤ 2(k_i + 1)·ε·
/// (|A|·|x|)_i`, `k_i` the row length, ε the machine epsilon of `T`. Zero products added by
/// padding are exact, so the bound is the CSR one. Empty rows must give exactly 0.
fn check_product<T: Scalar>(what: &str, a: &Csr<T>, x: &[T], y: &[T]) {
    assert_eq!(y.len(), a.nrows(), "{what}: y length");
    let exact = spmv_f64(a, x);
    let eps = T::PRECISION.epsilon();
    for i in 0..a.nrows() {
        let (cols, vals) = a.row(i);
        let abs: f64 = cols
            .iter()
            .zip(vals)
            .map(|(&c, v)| (v.as_f64() * x[c as usize].as_f64()).abs())
            .sum();
        let bound = 2.0 * (cols.len() + 1) as f64 * eps * abs;
        let err = (y[i].as_f64() - exact[i]).abs();
        assert!(
            err <= bound,
            "{what}: row {i}: got {}, expected {}, error {err:e} over bound {bound:e}",
            y[i],
            exact[i]
        );
    }
}

fn row_len<T: Scalar>(a: &Csr<T>, i: usize) -> usize {
    (a.row_ptr()[i + 1] - a.row_ptr()[i]) as usize
}

fn invalid_option<R: std::fmt::Debug>(r: Result<R, KrylovError>) -> bool {
    matches!(r, Err(KrylovError::InvalidOption(_)))
}

// ---------------------------------------------------------------------------------------------
// DIA
// ---------------------------------------------------------------------------------------------

fn check_dia_layout<T: Scalar>(what: &str, a: &Csr<T>, d: &Dia<T>) {
    let n = a.nrows();
    let mut offs: Vec<i64> = (0..n)
        .flat_map(|i| a.row(i).0.iter().map(move |&c| c as i64 - i as i64))
        .collect();
    offs.sort_unstable();
    offs.dedup();
    let got: Vec<i64> = d.offsets().iter().map(|&o| o as i64).collect();
    assert_eq!(got, offs, "{what}: offsets");
    assert_eq!(
        (d.nrows(), d.ncols(), d.ndiag()),
        (n, a.ncols(), offs.len())
    );
    assert_eq!(d.values().len(), d.ndiag() * n, "{what}: values length");
    // Every position holds A[i, i + off] (0 if absent or out of range): each stored entry
    // appears exactly once and nothing else is non-zero.
    let mut seen = 0;
    for (k, &off) in d.offsets().iter().enumerate() {
        for i in 0..n {
            let j = i as i64 + off as i64;
            let v = d.values()[k * n + i];
            if j < 0 || j >= a.ncols() as i64 {
                assert_eq!(v, T::zero(), "{what}: out-of-range slot ({k}, {i})");
                continue;
            }
            let (cols, vals) = a.row(i);
            match cols.binary_search(&(j as u32)) {
                Ok(p) => {
                    assert_eq!(v, vals[p], "{what}: A[{i},{j}]");
                    seen += 1;
                }
                Err(_) => assert_eq!(v, T::zero(), "{what}: padding at ({k}, {i})"),
            }
        }
    }
    assert_eq!(seen, a.nnz(), "{what}: every entry stored once");
    assert_eq!(
        d.storage_bytes(),
        4 * d.offsets().len() + std::mem::size_of_val(d.values())
    );
    assert_eq!(
        d.storage_bytes(),
        4 * d.ndiag() + std::mem::size_of::<T>() * d.ndiag() * n
    );
}

fn dia_products<T: Scalar>() {
    for (name, a) in zoo::<T>() {
        let d = Dia::from_csr(&a, f64::INFINITY).unwrap();
        check_dia_layout(&name, &a, &d);
        let x = random_x::<T>(a.ncols(), 99);
        check_product(&format!("DIA {name}"), &a, &x, &d.mul_vec(&x));
    }
    for (n, offs) in [
        (1usize, vec![0isize]),
        (7, vec![-1, 0, 1]),
        (257, vec![-16, -1, 0, 1, 16]),
        (1001, vec![-300, -2, 0, 5, 1000, 2000]),
    ] {
        let a = banded::<T>(n, &offs, 3);
        let d = Dia::from_csr(&a, 1.0 + 1e-9 + offs.len() as f64).unwrap();
        let what = format!("DIA banded {n} {offs:?}");
        check_dia_layout(&what, &a, &d);
        let x = random_x::<T>(n, 5);
        check_product(&what, &a, &x, &d.mul_vec(&x));
    }
}

#[test]
fn dia_layout_and_product_f32() {
    dia_products::<f32>();
}

#[test]
fn dia_layout_and_product_f64() {
    dia_products::<f64>();
}

#[test]
fn dia_banded_generator_is_compact() {
    let a: Csr<f64> = from_spec("banded:1001:-2,-1,0,1,2").unwrap();
    let d = Dia::from_csr(&a, 1.01).unwrap();
    assert_eq!(d.offsets(), &[-2, -1, 0, 1, 2]);
    // 5·1001 slots for 5·1001 − 6 entries.
    assert_eq!(d.values().len(), 5 * 1001);
}

#[test]
fn dia_keeps_explicit_zeros_as_diagonals() {
    let a = Csr::<f64>::new(2, 2, vec![0, 1, 2], vec![1, 1], vec![0.0, 3.0]).unwrap();
    let d = Dia::from_csr(&a, 10.0).unwrap();
    assert_eq!(d.offsets(), &[0, 1]);
    assert_eq!(d.values(), &[0.0, 3.0, 0.0, 0.0]);
}

#[test]
fn dia_refuses_unbanded_matrices() {
    let a = random_csr::<f64>(1001, 1001, 6, false, 7);
    let r = Dia::from_csr(&a, 3.0);
    assert!(invalid_option(r), "random matrix is not banded");
    let a = random_csr::<f32>(257, 100, 4, true, 8);
    assert!(invalid_option(Dia::from_csr(&a, 3.0)));
    // Negative or zero budget: refused unless nothing is stored.
    let a = banded::<f64>(10, &[-1, 0, 1], 0);
    assert!(invalid_option(Dia::from_csr(&a, 0.0)));
    assert!(Dia::from_csr(&empty_csr::<f64>(10, 10), 0.0).is_ok());
}

// ---------------------------------------------------------------------------------------------
// SELL-C-σ
// ---------------------------------------------------------------------------------------------

fn check_sell_layout<T: Scalar>(what: &str, a: &Csr<T>, s: &Sell<T>) {
    let (n, c, sigma) = (a.nrows(), s.c(), s.sigma());
    let nslices = n.div_ceil(c);
    assert_eq!(s.nslices(), nslices, "{what}: nslices");
    assert_eq!(s.nslots(), nslices * c, "{what}: nslots");
    assert_eq!(s.perm().len(), nslices * c);
    assert_eq!((s.nrows(), s.ncols(), s.nnz()), (n, a.ncols(), a.nnz()));
    // perm: a permutation of 0..n within windows, then u32::MAX.
    let mut seen = vec![false; n];
    for (slot, &row) in s.perm().iter().enumerate() {
        if slot >= n {
            assert_eq!(row, u32::MAX, "{what}: padding slot {slot}");
            continue;
        }
        let row = row as usize;
        assert!(row < n && !seen[row], "{what}: perm[{slot}] = {row}");
        seen[row] = true;
        assert_eq!(
            row / sigma,
            slot / sigma,
            "{what}: row {row} left its window"
        );
    }
    // Within each window: lengths non-increasing, ties in original order (stable sort).
    for w in s.perm()[..n].chunks(sigma) {
        for p in w.windows(2) {
            let (l0, l1) = (row_len(a, p[0] as usize), row_len(a, p[1] as usize));
            assert!(l0 > l1 || (l0 == l1 && p[0] < p[1]), "{what}: window order");
        }
    }
    // slice_ptr and entries.
    let sp = s.slice_ptr();
    assert_eq!(sp.len(), nslices + 1);
    assert_eq!(sp[0], 0);
    assert_eq!(sp[nslices] as usize, s.col_idx().len());
    assert_eq!(s.col_idx().len(), s.values().len());
    let slot_len = |j: usize| match s.perm()[j] {
        u32::MAX => 0,
        r => row_len(a, r as usize),
    };
    let mut entries = 0;
    for sl in 0..nslices {
        let w = (sl * c..sl * c + c).map(slot_len).max().unwrap();
        assert_eq!(
            (sp[sl + 1] - sp[sl]) as usize,
            w * c,
            "{what}: slice {sl} size"
        );
        for lane in 0..c {
            let j = sl * c + lane;
            let (cols, vals): (&[u32], &[T]) = match s.perm()[j] {
                u32::MAX => (&[], &[]),
                r => a.row(r as usize),
            };
            for k in 0..w {
                let idx = sp[sl] as usize + k * c + lane;
                if k < cols.len() {
                    assert_eq!(s.col_idx()[idx], cols[k], "{what}: slot {j} entry {k}");
                    assert_eq!(s.values()[idx], vals[k], "{what}: slot {j} entry {k}");
                    entries += 1;
                } else {
                    assert_eq!(s.col_idx()[idx], 0, "{what}: padding col");
                    assert_eq!(s.values()[idx], T::zero(), "{what}: padding value");
                }
            }
        }
    }
    assert_eq!(entries, a.nnz(), "{what}: every entry stored once");
    assert_eq!(
        s.storage_bytes(),
        4 * (sp.len() + s.col_idx().len() + s.perm().len()) + std::mem::size_of_val(s.values())
    );
}

fn sell_products<T: Scalar>() {
    for (name, a) in zoo::<T>() {
        let x = random_x::<T>(a.ncols(), 17);
        for (c, sigma) in [
            (8, 8),
            (8, 32),
            (32, 32),
            (32, 128),
            (1, 1),
            (1, 4),
            (4, 4096),
        ] {
            let s = Sell::from_csr(&a, c, sigma, f64::INFINITY).unwrap();
            let what = format!("SELL-{c}-{sigma} {name}");
            check_sell_layout(&what, &a, &s);
            check_product(&what, &a, &x, &s.mul_vec(&x));
        }
    }
}

#[test]
fn sell_layout_and_product_f32() {
    sell_products::<f32>();
}

#[test]
fn sell_layout_and_product_f64() {
    sell_products::<f64>();
}

#[test]
fn sell_sorting_reduces_padding() {
    // One long row: with σ = C only its slice pays; σ = nrows sorts it to the first slice.
    let a = random_csr::<f64>(1001, 1001, 3, true, 21);
    let s1 = Sell::from_csr(&a, 32, 32, f64::INFINITY).unwrap();
    let s2 = Sell::from_csr(&a, 32, 1024, f64::INFINITY).unwrap();
    assert!(s2.values().len() <= s1.values().len());
    assert_eq!(s2.perm()[0] as usize, 500, "longest row sorted first");
}

#[test]
fn sell_refusals() {
    let a = random_csr::<f64>(33, 33, 3, true, 4);
    for (c, sigma) in [(0, 8), (0, 0), (8, 0), (8, 12), (8, 4), (32, 48)] {
        assert!(
            invalid_option(Sell::from_csr(&a, c, sigma, f64::INFINITY)),
            "C = {c}, σ = {sigma}"
        );
    }
    // A single dense row in a tall matrix: no sorting window can hide it in a C = 32 slice.
    let mut row_ptr = vec![0u32, 1000];
    row_ptr.extend((0..999).map(|i| 1001 + i));
    let mut col_idx: Vec<u32> = (0..1000).collect();
    col_idx.extend(1..1000);
    let values = vec![1.0f64; col_idx.len()];
    let long = Csr::new(1000, 1000, row_ptr, col_idx, values).unwrap();
    assert!(invalid_option(Sell::from_csr(&long, 32, 32, 3.0)));
    assert!(Sell::from_csr(&long, 32, 32, 32.0).is_ok());
    assert!(Sell::from_csr(&long, 1, 1, 1.0).is_ok(), "C = 1 never pads");
    assert!(invalid_option(Sell::from_csr(&long, 32, 32, -1.0)));
    assert!(Sell::from_csr(&empty_csr::<f64>(10, 10), 32, 32, 0.0).is_ok());
}

// ---------------------------------------------------------------------------------------------
// BCSR
// ---------------------------------------------------------------------------------------------

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

fn bcsr_products<T: Scalar>() {
    for (name, a) in zoo::<T>() {
        let x = random_x::<T>(a.ncols(), 23);
        for nb in [1, 2, 4, 8] {
            for bx in [1, 2, 4] {
                for wg in [64, 256] {
                    let what = format!("BCSR N={nb} Bx={bx} wg={wg} {name}");
                    let r = Bcsr::from_csr(&a, nb, bx, wg, f64::INFINITY);
                    if bx * nb * nb > wg {
                        assert!(invalid_option(r), "{what}: Bx·N² over the workgroup");
                        continue;
                    }
                    let b = r.unwrap_or_else(|e| panic!("{what}: {e}"));
                    check_bcsr_layout(&what, &a, &b, wg);
                    check_product(&what, &a, &x, &b.mul_vec(&x));
                }
            }
        }
    }
}

#[test]
fn bcsr_layout_and_product_f32() {
    bcsr_products::<f32>();
}

#[test]
fn bcsr_layout_and_product_f64() {
    bcsr_products::<f64>();
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

// ---------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------

#[test]
fn matrix_stats() {
    for (name, a) in zoo::<f64>() {
        let s = MatrixStats::of(&a);
        let n = a.nrows();
        let lens: Vec<f64> = (0..n).map(|i| row_len(&a, i) as f64).collect();
        let mean = lens.iter().sum::<f64>() / n.max(1) as f64;
        let var = lens.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / n.max(1) as f64;
        assert_eq!((s.nrows, s.ncols, s.nnz), (n, a.ncols(), a.nnz()), "{name}");
        assert!(
            (s.row_len_mean - mean).abs() <= 1e-12 * mean.max(1.0),
            "{name}"
        );
        assert!(
            (s.row_len_std - var.sqrt()).abs() <= 1e-9 * mean.max(1.0),
            "{name}"
        );
        assert_eq!(s.row_len_max, a.row_length_stats().2, "{name}");
        let d = Dia::from_csr(&a, f64::INFINITY).unwrap();
        assert_eq!(s.ndiag, d.ndiag(), "{name}");
        for (k, nb) in [2, 4, 8].into_iter().enumerate() {
            assert_eq!(s.density[k], block_density(&a, nb), "{name}");
            assert!(s.density[k] > 0.0 && s.density[k] <= 1.0, "{name}");
        }
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"ndiag\"") && json.contains("\"density\""));
    }
    let s = MatrixStats::of(&banded::<f64>(100, &[-3, 0, 2], 1));
    assert_eq!(s.ndiag, 3);
}
