//! The training steps within one trace, found by the profiler annotations PyTorch records with the
//! history: `ProfilerStep#N` (under `torch.profiler`) starts each step, `Optimizer.step#AdamW.step` ends
//! each step of a training loop, `enumerate(DataLoader)#…__next__` starts each batch, and a
//! `record_function` range named like a step (`train_step`, `step_3`, `iteration`) starts each. Per
//! step: what was live when it began (what the steps before it left behind), its peak, what it left
//! live, its allocations; and, over the steps, whether what each leaves behind keeps growing (a leak).
//!
//! A trace of one step, or without annotations (older PyTorch, or none recorded), has none.

use super::compare::{delta, grown_sites, sites_of, Column, SiteDelta, Table, GROWN_LISTED};
use super::lifetimes::{reserved_walk, Lifetimes};
use crate::model::{Action, Snapshot};
use crate::steps::{Growth, StepRecord, StepRun};

/// The format of the step runs made of a trace's steps ([`StepRun::format`]).
pub const TRACE_STEPS_FORMAT: &str = "snapshot trace";

/// The steps of one device's trace.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TraceSteps {
    /// The annotation that marks them, as the first one is named, a step number in it `N`
    /// (`Optimizer.step#AdamW.step`, `ProfilerStep#N`).
    pub marker: String,
    /// Each step ends where the marker ends (the optimizer's step), rather than beginning where it
    /// starts: entries before the first are then step 1's, and those after the last are no step's.
    pub ends_at_marker: bool,
    pub steps: Vec<TraceStep>,
    /// Entries before the first step and after the last (setup, evaluation, the next step's start).
    pub entries_before: u32,
    pub entries_after: u32,
    /// What each step leaves live, when it keeps growing step after step (the same test as step
    /// records': [`StepRun::find_growth`]).
    pub growth: Option<Growth>,
    /// Where what the steps after the first left live was allocated: the places holding more at the
    /// last step's end than at the first's, most first ([`GROWN_LISTED`] of them).
    pub kept_at: Vec<SiteDelta>,
}

/// One step: trace entries `first_entry..end_entry`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceStep {
    /// 1, 2, … in trace order.
    pub step: u32,
    pub first_entry: u32,
    /// One past its last entry.
    pub end_entry: u32,
    /// Live when it began: what the steps before it (and the setup) left.
    pub live_at_start: u64,
    /// Its highest live bytes, and the entry after which they are first reached (`first_entry - 1`
    /// when nothing it did went above what it began with; `-1` before the trace).
    pub peak_bytes: u64,
    pub peak_entry: i64,
    /// Live after its last entry: what it leaves to the next.
    pub live_at_end: u64,
    /// The most the allocator reserved from just before it began to its end.
    pub peak_reserved_bytes: u64,
    /// Its `alloc` entries, and its `oom` entries (each a request the allocator could not meet).
    pub allocations: u32,
    pub ooms: u32,
    /// From its marker to the next (microseconds), where times were recorded.
    pub duration_us: Option<i64>,
}

impl TraceStep {
    /// What it left live beyond what it began with (negative: it freed what came before).
    pub fn kept_bytes(&self) -> i64 {
        delta(self.live_at_start, self.live_at_end)
    }
}

/// How a family of annotations marks steps, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Marker {
    ProfilerStep,
    OptimizerStep,
    DataLoader,
    StepLike,
}

/// The family an annotation belongs to, and its key (names of one family that differ only in a step
/// number are one key: `ProfilerStep#3`, `step_12`).
fn family(name: &str) -> Option<(Marker, String)> {
    if name.starts_with("ProfilerStep#") {
        return Some((Marker::ProfilerStep, "ProfilerStep#".into()));
    }
    if name.starts_with("Optimizer.step#") {
        return Some((Marker::OptimizerStep, name.into()));
    }
    if name.starts_with("enumerate(DataLoader)#") {
        return Some((Marker::DataLoader, name.into()));
    }
    // A range the user named as a step: its last word (step number aside) a step, an iteration or a
    // batch (`train_step_3`, `TrainStep`, `iteration 12`, `next_batch`); not an operator's
    // (`aten::batch_norm`), nor torch.compile's (`… (dynamo_timed)`, hundreds while it compiles).
    let key = name
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches(['_', '#', '-', ' ', '.']);
    let last = key
        .rsplit(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let step_like = ["step", "steps", "iter", "iteration", "batch"]
        .iter()
        .any(|w| last.ends_with(w))
        && !name.contains("::")
        && !name.to_ascii_lowercase().starts_with("optimizer.");
    step_like.then(|| (Marker::StepLike, key.to_string()))
}

/// Whether the annotations of `device` may mark steps (a family marks two or more; the trace's times
/// are not looked at): a test that needs no lifetimes, for callers that would make them for this alone.
pub fn may_mark_steps(snapshot: &Snapshot, device: i64) -> bool {
    families(snapshot, device).iter().any(|f| f.steps() >= 2)
}

/// The steps of `device`'s trace (see the module's doc), from its block lifetimes; `None` where no
/// family of annotations marks two steps or more, or the trace has no times to place them by.
pub fn trace_steps(snapshot: &Snapshot, lifetimes: &Lifetimes) -> Option<TraceSteps> {
    crate::batch::run_ready(trace_steps_sliced(
        snapshot,
        lifetimes,
        &mut crate::batch::NoPause,
    ))
}

/// A START or END of an annotation that marks steps.
#[derive(Debug, Clone, Copy)]
struct Mark<'a> {
    start: bool,
    time: i64,
    name: &'a str,
}

/// Annotations of one family (see [`family`]).
struct Family<'a> {
    marker: Marker,
    marks: Vec<Mark<'a>>,
}

impl Family<'_> {
    /// How many steps it marks: its STARTs, or for a marker that ends each step, its ENDs.
    fn steps(&self) -> usize {
        let start = self.marker != Marker::OptimizerStep;
        self.marks.iter().filter(|m| m.start == start).count()
    }
}

/// The annotations of `device` that mark steps, by family, in recorded order.
fn families(snapshot: &Snapshot, device: i64) -> Vec<Family<'_>> {
    let mut families: Vec<Family> = Vec::new();
    // Where each family is in `families` (a file may hold any number of them).
    let mut index: std::collections::HashMap<(Marker, String), usize> = Default::default();
    for a in snapshot
        .external_annotations
        .iter()
        .filter(|a| a.device == device)
    {
        let (Some(time), name) = (a.time_us, snapshot.str(a.name)) else {
            continue;
        };
        let start = match snapshot.str(a.stage) {
            s if s.eq_ignore_ascii_case("start") => true,
            s if s.eq_ignore_ascii_case("end") => false,
            _ => continue,
        };
        let Some((marker, key)) = family(name) else {
            continue;
        };
        let mark = Mark { start, time, name };
        let k = *index.entry((marker, key)).or_insert_with(|| {
            families.push(Family {
                marker,
                marks: Vec::new(),
            });
            families.len() - 1
        });
        families[k].marks.push(mark);
    }
    families
}

/// A step's entries `first..end` and its times (`to`: where the next begins, when known).
struct Span {
    first: u32,
    end: u32,
    from: i64,
    to: Option<i64>,
}

/// Each step's span: from one START to the next (the last to its own END, else to the trace's end),
/// or, where `ends_at_marker`, from one END to the next (the first from the trace's start). `marks`
/// are in time order; `times` the trace's, every entry with one.
fn spans(marks: &[Mark], ends_at_marker: bool, times: &[i64]) -> Vec<Span> {
    let at = |t: i64| crate::model::entry_at_time(times, t) as u32;
    let mut spans = Vec::new();
    if ends_at_marker {
        let (mut first, mut from) = (0, times[0]);
        for m in marks.iter().filter(|m| !m.start) {
            let end = at(m.time).max(first);
            spans.push(Span {
                first,
                end,
                from,
                to: Some(m.time),
            });
            (first, from) = (end, m.time);
        }
    } else {
        let starts: Vec<i64> = marks.iter().filter(|m| m.start).map(|m| m.time).collect();
        for (k, &from) in starts.iter().enumerate() {
            let to = match starts.get(k + 1) {
                Some(&next) => Some(next),
                None => marks
                    .iter()
                    .find(|m| !m.start && m.time >= from)
                    .map(|m| m.time),
            };
            let first = at(from);
            let end = to.map_or(times.len() as u32, at).max(first);
            spans.push(Span {
                first,
                end,
                from,
                to,
            });
        }
    }
    spans
}

/// Each span's highest reserved bytes, from just before its first entry to after its last, in one walk
/// of the trace (spans are in order, each beginning where the one before ends or later).
async fn peak_reserved<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    device: i64,
    spans: &[Span],
    pause: &mut P,
) -> Vec<u64> {
    let mut peaks = vec![0u64; spans.len()];
    // The first span that has not ended before the entry at hand.
    let mut open = 0;
    let start = reserved_walk(snapshot, device, pause, |i, reserved| {
        // The reserved bytes after entry `i` count for the spans from `i + 1` (as their level before
        // they began) to those that end after `i`.
        while spans.get(open).is_some_and(|s| (s.end as usize) <= i) {
            open += 1;
        }
        for (k, s) in spans.iter().enumerate().skip(open) {
            if s.first as usize > i + 1 {
                break;
            }
            peaks[k] = peaks[k].max(reserved);
        }
    })
    .await;
    for (k, s) in spans.iter().enumerate() {
        if s.first == 0 {
            peaks[k] = peaks[k].max(start);
        }
    }
    peaks
}

/// [`trace_steps`], awaiting `pause` between batches of entries.
pub async fn trace_steps_sliced<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    pause: &mut P,
) -> Option<TraceSteps> {
    let device = lifetimes.device;
    let trace = snapshot.trace(device);
    // The best family that marks two steps or more; of one kind, the one that marks the most.
    let mut best = families(snapshot, device)
        .into_iter()
        .filter(|f| f.steps() >= 2)
        .min_by_key(|f| (f.marker, std::cmp::Reverse(f.steps())))?;
    if !trace.has_time_sliced(pause).await {
        return None;
    }
    best.marks.sort_by_key(|m| m.time);
    let ends_at_marker = best.marker == Marker::OptimizerStep;
    // As the first is named, its step number (if any) an `N`: `ProfilerStep#N`, `train_step_N`.
    let name = best
        .marks
        .iter()
        .find(|m| m.start != ends_at_marker)
        .map_or(String::new(), |m| {
            let unnumbered = m.name.trim_end_matches(|c: char| c.is_ascii_digit());
            if unnumbered.len() < m.name.len() {
                format!("{unnumbered}N")
            } else {
                m.name.to_string()
            }
        });
    let spans = spans(&best.marks, ends_at_marker, &trace.time_us);
    let peak_reserved = peak_reserved(snapshot, device, &spans, pause).await;
    let mut steps = Vec::with_capacity(spans.len());
    for (k, span) in spans.iter().enumerate() {
        let (a, b) = (span.first, span.end);
        let live_at_start = lifetimes.live_bytes_at(i64::from(a) - 1);
        let (mut peak_bytes, mut peak_entry) = (live_at_start, i64::from(a) - 1);
        let (mut allocations, mut ooms) = (0u32, 0u32);
        let scan = |r: std::ops::Range<usize>| {
            for i in r.start + a as usize..r.end + a as usize {
                let live = lifetimes.live_after[i];
                if live > peak_bytes {
                    (peak_bytes, peak_entry) = (live, i as i64);
                }
                allocations += u32::from(trace.action[i] == Action::Alloc);
                ooms += u32::from(trace.action[i] == Action::Oom);
            }
        };
        crate::batch::ranges_paused((b - a) as usize, scan, pause).await;
        steps.push(TraceStep {
            step: k as u32 + 1,
            first_entry: a,
            end_entry: b,
            live_at_start,
            peak_bytes,
            peak_entry,
            live_at_end: lifetimes.live_bytes_at(i64::from(b) - 1),
            peak_reserved_bytes: peak_reserved[k],
            allocations,
            ooms,
            duration_us: span.to.map(|to| to.saturating_sub(span.from)),
        });
    }
    let (first, last) = (spans[0].first, spans[spans.len() - 1].end);
    // What is live at the first step's end and not at the last's, by the place it was allocated.
    let (first_end, last_end) = (
        i64::from(steps[0].end_entry) - 1,
        i64::from(steps[steps.len() - 1].end_entry) - 1,
    );
    let mut kept_at = Vec::new();
    if lifetimes.live_bytes_at(last_end) > lifetimes.live_bytes_at(first_end) {
        let a = lifetimes.live_set_at_sliced(first_end, pause).await;
        let a = sites_of(snapshot, lifetimes, &a);
        let b = lifetimes.live_set_at_sliced(last_end, pause).await;
        kept_at = grown_sites(&a, &sites_of(snapshot, lifetimes, &b));
        kept_at.truncate(GROWN_LISTED);
    }
    let mut found = TraceSteps {
        marker: name,
        ends_at_marker,
        steps,
        entries_before: first,
        entries_after: trace.len() as u32 - last,
        growth: None,
        kept_at,
    };
    found.growth = found.step_run().find_growth();
    Some(found)
}

impl TraceSteps {
    /// The steps as step records (live at each step's end, and its peak; what was live before the
    /// first as the run's static memory), for what reads those: the growth test, `memograph steps`.
    pub fn step_run(&self) -> StepRun {
        StepRun {
            format: TRACE_STEPS_FORMAT,
            steps: self
                .steps
                .iter()
                .map(|s| StepRecord {
                    step: u64::from(s.step),
                    allocated_bytes: Some(s.live_at_end),
                    peak_allocated_bytes: Some(s.peak_bytes),
                    peak_reserved_bytes: Some(s.peak_reserved_bytes),
                    ooms: Some(u64::from(s.ooms)),
                    ..StepRecord::default()
                })
                .collect(),
            static_bytes: self.steps.first().map(|s| s.live_at_start),
            ..StepRun::default()
        }
    }

    /// The step `entry` belongs to (`-1`, before the first entry, is step 1's where that starts the
    /// trace).
    pub fn step_of(&self, entry: i64) -> Option<&TraceStep> {
        let entry = entry.max(0);
        self.steps
            .iter()
            .find(|s| (i64::from(s.first_entry)..i64::from(s.end_entry)).contains(&entry))
    }

    /// The step whose peak is highest (the first of equals).
    pub fn highest(&self) -> Option<&TraceStep> {
        self.steps.iter().rev().max_by_key(|s| s.peak_bytes)
    }

    /// A row a step: its entries, what was live when it began, its peak, what it left live and how much
    /// more that is than it began with, the most reserved, its allocations and OOMs (where any step
    /// ran out of memory), and how long it took.
    pub fn table(&self) -> Table {
        use crate::format::{bytes, grouped, signed_bytes};
        let rows = self
            .steps
            .iter()
            .map(|s| {
                vec![
                    grouped(u64::from(s.step)),
                    if s.end_entry > s.first_entry {
                        format!(
                            "{}–{}",
                            grouped(u64::from(s.first_entry)),
                            grouped(u64::from(s.end_entry - 1))
                        )
                    } else {
                        "none".into()
                    },
                    bytes(s.live_at_start),
                    bytes(s.peak_bytes),
                    bytes(s.live_at_end),
                    signed_bytes(s.kept_bytes()),
                    bytes(s.peak_reserved_bytes),
                    grouped(u64::from(s.allocations)),
                    grouped(u64::from(s.ooms)),
                    s.duration_us.map_or(String::new(), crate::format::micros),
                ]
            })
            .collect();
        // OOMs only where some step ran out of memory.
        let ooms = self.steps.iter().any(|s| s.ooms > 0);
        Table::new(
            &[
                Column::Number("step"),
                Column::Text("entries"),
                Column::Number("live at start"),
                Column::Number("peak"),
                Column::Number("live at end"),
                Column::Number("kept"),
                Column::Number("peak reserved"),
                Column::Number("allocations"),
                Column::Number("OOMs"),
                Column::Number("time"),
            ],
            rows,
        )
        .columns(|k| ooms || k != 8)
    }

    /// The findings' line: how many steps and what marks them, then [`Self::summary`].
    pub fn finding(&self) -> String {
        format!(
            "**{} steps in the trace** (marked by `{}`): {}",
            crate::format::grouped(self.steps.len() as u64),
            self.marker,
            self.summary()
        )
    }

    /// Which step peaks highest, and what the steps leave live: a growth step after step, or in all.
    pub fn summary(&self) -> String {
        use crate::format::{bytes, grouped, signed_bytes};
        let Some(top) = self.highest() else {
            return "no steps.".into();
        };
        let low = self.steps.iter().map(|s| s.peak_bytes).min().unwrap_or(0);
        let mut line = if low == top.peak_bytes {
            format!("every step peaks at {}.", bytes(top.peak_bytes))
        } else {
            format!(
                "the highest peak, {}, in step {} ({} above the lowest step's).",
                bytes(top.peak_bytes),
                grouped(u64::from(top.step)),
                bytes(top.peak_bytes - low)
            )
        };
        let most = self.kept_at.first().map_or(String::new(), |k| {
            format!(
                ", the most at `{}` ({})",
                k.site,
                signed_bytes(k.delta_bytes)
            )
        });
        if let Some(g) = &self.growth {
            line += &format!(
                " What each step leaves live grows {} a step (steps {} to {}){most}: \
                 something outlives its step.",
                signed_bytes(g.bytes_per_step.round() as i64),
                grouped(g.from_step),
                grouped(g.to_step)
            );
            return line;
        }
        // After the first (which allocates what lasts: the optimizer's state, caches), what the
        // steps leave beyond what they began with.
        let kept = self.steps[1..]
            .iter()
            .fold(0i64, |sum, s| sum.saturating_add(s.kept_bytes()));
        let (steps, leave) = match self.steps.len() {
            2 => ("Step 2".to_string(), "leaves"),
            n => (format!("Steps 2 to {}", grouped(n as u64)), "leave"),
        };
        line += &match kept {
            0 => format!(" {steps} {leave} nothing more live."),
            k if k > 0 => format!(
                " {steps} {leave} {} more live in all{most}.",
                bytes(k as u64)
            ),
            k => format!(
                " {steps} {leave} {} less live in all.",
                bytes(k.unsigned_abs())
            ),
        };
        line
    }
}

/// The steps of each device of `snapshot` (read from `file`) as a file of step records, a run per
/// device whose trace marks two steps or more (`None` when none does): `memograph steps` reads a
/// snapshot so.
pub fn step_file(file: &str, snapshot: &Snapshot) -> Option<crate::steps::StepFile> {
    let found: Vec<(i64, TraceSteps)> = snapshot
        .devices()
        .into_iter()
        .filter(|&d| may_mark_steps(snapshot, d))
        .filter_map(|d| Some((d, trace_steps(snapshot, &Lifetimes::of(snapshot, d))?)))
        .collect();
    let found: Vec<(&str, i64, &TraceSteps)> = found.iter().map(|(d, s)| (file, *d, s)).collect();
    let runs = named_runs(&found);
    (!runs.is_empty()).then_some(crate::steps::StepFile::Runs(runs))
}

/// The steps the digests carry as step records, a run per file and device whose trace marks steps
/// (see [`step_file`]): what the page's Steps view shows of the snapshots open or compared.
pub fn step_runs_of<D: std::borrow::Borrow<super::compare::Digest>>(digests: &[D]) -> Vec<StepRun> {
    let found: Vec<(&str, i64, &TraceSteps)> = digests
        .iter()
        .map(|d| d.borrow())
        .filter_map(|d| Some((d.file.as_str(), d.device, d.steps.as_ref()?)))
        .collect();
    named_runs(&found)
}

/// The runs of `traces` (a trace's steps) of a job no run of `records` (step records) is of: a
/// snapshot of a run whose step records are open is one of its marks, not a run of its own. A job is
/// a folder, or the files named without one (picked together); a file named without one beside
/// those of a folder is of a job whose run has its rank (as the Steps view's marks take it).
pub fn unrecorded(records: &[StepRun], traces: Vec<StepRun>) -> Vec<StepRun> {
    use crate::names::folder;
    traces
        .into_iter()
        .filter(|t| {
            !records.iter().any(|r| {
                let (a, b) = (folder(&r.file), folder(&t.file));
                match (a.is_empty(), b.is_empty()) {
                    (true, false) | (false, true) => r.rank == t.rank,
                    _ => a == b,
                }
            })
        })
        .collect()
}

/// A run of each (file, device, steps), named after its file, and where the file has several runs
/// after its device too (which its config holds then, as `device`).
fn named_runs(found: &[(&str, i64, &TraceSteps)]) -> Vec<StepRun> {
    found
        .iter()
        .map(|&(file, device, steps)| {
            let mut run = steps.step_run();
            crate::steps::name_run(&mut run, file);
            if found.iter().filter(|f| f.0 == file).count() > 1 {
                run.name = format!("{} cuda:{device}", run.name);
                run.config.insert("device".into(), device.to_string());
            }
            run
        })
        .collect()
}
