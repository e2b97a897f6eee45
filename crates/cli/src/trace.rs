//! `memograph trace` (the event history) and `memograph stats` (per-segment allocator state).

use std::io::{BufWriter, Write};

use memograph_snapshot::analysis::lifetimes::{event_name, event_versions};
use memograph_snapshot::analysis::stats::segment_stats;
use memograph_snapshot::format::{bytes, count, grouped};
use memograph_snapshot::Snapshot;

use crate::{load, Failure, Options};

fn device_of(snapshot: &Snapshot, o: &Options, path: &str) -> Result<i64, Failure> {
    match o.device {
        Some(d) if snapshot.devices().contains(&d) => Ok(d),
        Some(d) => Err(Failure(format!(
            "{path}: no device {d} (devices: {:?})",
            snapshot.devices()
        ))),
        None => snapshot
            .default_device()
            .ok_or_else(|| Failure(format!("{path}: the snapshot has no devices"))),
    }
}

pub fn run_trace(o: &Options) -> Result<(), Failure> {
    let path = &o.files[0];
    let snapshot = load::open(path)?;
    let device = device_of(&snapshot, o, path)?;
    let t = snapshot.trace(device);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let t0 = t.time_us.iter().copied().find(|&x| x != i64::MIN);
    let versions = event_versions(t);
    let result = (|| -> std::io::Result<()> {
        writeln!(
            out,
            "{:>8}  {:<15} {:<22} {:>12}  {:>10}  {:>12}",
            "entry", "action", "address", "size", "stream", "time"
        )?;
        for (i, &version) in versions.iter().enumerate() {
            let e = t.get(i);
            let name = event_name(e.action, e.addr, version);
            let time = match (e.time_us, t0) {
                (Some(t), Some(t0)) => format!("+{:.3} ms", (t - t0) as f64 / 1000.0),
                _ => "-".into(),
            };
            let extra = match e.device_free {
                Some(free) => format!("  device_free {}", bytes(free)),
                None => String::new(),
            };
            writeln!(
                out,
                "{i:>8}  {:<15} {name:<22} {:>12}  {:>10}  {time:>12}{extra}",
                e.action.name(&snapshot.interner),
                bytes(e.size),
                e.stream
            )?;
        }
        out.flush()
    })();
    match result {
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure(format!("{path}: writing output failed: {e}"))),
        Ok(()) => Ok(()),
    }
}

/// What a `stats` row notes after its figures: an expandable segment, a private pool.
fn notes(r: &memograph_snapshot::analysis::stats::SegmentStats) -> String {
    let mut notes = String::new();
    if r.is_expandable {
        notes.push_str("  expandable");
    }
    if let Some((a, b)) = r.private_pool {
        notes.push_str(&format!("  private pool ({a}, {b})"));
    }
    notes
}

pub fn run_stats(o: &Options) -> Result<(), Failure> {
    let path = &o.files[0];
    let snapshot = load::open(path)?;
    let device = device_of(&snapshot, o, path)?;
    let (rows, totals) = segment_stats(&snapshot, device);
    if o.json {
        println!(
            "{}",
            serde_json::json!({ "file": path, "device": device, "segments": rows, "totals": totals })
        );
        return Ok(());
    }
    println!(
        "{path}  device {device}: {}, {}",
        count(totals.segments as u64, "segment", "segments"),
        count(totals.blocks as u64, "block", "blocks")
    );
    println!(
        "{:<16} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}",
        "segment", "type", "size", "allocated", "pending", "free", "largest free", "waste"
    );
    for r in &rows {
        println!(
            "{:<16} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}{}",
            format!("{:x}", r.address),
            r.segment_type,
            bytes(r.total_size),
            bytes(r.allocated),
            bytes(r.pending_free),
            bytes(r.free),
            bytes(r.largest_free),
            bytes(r.rounding_waste),
            notes(r)
        );
    }
    println!(
        "{:<16} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}",
        "total",
        "",
        bytes(totals.reserved),
        bytes(totals.allocated),
        bytes(totals.pending_free),
        bytes(totals.free),
        bytes(totals.largest_free),
        bytes(totals.rounding_waste)
    );
    println!(
        "reserved {} bytes; allocated {}; cached free {}; rounding waste {}",
        grouped(totals.reserved),
        grouped(totals.allocated),
        grouped(totals.free),
        grouped(totals.rounding_waste)
    );
    Ok(())
}
