//! Test systems shared by the solver tests: exact solutions, right-hand sides, the shipped
//! matrices and a few hand-built matrices with known properties.

use krylov_wgpu::Scalar;
use krylov_wgpu::matrix::generators::{ConvectionField, convection_diffusion_3d, poisson_2d_fd};
use krylov_wgpu::matrix::{Coo, Csr, market};

/// A smooth, non-constant exact solution x*_i = 1 + ½·sin(0.37·i). (Constant vectors are
/// eigenvectors of some test matrices, which makes Krylov methods finish, or break down, in
/// one step: b = A·1 breaks BiCGStab down on jpwh_991, whose column sums are constant.)
pub fn x_star(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 1.0 + 0.5 * ((i as f64) * 0.37).sin())
        .collect()
}

/// b = A·x* (x* rounded to T).
pub fn rhs<T: Scalar>(a: &Csr<T>) -> Vec<T> {
    let xs: Vec<T> = x_star(a.nrows()).into_iter().map(T::from_f64).collect();
    a.mul_vec(&xs).unwrap()
}

/// b = A·1.
pub fn ones_rhs<T: Scalar>(a: &Csr<T>) -> Vec<T> {
    a.mul_vec(&vec![T::one(); a.ncols()]).unwrap()
}

/// (A, A·1).
pub fn with_ones_rhs<T: Scalar>(a: Csr<T>) -> (Csr<T>, Vec<T>) {
    let b = ones_rhs(&a);
    (a, b)
}

/// (A, A·x*).
pub fn with_rhs<T: Scalar>(a: Csr<T>) -> (Csr<T>, Vec<T>) {
    let b = rhs(&a);
    (a, b)
}

/// The 3D convection–diffusion matrix on a k³ grid with b = A·x*.
pub fn convdiff_system<T: Scalar>(k: usize, eps: f64, field: ConvectionField) -> (Csr<T>, Vec<T>) {
    with_rhs(convection_diffusion_3d(k, eps, field))
}

/// A shipped matrix, tests/data/`name`.mtx, in f64.
pub fn load(name: &str) -> Csr<f64> {
    market::read_matrix_market(super::data(&format!("{name}.mtx")))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The shipped right-hand side tests/data/`name`_rhs.mtx where `name` is one of `shipped`,
/// else A·x*.
pub fn rhs_for(name: &str, a: &Csr<f64>, shipped: &[&str]) -> Vec<f64> {
    if shipped.contains(&name) {
        market::read_vector(super::data(&format!("{name}_rhs.mtx"))).unwrap()
    } else {
        rhs(a)
    }
}

/// A shipped matrix with its right-hand side (see [`rhs_for`]).
pub fn shipped_system(name: &str, shipped: &[&str]) -> (Csr<f64>, Vec<f64>) {
    let a = load(name);
    let b = rhs_for(name, &a, shipped);
    (a, b)
}

/// The system (A, b) rounded to T.
pub fn cast<T: Scalar>(a: &Csr<f64>, b: &[f64]) -> (Csr<T>, Vec<T>) {
    (
        a.cast().unwrap(),
        b.iter().map(|&v| T::from_f64(v)).collect(),
    )
}

/// The 2D Neumann Laplacian on a k×k grid (constants in its kernel: singular).
pub fn neumann_laplacian_2d(k: usize) -> Csr<f64> {
    let n = k * k;
    let mut coo = Coo::<f64>::new(n, n);
    for j in 0..k {
        for i in 0..k {
            let row = i + k * j;
            let mut deg = 0.0;
            for (di, dj) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
                let (ii, jj) = (i as i64 + di, j as i64 + dj);
                if ii >= 0 && jj >= 0 && ii < k as i64 && jj < k as i64 {
                    coo.push(row, ii as usize + k * jj as usize, -1.0).unwrap();
                    deg += 1.0;
                }
            }
            coo.push(row, row, deg).unwrap();
        }
    }
    coo.to_csr().unwrap()
}

/// Poisson 2D on a k×k grid with its diagonal lowered by `shift`: ρ(I − D⁻¹A) =
/// 4cos(πh)/(4 − shift); symmetric indefinite once `shift` passes the smallest eigenvalue.
pub fn shifted_poisson(k: usize, shift: f64) -> Csr<f64> {
    let p = poisson_2d_fd::<f64>(k);
    let mut coo = Coo::new(p.nrows(), p.ncols());
    for i in 0..p.nrows() {
        let (c, v) = p.row(i);
        for (&j, &x) in c.iter().zip(v) {
            let j = j as usize;
            coo.push(i, j, if j == i { x - shift } else { x }).unwrap();
        }
    }
    coo.to_csr().unwrap()
}

/// A small matrix from its dense rows (zeros not stored).
pub fn from_rows(rows: &[&[f64]]) -> Csr<f64> {
    let n = rows.len();
    let mut coo = Coo::new(n, n);
    for (i, row) in rows.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if v != 0.0 {
                coo.push(i, j, v).unwrap();
            }
        }
    }
    coo.to_csr().unwrap()
}

/// diag(1, 0): singular; with b = (1, 1) the second equation reads 0 = 1.
pub fn singular_diag() -> Csr<f64> {
    Csr::<f64>::new(2, 2, vec![0, 1, 1], vec![0], vec![1.0]).unwrap()
}

/// An n × s block with prescribed singular values 1 … 1/κ (geometric), U and V from fixed
/// pseudo-random orthonormal matrices: cond₂ = κ exactly up to rounding (the TSQR tests).
pub fn block_with_cond(n: usize, s: usize, kappa: f64) -> nalgebra::DMatrix<f64> {
    use nalgebra::DMatrix;
    let g = DMatrix::from_fn(n, s, |i, j| ((i * 31 + j * 17) as f64 * 0.618).sin());
    let u = g.qr().q();
    let h = DMatrix::from_fn(s, s, |i, j| ((i * 7 + j * 3 + 1) as f64 * 1.3).cos());
    let v = h.qr().q();
    let sigma = DMatrix::from_fn(s, s, |i, j| {
        if i == j {
            kappa.powf(-(i as f64) / (s as f64 - 1.0))
        } else {
            0.0
        }
    });
    u * sigma * v.transpose()
}

/// A random nonsymmetric matrix of order `n`: a random pattern (up to six entries a row) with
/// |entries| < 1 and a diagonal that dominates each row by a random margin in (0.05, 1), so
/// that GMRES takes tens of steps, over several short cycles.
pub fn random_nonsymmetric(rng: &mut rand_chacha::ChaCha8Rng, n: usize) -> Csr<f64> {
    use rand::Rng;
    let mut coo = Coo::new(n, n);
    for i in 0..n {
        let mut sum = 0.0;
        for _ in 0..rng.random_range(0..7) {
            let j = rng.random_range(0..n);
            if j != i {
                let v: f64 = rng.random_range(-1.0..1.0);
                coo.push(i, j, v).unwrap();
                sum += v.abs();
            }
        }
        coo.push(i, i, sum + rng.random_range(0.05..1.0)).unwrap();
    }
    coo.to_csr().unwrap()
}
