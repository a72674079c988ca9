//! The generated problems of `krylov bench` and the traffic model of one iteration.

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::{Csr, generators};
use crate::solvers::{Method, Variant};

/// The matrix of a case: `poisson2d` → k = round(√n), `laplace3d` → k = round(∛n).
pub fn bench_matrix<T: Scalar>(problem: &str, n: usize) -> Result<Csr<T>> {
    let spec = match problem {
        "poisson2d" => format!("poisson2d:{}", (n as f64).sqrt().round().max(2.0) as usize),
        "laplace3d" => format!("laplace3d:{}", (n as f64).cbrt().round().max(2.0) as usize),
        other => {
            return Err(KrylovError::InvalidOption(format!(
                "unknown bench problem `{other}` (poisson2d or laplace3d)"
            )));
        }
    };
    generators::from_spec(&spec)
}

/// Minimum bytes an iteration moves (CSR, perfect reuse of the gathered vector): SpMV reads
/// values + column indices + row pointers + the input vector and writes the output; every
/// vector operation reads/writes its n-vectors once.
///
/// | method | variant | vector passes per iteration (besides SpMV) |
/// |---|---|---|
/// | CG | pipelined | update: read x,r,p,Ap, write x,r,p = 7; SpMV reads p, writes Ap = 2 → 9 |
/// | CG | classical | dot 2 + axpy 3 + axpy 3 + dot 1 + xpay 3 + SpMV 2 = 14 |
///
/// Other methods count two SpMVs (BiCGStab, BiCG) or one (GMRES) plus their vector passes,
/// roughly: BiCGStab pipelined 2 SpMV + 18 (its four kernels read/write 3 + 3 + 3 + 9 vectors),
/// classical 2 SpMV + 36 (7 dots, 5 axpys, 1 xpay, 2 SpMV vector passes); GMRES one SpMV plus the
/// Gram–Schmidt reads of the basis (≈ m/2 + 4 vectors on average over a cycle of m).
pub fn bytes_per_iteration(
    method: Method,
    variant: Variant,
    n: usize,
    nnz: usize,
    s: usize,
    restart: usize,
) -> f64 {
    let (n, nnz, s) = (n as f64, nnz as f64, s as f64);
    let spmv = (4.0 + s) * nnz + 4.0 * (n + 1.0);
    let passes = |k: f64| k * s * n;
    match (method, variant) {
        // (CG has no p1 variant: the options refuse it.)
        (Method::Cg, Variant::Pipelined | Variant::P1) => spmv + passes(9.0),
        (Method::Cg, Variant::Classical) => spmv + passes(14.0),
        // Fused: reads x, r, p, Ap, writes x, r, p, Ap (the product's three gathers of the
        // previous iterate are its reads of r, p, Ap).
        (Method::Cg, Variant::Fused | Variant::Cooperative) => spmv + passes(8.0),
        // One workgroup: p stays in workgroup memory; Ap written and read, x and r read and
        // written, r read again for the new direction.
        (Method::Cg, Variant::Workgroup) => spmv + passes(7.0),
        // (BiCGStab has neither a fused nor a workgroup variant: the options refuse them.)
        (
            Method::Bicgstab,
            Variant::Pipelined
            | Variant::Fused
            | Variant::Workgroup
            | Variant::Cooperative
            | Variant::P1,
        ) => 2.0 * spmv + passes(18.0),
        (Method::Bicgstab, Variant::Classical) => 2.0 * spmv + passes(36.0),
        (Method::Bicg, _) => 2.0 * spmv + passes(16.0),
        // CA-GMRES is measured against GMRES(m)'s bytes: issue #17's goal is its time per
        // iteration within 1.3x of GMRES's memory roofline.
        (Method::Gmres | Method::CaGmres, _) => spmv + passes(restart as f64 / 2.0 + 6.0),
        (Method::Jacobi, _) => spmv + passes(5.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_matrix_sizes_to_about_n_unknowns() {
        assert_eq!(
            bench_matrix::<f64>("poisson2d", 1000).unwrap().nrows(),
            32 * 32
        );
        assert_eq!(
            bench_matrix::<f32>("laplace3d", 1000).unwrap().nrows(),
            10 * 10 * 10
        );
        // Tiny sizes still give a grid of at least 2 per dimension.
        assert_eq!(bench_matrix::<f64>("poisson2d", 1).unwrap().nrows(), 4);
        let err = bench_matrix::<f64>("nope", 100).unwrap_err();
        assert!(
            err.to_string().contains("unknown bench problem `nope`"),
            "{err}"
        );
    }

    #[test]
    fn bytes_per_iteration_counts_the_spmv_and_the_vector_passes() {
        // n = 10, nnz = 50, f32: SpMV (4 + 4)·50 + 4·11 = 444; 9 passes of 40 bytes.
        let pipelined = bytes_per_iteration(Method::Cg, Variant::Pipelined, 10, 50, 4, 30);
        assert_eq!(pipelined, 444.0 + 9.0 * 40.0);
        let classical = bytes_per_iteration(Method::Cg, Variant::Classical, 10, 50, 4, 30);
        assert_eq!(classical, 444.0 + 14.0 * 40.0);
        let gmres = bytes_per_iteration(Method::Gmres, Variant::Classical, 10, 50, 4, 30);
        assert_eq!(gmres, 444.0 + 21.0 * 40.0);
    }
}
