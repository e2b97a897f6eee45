//! View models: what the views draw, computed from the engine's analyses. Plain data, no web types, so
//! they are tested natively; the components only wire signals to them and the renderers only draw them.

//!
//! A device's model is built part by part on first use (a cell per part): the block timeline's first
//! frame needs only the block lifetimes and their layout, and nothing can be asked for too early.

pub mod analysis;
pub mod compare;
pub mod lit;
pub mod share;
pub(crate) mod state;
pub mod steps;
mod timeline;

use std::cell::OnceCell;
use std::collections::HashMap;
use std::rc::Rc;

use memograph_snapshot::analysis::lifetimes::{Kind, Lifetimes};
use memograph_snapshot::analysis::oom::oom_marks_sliced;
pub use memograph_snapshot::analysis::oom::OomMark;
use memograph_snapshot::analysis::report::{report_sliced, DeviceReport, ReportOptions};
use memograph_snapshot::analysis::timeline::default_detail;
use memograph_snapshot::batch::{run_ready, NoPause, Pause};
use memograph_snapshot::format::grouped;
use memograph_snapshot::Snapshot;

pub use state::{allocator_state_at, describe_block, event_rows, rows_of, EventRow, SegmentRow};
pub use timeline::{SummaryOutline, TimelineModel, LIT_IN_A_FRAME};

/// A device's models: the Active Memory Timeline, and what the other views need, each part built on
/// first use.
pub struct DeviceModel {
    pub device: i64,
    pub blocks: TimelineModel,
    /// Whether every entry has a `time_us` (the times stay in the snapshot's trace: see [`Self::times`]).
    pub has_times: bool,
    /// Profiler annotations as spans of entries (needs `time_us`).
    pub annotations: Vec<AnnotationSpan>,
    /// Where the allocator ran out of memory (the trace's `oom` entries).
    pub ooms: Vec<OomMark>,
    /// The Active Cached Segment Timeline.
    segments: OnceCell<TimelineModel>,
    /// What the Allocator State History needs beyond the segment timeline.
    history: OnceCell<History>,
    /// Category names and each block allocation's category.
    categories: OnceCell<Rc<Categories>>,
    /// The analysis panels' reports and what each was made for (entry, framework frames hidden): the
    /// last one at the peak and the last one at another entry, so going back to the peak is at once.
    reports: Vec<(AnalysisKey, DeviceReport)>,
}

/// What a report was made for: the entry analysed (`None`: the peak) and whether framework frames are
/// hidden in its call-stack tree.
pub type AnalysisKey = (Option<i64>, bool);

/// What the Allocator State History needs beyond the segment timeline.
pub struct History {
    /// Each entry's address version (`b…_N`), for the event list.
    pub versions: Vec<u32>,
    /// Rounding waste (block size − requested size) of allocations still live at the snapshot, by
    /// allocation: the trace records only block sizes, the snapshot's blocks also what was requested.
    pub rounding_waste: HashMap<u32, u64>,
}

/// The state history's part of `lifetimes`' device, built in slices.
pub async fn history<P: Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    pause: &mut P,
) -> History {
    use memograph_snapshot::analysis::lifetimes::event_versions_sliced;
    let versions = event_versions_sliced(snapshot.trace(lifetimes.device), pause).await;
    History {
        versions,
        rounding_waste: rounding_waste(snapshot, lifetimes, pause).await,
    }
}

/// The built-in categories of a device's block allocations.
pub struct Categories {
    pub names: Vec<String>,
    /// Per allocation (index into the block lifetimes): index into `names`.
    pub of: Vec<u16>,
}

/// The built-in categories of `lifetimes`' allocations, built in slices (awaiting `pause`).
pub async fn categorise<P: Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    pause: &mut P,
) -> Categories {
    use memograph_snapshot::analysis::categories::{categorize_sliced, Rules};
    let rules = Rules::built_in();
    Categories {
        names: rules.names(),
        of: categorize_sliced(snapshot, lifetimes, &rules, pause).await,
    }
}

/// The Active Cached Segment Timeline of `device` (every segment drawn), built in slices.
pub async fn segment_timeline<P: Pause>(
    snapshot: &Snapshot,
    device: i64,
    pause: &mut P,
) -> TimelineModel {
    let lifetimes = Lifetimes::of_kind_sliced(snapshot, device, Kind::Segments, pause).await;
    TimelineModel::new_sliced(lifetimes, 1.0, pause).await
}

/// The analysis panels' report for `key`, built in slices.
pub async fn report<P: Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    categories: &Categories,
    key: AnalysisKey,
    pause: &mut P,
) -> DeviceReport {
    let options = ReportOptions {
        event: key.0,
        hide_framework: key.1,
        ..ReportOptions::default()
    };
    let c = categories;
    report_sliced(snapshot, lifetimes, &c.of, &c.names, &options, pause).await
}

impl DeviceModel {
    /// The block timeline of `device`; every other part waits until it is asked for. (The page builds
    /// it in slices: [`Self::of_lifetimes_sliced`].)
    #[cfg(test)]
    pub fn new(snapshot: &Snapshot, device: i64) -> DeviceModel {
        DeviceModel::of_lifetimes(snapshot, device, Lifetimes::of(snapshot, device))
    }

    /// [`Self::new`] from the device's block lifetimes, computed apart (the page computes them in a
    /// task of their own).
    #[cfg(test)]
    pub fn of_lifetimes(snapshot: &Snapshot, device: i64, blocks: Lifetimes) -> DeviceModel {
        run_ready(DeviceModel::of_lifetimes_sliced(
            snapshot,
            device,
            blocks,
            &mut NoPause,
        ))
    }

    /// The model of `device` from its block lifetimes (the tests' `of_lifetimes`), the first layout
    /// built in slices, awaiting `pause` between them.
    pub async fn of_lifetimes_sliced<P: Pause>(
        snapshot: &Snapshot,
        device: i64,
        blocks: Lifetimes,
        pause: &mut P,
    ) -> DeviceModel {
        let detail = default_detail(blocks.allocations.len());
        DeviceModel::at_detail_sliced(snapshot, device, blocks, detail, pause).await
    }

    /// [`Self::of_lifetimes_sliced`] with the timeline laid out at `detail` instead of the default
    /// one (the page's rehearsal: see `load::rehearsal`).
    pub async fn at_detail_sliced<P: Pause>(
        snapshot: &Snapshot,
        device: i64,
        blocks: Lifetimes,
        detail: f64,
        pause: &mut P,
    ) -> DeviceModel {
        let ooms = oom_marks_sliced(snapshot, device, &blocks, pause).await;
        let blocks = TimelineModel::new_sliced(blocks, detail, pause).await;
        let trace = snapshot.trace(device);
        let has_times = trace.has_time_sliced(pause).await;
        DeviceModel {
            device,
            blocks,
            has_times,
            ooms,
            annotations: if has_times {
                annotation_spans(snapshot, device, &trace.time_us)
            } else {
                Vec::new()
            },
            segments: OnceCell::new(),
            history: OnceCell::new(),
            categories: OnceCell::new(),
            reports: Vec::new(),
        }
    }

    /// `time_us` of each entry, when all have one.
    pub fn times<'a>(&self, snapshot: &'a Snapshot) -> Option<&'a [i64]> {
        self.has_times
            .then(|| snapshot.trace(self.device).time_us.as_slice())
    }

    /// The Active Cached Segment Timeline (every segment drawn).
    pub fn segments(&self, snapshot: &Snapshot) -> &TimelineModel {
        self.segments
            .get_or_init(|| run_ready(segment_timeline(snapshot, self.device, &mut NoPause)))
    }

    /// What the state history needs (the page builds it in the background: see [`Self::set_history`]).
    fn history(&self, snapshot: &Snapshot) -> &History {
        self.history
            .get_or_init(|| run_ready(history(snapshot, &self.blocks.lifetimes, &mut NoPause)))
    }

    /// Each entry's address version.
    pub fn versions(&self, snapshot: &Snapshot) -> &[u32] {
        &self.history(snapshot).versions
    }

    /// Rounding waste of block allocation `allocation` (0 unless live at the snapshot).
    pub fn rounding_waste(&self, snapshot: &Snapshot, allocation: u32) -> u64 {
        let waste = &self.history(snapshot).rounding_waste;
        waste.get(&allocation).copied().unwrap_or(0)
    }

    /// Whether the state history's parts (the segment timeline and [`History`]) are built.
    pub fn built_history(&self) -> bool {
        self.segments.get().is_some() && self.history.get().is_some()
    }

    /// Takes the state history's part, built apart.
    pub fn set_history(&mut self, history: History) {
        let _ = self.history.set(history);
    }

    /// The block allocations' categories.
    pub fn categories(&self, snapshot: &Snapshot) -> &Categories {
        self.categories.get_or_init(|| {
            let made = run_ready(categorise(snapshot, &self.blocks.lifetimes, &mut NoPause));
            Rc::new(made)
        })
    }

    /// One timeline (segments or blocks) to change, with the annotations, and the categories when
    /// `by_category`, to draw it with: what is built of them (nothing is built here; the page builds
    /// parts in the background, see `load::build`).
    pub fn timeline_parts(
        &mut self,
        segments: bool,
        by_category: bool,
    ) -> (
        Option<&mut TimelineModel>,
        &[AnnotationSpan],
        Option<&Categories>,
        &[OomMark],
    ) {
        let timeline = match segments {
            true => self.segments.get_mut(),
            false => Some(&mut self.blocks),
        };
        let categories = self
            .categories
            .get()
            .map(|c| &**c)
            .filter(|_| by_category && !segments);
        (timeline, &self.annotations, categories, &self.ooms)
    }

    /// Takes the segment timeline, built apart.
    pub fn set_segments(&mut self, segments: TimelineModel) {
        let _ = self.segments.set(segments);
    }

    /// The categories, if built.
    pub fn built_categories(&self) -> Option<&Categories> {
        self.categories.get().map(|c| &**c)
    }

    /// The categories, if built, shared (with a report being made apart).
    pub fn shared_categories(&self) -> Option<Rc<Categories>> {
        self.categories.get().cloned()
    }

    /// Takes the categories, built apart.
    pub fn set_categories(&mut self, categories: impl Into<Rc<Categories>>) {
        let _ = self.categories.set(categories.into());
    }

    /// The report for `key`, if made and kept (the last at the peak and the last at another entry).
    pub fn built_report(&self, key: AnalysisKey) -> Option<&DeviceReport> {
        self.reports.iter().find(|(k, _)| *k == key).map(|(_, r)| r)
    }

    /// Takes the report for `key`, made apart.
    pub fn set_report(&mut self, key: AnalysisKey, report: DeviceReport) {
        let at_peak = |k: &AnalysisKey| k.0.is_none();
        self.reports.retain(|(k, _)| at_peak(k) != at_peak(&key));
        self.reports.push((key, report));
    }

    /// The report for `key`, made on first use and kept until another entry or filter is asked for (the
    /// page builds reports in the background instead: see [`Self::set_report`]).
    #[cfg(test)]
    pub fn report(&mut self, snapshot: &Snapshot, key: AnalysisKey) -> &DeviceReport {
        if self.built_report(key).is_none() {
            let c = self.categories(snapshot);
            let made = run_ready(report(
                snapshot,
                &self.blocks.lifetimes,
                c,
                key,
                &mut NoPause,
            ));
            self.set_report(key, made);
        }
        self.built_report(key).expect("made above")
    }

    /// Bytes per category live at `event`, in category order.
    pub fn category_totals(&self, snapshot: &Snapshot, event: i64) -> Vec<(String, u64)> {
        let c = self.categories(snapshot);
        memograph_snapshot::analysis::categories::category_totals(
            &self.blocks.lifetimes,
            &c.of,
            &c.names,
            event,
        )
        .into_iter()
        .map(|t| (t.category, t.bytes))
        .collect()
    }
}

/// Block size − requested size of every allocation still live at the snapshot whose block the snapshot
/// holds (`active_allocated` at the same address).
async fn rounding_waste<P: Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    pause: &mut P,
) -> HashMap<u32, u64> {
    use memograph_snapshot::BlockState;
    let by_addr: HashMap<u64, u64> = snapshot
        .segments_of(lifetimes.device)
        .flat_map(|s| &s.blocks)
        .filter(|b| b.state == BlockState::ActiveAllocated && b.size > b.requested_size)
        .map(|b| (b.address, b.size - b.requested_size))
        .collect();
    let mut waste = HashMap::new();
    let all = &lifetimes.allocations;
    let live_at_end = |i: usize| Some((i as u32, *by_addr.get(&all[i].addr)?));
    let still_live = |i: &usize| all[*i].free_event().is_none();
    memograph_snapshot::batch::ranges_paused(
        all.len(),
        |range| waste.extend(range.filter(still_live).filter_map(live_at_end)),
        pause,
    )
    .await;
    waste
}

/// External annotations as spans of entries on one device's timeline (START/END matched by name).
#[derive(Debug, Clone, PartialEq)]
pub struct AnnotationSpan {
    pub name: String,
    pub start: f64,
    pub end: f64,
    /// Nesting row, so overlapping spans do not hide each other.
    pub row: usize,
    /// From its START to its END in microseconds (`None`: it never ended).
    pub micros: Option<i64>,
}

impl AnnotationSpan {
    /// What a pointer on it reads: its name, the entries it spans and how long it lasted.
    pub fn describe(&self) -> String {
        let (first, end) = (self.start as u64, self.end as u64);
        let entries = if end > first {
            format!("entries {}–{}", grouped(first), grouped(end - 1))
        } else {
            format!("at entry {}, no allocator event during it", grouped(first))
        };
        let lasted = match self.micros {
            Some(us) => format!(" · {}", memograph_snapshot::format::micros(us)),
            None => " · not ended when the snapshot was taken".to_string(),
        };
        format!("{}\nprofiler annotation · {entries}{lasted}", self.name)
    }
}

/// The spans of annotation row `row` that reach into entries `[x0, x1]`, described one per paragraph
/// (`None` when there are none): what the strip above the plot says under the pointer.
pub fn describe_annotations(
    spans: &[AnnotationSpan],
    row: usize,
    x0: f64,
    x1: f64,
) -> Option<String> {
    let found: Vec<String> = spans
        .iter()
        .filter(|a| a.row == row && a.start <= x1 && a.end >= x0)
        .map(AnnotationSpan::describe)
        .collect();
    (!found.is_empty()).then(|| found.join("\n\n"))
}

/// Where a key that steps through `n` marks in order goes from mark `at` (none yet, or one from a list
/// since changed, when out of range): the next one (`forward`) or the previous, round at either end;
/// from none, the first or the last. `None` when there are none. Out-of-memory marks and profiler
/// annotations are stepped through so on the timeline.
pub fn cycled(at: Option<usize>, n: usize, forward: bool) -> Option<usize> {
    if n == 0 {
        return None;
    }
    Some(match at.filter(|&k| k < n) {
        Some(k) if forward => (k + 1) % n,
        Some(k) => (k + n - 1) % n,
        None if forward => 0,
        None => n - 1,
    })
}

/// The marks whose moment lies within entries `[x0, x1]`, described one per paragraph (`None`: none).
pub fn describe_ooms(marks: &[OomMark], x0: f64, x1: f64) -> Option<String> {
    let found: Vec<String> = marks
        .iter()
        .filter(|m| (x0..=x1).contains(&(f64::from(m.entry) + 0.5)))
        .map(OomMark::describe)
        .collect();
    (!found.is_empty()).then(|| found.join("\n\n"))
}

/// Maps each START/END annotation of `device` to entry positions via `time_us` (needs times).
pub fn annotation_spans(snapshot: &Snapshot, device: i64, times: &[i64]) -> Vec<AnnotationSpan> {
    if times.is_empty() {
        return Vec::new();
    }
    let at = |t: i64| memograph_snapshot::entry_at_time(times, t) as f64;
    let mut open: Vec<(String, f64, i64)> = Vec::new();
    let mut spans = Vec::new();
    for a in snapshot
        .external_annotations
        .iter()
        .filter(|a| a.device == device)
    {
        let Some(t) = a.time_us else { continue };
        let name = snapshot.str(a.name).to_string();
        match snapshot.str(a.stage) {
            "START" => open.push((name, at(t), t)),
            "END" => {
                if let Some(k) = open.iter().rposition(|(n, _, _)| *n == name) {
                    let (name, start, began) = open.remove(k);
                    spans.push(AnnotationSpan {
                        name,
                        start,
                        end: at(t),
                        row: 0,
                        micros: Some(t.saturating_sub(began)),
                    });
                }
            }
            _ => {}
        }
    }
    let end = times.len() as f64;
    spans.extend(open.into_iter().map(|(name, start, _)| AnnotationSpan {
        name,
        start,
        end,
        row: 0,
        micros: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A real fixture (tier 2), or `None` with a note when the shared fixtures are absent.
    fn fixture(name: &str) -> Option<Snapshot> {
        let bytes = memograph_snapshot::testing::fixture(name)?;
        Some(memograph_snapshot::read_bytes(&bytes).unwrap())
    }

    #[test]
    fn nothing_live_is_drawn_as_nothing_in_a_view_of_at_least_a_byte() {
        // A live area of one byte filled an axis of one, on a snapshot without memory.
        let mut s =
            memograph_snapshot::read_bytes(&memograph_snapshot::synth::pickle(40).bytes).unwrap();
        s.device_traces.clear();
        s.segments.clear();
        let m = DeviceModel::new(&s, 0);
        assert_eq!(m.blocks.max_in(0.0, 1.0), 0);
        assert!(m.blocks.fitted(0.0, 1.0).y_max >= 1.0);
    }

    #[test]
    fn the_fitted_range_max_covers_the_peak() {
        let Some(s) = fixture("kk_memory_ctx128_fullstep.pickle") else {
            return;
        };
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
    fn an_out_of_memory_entry_is_marked_with_what_was_asked_and_what_was_free() {
        // Recorded on an H200 (PyTorch 2.11): a 4 MiB tensor, then a request the device cannot hold.
        use memograph_snapshot::Action;
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/oom.pickle");
        let s = memograph_snapshot::read_bytes(&std::fs::read(path).unwrap()).unwrap();
        let m = DeviceModel::new(&s, 0);
        let trace = s.trace(0);
        let oom = (0..trace.len())
            .find(|&i| trace.action[i] == Action::Oom)
            .unwrap();
        let entry = trace.get(oom);
        assert_eq!(m.ooms.len(), 1);
        let mark = &m.ooms[0];
        assert_eq!(mark.entry as usize, oom);
        assert_eq!(mark.requested, entry.size);
        assert_eq!(mark.device_free, entry.device_free);
        assert!(mark.device_free.is_some_and(|f| f > 0));
        // The reference's peak: the 4 MiB tensor, live when the request failed.
        assert_eq!(mark.allocated, 4 << 20);
        assert!(mark.site.as_deref().is_some_and(|s| s.contains(".py:")));
        let text = mark.describe();
        assert!(
            text.starts_with(&format!("out of memory at entry {oom}\na request of ")),
            "{text}"
        );
        // The fixture's one 20 MiB segment held the 4 MiB tensor.
        assert_eq!(mark.reserved, 20 << 20);
        assert!(
            text.contains(" free on the device\nPyTorch held 4.0 MiB allocated, 20.0 MiB reserved (16.0 MiB cached but free)"),
            "{text}"
        );
        assert!(!text.contains("fragmentation"), "{text}");
        // More cached than asked for, yet out of memory: the cache is in pieces.
        let split = OomMark {
            requested: 1 << 20,
            allocated: 1 << 30,
            reserved: (1 << 30) + (8 << 20),
            ..mark.clone()
        };
        assert!(split.describe().contains("(8.0 MiB cached but free)\nmore than the request was cached but free, in pieces: fragmentation"));
        // A pointer within the entry's column finds it; one an entry away does not.
        let at = f64::from(mark.entry);
        assert_eq!(describe_ooms(&m.ooms, at, at + 1.0), Some(text));
        assert_eq!(describe_ooms(&m.ooms, at + 1.0, at + 2.0), None);
        // A trace without one has none.
        let plain = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pools.pickle");
        let s = memograph_snapshot::read_bytes(&std::fs::read(plain).unwrap()).unwrap();
        assert!(DeviceModel::new(&s, 0).ooms.is_empty());
    }

    #[test]
    fn annotations_become_nested_spans() {
        let Some(s) = fixture("cs_memory_snapshot.pickle") else {
            return;
        };
        let m = DeviceModel::new(&s, 0);
        let spans = &m.annotations;
        assert!(!spans.is_empty());
        assert!(spans.iter().all(|a| a.start <= a.end));
        assert_eq!(spans.len(), 2);
        assert!(spans
            .iter()
            .any(|a| a.name == "Optimizer.zero_grad#AdamW.zero_grad"));
        // Both last under a tenth of a second and hold no allocator event: a pointer on their strip
        // reads their names (the strip is too narrow to label).
        let zero_grad = spans
            .iter()
            .find(|a| a.name.starts_with("Optimizer"))
            .unwrap();
        assert_eq!(zero_grad.micros, Some(31));
        let text = describe_annotations(
            spans,
            zero_grad.row,
            zero_grad.start - 0.5,
            zero_grad.start + 0.5,
        )
        .unwrap();
        assert!(
            text.contains("Optimizer.zero_grad#AdamW.zero_grad\nprofiler annotation · at entry")
        );
        assert!(text.contains("no allocator event during it · 31 µs"));
        let loader = spans
            .iter()
            .find(|a| a.name.starts_with("enumerate"))
            .unwrap();
        assert_eq!(loader.micros, Some(78_625));
        assert!(loader.describe().ends_with(" · 78.6 ms"));
        assert_eq!(describe_annotations(spans, 1, 0.0, 1e9), None);
    }

    #[test]
    fn stepping_through_marks_goes_round_and_starts_from_either_end() {
        assert_eq!(cycled(None, 0, true), None);
        assert_eq!(cycled(Some(2), 0, false), None);
        assert_eq!(cycled(None, 3, true), Some(0));
        assert_eq!(cycled(None, 3, false), Some(2));
        assert_eq!(cycled(Some(0), 3, true), Some(1));
        assert_eq!(cycled(Some(2), 3, true), Some(0));
        assert_eq!(cycled(Some(0), 3, false), Some(2));
        assert_eq!(cycled(Some(1), 3, false), Some(0));
        // A position from a longer list (another device's) counts as none.
        assert_eq!(cycled(Some(7), 3, true), Some(0));
        assert_eq!(cycled(Some(7), 3, false), Some(2));
        assert_eq!(cycled(Some(0), 1, true), Some(0));
    }

    #[test]
    fn an_annotation_names_the_entries_it_spans_and_says_when_it_never_ended() {
        let span = AnnotationSpan {
            name: "forward".into(),
            start: 10.0,
            end: 1510.0,
            row: 0,
            micros: None,
        };
        assert_eq!(
            span.describe(),
            "forward\nprofiler annotation · entries 10–1 509 · not ended when the snapshot was taken"
        );
        let long = AnnotationSpan {
            micros: Some(2_500_000),
            ..span
        };
        assert!(long.describe().ends_with(" · 2.500 s"));
        assert!(describe_annotations(std::slice::from_ref(&long), 0, 1509.0, 1600.0).is_some());
        assert!(describe_annotations(&[long], 0, 1511.0, 1600.0).is_none());
    }

    #[test]
    fn the_allocator_state_at_the_end_holds_every_live_block_inside_a_segment() {
        let Some(s) = fixture("a0kuma_adam.pickle") else {
            return;
        };
        let m = DeviceModel::new(&s, 0);
        let end = m.blocks.layout.x_len as i64 - 1;
        let rows = allocator_state_at(&m, &s, end);
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
        let Some(s) = fixture("kk_memory_ctx128_fullstep.pickle") else {
            return;
        };
        let m = DeviceModel::new(&s, 0);
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
        let Some(s) = fixture("kk_memory_ctx128_fullstep.pickle") else {
            return;
        };
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
        // The peak's report is kept beside the last other entry's; a third entry replaces the second.
        assert!(m.built_report((None, true)).is_some());
        m.report(&s, (Some(6000), true));
        assert!(m.built_report((None, true)).is_some());
        assert!(m.built_report((Some(5000), true)).is_none());
        assert_eq!(
            m.built_report((Some(6000), true)).map(|r| r.event),
            Some(6000)
        );
    }

    #[test]
    fn blocks_live_at_the_snapshot_carry_their_rounding_waste() {
        let Some(s) = fixture("kk_memory_ctx128_fullstep.pickle") else {
            return;
        };
        let m = DeviceModel::new(&s, 0);
        let end = m.blocks.layout.x_len as i64 - 1;
        let waste: u64 = allocator_state_at(&m, &s, end)
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
    fn every_part_is_built_on_first_use_in_any_order() {
        let s =
            memograph_snapshot::read_bytes(&memograph_snapshot::synth::pickle(40).bytes).unwrap();
        let mut m = DeviceModel::new(&s, 0);
        // The state history before the segment timeline, the report before the categories: no order.
        let end = m.blocks.layout.x_len as i64 - 1;
        let rows = allocator_state_at(&m, &s, end);
        let live: u64 = rows.iter().flat_map(|r| &r.blocks).map(|b| b.size).sum();
        assert_eq!(live, m.blocks.lifetimes.live_bytes_at(end));
        let peak = m.blocks.peak.bytes;
        assert_eq!(m.report(&s, (None, true)).live_bytes, peak);
        assert_eq!(m.versions(&s).len(), s.trace(0).len());
        let rows = event_rows(&m, &s, 0..3);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].index, 0);
        assert!(rows.iter().all(|r| !r.action.is_empty()));
        m.segments(&s);
        let (t, _, cats, _) = m.timeline_parts(true, true);
        assert!(cats.is_none(), "segments are never coloured by category");
        let t = t.unwrap();
        assert_eq!(t.peak.bytes, t.lifetimes.peak().bytes);
    }

    /// Checks each allocation's rounding waste the long way (the block the snapshot holds at its
    /// address, while live at the end); how many have some.
    fn rounding_waste_as_the_snapshot_says(s: &Snapshot, m: &DeviceModel) -> usize {
        use memograph_snapshot::BlockState;
        let mut wasted = 0;
        for (i, a) in m.blocks.lifetimes.allocations.iter().enumerate() {
            let block = s
                .segments_of(m.device)
                .flat_map(|g| &g.blocks)
                .find(|b| b.address == a.addr && b.state == BlockState::ActiveAllocated)
                .filter(|_| a.free_event().is_none());
            let expected = block.map_or(0, |b| b.size - b.requested_size);
            assert_eq!(m.rounding_waste(s, i as u32), expected, "allocation {i}");
            wasted += usize::from(expected > 0);
        }
        wasted
    }

    #[test]
    fn rounding_waste_is_known_for_the_blocks_the_snapshot_holds() {
        let Some(s) = fixture("kk_memory_ctx128_fullstep.pickle") else {
            return;
        };
        let m = DeviceModel::new(&s, 0);
        assert!(rounding_waste_as_the_snapshot_says(&s, &m) > 0);
    }

    /// A pause that really suspends: pending once, then ready (counting its pauses).
    struct Yield(u32);

    impl Pause for Yield {
        fn pause(&mut self) -> impl std::future::Future<Output = ()> {
            self.0 += 1;
            let mut waited = false;
            std::future::poll_fn(move |cx| {
                if std::mem::replace(&mut waited, true) {
                    return std::task::Poll::Ready(());
                }
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            })
        }
    }

    #[test]
    fn parts_built_apart_in_slices_take_their_place_as_built_on_first_use() {
        use memograph_snapshot::analysis::timeline::timeline_layout;
        let s =
            memograph_snapshot::read_bytes(&memograph_snapshot::synth::pickle(300).bytes).unwrap();
        let mut apart = DeviceModel::new(&s, 0);
        let mut whole = DeviceModel::new(&s, 0);
        let (t, _, c, _) = apart.timeline_parts(true, true);
        assert!(
            t.is_none() && c.is_none(),
            "nothing is built by asking what is built"
        );
        assert!(apart.built_categories().is_none() && apart.built_report((None, true)).is_none());

        let c = run_ready(categorise(&s, &apart.blocks.lifetimes, &mut NoPause));
        apart.set_categories(c);
        assert_eq!(
            apart.built_categories().unwrap().of,
            whole.categories(&s).of
        );
        let r = run_ready(report(
            &s,
            &apart.blocks.lifetimes,
            apart.built_categories().unwrap(),
            (Some(100), false),
            &mut NoPause,
        ));
        apart.set_report((Some(100), false), r);
        assert!(apart.built_report((None, false)).is_none());
        assert_eq!(
            serde_json::to_string(apart.built_report((Some(100), false)).unwrap()).unwrap(),
            serde_json::to_string(whole.report(&s, (Some(100), false))).unwrap()
        );

        apart.set_segments(run_ready(segment_timeline(&s, 0, &mut NoPause)));
        let (t, _, _, _) = apart.timeline_parts(true, false);
        assert_eq!(t.unwrap().layout, whole.segments(&s).layout);

        assert!(!apart.built_history());
        let mut pause = Yield(0);
        let h = run_ready(history(&s, &apart.blocks.lifetimes, &mut pause));
        assert!(pause.0 >= 2, "{} pauses", pause.0);
        apart.set_history(h);
        assert!(apart.built_history());
        assert_eq!(
            apart.versions(&s),
            memograph_snapshot::analysis::lifetimes::event_versions(s.trace(0))
        );
        rounding_waste_as_the_snapshot_says(&s, &apart);

        assert!(!apart.blocks.is_at(0.25));
        let layout = timeline_layout(&apart.blocks.lifetimes, 0.25);
        let summary = SummaryOutline::new(&layout.summary);
        apart.blocks.set_layout(layout, summary, 0.25);
        whole.blocks.set_detail(0.25);
        assert!(apart.blocks.is_at(0.25));
        assert_eq!(apart.blocks.layout, whole.blocks.layout);
        assert_eq!(apart.blocks.summary, whole.blocks.summary);
    }

    #[test]
    fn huge_traces_start_at_a_detail_that_draws_fifty_thousand_bands() {
        assert_eq!(default_detail(7_095), 1.0);
        assert!((default_detail(500_000) - 0.1).abs() < 1e-9);
    }

    #[test]
    fn a_categorys_allocations_are_found_once_and_kept_until_another_is_asked_for() {
        let s =
            memograph_snapshot::read_bytes(&memograph_snapshot::synth::pickle(60).bytes).unwrap();
        let m = DeviceModel::new(&s, 0);
        let c = m.categories(&s);
        let k = c.of[0];
        let all = m.blocks.category_members(c, k);
        let wanted: Vec<u32> = (0..c.of.len() as u32)
            .filter(|&i| c.of[i as usize] == k)
            .collect();
        assert_eq!(*all, wanted);
        assert!(std::sync::Arc::ptr_eq(
            &all,
            &m.blocks.category_members(c, k)
        ));
        let other = (k + 1) % c.names.len() as u16;
        let others = m.blocks.category_members(c, other);
        assert!(others.iter().all(|&i| c.of[i as usize] == other));
        assert!(!std::sync::Arc::ptr_eq(
            &all,
            &m.blocks.category_members(c, k)
        ));
    }
}
