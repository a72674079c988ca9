//! Helpers shared by the app's test files.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use krylov_studio::{DeviceState, StudioApp};

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
