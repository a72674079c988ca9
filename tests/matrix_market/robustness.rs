//! Robustness: no panic on truncated, corrupted or gzip-corrupted input, and linear reading.

use krylov_wgpu::KrylovError;
use krylov_wgpu::matrix::{
    read_matrix_market, read_matrix_market_from, read_vector, read_vector_from,
};

use super::common::data;
use super::{TempDir, gzip, parse};

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
