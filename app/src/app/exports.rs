//! Exports: the residual history as CSV, the solution as Matrix Market, the JSON report to the
//! clipboard, and the bar of the window that offers them.

use std::path::{Path, PathBuf};

use egui::Ui;
use krylov_wgpu::matrix::market::write_vector;

use super::StudioApp;
use super::run_view::relative;
use super::widgets::labelled;
use crate::problem;

impl StudioApp {
    /// The target of an export: the path field (a folder gets `default_name` appended), or a
    /// save dialog when the field is empty.
    fn export_target(&mut self, default_name: &str, ext: &str) -> Option<PathBuf> {
        let text = self.export_path.trim();
        if !text.is_empty() {
            let p = PathBuf::from(text);
            return Some(if p.is_dir() { p.join(default_name) } else { p });
        }
        let picked = rfd::FileDialog::new()
            .set_file_name(default_name)
            .add_filter(ext, &[ext])
            .save_file();
        if picked.is_none() {
            self.notice = Some(
                "no file chosen (the file dialog needs an xdg-desktop-portal): type a path in \
                 the export path field"
                    .into(),
            );
        }
        picked
    }

    fn history_csv(&self) -> String {
        // The `variant` column holds the run kind: classical, pipelined or ca.
        let mut csv = String::from("variant,iteration,residual,relative_residual\n");
        for run in &self.runs {
            if let Some(rep) = run.report() {
                for (k, r) in rep.history.iter().enumerate() {
                    let rel = relative(*r, rep.b_norm);
                    csv.push_str(&format!("{},{k},{r:e},{rel:e}\n", run.kind.as_str()));
                }
            }
        }
        csv
    }

    fn export_history(&mut self) {
        if self.runs.iter().all(|r| r.report().is_none()) {
            self.error = Some("nothing to export yet: run a solve first".into());
            return;
        }
        let name = format!("{}-history.csv", self.file_stem());
        if let Some(path) = self.export_target(&name, "csv") {
            match std::fs::write(&path, self.history_csv()) {
                Ok(()) => self.done_export(&path, "residual history"),
                Err(e) => self.error = Some(format!("could not write {}: {e}", path.display())),
            }
        }
    }

    fn export_solution(&mut self) {
        let Some(run) = self.runs.get(self.export_run) else {
            self.error = Some("nothing to export yet: run a solve first".into());
            return;
        };
        let Some(Ok(outcome)) = &run.outcome else {
            self.error = Some(format!("the {} run has no solution", run.kind));
            return;
        };
        let x = outcome.x.clone();
        let name = format!("{}-{}-x.mtx", self.file_stem(), run.kind.as_str());
        if let Some(path) = self.export_target(&name, "mtx") {
            match write_vector(&path, &x) {
                Ok(()) => self.done_export(&path, "solution"),
                Err(e) => self.error = Some(problem::one_line(&e.to_string())),
            }
        }
    }

    fn copy_report(&mut self, ctx: &egui::Context) {
        let run = self.runs.get(self.export_run);
        match run.and_then(|r| Some((r.kind, r.report()?))) {
            Some((kind, rep)) => {
                ctx.copy_text(rep.to_json());
                self.notice = Some(format!("copied the {kind} report (JSON)"));
            }
            None => self.error = Some("no report to copy yet: run a solve first".into()),
        }
    }

    fn done_export(&mut self, path: &Path, what: &str) {
        self.error = None;
        self.notice = Some(format!("saved the {what} to {}", path.display()));
    }

    fn file_stem(&self) -> String {
        let name = self
            .problem
            .as_ref()
            .map(|p| p.source.name())
            .unwrap_or_else(|| "krylov".into());
        let name = name.trim_end_matches(".gz").trim_end_matches(".mtx");
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    pub(super) fn export_bar(&mut self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            labelled(ui, "Export path", |ui| {
                ui.add(
                    egui::TextEdit::singleline(&mut self.export_path)
                        .hint_text("file or folder (empty: dialog)")
                        .desired_width(190.0),
                )
            });
            if self.runs.len() > 1 {
                ui.label("run:");
                for (i, run) in self.runs.iter().enumerate() {
                    ui.radio_value(&mut self.export_run, i, format!("{} run", run.kind));
                }
            }
            let has = self.runs.iter().any(|r| r.report().is_some());
            if ui
                .add_enabled(has, egui::Button::new("Save history CSV"))
                .clicked()
            {
                self.export_history();
            }
            if ui
                .add_enabled(has, egui::Button::new("Save solution .mtx"))
                .clicked()
            {
                self.export_solution();
            }
            if ui
                .add_enabled(has, egui::Button::new("Copy JSON report"))
                .clicked()
            {
                let ctx = ui.ctx().clone();
                self.copy_report(&ctx);
            }
        });
    }
}
