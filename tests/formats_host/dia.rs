//! DIA: one stored diagonal per occupied offset, refusals of unbanded matrices.

use krylov_wgpu::Scalar;
use krylov_wgpu::matrix::generators::{banded, from_spec};
use krylov_wgpu::matrix::{Csr, Dia};

use super::{check_product, empty_csr, for_each_in_zoo, invalid_option, random_csr, random_x};

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

/// DIA of every matrix of the zoo and of banded matrices: layout and product.
pub fn products<T: Scalar>() {
    for_each_in_zoo::<T>(99, |name, a, x| {
        let d = Dia::from_csr(a, f64::INFINITY).unwrap();
        check_dia_layout(name, a, &d);
        check_product(&format!("DIA {name}"), a, x, &d.mul_vec(x));
    });
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
