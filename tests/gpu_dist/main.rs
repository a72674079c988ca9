//! Several devices in one process (issue #19): row partitions and halos against a brute-force
//! host reference on random partitions, and pipelined CG over two and three logical devices
//! (lavapipe opens one device per entry of `--devices 0,0,0`) against one device and the CPU
//! reference, with exact launch and transfer counts and the refusals.

#[path = "../common/mod.rs"]
mod common;

mod bicg;
mod bicgstab;
mod cagmres;
mod gmres;

use std::sync::Arc;

use common::problems::{load, rhs};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use krylov_wgpu::gpu::{DeviceList, Engine, GpuContext, Tuning, open_devices};
use krylov_wgpu::matrix::Csr;
use krylov_wgpu::matrix::generators::{laplace_3d, poisson_2d_fd, random_spd};
use krylov_wgpu::matrix::partition::{Exchange, LocalPart, RowPartition};
use krylov_wgpu::solvers::dist::{DistConfig, solve_dist, solve_dist_with};
use krylov_wgpu::solvers::{Method, Precond, SolveOptions, StopReason, Variant, solve_gpu};
use krylov_wgpu::{KrylovError, Scalar};

/// `k` logical devices on the test adapter, or `None` where no adapter exists.
fn devices(k: usize) -> Option<Vec<Arc<GpuContext>>> {
    common::context()?;
    Some(open_devices(&DeviceList::Indices(vec![0; k])).expect("logical devices on adapter 0"))
}

fn cg(precond: Precond, rtol: f64) -> SolveOptions {
    SolveOptions {
        method: Method::Cg,
        variant: Variant::Pipelined,
        precond,
        rtol,
        max_iter: 4000,
        ..Default::default()
    }
}

/// Random bounds for `k` parts of `n` rows.
fn random_bounds(rng: &mut ChaCha8Rng, n: usize, k: usize) -> Vec<usize> {
    let mut inner: Vec<usize> = Vec::new();
    while inner.len() < k - 1 {
        let b = rng.random_range(1..n);
        if !inner.contains(&b) {
            inner.push(b);
        }
    }
    inner.sort_unstable();
    let mut bounds = vec![0];
    bounds.extend(inner);
    bounds.push(n);
    bounds
}

/// A random square matrix with an unsymmetric pattern (a halo need not mirror a send list).
fn random_pattern(rng: &mut ChaCha8Rng, n: usize) -> Csr<f64> {
    let mut e = Vec::new();
    for i in 0..n {
        e.push((i, i, 4.0));
        for _ in 0..rng.random_range(0..5) {
            e.push((i, rng.random_range(0..n), rng.random_range(-1.0..1.0)));
        }
    }
    e.sort_by_key(|t| (t.0, t.1));
    e.dedup_by_key(|t| (t.0, t.1));
    Csr::from_triplets(n, &e).unwrap()
}

#[test]
fn halos_and_exchange_match_a_brute_force_reference_on_random_partitions() {
    let seed = common::fresh_seed();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for trial in 0..12 {
        let n = rng.random_range(20..300);
        let a = if trial % 2 == 0 {
            random_pattern(&mut rng, n)
        } else {
            random_spd(n, 6, seed + trial)
        };
        let k = rng.random_range(1..=5.min(n));
        let part = RowPartition::from_bounds(n, random_bounds(&mut rng, n, k)).unwrap();
        let locals: Vec<LocalPart<f64>> = (0..k).map(|p| LocalPart::build(&a, &part, p)).collect();
        let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let ax = a.mul_vec(&x).unwrap();
        let ex = Exchange::plan(&part, &locals);
        for (p, l) in locals.iter().enumerate() {
            let rows = part.rows(p);
            // The halo: every column outside the block that one of its rows reads, once.
            let mut halo: Vec<u32> = rows
                .clone()
                .flat_map(|i| a.row(i).0.to_vec())
                .filter(|&c| !rows.contains(&(c as usize)))
                .collect();
            halo.sort_unstable();
            halo.dedup();
            assert_eq!(l.halo, halo, "seed {seed}, trial {trial}, part {p}");
            // Interior rows read no halo entry; every row is owned once.
            for i in 0..l.nloc() {
                let reads_halo = (l.row_ptr[i]..l.row_ptr[i + 1])
                    .any(|e| l.col_idx[e as usize] as usize >= l.nloc());
                assert_eq!(
                    reads_halo,
                    i >= l.interior,
                    "seed {seed}, row {i} of part {p}"
                );
            }
            let mut owned: Vec<u32> = l.order.clone();
            owned.sort_unstable();
            assert_eq!(owned, rows.map(|g| g as u32).collect::<Vec<_>>());
            // The block's product on [x_loc; x_halo] is A x on its rows.
            let y = l.mul_ext(&l.extended(&x));
            for (i, &g) in l.order.iter().enumerate() {
                assert!((y[i] - ax[g as usize]).abs() <= 1e-12 * (1.0 + ax[g as usize].abs()));
            }
        }
        // Running the exchange plan fills every halo with the owners' values.
        let sent: Vec<Vec<f64>> = ex
            .send
            .iter()
            .enumerate()
            .map(|(p, s)| {
                s.iter()
                    .map(|&i| x[locals[p].order[i as usize] as usize])
                    .collect()
            })
            .collect();
        for (p, l) in locals.iter().enumerate() {
            let mut halo = vec![f64::NAN; l.halo.len()];
            for t in ex.transfers.iter().filter(|t| t.to == p) {
                assert_ne!(t.from, p);
                halo[t.dst..t.dst + t.len].copy_from_slice(&sent[t.from][t.src..t.src + t.len]);
            }
            let want: Vec<f64> = l.halo.iter().map(|&g| x[g as usize]).collect();
            assert_eq!(halo, want, "seed {seed}, trial {trial}, part {p}");
        }
        assert_eq!(
            ex.values(),
            locals.iter().map(|l| l.halo.len()).sum::<usize>()
        );
    }
}

#[test]
fn balanced_partitions_split_the_nonzeros_evenly() {
    let a = laplace_3d::<f64>(12);
    for k in [1, 2, 3, 7] {
        let p = RowPartition::balanced(&a, k).unwrap();
        assert_eq!(p.parts(), k);
        let nnz: Vec<usize> = (0..k)
            .map(|i| (a.row_ptr()[p.bounds[i + 1]] - a.row_ptr()[p.bounds[i]]) as usize)
            .collect();
        let ideal = a.nnz() as f64 / k as f64;
        // Whole rows of at most 7 entries: within one row of the ideal share.
        assert!(
            nnz.iter().all(|&z| (z as f64 - ideal).abs() <= 7.0),
            "{nnz:?}"
        );
    }
    assert!(matches!(
        RowPartition::balanced(&poisson_2d_fd::<f64>(2), 5),
        Err(KrylovError::InvalidOption(_))
    ));
    assert!(RowPartition::from_bounds(10, vec![0, 5, 5, 10]).is_err());
    assert!(RowPartition::from_bounds(10, vec![0, 4, 9]).is_err());
}

/// Pipelined CG on `k` logical devices against one device (the single-device solver) and the
/// exact solution, in `T`.
fn matches_one_device<T: Scalar>(name: &str, a: &Csr<f64>, precond: Precond, rtol: f64) {
    let Some(ctx) = common::context() else { return };
    let _ = &ctx;
    let at: Csr<T> = a.cast().unwrap();
    let bt: Vec<T> = rhs(&at);
    let opts = cg(precond, rtol);
    let one = solve_gpu(&Engine::new(ctx.clone()), &at, &bt, None, &opts, &mut ()).unwrap();
    assert!(
        one.report.converged,
        "{name}: one device: {}",
        one.report.reason_detail
    );
    // The CPU reference's CG on the same problem in f64: how far rounding alone (another
    // order of summation, another precision) moves this problem's iteration count.
    let b64: Vec<f64> = bt.iter().map(|v| v.as_f64()).collect();
    let cpu = krylov_wgpu::cpu::solve(a, &b64, None, &opts).unwrap();
    let spread = (cpu.report.iterations as i64 - one.report.iterations as i64).abs();
    for k in [1, 2, 3] {
        let devs = devices(k).unwrap();
        let sol = solve_dist(&devs, &at, &bt, None, &opts).unwrap();
        let r = &sol.report;
        assert!(r.converged, "{name} on {k} devices: {}", r.reason_detail);
        assert_eq!(r.reason, StopReason::Converged);
        let (it1, itk) = (one.report.iterations as i64, r.iterations as i64);
        eprintln!(
            "{name} {} k={k}: {itk} vs {it1} (spread {spread})",
            T::PRECISION
        );
        assert!(
            (itk - it1).abs() <= 1 + spread,
            "{name} {}: {k} devices took {itk} iterations, one device {it1} (±{spread} in another summation order)",
            T::PRECISION
        );
        // The true residual (recomputed in f64 from x) meets the tolerance: the solution is as
        // good as the one device's, whatever the rounding order of the sums.
        assert!(
            r.relative_residual <= rtol * (1.0 + 1e-3),
            "{name}: {}",
            r.relative_residual
        );
        assert!(sol.x.iter().all(|v| v.is_finite()));
        let d = r.devices.as_ref().unwrap();
        assert_eq!(d.devices.len(), k);
        assert_eq!(d.devices.iter().map(|p| p.rows).sum::<usize>(), a.nrows());
        assert_eq!(d.devices.iter().map(|p| p.nnz).sum::<usize>(), a.nnz());
        assert_eq!(
            d.devices.iter().map(|p| p.halo).sum::<usize>(),
            d.exchange_values_per_iteration
        );
        assert_eq!(k == 1, d.exchange_values_per_iteration == 0);
        // wgpu's submit is a part of the host's submitting (one clock, nested intervals).
        assert!(
            d.queue_submit_seconds > 0.0 && d.queue_submit_seconds <= d.submit_seconds,
            "{name}: {} s in queue submit of {} s submitting",
            d.queue_submit_seconds,
            d.submit_seconds
        );
    }
}

#[test]
fn cg_on_two_and_three_devices_matches_one_device_poisson_f32() {
    matches_one_device::<f32>("poisson2d:40", &poisson_2d_fd(40), Precond::None, 1e-5);
}

#[test]
fn cg_on_two_and_three_devices_matches_one_device_laplace3d_f64_jacobi() {
    let Some(ctx) = common::context() else { return };
    if !ctx.supports(krylov_wgpu::Precision::F64) {
        eprintln!("the test adapter has no f64 shaders: the f64 cases do nothing here");
        return;
    }
    matches_one_device::<f64>("laplace3d:12", &laplace_3d(12), Precond::Jacobi, 1e-9);
}

#[test]
fn cg_on_devices_matches_one_device_on_real_matrices() {
    let Some(ctx) = common::context() else { return };
    if !ctx.supports(krylov_wgpu::Precision::F64) {
        eprintln!("the test adapter has no f64 shaders: the f64 cases do nothing here");
        return;
    }
    for name in ["494_bus", "mesh1e1", "bcsstk01"] {
        matches_one_device::<f64>(name, &load(name), Precond::Jacobi, 1e-8);
    }
}

#[test]
fn cg_agrees_with_the_cpu_reference_solution() {
    let Some(devs) = devices(2) else { return };
    let a = poisson_2d_fd::<f64>(30);
    let b = rhs(&a);
    let at: Csr<f32> = a.cast().unwrap();
    let bt: Vec<f32> = b.iter().map(|&v| v as f32).collect();
    let opts = cg(Precond::Jacobi, 1e-6);
    let gpu = solve_dist(&devs, &at, &bt, None, &opts).unwrap();
    let cpu = krylov_wgpu::cpu::solve(&a, &b, None, &opts).unwrap();
    assert!(gpu.report.converged && cpu.report.converged);
    // Both meet ‖b − Ax‖ ≤ 1e-6‖b‖; with κ(A) ≈ 400 for this grid their difference is within
    // κ·2e-6 relative.
    let xn = krylov_wgpu::cpu::norm2_f64(&cpu.x);
    let diff: f64 = gpu
        .x
        .iter()
        .zip(&cpu.x)
        .map(|(g, c)| (g.as_f64() - c).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(diff <= 1e-3 * xn, "‖x_gpu − x_cpu‖ = {diff}, ‖x‖ = {xn}");
}

#[test]
fn launches_and_transfers_per_iteration_are_exact() {
    let Some(devs) = devices(2) else { return };
    let a = poisson_2d_fd::<f32>(24);
    let b = rhs(&a);
    let sol = solve_dist(&devs, &a, &b, None, &cg(Precond::Jacobi, 1e-5)).unwrap();
    let r = &sol.report;
    assert!(r.converged && r.iterations > 5);
    // Per iteration on each device: update, gather, interior product, boundary product; two
    // global reductions (the update's and the product's sums); two reads (halo, sums); three
    // submits; α and β and the halo from the one other block written.
    let it = r.iterations as u64;
    assert_eq!(r.loop_counts.dispatches, 4 * it);
    assert_eq!(r.loop_counts.reductions, 2 * it);
    assert_eq!(r.loop_counts.readbacks, 2 * it);
    assert_eq!(r.loop_counts.submits, 3 * it);
    assert_eq!(r.loop_counts.uploads, 2 * it);
    assert_eq!(r.reductions_per_iteration, 2.0);
    assert_eq!(r.syncs_per_iteration, 2.0);
    // A 24 × 24 grid split in two: each block reads one grid line of the other.
    let d = r.devices.as_ref().unwrap();
    assert_eq!(d.exchange_values_per_iteration, 48);
    assert_eq!(d.exchange_bytes_per_iteration, 2 * 48 * 4);
    // One device: no halo, no gather, no boundary rows, one read (three submits: update,
    // product, the read).
    let one = solve_dist(
        &devices(1).unwrap(),
        &a,
        &b,
        None,
        &cg(Precond::Jacobi, 1e-5),
    )
    .unwrap();
    let (c, it) = (&one.report.loop_counts, one.report.iterations as u64);
    assert_eq!(
        (c.dispatches, c.readbacks, c.reductions, c.submits),
        (2 * it, it, 2 * it, 3 * it)
    );
}

#[test]
fn a_matrix_over_two_bindings_gives_the_same_iterations() {
    let Some(devs) = devices(2) else { return };
    let a = poisson_2d_fd::<f32>(20);
    let b = rhs(&a);
    let opts = cg(Precond::None, 1e-5);
    let whole = solve_dist(&devs, &a, &b, None, &opts).unwrap();
    // 2 KiB bindings: each block's 990-odd f32 values (3.9 KB) go over two.
    let config = DistConfig {
        partition: None,
        tuning: Tuning {
            max_binding_bytes: Some(2048),
            ..Tuning::default()
        },
    };
    let split = solve_dist_with(&devs, &a, &b, None, &opts, &config, &mut ()).unwrap();
    let d = split.report.devices.as_ref().unwrap();
    assert!(d.devices.iter().all(|p| p.split_binding));
    assert!(
        whole
            .report
            .devices
            .as_ref()
            .unwrap()
            .devices
            .iter()
            .all(|p| !p.split_binding)
    );
    assert_eq!(split.report.iterations, whole.report.iterations);
    assert_eq!(split.x, whole.x, "the same arithmetic, bit for bit");
}

#[test]
fn spinning_and_blocking_waits_give_the_same_solve() {
    let Some(devs) = devices(2) else { return };
    // Software adapters block by default (a spinning host thread would take a core from
    // lavapipe's workers); hardware ones spin first.
    let engine = Engine::with_tuning(devs[0].clone(), Tuning::default());
    assert_eq!(engine.spins(), !devs[0].summary.software);
    let a = poisson_2d_fd::<f64>(24);
    let b = rhs(&a);
    let opts = cg(Precond::Jacobi, 1e-8);
    let run = |spin: bool| {
        let config = DistConfig {
            partition: None,
            tuning: Tuning {
                spin_wait: Some(spin),
                ..Tuning::default()
            },
        };
        solve_dist_with(&devs, &a, &b, None, &opts, &config, &mut ()).unwrap()
    };
    let (spun, blocked) = (run(true), run(false));
    assert!(spun.report.converged, "{}", spun.report.reason_detail);
    assert_eq!(spun.report.iterations, blocked.report.iterations);
    assert_eq!(spun.report.counts, blocked.report.counts);
    assert_eq!(
        spun.x, blocked.x,
        "only the wait differs: bit for bit the same x"
    );
}

#[test]
fn an_uneven_explicit_partition_still_solves() {
    let Some(devs) = devices(3) else { return };
    let a = poisson_2d_fd::<f32>(20);
    let b = rhs(&a);
    let config = DistConfig {
        partition: Some(RowPartition::from_bounds(400, vec![0, 17, 350, 400]).unwrap()),
        tuning: Tuning::default(),
    };
    let sol = solve_dist_with(
        &devs,
        &a,
        &b,
        None,
        &cg(Precond::None, 1e-5),
        &config,
        &mut (),
    )
    .unwrap();
    assert!(sol.report.converged, "{}", sol.report.reason_detail);
    let rows: Vec<usize> = sol
        .report
        .devices
        .unwrap()
        .devices
        .iter()
        .map(|p| p.rows)
        .collect();
    assert_eq!(rows, vec![17, 333, 50]);
}

#[test]
fn what_is_not_built_or_not_valid_is_refused_clearly() {
    let Some(devs) = devices(2) else { return };
    let a = poisson_2d_fd::<f32>(6);
    let b = rhs(&a);
    let err = |o: SolveOptions| solve_dist(&devs, &a, &b, None, &o).unwrap_err();
    let left = SolveOptions {
        method: Method::Bicgstab,
        side: krylov_wgpu::solvers::Side::Left,
        ..cg(Precond::Jacobi, 1e-6)
    };
    assert!(matches!(err(left), KrylovError::Unsupported(_)));
    assert!(matches!(
        err(cg(Precond::Ilu0, 1e-6)),
        KrylovError::Unsupported(_)
    ));
    // A partition for another number of devices.
    let config = DistConfig {
        partition: Some(RowPartition::from_bounds(36, vec![0, 10, 20, 36]).unwrap()),
        tuning: Tuning::default(),
    };
    let e = solve_dist_with(
        &devs,
        &a,
        &b,
        None,
        &cg(Precond::None, 1e-6),
        &config,
        &mut (),
    );
    assert!(matches!(e, Err(KrylovError::InvalidOption(_))));
    // A zero diagonal under Jacobi, a wrong right-hand side length.
    let z = Csr::<f32>::from_triplets(2, &[(0, 1, 1.0), (1, 0, 1.0)]).unwrap();
    let e = solve_dist(&devs, &z, &[1.0, 1.0], None, &cg(Precond::Jacobi, 1e-6));
    assert!(matches!(e, Err(KrylovError::ZeroDiagonal { row: 0 })));
    assert!(solve_dist(&devs, &a, &b[1..], None, &cg(Precond::None, 1e-6)).is_err());
    // More adapters than exist.
    let many = open_devices(&DeviceList::Count(64)).unwrap_err();
    assert!(matches!(many, KrylovError::InvalidOption(m) if m.contains("--devices 0,0")));
    assert!(open_devices(&DeviceList::Indices(vec![0, 99])).is_err());
    assert!("0,x".parse::<DeviceList>().is_err());
    assert!("0".parse::<DeviceList>().is_err());
    assert_eq!("2".parse::<DeviceList>(), Ok(DeviceList::Count(2)));
    assert_eq!(
        "0,0".parse::<DeviceList>(),
        Ok(DeviceList::Indices(vec![0, 0]))
    );
}

#[test]
fn an_indefinite_matrix_stops_as_not_spd_on_every_device_count() {
    let Some(devs) = devices(2) else { return };
    // −Poisson: ⟨p, Ap⟩ < 0 at once.
    let a = poisson_2d_fd::<f32>(10);
    let neg = a.scale_rows(|_| -1.0);
    let b = rhs(&neg);
    let sol = solve_dist(&devs, &neg, &b, None, &cg(Precond::None, 1e-6)).unwrap();
    assert_eq!(sol.report.reason, StopReason::NotSpd);
    assert!(!sol.report.converged);
}

#[test]
fn classical_cg_on_devices_matches_one_device_and_counts_are_exact() {
    let Some(ctx) = common::context() else { return };
    if !ctx.supports(krylov_wgpu::Precision::F64) {
        eprintln!("the test adapter has no f64 shaders: the f64 cases do nothing here");
        return;
    }
    let opts = SolveOptions {
        variant: Variant::Classical,
        ..cg(Precond::Jacobi, 1e-8)
    };
    for name in ["494_bus", "bcsstk01"] {
        let (a, b) = common::problems::shipped_system(name, &[]);
        let one = solve_gpu(&Engine::new(ctx.clone()), &a, &b, None, &opts, &mut ()).unwrap();
        let cpu = krylov_wgpu::cpu::solve(&a, &b, None, &opts).unwrap();
        let spread = (cpu.report.iterations as i64 - one.report.iterations as i64).abs();
        for k in [1, 2, 3] {
            let sol = solve_dist(&devices(k).unwrap(), &a, &b, None, &opts).unwrap();
            let r = &sol.report;
            assert!(r.converged, "{name} on {k} devices: {}", r.reason_detail);
            assert_eq!(r.variant, Variant::Classical);
            let (it1, itk) = (one.report.iterations as i64, r.iterations as i64);
            assert!(
                (itk - it1).abs() <= 1 + spread,
                "{name}: {k} devices took {itk} iterations, one device {it1} (±{spread})"
            );
            assert!(r.relative_residual <= 1e-8 * (1.0 + 1e-3));
        }
    }
    // Per iteration on each of two devices: the x, r update (one read), then the direction,
    // its gather and the two halves of the product (two reads); the last iteration stops after
    // its x, r update.
    let a = poisson_2d_fd::<f32>(24);
    let b = rhs(&a);
    let o32 = SolveOptions {
        variant: Variant::Classical,
        ..cg(Precond::None, 1e-5)
    };
    let sol = solve_dist(&devices(2).unwrap(), &a, &b, None, &o32).unwrap();
    let r = &sol.report;
    assert!(r.converged && r.restarts == 0, "{}", r.reason_detail);
    let n = r.iterations as u64;
    assert_eq!(r.loop_counts.dispatches, 5 * n - 4);
    assert_eq!(r.loop_counts.readbacks, 3 * n - 2);
    assert_eq!(r.loop_counts.reductions, 2 * n - 1);
}

#[test]
fn profiling_gives_every_device_its_kernel_times() {
    let Some(devs) = devices(2) else { return };
    if !devs[0].has_timestamps() {
        eprintln!("the test adapter has no timestamps: nothing to profile here");
        return;
    }
    let a = poisson_2d_fd::<f32>(16);
    let b = rhs(&a);
    let config = DistConfig {
        partition: None,
        tuning: Tuning {
            profile: true,
            ..Tuning::default()
        },
    };
    let sol = solve_dist_with(
        &devs,
        &a,
        &b,
        None,
        &cg(Precond::None, 1e-5),
        &config,
        &mut (),
    )
    .unwrap();
    let r = &sol.report;
    assert!(r.converged && r.restarts == 0, "{}", r.reason_detail);
    for (i, d) in r.devices.as_ref().unwrap().devices.iter().enumerate() {
        let calls = |name: &str| {
            d.kernel_times
                .iter()
                .find(|k| k.name == name)
                .map_or(0, |k| k.calls)
        };
        // One update and gather per iteration; the product's two halves once more (the
        // restart's first product).
        assert_eq!(calls("dist_update_cg") as usize, r.iterations, "device {i}");
        assert_eq!(calls("dist_gather") as usize, r.iterations, "device {i}");
        assert_eq!(
            calls("dist_spmv_dot") as usize,
            2 * (r.iterations + 1),
            "device {i}"
        );
        assert!(d.kernel_times.iter().all(|k| k.seconds >= 0.0));
    }
}

/// GMRES's basis and CA-GMRES's pool over several storage bindings on every device
/// (`lib/dist_pool.wgsl`'s generated variant, forced by a small binding limit) give the
/// iterations and the x of one binding, bit for bit.
#[test]
fn a_basis_over_several_bindings_per_device_gives_the_results_of_one() {
    use krylov_wgpu::matrix::generators::convection_diffusion_2d;
    use krylov_wgpu::solvers::{Basis, Tsqr};
    let Some(devs) = devices(2) else { return };
    let a = convection_diffusion_2d::<f32>(30, 5.0);
    let b = rhs(&a);
    // About 450 rows per device: 7 f32 vectors per binding, so GMRES(20)'s basis takes three
    // and CA-GMRES(4, 20)'s pool of 24 vectors four.
    let limit = 7 * 460 * 4;
    let cases = [
        (
            SolveOptions {
                method: Method::Gmres,
                restart: 20,
                ..cg(Precond::Jacobi, 1e-5)
            },
            "GMRES(20) basis",
        ),
        (
            SolveOptions {
                method: Method::CaGmres,
                s_step: 4,
                restart: 20,
                basis: Basis::Newton,
                tsqr: Tsqr::CholQr2,
                ..cg(Precond::Jacobi, 1e-5)
            },
            "CA-GMRES(4, 20) pool",
        ),
    ];
    for (opts, what) in cases {
        let whole = solve_dist(&devs, &a, &b, None, &opts).unwrap();
        let config = DistConfig {
            partition: None,
            tuning: Tuning {
                max_binding_bytes: Some(limit),
                ..Tuning::default()
            },
        };
        let parts = solve_dist_with(&devs, &a, &b, None, &opts, &config, &mut ()).unwrap();
        assert!(
            whole.report.converged,
            "{what}: {}",
            whole.report.reason_detail
        );
        let note = |r: &krylov_wgpu::solvers::SolveReport| {
            r.notes
                .iter()
                .any(|n| n.contains(what) && n.contains("held in up to"))
        };
        assert!(note(&parts.report), "{what}: {:?}", parts.report.notes);
        assert!(!note(&whole.report), "{what}");
        assert_eq!(parts.report.iterations, whole.report.iterations, "{what}");
        assert_eq!(parts.x, whole.x, "{what}: the same arithmetic, bit for bit");
    }
}
