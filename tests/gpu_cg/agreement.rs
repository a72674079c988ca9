//! The GPU against the CPU reference of the same variant on the generators and the shared
//! SPD matrices, f32 and f64.

use krylov_wgpu::Scalar;
use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{laplace_3d, poisson_2d_fd};
use krylov_wgpu::solvers::{CheckMode, Precond, SolveOptions, Variant};

use super::common::engine;
use super::common::problems::{load, ones_rhs, rhs_for, with_ones_rhs};
use super::common::solve::{cg_variants_and_modes, cg_variants_for};
use super::{assert_close_to_cpu, check_all, opts};

/// κ₂ of the 5-point Poisson matrix on a k×k grid: cot²(πh/2), h = 1/(k+1).
fn poisson_cond(k: usize) -> f64 {
    let h = 1.0 / (k + 1) as f64;
    (1.0 / (std::f64::consts::PI * h / 2.0).tan()).powi(2)
}

/// [`check_all`] on Poisson 2D or Laplace 3D on a k-grid with b = A·1 (κ as for Poisson).
fn check_generated<T: Scalar>(engine: &Engine, a: Csr<T>, k: usize, what: &str) {
    let (a, b) = with_ones_rhs(a);
    check_all(engine, &a, &b, poisson_cond(k), &format!("{what}:{k}"));
}

#[test]
fn cg_matches_cpu_on_poisson_f32() {
    let Some(engine) = engine() else { return };
    check_generated(&engine, poisson_2d_fd::<f32>(23), 23, "poisson2d");
}

#[test]
fn cg_matches_cpu_on_laplace_3d_both_precisions() {
    let Some(engine) = engine() else { return };
    // κ of the 7-point Laplacian: cot²(πh/2) as in 2D.
    check_generated(&engine, laplace_3d::<f64>(9), 9, "laplace3d");
    check_generated(&engine, laplace_3d::<f32>(9), 9, "laplace3d");
}

#[test]
fn cg_matches_cpu_on_poisson_f64() {
    let Some(engine) = engine() else { return };
    check_generated(&engine, poisson_2d_fd::<f64>(23), 23, "poisson2d");
}

/// Estimate of κ₂ for an SPD matrix: λ_max ≤ the Gershgorin bound; 1/λ_min from a power
/// iteration on A⁻¹, each application a tight f64 CG solve of the CPU reference. (The
/// estimate only scales the solution-error tolerance below.)
fn cond_estimate(a: &Csr<f64>) -> f64 {
    let n = a.nrows();
    let gersh = (0..n)
        .map(|i| a.row(i).1.iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let tight = SolveOptions {
        variant: Variant::Classical,
        rtol: 1e-13,
        max_iter: 20 * n,
        ..Default::default()
    };
    let mut v: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 / 7.0).collect();
    let mut inv_norm = 0.0;
    for _ in 0..12 {
        let w = krylov_wgpu::cpu::solve(a, &v, None, &tight).unwrap().x;
        let nw = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        let nv = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        inv_norm = nw / nv;
        v = w.iter().map(|x| x / nw).collect();
    }
    gersh * inv_norm
}

#[test]
fn cg_matches_cpu_on_shared_spd_matrices_f64() {
    let Some(engine) = engine() else { return };
    for name in [
        "bcsstk01",
        "494_bus",
        "nos6",
        "mesh1e1",
        "Trefethen_2000",
        "ani4",
    ] {
        let a = load(name);
        let b = if name == "mesh1e1" {
            rhs_for(name, &a, &["mesh1e1"])
        } else {
            ones_rhs(&a)
        };
        let cond = cond_estimate(&a);
        check_all(&engine, &a, &b, cond, &format!("{name}.mtx"));
    }
}

#[test]
fn cg_matches_cpu_on_bcsstk21_f64() {
    let Some(engine) = engine() else { return };
    let (a, b) = with_ones_rhs(load("bcsstk21"));
    for variant in cg_variants_for(&engine, a.nrows(), krylov_wgpu::Precision::F64) {
        let o = opts(variant, CheckMode::Device, Precond::Jacobi, 1e-10);
        let reference = assert_close_to_cpu(&engine, (&a, &b), &o, &format!("bcsstk21 {variant}"));
        assert!(
            reference.converged,
            "{variant}: {}",
            reference.reason_detail
        );
    }
}

#[test]
fn cg_f32_on_shared_spd_matrices_with_jacobi() {
    let Some(engine) = engine() else { return };
    // Moderately conditioned shared matrices in f32 with Jacobi: the GPU result meets the
    // tolerance (true residual) and agrees with the f32 CPU reference in iteration count.
    for name in ["494_bus", "nos6", "mesh1e1", "Trefethen_2000", "ani4"] {
        let (a, b) = with_ones_rhs::<f32>(load(name).cast().unwrap());
        for (variant, mode) in cg_variants_and_modes() {
            let o = opts(variant, mode, Precond::Jacobi, 1e-4);
            assert_close_to_cpu(
                &engine,
                (&a, &b),
                &o,
                &format!("{name}.mtx f32 {variant} {mode}"),
            );
        }
    }
}
