//! The structural statistics (`MatrixStats`) against direct computations.

use krylov_wgpu::matrix::generators::banded;
use krylov_wgpu::matrix::{Dia, MatrixStats, block_density};

use super::{row_len, zoo};

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
