//! Allocator Settings: what the file is (its shape, each device's trace), then what
//! `allocator_settings` recorded, one row per setting.

use leptos::prelude::*;
use memograph_snapshot::{format, PyValue};

use super::Ui;
use crate::load::store;

#[component]
pub fn SettingsView(ui: Ui) -> impl IntoView {
    let rows = move || {
        let (file, _) = ui.current()?;
        store::with_file(file, |f| {
            let s = &f.snapshot;
            let mut rows = vec![
                (
                    "file".to_string(),
                    format!("{} ({})", f.name, format::bytes(f.bytes)),
                ),
                ("encoding".to_string(), s.encoding()),
                ("format".to_string(), s.format.describe().to_string()),
            ];
            // Each device's trace: how long, over how much time. A trace shorter than the run
            // (`max_entries` reached) begins with blocks allocated before it.
            rows.extend(s.devices().into_iter().map(|d| {
                let trace = s.trace(d);
                let n = trace.len();
                let span = match (trace.time_us.first(), trace.time_us.last()) {
                    (Some(&first), Some(&last))
                        if n > 1 && first != i64::MIN && last != i64::MIN =>
                    {
                        format!(" over {:.3} s", last.saturating_sub(first) as f64 / 1e6)
                    }
                    _ => String::new(),
                };
                (
                    format!("cuda:{d}"),
                    format!(
                        "{}{span}, {} at the snapshot",
                        format::count(n as u64, "trace entry", "trace entries"),
                        format::count(s.segments_of(d).count() as u64, "segment", "segments")
                    ),
                )
            }));
            if !s.external_annotations.is_empty() {
                rows.push((
                    "annotations".to_string(),
                    format!(
                        "{} profiler annotation entries",
                        format::grouped(s.external_annotations.len() as u64)
                    ),
                ));
            }
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
