//! The `spmv` kernel on CSR storage against the f64 CPU product, on fresh random matrices and on the
//! shared real matrices, in f32 and f64, with poisoned outputs and exact launch counts.

mod common;

use common::solve::engine_without_f64;
use common::{engine, engine_with};
use krylov_wgpu::gpu::{Engine, GpuMatrix, Spmv, Tuning};
use krylov_wgpu::matrix::{Coo, Csr, market};
use krylov_wgpu::solvers::Format;
use krylov_wgpu::{KrylovError, Precision, Scalar};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Runs the GPU product with a NaN-poisoned output and checks each entry against the f64
/// product with the rigorous rounding-error bound of the computing precision.
fn check_spmv<T: Scalar>(engine: &Engine, a: &Csr<T>, x: &[T], what: &str) {
    let ga = GpuMatrix::upload(engine, a, Format::Csr).unwrap();
    let y = common::poisoned_product(engine, &ga, x, a.nrows());
    common::assert_product_within_bound(a, x, &y, what);
}

/// Random ragged matrices (one row of up to 400 entries) of odd shapes.
fn random_case<T: Scalar>(engine: &Engine) {
    let shapes = [
        (1, 1),
        (7, 7),
        (255, 255),
        (257, 300),
        (1023, 977),
        (4099, 4099),
    ];
    for (name, a, x) in common::random_products::<T>(&shapes, 400) {
        check_spmv(engine, &a, &x, &format!("{name} {}", T::PRECISION));
    }
}

#[test]
fn spmv_matches_cpu_on_random_matrices_f32() {
    let Some(engine) = engine() else { return };
    random_case::<f32>(&engine);
}

#[test]
fn spmv_matches_cpu_on_random_matrices_f64() {
    let Some(engine) = engine() else { return };
    random_case::<f64>(&engine);
}

fn shared_case<T: Scalar>(engine: &Engine) {
    let mut rng = ChaCha8Rng::seed_from_u64(common::fresh_seed());
    for name in [
        "494_bus.mtx",
        "Trefethen_2000.mtx",
        "add32.mtx",
        "ani4.mtx",
        "bcsstk01.mtx",
        "bcsstk21.mtx",
        "jpwh_991.mtx",
        "mesh1e1.mtx",
        "nos6.mtx",
        "pde2961.mtx",
        "pores_1.mtx",
        "sherman4.mtx",
        "west0479.mtx",
    ] {
        let a: Csr<T> = market::read_matrix_market(common::data(name)).unwrap();
        let x = common::random_vector(&mut rng, a.ncols(), -1.0..1.0);
        check_spmv(engine, &a, &x, &format!("{name} {}", T::PRECISION));
    }
}

#[test]
fn spmv_matches_cpu_on_shared_matrices_f32() {
    let Some(engine) = engine() else { return };
    shared_case::<f32>(&engine);
}

#[test]
fn spmv_matches_cpu_on_shared_matrices_f64() {
    let Some(engine) = engine() else { return };
    shared_case::<f64>(&engine);
}

#[test]
fn grid_stride_covers_rows_beyond_the_launched_workgroups() {
    // Two workgroups of 64 threads for 70 001 rows: every workgroup loops over ~547 row
    // chunks; a row the loop skipped would keep the NaN poison.
    let Some(engine) = engine_with(Tuning {
        workgroup_size: 64,
        max_groups: 2,
        ..Tuning::default()
    }) else {
        return;
    };
    let n = 70_001;
    let mut coo = Coo::new(n, n);
    for i in 0..n {
        coo.push(i, i, 2.0f32).unwrap();
        if i + 1 < n {
            coo.push(i, i + 1, -1.0).unwrap();
        }
    }
    let a = coo.to_csr().unwrap();
    let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    check_spmv(&engine, &a, &x, "grid stride");
}

#[test]
fn one_product_is_one_dispatch_one_submit_one_readback() {
    let Some(engine) = engine() else { return };
    let a = Csr::<f32>::identity(100);
    let ga = GpuMatrix::upload(&engine, &a, Format::Csr).unwrap();
    let kernel = Spmv::new(&engine, &ga).unwrap();
    let before = engine.counters().snapshot();
    assert_eq!(before.uploads, 4, "row_ptr, col_idx, values, info");
    let y = kernel.apply(&engine, &ga, &vec![3.0; 100]).unwrap();
    assert_eq!(y, vec![3.0; 100]);
    let d = engine.counters().snapshot().since(&before);
    assert_eq!(
        (d.dispatches, d.submits, d.readbacks, d.uploads),
        (1, 1, 1, 1)
    );
    assert_eq!(d.bytes_read_back, 400);
}

#[test]
fn wrong_vector_length_is_a_typed_error() {
    let Some(engine) = engine() else { return };
    let a = Csr::<f32>::identity(10);
    let ga = GpuMatrix::upload(&engine, &a, Format::Csr).unwrap();
    let kernel = Spmv::new(&engine, &ga).unwrap();
    let err = kernel.apply(&engine, &ga, &[1.0; 9]).unwrap_err();
    assert!(
        matches!(
            err,
            KrylovError::DimensionMismatch {
                expected: 10,
                found: 9,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn buffers_over_the_binding_limit_are_refused() {
    let Some(engine) = engine() else { return };
    let limit = engine.context().limits.max_storage_buffer_binding_size as usize;
    let err = engine
        .storage_zeroed::<f32>("huge", limit / 4 + 1)
        .unwrap_err();
    assert!(
        matches!(
            err,
            KrylovError::BufferTooLarge {
                limit_name: "max_storage_buffer_binding_size",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn f64_on_a_device_without_shader_f64_is_a_typed_error() {
    // A second device on the same adapter, opened without asking for SHADER_F64.
    let Some(engine) = engine_without_f64() else {
        return;
    };
    assert!(!engine.context().supports(Precision::F64));
    for format in [Format::Csr, Format::Dia, Format::Bcsr2] {
        let err = GpuMatrix::upload(&engine, &Csr::<f64>::identity(3), format).unwrap_err();
        assert!(matches!(err, KrylovError::MissingFeature { .. }), "{err}");
    }
    // f32 still works there.
    let ga = GpuMatrix::upload(&engine, &Csr::<f32>::identity(3), Format::Csr).unwrap();
    let kernel = Spmv::new(&engine, &ga).unwrap();
    assert_eq!(
        kernel.apply(&engine, &ga, &[1.0, 2.0, 3.0]).unwrap(),
        vec![1.0, 2.0, 3.0]
    );
}

/// A row longer than llvmpipe's 65535 loop steps (one thread per CSR row): wherever the
/// product is cut short, the solve must not claim convergence — the host's f64 check of the
/// returned x (`solvers::host_check`) turns the device's claim into a residual gap.
#[test]
fn a_row_too_long_for_a_software_loop_never_yields_a_false_convergence() {
    let Some(engine) = engine() else {
        return;
    };
    if !engine.context().summary.shader_f64 {
        return;
    }
    // SPD arrow: a tridiagonal band and a dense first row and column of 70 000 entries.
    let n = 70_000usize;
    let mut t = Vec::new();
    for i in 0..n {
        t.push((i, i, if i == 0 { 4.0 + 1e-3 * n as f64 } else { 4.0 }));
        if i > 0 {
            t.push((i, i - 1, -1.0));
            t.push((i - 1, i, -1.0));
        }
        if i > 1 {
            t.push((0, i, 1e-3));
            t.push((i, 0, 1e-3));
        }
    }
    let a = Csr::<f64>::from_triplets(n, &t).unwrap();
    let b = a.mul_vec(&vec![1.0; n]).unwrap();
    let opts = krylov_wgpu::solvers::SolveOptions {
        method: krylov_wgpu::solvers::Method::Cg,
        rtol: 1e-8,
        ..Default::default()
    };
    let sol = krylov_wgpu::solvers::solve_gpu(&engine, &a, &b, None, &opts, &mut ()).unwrap();
    let r = a.residual_inf(&b, &sol.x).unwrap();
    let b_inf = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if sol.report.converged {
        assert!(r <= 1e-6 * b_inf, "converged but |b - Ax|∞ = {r:e}");
    } else {
        assert_eq!(
            sol.report.reason,
            krylov_wgpu::solvers::StopReason::ResidualGap,
            "{}",
            sol.report.reason_detail
        );
        assert!(sol.report.reason_detail.contains("row of 70000 entries"));
    }
}
