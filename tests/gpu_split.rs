//! Issue #16 item 3, no size refused: a CSR matrix whose column indices and values exceed one
//! storage binding goes over two (`format_csr_split.wgsl`), and GMRES's and CA-GMRES's pools
//! of basis and work vectors over as many as they need, up to 32 (`gmres_pool.wgsl`,
//! `gpu::shader::pool_source`). With the binding limit forced below
//! their size (`Tuning::max_binding_bytes`), every solver — CG both variants, BiCGStab, GMRES,
//! CA-GMRES, BiCG with its Aᵀ as a second split matrix — and the SpMV give exactly the results
//! of one binding:
//! the same iterations and the same x bit for bit.

mod common;

use common::problems::{load, rhs};

use krylov_wgpu::gpu::{GpuMatrix, Spmv, Tuning};
use krylov_wgpu::matrix::generators::random_nonsymmetric;
use krylov_wgpu::solvers::{Format, Method, Precond, SolveOptions, Tsqr, Variant, solve_gpu};
use krylov_wgpu::{KrylovError, Scalar};

fn split_engine(limit: u64) -> Option<krylov_wgpu::gpu::Engine> {
    common::engine_with(Tuning {
        max_binding_bytes: Some(limit),
        ..Tuning::default()
    })
}

/// Whether the report says the pool went over `k` bindings.
fn held_in(report: &krylov_wgpu::solvers::SolveReport, k: usize) -> bool {
    let said = format!("held in {k} bindings");
    report.notes.iter().any(|n| n.contains(&said))
}

fn same_bits<T: Scalar>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

#[test]
fn every_solver_gives_the_results_of_one_binding() {
    let Some(one) = common::engine() else {
        return;
    };
    // GMRES on a matrix with many entries per row, so that its pool (restart 10) stays in one
    // binding at the limit that splits the matrix (the pool's own split: next test).
    let dense = random_nonsymmetric::<f64>(200, 40, 3);
    let cases: [(&str, Method, Variant); 7] = [
        ("bcsstk21", Method::Cg, Variant::Pipelined),
        ("bcsstk21", Method::Cg, Variant::Classical),
        ("bcsstk21", Method::Cg, Variant::Fused),
        ("sherman4", Method::Bicgstab, Variant::Pipelined),
        ("random", Method::Gmres, Variant::Pipelined),
        ("random", Method::Gmres, Variant::Classical),
        ("sherman4", Method::Bicg, Variant::Classical),
    ];
    for (name, method, variant) in cases {
        let a = if name == "random" {
            dense.clone()
        } else {
            load(name)
        };
        let b = rhs(&a);
        // f64 values split a little past the middle (two bindings: `format_csr_split.wgsl`)
        // and at three tenths (four: `csr_parts_source`).
        for (tenths, parts_word) in [(6, "two"), (3, "4")] {
            let limit = (a.nnz() as u64 * 8) * tenths / 10;
            let split = split_engine(limit).expect("the same device");
            let opts = SolveOptions {
                method,
                variant,
                rtol: 1e-8,
                max_iter: 3000,
                precond: Precond::Jacobi,
                restart: 10,
                format: Format::Csr,
                ..Default::default()
            };
            let whole = solve_gpu(&one, &a, &b, None, &opts, &mut ()).unwrap();
            let parts = solve_gpu(&split, &a, &b, None, &opts, &mut ()).unwrap();
            let ctx = format!("{name} {method} {variant}, {parts_word} bindings");
            assert!(
                whole.report.converged,
                "{ctx}: {}",
                whole.report.reason_detail
            );
            assert_eq!(whole.report.reason, parts.report.reason, "{ctx}");
            let said = format!("over {parts_word} storage bindings");
            assert!(
                parts.report.format_reason.contains(&said),
                "{ctx}: {}",
                parts.report.format_reason
            );
            assert!(!whole.report.format_reason.contains("storage bindings"));
            assert_eq!(whole.report.iterations, parts.report.iterations, "{ctx}");
            assert!(same_bits(&whole.x, &parts.x), "{ctx}");
            assert_eq!(
                whole.report.counts.dispatches, parts.report.counts.dispatches,
                "{ctx}"
            );
        }
    }
}

/// GMRES(30)'s pool (the basis and work vectors) over two, three, seven or eight and eighteen
/// bindings (beyond eight the kernels find the part by division, `pool_source`) gives the
/// results of one, in both variants, with Jacobi and with ILU(0) (whose apply copies pool
/// vectors in and out); more than the adapter lets a kernel bind are refused by name.
#[test]
fn the_gmres_basis_over_several_bindings_gives_the_results_of_one() {
    let Some(one) = common::engine() else {
        return;
    };
    let a = load("sherman4");
    let b = rhs(&a);
    let vector = 1104 * 8;
    // 35 or 36 vectors of 1104 f64: 21, 12, 5 and 2 vectors per binding.
    for (per, parts) in [(21, [2, 2]), (12, [3, 3]), (5, [7, 8]), (2, [18, 18])] {
        let split = split_engine(per * vector).unwrap();
        for variant in [Variant::Pipelined, Variant::Fused, Variant::Classical] {
            for precond in [Precond::Jacobi, Precond::Ilu0] {
                if precond == Precond::Ilu0
                    && (variant == Variant::Fused || (per != 21 && variant == Variant::Classical))
                {
                    continue; // one ILU(0) case per split is enough (fused runs classical)
                }
                let opts = SolveOptions {
                    method: Method::Gmres,
                    variant,
                    precond,
                    rtol: 1e-9,
                    max_iter: 3000,
                    format: Format::Csr,
                    ..Default::default()
                };
                let whole = solve_gpu(&one, &a, &b, None, &opts, &mut ()).unwrap();
                let pieces = solve_gpu(&split, &a, &b, None, &opts, &mut ()).unwrap();
                let ctx = format!("{variant} {precond}, {per} vectors per binding");
                assert!(whole.report.converged, "{ctx}");
                assert!(
                    parts.iter().any(|k| held_in(&pieces.report, *k)),
                    "{ctx}: {:?}",
                    pieces.report.notes
                );
                // At 2 vectors per binding A's arrays go over two bindings as well.
                assert_eq!(
                    pieces.report.format_reason.contains("two storage bindings"),
                    per == 2,
                    "{ctx}"
                );
                assert_eq!(whole.report.iterations, pieces.report.iterations, "{ctx}");
                assert!(same_bits(&whole.x, &pieces.x), "{ctx}");
            }
        }
    }
    // A pool over more bindings than a kernel can hold is refused by name (GMRES(80): 85
    // vectors, 43 bindings of two, above MAX_POOL_PARTS and lavapipe's 32 storage buffers per
    // stage).
    let tiny = split_engine(2 * vector).unwrap();
    let opts = SolveOptions {
        method: Method::Gmres,
        restart: 80,
        format: Format::Csr,
        ..Default::default()
    };
    let e = solve_gpu(&tiny, &a, &b, None, &opts, &mut ()).unwrap_err();
    assert!(matches!(e, KrylovError::BufferTooLarge { .. }), "{e}");
    assert!(e.to_string().contains("GMRES(80)"), "{e}");
    assert!(e.to_string().contains(" bindings)"), "{e}");
}

#[test]
fn the_cagmres_pool_over_several_bindings_gives_the_results_of_one() {
    let Some(one) = common::engine() else {
        return;
    };
    let a = load("sherman4");
    let b = rhs(&a);
    // CA-GMRES(5, 30): 34 vectors of 1104 f64, split a little past the middle (x, b and the
    // scratch vector in the second buffer, with the basis's last columns).
    let limit = 34 * 1104 * 8 * 6 / 10;
    let split = split_engine(limit).unwrap();
    let cases = [
        (Tsqr::CholQr2, Precond::Jacobi),
        (Tsqr::Cgs2, Precond::None),
        (Tsqr::Svqr, Precond::Ilu0),
        (Tsqr::Caqr, Precond::Jacobi),
    ];
    for (tsqr, precond) in cases {
        let opts = SolveOptions {
            method: Method::CaGmres,
            s_step: 5,
            restart: 30,
            tsqr,
            precond,
            rtol: 1e-9,
            max_iter: 3000,
            format: Format::Csr,
            ..Default::default()
        };
        let whole = solve_gpu(&one, &a, &b, None, &opts, &mut ()).unwrap();
        let parts = solve_gpu(&split, &a, &b, None, &opts, &mut ()).unwrap();
        let ctx = format!("{tsqr} {precond}");
        assert!(
            whole.report.converged,
            "{ctx}: {}",
            whole.report.reason_detail
        );
        assert!(held_in(&parts.report, 2), "{ctx}: {:?}", parts.report.notes);
        assert!(!held_in(&whole.report, 2));
        assert_eq!(whole.report.iterations, parts.report.iterations, "{ctx}");
        assert!(same_bits(&whole.x, &parts.x), "{ctx}");
    }
    // f32: the double-single true residual reads x and b from the second buffer.
    let a32 = a.cast::<f32>().unwrap();
    let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
    let split32 = split_engine(34 * 1104 * 4 * 6 / 10).unwrap();
    let opts = SolveOptions {
        method: Method::CaGmres,
        precond: Precond::Jacobi,
        rtol: 1e-5,
        format: Format::Csr,
        ..Default::default()
    };
    let whole = solve_gpu(&one, &a32, &b32, None, &opts, &mut ()).unwrap();
    let parts = solve_gpu(&split32, &a32, &b32, None, &opts, &mut ()).unwrap();
    assert!(whole.report.converged, "{}", whole.report.reason_detail);
    assert!(held_in(&parts.report, 2));
    assert_eq!(whole.report.iterations, parts.report.iterations);
    assert_eq!(
        whole.report.relative_residual,
        parts.report.relative_residual
    );
    assert!(same_bits(&whole.x, &parts.x));
    // Over five bindings (7 vectors each): still the results of one.
    let five = split_engine(7 * 1104 * 8).unwrap();
    let opts = SolveOptions {
        rtol: 1e-9,
        precond: Precond::Jacobi,
        ..opts_ca()
    };
    let whole = solve_gpu(&one, &a, &b, None, &opts, &mut ()).unwrap();
    let parts = solve_gpu(&five, &a, &b, None, &opts, &mut ()).unwrap();
    assert!(held_in(&parts.report, 5), "{:?}", parts.report.notes);
    assert_eq!(whole.report.iterations, parts.report.iterations);
    assert!(same_bits(&whole.x, &parts.x));
    // Over seventeen (2 vectors each; the kernels find the part by division).
    let many = split_engine(2 * 1104 * 8).unwrap();
    let parts = solve_gpu(&many, &a, &b, None, &opts, &mut ()).unwrap();
    assert!(held_in(&parts.report, 17), "{:?}", parts.report.notes);
    assert_eq!(whole.report.iterations, parts.report.iterations);
    assert!(same_bits(&whole.x, &parts.x));
    // A pool over more bindings than a kernel can hold is refused by name (CA-GMRES(5, 80):
    // 84 vectors, 42 bindings of two).
    let opts = SolveOptions {
        restart: 80,
        ..opts_ca()
    };
    let e = solve_gpu(&many, &a, &b, None, &opts, &mut ()).unwrap_err();
    assert!(matches!(e, KrylovError::BufferTooLarge { .. }), "{e}");
    assert!(e.to_string().contains("CA-GMRES(5, 80)"), "{e}");
}

fn opts_ca() -> SolveOptions {
    SolveOptions {
        method: Method::CaGmres,
        format: Format::Csr,
        ..Default::default()
    }
}

#[test]
fn spmv_over_two_bindings_equals_one_and_rows_straddle_the_split() {
    let Some(one) = common::engine() else {
        return;
    };
    let a = load("bcsstk21").cast::<f32>().unwrap();
    let x: Vec<f32> = (0..a.ncols()).map(|i| ((i as f32) * 0.37).sin()).collect();
    let limit = (a.nnz() as u64 * 4) / 2 + 20;
    let split = split_engine(limit).unwrap();
    let m1 = GpuMatrix::upload(&one, &a, Format::Csr).unwrap();
    let m2 = GpuMatrix::upload(&split, &a, Format::Csr).unwrap();
    assert_eq!(m1.split(), None);
    let at = m2.split().expect("split");
    // Some row has entries on both sides of the split.
    assert!(
        a.row_ptr()
            .windows(2)
            .any(|w| (w[0] as usize) < at && at < w[1] as usize),
        "no row straddles entry {at}"
    );
    let y1 = Spmv::new(&one, &m1).unwrap().apply(&one, &m1, &x).unwrap();
    let y2 = Spmv::new(&split, &m2)
        .unwrap()
        .apply(&split, &m2, &x)
        .unwrap();
    assert!(same_bits(&y1, &y2));
    let exact = a.mul_vec(&x).unwrap();
    let err = y2
        .iter()
        .zip(&exact)
        .map(|(u, v)| (u - v).abs())
        .fold(0.0f32, f32::max);
    assert!(err < 1e-3, "{err}");
}

#[test]
fn more_bindings_than_a_kernel_holds_is_a_clear_error() {
    let Some(_) = common::engine() else {
        return;
    };
    // 20 bindings: over MAX_CSR_PARTS (and lavapipe's 8: 32 storage buffers per stage).
    let a = load("bcsstk21");
    let split = split_engine(a.nnz() as u64 * 8 / 20).unwrap();
    let e = GpuMatrix::upload(&split, &a, Format::Csr).unwrap_err();
    assert!(matches!(e, KrylovError::BufferTooLarge { .. }), "{e}");
    assert!(e.to_string().contains("csr values (over "), "{e}");
}

/// p(1)-GMRES's pool (v_0 … v_m, the work vectors and u_1 … u_m: 2m + 5 vectors) over four
/// and six bindings: the iterations and the solution of one binding, bit for bit.
#[test]
fn the_p1_gmres_pool_over_several_bindings_gives_the_results_of_one() {
    let Some(one) = common::engine() else {
        return;
    };
    let a = load("sherman4");
    let b = rhs(&a);
    let vector = 1104 * 8;
    // 65 vectors of 1104 f64: 21 and 12 per binding (4 and 6 bindings).
    for per in [21, 12] {
        let split = split_engine(per * vector).unwrap();
        let opts = SolveOptions {
            method: Method::Gmres,
            variant: Variant::P1,
            precond: Precond::Jacobi,
            rtol: 1e-9,
            max_iter: 3000,
            format: Format::Csr,
            ..Default::default()
        };
        let whole = solve_gpu(&one, &a, &b, None, &opts, &mut ()).unwrap();
        let pieces = solve_gpu(&split, &a, &b, None, &opts, &mut ()).unwrap();
        let ctx = format!("p1, {per} vectors per binding");
        assert!(
            whole.report.converged,
            "{ctx}: {}",
            whole.report.reason_detail
        );
        let parts = 65usize.div_ceil(per as usize);
        assert!(
            held_in(&pieces.report, parts),
            "{ctx}: {:?}",
            pieces.report.notes
        );
        assert_eq!(whole.report.iterations, pieces.report.iterations, "{ctx}");
        assert!(same_bits(&whole.x, &pieces.x), "{ctx}");
    }
}
