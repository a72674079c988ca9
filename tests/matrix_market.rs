//! Matrix Market reader/writer: the shipped test matrices, round trips, gzip input, every
//! kind of malformed input (variant and line number), and a no-panic fuzz pass.

use std::io::Write;
use std::path::{Path, PathBuf};

use krylov_wgpu::matrix::{
    Csr, read_matrix_market, read_matrix_market_from, read_vector, read_vector_from,
    write_matrix_market, write_matrix_market_to, write_vector, write_vector_to,
};
use krylov_wgpu::{KrylovError, MarketErrorKind as K};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join(name)
}

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

// ---------------------------------------------------------------------------------------
// The shipped matrices
// ---------------------------------------------------------------------------------------

/// (file, rows, cols, nnz after expansion, symmetric storage, numerically symmetric)
const MATRICES: &[(&str, usize, usize, usize, bool, bool)] = &[
    ("494_bus.mtx", 494, 494, 1666, true, true),
    ("add32.mtx", 4960, 4960, 23884, false, false),
    ("ani4.mtx", 3081, 3081, 20971, false, true),
    ("bcsstk01.mtx", 48, 48, 400, true, true),
    ("bcsstk21.mtx", 3600, 3600, 26600, true, true),
    ("jpwh_991.mtx", 991, 991, 6027, false, false),
    ("mesh1e1.mtx", 48, 48, 306, false, true),
    ("nos6.mtx", 675, 675, 3255, true, true),
    ("pde2961.mtx", 2961, 2961, 14585, false, false),
    ("pores_1.mtx", 30, 30, 180, false, false),
    ("sherman4.mtx", 1104, 1104, 3786, false, false),
    ("Trefethen_2000.mtx", 2000, 2000, 41906, true, true),
    ("west0479.mtx", 479, 479, 1910, false, false),
];

const VECTORS: &[(&str, usize)] = &[("mesh1e1_rhs.mtx", 48), ("sherman4_rhs.mtx", 1104)];

#[test]
fn every_data_file_is_covered() {
    let mut files: Vec<String> = std::fs::read_dir(data(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mtx"))
        .collect();
    files.sort();
    let mut known: Vec<String> = MATRICES
        .iter()
        .map(|m| m.0.to_string())
        .chain(VECTORS.iter().map(|v| v.0.to_string()))
        .collect();
    known.sort();
    assert_eq!(files, known);
}

#[test]
fn shipped_matrices_f64() {
    for &(file, rows, cols, nnz, sym_storage, num_sym) in MATRICES {
        let a = read_matrix_market::<f64>(data(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((a.nrows(), a.ncols(), a.nnz()), (rows, cols, nnz), "{file}");
        if sym_storage {
            assert!(a.is_symmetric(0.0), "{file} not exactly symmetric");
        }
        if num_sym {
            assert!(a.is_symmetric(1e-12), "{file} not numerically symmetric");
        } else {
            assert!(!a.is_symmetric(1e-12), "{file} unexpectedly symmetric");
        }
    }
}

#[test]
fn shipped_matrices_f32() {
    for &(file, rows, cols, nnz, sym_storage, _) in MATRICES {
        let a = read_matrix_market::<f32>(data(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((a.nrows(), a.ncols(), a.nnz()), (rows, cols, nnz), "{file}");
        if sym_storage {
            assert!(a.is_symmetric(0.0), "{file}");
        }
        let b = read_matrix_market::<f64>(data(file)).unwrap();
        assert_eq!(a.row_ptr(), b.row_ptr());
        assert_eq!(a.col_idx(), b.col_idx());
        for (&x, &y) in a.values().iter().zip(b.values()) {
            assert!((x as f64 - y).abs() <= 6e-8 * y.abs(), "{file}: {x} vs {y}");
        }
    }
}

#[test]
fn shipped_matrix_values() {
    // Spot checks against the files' text.
    let a = read_matrix_market::<f64>(data("bcsstk01.mtx")).unwrap();
    assert_eq!(a.get(0, 0), 2.8322685185200e+06);
    let t = read_matrix_market::<f64>(data("Trefethen_2000.mtx")).unwrap();
    assert_eq!(t.get(0, 0), 2.0);
    assert_eq!(t.get(1, 0), 1.0);
    assert_eq!(t.get(0, 1), 1.0);
    assert!(t.values().iter().all(|v| v.fract() == 0.0));
    let w = read_matrix_market::<f64>(data("west0479.mtx")).unwrap();
    let zero_diag = w.diagonal().iter().filter(|&&d| d == 0.0).count();
    assert_eq!(zero_diag, 471);
}

#[test]
fn shipped_vectors() {
    for &(file, n) in VECTORS {
        let x = read_vector::<f64>(data(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(x.len(), n, "{file}");
        assert!(x.iter().all(|v| v.is_finite()));
        let y = read_vector::<f32>(data(file)).unwrap();
        assert_eq!(y.len(), n);
    }
    assert!(
        read_vector::<f64>(data("mesh1e1_rhs.mtx"))
            .unwrap()
            .iter()
            .all(|&v| v == 1.0)
    );
    // A matrix file is not a vector.
    let e = read_vector::<f64>(data("bcsstk01.mtx")).unwrap_err();
    assert!(
        matches!(e, KrylovError::MatrixMarket { line, kind: K::Invalid(ref m), .. }
            if line > 1 && m.contains("vector")),
        "{e}"
    );
}

#[test]
fn missing_file_is_io_error() {
    let e = read_matrix_market::<f64>(data("no-such-file.mtx")).unwrap_err();
    assert!(matches!(e, KrylovError::Io { .. }), "{e:?}");
    let e = read_vector::<f64>(data("no-such-file.mtx")).unwrap_err();
    assert!(matches!(e, KrylovError::Io { .. }), "{e:?}");
}

// ---------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------

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

#[test]
fn round_trip_shipped_matrices() {
    let dir = TempDir::new("rt");
    for &(file, ..) in MATRICES {
        let a = read_matrix_market::<f64>(data(file)).unwrap();
        let out = dir.path(file);
        write_matrix_market(&out, &a).unwrap();
        let b = read_matrix_market::<f64>(&out).unwrap();
        assert_bit_identical(&a, &b);

        let a32 = read_matrix_market::<f32>(data(file)).unwrap();
        write_matrix_market(&out, &a32).unwrap();
        let b32 = read_matrix_market::<f32>(&out).unwrap();
        assert_bit_identical(&a32, &b32);
    }
    let text = std::fs::read_to_string(dir.path("bcsstk01.mtx")).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate real general\n"));
    assert!(text.lines().nth(1).unwrap().contains("krylov-wgpu"));
}

#[test]
fn round_trip_awkward_values() {
    let vals = [
        1.0 / 3.0,
        -2.0 / 7.0,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324, // smallest subnormal
        -0.0,
        0.1 + 0.2,
        std::f64::consts::PI * 1e200,
        -1e-300,
        123456789.12345679,
    ];
    let n = vals.len();
    let a = Csr::new(
        n,
        n + 2,
        (0..=n as u32).collect(),
        (0..n as u32).map(|i| i + 1).collect(),
        vals.to_vec(),
    )
    .unwrap();
    let mut buf = Vec::new();
    write_matrix_market_to(&mut buf, &a).unwrap();
    let b: Csr<f64> = read_matrix_market_from(buf.as_slice(), "mem").unwrap();
    assert_bit_identical(&a, &b);
    // -0.0 survives with its sign.
    assert!(b.values()[5].is_sign_negative());

    let vals32 = [
        1.0f32 / 3.0,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-45, // smallest f32 subnormal
        -0.0,
        0.1,
        16777217.0,
        -3.4e-38,
        2.0 / 7.0,
        1e10,
    ];
    let a32 = Csr::new(
        n,
        n + 2,
        (0..=n as u32).collect(),
        (0..n as u32).map(|i| i + 1).collect(),
        vals32.to_vec(),
    )
    .unwrap();
    let mut buf = Vec::new();
    write_matrix_market_to(&mut buf, &a32).unwrap();
    let b32: Csr<f32> = read_matrix_market_from(buf.as_slice(), "mem").unwrap();
    assert_bit_identical(&a32, &b32);
}

#[test]
fn round_trip_random_values() {
    // Deterministic xorshift; random finite bit patterns over the whole exponent range.
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut vals = Vec::new();
    while vals.len() < 2000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let v = f64::from_bits(s);
        if v.is_finite() {
            vals.push(v);
        }
    }
    let dir = TempDir::new("vec");
    let path = dir.path("x.mtx");
    write_vector(&path, &vals).unwrap();
    let back = read_vector::<f64>(&path).unwrap();
    assert_eq!(
        vals.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        back.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix array real general\n"));
    assert!(text.contains("\n2000 1\n"));

    let v32: Vec<f32> = vals
        .iter()
        .map(|&v| v as f32)
        .filter(|v| v.is_finite())
        .collect();
    let mut buf = Vec::new();
    write_vector_to(&mut buf, &v32).unwrap();
    let back32 = read_vector_from::<f32, _>(buf.as_slice(), "mem").unwrap();
    assert_eq!(
        v32.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        back32.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn round_trip_empty_and_rectangular() {
    for (m, n) in [(0, 0), (3, 0), (0, 4), (3, 5)] {
        let a = Csr::<f64>::new(m, n, vec![0; m + 1], vec![], vec![]).unwrap();
        let mut buf = Vec::new();
        write_matrix_market_to(&mut buf, &a).unwrap();
        let b: Csr<f64> = read_matrix_market_from(buf.as_slice(), "mem").unwrap();
        assert_eq!(a, b);
    }
    let mut buf = Vec::new();
    write_vector_to::<f64, _>(&mut buf, &[]).unwrap();
    assert!(
        read_vector_from::<f64, _>(buf.as_slice(), "mem")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn writers_refuse_non_finite_values() {
    // `Csr::cast` refuses an f64 -> f32 overflow, so a non-finite matrix cannot be built.
    let a = Csr::<f64>::new(1, 1, vec![0, 1], vec![0], vec![1e300]).unwrap();
    assert!(matches!(
        a.cast::<f32>(),
        Err(KrylovError::NonFinite { index: 0, .. })
    ));
    let mut buf = Vec::new();
    assert!(matches!(
        write_vector_to(&mut buf, &[1.0, f64::NAN]),
        Err(KrylovError::NonFinite { index: 1, .. })
    ));
    assert!(buf.is_empty());
}

#[test]
fn write_to_bad_path_is_io_error() {
    let dir = TempDir::new("badpath");
    let a = Csr::<f64>::identity(2);
    let bad = dir.path("no-such-dir").join("a.mtx");
    assert!(matches!(
        write_matrix_market(&bad, &a),
        Err(KrylovError::Io { .. })
    ));
    assert!(matches!(
        write_vector(&bad, &[1.0f64]),
        Err(KrylovError::Io { .. })
    ));
}

// ---------------------------------------------------------------------------------------
// gzip
// ---------------------------------------------------------------------------------------

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn gzip_committed_file() {
    let plain = read_matrix_market::<f64>(data("bcsstk01.mtx")).unwrap();
    let gz = read_matrix_market::<f64>(data("bcsstk01.mtx.gz")).unwrap();
    assert_bit_identical(&plain, &gz);
}

#[test]
fn gzip_made_in_test_detected_by_magic() {
    let dir = TempDir::new("gz");
    let text = std::fs::read(data("bcsstk01.mtx")).unwrap();
    let plain = read_matrix_market::<f64>(data("bcsstk01.mtx")).unwrap();

    let p = dir.path("bcsstk01.mtx.gz");
    std::fs::write(&p, gzip(&text)).unwrap();
    assert_bit_identical(&plain, &read_matrix_market::<f64>(&p).unwrap());

    // No telling extension: detection is by the magic bytes.
    let p = dir.path("matrix.dat");
    std::fs::write(&p, gzip(&text)).unwrap();
    assert_bit_identical(&plain, &read_matrix_market::<f64>(&p).unwrap());

    // A plain file named .gz is read as plain text.
    let p = dir.path("plain.mtx.gz");
    std::fs::write(&p, &text).unwrap();
    assert_bit_identical(&plain, &read_matrix_market::<f64>(&p).unwrap());

    // Multi-member gzip (concatenated streams, as `cat a.gz b.gz` makes).
    let (head, tail) = text.split_at(text.len() / 2);
    let mut multi = gzip(head);
    multi.extend(gzip(tail));
    let p = dir.path("multi.mtx.gz");
    std::fs::write(&p, multi).unwrap();
    assert_bit_identical(&plain, &read_matrix_market::<f64>(&p).unwrap());

    // Vectors too.
    let rhs = std::fs::read(data("sherman4_rhs.mtx")).unwrap();
    let p = dir.path("rhs.mtx.gz");
    std::fs::write(&p, gzip(&rhs)).unwrap();
    assert_eq!(
        read_vector::<f64>(&p).unwrap(),
        read_vector::<f64>(data("sherman4_rhs.mtx")).unwrap()
    );
}

#[test]
fn gzip_corrupt_or_truncated_is_an_error() {
    let dir = TempDir::new("gzbad");
    let text = std::fs::read(data("bcsstk01.mtx")).unwrap();
    let gz = gzip(&text);
    for cut in [2, 10, gz.len() / 2, gz.len() - 4] {
        let p = dir.path("cut.mtx.gz");
        std::fs::write(&p, &gz[..cut]).unwrap();
        let e = read_matrix_market::<f64>(&p).unwrap_err();
        assert!(
            matches!(e, KrylovError::MatrixMarket { .. }),
            "cut {cut}: {e:?}"
        );
    }
    let mut bad = gz.clone();
    for b in bad.iter_mut().skip(20).take(40) {
        *b ^= 0x5a;
    }
    let p = dir.path("bad.mtx.gz");
    std::fs::write(&p, &bad).unwrap();
    assert!(read_matrix_market::<f64>(&p).is_err());
}

// ---------------------------------------------------------------------------------------
// Accepted variants
// ---------------------------------------------------------------------------------------

#[test]
fn pattern_field() {
    let a =
        parse("%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 1\n3 1\n2 3\n").unwrap();
    assert_eq!(
        dense(&a),
        vec![
            vec![1.0, 0.0, 0.0],
            vec![0.0, 0.0, 1.0],
            vec![1.0, 0.0, 0.0]
        ]
    );
    let s = parse("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n").unwrap();
    assert_eq!(dense(&s), vec![vec![1.0, 1.0], vec![1.0, 0.0]]);
}

#[test]
fn integer_field() {
    let a =
        parse("%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 7\n2 1 -3\n2 2 +4\n")
            .unwrap();
    assert_eq!(dense(&a), vec![vec![7.0, 0.0], vec![-3.0, 4.0]]);
    // Integers beyond i64 are still integers.
    let a = parse(
        "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 100000000000000000000\n",
    )
    .unwrap();
    assert_eq!(a.get(0, 0), 1e20);
    // A fractional value in an integer file is not an integer.
    let k = err(
        "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n",
        3,
    );
    assert_eq!(k, K::NotANumber("1.5".into()));
}

#[test]
fn skew_symmetric_coordinate() {
    let a = parse("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -2\n")
        .unwrap();
    assert_eq!(
        dense(&a),
        vec![
            vec![0.0, -1.5, 0.0],
            vec![1.5, 0.0, 2.0],
            vec![0.0, -2.0, 0.0]
        ]
    );
    let t = a.transpose();
    for (x, y) in dense(&a).iter().flatten().zip(dense(&t).iter().flatten()) {
        assert_eq!(*x, -*y);
    }
}

#[test]
fn skew_symmetric_array() {
    // Strictly lower triangle, column-major: (2,1) (3,1) (3,2).
    let a = parse("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n").unwrap();
    assert_eq!(
        dense(&a),
        vec![
            vec![0.0, -1.0, -2.0],
            vec![1.0, 0.0, -3.0],
            vec![2.0, 3.0, 0.0]
        ]
    );
}

#[test]
fn array_general_column_major_drops_zeros() {
    let a = parse("%%MatrixMarket matrix array real general\n% 2 x 3\n2 3\n1\n4\n0\n5\n3\n0.0\n")
        .unwrap();
    assert_eq!(dense(&a), vec![vec![1.0, 0.0, 3.0], vec![4.0, 5.0, 0.0]]);
    assert_eq!(a.nnz(), 4);
}

#[test]
fn array_symmetric_lower_triangle() {
    // Lower triangle column-major: (1,1) (2,1) (3,1) (2,2) (3,2) (3,3).
    let a = parse("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n").unwrap();
    assert_eq!(
        dense(&a),
        vec![
            vec![1.0, 2.0, 3.0],
            vec![2.0, 4.0, 5.0],
            vec![3.0, 5.0, 6.0]
        ]
    );
    // Integer arrays too.
    let b = parse("%%MatrixMarket matrix array integer symmetric\n2 2\n1\n0\n3\n").unwrap();
    assert_eq!(dense(&b), vec![vec![1.0, 0.0], vec![0.0, 3.0]]);
    assert_eq!(b.nnz(), 2);
}

#[test]
fn hermitian_real_is_symmetric() {
    let h =
        parse("%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n1 1 2\n2 1 -1\n").unwrap();
    let s =
        parse("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 2\n2 1 -1\n").unwrap();
    assert_eq!(h, s);
    assert_eq!(dense(&h), vec![vec![2.0, -1.0], vec![-1.0, 0.0]]);
}

#[test]
fn uppercase_and_mixed_case_banner() {
    let a = parse("%%MATRIXMARKET MATRIX COORDINATE REAL GENERAL\n1 1 1\n1 1 2\n").unwrap();
    assert_eq!(a.get(0, 0), 2.0);
    let b = parse("%%matrixmarket Matrix Coordinate Real Symmetric\n2 2 1\n2 1 2\n").unwrap();
    assert_eq!(b.nnz(), 2);
    let c = parse("%%MatrixMarket matrix Array Real Skew-Symmetric\n2 2\n5\n").unwrap();
    assert_eq!(dense(&c), vec![vec![0.0, -5.0], vec![5.0, 0.0]]);
}

#[test]
fn comments_and_blank_lines_anywhere() {
    let text = "%%MatrixMarket matrix coordinate real general\n\
                % header comment\n\
                \n\
                   % indented comment\n\
                3 3 3\n\
                % between entries\n\
                1 1 1.0\n\
                \n\
                \t \n\
                3 3 3.0\n\
                %% another\n\
                2 1 2.0\n\
                % trailing comment\n\
                \n";
    let a = parse(text).unwrap();
    assert_eq!(a.nnz(), 3);
    assert_eq!(a.get(2, 2), 3.0);
    assert_eq!(a.get(1, 0), 2.0);
}

#[test]
fn empty_rows_and_rectangular() {
    let a = parse(&format!("{GENERAL}5 2 2\n1 2 1\n5 1 2\n")).unwrap();
    assert_eq!((a.nrows(), a.ncols(), a.nnz()), (5, 2, 2));
    assert_eq!(a.row_ptr(), &[0, 1, 1, 1, 1, 2]);
    let e = parse(&format!("{GENERAL}0 0 0\n")).unwrap();
    assert_eq!((e.nrows(), e.ncols(), e.nnz()), (0, 0, 0));
    let z = parse(&format!("{GENERAL}4 4 0\n")).unwrap();
    assert_eq!(z.row_ptr(), &[0; 5]);
}

#[test]
fn duplicates_summed_and_explicit_zeros_kept() {
    let a = parse(&format!(
        "{GENERAL}2 2 4\n1 1 1\n1 1 2.5\n2 2 0\n1 1 -0.5\n"
    ))
    .unwrap();
    assert_eq!(a.get(0, 0), 3.0);
    assert_eq!(a.nnz(), 2); // (1,1) summed; the explicit zero at (2,2) stays
    assert_eq!(a.col_idx(), &[0, 1]);
}

#[test]
fn symmetric_upper_triangle_accepted() {
    let lower = parse(&format!("{SYMMETRIC}3 3 3\n1 1 4\n2 1 -1\n3 2 -2\n")).unwrap();
    let upper = parse(&format!("{SYMMETRIC}3 3 3\n1 1 4\n1 2 -1\n2 3 -2\n")).unwrap();
    assert_eq!(lower, upper);
    assert_eq!(lower.nnz(), 5);
    assert!(lower.is_symmetric(0.0));
}

#[test]
fn line_endings_bom_and_number_forms() {
    let a = parse(
        "\u{feff}%%MatrixMarket matrix coordinate real general\r\n% c\r\n2 2 4\r\n1 1 1.5D+01\r\n\
         1 2 -2.5d-1\r\n2 1 .5\r\n2 2 3.\r\n",
    )
    .unwrap();
    assert_eq!(dense(&a), vec![vec![15.0, -0.25], vec![0.5, 3.0]]);
    // No newline at the very end.
    let b = parse(&format!("{GENERAL}1 1 1\n1 1 7")).unwrap();
    assert_eq!(b.get(0, 0), 7.0);
    // `double` as a field alias for `real`.
    assert!(parse("%%MatrixMarket matrix coordinate double general\n1 1 1\n1 1 1\n").is_ok());
}

#[test]
fn non_utf8_comment_is_skipped() {
    let mut bytes = b"%%MatrixMarket matrix coordinate real general\n% M\xfcller\n1 1 1\n".to_vec();
    bytes.extend(b"1 1 2\n");
    assert_eq!(parse_bytes(&bytes).unwrap().get(0, 0), 2.0);
}

#[test]
fn f32_reading() {
    let a: Csr<f32> = read_matrix_market_from(
        format!("{GENERAL}1 2 2\n1 1 0.1\n1 2 3.4028234e38\n").as_bytes(),
        "test.mtx",
    )
    .unwrap();
    assert_eq!(a.values(), &[0.1f32, f32::MAX]);
    // Finite as f64 but out of f32 range.
    let r = read_matrix_market_from::<f32, _>(
        format!("{GENERAL}1 1 1\n1 1 1e39\n").as_bytes(),
        "test.mtx",
    );
    assert!(matches!(market_err(r, 3), K::NonFinite(m) if m.contains("f32")));
}

// ---------------------------------------------------------------------------------------
// Malformed input: variant and line number
// ---------------------------------------------------------------------------------------

#[test]
fn empty_file() {
    assert_eq!(err("", 1), K::BadBanner);
}

#[test]
fn missing_banner() {
    assert_eq!(err("3 3 1\n1 1 1\n", 1), K::BadBanner);
    assert_eq!(err("% just a comment\n3 3 1\n1 1 1\n", 1), K::BadBanner);
    assert_eq!(
        err("\n%%MatrixMarket matrix coordinate real general\n", 1),
        K::BadBanner
    );
}

#[test]
fn malformed_banner() {
    assert_eq!(
        err("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1),
        K::BadBanner
    );
    assert_eq!(err("%%MatrixMarket\n", 1), K::BadBanner);
    assert_eq!(
        err(
            "%%MatrixMarket matrix coordinate real general extra\n1 1 0\n",
            1
        ),
        K::BadBanner
    );
    assert_eq!(
        err("%MatrixMarket matrix coordinate real general\n1 1 0\n", 1),
        K::BadBanner
    );
    assert_eq!(
        err("%%MatrixMarketmatrix coordinate real general x\n1 1 0\n", 1),
        K::BadBanner
    );
    // A non-UTF-8 banner.
    assert_eq!(
        market_err(
            parse_bytes(b"%%MatrixMarket matrix coordinate r\xffal general\n"),
            1
        ),
        K::BadBanner
    );
}

#[test]
fn unsupported_object_format_field_symmetry() {
    let unsupported = |text: &str, what_has: &str, value: &str| match err(text, 1) {
        K::Unsupported { what, value: v } => {
            assert!(what.contains(what_has), "{what}");
            assert_eq!(v, value);
        }
        other => panic!("{other:?}"),
    };
    unsupported(
        "%%MatrixMarket vector coordinate real general\n",
        "object",
        "vector",
    );
    unsupported(
        "%%MatrixMarket matrix sparse real general\n",
        "format",
        "sparse",
    );
    unsupported(
        "%%MatrixMarket matrix coordinate quaternion general\n",
        "field",
        "quaternion",
    );
    unsupported(
        "%%MatrixMarket matrix coordinate real diagonal\n",
        "symmetry",
        "diagonal",
    );
    unsupported(
        "%%MatrixMarket matrix array pattern general\n2 2\n",
        "field",
        "pattern",
    );
    unsupported(
        "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n",
        "symmetry",
        "skew-symmetric",
    );
}

#[test]
fn complex_field() {
    assert_eq!(
        err(
            "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
            1
        ),
        K::Complex
    );
    assert_eq!(
        err(
            "%%MatrixMarket matrix array COMPLEX hermitian\n1 1\n1 0\n",
            1
        ),
        K::Complex
    );
}

#[track_caller]
fn bad_size(text: &str, line: usize, needle: &str) {
    match err(text, line) {
        K::BadSizeLine(m) => assert!(m.contains(needle), "`{m}` lacks `{needle}`"),
        other => panic!("expected BadSizeLine, got {other:?}"),
    }
}

#[test]
fn size_line_negative() {
    bad_size(&format!("{GENERAL}% c\n-3 3 1\n"), 3, "negative");
    bad_size(&format!("{GENERAL}3 3 -1\n"), 2, "negative");
    bad_size(
        "%%MatrixMarket matrix array real general\n3 -3\n",
        2,
        "negative",
    );
}

#[test]
fn size_line_not_integer() {
    bad_size(
        &format!("{GENERAL}3.5 3 1\n"),
        2,
        "not a non-negative integer",
    );
    bad_size(
        &format!("{GENERAL}3 three 1\n"),
        2,
        "not a non-negative integer",
    );
    bad_size(
        &format!("{GENERAL}3 3 1e3\n"),
        2,
        "not a non-negative integer",
    );
    bad_size(
        &format!("{GENERAL}99999999999999999999999 3 1\n"),
        2,
        "too large",
    );
}

#[test]
fn size_line_wrong_count() {
    bad_size(&format!("{GENERAL}3 3\n1 1 1\n"), 2, "rows cols entries");
    bad_size(&format!("{GENERAL}\n% c\n3\n"), 4, "rows cols entries");
    bad_size(&format!("{GENERAL}3 3 1 1\n"), 2, "rows cols entries");
    bad_size(
        "%%MatrixMarket matrix array real general\n3 3 9\n",
        2,
        "rows cols",
    );
    bad_size(
        "%%MatrixMarket matrix array real general\n3\n",
        2,
        "rows cols",
    );
}

#[test]
fn size_line_missing() {
    bad_size(GENERAL, 1, "truncated");
    bad_size(&format!("{GENERAL}% only comments\n\n"), 3, "truncated");
}

#[test]
fn size_line_dimension_over_u32() {
    match err(&format!("{GENERAL}5000000000 1 0\n"), 2) {
        K::Unsupported { what, value } => {
            assert!(what.contains("u32"));
            assert_eq!(value, "5000000000");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn symmetric_storage_needs_square() {
    assert!(matches!(
        err(&format!("{SYMMETRIC}% c\n3 2 1\n1 1 1\n"), 3),
        K::Invalid(m) if m.contains("square")
    ));
    assert!(matches!(
        err("%%MatrixMarket matrix array real skew-symmetric\n2 3\n", 2),
        K::Invalid(m) if m.contains("square")
    ));
}

#[test]
fn wrong_token_count() {
    assert_eq!(
        err(&format!("{GENERAL}3 3 2\n1 1 1\n1 2\n"), 4),
        K::WrongTokenCount {
            expected: 3,
            found: 2
        }
    );
    assert_eq!(
        err(&format!("{GENERAL}3 3 2\n1 1 1 0\n"), 3),
        K::WrongTokenCount {
            expected: 3,
            found: 4
        }
    );
    assert_eq!(
        err(&format!("{GENERAL}3 3 2\n1 1 1 2 3 4 5\n"), 3),
        K::WrongTokenCount {
            expected: 3,
            found: 7
        }
    );
    assert_eq!(
        err(
            "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n",
            3
        ),
        K::WrongTokenCount {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(
        err("%%MatrixMarket matrix array real general\n2 1\n1\n2 3\n", 4),
        K::WrongTokenCount {
            expected: 1,
            found: 2
        }
    );
}

#[test]
fn non_numeric_tokens() {
    assert_eq!(
        err(&format!("{GENERAL}2 2 1\n1 1 abc\n"), 3),
        K::NotANumber("abc".into())
    );
    assert_eq!(
        err(&format!("{GENERAL}2 2 1\nx 1 1.0\n"), 3),
        K::NotANumber("x".into())
    );
    assert_eq!(
        err(&format!("{GENERAL}2 2 1\n1 1.0 1.0\n"), 3),
        K::NotANumber("1.0".into())
    );
    assert_eq!(
        err(&format!("{GENERAL}2 2 1\n1 1 1.0.0\n"), 3),
        K::NotANumber("1.0.0".into())
    );
    assert_eq!(
        err(&format!("{GENERAL}2 2 1\n1 1 1,5\n"), 3),
        K::NotANumber("1,5".into())
    );
    assert_eq!(
        err("%%MatrixMarket matrix array real general\n1 1\n--1\n", 3),
        K::NotANumber("--1".into())
    );
}

#[test]
fn non_finite_values() {
    for tok in ["nan", "NaN", "inf", "-Infinity", "+inf", "1e999", "-1e400"] {
        assert_eq!(
            err(&format!("{GENERAL}2 2 2\n1 1 1\n% c\n2 2 {tok}\n"), 5),
            K::NonFinite(tok.into()),
            "{tok}"
        );
    }
    assert_eq!(
        err("%%MatrixMarket matrix array real general\n1 2\n1\nNaN\n", 4),
        K::NonFinite("NaN".into())
    );
    assert_eq!(
        err(
            &format!(
                "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 {}\n",
                "9".repeat(400)
            ),
            3
        ),
        K::NonFinite("9".repeat(400))
    );
}

#[test]
fn index_out_of_range() {
    let oor = |what: &'static str, index: i64, max: usize| K::IndexOutOfRange { what, index, max };
    assert_eq!(
        err(&format!("{GENERAL}3 4 1\n0 1 1\n"), 3),
        oor("row", 0, 3)
    );
    assert_eq!(
        err(&format!("{GENERAL}3 4 1\n1 0 1\n"), 3),
        oor("column", 0, 4)
    );
    assert_eq!(
        err(&format!("{GENERAL}3 4 1\n4 1 1\n"), 3),
        oor("row", 4, 3)
    );
    assert_eq!(
        err(&format!("{GENERAL}3 4 2\n1 1 1\n1 5 1\n"), 4),
        oor("column", 5, 4)
    );
    assert_eq!(
        err(&format!("{GENERAL}3 4 1\n-1 1 1\n"), 3),
        oor("row", -1, 3)
    );
    assert_eq!(
        err(&format!("{GENERAL}3 4 1\n1 99999999999999999999999 1\n"), 3),
        oor("column", i64::MAX, 4)
    );
    assert_eq!(
        err(
            &format!("{GENERAL}3 4 1\n-99999999999999999999999 1 1\n"),
            3
        ),
        oor("row", i64::MIN, 3)
    );
    assert_eq!(
        err(&format!("{GENERAL}0 0 1\n1 1 1\n"), 3),
        oor("row", 1, 0)
    );
}

#[test]
fn truncated_file() {
    assert_eq!(
        err(&format!("{GENERAL}3 3 4\n1 1 1\n2 2 1\n% comment\n"), 5),
        K::Truncated {
            expected: 4,
            found: 2
        }
    );
    assert_eq!(
        err(&format!("{GENERAL}3 3 1\n"), 2),
        K::Truncated {
            expected: 1,
            found: 0
        }
    );
    assert_eq!(
        err(
            "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n",
            7
        ),
        K::Truncated {
            expected: 6,
            found: 5
        }
    );
    // The message says so.
    let e = parse(&format!("{GENERAL}3 3 4\n1 1 1\n")).unwrap_err();
    assert!(e.to_string().contains("truncated"), "{e}");
}

#[test]
fn too_many_entries() {
    assert_eq!(
        err(&format!("{GENERAL}3 3 1\n1 1 1\n% c\n2 2 1\n"), 5),
        K::TooManyEntries { expected: 1 }
    );
    assert_eq!(
        err("%%MatrixMarket matrix array real general\n1 1\n1\n2\n", 4),
        K::TooManyEntries { expected: 1 }
    );
    // Even a junk line after the last entry counts.
    assert_eq!(
        err(&format!("{GENERAL}1 1 0\n\nfoo\n"), 4),
        K::TooManyEntries { expected: 0 }
    );
}

#[test]
fn symmetric_both_triangles_rejected() {
    // Storing both triangles would double-count every mirrored pair.
    let k = err(&format!("{SYMMETRIC}3 3 3\n1 1 4\n2 1 -1\n1 2 -1\n"), 5);
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("one triangle")),
        "{k:?}"
    );
    let k = err(&format!("{SYMMETRIC}3 3 3\n1 2 4\n2 2 -1\n3 1 -1\n"), 5);
    assert!(matches!(k, K::Invalid(_)), "{k:?}");
}

#[test]
fn skew_symmetric_diagonal_rejected() {
    let k = err(
        "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 0\n",
        4,
    );
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("skew")),
        "{k:?}"
    );
}

#[test]
fn non_utf8_byte() {
    let k = market_err(
        parse_bytes(b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\xff\n"),
        4,
    );
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("UTF-8")),
        "{k:?}"
    );
    let k = market_err(
        parse_bytes(b"%%MatrixMarket matrix coordinate real general\n2 \xc3\x28 2\n"),
        2,
    );
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("UTF-8")),
        "{k:?}"
    );
}

#[test]
fn huge_announcements_do_not_allocate() {
    // 10^12 announced entries, one present: fails fast as truncated.
    assert_eq!(
        err(
            &format!("{GENERAL}1000000 1000000 1000000000000\n1 1 1\n"),
            3
        ),
        K::Truncated {
            expected: 1_000_000_000_000,
            found: 1
        }
    );
    // A 4294967295^2 dense array (1.8e19 entries), two present.
    let k = err(
        "%%MatrixMarket matrix array real general\n4294967295 4294967295\n1\n2\n",
        4,
    );
    assert!(matches!(k, K::Truncated { found: 2, .. }), "{k:?}");
    // A vector of length 4294967295 announced with one entry.
    let r = read_vector_from::<f64, _>(
        "%%MatrixMarket matrix array real general\n4294967295 1\n1\n".as_bytes(),
        "test.mtx",
    );
    assert!(matches!(market_err(r, 3), K::Truncated { found: 1, .. }));
    // A 0 x huge array holds no entries and needs no work.
    let a = parse("%%MatrixMarket matrix array real general\n0 4294967295\n").unwrap();
    assert_eq!((a.nrows(), a.nnz()), (0, 0));
    // (Work proportional to the announced sizes would never finish, and reserving for them
    // would abort: getting here is the check. No wall-clock assertion: machines are noisy.)
}

#[test]
fn overlong_line() {
    let long = "1".repeat(2 << 20);
    let k = err(&format!("{GENERAL}1 1 1\n1 1 {long}\n"), 3);
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("longer")),
        "{k:?}"
    );
}

#[test]
fn duplicate_sum_overflow_f32() {
    let r = read_matrix_market_from::<f32, _>(
        format!("{GENERAL}1 1 2\n1 1 3e38\n1 1 3e38\n").as_bytes(),
        "test.mtx",
    );
    assert!(matches!(market_err(r, 4), K::Invalid(m) if m.contains("overflow")));
}

// ---------------------------------------------------------------------------------------
// Vectors
// ---------------------------------------------------------------------------------------

fn vec_of(text: &str) -> krylov_wgpu::Result<Vec<f64>> {
    read_vector_from(text.as_bytes(), "test.mtx")
}

#[test]
fn vector_shapes() {
    let col = "%%MatrixMarket matrix array real general\n3 1\n1\n0\n-2.5\n";
    assert_eq!(vec_of(col).unwrap(), vec![1.0, 0.0, -2.5]);
    let row = "%%MatrixMarket matrix array real general\n1 3\n1\n0\n-2.5\n";
    assert_eq!(vec_of(row).unwrap(), vec![1.0, 0.0, -2.5]);
    let sparse = "%%MatrixMarket matrix coordinate real general\n5 1 3\n2 1 1\n5 1 2\n2 1 0.5\n";
    assert_eq!(vec_of(sparse).unwrap(), vec![0.0, 1.5, 0.0, 0.0, 2.0]);
    let sparse_row = "%%MatrixMarket matrix coordinate integer general\n1 3 1\n1 3 7\n";
    assert_eq!(vec_of(sparse_row).unwrap(), vec![0.0, 0.0, 7.0]);
    let empty = "%%MatrixMarket matrix coordinate real general\n0 1 0\n";
    assert!(vec_of(empty).unwrap().is_empty());
    let one = "%%MatrixMarket matrix array real symmetric\n1 1\n4\n";
    assert_eq!(vec_of(one).unwrap(), vec![4.0]);
}

#[test]
fn vector_wrong_shape() {
    let k = market_err(
        vec_of("%%MatrixMarket matrix array real general\n% c\n2 2\n1\n2\n3\n4\n"),
        3,
    );
    assert!(
        matches!(k, K::Invalid(ref m) if m.contains("2 x 2")),
        "{k:?}"
    );
    let k = market_err(
        vec_of("%%MatrixMarket matrix coordinate real general\n3 2 1\n1 1 1\n"),
        2,
    );
    assert!(matches!(k, K::Invalid(_)), "{k:?}");
}

#[test]
fn vector_errors_have_lines() {
    assert_eq!(
        market_err(
            vec_of("%%MatrixMarket matrix array real general\n3 1\n1\n2\n"),
            4
        ),
        K::Truncated {
            expected: 3,
            found: 2
        }
    );
    assert_eq!(
        market_err(
            vec_of("%%MatrixMarket matrix coordinate real general\n3 1 1\n4 1 1\n"),
            3
        ),
        K::IndexOutOfRange {
            what: "row",
            index: 4,
            max: 3
        }
    );
    assert_eq!(
        market_err(
            vec_of("%%MatrixMarket matrix array real general\n2 1\n1\ninf\n"),
            4
        ),
        K::NonFinite("inf".into())
    );
    assert_eq!(market_err(vec_of(""), 1), K::BadBanner);
    assert_eq!(
        market_err(
            vec_of("%%MatrixMarket matrix array complex general\n2 1\n1 0\n1 0\n"),
            1
        ),
        K::Complex
    );
}

// ---------------------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------------------

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Every outcome is fine except a panic; errors must be Matrix Market errors.
fn must_not_panic(bytes: &[u8]) {
    for r in [
        read_matrix_market_from::<f64, _>(bytes, "fuzz").map(|_| ()),
        read_matrix_market_from::<f32, _>(bytes, "fuzz").map(|_| ()),
        read_vector_from::<f64, _>(bytes, "fuzz").map(|_| ()),
    ] {
        if let Err(e) = r {
            assert!(
                matches!(e, KrylovError::MatrixMarket { line, .. } if line >= 1),
                "{e:?}"
            );
        }
    }
}

#[test]
fn fuzz_truncation_at_every_offset() {
    let samples: Vec<Vec<u8>> = vec![
        std::fs::read(data("bcsstk01.mtx")).unwrap(),
        std::fs::read(data("mesh1e1_rhs.mtx")).unwrap(),
        b"%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n".to_vec(),
        b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n3 2\n".to_vec(),
        b"%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n3 1 -7\n".to_vec(),
    ];
    for text in &samples {
        for cut in 0..=text.len() {
            must_not_panic(&text[..cut]);
        }
    }
    // Truncations of the big sample fail exactly when an entry line is cut off.
    let full = &samples[0];
    let ok = read_matrix_market_from::<f64, _>(full.as_slice(), "x").unwrap();
    let cut = full.len() - 30;
    assert!(read_matrix_market_from::<f64, _>(&full[..cut], "x").is_err());
    assert_eq!(ok.nnz(), 400);
}

#[test]
fn fuzz_random_byte_flips() {
    let base = std::fs::read(data("bcsstk01.mtx")).unwrap();
    let small = b"%%MatrixMarket matrix coordinate real symmetric\n% c\n4 4 5\n1 1 4\n2 1 -1\n2 2 4\n4 3 1e-3\n4 4 2\n".to_vec();
    let interesting = b"0123456789 \n\t%-+.eEdDnaif\xff\x00\xc3";
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    for round in 0..1500 {
        let mut bytes = if round % 3 == 0 {
            base.clone()
        } else {
            small.clone()
        };
        let flips = 1 + rng.below(4);
        for _ in 0..flips {
            let at = rng.below(bytes.len());
            bytes[at] = if rng.below(2) == 0 {
                interesting[rng.below(interesting.len())]
            } else {
                rng.next() as u8
            };
        }
        // Sometimes delete or duplicate a span too.
        if rng.below(4) == 0 {
            let at = rng.below(bytes.len());
            let len = rng.below(16).min(bytes.len() - at);
            if rng.below(2) == 0 {
                bytes.drain(at..at + len);
            } else {
                let span: Vec<u8> = bytes[at..at + len].to_vec();
                bytes.splice(at..at, span);
            }
        }
        must_not_panic(&bytes);
    }
}

#[test]
fn fuzz_gzip_bytes() {
    let dir = TempDir::new("fuzzgz");
    let gz = gzip(b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n");
    let mut rng = XorShift(7);
    let p = dir.path("f.mtx.gz");
    for _ in 0..200 {
        let mut bytes = gz.clone();
        let at = rng.below(bytes.len());
        bytes[at] = rng.next() as u8;
        std::fs::write(&p, &bytes).unwrap();
        let _ = read_matrix_market::<f64>(&p);
        let _ = read_vector::<f64>(&p);
    }
}

#[test]
fn large_file_reads_linearly() {
    // 300k entries of a 2D five-point stencil, symmetric storage (about 500k after expansion).
    let n = 250usize;
    let mut text = String::from("%%MatrixMarket matrix coordinate real symmetric\n");
    let mut entries = Vec::new();
    for i in 0..n * n {
        entries.push(format!("{} {} 4.0", i + 1, i + 1));
        if i % n != n - 1 {
            entries.push(format!("{} {} -1.0", i + 2, i + 1));
        }
        if i + n < n * n {
            entries.push(format!("{} {} -1.0", i + n + 1, i + 1));
        }
    }
    text.push_str(&format!("{} {} {}\n", n * n, n * n, entries.len()));
    text.push_str(&entries.join("\n"));
    text.push('\n');
    let t = std::time::Instant::now();
    let a = parse(&text).unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(a.nnz(), 2 * entries.len() - n * n);
    assert!(a.is_symmetric(0.0));
    eprintln!("read {} entries in {secs:.3} s", entries.len());
}
