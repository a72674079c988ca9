//! The command line of `krylov-studio`.

use std::path::PathBuf;

use krylov_wgpu::Precision;
use krylov_wgpu::matrix::samples;
use krylov_wgpu::solvers::{Basis, CheckMode, Method, Precond, Side, Trisolve, Tsqr};

use crate::app::{MAX_S, MAX_SWEEPS, RunMode, StartupArgs};

/// The `--help` text.
pub const USAGE: &str = "\
krylov-studio: load or generate a sparse matrix, solve it on the GPU and watch classical and
pipelined Krylov solvers (and, for GMRES, CA-GMRES) converge live, with their kernel-launch,
transfer, global-reduction and host-sync counts.

Usage: krylov-studio [OPTIONS] [MATRIX.mtx | MATRIX.mtx.gz]

Options:
  --generate SPEC       generate a matrix instead (poisson2d:64, fem2d:63, laplace3d:16,
                        convdiff3d:16:circular, random-spd:10000:7, random:10000:7, ...)
  --sample NAME         open a sample matrix built into the app (bcsstk01, sherman4, ...;
                        `--sample help` lists them)
  --run                 solve as soon as the matrix is ready (the selected variant)
  --run-both            solve with the classical and the pipelined variant, side by side
  --variant V           classical | pipelined | fused | workgroup | cooperative | p1 | both |
                        ca | all (with --run; fused is CG in one launch per iteration or GMRES
                        in two per step, and workgroup (small systems) CG in one workgroup, 32
                        iterations per launch, or GMRES's pipelined steps in one workgroup, a
                        whole cycle per launch: --method cg is implied unless --method gmres;
                        cooperative fused CG, 16 iterations per launch across a grid barrier:
                        CG only, --method cg is implied; p1 is p(1)-GMRES, one launch and one
                        global reduction per step, ca is CA-GMRES and all is classical,
                        pipelined and CA-GMRES side by side: GMRES only, --method gmres is
                        implied — with --method cg, all is classical, pipelined and fused)
  --method M            cg | bicgstab | gmres | bicg | jacobi | cagmres (= gmres --variant ca)
  --restart M           GMRES restart length m (CA-GMRES: a multiple of --s-step)
  --s-step S            CA-GMRES basis vectors per block s (1..16; default 5)
  --tsqr T              CA-GMRES block QR: cholqr2 | cholqr | svqr | cgs2 | cgs | mgs | caqr
  --basis B             CA-GMRES basis: newton | monomial
  --precision P         f32 | f64
  --device D            auto | gpu | cpu | N (an adapter index): auto takes a hardware GPU with
                        the features the solve needs, else the CPU; gpu any adapter, software too
  --devices LIST        split the rows over several devices (CG, BiCGStab, GMRES, CA-GMRES;
                        BiCG: its A- and A^T-recurrences on two): N (the first N adapters) or
                        adapter indices, 0,1; an index may repeat (0,0)
  --check-mode C        device | paper
  --precond P           none | jacobi | ilu0 | ic0
  --side S              left | right: the side of the preconditioner (GMRES, BiCGStab)
  --trisolve T          auto | levels | sweeps:K (K = 1..100): the triangular solves of
                        ilu0 and ic0
  --profile             GPU time per kernel (timestamps)
  -h, --help            this text

The solver device is chosen as `krylov --device auto` chooses it: the best hardware GPU on
Vulkan, Metal or DX12 with the features the solve needs, else the CPU reference; the Device
menu switches to the CPU reference or to any adapter listed.

Environment: KRYLOV_ADAPTER=N|NAME selects the solver's GPU adapter; KRYLOV_REQUIRE_GPU=1 lets
auto take a software adapter (lavapipe).";

/// What `parse` found: start-up arguments, or a request for the help text.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    Run(StartupArgs),
    Help,
    /// `--sample help`: list the samples.
    SampleHelp,
}

/// Parses the arguments after the program name. Errors are one line.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
    let mut out = StartupArgs::default();
    let mut variant: Option<RunMode> = None;
    let mut run = false;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| format!("{name} needs a value (see --help)"))
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--generate" => out.generate = Some(value("--generate")?),
            "--sample" => {
                let name = value("--sample")?;
                if name == "help" {
                    return Ok(Parsed::SampleHelp);
                }
                let sample = samples::find(&name).map_err(|e| e.to_string())?;
                out.sample = Some(sample.name.to_string());
            }
            "--run" => run = true,
            "--run-both" => {
                run = true;
                variant = Some(RunMode::Both);
            }
            "--variant" => {
                variant = Some(match value("--variant")?.as_str() {
                    "classical" => RunMode::Classical,
                    "pipelined" => RunMode::Pipelined,
                    "fused" => RunMode::Fused,
                    "workgroup" => RunMode::Workgroup,
                    "cooperative" => RunMode::Cooperative,
                    "p1" => RunMode::P1,
                    "both" => RunMode::Both,
                    "ca" => RunMode::Ca,
                    "all" => RunMode::All,
                    v => {
                        return Err(format!(
                            "unknown variant `{v}` (classical, pipelined, fused, workgroup, \
                             cooperative, p1, both, ca, all)"
                        ));
                    }
                })
            }
            "--method" => out.method = Some(value("--method")?.parse::<Method>()?),
            "--restart" => out.restart = Some(count("--restart", &value("--restart")?, 1000)?),
            "--s-step" => out.s_step = Some(count("--s-step", &value("--s-step")?, MAX_S)?),
            "--tsqr" => out.tsqr = Some(value("--tsqr")?.parse::<Tsqr>()?),
            "--basis" => out.basis = Some(value("--basis")?.parse::<Basis>()?),
            "--device" => out.device = value("--device")?.parse()?,
            "--precision" => out.precision = Some(value("--precision")?.parse::<Precision>()?),
            "--check-mode" => out.check_mode = Some(value("--check-mode")?.parse::<CheckMode>()?),
            "--precond" => out.precond = Some(value("--precond")?.parse::<Precond>()?),
            "--side" => out.side = Some(value("--side")?.parse::<Side>()?),
            "--trisolve" => {
                let t = value("--trisolve")?.parse::<Trisolve>()?;
                if let Trisolve::Sweeps(k) = t
                    && k > MAX_SWEEPS
                {
                    return Err(format!(
                        "--trisolve sweeps:{k}: the app takes K up to {MAX_SWEEPS}"
                    ));
                }
                out.trisolve = Some(t);
            }
            "--profile" => out.profile = true,
            "--devices" => {
                out.devices = Some(
                    value("--devices")?
                        .parse::<krylov_wgpu::gpu::DeviceList>()
                        .map_err(|e| format!("--devices: {e}"))?,
                )
            }
            s if s.starts_with('-') => return Err(format!("unknown option `{s}` (see --help)")),
            path => {
                if out.file.is_some() {
                    return Err(format!("more than one matrix given (`{path}`)"));
                }
                out.file = Some(PathBuf::from(path));
            }
        }
    }
    let sources = [
        out.file.is_some(),
        out.generate.is_some(),
        out.sample.is_some(),
    ];
    if sources.iter().filter(|&&given| given).count() > 1 {
        return Err("give one of a matrix file, --generate and --sample".into());
    }
    // CA-GMRES is a run of GMRES: `--method cagmres` is GMRES with the CA run, and the CA
    // runs imply GMRES.
    if out.method == Some(Method::CaGmres) {
        out.method = Some(Method::Gmres);
        match variant {
            None => variant = Some(RunMode::Ca),
            Some(RunMode::Ca | RunMode::All) => {}
            Some(_) => {
                return Err(
                    "--method cagmres runs CA-GMRES: give --variant ca or all, or \
                     --method gmres for its classical and pipelined variants"
                        .into(),
                );
            }
        }
    }
    // `--variant all` without a method is GMRES's three (with CA-GMRES); with `--method cg`
    // CG's (with fused CG).
    // Fused and workgroup are CG's (implied) and GMRES's.
    let cg_or_gmres = match variant {
        Some(RunMode::Fused) => Some(("fused", "fewer launches per iteration")),
        Some(RunMode::Workgroup) => Some((
            "workgroup",
            "whole iterations or cycles in one workgroup, for small systems",
        )),
        _ => None,
    };
    if let Some((v, what)) = cg_or_gmres {
        match out.method {
            None => out.method = Some(Method::Cg),
            Some(Method::Cg | Method::Gmres) => {}
            Some(m) => {
                return Err(format!(
                    "{v} is CG's and GMRES's variant ({what}): --variant {v} needs --method cg \
                     or gmres, not {m}"
                ));
            }
        }
    }
    // Cooperative is CG's only (implied), p1 GMRES's only (implied).
    let one_method = match variant {
        Some(RunMode::Cooperative) => Some((
            "cooperative",
            "fused CG iterations across a grid barrier",
            Method::Cg,
        )),
        Some(RunMode::P1) => Some((
            "p1",
            "p(1)-GMRES, one launch and one global reduction per step",
            Method::Gmres,
        )),
        _ => None,
    };
    if let Some((v, what, only)) = one_method {
        match out.method {
            None => out.method = Some(only),
            Some(m) if m == only => {}
            Some(m) => {
                let name = only.as_str();
                return Err(format!(
                    "{v} is {}'s variant ({what}): --variant {v} needs --method {name}, not {m}",
                    name.to_uppercase()
                ));
            }
        }
    }
    let wants_ca = match variant {
        Some(RunMode::Ca) => true,
        Some(RunMode::All) => out.method != Some(Method::Cg),
        _ => false,
    };
    if wants_ca {
        match out.method {
            None => out.method = Some(Method::Gmres),
            Some(Method::Gmres) => {}
            Some(m) => {
                return Err(format!(
                    "CA-GMRES runs beside GMRES only: --variant ca or all needs --method \
                     gmres, not {m}"
                ));
            }
        }
        if let Some(p) = out.precond.filter(|&p| p != Precond::None)
            && out.side == Some(Side::Left)
        {
            return Err(format!(
                "CA-GMRES applies --precond {p} on the right: --variant ca or all takes no \
                 --side left"
            ));
        }
    }
    if run {
        out.run = Some(variant.unwrap_or(RunMode::Pipelined));
    } else if let Some(v) = variant {
        // A variant without --run only preselects it.
        out.run = None;
        out.preselect = Some(v);
    }
    Ok(Parsed::Run(out))
}

/// A positive count up to `max` (`--restart`, `--s-step`).
fn count(name: &str, v: &str, max: usize) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(k) if (1..=max).contains(&k) => Ok(k),
        _ => Err(format!(
            "{name} `{v}`: expected a whole number from 1 to {max}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Parsed, String> {
        parse(s.split_whitespace().map(String::from))
    }

    #[test]
    fn parses_the_documented_forms() {
        let Parsed::Run(a) = p("--generate poisson2d:64 --run-both").unwrap() else {
            panic!()
        };
        assert_eq!(a.generate.as_deref(), Some("poisson2d:64"));
        assert_eq!(a.run, Some(RunMode::Both));
        let Parsed::Run(a) = p("m.mtx --method gmres --precision f32").unwrap() else {
            panic!()
        };
        assert_eq!(a.file, Some(PathBuf::from("m.mtx")));
        assert_eq!(
            (a.method, a.precision),
            (Some(Method::Gmres), Some(Precision::F32))
        );
        assert_eq!(a.run, None);
        assert_eq!(p("--help").unwrap(), Parsed::Help);
        assert!(p("--bogus").unwrap_err().contains("--bogus"));
        assert!(p("--method nope").unwrap_err().contains("nope"));
        assert!(p("a.mtx --generate x:1").is_err());
        let Parsed::Run(a) = p("--sample bcsstk01 --run").unwrap() else {
            panic!()
        };
        assert_eq!(a.sample.as_deref(), Some("bcsstk01"));
        assert_eq!(a.run, Some(RunMode::Pipelined));
        assert_eq!(p("--sample help").unwrap(), Parsed::SampleHelp);
        assert!(p("--sample nope").unwrap_err().contains("bcsstk01"));
        assert!(p("--sample bcsstk01 --generate poisson2d:8").is_err());
        let Parsed::Run(a) = p("--precond ilu0 --side left --trisolve sweeps:8").unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.precond, a.side, a.trisolve),
            (
                Some(Precond::Ilu0),
                Some(Side::Left),
                Some(Trisolve::Sweeps(8))
            )
        );
        let Parsed::Run(a) = p("--trisolve levels").unwrap() else {
            panic!()
        };
        assert_eq!((a.side, a.trisolve), (None, Some(Trisolve::Levels)));
        assert!(p("--side up").unwrap_err().contains("up"));
        assert!(p("--trisolve sweeps:0").unwrap_err().contains("sweeps:K"));
        assert!(p("--trisolve sweeps:101").unwrap_err().contains("100"));
    }

    #[test]
    fn parses_ca_gmres() {
        // `--variant ca` implies GMRES.
        let Parsed::Run(a) = p("--generate poisson2d:32 --run --variant ca").unwrap() else {
            panic!()
        };
        assert_eq!((a.run, a.method), (Some(RunMode::Ca), Some(Method::Gmres)));
        let Parsed::Run(a) =
            p("--method gmres --variant all --s-step 4 --restart 20 --tsqr cgs2 --basis monomial")
                .unwrap()
        else {
            panic!()
        };
        assert_eq!((a.run, a.preselect), (None, Some(RunMode::All)));
        assert_eq!(
            (a.s_step, a.restart, a.tsqr, a.basis),
            (Some(4), Some(20), Some(Tsqr::Cgs2), Some(Basis::Monomial))
        );
        // `--method cagmres` is GMRES with the CA run.
        let Parsed::Run(a) = p("--method cagmres --run").unwrap() else {
            panic!()
        };
        assert_eq!((a.run, a.method), (Some(RunMode::Ca), Some(Method::Gmres)));
        let Parsed::Run(a) = p("--method cagmres --variant all --run").unwrap() else {
            panic!()
        };
        assert_eq!(a.run, Some(RunMode::All));
        assert!(
            p("--method cagmres --variant both")
                .unwrap_err()
                .contains("--variant ca or all")
        );
        assert!(p("--method cg --variant ca").unwrap_err().contains("gmres"));
        assert!(p("--variant all --precond ilu0").is_ok());
        assert!(
            p("--variant all --precond ilu0 --side left")
                .unwrap_err()
                .contains("on the right")
        );
        assert!(p("--variant nope").unwrap_err().contains("ca, all"));
        // Fused is CG's (implied) and GMRES's, refused for another method; CG's `all` has no
        // CA run.
        let Parsed::Run(a) = p("--variant fused --run").unwrap() else {
            panic!()
        };
        assert_eq!((a.run, a.method), (Some(RunMode::Fused), Some(Method::Cg)));
        let Parsed::Run(a) = p("--method gmres --variant fused --run").unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.run, a.method),
            (Some(RunMode::Fused), Some(Method::Gmres))
        );
        assert!(
            p("--method bicgstab --variant fused")
                .unwrap_err()
                .contains("--method cg or gmres")
        );
        // Workgroup is CG's (implied) and GMRES's, refused for another method.
        let Parsed::Run(a) = p("--variant workgroup --run").unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.run, a.method),
            (Some(RunMode::Workgroup), Some(Method::Cg))
        );
        let Parsed::Run(a) = p("--method gmres --variant workgroup --run").unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.run, a.method),
            (Some(RunMode::Workgroup), Some(Method::Gmres))
        );
        let Parsed::Run(a) = p("--variant workgroup --method gmres").unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.run, a.preselect, a.method),
            (None, Some(RunMode::Workgroup), Some(Method::Gmres))
        );
        assert_eq!(
            RunMode::Workgroup.kinds(Method::Gmres),
            vec![crate::app::RunKind::Workgroup]
        );
        for m in ["bicgstab", "bicg", "jacobi"] {
            assert!(
                p(&format!("--method {m} --variant workgroup"))
                    .unwrap_err()
                    .contains(&format!(
                        "--variant workgroup needs --method cg or gmres, not {m}"
                    ))
            );
        }
        assert!(
            p("--method cagmres --variant workgroup")
                .unwrap_err()
                .contains("--variant ca or all")
        );
        // Cooperative too.
        let Parsed::Run(a) = p("--variant cooperative --run").unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.run, a.method),
            (Some(RunMode::Cooperative), Some(Method::Cg))
        );
        let Parsed::Run(a) = p("--method cg --variant cooperative").unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.run, a.preselect, a.method),
            (None, Some(RunMode::Cooperative), Some(Method::Cg))
        );
        assert!(
            p("--method bicgstab --variant cooperative")
                .unwrap_err()
                .contains("--variant cooperative needs --method cg, not bicgstab")
        );
        assert!(
            p("--method cagmres --variant cooperative")
                .unwrap_err()
                .contains("--variant ca or all")
        );
        assert!(p("--variant nope").unwrap_err().contains("cooperative"));
        // P1 is GMRES's only (implied).
        let Parsed::Run(a) = p("--variant p1 --run").unwrap() else {
            panic!()
        };
        assert_eq!((a.run, a.method), (Some(RunMode::P1), Some(Method::Gmres)));
        let Parsed::Run(a) = p("--method gmres --variant p1").unwrap() else {
            panic!()
        };
        assert_eq!(
            (a.run, a.preselect, a.method),
            (None, Some(RunMode::P1), Some(Method::Gmres))
        );
        assert!(
            p("--method cg --variant p1")
                .unwrap_err()
                .contains("--variant p1 needs --method gmres, not cg")
        );
        assert!(
            p("--method cagmres --variant p1")
                .unwrap_err()
                .contains("--variant ca or all")
        );
        assert!(p("--variant nope").unwrap_err().contains("p1"));
        // The help text's count is the library's, and names GMRES's workgroup variant.
        assert!(USAGE.contains("GMRES's pipelined steps in one workgroup, a"));
        assert!(USAGE.contains(&format!(
            "cooperative fused CG, {} iterations per launch",
            krylov_wgpu::solvers::cg::cooperative::ITERATIONS_PER_LAUNCH
        )));
        let Parsed::Run(a) = p("--method cg --variant all --precond ic0 --side left").unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (a.preselect, a.method),
            (Some(RunMode::All), Some(Method::Cg))
        );
        assert!(p("--s-step 0").unwrap_err().contains("1 to 16"));
        assert!(p("--s-step 17").is_err());
        assert!(p("--tsqr qr").unwrap_err().contains("cholqr2"));
        assert!(p("--basis chebyshev").unwrap_err().contains("newton"));
    }
}
