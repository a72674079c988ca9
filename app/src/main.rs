//! `krylov-studio`: the desktop app of krylov-wgpu (eframe with the wgpu renderer).

use std::process::ExitCode;

use krylov_studio::args::{Parsed, USAGE, parse};
use krylov_studio::{StudioApp, TITLE};
use krylov_wgpu::matrix::samples;

/// The window icon (64×64 RGBA), from the repository's `assets/`.
const ICON_PNG: &[u8] = include_bytes!("../../assets/icon.png");

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(Parsed::Run(a)) => a,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::SampleHelp) => {
            print!("{}", samples::help());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut viewport = egui::ViewportBuilder::default()
        .with_title(TITLE)
        .with_app_id(TITLE)
        .with_inner_size([1280.0, 800.0])
        .with_min_inner_size([900.0, 600.0])
        .with_drag_and_drop(true);
    match eframe::icon_data::from_png_bytes(ICON_PNG) {
        Ok(icon) => viewport = viewport.with_icon(icon),
        Err(e) => eprintln!("warning: the window icon could not be decoded: {e}"),
    }
    let options = eframe::NativeOptions {
        viewport,
        renderer: eframe::Renderer::Wgpu,
        ..Default::default()
    };
    let result = eframe::run_native(
        TITLE,
        options,
        Box::new(move |cc| Ok(Box::new(StudioApp::new(&cc.egui_ctx, args)))),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: could not open the window: {e}");
            ExitCode::from(1)
        }
    }
}
