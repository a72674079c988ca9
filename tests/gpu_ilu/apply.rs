//! z = M⁻¹r on the GPU equals the CPU twin's, for both strategies, f32 and f64.

use super::common;
use krylov_wgpu::cpu::precond as host;
use krylov_wgpu::gpu::kernels::{Params, SolverBuffers};
use krylov_wgpu::gpu::{Engine, ShaderConfig};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{
    ConvectionField, convection_diffusion_3d, random_nonsymmetric,
};
use krylov_wgpu::precond::{self, ApplySite};
use krylov_wgpu::solvers::{Precond, Trisolve};
use krylov_wgpu::{Precision, Scalar};

/// GPU z = M⁻¹r (or M⁻ᵀr) for `r`, through the public apply-step interface.
fn gpu_apply<T: Scalar>(
    engine: &Engine,
    a: &Csr<T>,
    kind: Precond,
    how: Trisolve,
    r: &[T],
    transposed: bool,
) -> Vec<T> {
    let n = a.nrows();
    let m = precond::build(engine, a, kind, how).unwrap();
    let groups = engine.reduction_groups(n);
    let bufs = SolverBuffers::new::<T>(engine, groups, 1, 4).unwrap();
    let params = engine.uniform_from(
        "params",
        &Params {
            n: n as u32,
            groups,
            ..Default::default()
        },
    );
    let config: ShaderConfig = engine.shader_config(T::PRECISION);
    let at = ApplySite {
        engine,
        config,
        bufs: &bufs,
        params: &params,
    };
    let rb = engine.storage_from("r", r).unwrap();
    // Poisoned output: an entry the kernels never write stays NaN.
    let zb = engine
        .storage_from("z", &vec![T::from_f64(f64::NAN); n])
        .unwrap();
    let step = if transposed {
        m.bind_apply_transposed(&at, &rb, &zb)
    } else {
        m.bind_apply(&at, &rb, &zb)
    }
    .unwrap()
    .expect("a factored M has an apply step");
    let info = m.info().unwrap();
    assert_eq!(step.launches(), info.dispatches_per_apply, "{info:?}");
    let mut batch = engine.begin("apply");
    step.record(&mut batch);
    batch.submit().unwrap();
    engine.read(&zb, 0, n).unwrap()
}

fn check<T: Scalar>(a: &Csr<T>, kind: Precond, how: Trisolve, tol: f64) {
    let Some(engine) = common::engine() else {
        return;
    };
    if T::PRECISION == Precision::F64 && !engine.context().summary.shader_f64 {
        return;
    }
    let n = a.nrows();
    let r: Vec<T> = (0..n)
        .map(|i| T::from_f64(((i * 37 % 101) as f64 - 50.0) / 17.0))
        .collect();
    let cpu = host::build(a, kind, how).unwrap();
    for transposed in [false, true] {
        let mut want = vec![T::zero(); n];
        if transposed {
            cpu.apply_transposed(&r, &mut want);
        } else {
            cpu.apply(&r, &mut want);
        }
        let got = gpu_apply(&engine, a, kind, how, &r, transposed);
        let scale = want.iter().map(|v| v.as_f64().abs()).fold(0.0, f64::max);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let (g, w) = (g.as_f64(), w.as_f64());
            assert!(
                (g - w).abs() <= tol * scale,
                "{kind} {how} transposed={transposed} {:?}: z[{i}] = {g} vs {w}",
                T::PRECISION
            );
        }
    }
}

fn problems<T: Scalar>() -> Vec<Csr<T>> {
    vec![
        convection_diffusion_3d(7, 0.05, ConvectionField::Circular),
        random_nonsymmetric(300, 6, 5),
        common::problems::load("pores_1").cast().unwrap(),
    ]
}

#[test]
fn level_scheduled_apply_matches_the_host_solve() {
    for a in problems::<f64>() {
        check(&a, Precond::Ilu0, Trisolve::Levels, 1e-12);
    }
    for a in problems::<f32>() {
        check(&a, Precond::Ilu0, Trisolve::Levels, 1e-4);
    }
}

#[test]
fn sweeps_apply_matches_the_host_sweeps() {
    for k in [1, 2, 5] {
        for a in problems::<f64>() {
            check(&a, Precond::Ilu0, Trisolve::Sweeps(k), 1e-12);
        }
    }
    check(
        &problems::<f32>()[0],
        Precond::Ilu0,
        Trisolve::Sweeps(3),
        1e-4,
    );
}

#[test]
fn ic0_apply_matches_the_host_solve() {
    let a = krylov_wgpu::matrix::generators::laplace_3d::<f64>(6);
    check(&a, Precond::Ic0, Trisolve::Levels, 1e-12);
    check(&a, Precond::Ic0, Trisolve::Sweeps(4), 1e-12);
}

#[test]
fn ilut_apply_with_fill_matches_the_host_solve() {
    // ILUT's factors have entries outside A's pattern (more levels than ILU(0)'s).
    for a in problems::<f64>() {
        check(&a, Precond::Ilut, Trisolve::Levels, 1e-12);
        check(&a, Precond::Ilut, Trisolve::Sweeps(3), 1e-12);
    }
    check(&problems::<f32>()[0], Precond::Ilut, Trisolve::Levels, 1e-4);
}

/// Long serial runs of narrow levels: llvmpipe ends an invocation's loops after 65535 steps
/// in all, so a single-workgroup stage longer than that left rows unsolved there (the rows
/// after the 1474th of a band of 40, ILUT's factors of a saddle point); the schedule now
/// cuts such runs (`trisolve::STAGE_STEP_BUDGET`).
#[test]
fn level_scheduled_apply_of_long_serial_runs_matches_the_host_solve() {
    // A lower band of 100 entries a row: 1680 levels of one row each, ~170000 steps.
    let n: usize = 1680;
    let mut t = Vec::new();
    for i in 0..n {
        t.push((i, i, 200.0));
        for j in i.saturating_sub(100)..i {
            t.push((i, j, -1.0 - (i + j) as f64 / n as f64));
        }
    }
    let band = Csr::<f64>::from_triplets(n, &t).unwrap();
    // A driven-cavity saddle point, rows matched: ILUT's factors fill to ~230 entries a row
    // over 843 and 772 levels.
    let cavity = krylov_wgpu::matrix::generators::cavity_2d::<f64>(24, 1000.0);
    let matching = krylov_wgpu::matrix::matching::max_product_matching(&cavity).unwrap();
    let cavity = matching.permute_rows(&cavity);
    for (a, kind) in [(&band, Precond::Ilu0), (&cavity, Precond::Ilut)] {
        let host = host::Ilu::new(a, kind, Trisolve::Levels).unwrap();
        let (l, _) = host.triangular();
        let levels = l.levels();
        assert!(
            levels.steps.iter().sum::<u64>() > 2 * 65_535,
            "{kind}: a long serial run"
        );
        assert!(l.stages(&levels).len() >= 3, "{kind}: the run is cut");
        check(a, kind, Trisolve::Levels, 1e-12);
    }
}
