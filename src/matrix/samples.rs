//! Real sample matrices built into the binaries (`assets/samples/`, provenance in
//! `assets/README.md`): what `krylov solve --sample NAME` and the app's Sample menu open.
//!
//! ```
//! use krylov_wgpu::matrix::samples;
//! let s = samples::find("bcsstk01")?;
//! let a = s.matrix::<f64>()?;
//! assert_eq!((a.nrows(), s.symmetric), (48, true));
//! assert!(samples::find("sherman4")?.rhs::<f64>()?.is_some());
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use crate::base::error::{KrylovError, Result};
use crate::matrix::{Csr, market};

/// One embedded sample.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// The name `--sample` takes.
    pub name: &'static str,
    /// One line: what the matrix is and where it comes from.
    pub description: &'static str,
    /// Symmetric (and positive definite): CG applies.
    pub symmetric: bool,
    /// The method to try first (`cg` for SPD matrices).
    pub suggested_method: &'static str,
    mtx: &'static str,
    rhs: Option<&'static str>,
}

macro_rules! asset {
    ($file:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/samples/",
            $file
        ))
    };
}

/// Every sample, smallest first.
pub const SAMPLES: &[Sample] = &[
    Sample {
        name: "pores_1",
        description: "HB/pores_1: reservoir flow (CFD), n = 30, nonsymmetric",
        symmetric: false,
        suggested_method: "gmres",
        mtx: asset!("pores_1.mtx"),
        rhs: None,
    },
    Sample {
        name: "bcsstk01",
        description: "HB/bcsstk01: structural stiffness matrix, n = 48, SPD",
        symmetric: true,
        suggested_method: "cg",
        mtx: asset!("bcsstk01.mtx"),
        rhs: None,
    },
    Sample {
        name: "west0479",
        description: "HB/west0479: chemical process column, n = 479, nonsymmetric, 471 zero \
                      diagonal entries (Jacobi undefined; hard for unpreconditioned Krylov)",
        symmetric: false,
        suggested_method: "gmres",
        mtx: asset!("west0479.mtx"),
        rhs: None,
    },
    Sample {
        name: "494_bus",
        description: "HB/494_bus: power network admittance matrix, n = 494, SPD, ill-conditioned",
        symmetric: true,
        suggested_method: "cg",
        mtx: asset!("494_bus.mtx"),
        rhs: None,
    },
    Sample {
        name: "nos6",
        description: "HB/nos6: Poisson equation in an L shape, n = 675, SPD",
        symmetric: true,
        suggested_method: "cg",
        mtx: asset!("nos6.mtx"),
        rhs: None,
    },
    Sample {
        name: "sherman4",
        description: "HB/sherman4: black-oil reservoir simulation, n = 1104, nonsymmetric, \
                      with its right-hand side",
        symmetric: false,
        suggested_method: "bicgstab",
        mtx: asset!("sherman4.mtx"),
        rhs: Some(asset!("sherman4_rhs.mtx")),
    },
];

impl Sample {
    /// The matrix, parsed from the embedded Matrix Market text.
    pub fn matrix<T: crate::base::Scalar>(&self) -> Result<Csr<T>> {
        market::read_matrix_market_from(self.mtx.as_bytes(), self.name)
    }

    /// The right-hand side shipped with the matrix, if any (else use b = A·1).
    pub fn rhs<T: crate::base::Scalar>(&self) -> Result<Option<Vec<T>>> {
        self.rhs
            .map(|text| market::read_vector_from(text.as_bytes(), self.name))
            .transpose()
    }
}

/// The sample called `name`.
pub fn find(name: &str) -> Result<&'static Sample> {
    SAMPLES.iter().find(|s| s.name == name).ok_or_else(|| {
        KrylovError::InvalidOption(format!(
            "unknown sample `{name}` (have: {}; `--sample help` describes them)",
            SAMPLES
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// The text `--sample help` prints.
pub fn help() -> String {
    let mut s = String::from("Sample matrices built into krylov (provenance: assets/README.md):\n");
    for sample in SAMPLES {
        s.push_str(&format!(
            "  {:<10} {} (try --method {})\n",
            sample.name, sample.description, sample.suggested_method
        ));
    }
    s
}
