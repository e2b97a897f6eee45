//! View models: what the views draw, computed from the engine's analyses. Plain data, no web types, so
//! they are tested natively; the components only wire signals to them and the renderers only draw them.

use memograph_snapshot::analysis::lifetimes::{Lifetimes, Peak};
use memograph_snapshot::analysis::report::{report_of, DeviceReport, ReportOptions};
use memograph_snapshot::analysis::timeline::{timeline_layout, RangeMax, TimelineLayout};
use memograph_snapshot::Snapshot;

/// One timeline (blocks or segments) of one device at one detail level.
pub struct TimelineModel {
    pub lifetimes: Lifetimes,
    pub layout: TimelineLayout,
    /// Live bytes after each entry, for the minimap and for fitting y to a range.
    pub totals: RangeMax,
    pub peak: Peak,
    /// Detail level the layout was computed for (0.0–1.0).
    pub detail: f64,
}

impl TimelineModel {
    pub fn new(lifetimes: Lifetimes, detail: f64) -> TimelineModel {
        let layout = timeline_layout(&lifetimes, detail);
        let totals = RangeMax::new(&lifetimes.live_after);
        let peak = lifetimes.peak();
        TimelineModel {
            lifetimes,
            layout,
            totals,
            peak,
            detail,
        }
    }

    pub fn set_detail(&mut self, detail: f64) {
        if (detail - self.detail).abs() > f64::EPSILON {
            // Free the old layout first: wasm memory never shrinks, so its high-water mark is what counts.
            self.layout = TimelineLayout::default();
            self.layout = timeline_layout(&self.lifetimes, detail);
            self.detail = detail;
        }
    }

    /// Highest live bytes over entries `[x0, x1)`, including what was live before `x0`.
    pub fn max_in(&self, x0: f64, x1: f64) -> u64 {
        let lo = x0.floor().max(0.0) as usize;
        let hi = (x1.ceil().max(0.0) as usize).max(lo + 1);
        let live = &self.lifetimes.live_after;
        let before = match lo {
            0 => self.lifetimes.initial_bytes,
            _ => live.get(lo - 1).copied().unwrap_or(0),
        };
        self.totals.max(live, lo, hi).max(before).max(1)
    }
}

/// A device's models: the Active Memory Timeline and the Active Cached Segment Timeline.
pub struct DeviceModel {
    pub blocks: TimelineModel,
    /// Segment lifetimes: built by [`Self::complete`] (the block timeline's first frame needs none of it).
    segments: Option<TimelineModel>,
    /// Whether every entry has a `time_us` (the times stay in the snapshot's trace: see [`Self::times`]).
    pub has_times: bool,
    /// Each entry's address version (`b…_N`), for the event list; built by [`Self::complete`].
    versions: Option<Vec<u32>>,
    device: i64,
    /// Profiler annotations as spans of entries (needs `time_us`).
    pub annotations: Vec<AnnotationSpan>,
    /// Category names and each block allocation's category, computed on first use.
    pub categories: Option<Categories>,
    /// The analysis panels' report and what it was made for (entry, framework frames hidden).
    pub report: Option<(AnalysisKey, DeviceReport)>,
    /// Rounding waste (block size − requested size) of allocations still live at the snapshot, by
    /// allocation: the trace records only block sizes, the snapshot's blocks also what was requested.
    /// Built by [`Self::complete`].
    rounding_waste: Option<std::collections::HashMap<u32, u64>>,
}

/// What a report was made for: the entry analysed (`None`: the peak) and whether framework frames are
/// hidden in its call-stack tree.
pub type AnalysisKey = (Option<i64>, bool);

/// The built-in categories of a device's block allocations.
pub struct Categories {
    pub names: Vec<String>,
    /// Per allocation (index into the block lifetimes): index into `names`.
    pub of: Vec<u16>,
}

fn categorise(snapshot: &Snapshot, lifetimes: &Lifetimes) -> Categories {
    use memograph_snapshot::analysis::categories::{categorize, Rules};
    let rules = Rules::built_in();
    Categories {
        names: rules.names(),
        of: categorize(snapshot, lifetimes, &rules),
    }
}

impl DeviceModel {
    /// The report for `key`, made on first use and kept until another entry or filter is asked for.
    pub fn report(&mut self, snapshot: &Snapshot, key: AnalysisKey) -> &DeviceReport {
        if self.report.as_ref().is_none_or(|(k, _)| *k != key) {
            self.report = None;
            let lifetimes = &self.blocks.lifetimes;
            let c = self
                .categories
                .get_or_insert_with(|| categorise(snapshot, lifetimes));
            let options = ReportOptions {
                event: key.0,
                hide_framework: key.1,
                ..ReportOptions::default()
            };
            let report = report_of(snapshot, lifetimes, &c.of, &c.names, &options);
            self.report = Some((key, report));
        }
        &self.report.as_ref().expect("made above").1
    }

    /// Categorises the block allocations (once).
    pub fn categories(&mut self, snapshot: &Snapshot) -> &Categories {
        let lifetimes = &self.blocks.lifetimes;
        self.categories
            .get_or_insert_with(|| categorise(snapshot, lifetimes))
    }

    /// Bytes per category live at `event`, in category order.
    pub fn category_totals(&mut self, snapshot: &Snapshot, event: i64) -> Vec<(String, u64)> {
        let lifetimes = &self.blocks.lifetimes;
        let c = self
            .categories
            .get_or_insert_with(|| categorise(snapshot, lifetimes));
        memograph_snapshot::analysis::categories::category_totals(lifetimes, &c.of, &c.names, event)
            .into_iter()
            .map(|t| (t.category, t.bytes))
            .collect()
    }
}

/// Detail level a fresh view starts at: everything for small traces, the largest allocations for huge
/// ones (the slider still goes to 100 %).
pub fn default_detail(allocations: usize) -> f64 {
    if allocations <= 50_000 {
        1.0
    } else {
        (50_000.0 / allocations as f64).max(0.01)
    }
}

impl DeviceModel {
    /// `time_us` of each entry of `device`'s trace, when all have one.
    pub fn times<'a>(&self, snapshot: &'a Snapshot, device: i64) -> Option<&'a [i64]> {
        self.has_times
            .then(|| snapshot.trace(device).time_us.as_slice())
    }

    /// What the first frame of the block timeline needs; [`Self::complete`] builds the rest, so a big
    /// file's timeline shows before the parts other views need are ready.
    pub fn new(snapshot: &Snapshot, device: i64) -> DeviceModel {
        let blocks = Lifetimes::of(snapshot, device);
        let detail = default_detail(blocks.allocations.len());
        let trace = snapshot.trace(device);
        let has_times = trace.has_time();
        DeviceModel {
            blocks: TimelineModel::new(blocks, detail),
            segments: None,
            versions: None,
            device,
            has_times,
            categories: None,
            report: None,
            rounding_waste: None,
            annotations: if has_times {
                annotation_spans(snapshot, device, &trace.time_us)
            } else {
                Vec::new()
            },
        }
    }

    /// Builds what [`Self::new`] left out (segment lifetimes, entry versions, rounding waste); does
    /// nothing the second time.
    pub fn complete(&mut self, snapshot: &Snapshot) -> &mut Self {
        if self.rounding_waste.is_none() {
            self.rounding_waste = Some(rounding_waste(snapshot, &self.blocks.lifetimes));
        }
        if self.segments.is_none() {
            let segments = Lifetimes::of_segments(snapshot, self.device);
            self.segments = Some(TimelineModel::new(segments, 1.0));
        }
        if self.versions.is_none() {
            let trace = snapshot.trace(self.device);
            self.versions = Some(memograph_snapshot::analysis::lifetimes::event_versions(
                trace,
            ));
        }
        self
    }

    /// The segment timeline. Panics before [`Self::complete`]: `store::with_model` completes every
    /// model it hands out.
    pub fn segments(&self) -> &TimelineModel {
        self.segments.as_ref().expect(NOT_COMPLETE)
    }

    /// One timeline (segments or blocks) to change, with the annotations and categories to draw it with.
    /// Panics for the segments before [`Self::complete`] (see [`Self::segments`]).
    pub fn timeline_parts(
        &mut self,
        segments: bool,
    ) -> (&mut TimelineModel, &[AnnotationSpan], Option<&Categories>) {
        let timeline = match segments {
            true => self.segments.as_mut().expect(NOT_COMPLETE),
            false => &mut self.blocks,
        };
        (timeline, &self.annotations, self.categories.as_ref())
    }

    /// Each entry's address version. Panics before [`Self::complete`] (see [`Self::segments`]).
    pub fn versions(&self) -> &[u32] {
        self.versions.as_deref().expect(NOT_COMPLETE)
    }

    /// Rounding waste of block allocation `allocation` (0 unless live at the snapshot). Panics before
    /// [`Self::complete`] (see [`Self::segments`]).
    pub fn rounding_waste(&self, allocation: u32) -> u64 {
        let waste = self.rounding_waste.as_ref().expect(NOT_COMPLETE);
        waste.get(&allocation).copied().unwrap_or(0)
    }
}

const NOT_COMPLETE: &str = "DeviceModel::complete builds the segments, versions and rounding waste";

/// Block size − requested size of every allocation still live at the snapshot whose block the snapshot
/// holds (`active_allocated` at the same address).
fn rounding_waste(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
) -> std::collections::HashMap<u32, u64> {
    use memograph_snapshot::BlockState;
    let by_addr: std::collections::HashMap<u64, u64> = snapshot
        .segments_of(lifetimes.device)
        .flat_map(|s| &s.blocks)
        .filter(|b| b.state == BlockState::ActiveAllocated && b.size > b.requested_size)
        .map(|b| (b.address, b.size - b.requested_size))
        .collect();
    lifetimes
        .allocations
        .iter()
        .enumerate()
        .filter(|(_, a)| a.free_event.is_none())
        .filter_map(|(i, a)| Some((i as u32, *by_addr.get(&a.addr)?)))
        .collect()
}

/// External annotations as spans of entries on one device's timeline (START/END matched by name).
#[derive(Debug, Clone, PartialEq)]
pub struct AnnotationSpan {
    pub name: String,
    pub start: f64,
    pub end: f64,
    /// Nesting row, so overlapping spans do not hide each other.
    pub row: usize,
}

/// Maps each START/END annotation of `device` to entry positions via `time_us` (needs times).
pub fn annotation_spans(snapshot: &Snapshot, device: i64, times: &[i64]) -> Vec<AnnotationSpan> {
    if times.is_empty() {
        return Vec::new();
    }
    let at = |t: i64| times.partition_point(|&x| x < t) as f64;
    let mut open: Vec<(String, f64)> = Vec::new();
    let mut spans = Vec::new();
    for a in snapshot
        .external_annotations
        .iter()
        .filter(|a| a.device == device)
    {
        let Some(t) = a.time_us else { continue };
        let name = snapshot.str(a.name).to_string();
        match snapshot.str(a.stage) {
            "START" => open.push((name, at(t))),
            "END" => {
                if let Some(k) = open.iter().rposition(|(n, _)| *n == name) {
                    let (name, start) = open.remove(k);
                    spans.push(AnnotationSpan {
                        name,
                        start,
                        end: at(t),
                        row: 0,
                    });
                }
            }
            _ => {}
        }
    }
    let end = times.len() as f64;
    spans.extend(open.into_iter().map(|(name, start)| AnnotationSpan {
        name,
        start,
        end,
        row: 0,
    }));
    spans.sort_by(|a, b| a.start.total_cmp(&b.start));
    // Greedy rows: each span goes to the first row whose last span ended before it starts.
    let mut row_ends: Vec<f64> = Vec::new();
    for s in &mut spans {
        let row = row_ends
            .iter()
            .position(|&e| e <= s.start)
            .unwrap_or(row_ends.len());
        if row == row_ends.len() {
            row_ends.push(s.end);
        } else {
            row_ends[row] = s.end;
        }
        s.row = row;
    }
    spans
}

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
pub fn allocator_state_at(model: &DeviceModel, event: i64) -> Vec<SegmentRow> {
    let mut rows: Vec<SegmentRow> = model
        .segments()
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
        if a.addr >= row.address + row.size {
            continue;
        }
        let pending_free = a
            .free_requested_event
            .is_some_and(|r| i64::from(r) <= event);
        row.blocks.push(BlockBox {
            address: a.addr,
            size: a.size,
            allocation: i as u32,
            pending_free,
            rounding_waste: model.rounding_waste(i as u32),
        });
    }
    for r in &mut rows {
        r.blocks.sort_by_key(|b| b.address);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Snapshot {
        let dir = std::env::var("MEMOGRAPH_FIXTURES")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| {
                std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures")
            });
        memograph_snapshot::read_bytes(&std::fs::read(dir.join(name)).unwrap()).unwrap()
    }

    #[test]
    fn the_fitted_range_max_covers_the_peak() {
        let s = fixture("kk_memory_ctx128_fullstep.pickle");
        let m = DeviceModel::new(&s, 0);
        let peak = m.blocks.peak;
        assert_eq!(
            m.blocks.max_in(0.0, m.blocks.layout.x_len as f64),
            peak.bytes
        );
        assert_eq!(
            m.blocks.max_in(peak.event as f64, peak.event as f64 + 1.0),
            peak.bytes
        );
        assert_eq!(m.blocks.detail, 1.0);
    }

    #[test]
    fn annotations_become_nested_spans() {
        let s = fixture("cs_memory_snapshot.pickle");
        let m = DeviceModel::new(&s, 0);
        let spans = &m.annotations;
        assert!(!spans.is_empty());
        assert!(spans.iter().all(|a| a.start <= a.end));
        assert_eq!(spans.len(), 2);
        assert!(spans
            .iter()
            .any(|a| a.name == "Optimizer.zero_grad#AdamW.zero_grad"));
    }

    #[test]
    fn the_allocator_state_at_the_end_holds_every_live_block_inside_a_segment() {
        let s = fixture("a0kuma_adam.pickle");
        let mut m = DeviceModel::new(&s, 0);
        m.complete(&s);
        let end = m.blocks.layout.x_len as i64 - 1;
        let rows = allocator_state_at(&m, end);
        assert_eq!(rows.len(), 7);
        let in_blocks: u64 = rows.iter().flat_map(|r| &r.blocks).map(|b| b.size).sum();
        assert_eq!(in_blocks, m.blocks.lifetimes.live_bytes_at(end));
        for r in &rows {
            for b in &r.blocks {
                assert!(b.address >= r.address && b.address + b.size <= r.address + r.size);
            }
        }
    }

    #[test]
    fn category_totals_at_the_peak_add_up_to_the_peak() {
        let s = fixture("kk_memory_ctx128_fullstep.pickle");
        let mut m = DeviceModel::new(&s, 0);
        let peak = m.blocks.peak;
        let totals = m.category_totals(&s, peak.event);
        assert_eq!(totals.iter().map(|t| t.1).sum::<u64>(), peak.bytes);
        assert_eq!(
            m.categories(&s).of.len(),
            m.blocks.lifetimes.allocations.len()
        );
    }

    #[test]
    fn the_report_follows_the_chosen_entry_and_adds_up_there() {
        let s = fixture("kk_memory_ctx128_fullstep.pickle");
        let mut m = DeviceModel::new(&s, 0);
        let peak = m.blocks.peak;
        assert_eq!(m.report(&s, (None, true)).live_bytes, peak.bytes);
        let live = m.blocks.lifetimes.live_bytes_at(5000);
        let at = m.report(&s, (Some(5000), true));
        assert_eq!(at.event, 5000);
        assert_eq!(at.live_bytes, live);
        assert_eq!(
            at.categories.iter().map(|c| c.bytes).sum::<u64>(),
            at.live_bytes
        );
        assert_eq!(at.live_set.all_allocations().len(), at.live_allocations);
    }

    #[test]
    fn blocks_live_at_the_snapshot_carry_their_rounding_waste() {
        let s = fixture("kk_memory_ctx128_fullstep.pickle");
        let mut m = DeviceModel::new(&s, 0);
        m.complete(&s);
        let end = m.blocks.layout.x_len as i64 - 1;
        let waste: u64 = allocator_state_at(&m, end)
            .iter()
            .flat_map(|r| &r.blocks)
            .map(|b| b.rounding_waste)
            .sum();
        let (_, totals) = memograph_snapshot::analysis::stats::segment_stats(&s, 0);
        // Every allocated block of the snapshot is live at the end of the trace: the map shows all waste.
        assert_eq!(waste, totals.rounding_waste);
        assert!(waste > 0);
    }

    #[test]
    fn huge_traces_start_at_a_detail_that_draws_fifty_thousand_bands() {
        assert_eq!(default_detail(7_095), 1.0);
        assert!((default_detail(500_000) - 0.1).abs() < 1e-9);
    }
}
