//! Paper 000's Table II on our matrices: classical vs pipelined residuals after 30
//! iterations, CG and GMRES, GPU and CPU reference.

use krylov_wgpu::gpu::Engine;
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::solvers::{CheckMode, GramSchmidt, Method, SolveOptions, Variant, cg, gmres};
use krylov_wgpu::{Scalar, cpu};

use super::common::engine;
use super::common::problems::cast;
use super::system;

/// Paper 000, Table II: relative difference of the residuals of the classical and the
/// pipelined solver after 30 iterations (rtol = 0, so both run exactly 30), CG on our SPD
/// matrices and GMRES(30) (classical and pipelined, both with classical Gram–Schmidt as the
/// paper compares them) on all of them; the same difference between the CPU references of the
/// two variants is printed next to it (in brackets).
///
/// f64 differences must stay ≤ 1e-8 (the paper reports ≤ 1e-10 on its matrices) wherever the
/// comparison means something: rows where the CPU's own classical and pipelined solvers
/// already differ by more (marked `*`) are printed, not asserted. On our matrices these are
/// mesh1e1 (n = 48) and pores_1 (n = 30), whose residual after 30 steps is at round-off level
/// (1e-15 … 1e-6 relative to its neighbours' digits), and CG on 494_bus, where the two CG
/// recurrences themselves part after 30 steps (CPU: 2.2e-2 vs 2.8e-2). At least 4 CG rows and
/// 8 GMRES rows are asserted. f32 is printed for reference.
#[test]
fn table_ii_classical_vs_pipelined_after_30_iterations() {
    let Some(engine) = engine() else { return };
    let spd = [
        "494_bus",
        "nos6",
        "mesh1e1",
        "Trefethen_2000",
        "ani4",
        "bcsstk21",
    ];
    let nonsym = ["pores_1", "jpwh_991", "sherman4", "pde2961", "add32"];
    let rel_diff = |(c, p): (f64, f64)| (c - p).abs() / c.abs().max(p.abs()).max(f64::MIN_POSITIVE);
    fn pair<T: Scalar>(engine: Option<&Engine>, method: Method, a: &Csr<T>, b: &[T]) -> (f64, f64) {
        let run = |variant| {
            let o = SolveOptions {
                method,
                variant,
                gs: GramSchmidt::Cgs,
                rtol: 0.0,
                max_iter: 30,
                restart: 30,
                check_mode: CheckMode::Device,
                ..Default::default()
            };
            let r = match (engine, method) {
                (None, _) => cpu::solve(a, b, None, &o).unwrap().report,
                (Some(e), Method::Cg) => cg::solve(e, a, b, None, &o, &mut ()).unwrap().report,
                (Some(e), _) => gmres::solve(e, a, b, None, &o, &mut ()).unwrap().report,
            };
            assert_eq!(r.iterations, 30, "{method} {variant}: {}", r.reason_detail);
            r.relative_residual
        };
        (run(Variant::Classical), run(Variant::Pipelined))
    }
    println!(
        "Table II (paper 000) on our matrices: |res_classical - res_pipelined| / res after 30 \
         iterations, GPU [CPU reference]; * = not asserted (the CPU variants differ too)"
    );
    println!(
        "{:<15} {:>5} | {:>19} {:>19} | {:>8} {:>8}",
        "matrix", "n", "CG f64", "GMRES f64", "CG f32", "GMRES f32"
    );
    let mut asserted = [0usize; 2];
    let mut worst = [0.0f64; 2];
    for name in spd.iter().chain(&nonsym) {
        let (a, b) = system(name);
        let (a32, b32) = cast::<f32>(&a, &b);
        let mut cells = Vec::new();
        let mut cells32 = Vec::new();
        for (col, method) in [Method::Cg, Method::Gmres].into_iter().enumerate() {
            if method == Method::Cg && !spd.contains(name) {
                cells.push(format!("{:>19}", "—"));
                cells32.push(format!("{:>8}", "—"));
                continue;
            }
            let gpu = rel_diff(pair(Some(&engine), method, &a, &b));
            let reference = rel_diff(pair(None, method, &a, &b));
            let meaningful = reference <= 1e-8;
            if meaningful {
                asserted[col] += 1;
                worst[col] = worst[col].max(gpu);
            }
            let mark = if meaningful { ' ' } else { '*' };
            cells.push(format!("{gpu:>8.1e} [{reference:>7.1e}]{mark}"));
            cells32.push(format!(
                "{:>8.1e}",
                rel_diff(pair(Some(&engine), method, &a32, &b32))
            ));
        }
        println!(
            "{name:<15} {:>5} | {} {} | {} {}",
            a.nrows(),
            cells[0],
            cells[1],
            cells32[0],
            cells32[1]
        );
    }
    println!(
        "worst asserted f64: CG {:.1e} ({} matrices), GMRES {:.1e} ({} matrices)",
        worst[0], asserted[0], worst[1], asserted[1]
    );
    assert!(
        asserted[0] >= 4 && asserted[1] >= 8,
        "rows asserted: {asserted:?}"
    );
    assert!(
        worst[0] <= 1e-8,
        "CG: classical vs pipelined differ by {:e}",
        worst[0]
    );
    assert!(
        worst[1] <= 1e-8,
        "GMRES: classical vs pipelined differ by {:e}",
        worst[1]
    );
}
