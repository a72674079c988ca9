//! SELL-C-σ: slices of C rows sorted by length within windows of σ, refusals.

use krylov_wgpu::Scalar;
use krylov_wgpu::matrix::{Csr, Sell};

use super::{check_product, empty_csr, for_each_in_zoo, invalid_option, random_csr, row_len};

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

/// SELL-C-σ of every matrix of the zoo for several C and σ: layout and product.
pub fn products<T: Scalar>() {
    for_each_in_zoo::<T>(17, |name, a, x| {
        for (c, sigma) in [
            (8, 8),
            (8, 32),
            (32, 32),
            (32, 128),
            (1, 1),
            (1, 4),
            (4, 4096),
        ] {
            let s = Sell::from_csr(a, c, sigma, f64::INFINITY).unwrap();
            let what = format!("SELL-{c}-{sigma} {name}");
            check_sell_layout(&what, a, &s);
            check_product(&what, a, x, &s.mul_vec(x));
        }
    });
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
