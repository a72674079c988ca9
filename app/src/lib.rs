//! krylov-studio: the desktop front end of krylov-wgpu.
//!
//! Load a Matrix Market file (dialog, drag-and-drop, path field or command line) or generate
//! one of the library's problems, solve it on the GPU off the UI thread, and watch the residual
//! converge live — classical and pipelined variants side by side with the library's exact
//! kernel-launch and host-transfer counts.
//!
//! The binary is `krylov-studio`; this library holds the app so the headless UI tests
//! (`tests/`, egui_kittest) drive the very same widgets.

pub mod app;
pub mod args;
pub mod problem;
pub mod worker;

pub use app::{DeviceState, RunMode, RunView, StartupArgs, StudioApp};

/// The window title.
pub const TITLE: &str = "krylov-studio";
