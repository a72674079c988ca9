//! Positive definiteness of the SPD generators, by a dense Cholesky factorisation.

use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::*;

use super::cholesky_ok;

#[test]
fn poisson_2d_fd_spd() {
    for k in [1, 2, 4, 6] {
        assert!(cholesky_ok(&poisson_2d_fd::<f64>(k)), "k = {k}");
    }
}

#[test]
fn poisson_2d_fem_spd() {
    for k in [1, 2, 3, 7] {
        assert!(cholesky_ok(&poisson_2d_fem::<f64>(k)), "k = {k}");
    }
}

#[test]
fn laplace_3d_spd() {
    for k in [1, 2, 3, 4] {
        assert!(cholesky_ok(&laplace_3d::<f64>(k)), "k = {k}");
    }
}

#[test]
fn cholesky_helper_rejects_indefinite() {
    let a = Csr::<f64>::new(
        2,
        2,
        vec![0, 2, 4],
        vec![0, 1, 0, 1],
        vec![1.0, 2.0, 2.0, 1.0],
    )
    .unwrap();
    assert!(!cholesky_ok(&a));
    assert!(cholesky_ok(&Csr::<f64>::identity(3)));
}
