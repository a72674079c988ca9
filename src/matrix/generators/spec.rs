//! Matrices from short spec strings (`poisson2d:256`, `convdiff3d:32:circular`, …).

use super::convection::{ConvectionField, convection_diffusion_3d};
use super::fem::{fem2_size, poisson_2d_fem};
use super::flow::{cavity_2d, cavity_size, convection_diffusion_2d};
use super::random::{banded, random_nonsymmetric, random_spd};
use super::reservoir::{reservoir_3d, reservoir_size};
use super::stencil::{fd2_size, fd3_size, laplace_3d, poisson_2d_fd};
use super::waveguide::{waveguide_2d, waveguide_size};
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::Csr;

/// Largest number of unknowns [`from_spec`] accepts (2³¹).
pub const MAX_SPEC_UNKNOWNS: usize = 1 << 31;

/// The grammar [`from_spec`] accepts, for `--help` texts.
pub const SPEC_HELP: &str = "\
Matrix specs (sizes are positive integers; n = number of unknowns <= 2^31):
  poisson2d:K                  5-point finite differences, K x K grid (n = K^2), Dirichlet
  fem2d:K                      P1 finite elements on the unit square, K x K interior nodes
                               (n = K^2; the paper's sizes are K = 15, 31, 63, 127, 255, 511)
  laplace3d:K                  7-point finite differences, K x K x K grid (n = K^3)
  convdiff3d:K:FIELD[:EPS]     -EPS*Laplace(u) + b.grad(u), upwind, K^3 unknowns;
                               FIELD = x | diagonal | circular, EPS > 0 (default 1)
  convdiff2d:K[:PECLET]        -Laplace(u) + PECLET*w.grad(u), upwind, K x K grid (n = K^2),
                               recirculating (driven-cavity) wind w, PECLET >= 0 (default
                               1000: convection-dominated)
  cavity2d:K[:RE]              driven-cavity Oseen saddle point [A B^T; B 0] on a K x K MAC
                               grid (n = 2K(K-1) + K^2), viscosity 1/RE, RE > 0 (default
                               100); K^2 - 1 zero diagonal entries (pressure), p0 pinned
  reservoir3d:NX:NY:NZ[:SEED]  two-phase black-oil Jacobian (pressure and saturation per cell,
                               n = 2*NX*NY*NZ), layered permeability over 5-7 decades, upwind
                               mobilities, a producing well: the SHERMAN/SAYLR kind
  waveguide2d:K[:SHIFT]        dielectric waveguide (Hx, Hy) mode operator on a graded mesh,
                               n = 2K^2, plus SHIFT*I (default 0.44): indefinite,
                               nonsymmetric, diagonal through zero; the DW kind
  random-spd:N:NNZ[:SEED]      random symmetric positive definite, ~NNZ entries per row
  random:N:NNZ[:SEED]          random nonsymmetric, NNZ entries per row (diagonal included)
  banded:N:OFFSETS[:SEED]      entries on the diagonals OFFSETS only, e.g. -2,-1,0,1,2
SEED defaults to 0. All generated matrices but cavity2d, reservoir3d and waveguide2d are
diagonally dominant.
Examples: poisson2d:256  fem2d:255  convdiff3d:64:circular:0.01  banded:10000:-1,0,1
          convdiff2d:64:1000  cavity2d:32:100
          reservoir3d:35:11:13  waveguide2d:64";

/// One-line version of the grammar, for error messages.
const SPEC_SUMMARY: &str = "expected poisson2d:K | fem2d:K | laplace3d:K | \
convdiff3d:K:x|diagonal|circular[:EPS] | convdiff2d:K[:PECLET] | cavity2d:K[:RE] | reservoir3d:NX:NY:NZ[:SEED] | waveguide2d:K[:SHIFT] | random-spd:N:NNZ[:SEED] | random:N:NNZ[:SEED] | \
banded:N:OFFSETS[:SEED] (e.g. banded:1000:-1,0,1)";

/// Builds a matrix from a spec string such as `poisson2d:256` (grammar in [`SPEC_HELP`]):
///
/// | spec | matrix |
/// | --- | --- |
/// | `poisson2d:K` | [`poisson_2d_fd`]`(K)` |
/// | `fem2d:K` | [`poisson_2d_fem`]`(K)` |
/// | `laplace3d:K` | [`laplace_3d`]`(K)` |
/// | `convdiff3d:K:FIELD[:EPS]` | [`convection_diffusion_3d`]`(K, EPS, FIELD)`, FIELD = `x` \| `diagonal` \| `circular`, EPS default 1 |
/// | `convdiff2d:K[:PECLET]` | [`convection_diffusion_2d`]`(K, PECLET)`, PECLET default 1000 |
/// | `cavity2d:K[:RE]` | [`cavity_2d`]`(K, RE)`, RE default 100 |
/// | `reservoir3d:NX:NY:NZ[:SEED]` | [`reservoir_3d`]`(NX, NY, NZ, SEED)` |
/// | `waveguide2d:K[:SHIFT]` | [`waveguide_2d`]`(K, SHIFT)`, SHIFT default 0.44 |
/// | `random-spd:N:NNZ[:SEED]` | [`random_spd`]`(N, NNZ, SEED)` |
/// | `random:N:NNZ[:SEED]` | [`random_nonsymmetric`]`(N, NNZ, SEED)` |
/// | `banded:N:D1,D2,…[:SEED]` | [`banded`]`(N, &[D1, D2, …], SEED)` |
///
/// SEED defaults to 0; names are case-insensitive and surrounding whitespace is ignored.
///
/// # Errors
/// [`KrylovError::InvalidOption`] (with the grammar in the message) for an unknown name, a
/// wrong number of fields, a non-numeric or zero size, NNZ = 0, EPS or RE not finite and
/// positive, PECLET not finite and ≥ 0, an
/// empty offset list, more than [`MAX_SPEC_UNKNOWNS`] unknowns or more than `u32::MAX` entries.
pub fn from_spec<T: Scalar>(spec: &str) -> Result<Csr<T>> {
    let bad = |why: String| {
        KrylovError::InvalidOption(format!("bad matrix spec `{spec}`: {why}; {SPEC_SUMMARY}"))
    };
    let lower = spec.trim().to_ascii_lowercase();
    let parts: Vec<&str> = lower.split(':').map(str::trim).collect();
    let name = parts[0];
    let args = &parts[1..];
    let arity = |lo: usize, hi: usize| {
        if args.len() < lo || args.len() > hi {
            Err(bad(format!(
                "`{name}` takes {} argument(s), got {}",
                if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo} to {hi}")
                },
                args.len()
            )))
        } else {
            Ok(())
        }
    };
    let positive = |what: &str, s: &str| -> Result<usize> {
        match s.parse::<usize>() {
            Ok(0) => Err(bad(format!("{what} must be positive"))),
            Ok(v) => Ok(v),
            Err(_) => Err(bad(format!("{what} `{s}` is not a positive integer"))),
        }
    };
    let seed = |i: usize| -> Result<u64> {
        match args.get(i) {
            None => Ok(0),
            Some(s) => s
                .parse::<u64>()
                .map_err(|_| bad(format!("seed `{s}` is not a non-negative integer"))),
        }
    };
    let limits = |size: Option<(usize, usize)>| -> Result<()> {
        match size {
            Some((n, _)) if n > MAX_SPEC_UNKNOWNS => {
                Err(bad(format!("{n} unknowns exceed the limit of 2^31")))
            }
            Some((_, nnz)) if nnz > u32::MAX as usize => {
                Err(bad(format!("{nnz} stored entries exceed u32 indexing")))
            }
            Some(_) => Ok(()),
            None => Err(bad("size overflows".into())),
        }
    };
    match name {
        "poisson2d" | "fem2d" | "laplace3d" => {
            arity(1, 1)?;
            let k = positive("grid size K", args[0])?;
            match name {
                "poisson2d" => {
                    limits(fd2_size(k))?;
                    Ok(poisson_2d_fd(k))
                }
                "fem2d" => {
                    limits(fem2_size(k))?;
                    Ok(poisson_2d_fem(k))
                }
                _ => {
                    limits(fd3_size(k))?;
                    Ok(laplace_3d(k))
                }
            }
        }
        "convdiff3d" => {
            arity(2, 3)?;
            let k = positive("grid size K", args[0])?;
            let field: ConvectionField = args[1].parse().map_err(|_| {
                bad(format!(
                    "unknown convection field `{}` (expected x, diagonal or circular)",
                    args[1]
                ))
            })?;
            let eps = match args.get(2) {
                None => 1.0,
                Some(s) => match s.parse::<f64>() {
                    Ok(e) if e.is_finite() && e > 0.0 => e,
                    _ => return Err(bad(format!("EPS `{s}` must be a finite positive number"))),
                },
            };
            limits(fd3_size(k))?;
            Ok(convection_diffusion_3d(k, eps, field))
        }
        "convdiff2d" | "cavity2d" => {
            arity(1, 2)?;
            let k = positive("grid size K", args[0])?;
            let (what, default, min_ok) = if name == "convdiff2d" {
                ("PECLET", 1000.0, 0.0)
            } else {
                ("RE", 100.0, f64::MIN_POSITIVE)
            };
            let param = match args.get(1) {
                None => default,
                Some(s) => match s.parse::<f64>() {
                    Ok(v) if v.is_finite() && v >= min_ok => v,
                    _ => {
                        return Err(bad(format!(
                            "{what} `{s}` must be a finite {} number",
                            if min_ok > 0.0 {
                                "positive"
                            } else {
                                "non-negative"
                            }
                        )));
                    }
                },
            };
            if name == "convdiff2d" {
                limits(fd2_size(k))?;
                Ok(convection_diffusion_2d(k, param))
            } else {
                limits(cavity_size(k))?;
                Ok(cavity_2d(k, param))
            }
        }
        "reservoir3d" => {
            arity(3, 4)?;
            let nx = positive("NX", args[0])?;
            let ny = positive("NY", args[1])?;
            let nz = positive("NZ", args[2])?;
            let seed = seed(3)?;
            limits(reservoir_size(nx, ny, nz))?;
            Ok(reservoir_3d(nx, ny, nz, seed))
        }
        "waveguide2d" => {
            arity(1, 2)?;
            let k = positive("grid size K", args[0])?;
            let shift = match args.get(1) {
                None => 0.44,
                Some(s) => match s.parse::<f64>() {
                    Ok(v) if v.is_finite() => v,
                    _ => return Err(bad(format!("SHIFT `{s}` must be a finite number"))),
                },
            };
            limits(waveguide_size(k))?;
            Ok(waveguide_2d(k, shift))
        }
        "random-spd" | "random" => {
            arity(2, 3)?;
            let n = positive("N", args[0])?;
            let per_row = positive("NNZ", args[1])?;
            let seed = seed(2)?;
            limits(per_row.min(n).checked_mul(n).map(|nnz| (n, nnz)))?;
            Ok(if name == "random" {
                random_nonsymmetric(n, per_row, seed)
            } else {
                random_spd(n, per_row, seed)
            })
        }
        "banded" => {
            arity(2, 3)?;
            let n = positive("N", args[0])?;
            let mut offsets = Vec::new();
            for tok in args[1].split(',').map(str::trim) {
                let d = tok.parse::<isize>().map_err(|_| {
                    bad(format!(
                        "offset `{tok}` is not an integer (use e.g. -1,0,1)"
                    ))
                })?;
                offsets.push(d);
            }
            let seed = seed(2)?;
            let mut diags: Vec<isize> = offsets.clone();
            diags.push(0);
            diags.sort_unstable();
            diags.dedup();
            let nnz = diags
                .iter()
                .map(|d| n.saturating_sub(d.unsigned_abs()))
                .try_fold(0usize, |a, b| a.checked_add(b));
            limits(nnz.map(|nnz| (n, nnz)))?;
            Ok(banded(n, &offsets, seed))
        }
        "" => Err(bad("empty spec".into())),
        other => Err(bad(format!("unknown matrix `{other}`"))),
    }
}
