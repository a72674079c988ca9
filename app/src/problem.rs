//! Loading and generating matrices, their facts, and the sparsity thumbnail.
//!
//! Everything here is plain data (no egui state) so it can run on a loader thread.

use krylov_wgpu::gpu::format::DEFAULT_PADDING_BUDGET;
use krylov_wgpu::solvers::Format;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{self, ConvectionField};
use krylov_wgpu::matrix::market::{read_matrix_market, read_matrix_market_from};
use krylov_wgpu::matrix::samples;

/// Side length of the sparsity thumbnail (bins per direction).
pub const THUMBNAIL_BINS: usize = 128;

/// Where a matrix comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A Matrix Market file (`.mtx` or `.mtx.gz`).
    File(PathBuf),
    /// A generator spec understood by [`generators::from_spec`] (`poisson2d:64`, ...).
    Spec(String),
    /// A sample matrix embedded in the library ([`samples::SAMPLES`]; no file is read).
    Sample(&'static str),
}

impl Source {
    /// A short name for titles and messages.
    pub fn name(&self) -> String {
        match self {
            Source::File(p) => p
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.display().to_string()),
            Source::Spec(s) => s.clone(),
            Source::Sample(name) => name.to_string(),
        }
    }
}

/// The generator families offered with a size slider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Poisson2dFd,
    Poisson2dFem,
    Laplace3d,
    ConvDiff3d(ConvectionField),
    RandomSpd,
    RandomNonsymmetric,
}

impl Family {
    pub const ALL: [Family; 8] = [
        Family::Poisson2dFd,
        Family::Poisson2dFem,
        Family::Laplace3d,
        Family::ConvDiff3d(ConvectionField::X),
        Family::ConvDiff3d(ConvectionField::Diagonal),
        Family::ConvDiff3d(ConvectionField::Circular),
        Family::RandomSpd,
        Family::RandomNonsymmetric,
    ];

    pub fn label(self) -> String {
        match self {
            Family::Poisson2dFd => "2D Poisson, finite differences".into(),
            Family::Poisson2dFem => "2D Poisson, P1 finite elements".into(),
            Family::Laplace3d => "3D Laplace, 7-point".into(),
            Family::ConvDiff3d(f) => format!("3D convection-diffusion ({f})"),
            Family::RandomSpd => "random SPD".into(),
            Family::RandomNonsymmetric => "random nonsymmetric".into(),
        }
    }

    /// What the size slider sets, and its range.
    pub fn size_name(self) -> &'static str {
        match self {
            Family::Poisson2dFd | Family::Poisson2dFem | Family::Laplace3d => "grid size k",
            Family::ConvDiff3d(_) => "grid size k",
            Family::RandomSpd | Family::RandomNonsymmetric => "unknowns n",
        }
    }

    pub fn size_range(self) -> std::ops::RangeInclusive<usize> {
        match self {
            Family::Poisson2dFd | Family::Poisson2dFem => 2..=4096,
            Family::Laplace3d | Family::ConvDiff3d(_) => 2..=256,
            Family::RandomSpd | Family::RandomNonsymmetric => 10..=4_000_000,
        }
    }

    pub fn default_size(self) -> usize {
        match self {
            Family::Poisson2dFd | Family::Poisson2dFem => 64,
            Family::Laplace3d | Family::ConvDiff3d(_) => 16,
            Family::RandomSpd | Family::RandomNonsymmetric => 10_000,
        }
    }

    /// The library spec for this family at `size`.
    pub fn spec(self, size: usize) -> String {
        match self {
            Family::Poisson2dFd => format!("poisson2d:{size}"),
            Family::Poisson2dFem => format!("fem2d:{size}"),
            Family::Laplace3d => format!("laplace3d:{size}"),
            Family::ConvDiff3d(f) => format!("convdiff3d:{size}:{}", f.name()),
            Family::RandomSpd => format!("random-spd:{size}:7"),
            Family::RandomNonsymmetric => format!("random:{size}:7"),
        }
    }

    /// Number of unknowns the spec gives (for the slider's hint).
    pub fn unknowns(self, size: usize) -> usize {
        match self {
            Family::Poisson2dFd | Family::Poisson2dFem => size * size,
            Family::Laplace3d | Family::ConvDiff3d(_) => size * size * size,
            Family::RandomSpd | Family::RandomNonsymmetric => size,
        }
    }
}

/// The family and size of a spec that the slider can show (`poisson2d:32` → 2D Poisson, 32).
pub fn family_of_spec(spec: &str) -> Option<(Family, usize)> {
    let spec = spec.trim().to_ascii_lowercase();
    let parts: Vec<&str> = spec.split(':').map(str::trim).collect();
    let size: usize = parts.get(1)?.parse().ok()?;
    let family = Family::ALL.into_iter().find(|f| {
        let s = f.spec(size);
        let fp: Vec<&str> = s.split(':').collect();
        fp[0] == parts[0]
            && match f {
                Family::ConvDiff3d(_) => parts.get(2) == fp.get(2),
                _ => true,
            }
    })?;
    family
        .size_range()
        .contains(&size)
        .then_some((family, size))
}

/// Facts about a matrix, computed once when it is loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    pub nrows: usize,
    pub ncols: usize,
    pub nnz: usize,
    pub row_min: usize,
    pub row_mean: f64,
    pub row_max: usize,
    pub symmetric: bool,
    pub diagonally_dominant: bool,
    pub zero_diagonal: bool,
    /// Bytes of the CSR arrays as stored here (f64 values), from `Csr::storage_bytes`.
    pub csr_bytes_f64: usize,
    /// The statistics the library's `--format auto` decides from.
    pub stats: krylov_wgpu::matrix::MatrixStats,
}

impl Facts {
    pub fn of(a: &Csr<f64>) -> Self {
        let (row_min, row_mean, row_max) = a.row_length_stats();
        Facts {
            nrows: a.nrows(),
            ncols: a.ncols(),
            nnz: a.nnz(),
            row_min,
            row_mean,
            row_max,
            symmetric: a.is_square() && a.is_symmetric(1e-10),
            diagonally_dominant: a.is_square() && a.is_diagonally_dominant(false),
            zero_diagonal: a.is_square() && a.diagonal().contains(&0.0),
            csr_bytes_f64: a.storage_bytes(),
            stats: krylov_wgpu::matrix::MatrixStats::of(a),
        }
    }

    /// What `--format auto` without a profile chooses for this matrix on `target`, and why.
    pub fn auto(&self, target: krylov_wgpu::gpu::RuleTarget) -> krylov_wgpu::gpu::FormatChoice {
        krylov_wgpu::gpu::format::choose_from_stats(&self.stats, DEFAULT_PADDING_BUDGET, target)
    }

    /// Bytes of the matrix in every GPU storage format for values of `value_bytes` bytes
    /// (the library's estimates: exact for CSR, ELL and DIA; `fits` is false over the default
    /// padding budget).
    pub fn format_estimates(
        &self,
        value_bytes: usize,
    ) -> Vec<krylov_wgpu::gpu::format::FormatEstimate> {
        krylov_wgpu::gpu::format::format_estimates(
            &self.stats,
            value_bytes,
            DEFAULT_PADDING_BUDGET,
            u64::MAX,
        )
    }

    /// The memory table's rows for values of `value_bytes` bytes: CSR, ELL and the format
    /// `auto` chose ([`Facts::auto`]), (label, bytes; `None` over the padding budget).
    pub fn memory_per_format(
        &self,
        value_bytes: usize,
        auto: Format,
    ) -> [(String, Option<usize>); 3] {
        let est = self.format_estimates(value_bytes);
        let get = |f: Format| {
            est.iter()
                .find(|e| e.format == f)
                .filter(|e| e.fits)
                .map(|e| e.bytes as usize)
        };
        [
            ("CSR".into(), get(Format::Csr)),
            ("ELL".into(), get(Format::Ell)),
            (format!("auto: {auto}"), get(auto)),
        ]
    }
}

/// A downsampled picture of the nonzero pattern: `bins × bins` counts, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Thumbnail {
    pub bins: usize,
    pub counts: Vec<u32>,
}

impl Thumbnail {
    /// Bins every stored entry of `a` into a `bins × bins` grid (one pass over the pattern).
    pub fn of(a: &Csr<f64>, bins: usize) -> Self {
        let bins = bins.max(1);
        let mut counts = vec![0u32; bins * bins];
        let (nr, nc) = (a.nrows().max(1), a.ncols().max(1));
        let rp = a.row_ptr();
        let ci = a.col_idx();
        for i in 0..a.nrows() {
            let bi = i * bins / nr;
            for &j in &ci[rp[i] as usize..rp[i + 1] as usize] {
                let bj = j as usize * bins / nc;
                let c = &mut counts[bi * bins + bj];
                *c = c.saturating_add(1);
            }
        }
        Thumbnail { bins, counts }
    }

    /// RGBA pixels (white background, darker for denser bins on a log scale).
    pub fn rgba(&self) -> Vec<[u8; 4]> {
        let max = self.counts.iter().copied().max().unwrap_or(0).max(1) as f64;
        let lmax = (1.0 + max).ln();
        self.counts
            .iter()
            .map(|&c| {
                if c == 0 {
                    [255, 255, 255, 255]
                } else {
                    // At least a visible light blue for one entry, dark blue for the densest.
                    let t = ((1.0 + c as f64).ln() / lmax).clamp(0.0, 1.0);
                    let lerp = |a: f64, b: f64| (a + (b - a) * (0.35 + 0.65 * t)) as u8;
                    [lerp(170.0, 8.0), lerp(200.0, 40.0), lerp(255.0, 120.0), 255]
                }
            })
            .collect()
    }
}

/// A matrix ready to solve, with its facts and thumbnail.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub source: Source,
    pub matrix: Arc<Csr<f64>>,
    /// The right-hand side that came with the matrix (some samples); else b = A·1.
    pub rhs: Option<Arc<Vec<f64>>>,
    pub facts: Facts,
    pub thumbnail: Thumbnail,
    /// Seconds spent reading or generating.
    pub seconds: f64,
}

/// Reads or generates the matrix of `source`. Errors are one readable line.
pub fn load(source: &Source) -> Result<Loaded, String> {
    let start = std::time::Instant::now();
    let msg = |e: krylov_wgpu::KrylovError| one_line(&e.to_string());
    let mut rhs = None;
    let matrix: Csr<f64> = match source {
        Source::File(path) => read_file(path)?,
        Source::Spec(spec) => generators::from_spec(spec).map_err(msg)?,
        Source::Sample(name) => {
            let sample = samples::find(name).map_err(msg)?;
            rhs = sample.rhs::<f64>().map_err(msg)?;
            sample.matrix().map_err(msg)?
        }
    };
    let mut loaded = Loaded::new(source.clone(), matrix, start.elapsed().as_secs_f64());
    loaded.rhs = rhs.map(Arc::new);
    Ok(loaded)
}

impl Loaded {
    /// Computes the facts and the thumbnail of `matrix`.
    pub fn new(source: Source, matrix: Csr<f64>, seconds: f64) -> Self {
        let facts = Facts::of(&matrix);
        let thumbnail = Thumbnail::of(&matrix, THUMBNAIL_BINS);
        Loaded {
            source,
            matrix: Arc::new(matrix),
            rhs: None,
            facts,
            thumbnail,
            seconds,
        }
    }
}

fn read_file(path: &Path) -> Result<Csr<f64>, String> {
    if path.is_dir() {
        return Err(format!(
            "{} is a directory, not a Matrix Market file",
            path.display()
        ));
    }
    read_matrix_market(path).map_err(|e| one_line(&e.to_string()))
}

/// Reads an uncompressed Matrix Market matrix from bytes (a dropped file without a path).
pub fn load_bytes(name: &str, bytes: &[u8]) -> Result<Csr<f64>, String> {
    read_matrix_market_from(bytes, name).map_err(|e| one_line(&e.to_string()))
}

/// Joins a multi-line message into one line.
pub fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `1234567` → `"1.2 MiB"`.
pub fn human_bytes(bytes: usize) -> String {
    let b = bytes as f64;
    if b < 1024.0 {
        format!("{bytes} B")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_and_thumbnail_of_poisson() {
        let l = load(&Source::Spec("poisson2d:8".into())).unwrap();
        assert_eq!((l.facts.nrows, l.facts.nnz), (64, 5 * 64 - 4 * 8));
        assert_eq!((l.facts.row_min, l.facts.row_max), (3, 5));
        assert!(l.facts.symmetric && l.facts.diagonally_dominant && !l.facts.zero_diagonal);
        assert_eq!(
            Some(l.facts.csr_bytes_f64),
            l.facts.memory_per_format(8, Format::Csr)[0].1
        );
        let total: u32 = l.thumbnail.counts.iter().sum();
        assert_eq!(total as usize, l.facts.nnz);
        assert_eq!(l.thumbnail.rgba().len(), THUMBNAIL_BINS * THUMBNAIL_BINS);
    }

    #[test]
    fn samples_load_from_memory() {
        for s in samples::SAMPLES {
            let l = load(&Source::Sample(s.name)).unwrap();
            assert_eq!(l.source.name(), s.name);
            assert_eq!(l.facts.symmetric, s.symmetric, "{}", s.name);
            if let Some(rhs) = &l.rhs {
                assert_eq!(rhs.len(), l.facts.nrows);
            }
        }
        let l = load(&Source::Sample("bcsstk01")).unwrap();
        assert_eq!((l.facts.nrows, l.rhs.is_none()), (48, true));
        let e = load(&Source::Sample("nope")).unwrap_err();
        assert!(e.contains("unknown sample `nope`"), "{e}");
    }

    #[test]
    fn specs_map_back_to_the_slider() {
        assert_eq!(
            family_of_spec("poisson2d:32"),
            Some((Family::Poisson2dFd, 32))
        );
        assert_eq!(
            family_of_spec("convdiff3d:20:circular"),
            Some((Family::ConvDiff3d(ConvectionField::Circular), 20))
        );
        assert_eq!(
            family_of_spec("random-spd:5000:7"),
            Some((Family::RandomSpd, 5000))
        );
        assert_eq!(family_of_spec("banded:100:-1,0,1"), None);
        assert_eq!(family_of_spec("poisson2d:x"), None);
        for f in Family::ALL {
            assert_eq!(
                family_of_spec(&f.spec(f.default_size())),
                Some((f, f.default_size()))
            );
        }
    }

    #[test]
    fn bad_inputs_are_messages() {
        let e = load(&Source::Spec("nonsense:3".into())).unwrap_err();
        assert!(e.contains("unknown matrix"), "{e}");
        let e = load_bytes("x", b"hello\n1 1 1\n").unwrap_err();
        assert!(e.contains("banner"), "{e}");
        let e = load(&Source::File("/nonexistent/a.mtx".into())).unwrap_err();
        assert!(e.contains("/nonexistent/a.mtx"), "{e}");
    }
}
