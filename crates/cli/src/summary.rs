//! `memograph summary`: the headline figures of each device.

use std::fmt::Write as _;

use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::analysis::oom::oom_marks;
use memograph_snapshot::analysis::summary::{self, summarize, DeviceSummary};
use memograph_snapshot::format::{bytes_exact, count, grouped};
use memograph_snapshot::{Action, Snapshot};

use crate::{load, Failure, Options};

pub fn run(o: &Options) -> Result<(), Failure> {
    let mut failures = 0;
    for path in &o.files {
        match load::open(path) {
            Ok(snapshot) => {
                let devices = summarize(&snapshot);
                if o.json {
                    println!("{}", json_line(path, &devices));
                } else {
                    print!("{}", table(path, &snapshot, &devices));
                }
            }
            // Keep going through the other files: report each failure now, exit 1 at the end.
            Err(f) => {
                eprintln!("error: {}", f.0);
                failures += 1;
            }
        }
    }
    if failures > 0 {
        return Err(Failure::reported());
    }
    Ok(())
}

/// One JSON object per file: `{"file": …, "devices": {"0": {…}}}`, the shape of the reference files.
pub fn json_line(path: &str, devices: &[DeviceSummary]) -> String {
    let mut map = serde_json::Map::new();
    for d in devices {
        let mut v = serde_json::to_value(d).expect("summaries serialise");
        v.as_object_mut().expect("an object").remove("device");
        map.insert(d.device.to_string(), v);
    }
    serde_json::json!({ "file": path, "devices": map }).to_string()
}

pub fn table(path: &str, snapshot: &Snapshot, devices: &[DeviceSummary]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{path}  ({}, {} device{})",
        snapshot.encoding(),
        devices.len(),
        if devices.len() == 1 { "" } else { "s" }
    );
    if devices.is_empty() {
        let _ = writeln!(out, "  no segments and no trace entries");
    }
    for d in devices {
        let entries: u64 = d.events.values().sum();
        let by_action: Vec<String> = d
            .events
            .iter()
            .map(|(a, &n)| format!("{a} {}", grouped(n)))
            .collect();
        let peak_at = if d.peak_event_index < 0 {
            "before the first entry".to_string()
        } else {
            format!("after entry {}", grouped(d.peak_event_index as u64))
        };
        let _ = writeln!(out, "  cuda:{}", d.device);
        let _ = writeln!(
            out,
            "    trace entries    {}{}",
            grouped(entries),
            if by_action.is_empty() {
                String::new()
            } else {
                format!("  ({})", by_action.join(", "))
            }
        );
        let _ = writeln!(
            out,
            "    allocations      {}",
            grouped(d.allocations as u64)
        );
        let _ = writeln!(
            out,
            "    timeline peak    {}  {peak_at}",
            bytes_exact(d.timeline_peak_bytes)
        );
        let _ = writeln!(
            out,
            "    reserved         {}  in {}",
            bytes_exact(d.reserved_bytes),
            count(d.segments as u64, "segment", "segments")
        );
        let _ = writeln!(out, "    active           {}", bytes_exact(d.active_bytes));
        let _ = writeln!(
            out,
            "    requested        {}",
            bytes_exact(d.requested_bytes)
        );
        let _ = writeln!(
            out,
            "    unique frames    {}",
            grouped(d.unique_frames as u64)
        );
        if let Some(missing) = summary::missing_history(snapshot, d.device) {
            let _ = writeln!(out, "    {missing}");
        }
        // The device's lifetimes, made only if the steps or the out-of-memory entries need them, and
        // once for both.
        let made = std::cell::OnceCell::new();
        let lifetimes = || made.get_or_init(|| Lifetimes::of(snapshot, d.device));
        steps(&mut out, snapshot, d.device, lifetimes);
        out_of_memory(&mut out, snapshot, d.device, lifetimes);
    }
    out
}

/// The training steps the profiler marks in `device`'s trace, when two or more: how many, what marks
/// them, which peaks highest (`memograph report` tells more).
fn steps<'a>(
    out: &mut String,
    snapshot: &Snapshot,
    device: i64,
    lifetimes: impl FnOnce() -> &'a Lifetimes,
) {
    use memograph_snapshot::analysis::trace_steps::{may_mark_steps, trace_steps};
    if !may_mark_steps(snapshot, device) {
        return;
    }
    let Some(steps) = trace_steps(snapshot, lifetimes()) else {
        return;
    };
    let Some(top) = steps.highest() else {
        return;
    };
    let _ = writeln!(
        out,
        "    steps            {}, marked by {}; the highest peak, {}, in step {}",
        grouped(steps.steps.len() as u64),
        steps.marker,
        memograph_snapshot::format::bytes(top.peak_bytes),
        grouped(u64::from(top.step))
    );
}

/// The first few `oom` entries of `device`'s trace, as the page describes them (what was asked for and
/// free, what PyTorch held, the code that asked), indented under the device.
fn out_of_memory<'a>(
    out: &mut String,
    snapshot: &Snapshot,
    device: i64,
    lifetimes: impl FnOnce() -> &'a Lifetimes,
) {
    const SHOWN: usize = 3;
    let trace = snapshot.trace(device);
    if !trace.action.contains(&Action::Oom) {
        return;
    }
    let marks = oom_marks(snapshot, device, lifetimes());
    for mark in marks.iter().take(SHOWN) {
        for (k, line) in mark.describe().lines().enumerate() {
            let lead = if k == 0 { "    " } else { "      " };
            let _ = writeln!(out, "{lead}{line}");
        }
    }
    if marks.len() > SHOWN {
        let _ = writeln!(out, "    and {} more out of memory", marks.len() - SHOWN);
    }
}
