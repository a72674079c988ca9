//! Headless UI tests of krylov-studio: egui_kittest drives the real widgets by their labels,
//! renders with egui-wgpu on the test adapter (lavapipe in CI) and compares snapshots.
//!
//! Run: `KRYLOV_REQUIRE_GPU=1 VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
//! cargo test -p krylov-studio`; refresh the images with `UPDATE_SNAPSHOTS=1`. The app starts
//! with `--device gpu` (any adapter, lavapipe included), so the snapshots show the same device
//! with or without CI's variables.
//!
//! This file: the harness, the helpers and the CG runs; `gmres.rs`: GMRES's three variants,
//! CA-GMRES from the command line, fused, p1 and workgroup GMRES; `panels.rs`: files, the device and
//! sample menus, the solver and predict panels.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod cg_fused;
#[path = "../common/mod.rs"]
mod common;
mod gmres;
mod panels;
use common::{TIMEOUT, enter_and_click, harness_with, solve, wait_idle};

use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable, by};
use egui_kittest::{Harness, SnapshotOptions};
use krylov_studio::device::adapter_label;
use krylov_studio::{DeviceSelection, RunKind, StartupArgs, StudioApp};
use krylov_wgpu::gpu::DeviceKind;
use krylov_wgpu::solvers::{Method, Precond, Side, StopReason, Trisolve, Tsqr};

/// The app on any adapter, lavapipe included (auto would take the CPU reference there, unless
/// KRYLOV_REQUIRE_GPU=1): the same device whether or not CI's variables are set. Returns once
/// the device is open.
fn harness() -> Harness<'static, StudioApp> {
    harness_with(StartupArgs {
        device: DeviceSelection::AnyGpu,
        ..Default::default()
    })
}

/// Snapshot tolerance for a software rasteriser: a slightly looser per-pixel colour threshold
/// than the default (anti-aliased edges), and a few pixels allowed to differ.
fn snapshot_options() -> SnapshotOptions {
    SnapshotOptions::new().threshold(1.0).max_failed_pixels(64)
}

/// Auto and "any GPU" must get a GPU when KRYLOV_REQUIRE_GPU=1 (auto then admits lavapipe);
/// the top bar names the device and the reason.
fn check_device(h: &Harness<'_, StudioApp>) {
    let d = h.state().device().active().expect("a device is open");
    assert!(!d.reason.is_empty());
    let wants_gpu = matches!(
        h.state().device_selection(),
        DeviceSelection::Auto | DeviceSelection::AnyGpu
    );
    if !d.info.is_gpu() && wants_gpu {
        assert!(
            !krylov_wgpu::gpu::gpu_required(),
            "KRYLOV_REQUIRE_GPU=1 but the app solves on the CPU: {}",
            d.reason
        );
    }
    // The top bar names the device and says why.
    let shown = if d.info.is_gpu() {
        format!("Device: {}", d.info)
    } else {
        "Device: CPU reference".to_string()
    };
    assert!(h.query_by_label(&shown).is_some(), "`{shown}` not shown");
    assert!(h.query_by_label(&format!("Why: {}", d.reason)).is_some());
}

/// The texts to the right of a row label of a grid, left to right, with their rects.
fn row(h: &Harness<'_, StudioApp>, name: &str) -> Vec<(String, egui::Rect)> {
    let label = h.get_by_label(name);
    let r = label.rect();
    let mut cells: Vec<(String, egui::Rect)> = h
        .root()
        .children_recursive()
        .filter(|n| n.accesskit_node().role() == Role::Label)
        .filter_map(|n| {
            let a = n.accesskit_node();
            let text = a.label().or_else(|| a.value())?;
            let b = a.bounding_box()?;
            let ppp = h.ctx.pixels_per_point() as f64;
            let nr = egui::Rect::from_min_max(
                egui::pos2((b.x0 / ppp) as f32, (b.y0 / ppp) as f32),
                egui::pos2((b.x1 / ppp) as f32, (b.y1 / ppp) as f32),
            );
            (nr.left() > r.right() && nr.center().y > r.top() && nr.center().y < r.bottom())
                .then_some((text, nr))
        })
        .collect();
    cells.sort_by(|a, b| a.1.left().total_cmp(&b.1.left()));
    cells
}

fn row_texts(h: &Harness<'_, StudioApp>, name: &str) -> Vec<String> {
    row(h, name).into_iter().map(|(t, _)| t).collect()
}

/// Timings differ from run to run: masks them (fixed-size boxes, as the texts' widths vary),
/// clipped to the counters' area: rows scrolled under the export bar are not drawn.
fn mask_timings(h: &mut Harness<'_, StudioApp>) {
    // The export bar's top: its label less the bar's margin (2) and its leading space (2).
    let bottom = h.get_by_label("Export path").rect().top() - 4.0;
    let shown = egui::Rect::everything_above(bottom);
    for name in ["µs / iteration", "solve time"] {
        for (_, rect) in row(h, name) {
            let mask = egui::Rect::from_min_size(
                rect.left_top() - egui::vec2(1.0, 1.0),
                egui::vec2(160.0, rect.height() + 2.0),
            )
            .intersect(shown);
            if mask.is_positive() {
                h.mask(mask);
            }
        }
    }
}

fn generate(h: &mut Harness<'_, StudioApp>, spec: &str) {
    enter_and_click(h, "Spec", spec, "Generate");
    assert_eq!(h.state().error(), None);
}

fn generate_err(h: &mut Harness<'_, StudioApp>, spec: &str, expect: &str) {
    enter_and_click(h, "Spec", spec, "Generate");
    let error = h.state().error().expect("an error is shown");
    assert!(error.contains(expect), "{error}");
    assert!(h.query_by_label_contains(expect).is_some());
}

/// Picks `entry` in the combo box labelled `combo` (scrolled into view first: the Solver
/// panel's lower rows lie below the window).
fn choose(h: &mut Harness<'_, StudioApp>, combo: &str, entry: &str) {
    h.get_by_label(combo).scroll_to_me();
    h.run();
    h.get_by_label(combo).click();
    h.run();
    h.get_by_label(entry).click();
    // A load or a device switch starts (a spinner keeps repainting): one frame, not `run`.
    h.step();
}

/// Solves with the pipelined variant and returns its report.
fn solve_pipelined(h: &mut Harness<'_, StudioApp>) -> krylov_wgpu::solvers::SolveReport {
    // The radio button (a results table may have a "pipelined" column too).
    h.get(by().role(Role::RadioButton).label("pipelined"))
        .click();
    h.run();
    solve(h);
    let runs = h.state().runs();
    assert_eq!(runs.len(), 1);
    let rep = runs[0].report().expect("a report").clone();
    assert!(rep.converged, "{}", rep.reason_detail);
    rep
}

#[test]
fn pipelined_vs_classical_cg_counts_and_convergence() {
    let mut h = harness();
    check_device(&h);

    generate(&mut h, "poisson2d:32");
    let facts = h.state().problem().expect("matrix loaded").facts.clone();
    assert_eq!((facts.nrows, facts.nnz), (1024, 5 * 1024 - 4 * 32));
    assert_eq!(row_texts(&h, "nnz"), vec!["4992".to_string()]);
    assert_eq!(row_texts(&h, "symmetric"), vec!["yes".to_string()]);
    h.snapshot_options("poisson2d_32_loaded", &snapshot_options());

    h.get_by_label("both, side by side").click();
    h.run();
    h.get_by_label("Solve").click();
    h.step();
    // (The CPU reference may finish this small system within the frame.)
    assert!(
        h.state().is_busy() || h.state().device().gpu().is_none(),
        "the solve runs off the UI thread"
    );
    wait_idle(&mut h, "the classical and pipelined solves");
    assert_eq!(h.state().error(), None);

    let runs = h.state().runs();
    assert_eq!(runs.len(), 2);
    let report = |k: RunKind| {
        runs.iter()
            .find(|r| r.kind == k)
            .and_then(|r| r.report())
            .unwrap_or_else(|| panic!("{k} run has no report"))
            .clone()
    };
    let (classical, pipelined) = (report(RunKind::Classical), report(RunKind::Pipelined));
    for rep in [&classical, &pipelined] {
        assert!(
            rep.converged,
            "{} did not converge: {}",
            rep.variant, rep.reason_detail
        );
        assert_eq!(rep.reason, StopReason::Converged);
        assert!(rep.relative_residual <= 1e-6);
        if !krylov_wgpu::gpu::gpu_required() && !rep.device.is_gpu() {
            return; // no GPU here: the counts below are GPU counts
        }
        assert!(rep.device.is_gpu(), "{}: {}", rep.device, rep.device_reason);
        assert!(!rep.device_reason.is_empty());
    }
    // The library's exact counts: pipelined CG launches 2 kernels per iteration, classical ≥ 6.
    assert_eq!(pipelined.dispatches_per_iteration, 2.0);
    assert!(classical.dispatches_per_iteration >= 6.0);

    // The counter panel shows exactly those numbers, classical column first.
    assert_eq!(
        row_texts(&h, "dispatches / iteration"),
        vec![
            format!("{:.2}", classical.dispatches_per_iteration),
            "2.00".to_string()
        ]
    );
    assert_eq!(
        row_texts(&h, "host transfers / iteration"),
        vec![
            format!("{:.3}", classical.transfers_per_iteration),
            format!("{:.3}", pipelined.transfers_per_iteration)
        ]
    );
    assert_eq!(
        row_texts(&h, "total dispatches"),
        vec![
            classical.counts.dispatches.to_string(),
            pipelined.counts.dispatches.to_string()
        ]
    );
    assert_eq!(
        row_texts(&h, "iterations"),
        vec![
            classical.iterations.to_string(),
            pipelined.iterations.to_string()
        ]
    );
    assert_eq!(row_texts(&h, "converged"), vec!["yes", "yes"]);
    let headline = format!(
        "pipelined cg: 2.00 launches per iteration vs classical {:.2}",
        classical.dispatches_per_iteration
    );
    assert!(
        h.query_by_label_contains(&headline).is_some(),
        "headline `{headline}` missing"
    );
    // One plotted line per variant, each with the whole history.
    for run in h.state().runs() {
        let rep = run.report().unwrap();
        assert_eq!(rep.history.len(), rep.iterations + 1);
    }

    mask_timings(&mut h);
    h.snapshot_options("pipelined_vs_classical_cg", &snapshot_options());

    // Keep: the history CSV and the solution through the export path field (the save dialog
    // needs a desktop portal), the JSON report to the clipboard.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("krylov-studio-export");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    h.get_by_label("Export path")
        .set_text_value_accesskit(dir.to_str().unwrap());
    h.run();
    h.get_by_label("Save history CSV").click();
    h.run();
    let csv = std::fs::read_to_string(dir.join("poisson2d_32-history.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        1 + classical.history.len() + pipelined.history.len()
    );
    assert!(csv.starts_with("variant,iteration,residual,relative_residual\nclassical,0,"));
    assert!(csv.contains("\npipelined,0,"));
    h.get_by_label("Save solution .mtx").click();
    h.run();
    let x: Vec<f64> =
        krylov_wgpu::matrix::market::read_vector(dir.join("poisson2d_32-pipelined-x.mtx")).unwrap();
    assert_eq!(x.len(), 1024);
    assert!(x.iter().all(|v| (v - 1.0).abs() < 1e-2), "b = A·1: x ≈ 1");
    h.get_by_label("classical run").click();
    h.run();
    h.get_by_label("Copy JSON report").click();
    h.step();
    let copied = h
        .output()
        .platform_output
        .commands
        .iter()
        .find_map(|c| match c {
            egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
        .expect("the JSON report was copied");
    assert_eq!(copied, classical.to_json());
}

#[test]
fn stop_cancels_a_running_solve() {
    let mut h = harness();
    check_device(&h);
    // The CPU reference reports no progress and cannot be stopped: this needs a GPU (which
    // check_device requires under KRYLOV_REQUIRE_GPU=1).
    if h.state().device().gpu().is_none() {
        return;
    }
    generate(&mut h, "poisson2d:64");
    // rtol = atol = 0: the solve runs until the iteration limit.
    h.get_by_label("rtol").set_text_value_accesskit("0");
    h.get_by_label("pipelined").click();
    h.run();

    // A device limit first: the residual history of 10^8 iterations does not fit one
    // storage binding on lavapipe (128 MiB); the library's message is shown.
    h.get_by_label("Max iterations")
        .set_value_accesskit(100_000_000.0);
    h.run();
    h.get_by_label("Solve").click();
    wait_idle(&mut h, "the solve over the device limit");
    if let Some(s) = h.state().device().gpu()
        && s.max_storage_buffer_binding_size < 800_000_000
    {
        let error = h.state().error().expect("a device-limit error is shown");
        assert!(error.contains("max_storage_buffer_binding_size"), "{error}");
        assert!(h.query_by_label(&format!("Error: {error}")).is_some());
    }

    // 10^6 iterations fit: far more than this test waits for.
    h.get_by_label("Max iterations")
        .set_value_accesskit(1_000_000.0);
    h.run();
    h.get_by_label("Solve").click();
    // Wait for residuals to arrive, then stop.
    let deadline = Instant::now() + TIMEOUT;
    while h.state().runs().first().is_none_or(|r| r.live.len() < 3) {
        h.step();
        assert!(Instant::now() < deadline, "no progress arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
    h.get_by_label("Stop").click();
    wait_idle(&mut h, "the cancelled solve");
    let run = &h.state().runs()[0];
    let rep = run.report().expect("a cancelled solve still reports");
    assert_eq!(rep.reason, StopReason::Cancelled);
    assert!(!rep.converged);
    assert_eq!(row_texts(&h, "converged"), vec!["no: cancelled"]);
}
