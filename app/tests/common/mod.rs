//! Helpers shared by the app's test files.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use krylov_studio::{DeviceState, StartupArgs, StudioApp};

/// Longest wait for a load or a solve on a software rasteriser.
pub const TIMEOUT: Duration = Duration::from_secs(240);

/// Steps frames until the app is idle (device opened, no load or solve running).
pub fn wait_idle(h: &mut Harness<'_, StudioApp>, what: &str) {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        h.step();
        let app = h.state();
        if !app.is_busy() && !matches!(app.device(), DeviceState::Opening) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {TIMEOUT:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let the layout settle (grids size their columns on their first frame).
    h.run();
}

/// Types `text` into the field labelled `field`, clicks `button` and waits for what it
/// started (a load from the path field, a generator spec).
pub fn enter_and_click(h: &mut Harness<'_, StudioApp>, field: &str, text: &str, button: &str) {
    h.get_by_label(field).set_text_value_accesskit(text);
    h.run();
    h.get_by_label(button).click();
    wait_idle(h, text);
}

/// Clicks Solve, waits for the runs and checks that no error is shown.
pub fn solve(h: &mut Harness<'_, StudioApp>) {
    h.get_by_label("Solve").click();
    h.step();
    wait_idle(h, "the solve");
    assert_eq!(h.state().error(), None);
}

/// The app started with `args`, rendering on the test adapter, once its device is open.
/// Device profiles are looked up in an empty directory unless `args` names one, so a profile
/// in the user's cache never changes what the snapshots show.
pub fn harness_with(mut args: StartupArgs) -> Harness<'static, StudioApp> {
    if args.profile_dir.is_none() {
        let dir = std::env::temp_dir().join(format!("studio-no-profiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        args.profile_dir = Some(dir);
    }
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .wgpu()
        .build_eframe(move |cc| StudioApp::new(&cc.egui_ctx, args));
    wait_idle(&mut h, "the device");
    h
}
