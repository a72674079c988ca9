//! gzip input: the committed file, files compressed here (detected by magic), corrupt streams.

use krylov_wgpu::KrylovError;
use krylov_wgpu::matrix::{read_matrix_market, read_vector};

use super::common::data;
use super::{TempDir, assert_bit_identical, gzip};

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
