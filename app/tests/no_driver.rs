//! krylov-studio on a machine without a Vulkan driver (its own process: it changes the
//! environment): the app starts, says why it solves on the CPU reference, and solves there.
//!
//! No `.wgpu()` on the harness: nothing is rendered, and the worker opens its own device.

mod common;
use common::{enter_and_click, solve, wait_idle};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use krylov_studio::{StartupArgs, StudioApp};
use krylov_wgpu::gpu::DeviceKind;

#[test]
fn without_a_vulkan_driver_the_app_solves_on_the_cpu_and_says_why() {
    // Hide every Vulkan driver (an empty folder of ICD files) and drop the CI overrides that
    // would make auto take a software adapter or select one by name.
    let empty = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-vulkan-icds");
    std::fs::create_dir_all(&empty).unwrap();
    // SAFETY: the only test in this process, before any thread is started.
    unsafe {
        std::env::set_var("VK_DRIVER_FILES", &empty);
        std::env::set_var("VK_ICD_FILENAMES", &empty);
        std::env::remove_var("KRYLOV_REQUIRE_GPU");
        std::env::remove_var("KRYLOV_ADAPTER");
    }

    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(|cc| StudioApp::new(&cc.egui_ctx, StartupArgs::default()));
    wait_idle(&mut h, "the device");
    let d = h.state().device().active().expect("a device").clone();
    assert_eq!(d.info.kind, DeviceKind::Cpu, "{d:?}");
    assert!(d.adapter.is_none());
    assert!(!d.reason.is_empty());
    assert!(d.reason.contains("CPU reference"), "{}", d.reason);
    assert!(
        h.state().adapters().is_empty(),
        "{:?}",
        h.state().adapters()
    );
    assert!(h.query_by_label("Device: CPU reference").is_some());
    assert!(
        h.query_by_label(&format!("Why: {}", d.reason)).is_some(),
        "the top bar shows the reason"
    );

    enter_and_click(&mut h, "Spec", "poisson2d:16", "Generate");
    solve(&mut h);
    let runs = h.state().runs();
    assert_eq!(runs.len(), 2, "classical and pipelined");
    for run in runs {
        let rep = run.report().expect("a report");
        assert!(rep.converged, "{}", rep.reason_detail);
        assert_eq!(rep.device.kind, DeviceKind::Cpu);
        assert_eq!(rep.device_reason, d.reason);
    }
}
