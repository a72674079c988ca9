//! Small widget helpers the panels share.

use egui::{Response, Ui, WidgetText};

/// A label, then the widget `add` puts after it, named by that label for screen readers and
/// the UI tests (`get_by_label`).
pub(super) fn labelled(
    ui: &mut Ui,
    label: &str,
    add: impl FnOnce(&mut Ui) -> Response,
) -> Response {
    let l = ui.label(label);
    add(ui).labelled_by(l.id)
}

/// A combo box over `all`, each entry named by `name`.
pub(super) fn enum_combo<T: Copy + PartialEq>(
    ui: &mut Ui,
    id_salt: &str,
    value: &mut T,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Response {
    egui::ComboBox::from_id_salt(id_salt)
        .selected_text(name(*value))
        .show_ui(ui, |ui| {
            for &v in all {
                ui.selectable_value(value, v, name(v));
            }
        })
        .response
}

/// One row of a two-column grid of texts: `name`, then `value` (whose response it returns).
pub(super) fn text_row(ui: &mut Ui, name: &str, value: impl Into<WidgetText>) -> Response {
    ui.label(name);
    let r = ui.label(value);
    ui.end_row();
    r
}
