//! krylov-studio: the desktop front end of krylov-wgpu.
//!
//! Load a Matrix Market file (dialog, drag-and-drop, path field or command line), open one of
//! the library's sample matrices or generate one of its problems, solve it off the UI thread
//! on the device the library's rules choose (or the one picked in the Device menu), and watch the residual
//! converge live — classical and pipelined variants (and, for GMRES, CA-GMRES) side by side
//! with the library's exact kernel-launch, host-transfer, global-reduction and host-sync
//! counts.
//!
//! The binary is `krylov-studio`; this library holds the app so the headless UI tests
//! (`tests/`, egui_kittest) drive the very same widgets.

pub mod app;
pub mod args;
pub mod device;
pub mod device_panel;
pub mod problem;
pub mod sample_menu;
pub mod worker;

pub use app::{RunKind, RunMode, RunView, StartupArgs, StudioApp};
pub use device::DeviceSelection;
pub use device_panel::{ActiveDevice, DeviceState};

/// The window title.
pub const TITLE: &str = "krylov-studio";
