//! Round trips through the writer: bit-identical values, empty and rectangular matrices, refusals.

use krylov_wgpu::matrix::{
    Csr, read_matrix_market, read_matrix_market_from, read_vector, read_vector_from,
    write_matrix_market, write_matrix_market_to, write_vector, write_vector_to,
};
use krylov_wgpu::{KrylovError, Scalar};

use super::common::data;
use super::shipped::MATRICES;
use super::{TempDir, assert_bit_identical};

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
    let b = round_trip_in_memory(&vals);
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
    round_trip_in_memory(&vals32);
}

/// An n × (n + 2) matrix holding `vals[i]` at (i, i + 1), written to memory and read back:
/// bit-identical. Returns what was read.
fn round_trip_in_memory<T: Scalar>(vals: &[T]) -> Csr<T> {
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
    let b: Csr<T> = read_matrix_market_from(buf.as_slice(), "mem").unwrap();
    assert_bit_identical(&a, &b);
    b
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
