//! Headless test of krylov-studio's Devices field: CG split over two logical devices on the
//! test adapter (lavapipe in CI), the table of each device's block beside the counters, and a
//! bad list refused on Solve. With KRYLOV_REQUIRE_GPU=1 a missing adapter fails the test.

mod common;
use common::{harness_with, wait_idle};

use egui_kittest::kittest::Queryable;
use krylov_studio::{DeviceSelection, RunKind, StartupArgs};

/// The startup arguments of `line`, `None` where no adapter exists (with
/// KRYLOV_REQUIRE_GPU=1 that fails the test).
fn startup(line: &str) -> Option<StartupArgs> {
    if krylov_wgpu::gpu::list_adapters_for(krylov_wgpu::wgpu::Backends::PRIMARY).is_empty() {
        assert!(
            !krylov_wgpu::gpu::gpu_required(),
            "KRYLOV_REQUIRE_GPU=1 but no adapter"
        );
        return None;
    }
    let Ok(krylov_studio::args::Parsed::Run(args)) =
        krylov_studio::args::parse(line.split_whitespace().map(String::from))
    else {
        panic!("`{line}` does not parse")
    };
    Some(args)
}

#[test]
fn several_devices_split_the_rows_and_the_table_shows_each_block() {
    // Both variants of CG with "Devices" 0,0: each runs over two logical devices on adapter 0.
    let Some(args) = startup("--generate poisson2d:20 --run-both --devices 0,0 --precision f32")
    else {
        return;
    };
    let mut h = harness_with(StartupArgs {
        device: DeviceSelection::AnyGpu,
        ..args
    });
    wait_idle(&mut h, "the solves");
    assert_eq!(h.state().error(), None);
    let runs = h.state().runs();
    assert_eq!(runs.len(), 2);
    let pipelined = runs.iter().find(|r| r.kind == RunKind::Pipelined).unwrap();
    let rep = pipelined.report().expect("a report").clone();
    assert!(rep.converged, "{}", rep.reason_detail);
    let d = rep
        .devices
        .as_ref()
        .expect("the pipelined run ran on several devices");
    assert_eq!(d.devices.len(), 2);
    assert_eq!(d.devices.iter().map(|p| p.rows).sum::<usize>(), 400);
    assert_eq!(d.exchange_values_per_iteration, 40);
    let classical = runs.iter().find(|r| r.kind == RunKind::Classical).unwrap();
    let rep = classical.report().expect("a report");
    assert!(rep.converged, "{}", rep.reason_detail);
    assert_eq!(rep.devices.as_ref().map(|d| d.devices.len()), Some(2));
    // The table beside the counters: a row per device, the exchange line.
    h.get_all_by_label("device 1")
        .next()
        .unwrap()
        .scroll_to_me();
    h.run();
    assert_eq!(
        h.query_all_by_label("device 0").count(),
        2,
        "a table per run"
    );
    assert_eq!(
        h.query_all_by_label_contains("exchange: 40 values").count(),
        2
    );
    // A list that is neither a count nor indices is an error on Solve, not a panic.
    h.get_by_label("Devices").set_text_value_accesskit("two");
    h.run();
    h.get_by_label("Solve").click();
    h.run();
    assert!(h.state().error().is_some_and(|e| e.contains("Devices")));
}

#[test]
fn bicg_with_devices_puts_its_two_recurrences_on_two_devices() {
    let line = "--generate convdiff3d:8:circular --method bicg --precond ilu0 --devices 0,0 \
                --precision f32 --run";
    let Some(args) = startup(line) else { return };
    let mut h = harness_with(StartupArgs {
        device: DeviceSelection::AnyGpu,
        ..args
    });
    wait_idle(&mut h, "the solve");
    assert_eq!(h.state().error(), None);
    let runs = h.state().runs();
    assert_eq!(runs.len(), 1);
    let rep = runs[0].report().expect("a report");
    assert!(rep.converged, "{}", rep.reason_detail);
    let d = rep.devices.as_ref().expect("BiCG ran on two devices");
    // Both devices hold all 512 rows; p~ and r~ cross to the first each iteration.
    assert_eq!(d.devices.len(), 2);
    assert!(d.devices.iter().all(|p| p.rows == 512));
    assert_eq!(d.exchange_values_per_iteration, 1024);
    assert!(
        rep.notes[0].contains("BiCG on two devices"),
        "{:?}",
        rep.notes
    );
}
