//! `memograph trace` (the event history) and `memograph stats` (per-segment allocator state).

use std::io::{BufWriter, Write};

use std::ops::Range;

use memograph_snapshot::analysis::categories::{categorize, Rules};
use memograph_snapshot::analysis::lifetimes::{event_name, event_versions, Lifetimes};
use memograph_snapshot::analysis::search;
use memograph_snapshot::analysis::stacks::{display_lines, frame_text};
use memograph_snapshot::analysis::stats::segment_stats;
use memograph_snapshot::analysis::summary;
use memograph_snapshot::format::{bytes, count, grouped};
use memograph_snapshot::Snapshot;

use crate::{load, Failure, Options};

/// `memograph trace`'s arguments.
pub struct TraceArgs {
    pub options: Options,
    /// A find box query: only the events of the allocations it finds.
    pub find: Option<Find>,
    /// Only these entries.
    pub entries: Option<Range<u64>>,
    /// Each event's stack under it.
    pub stacks: bool,
}

/// `--find QUERY`: the query as typed (for the line that says what it found) and as read.
#[derive(Debug, Clone)]
pub struct Find {
    text: String,
    query: search::Query,
}

/// Reads `--find QUERY`: anything but blank.
pub fn query(text: &str) -> Result<Find, String> {
    match search::parse(text) {
        Some(query) => Ok(Find {
            text: text.to_string(),
            query,
        }),
        None => Err("an empty query finds nothing: give an address, a size or text".to_string()),
    }
}

/// `--entries FROM:TO`: TO excluded, either side may be left out.
pub fn entry_range(text: &str) -> Result<Range<u64>, String> {
    let (from, to) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?} is no range: say FROM:TO, as 1200:1530, 1200: or :500"))?;
    let end = |v: &str, empty: u64| -> Result<u64, String> {
        match v.trim() {
            "" => Ok(empty),
            v => v.parse().map_err(|_| format!("{v:?} is no entry number")),
        }
    };
    let (from, to) = (end(from, 0)?, end(to, u64::MAX)?);
    if from > to {
        return Err(format!("{text:?} ends before it begins"));
    }
    Ok(from..to)
}

/// The entries `memograph trace` prints: every one, or those of the allocations `find` finds, within
/// `range`; and a line that says what was found (`None` without a query).
fn entries_shown(
    snapshot: &Snapshot,
    device: i64,
    find: Option<&Find>,
    range: Range<u64>,
) -> (Vec<u32>, Option<String>) {
    let n = snapshot.trace(device).len() as u64;
    let range = range.start.min(n) as u32..range.end.min(n) as u32;
    let Some(Find { text, query }) = find else {
        return (range.collect(), None);
    };
    let lifetimes = Lifetimes::of(snapshot, device);
    // Text finds categories by name too, as the page's find box does.
    let rules = Rules::built_in();
    let categories = matches!(query, search::Query::Text(_))
        .then(|| (categorize(snapshot, &lifetimes, &rules), rules.names()));
    let found = search::search(
        snapshot,
        &lifetimes,
        categories.as_ref().map(|(of, names)| (&of[..], &names[..])),
        query,
    );
    let found_bytes: u64 = found
        .iter()
        .map(|&a| lifetimes.allocations[a as usize].size)
        .fold(0, u64::saturating_add);
    let mut events = lifetimes.events_of(&found);
    events.retain(|e| range.contains(e));
    let said = format!(
        "find {text:?}: {}, {} allocated in all; {} of their events below",
        count(found.len() as u64, "allocation", "allocations"),
        bytes(found_bytes),
        grouped(events.len() as u64),
    );
    (events, Some(said))
}

pub fn run_trace(args: &TraceArgs) -> Result<(), Failure> {
    let o = &args.options;
    let path = &o.files[0];
    let snapshot = load::open(path)?;
    let (device, left_out) = load::device_left_out(path, &snapshot, o.device)?;
    load::note_left_out(path, &left_out, "listed", "--device N");
    let t = snapshot.trace(device);
    let (shown, said) = entries_shown(
        &snapshot,
        device,
        args.find.as_ref(),
        args.entries.clone().unwrap_or(0..u64::MAX),
    );
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let t0 = t.time_us.iter().copied().find(|&x| x != i64::MIN);
    let versions = event_versions(t);
    let result = (|| -> std::io::Result<()> {
        if !o.json {
            if let Some(said) = said {
                writeln!(out, "{said}")?;
            }
            // No entries to list: why, rather than a header over nothing.
            if let Some(missing) = summary::missing_history(&snapshot, device) {
                writeln!(out, "{missing}")?;
                return out.flush();
            }
            if shown.is_empty() {
                // A find says its count above; entries past the end say so.
                if let Some(r) = args.entries.as_ref().filter(|r| r.start >= t.len() as u64) {
                    let n = t.len() as u64;
                    writeln!(
                        out,
                        "no entries from {} on: cuda:{device}'s trace has {} (0 to {})",
                        grouped(r.start),
                        count(n, "entry", "entries"),
                        grouped(n.saturating_sub(1))
                    )?;
                }
                return out.flush();
            }
            writeln!(
                out,
                "{:>8}  {:<15} {:<22} {:>12}  {:>10}  {:>12}",
                "entry", "action", "address", "size", "stream", "time"
            )?;
        }
        for &i in &shown {
            let i = i as usize;
            let e = t.get(i);
            let name = event_name(e.action, e.addr, versions[i]);
            let action = e.action.name(&snapshot.interner);
            if o.json {
                let mut row = serde_json::json!({
                    "entry": i,
                    "action": action,
                    "address": e.addr,
                    "name": name,
                    "size": e.size,
                    "stream": e.stream,
                    "time_us": e.time_us,
                });
                if let Some(free) = e.device_free {
                    row["device_free"] = free.into();
                }
                if args.stacks {
                    let frames: Vec<String> = (snapshot.stack(e.stack).iter())
                        .map(|&f| frame_text(&snapshot, snapshot.frame(f)))
                        .collect();
                    row["frames"] = frames.into();
                }
                writeln!(out, "{row}")?;
                continue;
            }
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
                "{i:>8}  {action:<15} {name:<22} {:>12}  {:>10}  {time:>12}{extra}",
                bytes(e.size),
                e.stream
            )?;
            // An entry recorded without frames has none to show (display_lines would say why an
            // allocation has none, which is about allocations, not entries).
            if args.stacks && !snapshot.stack(e.stack).is_empty() {
                for line in display_lines(&snapshot, e.stack, false) {
                    writeln!(out, "{:>10}{line}", "")?;
                }
            }
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
    let (device, left_out) = load::device_left_out(path, &snapshot, o.device)?;
    load::note_left_out(path, &left_out, "shown", "--device N");
    let (rows, totals) = segment_stats(&snapshot, device);
    if o.json {
        println!(
            "{}",
            serde_json::json!({ "file": path, "device": device, "segments": rows, "totals": totals })
        );
        return Ok(());
    }
    println!(
        "{path}  cuda:{device}: {}, {}",
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
