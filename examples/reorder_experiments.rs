//! The row-reordering experiment of issue #14 (CPU reference, f64, rtol 1e-8, b = A·1):
//! GMRES(30), BiCGStab and BiCG with none / Jacobi / ILU(0) on west0479, the driven-cavity
//! saddle point (`cavity2d`), convection-dominated `convdiff2d` and the shipped matrices with
//! full diagonals, before and after a maximum-product matching (and with MC64 scaling on
//! top); then ILU(0) with a pivot shift against the matching on matrices whose ILU(0)
//! factors as it is. Prints Markdown tables (the evidence for `Reorder::Auto`'s rule):
//! `cargo run --release --example reorder_experiments`.

use krylov_wgpu::KrylovError;
use krylov_wgpu::base::options::Reorder;
use krylov_wgpu::cpu;
use krylov_wgpu::matrix::generators::{cavity_2d, cavity_2d_interleaved, convection_diffusion_2d};
use krylov_wgpu::matrix::matching::max_product_matching;
use krylov_wgpu::matrix::reorder::{auto_reason, diagonal_health, reorder_rows};
use krylov_wgpu::matrix::{Coo, Csr, read_matrix_market};
use krylov_wgpu::solvers::{Method, Precond, Solution, SolveOptions, StopReason, Variant};

fn main() {
    experiment_table();
    experiment_shifted_ilu_vs_matching();
}

fn load(name: &str) -> Csr<f64> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("{name}.mtx"));
    read_matrix_market(path).unwrap()
}

fn ones_rhs(a: &Csr<f64>) -> Vec<f64> {
    a.mul_vec(&vec![1.0; a.ncols()]).unwrap()
}

fn opts(method: Method, precond: Precond) -> SolveOptions {
    SolveOptions {
        method,
        variant: Variant::Pipelined,
        precond,
        rtol: 1e-8,
        max_iter: 10_000,
        ..Default::default()
    }
}

/// Solves P·D_r·A·D_c y = P·D_r·b (MC64's scaling from the matching's duals), x = D_c y,
/// and returns (iterations, converged on the original system, true residual of A x = b).
fn solve_mc64_scaled(a: &Csr<f64>, b: &[f64], o: &SolveOptions) -> (usize, bool, f64) {
    let m = max_product_matching(a).unwrap();
    let (r, s) = m.scaling(true);
    let mut coo = Coo::new(a.nrows(), a.ncols());
    for (i, ri) in r.iter().enumerate() {
        let (cols, vals) = a.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            coo.push(i, c as usize, ri * v * s[c as usize]).unwrap();
        }
    }
    let scaled = m.permute_rows(&coo.to_csr().unwrap());
    let sb: Vec<f64> = b.iter().zip(&r).map(|(b, r)| b * r).collect();
    let pb = m.permute_vec(&sb);
    match cpu::solve_with_reorder(&scaled, &pb, None, o, Reorder::None) {
        Ok(sol) => {
            let x: Vec<f64> = sol.x.iter().zip(&s).map(|(y, s)| y * s).collect();
            let rr = cpu::true_relative_residual(a, b, &x);
            (sol.report.iterations, rr <= o.rtol * 1.01, rr)
        }
        Err(_) => (0, false, f64::NAN),
    }
}

fn cell(res: krylov_wgpu::Result<Solution<f64>>) -> String {
    match res {
        Ok(s) if s.report.converged => format!("{} ✓", s.report.iterations),
        Ok(s) => format!(
            "✗ {} ({:.0e})",
            match s.report.reason {
                StopReason::MaxIterations => "max".to_string(),
                ref r => r.name().to_string(),
            },
            s.report.relative_residual
        ),
        Err(KrylovError::ZeroDiagonal { .. }) => "refused (zero diag)".into(),
        Err(e) => format!("error: {e}"),
    }
}

fn experiment_table() {
    let mut systems: Vec<(String, Csr<f64>)> = vec![("west0479".into(), load("west0479"))];
    for k in [16, 32] {
        for re in [100.0, 1000.0] {
            systems.push((format!("cavity2d:{k}:{re}"), cavity_2d(k, re)));
        }
    }
    for (k, pe) in [(64, 1000.0), (128, 1000.0), (128, 10000.0)] {
        systems.push((
            format!("convdiff2d:{k}:{pe}"),
            convection_diffusion_2d(k, pe),
        ));
    }
    for name in ["sherman4", "pores_1", "jpwh_991", "add32", "pde2961"] {
        systems.push((name.into(), load(name)));
    }
    println!(
        "| matrix | diag zeros, min |aii|/max|aij| | rows moved | method | M | before (none) | \
         matching | auto reorders? | matching + MC64 scaling |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, a) in &systems {
        let h = diagonal_health(a);
        let moved = max_product_matching(a).map_or("singular".into(), |m| m.moved().to_string());
        let ilu = |a: &Csr<f64>| match krylov_wgpu::cpu::ilu::Ilu0::factor(a) {
            Ok(f) => format!("shift {:.0e} growth {:.1e}", f.shift, f.growth),
            Err(e) => format!("error {e}"),
        };
        let pa = reorder_rows(a, &ones_rhs(a)).unwrap().a;
        println!("{name}: ILU(0) of A: {}; of P·A: {}", ilu(a), ilu(&pa));
        let b = ones_rhs(a);
        for method in [Method::Gmres, Method::Bicgstab, Method::Bicg] {
            for precond in [Precond::None, Precond::Jacobi, Precond::Ilu0] {
                let o = opts(method, precond);
                let before = cell(cpu::solve_with_reorder(a, &b, None, &o, Reorder::None));
                let after = cell(cpu::solve_with_reorder(a, &b, None, &o, Reorder::Matching));
                let auto = if auto_reason(a, &o, cpu::ilu0_trouble).is_some() {
                    "yes"
                } else {
                    "no"
                };
                let (it, ok, rr) = solve_mc64_scaled(a, &b, &o);
                let scaled = if ok {
                    format!("{it} ✓")
                } else {
                    format!("✗ {it} ({rr:.0e})")
                };
                println!(
                    "| {name} | {}, {:.1e} | {moved} | {method} | {precond} | {before} | {after} | \
                     {auto} | {scaled} |",
                    h.zeros, h.min_ratio
                );
            }
        }
    }
}

fn experiment_shifted_ilu_vs_matching() {
    let mut tri = Coo::<f64>::new(40, 40);
    for i in 0..40 {
        if i > 0 {
            tri.push(i, i, 4.0).unwrap();
            tri.push(i, i - 1, -1.0).unwrap();
        }
        if i + 1 < 40 {
            tri.push(i, i + 1, -1.5).unwrap();
        }
    }
    let systems = vec![
        ("tridiagonal a00 = 0".to_string(), tri.to_csr().unwrap()),
        (
            "cavity2d:16:100 interleaved".into(),
            cavity_2d_interleaved(16, 100.0),
        ),
        (
            "cavity2d:16:1000 interleaved".into(),
            cavity_2d_interleaved(16, 1000.0),
        ),
        (
            "cavity2d:32:100 interleaved".into(),
            cavity_2d_interleaved(32, 100.0),
        ),
    ];
    for (name, a) in &systems {
        let b = ones_rhs(a);
        println!("{name}: ILU(0) of A {:?}", cpu::ilu0_trouble(a));
        for method in [Method::Gmres, Method::Bicgstab, Method::Bicg] {
            let o = opts(method, Precond::Ilu0);
            let before = cell(cpu::solve_with_reorder(a, &b, None, &o, Reorder::None));
            let after = cell(cpu::solve_with_reorder(a, &b, None, &o, Reorder::Matching));
            println!("| {name} | {method} | ilu0 | {before} | {after} |");
        }
    }
}
