//! The Allocator State History as the view shows it: the allocator's segments and blocks right after an
//! entry, the rows of the event list, and the text of a block's tooltip.

use memograph_snapshot::analysis::lifetimes::event_name;
use memograph_snapshot::analysis::stacks::display_lines;
use memograph_snapshot::format::{bytes, count, grouped, seconds_since};
use memograph_snapshot::Snapshot;

use super::DeviceModel;

/// One row of the Allocator State History's segment map.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentRow {
    pub address: u64,
    pub size: u64,
    pub blocks: Vec<BlockBox>,
}

/// A block inside a segment at the selected entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockBox {
    pub address: u64,
    pub size: u64,
    /// Index into the device's block lifetimes.
    pub allocation: u32,
    /// Freed by the program, waiting for its stream (between `free_requested` and `free_completed`).
    pub pending_free: bool,
    /// Bytes of the block beyond what was requested (known for blocks the snapshot still holds).
    pub rounding_waste: u64,
}

/// The allocator's segments and blocks right after entry `event`, by address.
pub fn allocator_state_at(model: &DeviceModel, snapshot: &Snapshot, event: i64) -> Vec<SegmentRow> {
    let mut rows: Vec<SegmentRow> = model
        .segments(snapshot)
        .lifetimes
        .allocations
        .iter()
        .filter(|s| s.is_live_at(event))
        .map(|s| SegmentRow {
            address: s.addr,
            size: s.size,
            blocks: Vec::new(),
        })
        .collect();
    rows.sort_by_key(|r| r.address);
    for (i, a) in model.blocks.lifetimes.allocations.iter().enumerate() {
        if !a.is_live_at(event) {
            continue;
        }
        let k = rows.partition_point(|r| r.address <= a.addr);
        if k == 0 {
            continue;
        }
        let row = &mut rows[k - 1];
        if a.addr >= row.address.saturating_add(row.size) {
            continue;
        }
        let pending_free = a
            .free_requested_event()
            .is_some_and(|r| i64::from(r) <= event);
        row.blocks.push(BlockBox {
            address: a.addr,
            size: a.size,
            allocation: i as u32,
            pending_free,
            rounding_waste: model.rounding_waste(snapshot, i as u32),
        });
    }
    for r in &mut rows {
        r.blocks.sort_by_key(|b| b.address);
    }
    rows
}

/// One row of the event list.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    pub index: usize,
    pub action: String,
    /// MemoryViz's name for what the entry is about (`b7f3a…_2`, `s7f3a…_0`).
    pub name: String,
    pub size: String,
    /// `+1.234 s` since the first entry, when times were recorded.
    pub time: String,
}

/// The event list's rows `range` (clamped to the trace).
pub fn event_rows(
    model: &DeviceModel,
    snapshot: &Snapshot,
    range: std::ops::Range<usize>,
) -> Vec<EventRow> {
    let len = snapshot.trace(model.device).len();
    rows_of(model, snapshot, range.start.min(len)..range.end.min(len))
}

/// The rows of trace entries `entries` (each within the trace).
pub fn rows_of(
    model: &DeviceModel,
    snapshot: &Snapshot,
    entries: impl Iterator<Item = usize>,
) -> Vec<EventRow> {
    let trace = snapshot.trace(model.device);
    let versions = model.versions(snapshot);
    let times = model.times(snapshot);
    entries
        .filter(|&i| i < trace.len())
        .map(|i| {
            let e = trace.get(i);
            EventRow {
                index: i,
                action: e.action.name(&snapshot.interner).to_string(),
                name: event_name(e.action, e.addr, versions.get(i).copied().unwrap_or(0)),
                size: bytes(e.size),
                time: times
                    .and_then(|ts| seconds_since(ts, i))
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The tooltip of the segment map at row `row` (and block `block` in it).
pub fn describe_block(
    model: &DeviceModel,
    snapshot: &Snapshot,
    row: &SegmentRow,
    block: Option<&BlockBox>,
) -> String {
    let mut seg = format!(
        "segment {:x}: {} ({}), {}",
        row.address,
        bytes(row.size),
        count(row.size, "byte", "bytes"),
        count(row.blocks.len() as u64, "block", "blocks")
    );
    // What the snapshot says of the segment at this address (when it is still there at the end).
    if let Some(s) = snapshot
        .segments_of(model.device)
        .find(|s| s.address == row.address)
    {
        seg.push_str(&format!(", stream {}", s.stream));
        if s.is_expandable {
            seg.push_str(", expandable");
        }
        if let Some((a, b)) = s.private_pool() {
            seg.push_str(&format!(
                ", private pool ({a}, {b}): a CUDA graph's or a MemPool's"
            ));
        }
    }
    let Some(block) = block else { return seg };
    let Some(a) = model
        .blocks
        .lifetimes
        .allocations
        .get(block.allocation as usize)
    else {
        return seg;
    };
    let stack = display_lines(snapshot, a.stack, false)
        .into_iter()
        .take(8)
        .collect::<Vec<_>>()
        .join("\n");
    let note = if block.pending_free {
        "  pending free".to_string()
    } else if block.rounding_waste > 0 {
        format!(
            "  rounding waste {} ({} bytes)",
            bytes(block.rounding_waste),
            grouped(block.rounding_waste)
        )
    } else {
        String::new()
    };
    let mut text = format!(
        "{}  {} ({} bytes){note}\n{seg}\n{stack}",
        a.name(),
        bytes(block.size),
        grouped(block.size),
    );
    // A legacy snapshot's block lists every allocation that used it.
    let history = snapshot
        .segments_of(model.device)
        .flat_map(|s| &s.blocks)
        .find(|b| b.address == block.address && !b.history.is_empty())
        .map(|b| b.history.as_slice())
        .unwrap_or(&[]);
    if !history.is_empty() {
        text.push_str(&format!(
            "\nhistory: {}",
            count(history.len() as u64, "record", "records")
        ));
        for r in history {
            let top = display_lines(snapshot, r.stack, false)
                .into_iter()
                .next()
                .unwrap_or_default();
            text.push_str(&format!("\n  {:x} {} {top}", r.address, bytes(r.real_size)));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_highlighted_allocation_lists_its_alloc_and_free_entries() {
        let written = memograph_snapshot::synth::pickle(40);
        let s = memograph_snapshot::read_bytes(&written.bytes).unwrap();
        let m = DeviceModel::new(&s, 0);
        let all = &m.blocks.lifetimes.allocations;
        let freed = all
            .iter()
            .position(|a| a.alloc_event().is_some() && a.free_event().is_some())
            .unwrap() as u32;
        let live = all
            .iter()
            .position(|a| a.alloc_event().is_some() && a.free_event().is_none())
            .unwrap() as u32;
        let events = m.blocks.lifetimes.events_of(&[live, freed, live]);
        let a = &all[freed as usize];
        let mut want: Vec<u32> = [a.alloc_event(), a.free_requested_event(), a.free_event()]
            .into_iter()
            .flatten()
            .collect();
        want.push(all[live as usize].alloc_event().unwrap());
        want.sort_unstable();
        assert_eq!(events, want);
        let rows = rows_of(&m, &s, events.iter().map(|&e| e as usize));
        assert_eq!(rows.len(), events.len());
        assert!(rows.iter().all(|r| r.name.starts_with('b')), "{rows:?}");
        assert_eq!(rows[0].action, "alloc");
    }

    #[test]
    fn a_legacy_block_lists_every_record_of_its_history() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/crates/snapshot/fuzz/corpus/seeds/legacy_history.pickle"
        );
        let s = memograph_snapshot::read_bytes(&std::fs::read(path).unwrap()).unwrap();
        let m = DeviceModel::new(&s, 0);
        let rows = allocator_state_at(&m, &s, -1);
        let row = &rows[0];
        let text = describe_block(&m, &s, row, row.blocks.first());
        assert!(text.contains("history: 2 records"), "{text}");
        assert!(text.contains("eval.py:99"), "{text}");
    }

    #[test]
    fn a_segment_of_a_private_pool_says_so() {
        // Recorded on an H200 (PyTorch 2.11): a CUDA graph's pool (1, 0) and a MemPool (0, 1).
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pools.pickle");
        let s = memograph_snapshot::read_bytes(&std::fs::read(path).unwrap()).unwrap();
        let m = DeviceModel::new(&s, 0);
        let last = s.trace(0).len() as i64 - 1;
        let texts: Vec<String> = allocator_state_at(&m, &s, last)
            .iter()
            .map(|row| describe_block(&m, &s, row, None))
            .collect();
        let private = |pool: &str| texts.iter().filter(|t| t.contains(pool)).count();
        assert_eq!(private("private pool (1, 0)"), 2, "{texts:#?}");
        assert_eq!(private("private pool (0, 1)"), 1, "{texts:#?}");
        assert!(texts.iter().all(|t| t.contains(", stream ")), "{texts:#?}");
    }
}
