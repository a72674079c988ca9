//! The spec-string entry point: round trips, errors (absurd sizes included), the help text,
//! and medium sizes.

use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::*;

use super::is_invalid_option;

#[test]
fn from_spec_round_trips() {
    use ConvectionField::{Diagonal, X};
    let cases: [(&str, Csr<f64>); 12] = [
        ("poisson2d:12", poisson_2d_fd(12)),
        ("fem2d:15", poisson_2d_fem(15)),
        ("laplace3d:6", laplace_3d(6)),
        ("convdiff3d:5:x", convection_diffusion_3d(5, 1.0, X)),
        (
            "convdiff3d:5:diagonal:0.01",
            convection_diffusion_3d(5, 0.01, Diagonal),
        ),
        ("random-spd:300:7", random_spd(300, 7, 0)),
        ("random-spd:300:7:9", random_spd(300, 7, 9)),
        ("random:300:4", random_nonsymmetric(300, 4, 0)),
        ("random:300:4:5", random_nonsymmetric(300, 4, 5)),
        ("banded:100:-2,-1,0,1,2", banded(100, &[-2, -1, 0, 1, 2], 0)),
        ("banded:100:-1, 0, 3:8", banded(100, &[-1, 0, 3], 8)),
        ("banded:10:50", Csr::identity(10)),
    ];
    for (spec, expected) in cases {
        assert_eq!(from_spec::<f64>(spec).unwrap(), expected, "{spec}");
    }
    assert_eq!(
        from_spec::<f32>(" ConvDiff3D:4:Circular:2e-1 ").unwrap(),
        convection_diffusion_3d(4, 0.2, ConvectionField::Circular)
    );
}

#[test]
fn from_spec_errors() {
    for bad in [
        "",
        "poisson2d",
        "poisson2d:",
        "poisson2d:0",
        "poisson2d:-3",
        "poisson2d:abc",
        "poisson2d:4:5",
        "fem2d:0",
        "laplace3d:0",
        "laplace3d:1.5",
        "convdiff3d:8",
        "convdiff3d:8:spiral",
        "convdiff3d:8:x:0",
        "convdiff3d:8:x:-1",
        "convdiff3d:8:x:nan",
        "convdiff3d:8:x:inf",
        "convdiff3d:8:x:1:2",
        "convdiff3d:0:x",
        "random-spd:0:7",
        "random-spd:100:0",
        "random-spd:100",
        "random:100:7:-1",
        "random:100:7:1:2",
        "banded:10",
        "banded:10:",
        "banded:10:1,,2",
        "banded:10:a",
        "banded:0:0",
        "hilbert:10",
        // Absurd sizes: errors, not allocations.
        "poisson2d:100000",
        "laplace3d:2000",
        "laplace3d:1000",
        "fem2d:99999999999",
        "convdiff3d:5000:x",
        "random:3000000000:2",
        "random:1000000000:50",
        "random-spd:99999999999999999999:3",
        "banded:1000000000:-3,-2,-1,0,1,2,3",
    ] {
        assert!(
            is_invalid_option(from_spec::<f64>(bad)),
            "`{bad}` should be rejected"
        );
    }
    // The message names the spec and lists the grammar on one line.
    let msg = from_spec::<f64>("hilbert:10").unwrap_err().to_string();
    assert!(msg.contains("hilbert:10"), "{msg}");
    for word in [
        "poisson2d",
        "fem2d",
        "laplace3d",
        "convdiff3d",
        "random-spd",
        "banded",
    ] {
        assert!(msg.contains(word), "{msg}");
    }
    assert!(!msg.contains('\n'));
}

#[test]
fn spec_help_mentions_every_generator() {
    for word in [
        "poisson2d:K",
        "fem2d:K",
        "laplace3d:K",
        "convdiff3d:K:FIELD",
        "circular",
        "random-spd:N:NNZ",
        "random:N:NNZ",
        "banded:N:OFFSETS",
    ] {
        assert!(SPEC_HELP.contains(word), "{word}");
    }
}

#[test]
fn medium_sizes_generate() {
    // Big enough to catch quadratic behaviour, small enough for a debug test run.
    let a = laplace_3d::<f32>(64);
    assert_eq!(a.nrows(), 64 * 64 * 64);
    let c = convection_diffusion_3d::<f32>(48, 1.0, ConvectionField::Circular);
    assert_eq!(c.nnz(), 7 * 48 * 48 * 48 - 6 * 48 * 48);
    let f = poisson_2d_fem::<f32>(255);
    assert_eq!(f.nrows(), 65025);
    let r = random_spd::<f32>(200_000, 7, 1);
    assert!(r.is_symmetric(0.0));
    let b = banded::<f32>(1_000_000, &[-1000, -1, 0, 1, 1000], 1);
    assert_eq!(b.nnz(), 5_000_000 - 2 - 2000);
}
