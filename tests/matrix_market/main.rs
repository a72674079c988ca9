//! Matrix Market reader/writer: the shipped test matrices, round trips, gzip input, every
//! kind of malformed input (variant and line number), and a no-panic fuzz pass.
//!
//! Grouped by concern: the shipped files (`shipped`), round trips (`round_trip`), gzip
//! (`gzip`), accepted variants (`accepted`), malformed headers and size lines (`malformed_header`)
//! and entries (`malformed_entries`), vectors (`vectors`), robustness (`robustness`).

#[path = "../common/mod.rs"]
mod common;

mod accepted;
mod gzip;
mod malformed_entries;
mod malformed_header;
mod robustness;
mod round_trip;
mod shipped;
mod vectors;

use std::io::Write;
use std::path::PathBuf;

use krylov_wgpu::matrix::{Csr, read_matrix_market_from};
use krylov_wgpu::{KrylovError, MarketErrorKind as K};

/// A fresh, unique scratch directory under the system temp dir.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "krylov-wgpu-mm-{tag}-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn parse(text: &str) -> krylov_wgpu::Result<Csr<f64>> {
    read_matrix_market_from(text.as_bytes(), "test.mtx")
}

fn parse_bytes(bytes: &[u8]) -> krylov_wgpu::Result<Csr<f64>> {
    read_matrix_market_from(bytes, "test.mtx")
}

/// Asserts a Matrix Market error on `line` and returns its kind.
#[track_caller]
fn market_err<T: std::fmt::Debug>(r: krylov_wgpu::Result<T>, line: usize) -> K {
    match r {
        Err(KrylovError::MatrixMarket {
            path,
            line: got,
            kind,
        }) => {
            assert_eq!(path, "test.mtx");
            assert_eq!(got, line, "wrong line for error {kind}");
            kind
        }
        other => panic!("expected a MatrixMarket error on line {line}, got {other:?}"),
    }
}

#[track_caller]
fn err(text: &str, line: usize) -> K {
    market_err(parse(text), line)
}

#[track_caller]
fn dense(a: &Csr<f64>) -> Vec<Vec<f64>> {
    (0..a.nrows())
        .map(|i| (0..a.ncols()).map(|j| a.get(i, j)).collect())
        .collect()
}

const GENERAL: &str = "%%MatrixMarket matrix coordinate real general\n";
const SYMMETRIC: &str = "%%MatrixMarket matrix coordinate real symmetric\n";
/// Every (text, line, kind): reading the text fails with that kind on that line.
#[track_caller]
fn assert_errors(cases: impl IntoIterator<Item = (String, usize, K)>) {
    for (text, line, kind) in cases {
        assert_eq!(err(&text, line), kind, "{text:?}");
    }
}

fn assert_bit_identical<T: krylov_wgpu::Scalar>(a: &Csr<T>, b: &Csr<T>) {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    assert_eq!(a.row_ptr(), b.row_ptr());
    assert_eq!(a.col_idx(), b.col_idx());
    let bits = |m: &Csr<T>| -> Vec<u8> { bytemuck_bytes(m.values()) };
    assert_eq!(bits(a), bits(b));
}

fn bytemuck_bytes<T: krylov_wgpu::Scalar>(v: &[T]) -> Vec<u8> {
    v.iter()
        .flat_map(|x| x.as_f64().to_bits().to_le_bytes())
        .collect()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}
