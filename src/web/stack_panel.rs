//! The side panel: the pinned allocation's details and stack (plumbing frames hidden unless asked, runs
//! of repeats elided), with a copy button.

use leptos::prelude::*;
use memograph_snapshot::analysis::search::{self, Query};
use memograph_snapshot::analysis::stacks::{display_lines, why_no_frames};

use super::{MadeBy, Ui};
use crate::load::store;
use crate::render::colors;

/// What the panel shows for the pinned allocation.
#[derive(Clone)]
struct Pinned {
    allocation: u32,
    head: String,
    lines: Vec<String>,
    extra: Vec<(String, String)>,
}

#[component]
pub fn StackPanel(ui: Ui, segments: bool) -> impl IntoView {
    let details = move || -> Option<Pinned> {
        let allocation = ui.pinned.get()?;
        let full = ui.full_stack.get();
        let (file, device) = ui.current()?;
        store::with_model(file, device, |m, s| {
            let times = m.times(s);
            let t = if segments { m.segments(s) } else { &m.blocks };
            let a = t.lifetimes.allocations.get(allocation as usize)?;
            let mut extra = Vec::new();
            if let Some(e) = a.alloc_event().or(a.free_event()) {
                let entry = s.trace(device).get(e as usize);
                if let Some(c) = entry
                    .compile_context
                    .filter(|c| !s.str(*c).is_empty() && s.str(*c) != "N/A")
                {
                    extra.push(("compile_context".to_string(), s.str(c).to_string()));
                }
                if let Some(u) = entry.user_metadata.filter(|u| !s.str(*u).is_empty()) {
                    extra.push(("user_metadata".to_string(), s.str(u).to_string()));
                }
            }
            extra.push(("stream".to_string(), t.lifetimes.stream_of(a).to_string()));
            Some(Pinned {
                allocation,
                head: t.describe(allocation, times),
                lines: if s.stack(a.stack).is_empty() {
                    vec![why_no_frames(a.is_initial()).to_string()]
                } else {
                    display_lines(s, a.stack, full)
                },
                extra,
            })
        })
        .flatten()
    };
    // What a search for text highlights the timeline by: the frames that hold it are marked.
    let found = move || -> Option<String> {
        ui.highlight.with(|h| match h.as_ref()?.made_by.as_ref()? {
            MadeBy::Search(q) => match search::parse(q)? {
                Query::Text(text) => Some(text),
                _ => None,
            },
            MadeBy::Path(_) => None,
        })
    };
    let copy = move |_| {
        if let Some(Pinned { head, lines, .. }) = details() {
            let text = format!("{head}\n\n{}", lines.join("\n"));
            if let Some(w) = web_sys::window() {
                let _ = w.navigator().clipboard().write_text(&text);
            }
        }
    };
    view! {
        <aside class="stack-panel">
            {move || match details() {
                None => view! {
                    <p class="muted hint-mouse">"Click a band to pin it and see where it was allocated (or, on the timeline, press Down: the largest in view)."</p>
                    <p class="muted hint-touch">"Tap a band to pin it and see where it was allocated."</p>
                }.into_any(),
                Some(Pinned { allocation, head, lines, extra }) => {
                    let no_frames = lines.len() == 1 && lines[0].starts_with("No stack:");
                    view! {
                    <div class="stack-head">
                        <span class="swatch" style=format!("background:{}", colors::allocation(allocation))></span>
                        <pre class="stack-summary">{head}</pre>
                    </div>
                    <dl class="extra">
                        {extra.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
                    </dl>
                    <div class="stack-tools">
                        <label class="check">
                            <input type="checkbox" prop:checked=move || ui.full_stack.get()
                                on:change=move |ev| ui.full_stack.set(event_target_checked(&ev)) />
                            "All frames"
                        </label>
                        <button class="button small" on:click=copy>"Copy"</button>
                    </div>
                    // A frame per line. A Python frame longer than the panel wraps, its rest indented:
                    // its file, line and function end it, and cut off they would be what is hidden. A
                    // native one (a C++ signature, often hundreds of characters) keeps to one line,
                    // cut short with its whole text on hover, so the Python frames below stay in view.
                    <pre class="stack" class:explained=no_frames data-testid="stack-trace">
                        {
                            let last = lines.len().saturating_sub(1);
                            let found = found();
                            lines.into_iter().enumerate().map(|(k, line)| {
                                let end = if k < last { "\n" } else { "" };
                                // (Why there is no stack is a sentence: it wraps.)
                                let native = !no_frames && !line.contains(".py:");
                                let title = native.then(|| line.clone());
                                let hit = found.as_ref().is_some_and(|t| line.to_ascii_lowercase().contains(t.as_str()));
                                view! { <span class="frame" class:native=native class:hit=hit title=title>{line}{end}</span> }
                            }).collect_view()
                        }
                    </pre>
                }.into_any()
                }
            }}
        </aside>
    }
}
