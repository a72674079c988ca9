//! SpMV bandwidth (`krylov bench --spmv`, `krylov spmv`): y = A·x in one storage format,
//! checked against the f64 CPU product and timed in batches of products.

use std::time::Instant;

use super::{Heater, lead_columns, median_after_warmup, with_heater_paused};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::{Precision, Scalar};
use crate::gpu::Engine;
use crate::matrix::Csr;

/// One row of `krylov bench --spmv`: y = A·x in one storage format.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SpmvRow {
    pub kind: &'static str,
    pub matrix: String,
    pub n: usize,
    pub nnz: usize,
    pub precision: Precision,
    pub format: crate::base::Format,
    /// Why the format was not run (padding budget, binding limit), `None` when it ran.
    pub refused: Option<String>,
    /// Bytes of the format's arrays.
    pub matrix_bytes: u64,
    /// Stored values including padding (paper 003's `e`).
    pub stored: u64,
    /// Bytes moved per product as paper 003 Table 3 counts them: 2·e values (matrix and
    /// vector element per stored value) plus the index data.
    pub model_bytes: u64,
    /// Median wall time of one product (`repeat` products per submit).
    pub seconds: f64,
    pub gb_per_s: f64,
    /// 2·nnz / time: useful work, comparable across formats.
    pub gflops: f64,
    /// ‖y − y_f64‖ / ‖y_f64‖ against the f64 CPU product.
    pub relative_error: f64,
}

/// How `krylov bench --spmv` times one format.
#[derive(Debug, Clone, Copy)]
pub struct SpmvBench {
    /// Timed batches (the median is reported), after one untimed batch.
    pub runs: usize,
    /// Products per batch (one submit).
    pub repeat: usize,
    /// Padding budget of the conversion.
    pub max_padding: f64,
}

/// Times `repeat` products y = A·x in one submit, `runs` times, for `format` (median).
/// A refused format gives a row with `refused` set, not an error.
pub fn bench_spmv<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    matrix: &str,
    format: crate::base::Format,
    how: SpmvBench,
    heater: Option<&Heater>,
) -> Result<SpmvRow> {
    let SpmvBench {
        runs,
        repeat,
        max_padding,
    } = how;
    use crate::gpu::{GpuMatrix, Spmv};
    let mut row = SpmvRow {
        kind: "spmv",
        matrix: matrix.to_string(),
        n: a.nrows(),
        nnz: a.nnz(),
        precision: T::PRECISION,
        format,
        refused: None,
        matrix_bytes: 0,
        stored: 0,
        model_bytes: 0,
        seconds: f64::NAN,
        gb_per_s: f64::NAN,
        gflops: f64::NAN,
        relative_error: f64::NAN,
    };
    let ga = match GpuMatrix::upload_with(engine, a, format, max_padding) {
        Ok(ga) => ga,
        Err(KrylovError::FormatRefused { reason, .. }) => {
            row.refused = Some(reason);
            return Ok(row);
        }
        Err(e @ KrylovError::BufferTooLarge { .. }) => {
            row.refused = Some(e.to_string());
            return Ok(row);
        }
        Err(e) => return Err(e),
    };
    row.format = ga.format();
    let kernel = Spmv::new(engine, &ga)?;
    let x: Vec<T> = (0..a.ncols())
        .map(|i| T::from_f64(1.0 + (i % 7) as f64 / 7.0))
        .collect();
    let xb = engine.storage_from("x", &x)?;
    let yb = engine.storage_zeroed::<T>("y", a.nrows())?;
    let bg = kernel.bind(engine, &ga, &xb, &yb);
    let y = kernel.apply_buffers(engine, &ga, &xb, &yb)?;
    let exact = crate::cpu::spmv_f64(a, &x);
    let num: f64 = y
        .iter()
        .zip(&exact)
        .map(|(g, r)| (g.as_f64() - r).powi(2))
        .sum();
    let den: f64 = exact.iter().map(|r| r * r).sum();
    row.relative_error = if den > 0.0 {
        (num / den).sqrt()
    } else {
        num.sqrt()
    };
    let repeat = repeat.max(1);
    // One untimed batch first (pipeline and caches warm), then the timed ones.
    let seconds = with_heater_paused(heater, || {
        median_after_warmup(runs.max(1), || {
            let start = Instant::now();
            let mut batch = engine.begin("spmv bench");
            for _ in 0..repeat {
                kernel.record(&mut batch, &ga, &bg);
            }
            batch
                .submit_and_read::<T>(&yb, 0, 1)
                .map(|_| start.elapsed().as_secs_f64() / repeat as f64)
        })
    })?;
    let s = std::mem::size_of::<T>() as u64;
    row.matrix_bytes = ga.bytes();
    row.stored = ga.stored_elements();
    row.model_bytes = 2 * row.stored * s + ga.index_bytes();
    row.seconds = seconds;
    row.gb_per_s = row.model_bytes as f64 / row.seconds / 1e9;
    row.gflops = 2.0 * a.nnz() as f64 / row.seconds / 1e9;
    Ok(row)
}

/// Width of the matrix column of [`spmv_table_header`].
const MATRIX_WIDTH: usize = 22;

/// The header of [`spmv_table_row`]'s table.
pub fn spmv_table_header() -> String {
    let head = lead_columns("matrix", MATRIX_WIDTH, "n", "nnz");
    format!(
        "{head} {:<5} {:<6} {:>11} {:>9} {:>9} {:>8} {:>9}",
        "prec", "format", "bytes", "µs/spmv", "GB/s", "GFLOP/s", "rel.err"
    )
}

/// One line of the `krylov bench --spmv` table.
pub fn spmv_table_row(r: &SpmvRow) -> String {
    let head = format!(
        "{} {:<5} {:<6}",
        lead_columns(&r.matrix, MATRIX_WIDTH, r.n, r.nnz),
        r.precision.to_string(),
        r.format.as_str()
    );
    match &r.refused {
        Some(why) => format!("{head} refused: {why}"),
        None => format!(
            "{head} {:>11} {:>9.2} {:>9.1} {:>8.2} {:>9.1e}",
            r.matrix_bytes,
            r.seconds * 1e6,
            r.gb_per_s,
            r.gflops,
            r.relative_error
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_spmv_table_row_lines_up_under_the_header() {
        assert_eq!(
            spmv_table_header(),
            "matrix                         n        nnz prec  format       bytes   µs/spmv      GB/s  GFLOP/s   rel.err"
        );
        let mut row = SpmvRow {
            kind: "spmv",
            matrix: "poisson2d:1024".into(),
            n: 1024,
            nnz: 4992,
            precision: Precision::F32,
            format: crate::base::Format::Csr,
            refused: None,
            matrix_bytes: 44036,
            stored: 4992,
            model_bytes: 84000,
            seconds: 86.57e-6,
            gb_per_s: 0.7,
            gflops: 0.12,
            relative_error: 8.0e-8,
        };
        assert_eq!(
            spmv_table_row(&row),
            "poisson2d:1024              1024       4992 f32   csr          44036     86.57       0.7     0.12    8.0e-8"
        );
        row.refused = Some("too much padding".into());
        assert_eq!(
            spmv_table_row(&row),
            "poisson2d:1024              1024       4992 f32   csr    refused: too much padding"
        );
    }
}
