//! The reference sparse matrix–vector product.

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// y = A·x in the precision `T`, row by row in stored order (the order the GPU
/// `spmv_csr` kernel sums in, so f32 results can match closely).
pub fn spmv<T: Scalar>(a: &Csr<T>, x: &[T], y: &mut [T]) -> Result<()> {
    a.mul_vec_into(x, y)
}

/// y = A·x accumulated in f64 whatever `T` is: the oracle GPU results are compared with.
pub fn spmv_f64<T: Scalar>(a: &Csr<T>, x: &[T]) -> Vec<f64> {
    let (rp, ci, va) = (a.row_ptr(), a.col_idx(), a.values());
    (0..a.nrows())
        .map(|i| {
            (rp[i] as usize..rp[i + 1] as usize)
                .map(|k| va[k].as_f64() * x[ci[k] as usize].as_f64())
                .sum()
        })
        .collect()
}

/// The true relative residual ‖b − A·x‖₂ / ‖b‖₂, computed in f64 (‖b − Ax‖₂ when b = 0).
pub fn true_relative_residual<T: Scalar>(a: &Csr<T>, b: &[T], x: &[T]) -> f64 {
    let ax = spmv_f64(a, x);
    let r: f64 = ax
        .iter()
        .zip(b)
        .map(|(ax, b)| (b.as_f64() - ax).powi(2))
        .sum::<f64>()
        .sqrt();
    let bn: f64 = b.iter().map(|v| v.as_f64().powi(2)).sum::<f64>().sqrt();
    if bn > 0.0 { r / bn } else { r }
}
