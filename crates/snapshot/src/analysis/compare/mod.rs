//! Comparing runs. A comparison keeps of each file and device only a [`Digest`] (its peak figures, its
//! components, a downsampled live curve and the live set at the peak as a call-stack tree): small
//! whatever the file's size, so many files can be compared at once. From digests come the peak table
//! ([`peak_rows`], with a baseline and deltas), the call-stack diff of two live sets ([`diff`], whose
//! deltas add up exactly; written out as text or Markdown by [`diff_text`]), the call paths that grew
//! ([`grown_sites`]), and the rank strip ([`ranks()`]).
//! [`config_from_name`] reads a sweep's knobs (`ctx512`, `bf16`, `rank3`…) out of file names.

use std::collections::{BTreeMap, HashMap};

use super::categories::{categorize_sliced, category_totals_of, CategoryTotal, Rules};
use super::lifetimes::{reserved_series_sliced, Kind, Lifetimes};
use super::live_set::{allocation_site, live_set_tree_of, Node};
use super::report::{component_totals, ComponentTotal};
use super::trace_steps::{trace_steps_sliced, TraceSteps};
use crate::model::{Action, Snapshot};

mod names;
mod paths;
mod ranks;
mod table;
mod written;

pub use names::{common_folder, config_from_name, within};
pub use paths::{diff, grown_sites, DiffNode, Presence, SiteDelta};
pub use ranks::{rank_sets, ranks, RankSet, RankStrip, OUTLIER_SHARE};
pub use table::{config_keys, delta, peak_rows, peak_table, zero_columns, Column, Row, Table};
pub use written::{diff_text, grown_text, taken_at, tree_text, GROWN_LISTED};

/// Points of a digest's live curve, at most.
pub const CURVE_POINTS: usize = 1000;

/// What a comparison keeps of one device of one file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Digest {
    /// The file's name (as opened) and size in bytes.
    pub file: String,
    pub file_bytes: u64,
    pub device: i64,
    /// Whether this is the file's default device (the one with the longest trace).
    pub default_device: bool,
    /// As `summary`'s figures (the reference files' definitions).
    pub timeline_peak_bytes: u64,
    pub peak_event_index: i64,
    /// Reserved bytes right after the peak's entry, and at most over the trace.
    pub reserved_at_peak_bytes: u64,
    pub max_reserved_bytes: u64,
    /// Live at the peak, by component and by category.
    pub components: Vec<ComponentTotal>,
    pub categories: Vec<CategoryTotal>,
    pub largest_allocation_bytes: u64,
    pub allocations: usize,
    pub entries: usize,
    /// Where the first `oom` entry is (see [`OomPoint`]); `None` when the trace holds none.
    #[serde(default)]
    pub oom_at: Option<OomPoint>,
    /// Knobs read from the file name (see [`config_from_name`]).
    pub config: BTreeMap<String, String>,
    pub curve: Curve,
    /// `external_annotations` of this device that could be placed on the trace: (name, entry).
    pub marks: Vec<(String, i64)>,
    /// The entry the live set and sites were taken at (the peak's unless asked for another).
    #[serde(default)]
    pub live_entry: Option<i64>,
    /// The live set at the peak (or `live_entry`), framework frames hidden, unpruned (so diffs add up
    /// exactly).
    pub live_set: Node,
    /// The live set at the peak by where each allocation was made (the innermost user frame).
    pub sites: Vec<Site>,
    /// The training steps the trace's annotations mark, when two or more (see [`super::trace_steps`]).
    #[serde(default)]
    pub steps: Option<TraceSteps>,
}

impl Digest {
    /// Whether the trace holds an `oom` entry.
    pub fn oom(&self) -> bool {
        self.oom_at.is_some()
    }

    /// Names the digest after the file it is of: its name, size and the config the name tells.
    pub fn name_after(&mut self, file: &str, file_bytes: u64) {
        self.file = file.to_string();
        self.file_bytes = file_bytes;
        self.config = config_from_name(file);
    }
}

/// Where a trace first ran out of memory: its entry, microseconds since the trace's first entry (when
/// every entry has a time) and the bytes live then, to be placed on its curve; with the request that
/// failed, what the driver said was free (when the entry says) and the bytes PyTorch had reserved,
/// which tell what the device gave the process (see [`fit::usable`](super::fit::usable)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OomPoint {
    pub entry: i64,
    pub time_us: Option<i64>,
    pub bytes: u64,
    #[serde(default)]
    pub requested: u64,
    #[serde(default)]
    pub device_free: Option<u64>,
    #[serde(default)]
    pub reserved: u64,
}

/// Live bytes over the trace, downsampled: each point stands for a run of entries and is taken at the
/// run's highest total, so the peak survives.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Curve {
    /// The trace entry of each point (`-1`: before the first entry).
    pub entries: Vec<i64>,
    pub bytes: Vec<u64>,
    /// Microseconds since the trace's first entry, when every entry has a time; else empty.
    pub time_us: Vec<i64>,
}

/// Bytes live at an entry that were allocated at one place.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Site {
    pub site: String,
    pub bytes: u64,
    pub count: u64,
}

/// The digest of every device of `snapshot` (empty devices left out), named `file`.
pub fn digests(snapshot: &Snapshot, rules: &Rules, file: &str, file_bytes: u64) -> Vec<Digest> {
    crate::batch::run_ready(digests_sliced(
        snapshot,
        rules,
        file,
        file_bytes,
        &mut crate::batch::NoPause,
    ))
}

/// [`digests`], awaiting `pause` between batches (the page makes an open file's so, on its thread).
pub async fn digests_sliced<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    rules: &Rules,
    file: &str,
    file_bytes: u64,
    pause: &mut P,
) -> Vec<Digest> {
    let mut made = Vec::new();
    for device in snapshot.devices() {
        let lifetimes = Lifetimes::of_kind_sliced(snapshot, device, Kind::Blocks, pause).await;
        let mut d = digest_at_sliced(snapshot, &lifetimes, rules, None, pause).await;
        d.name_after(file, file_bytes);
        d.default_device = snapshot.default_device() == Some(device);
        made.push(d);
    }
    made
}

/// The digest of one device of `snapshot`, its live set at the peak, named `file`.
pub fn digest_of(
    snapshot: &Snapshot,
    device: i64,
    rules: &Rules,
    file: &str,
    file_bytes: u64,
) -> Digest {
    let lifetimes = Lifetimes::of(snapshot, device);
    let mut d = digest_at(snapshot, &lifetimes, rules, None);
    d.name_after(file, file_bytes);
    d.default_device = snapshot.default_device() == Some(device);
    d
}

/// The digest of one device from its block lifetimes, with the live set taken at `event` (`None`: the
/// peak). File fields are left empty for the caller.
pub fn digest_at(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    rules: &Rules,
    event: Option<i64>,
) -> Digest {
    crate::batch::run_ready(digest_at_sliced(
        snapshot,
        lifetimes,
        rules,
        event,
        &mut crate::batch::NoPause,
    ))
}

/// [`digest_at`], awaiting `pause` between its parts (and inside the longest).
pub async fn digest_at_sliced<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    rules: &Rules,
    event: Option<i64>,
    pause: &mut P,
) -> Digest {
    let device = lifetimes.device;
    let trace = snapshot.trace(device);
    let peak = lifetimes.peak_sliced(pause).await;
    let event = event.unwrap_or(peak.event);
    let names = rules.names();
    let of = categorize_sliced(snapshot, lifetimes, rules, pause).await;
    let live = lifetimes.live_set_at_sliced(event, pause).await;
    let categories = category_totals_of(lifetimes, &of, &names, &live);
    let sites = sites_of(snapshot, lifetimes, &live);
    pause.pause().await;
    let live_set = live_set_tree_of(snapshot, lifetimes, &live, true);
    drop(live);
    pause.pause().await;
    let (start, reserved) = reserved_series_sliced(snapshot, device, pause).await;
    let reserved_at = |e: i64| match e {
        -1 => start,
        e => reserved.get(e as usize).copied().unwrap_or(start),
    };
    let oom_at = trace
        .action
        .iter()
        .position(|&a| a == Action::Oom)
        .map(|i| OomPoint {
            entry: i as i64,
            time_us: trace
                .has_time()
                .then(|| trace.time_us[i].saturating_sub(trace.time_us[0])),
            bytes: lifetimes.live_bytes_at(i as i64),
            requested: trace.get(i).size,
            device_free: trace.get(i).device_free,
            reserved: reserved_at(i as i64),
        });
    let max_reserved = reserved.iter().copied().fold(start, u64::max);
    let reserved_at_peak = reserved_at(peak.event);
    drop(reserved);
    pause.pause().await;
    let curve = curve(snapshot, lifetimes, CURVE_POINTS);
    pause.pause().await;
    let steps = trace_steps_sliced(snapshot, lifetimes, pause).await;
    Digest {
        file: String::new(),
        file_bytes: 0,
        device,
        default_device: false,
        timeline_peak_bytes: peak.bytes,
        peak_event_index: peak.event,
        reserved_at_peak_bytes: reserved_at_peak,
        max_reserved_bytes: max_reserved,
        components: component_totals(&categories),
        categories,
        largest_allocation_bytes: lifetimes
            .allocations
            .iter()
            .map(|a| a.size)
            .max()
            .unwrap_or(0),
        allocations: lifetimes.allocations.len(),
        entries: trace.len(),
        oom_at,
        config: BTreeMap::new(),
        curve,
        marks: marks(snapshot, device),
        live_entry: Some(event),
        live_set,
        sites,
        steps,
    }
}

/// Bytes of `live` (indices into `lifetimes.allocations`) by the place each was allocated at, most
/// first.
pub fn sites_of(snapshot: &Snapshot, lifetimes: &Lifetimes, live: &[u32]) -> Vec<Site> {
    let mut sites: HashMap<crate::model::StackId, (u64, u64)> = HashMap::new();
    for &i in live {
        let a = &lifetimes.allocations[i as usize];
        let s = sites.entry(a.stack).or_default();
        s.0 = s.0.saturating_add(a.size);
        s.1 += 1;
    }
    let mut by_site: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (stack, (bytes, count)) in sites {
        let s = by_site.entry(allocation_site(snapshot, stack)).or_default();
        s.0 = s.0.saturating_add(bytes);
        s.1 += count;
    }
    let mut sites: Vec<Site> = by_site
        .into_iter()
        .map(|(site, (bytes, count))| Site { site, bytes, count })
        .collect();
    sites.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.site.cmp(&b.site)));
    sites
}

/// Live bytes at up to `points` entries spread over the trace, each at its run's highest total.
pub fn curve(snapshot: &Snapshot, lifetimes: &Lifetimes, points: usize) -> Curve {
    let n = lifetimes.live_after.len();
    let mut c = Curve::default();
    if n == 0 {
        c.entries.push(-1);
        c.bytes.push(lifetimes.initial_bytes);
        return c;
    }
    let points = points.clamp(1, n);
    // In u64: `k * n` passes usize::MAX on wasm32 for long traces.
    let at = |k: usize| (k as u64 * n as u64 / points as u64) as usize;
    for k in 0..points {
        let (lo, hi) = (at(k), at(k + 1).max(at(k) + 1));
        let (mut best, mut best_bytes) = (lo, lifetimes.live_after[lo]);
        for (i, &b) in lifetimes.live_after[lo..hi].iter().enumerate() {
            if b > best_bytes {
                (best, best_bytes) = (lo + i, b);
            }
        }
        c.entries.push(best as i64);
        c.bytes.push(best_bytes);
    }
    let trace = snapshot.trace(lifetimes.device);
    if trace.has_time() {
        let t0 = trace.time_us[0];
        c.time_us = c
            .entries
            .iter()
            .map(|&e| trace.time_us[e as usize].saturating_sub(t0))
            .collect();
    }
    c
}

/// The `START` annotations of `device` placed at the first entry at or after their time (traces with
/// times only).
fn marks(snapshot: &Snapshot, device: i64) -> Vec<(String, i64)> {
    let trace = snapshot.trace(device);
    if !trace.has_time() {
        return Vec::new();
    }
    snapshot
        .external_annotations
        .iter()
        .filter(|a| a.device == device && snapshot.str(a.stage).eq_ignore_ascii_case("start"))
        .filter_map(|a| {
            let t = a.time_us?;
            let e = crate::model::entry_at_time(&trace.time_us, t);
            (e < trace.len()).then(|| (snapshot.str(a.name).to_string(), e as i64))
        })
        .collect()
}

/// A digest of `file` with only its peak and most reserved, config from its name (for tests).
#[cfg(test)]
pub(crate) fn test_digest(file: &str, peak: u64, reserved: u64) -> Digest {
    Digest {
        file: file.into(),
        file_bytes: 0,
        device: 0,
        default_device: true,
        timeline_peak_bytes: peak,
        peak_event_index: 0,
        reserved_at_peak_bytes: reserved,
        max_reserved_bytes: reserved,
        components: Vec::new(),
        categories: Vec::new(),
        largest_allocation_bytes: 0,
        allocations: 0,
        entries: 0,
        oom_at: None,
        config: config_from_name(file),
        curve: Curve::default(),
        marks: Vec::new(),
        live_entry: None,
        live_set: Node {
            frame: None,
            bytes: peak,
            count: 1,
            children: Vec::new(),
            allocations: Vec::new(),
        },
        sites: Vec::new(),
        steps: None,
    }
}
