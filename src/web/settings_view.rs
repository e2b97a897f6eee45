//! Allocator Settings: what `allocator_settings` recorded, one row per setting.

use leptos::prelude::*;
use memograph_snapshot::PyValue;

use super::Ui;
use crate::load::store;

#[component]
pub fn SettingsView(ui: Ui) -> impl IntoView {
    let rows = move || {
        let (file, _) = ui.current()?;
        store::with_file(file, |f| {
            let s = &f.snapshot;
            let mut rows = vec![
                ("pickle protocol".to_string(), s.protocol.to_string()),
                ("format".to_string(), format!("{:?}", s.format)),
                (
                    "devices".to_string(),
                    s.devices()
                        .iter()
                        .map(|d| format!("cuda:{d}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            ];
            match &s.allocator_settings {
                Some(PyValue::Dict(kv)) => rows.extend(kv.iter().map(|(k, v)| {
                    let key = match k {
                        PyValue::Str(s) => s.clone(),
                        other => other.to_python(),
                    };
                    let value = match v {
                        PyValue::Str(s) if s.is_empty() => "(empty)".to_string(),
                        PyValue::Str(s) => s.clone(),
                        other => other.to_python(),
                    };
                    (key, value)
                })),
                Some(other) => rows.push(("allocator_settings".into(), other.to_python())),
                None => rows.push((
                    "allocator_settings".into(),
                    "not recorded (PyTorch before 2.4 did not write them)".into(),
                )),
            }
            rows
        })
    };
    view! {
        <div class="settings-view">
            <table class="settings">
                <tbody>
                    {move || rows().unwrap_or_default().into_iter().map(|(k, v)| view! {
                        <tr><th>{k}</th><td><code>{v}</code></td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
