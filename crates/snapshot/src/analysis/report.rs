//! Where the memory goes on one device, in one value: the live set at an entry (the peak by default) by
//! call stack, category and component, its largest allocations, the allocator's efficiency, size
//! distributions, recommendations, and the categories over the whole trace. `memograph report` writes it
//! out as text, JSON and charts; the page's analysis panels draw the same value.

use super::categories::{categorize, category_totals_of, CategoryTotal, Rules};
use super::efficiency::{efficiency_sliced, recommendations_sliced, size_distributions_of};
use super::efficiency::{Bucket, Efficiency};
use super::efficiency::{Recommendation, LARGE_FREE_BLOCK};
use super::lifetimes::{reserved_series_sliced, Lifetimes, Peak};
use super::live_set::{live_set_tree_of, top_consumers_of, Consumer, Node};
use super::stats::{segment_stats, SegmentStats};
use super::summary::{summarize_sliced, DeviceSummary};
use super::trace_steps::{trace_steps_sliced, TraceSteps};
use crate::model::Snapshot;

/// The coarse roles memory plays in training, the way people budget it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    Parameters,
    Gradients,
    OptimizerState,
    Activations,
    /// Allocated before recording began: no stack says what it is.
    BeforeRecording,
    Other,
}

impl Component {
    pub const ALL: [Component; 6] = [
        Component::Parameters,
        Component::Gradients,
        Component::OptimizerState,
        Component::Activations,
        Component::BeforeRecording,
        Component::Other,
    ];

    /// The component a category belongs to: op categories (attention, matmul, experts) are activations;
    /// communication buffers, FSDP's flat buffers and anything unrecognised are "other".
    pub fn of_category(category: &str) -> Component {
        match category {
            "Parameter" => Component::Parameters,
            "Gradient" => Component::Gradients,
            "Optimizer state" => Component::OptimizerState,
            "Activation" | "Attention" | "Linear/MatMul" | "Expert/MoE" => Component::Activations,
            super::categories::BEFORE_RECORDING => Component::BeforeRecording,
            _ => Component::Other,
        }
    }

    /// The category a component is named after (whose colour it takes).
    pub fn category(self) -> &'static str {
        match self {
            Component::Parameters => "Parameter",
            Component::Gradients => "Gradient",
            Component::OptimizerState => "Optimizer state",
            Component::Activations => "Activation",
            Component::BeforeRecording => super::categories::BEFORE_RECORDING,
            Component::Other => super::categories::OTHER,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Component::Parameters => "Parameters",
            Component::Gradients => "Gradients",
            Component::OptimizerState => "Optimizer state",
            Component::Activations => "Activations",
            Component::BeforeRecording => "Before recording",
            Component::Other => "Other",
        }
    }
}

/// Bytes of one component at an entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ComponentTotal {
    pub component: Component,
    pub bytes: u64,
}

/// Live bytes per category sampled across the trace, for stacked-area charts of where memory goes over
/// time. Each sample stands for a run of entries and is taken at the run's highest live total, so peaks
/// survive the downsampling.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct CategorySeries {
    /// The trace entry of each sample (`-1`: before the first entry).
    pub entries: Vec<i64>,
    /// Category names, in the rules' order.
    pub categories: Vec<String>,
    /// `bytes[category][sample]`.
    pub bytes: Vec<Vec<u64>>,
    /// Reserved bytes at each sample.
    pub reserved: Vec<u64>,
}

impl CategorySeries {
    /// Live bytes at sample `k` over all categories.
    pub fn total_at(&self, k: usize) -> u64 {
        self.bytes.iter().map(|c| c[k]).sum()
    }

    /// The same samples summed into the five components, in [`Component::ALL`]'s order.
    pub fn by_component(&self) -> CategorySeries {
        let n = self.entries.len();
        let mut bytes = vec![vec![0u64; n]; Component::ALL.len()];
        for (name, series) in self.categories.iter().zip(&self.bytes) {
            let c = Component::of_category(name) as usize;
            for (acc, b) in bytes[c].iter_mut().zip(series) {
                *acc += b;
            }
        }
        CategorySeries {
            entries: self.entries.clone(),
            categories: Component::ALL
                .iter()
                .map(|c| c.label().to_string())
                .collect(),
            bytes,
            reserved: self.reserved.clone(),
        }
    }
}

/// Live bytes per category at up to `samples` entries spread over the trace (each at its run's maximum).
pub fn category_series(
    lifetimes: &Lifetimes,
    categories: &[u16],
    names: &[String],
    reserved: (u64, &[u64]),
    samples: usize,
) -> CategorySeries {
    crate::batch::run_ready(category_series_sliced(
        lifetimes,
        categories,
        names,
        reserved,
        samples,
        &mut crate::batch::NoPause,
    ))
}

/// [`category_series`], awaiting `pause` between batches of entries, allocations and changes.
pub async fn category_series_sliced<P: crate::batch::Pause>(
    lifetimes: &Lifetimes,
    categories: &[u16],
    names: &[String],
    reserved: (u64, &[u64]),
    samples: usize,
    pause: &mut P,
) -> CategorySeries {
    let n = lifetimes.live_after.len();
    let mut entries: Vec<i64> = Vec::new();
    if n == 0 {
        entries.push(-1);
    } else {
        let samples = samples.clamp(1, n);
        // In u64: `k * n` passes usize::MAX on wasm32 past 7 M entries at 600 samples.
        let at = |k: usize| (k as u64 * n as u64 / samples as u64) as usize;
        let mut scanned = 0;
        for k in 0..samples {
            let (lo, hi) = (at(k), at(k + 1).max(at(k) + 1));
            let run = &lifetimes.live_after[lo..hi];
            // First maximum of the run (`max_by_key` keeps the last).
            let (mut best, mut best_bytes) = (lo, run[0]);
            for (i, &b) in run.iter().enumerate() {
                if b > best_bytes {
                    (best, best_bytes) = (lo + i, b);
                }
            }
            entries.push(best as i64);
            scanned += run.len();
            if scanned >= crate::batch::BATCH {
                scanned = 0;
                pause.pause().await;
            }
        }
    }
    let mut running = vec![0u64; names.len()];
    let initial = |r: std::ops::Range<usize>| {
        for (i, a) in r.clone().zip(&lifetimes.allocations[r]) {
            if a.is_initial() {
                let c = &mut running[categories[i] as usize];
                *c = c.saturating_add(a.size);
            }
        }
    };
    crate::batch::ranges_paused(lifetimes.allocations.len(), initial, pause).await;
    let mut bytes = vec![Vec::with_capacity(entries.len()); names.len()];
    let mut next = 0;
    for &e in &entries {
        let from = next;
        while let Some(&(x, id)) = lifetimes.changes.get(next) {
            if i64::from(x) > e {
                break;
            }
            let a = &lifetimes.allocations[id as usize];
            let c = &mut running[categories[id as usize] as usize];
            if a.alloc_event() == Some(x) {
                *c = c.saturating_add(a.size);
            } else {
                *c = c.saturating_sub(a.size);
            }
            next += 1;
        }
        for (series, &b) in bytes.iter_mut().zip(&running) {
            series.push(b);
        }
        if next - from >= crate::batch::BATCH / 4 {
            pause.pause().await;
        }
    }
    let (start, reserved) = reserved;
    let reserved = entries
        .iter()
        .map(|&e| match e {
            -1 => start,
            e => reserved.get(e as usize).copied().unwrap_or(start),
        })
        .collect();
    CategorySeries {
        entries,
        categories: names.to_vec(),
        bytes,
        reserved,
    }
}

/// Options of a report.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The entry whose live set is analysed; `None`: the peak.
    pub event: Option<i64>,
    /// How many of the largest live allocations to list.
    pub top: usize,
    /// Samples of the category series.
    pub samples: usize,
    /// Hide torch, standard-library and C++ frames in the live-set tree.
    pub hide_framework: bool,
    /// Tree nodes under this share of the live bytes are merged into one "smaller" node per parent.
    pub tree_min_share: f64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            event: None,
            top: 50,
            samples: 600,
            hide_framework: true,
            tree_min_share: 0.001,
        }
    }
}

/// Everything `memograph report` says about one device.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DeviceReport {
    pub device: i64,
    pub summary: DeviceSummary,
    pub peak: Peak,
    /// The entry analysed (`-1`: before the first entry) and the bytes live there.
    pub event: i64,
    pub live_bytes: u64,
    pub live_allocations: usize,
    pub efficiency: Efficiency,
    /// Bytes per category live at `event`, in the rules' order (empty ones included).
    pub categories: Vec<CategoryTotal>,
    pub components: Vec<ComponentTotal>,
    pub top_consumers: Vec<Consumer>,
    pub live_set: Node,
    /// Sizes of the allocations live at `event`, and of the cached free blocks at the snapshot.
    pub live_sizes: Vec<Bucket>,
    pub free_sizes: Vec<Bucket>,
    pub large_free_block_threshold: u64,
    pub recommendations: Vec<Recommendation>,
    pub over_time: CategorySeries,
    /// The allocator's segments at the snapshot, by address.
    pub segments: Vec<SegmentStats>,
    /// The training steps the profiler's annotations mark in the trace, when two or more.
    pub steps: Option<TraceSteps>,
}

impl DeviceReport {
    /// Where the analysed entry stands: `at entry 1 234 of 19 342`, or `before the first entry`.
    pub fn at_text(&self) -> String {
        let at = crate::format::at_entry(self.event);
        if self.event < 0 {
            return at;
        }
        let entries: u64 = self.summary.events.values().sum();
        format!("{at} of {}", crate::format::grouped(entries))
    }

    /// The step of the trace the analysed entry falls in, where steps are marked: `, in step 3 of 12`
    /// (else empty).
    pub fn in_step_text(&self) -> String {
        self.steps
            .as_ref()
            .and_then(|steps| {
                let s = steps.step_of(self.event)?;
                Some(format!(
                    ", in step {} of {}",
                    crate::format::grouped(u64::from(s.step)),
                    crate::format::grouped(steps.steps.len() as u64)
                ))
            })
            .unwrap_or_default()
    }

    /// What a reader of a bug report wants first, as Markdown bullets (a line each): the peak (or the
    /// entry analysed, and the peak), what is live by component, the largest live allocation, the
    /// allocator, `fit` (the caller's line on how the device fits a GPU's memory, if any), and the
    /// recommendations. `memograph report`'s README.md and the page's "Copy findings" say them alike.
    pub fn findings(&self, fit: Option<&str>) -> String {
        use crate::format::{bytes, count, percent};
        use std::fmt::Write as _;
        let mut o = String::new();
        let live = count(self.live_allocations as u64, "allocation", "allocations");
        let at_peak = self.event == self.peak.event;
        if at_peak {
            let _ = writeln!(
                o,
                "- **Peak: {}** {}{}, with {live} live; {} reserved then.",
                bytes(self.peak.bytes),
                self.at_text(),
                self.in_step_text(),
                bytes(self.efficiency.reserved_at_peak)
            );
        } else {
            let _ = writeln!(
                o,
                "- **{}{}: {} live**, in {live}; the peak is {} {}.",
                crate::format::capitalised(&self.at_text()),
                self.in_step_text(),
                bytes(self.live_bytes),
                bytes(self.peak.bytes),
                crate::format::at_entry(self.peak.event)
            );
        }
        let mut components: Vec<_> = self.components.iter().filter(|c| c.bytes > 0).collect();
        components.sort_by_key(|c| std::cmp::Reverse(c.bytes));
        let parts: Vec<String> = components
            .iter()
            .map(|c| {
                let label = c.component.label().to_lowercase();
                format!(
                    "{label} {} ({:.0} %)",
                    bytes(c.bytes),
                    percent(c.bytes, self.live_bytes)
                )
            })
            .collect();
        if !parts.is_empty() {
            let when = if at_peak { "At the peak" } else { "Live then" };
            let _ = writeln!(o, "- {when}: {}.", parts.join(", "));
        }
        if let Some(c) = self.top_consumers.first() {
            let _ = writeln!(
                o,
                "- Largest live allocation: {} from `{}`.",
                bytes(c.bytes),
                c.frame
            );
        }
        if let Some(steps) = &self.steps {
            let _ = writeln!(o, "- {}", steps.finding());
        }
        let _ = writeln!(
            o,
            "- Allocator: {:.0} % of reserved is cached, not allocated, at the peak; fragmentation {:.2}.",
            self.efficiency.cache_overhead * 100.0,
            self.efficiency.fragmentation
        );
        if let Some(fit) = fit {
            let _ = writeln!(o, "- {fit}");
        }
        for rec in &self.recommendations {
            let _ = writeln!(o, "- **{}** {} ({})", rec.kind, rec.message, rec.evidence);
        }
        o
    }
}

/// Components from category totals, in [`Component::ALL`]'s order.
pub fn component_totals(categories: &[CategoryTotal]) -> Vec<ComponentTotal> {
    Component::ALL
        .iter()
        .map(|&component| ComponentTotal {
            component,
            bytes: categories
                .iter()
                .filter(|c| Component::of_category(&c.category) == component)
                .map(|c| c.bytes)
                .sum(),
        })
        .collect()
}

/// The report of `device` with the given category rules.
pub fn device_report(
    snapshot: &Snapshot,
    device: i64,
    rules: &Rules,
    options: &ReportOptions,
) -> DeviceReport {
    let lifetimes = Lifetimes::of(snapshot, device);
    let of = categorize(snapshot, &lifetimes, rules);
    report_of(snapshot, &lifetimes, &of, &rules.names(), options)
}

/// The report from a device's block lifetimes and their categories (`of[i]` indexes `names`), for callers
/// that already hold them (the page keeps both per device).
pub fn report_of(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    of: &[u16],
    names: &[String],
    options: &ReportOptions,
) -> DeviceReport {
    crate::batch::run_ready(report_sliced(
        snapshot,
        lifetimes,
        of,
        names,
        options,
        &mut crate::batch::NoPause,
    ))
}

/// [`report_of`], awaiting `pause` between its parts (and inside the longest).
pub async fn report_sliced<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    of: &[u16],
    names: &[String],
    options: &ReportOptions,
    pause: &mut P,
) -> DeviceReport {
    let device = lifetimes.device;
    let peak = lifetimes.peak_sliced(pause).await;
    let event = options.event.unwrap_or(peak.event);
    // The live set, found once (a scan of every allocation) for the four views of it below.
    let live = lifetimes.live_set_at_sliced(event, pause).await;
    let categories = category_totals_of(lifetimes, of, names, &live);
    pause.pause().await;
    let (start, reserved) = reserved_series_sliced(snapshot, device, pause).await;
    let series = (start, &reserved[..]);
    let over_time =
        category_series_sliced(lifetimes, of, names, series, options.samples, pause).await;
    pause.pause().await;
    let (live_sizes, free_sizes) = size_distributions_of(snapshot, lifetimes, device, &live);
    pause.pause().await;
    let mut top = top_consumers_of(snapshot, lifetimes, &live, options.top);
    for c in &mut top {
        c.category = Some(names[of[c.allocation as usize] as usize].clone());
    }
    pause.pause().await;
    let live_bytes = lifetimes.live_bytes_at(event);
    let mut live_set = live_set_tree_of(snapshot, lifetimes, &live, options.hide_framework);
    drop(live);
    live_set.prune((live_bytes as f64 * options.tree_min_share) as u64);
    pause.pause().await;
    let (segments, totals) = segment_stats(snapshot, device);
    let efficiency = efficiency_sliced((&segments, &totals), peak, series, pause).await;
    drop(reserved);
    pause.pause().await;
    let summary = summarize_sliced(snapshot, lifetimes, pause).await;
    let recommendations =
        recommendations_sliced(snapshot, lifetimes, device, &efficiency, pause).await;
    let steps = trace_steps_sliced(snapshot, lifetimes, pause).await;
    DeviceReport {
        device,
        summary,
        peak,
        event,
        live_bytes,
        live_allocations: categories.iter().map(|c| c.count as usize).sum(),
        recommendations,
        efficiency,
        components: component_totals(&categories),
        categories,
        top_consumers: top,
        live_set,
        live_sizes,
        free_sizes,
        large_free_block_threshold: LARGE_FREE_BLOCK,
        over_time,
        segments,
        steps,
    }
}
