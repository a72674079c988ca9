//! Headless UI tests of krylov-studio: egui_kittest drives the real widgets by their labels,
//! renders with egui-wgpu on the test adapter (lavapipe in CI) and compares snapshots.
//!
//! Run: `KRYLOV_REQUIRE_GPU=1 VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
//! cargo test -p krylov-studio`; refresh the images with `UPDATE_SNAPSHOTS=1`. The app starts
//! with `--device gpu` (any adapter, lavapipe included), so the snapshots show the same device
//! with or without CI's variables.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
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

#[test]
fn gmres_runs_classical_pipelined_and_ca_gmres_with_their_reductions_and_syncs() {
    let mut h = harness();
    check_device(&h);
    generate(&mut h, "poisson2d:16");
    // CA-GMRES is offered for GMRES only.
    let ca_radio = || by().role(Role::RadioButton).label("all three");
    assert!(h.query(ca_radio()).is_none(), "no CA-GMRES run for CG");
    choose(&mut h, "Method", "gmres");
    h.run();
    h.get(ca_radio()).click();
    h.run();
    // Its controls: s, the TSQR (m is the restart, shared with GMRES).
    h.get_by_label("Restart m").set_value_accesskit(20.0);
    h.get_by_label("CA block s").set_value_accesskit(4.0);
    h.run();
    choose(&mut h, "TSQR", "cholqr");
    h.run();
    let opts = h.state().next_options().unwrap();
    assert_eq!(
        (opts.method, opts.restart, opts.s_step, opts.tsqr),
        (Method::Gmres, 20, 4, Tsqr::CholQr)
    );
    // CA-GMRES preconditions on the right: the box stays enabled.
    assert!(
        !h.get_by_label("Preconditioner")
            .accesskit_node()
            .is_disabled()
    );

    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(
        runs.iter().map(|r| r.kind).collect::<Vec<_>>(),
        vec![RunKind::Classical, RunKind::Pipelined, RunKind::Ca]
    );
    let reports: Vec<_> = runs
        .iter()
        .map(|r| r.report().expect("every run reports").clone())
        .collect();
    for rep in &reports {
        assert!(rep.converged, "{}", rep.reason_detail);
        assert!(rep.relative_residual <= 1e-6);
        assert!(rep.cycles.is_some() && rep.syncs_per_cycle.is_some());
    }
    assert_eq!(reports[0].method, Method::Gmres);
    assert_eq!(reports[2].method, Method::CaGmres);
    let ca = reports[2].cagmres.as_ref().expect("CA-GMRES's own report");
    assert_eq!((ca.options.s, ca.options.m), (4, 20));
    assert_eq!(ca.options.tsqr, Tsqr::CholQr);
    let gpu = reports[0].device.is_gpu();
    if gpu {
        assert!(reports.iter().all(|r| r.device.is_gpu()));
        // Fewer global reductions per iteration than either GMRES variant.
        assert!(reports[2].reductions_per_iteration < reports[0].reductions_per_iteration);
        assert!(reports[2].reductions_per_iteration < reports[1].reductions_per_iteration);
    }

    // The counters show every run's reductions and syncs, column by column.
    assert_eq!(
        row_texts(&h, "global reductions / iteration"),
        reports
            .iter()
            .map(|r| format!("{:.2}", r.reductions_per_iteration))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        row_texts(&h, "host syncs / iteration"),
        reports
            .iter()
            .map(|r| format!("{:.3}", r.syncs_per_iteration))
            .collect::<Vec<_>>()
    );
    let per_cycle: Vec<String> = reports
        .iter()
        .map(|r| {
            let c = r.cycles.unwrap();
            let s = if c == 1 { "" } else { "s" };
            format!("{:.2} ({c} cycle{s})", r.syncs_per_cycle.unwrap())
        })
        .collect();
    assert_eq!(row_texts(&h, "host syncs / restart cycle"), per_cycle);
    let headline = format!(
        "CA-GMRES: {:.2} global reductions and {:.3} host syncs per iteration vs classical \
         {:.2} and {:.3}, pipelined {:.2} and {:.3}",
        reports[2].reductions_per_iteration,
        reports[2].syncs_per_iteration,
        reports[0].reductions_per_iteration,
        reports[0].syncs_per_iteration,
        reports[1].reductions_per_iteration,
        reports[1].syncs_per_iteration,
    );
    assert!(
        h.query_by_label(&headline).is_some(),
        "headline `{headline}` missing"
    );
    // CA-GMRES's own table: its parameters, and a full CA cycle's counts (the library's
    // formula: 1 + m/s·(2 + 1) reductions with CholQR; host syncs 1 + m/s on the CPU
    // reference, 1 on the GPU, which defers a CholQR cycle: its blocks read once with the
    // restart before them).
    assert_eq!(
        row_texts(&h, "s / m / basis / TSQR"),
        vec!["4 / 20 / newton / cholqr"]
    );
    if let (Some(r), Some(s)) = (ca.reductions_per_cycle, ca.syncs_per_cycle) {
        let syncs = if reports[2].device.kind == DeviceKind::Gpu {
            1.0
        } else {
            6.0
        };
        assert_eq!((r, s), (16.0, syncs));
        assert_eq!(
            row_texts(&h, "reductions / syncs per CA cycle"),
            vec![format!("16.00 / {syncs:.2}")]
        );
    }

    // The snapshot shows CA-GMRES's table, below the three columns.
    h.get_by_label("largest basis cond").scroll_to_me();
    h.run();
    mask_timings(&mut h);
    h.snapshot_options("gmres_all_three", &snapshot_options());

    // The history CSV names the CA-GMRES run `ca`.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("krylov-studio-export-ca");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    h.get_by_label("Export path")
        .set_text_value_accesskit(dir.to_str().unwrap());
    h.run();
    h.get_by_label("Save history CSV").click();
    h.run();
    let csv = std::fs::read_to_string(dir.join("poisson2d_16-history.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("ca,")).count(),
        reports[2].history.len()
    );

    // Back to CG: the CA-GMRES runs fall back to the classical and pipelined ones.
    choose(&mut h, "Method", "cg");
    h.run();
    assert!(h.query(ca_radio()).is_none());
    assert!(
        !h.get_by_label("Preconditioner")
            .accesskit_node()
            .is_disabled()
    );
}

#[test]
fn the_command_line_runs_ca_gmres() {
    // `--variant ca` (GMRES implied) with --run: the solve starts once the matrix is ready.
    let line = "--generate poisson2d:12 --run --variant ca --s-step 3 --restart 12 --tsqr cgs2";
    let Ok(krylov_studio::args::Parsed::Run(args)) =
        krylov_studio::args::parse(line.split_whitespace().map(String::from))
    else {
        panic!("`{line}` does not parse")
    };
    let mut h = harness_with(StartupArgs {
        device: DeviceSelection::AnyGpu,
        ..args
    });
    wait_idle(&mut h, "the CA-GMRES solve");
    assert_eq!(h.state().error(), None);
    let runs = h.state().runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].kind, RunKind::Ca);
    let rep = runs[0].report().expect("a report").clone();
    assert!(rep.converged, "{}", rep.reason_detail);
    assert_eq!(rep.method, Method::CaGmres);
    let ca = rep.cagmres.as_ref().unwrap();
    assert_eq!(
        (ca.options.s, ca.options.m, ca.options.tsqr),
        (3, 12, Tsqr::Cgs2)
    );
    assert_eq!(
        row_texts(&h, "global reductions / iteration")[0],
        format!("{:.2}", rep.reductions_per_iteration)
    );
    assert_eq!(
        row_texts(&h, "s / m / basis / TSQR"),
        vec!["3 / 12 / newton / cgs2"]
    );

    // CAQR runs on the GPU too; the counters show its own counts.
    h.get_by_label("Restart m").scroll_to_me();
    h.run();
    h.get_by_label("Restart m").set_value_accesskit(15.0);
    h.run();
    choose(&mut h, "TSQR", "caqr");
    h.run();
    solve(&mut h);
    let run = &h.state().runs()[0];
    let rep = run.report().expect("a report").clone();
    assert!(rep.converged, "{}", rep.reason_detail);
    assert!(rep.device.is_gpu());
    assert_eq!(rep.cagmres.as_ref().unwrap().options.tsqr, Tsqr::Caqr);
    assert!(rep.reductions_per_iteration > 0.0);
    assert_eq!(
        row_texts(&h, "global reductions / iteration")[0],
        format!("{:.2}", rep.reductions_per_iteration)
    );
}

#[derive(Debug)]
struct Dropped(std::path::PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn dropping_a_malformed_file_shows_the_error() {
    let mut h = harness();
    // The path is relative to the crate root (the tests' working directory), so the message
    // and the snapshot are the same on every machine.
    let path = Path::new("tests/data/malformed.mtx");
    assert!(path.exists());
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(path.to_path_buf())));
    h.step();
    wait_idle(&mut h, "the dropped file");
    let error = h.state().error().expect("an error is shown").to_string();
    assert_eq!(
        error,
        "Could not load malformed.mtx: tests/data/malformed.mtx:6: non-numeric token `four`"
    );
    assert!(h.query_by_label(&format!("Error: {error}")).is_some());
    assert!(h.state().problem().is_none());
    h.snapshot_options("malformed_drop", &snapshot_options());

    // The path field: a missing file is a message too.
    enter_and_click(&mut h, "Path", "tests/data/no-such-file.mtx", "Load");
    let error = h.state().error().expect("an error is shown");
    assert!(
        error.starts_with("Could not load no-such-file.mtx: tests/data/no-such-file.mtx"),
        "{error}"
    );
    assert!(
        h.query_by_label_contains("Could not load no-such-file.mtx")
            .is_some()
    );

    // A bad generator spec too, and the app still works afterwards.
    generate_err(&mut h, "poisson2d:0", "grid size K must be positive");
    generate(&mut h, "poisson2d:8");
    assert_eq!(h.state().problem().unwrap().facts.nrows, 64);
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
fn the_device_menu_switches_between_the_cpu_and_an_adapter() {
    let mut h = harness_with(StartupArgs::default());
    check_device(&h);
    assert_eq!(h.state().device_selection(), DeviceSelection::Auto);
    generate(&mut h, "poisson2d:16");

    // To the CPU reference: the state goes through Opening to the CPU, and the runs say so.
    choose(&mut h, "Device", "CPU reference");
    assert_eq!(h.state().device_selection(), DeviceSelection::Cpu);
    wait_idle(&mut h, "the CPU reference");
    let d = h.state().device().active().unwrap().clone();
    assert_eq!(d.info.kind, DeviceKind::Cpu);
    assert!(d.adapter.is_none());
    assert_eq!(d.reason, "CPU reference chosen in the Device menu");
    check_device(&h);
    let rep = solve_pipelined(&mut h);
    assert_eq!(rep.device.kind, DeviceKind::Cpu);
    assert_eq!(rep.device_reason, d.reason);
    assert_eq!(row_texts(&h, "device"), vec!["CPU (reference)"]);
    assert_eq!(row_texts(&h, "total dispatches"), vec!["CPU"]);
    mask_timings(&mut h);
    h.snapshot_options("device_cpu_reference", &snapshot_options());

    // Back to the software adapter by hand (lavapipe in CI).
    let Some(lavapipe) = h
        .state()
        .adapters()
        .iter()
        .find(|a| a.software && a.backend == "Vulkan")
        .cloned()
    else {
        assert!(
            !krylov_wgpu::gpu::gpu_required(),
            "KRYLOV_REQUIRE_GPU=1 but no software Vulkan adapter is listed: {:?}",
            h.state().adapters()
        );
        return;
    };
    choose(&mut h, "Device", &adapter_label(&lavapipe));
    wait_idle(&mut h, "the adapter chosen");
    assert_eq!(h.state().error(), None);
    assert_eq!(
        h.state().device_selection(),
        DeviceSelection::Adapter(lavapipe.index)
    );
    let d = h.state().device().active().unwrap().clone();
    assert!(d.info.is_gpu() && d.info.software);
    assert_eq!(d.adapter.as_ref().map(|a| a.index), Some(lavapipe.index));
    check_device(&h);
    let rep = solve_pipelined(&mut h);
    assert_eq!(rep.device.kind, DeviceKind::Gpu);
    assert!(rep.device.software);
    assert_eq!(rep.device.name, lavapipe.name);
    assert!(rep.device_reason.contains("chosen in the Device menu"));
    assert_eq!(rep.dispatches_per_iteration, 2.0);
}

#[test]
fn the_sample_menu_opens_an_embedded_matrix() {
    let mut h = harness();
    choose(&mut h, "Sample", "bcsstk01");
    wait_idle(&mut h, "bcsstk01");
    assert_eq!(h.state().error(), None);
    let p = h.state().problem().expect("the sample is loaded");
    assert_eq!(p.source.name(), "bcsstk01");
    assert_eq!((p.facts.nrows, p.facts.symmetric), (48, true));
    assert_eq!(row_texts(&h, "n"), vec!["48".to_string()]);
    // CG (the default method) on the SPD sample. Its condition number is ~1e6: allow the
    // iterations (n = 48, so CG needs a few passes in floating point).
    let rep = solve_pipelined(&mut h);
    assert_eq!(rep.method, Method::Cg);
    assert!(rep.relative_residual <= 1e-5, "{}", rep.relative_residual);

    // A nonsymmetric sample switches CG to the method it suggests.
    choose(&mut h, "Sample", "pores_1");
    wait_idle(&mut h, "pores_1");
    assert!(
        h.query_by_label("the matrix is not symmetric: switched the method to gmres")
            .is_some()
    );
}

#[test]
fn the_solver_panel_sets_the_side_and_the_triangular_solve_and_the_table_shows_their_cost() {
    let mut h = harness();
    generate(&mut h, "poisson2d:16");
    choose(&mut h, "Method", "bicgstab");
    choose(&mut h, "Preconditioner", "ilu0");
    choose(&mut h, "Triangular solve", "sweeps");
    h.get_by_label("K").set_value_accesskit(4.0);
    h.run();
    let opts = h.state().next_options().unwrap();
    assert_eq!(
        (opts.precond, opts.side, opts.trisolve),
        (Precond::Ilu0, Side::Right, Trisolve::Sweeps(4))
    );
    let rep = solve_pipelined(&mut h);
    assert_eq!(rep.method, Method::Bicgstab);
    let p = rep
        .preconditioner
        .clone()
        .expect("the report describes ilu0");
    assert_eq!(p.kind, Precond::Ilu0);
    assert_eq!(p.trisolve, Some(Trisolve::Sweeps(4)));

    // The preconditioner table: kind and strategy, levels, launches per apply, factor, shift.
    assert_eq!(row_texts(&h, "kind / trisolve"), vec!["ilu0 / sweeps:4"]);
    let levels = p.levels.map_or("–".into(), |[l, u]| format!("{l} / {u}"));
    assert_eq!(row_texts(&h, "levels L / U"), vec![levels]);
    let per_apply = if rep.device.is_gpu() {
        p.dispatches_per_apply.to_string()
    } else {
        "CPU".into()
    };
    assert_eq!(row_texts(&h, "dispatches / apply"), vec![per_apply]);
    assert_eq!(
        row_texts(&h, "factor nnz / shift"),
        vec![format!("{} / 0", p.factor_nnz)]
    );
    // (The preconditioner table to the right may share the restarts row's height.)
    assert_eq!(row_texts(&h, "restarts")[0], rep.restarts.to_string());
    for note in &rep.notes {
        assert!(h.query_by_label(&format!("• {note}")).is_some(), "{note}");
    }

    // The side, and K kept while another strategy is chosen.
    choose(&mut h, "Side", "left");
    choose(&mut h, "Triangular solve", "levels");
    let opts = h.state().next_options().unwrap();
    assert_eq!((opts.side, opts.trisolve), (Side::Left, Trisolve::Levels));
    choose(&mut h, "Triangular solve", "sweeps");
    assert_eq!(
        h.state().next_options().unwrap().trisolve,
        Trisolve::Sweeps(4)
    );
}

/// A profile for the adapter `gpu` with made-up curves for every kernel of the model (the
/// matrix kernels of later formats slower).
fn synthetic_profile(gpu: &krylov_wgpu::gpu::AdapterSummary) -> krylov_wgpu::model::Profile {
    use krylov_wgpu::model::kernels::{Curve, MODELLED, curve_key, iteration_plan};
    use krylov_wgpu::model::{DeviceIdentity, Fit, MODEL_FORMATS, Profile, Sample, Sigmoid};
    use krylov_wgpu::solvers::CheckMode;
    let mut kernels = std::collections::BTreeMap::new();
    let mut constants = std::collections::BTreeMap::new();
    for (i, format) in MODEL_FORMATS.iter().enumerate() {
        for (method, variant) in MODELLED {
            let plan = iteration_plan(method, variant, CheckMode::Device, 100, 1, 4, 1).unwrap();
            for k in &plan.kernels {
                if k.curve == Curve::Finish {
                    constants.insert(curve_key(k, *format), 4e-6);
                    continue;
                }
                let nu = if k.curve == Curve::Matrix {
                    4e9 / (1.0 + i as f64)
                } else {
                    8e9
                };
                let fit = Fit {
                    curve: Sigmoid {
                        mu: 16.0,
                        sigma: 1.5,
                        nu,
                    },
                    rms_relative_error: 0.0,
                    max_relative_error: 0.0,
                    samples: vec![Sample {
                        bytes: 1e4,
                        seconds: 1e-5,
                    }],
                    outliers: Vec::new(),
                };
                kernels.insert(curve_key(k, *format), fit);
            }
        }
    }
    Profile {
        schema_version: krylov_wgpu::model::profile::SCHEMA_VERSION,
        device: DeviceIdentity {
            name: gpu.name.clone(),
            vendor: 0,
            device: 0,
            backend: gpu.backend.clone(),
            driver: gpu.driver.clone(),
            driver_info: String::new(),
        },
        created: "2026-01-01T00:00:00Z".into(),
        quick: true,
        workgroup_size: 256,
        sell_c: 32,
        max_binding_bytes: 1 << 27,
        dispatch_seconds: 10e-6,
        timestamp_overhead_seconds: 0.0,
        round_trip_seconds: 100e-6,
        kernels,
        constants,
        gather_weights: Default::default(),
    }
}

#[test]
fn the_predict_panel_ranks_formats_beside_the_measured_time() {
    let dir = std::env::temp_dir().join(format!("studio-profiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut h = harness_with(StartupArgs {
        device: DeviceSelection::AnyGpu,
        profile_dir: Some(dir.clone()),
        ..Default::default()
    });
    let gpu = h.state().device().gpu().expect("a GPU adapter").clone();
    let profile = synthetic_profile(&gpu);
    let file = krylov_wgpu::model::Profile::file_name(&profile.device);
    profile.save(&dir.join(file)).unwrap();
    generate(&mut h, "poisson2d:24");
    h.get_by_label("Predicted per iteration (performance model)");
    // Ranked: the synthetic profile makes CSR's kernels the fastest.
    assert_eq!(row_texts(&h, "1")[0], "csr, pipelined");
    let rep = solve_pipelined(&mut h);
    h.run();
    let cells = row_texts(&h, &format!("{}, pipelined", rep.format));
    assert_eq!(cells.len(), 2, "predicted and measured: {cells:?}");
    let measured: f64 = cells[1].parse().expect("a measured time");
    let expect = rep.loop_seconds / rep.iterations_recorded as f64 * 1e6;
    assert!((measured - expect).abs() <= 0.006, "{measured} vs {expect}");
}
