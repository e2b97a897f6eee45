//! Per-step memory records: the few numbers per step that training jobs log (peak allocated, peak
//! reserved, retries, OOMs), read from what people really have, detected by content (plain or gzip):
//!
//! - Memograph's capture output: `rank{R}_steps.jsonl` (one object per optimizer step) and
//!   `rank{R}_run.json` (the manifest: static memory, parameter, gradient and optimizer-state bytes);
//! - torchtitan: metric rows (JSONL or CSV) with `memory/max_active(GiB)` and friends, its console log
//!   (`step: 10  loss: 7.93  memory: 25.41GiB(26.72%)`), and structured exports
//!   (`[{step, timestamp, device_mem_stats: {...}, metadata: {...}}]`, or under `"history"`);
//! - Megatron-LM: its log (`[Rank N] (after K iterations) memory (MB) | allocated: … | max allocated: …`,
//!   `mem-max-allocated-gigabytes`, `Theoretical memory footprints: …`) and the per-rank memory-trace
//!   JSON some forks write (`{"<iteration>": {"samples": [...], "peak_allocated_MB", …}}`);
//! - any CSV with a step, iteration or epoch column and memory columns whose header names the unit.
//!
//! MB means 2^20 bytes and GB/GiB 2^30; figures are kept as whole bytes, rounded to the nearest.

use std::collections::BTreeMap;
use std::io::Read;

use regex_lite::Regex;

use crate::analysis::compare::config_from_name;

/// One step's figures; `None` where the input lacks one.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StepRecord {
    pub step: u64,
    /// Seconds (since the epoch, or since the run's start), when recorded.
    pub time: Option<f64>,
    pub allocated_bytes: Option<u64>,
    pub peak_allocated_bytes: Option<u64>,
    pub reserved_bytes: Option<u64>,
    pub peak_reserved_bytes: Option<u64>,
    pub alloc_retries: Option<u64>,
    pub ooms: Option<u64>,
}

/// One run × rank of step records.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StepRun {
    pub file: String,
    /// The run's name: the file's folder and name without the rank and extensions.
    pub name: String,
    pub rank: Option<u32>,
    /// Which input it was read from (`memograph-capture`, `torchtitan`, `megatron-log`, …).
    pub format: &'static str,
    /// From a `memory_traces_scaling` folder: a simulation, drawn dashed.
    pub simulated: bool,
    /// "Reserved" is the device's used memory (Megatron's traces), not the allocator's reserved bytes.
    pub reserved_is_device_used: bool,
    /// Knobs from the file name and the input's metadata.
    pub config: BTreeMap<String, String>,
    pub steps: Vec<StepRecord>,
    /// Memory held before the first step (weights, buffers), when the input says.
    pub static_bytes: Option<u64>,
    /// What a memory model predicts, when the input says.
    pub theoretical_bytes: Option<u64>,
    /// Named parts of the memory (parameters, gradients, optimizer state, activations…), when known.
    pub components: Vec<(String, u64)>,
    /// The GPU the run was on (its name) and its memory, when the input says (memograph-capture's
    /// manifest).
    pub device: Option<(String, u64)>,
    /// Memory that grows step after step, found by [`merge`] once the run is whole
    /// ([`StepRun::find_growth`]).
    pub growth: Option<Growth>,
}

impl StepRun {
    /// The highest peak allocated over the steps (the allocated figure where no peak was logged).
    pub fn peak_allocated_bytes(&self) -> Option<u64> {
        self.steps
            .iter()
            .filter_map(|s| s.peak_allocated_bytes.or(s.allocated_bytes))
            .max()
    }

    pub fn peak_reserved_bytes(&self) -> Option<u64> {
        self.steps
            .iter()
            .filter_map(|s| s.peak_reserved_bytes.or(s.reserved_bytes))
            .max()
    }

    /// The GPU's memory less the highest peak reserved (peak allocated where none was logged), when
    /// the input says what GPU it ran on; negative: over by that much.
    pub fn headroom_bytes(&self) -> Option<i64> {
        let (_, total) = self.device.as_ref()?;
        let used = self
            .peak_reserved_bytes()
            .or_else(|| self.peak_allocated_bytes())?;
        Some(crate::analysis::compare::delta(used, *total))
    }

    /// Allocation retries and OOMs (the allocator's counters grow: their highest value).
    pub fn alloc_retries(&self) -> Option<u64> {
        self.steps.iter().filter_map(|s| s.alloc_retries).max()
    }

    pub fn ooms(&self) -> Option<u64> {
        self.steps.iter().filter_map(|s| s.ooms).max()
    }

    /// The step of the highest peak allocated.
    pub fn peak_step(&self) -> Option<u64> {
        self.steps
            .iter()
            .filter_map(|s| Some((s.peak_allocated_bytes.or(s.allocated_bytes)?, s.step)))
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|x| x.1)
    }
}

/// Memory that keeps growing step after step (a leak, a cache never emptied, a list that holds on to
/// each step's tensors): the trend of what is still allocated at each step's end (peak allocated
/// where the input logs no such figure), after the first tenth of the steps (warm-up: the optimizer's
/// state and the allocator's first segments come then).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Growth {
    /// Bytes per step: the median of the slopes between pairs of steps (Theil–Sen), so that a few odd
    /// steps, or a level that jumps once and stays, do not make a trend.
    pub bytes_per_step: f64,
    /// The steps the trend is taken over.
    pub from_step: u64,
    pub to_step: u64,
    /// The figure: "allocated at step end" or "peak allocated".
    pub of: &'static str,
    /// At this rate, the step at which that figure would reach the GPU's memory (when the run says what
    /// GPU it ran on, and it has not reached it yet).
    pub reaches_gpu_at: Option<u64>,
}

/// The fewest steps, after warm-up, a trend is taken over.
const GROWTH_MIN_STEPS: usize = 8;
/// The most steps the slopes are taken between (evenly spaced among more): pairs grow as the square.
const GROWTH_POINTS: usize = 200;
/// The least growth over the steps taken that is said: 64 MiB, and 2 % of the figure's level.
const GROWTH_MIN_BYTES: f64 = 64.0 * MIB;
const GROWTH_MIN_SHARE: f64 = 0.02;

impl StepRun {
    /// Memory that grows step after step, when it does (see [`Growth`]); [`merge`] keeps it in
    /// [`StepRun::growth`], where the table, the JSON and the sentences read it.
    pub fn find_growth(&self) -> Option<Growth> {
        // What is still allocated at a step's end, where most steps say it: a peak within a step
        // grows with a leak too, but swings with the step's own work.
        let at_end = self
            .steps
            .iter()
            .filter(|s| s.allocated_bytes.is_some())
            .count();
        let (of, figure): (&'static str, fn(&StepRecord) -> Option<u64>) =
            if at_end * 5 >= self.steps.len() * 4 {
                ("allocated at step end", |s| s.allocated_bytes)
            } else {
                ("peak allocated", |s| s.peak_allocated_bytes)
            };
        let mut points: Vec<(f64, f64)> = self
            .steps
            .iter()
            .filter_map(|s| Some((s.step as f64, figure(s)? as f64)))
            .collect();
        // In step order (a log of a resumed run holds some steps twice, not always in order).
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let points = &points[(points.len() / 10).max(1).min(points.len())..];
        if points.len() < GROWTH_MIN_STEPS {
            return None;
        }
        let every = points.len().div_ceil(GROWTH_POINTS);
        let taken: Vec<(f64, f64)> = points.iter().step_by(every).copied().collect();
        let mut slopes = Vec::with_capacity(taken.len() * taken.len() / 2);
        for (i, a) in taken.iter().enumerate() {
            for b in &taken[i + 1..] {
                if b.0 > a.0 {
                    slopes.push((b.1 - a.1) / (b.0 - a.0));
                }
            }
        }
        if slopes.is_empty() {
            return None;
        }
        let slope = median(&mut slopes);
        let (first, last) = (points[0], points[points.len() - 1]);
        let level = median(&mut points.iter().map(|p| p.1).collect::<Vec<_>>());
        let grown = slope * (last.0 - first.0);
        if !(grown >= GROWTH_MIN_BYTES && grown >= GROWTH_MIN_SHARE * level) {
            return None;
        }
        // And it grows all along: each quarter of the steps higher than the one before by a good part
        // of what the trend says (a level that jumps once and stays slopes the pairs across the jump).
        let quarter = points.len() / 4;
        let medians: Vec<f64> = (0..4)
            .map(|q| {
                let part = &points[q * quarter..(q + 1) * quarter];
                median(&mut part.iter().map(|p| p.1).collect::<Vec<_>>())
            })
            .collect();
        if medians.windows(2).any(|m| m[1] - m[0] < grown / 16.0) {
            return None;
        }
        let reaches_gpu_at = self.device.as_ref().and_then(|&(_, total)| {
            let left = total as f64 - last.1;
            let steps = (left / slope).ceil();
            (left > 0.0 && steps < 1e15).then(|| (last.0 as u64).saturating_add(steps as u64))
        });
        Some(Growth {
            bytes_per_step: slope,
            from_step: first.0 as u64,
            to_step: last.0 as u64,
            of,
            reaches_gpu_at,
        })
    }
}

/// The median of `v` (the upper one of an even count), reordering it; `v` is not empty.
fn median(v: &mut [f64]) -> f64 {
    let mid = v.len() / 2;
    *v.select_nth_unstable_by(mid, f64::total_cmp).1
}

/// Each growing run's growth in a sentence: "job/steps rank 2 grows 48.0 MiB a step (allocated at
/// step end, steps 3 to 500); at that rate it reaches the GPU's 80.0 GiB near step 1 320".
pub fn growth_lines(runs: &[StepRun]) -> Vec<String> {
    use crate::format::{bytes, grouped};
    runs.iter()
        .filter_map(|r| {
            let g = r.growth.as_ref()?;
            let name = match r.rank {
                Some(rank) => format!("{} rank {rank}", r.name),
                None => r.name.clone(),
            };
            let mut line = format!(
                "{name} grows {} a step ({}, steps {} to {})",
                bytes(g.bytes_per_step.round() as u64),
                g.of,
                grouped(g.from_step),
                grouped(g.to_step)
            );
            if let (Some(at), Some((_, total))) = (g.reaches_gpu_at, &r.device) {
                line.push_str(&format!(
                    "; at that rate it reaches the GPU's {} near step {}",
                    bytes(*total),
                    grouped(at)
                ));
            }
            Some(line)
        })
        .collect()
}

/// `rank{R}_run.json`: what memograph-capture knew about a run besides its steps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub file: String,
    pub rank: Option<u32>,
    pub static_bytes: Option<u64>,
    pub components: Vec<(String, u64)>,
    /// The GPU the run was on (its name) and its memory, as torch reports them.
    pub device: Option<(String, u64)>,
}

/// What one file holds.
#[derive(Debug, Clone, PartialEq)]
pub enum StepFile {
    Runs(Vec<StepRun>),
    Manifest(Manifest),
}

const MIB: f64 = (1u64 << 20) as f64;
const GIB: f64 = (1u64 << 30) as f64;

/// `value × unit` as whole bytes, rounded; `None` for a negative or non-finite value.
fn to_bytes(value: f64, unit: f64) -> Option<u64> {
    let b = (value * unit).round();
    (0.0..1.8e19).contains(&b).then_some(b as u64)
}

/// The endings of step-record files (each maybe followed by `.gz`): a folder's files with them are
/// read, and a run is named without them.
pub const TEXT_ENDINGS: [&str; 6] = [".jsonl", ".json", ".csv", ".tsv", ".log", ".txt"];

/// Whether the first bytes of a file look like step records rather than a snapshot (the page asks
/// before choosing how to read a file).
pub fn looks_like_steps(head: &[u8]) -> bool {
    let mut out = Vec::new();
    let bytes = if crate::is_gzip(head) {
        let _ = flate2::read::MultiGzDecoder::new(head)
            .take(1 << 16)
            .read_to_end(&mut out);
        &out[..]
    } else {
        &head[..head.len().min(1 << 16)]
    };
    // Text has no NUL byte; a program's strings may hold a mark (memograph's own does), and a
    // pickle's are all binary.
    if bytes.contains(&0) {
        return false;
    }
    let text = String::from_utf8_lossy(bytes);
    // A spreadsheet's CSV starts with a byte-order mark, which `read_steps` skips too.
    let text = text.trim_start_matches('\u{feff}');
    if text.contains("\"device_traces\"") || text.contains("\"segments\"") {
        return false;
    }
    const MARKS: [&str; 13] = [
        "\"allocated_peak_bytes\"",
        "\"reserved_peak_bytes\"",
        "\"static_memory_bytes\"",
        "\"first_step\"",
        // memograph-capture's manifest as it is first written (the GPU, before any step).
        "\"total_memory_bytes\"",
        "memory/max_active",
        "memory/max_reserved",
        "device_mem_stats",
        "allocated_memory_MB",
        "memory (MB) | allocated:",
        "mem-max-allocated-gigabytes",
        "Theoretical memory footprints",
        "peak_allocated_MB",
    ];
    MARKS.iter().any(|m| text.contains(m))
        || torchtitan_line().is_match(text)
        || text
            .lines()
            .next()
            .is_some_and(|h| csv_columns(h).is_some())
}

/// Reads a step-record file (plain or gzip) named `file`. Errors are one line naming what is wrong
/// (`entry 12 has no step`); the caller names the file.
pub fn read_steps(file: &str, bytes: &[u8]) -> Result<StepFile, String> {
    if bytes.first() == Some(&0x80) {
        return Err(
            "a pickle (a memory snapshot?), not step records (memograph summary and report \
                    read snapshots)"
                .into(),
        );
    }
    let text = if crate::is_gzip(bytes) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .take(crate::MAX_GZIP_RATIO.saturating_mul(bytes.len() as u64 + (1 << 20)))
            .read_to_end(&mut out)
            .map_err(|e| format!("not valid gzip ({e})"))?;
        String::from_utf8(out).map_err(|_| "not text (UTF-8)".to_string())?
    } else {
        String::from_utf8(bytes.to_vec()).map_err(|_| "not text (UTF-8)".to_string())?
    };
    let text = text.trim_start_matches('\u{feff}');
    if text.contains("\"device_traces\"") && text.contains("\"segments\"") {
        return Err(
            "a memory snapshot, not step records (memograph summary and report read it)".into(),
        );
    }
    let trimmed = text.trim_start();
    let document = (trimmed.starts_with('{') || trimmed.starts_with('['))
        .then(|| serde_json::from_str::<serde_json::Value>(text));
    let mut runs = if let Some(Ok(value)) = document.as_ref().filter(|d| {
        // One step record alone is JSON Lines of one line.
        d.as_ref().is_ok_and(|v| !is_record(v))
    }) {
        return json_document(file, value);
    } else if trimmed.starts_with('{') {
        json_lines(text)?
    } else if matches!(document, Some(Err(_))) && !log_like(text) {
        let Some(Err(e)) = document else {
            unreachable!()
        };
        return Err(format!("not valid JSON ({e})"));
    } else if text
        .lines()
        .next()
        .is_some_and(|h| csv_columns(h).is_some())
    {
        vec![csv(text)?]
    } else {
        log_lines(text)?
    };
    if runs.iter().all(|r| r.steps.is_empty()) && runs.iter().all(|r| r.theoretical_bytes.is_none())
    {
        return Err(
            "no step records found (expected memograph-capture, torchtitan, Megatron-LM \
                    or CSV step records)"
                .into(),
        );
    }
    for r in &mut runs {
        name_run(r, file);
    }
    Ok(StepFile::Runs(runs))
}

/// The run's name and config from its file name (rank from the name when the input had none).
fn name_run(run: &mut StepRun, file: &str) {
    run.file = file.to_string();
    let from_name = config_from_name(file);
    if run.rank.is_none() {
        run.rank = from_name.get("rank").and_then(|r| r.parse().ok());
    }
    for (k, v) in from_name {
        run.config.entry(k).or_insert(v);
    }
    if let Some(r) = run.rank {
        run.config.insert("rank".into(), r.to_string());
    }
    run.simulated |= file.contains("memory_traces_scaling");
    let (dir, base) = match file.rsplit_once(['/', '\\']) {
        Some((d, b)) => (Some(d.rsplit(['/', '\\']).next().unwrap_or(d)), b),
        None => (None, file),
    };
    let stem = TEXT_ENDINGS
        .iter()
        .fold(base.trim_end_matches(".gz"), |s, e| s.trim_end_matches(e));
    static RANK: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let rank = RANK.get_or_init(|| Regex::new(r"(?i)_?rank[_-]?\d+_?").expect("valid"));
    let stem = rank.replace_all(stem, "_");
    let stem = stem.trim_matches('_');
    let stem = if stem.is_empty() { "run" } else { stem };
    run.name = match dir {
        Some(d) => format!("{d}/{stem}"),
        None => stem.to_string(),
    };
}

fn u64_of(v: &serde_json::Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f.round() as u64))
}

fn f64_of(v: &serde_json::Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// A JSON document: a capture manifest, a torchtitan export, or a Megatron memory trace.
fn json_document(file: &str, value: &serde_json::Value) -> Result<StepFile, String> {
    use serde_json::Value;
    let runs = match value {
        Value::Object(o)
            if o.contains_key("static_memory_bytes")
                || o.contains_key("first_step")
                || o.contains_key("command") =>
        {
            let mut components = Vec::new();
            if let Some(first) = o.get("first_step").and_then(Value::as_object) {
                for (key, label) in [
                    ("parameter_bytes", "Parameters"),
                    ("gradient_bytes", "Gradients"),
                    ("optimizer_state_bytes", "Optimizer state"),
                ] {
                    if let Some(b) = first.get(key).and_then(u64_of) {
                        components.push((label.to_string(), b));
                    }
                }
            }
            let rank = o
                .get("rank")
                .and_then(Value::as_u64)
                .map(|r| r as u32)
                .or_else(|| {
                    config_from_name(file)
                        .get("rank")
                        .and_then(|r| r.parse().ok())
                });
            return Ok(StepFile::Manifest(Manifest {
                file: file.to_string(),
                rank,
                static_bytes: o.get("static_memory_bytes").and_then(u64_of),
                components,
                device: o.get("device").and_then(|d| {
                    let total = d.get("total_memory_bytes").and_then(u64_of)?;
                    let name = d.get("name").and_then(Value::as_str).unwrap_or("GPU");
                    Some((name.to_string(), total)).filter(|_| total > 0)
                }),
            }));
        }
        Value::Object(o) if o.get("history").is_some_and(Value::is_array) => {
            vec![torchtitan_export(
                o["history"].as_array().expect("an array"),
            )?]
        }
        Value::Array(entries) => vec![torchtitan_export(entries)?],
        Value::Object(o) if o.values().any(|v| v.get("samples").is_some()) => {
            vec![megatron_trace(o)?]
        }
        _ => return Err("a JSON document that holds no step records".into()),
    };
    let mut runs = runs;
    for r in &mut runs {
        name_run(r, file);
    }
    Ok(StepFile::Runs(runs))
}

/// `[{step, timestamp, device_mem_stats: {...}, metadata: {...}}]`.
fn torchtitan_export(entries: &[serde_json::Value]) -> Result<StepRun, String> {
    let mut run = StepRun {
        format: "torchtitan",
        ..StepRun::default()
    };
    for (k, e) in entries.iter().enumerate() {
        let step = e
            .get("step")
            .and_then(u64_of)
            .ok_or_else(|| format!("entry {k} has no step"))?;
        let stats = e
            .get("device_mem_stats")
            .ok_or_else(|| format!("entry {k} has no device_mem_stats"))?;
        let gib = |key: &str| {
            stats
                .get(key)
                .and_then(f64_of)
                .and_then(|v| to_bytes(v, GIB))
        };
        run.steps.push(StepRecord {
            step,
            time: e.get("timestamp").and_then(f64_of),
            peak_allocated_bytes: gib("peak_allocated_gib").or_else(|| gib("max_active_gib")),
            peak_reserved_bytes: gib("max_reserved_gib"),
            alloc_retries: stats.get("num_alloc_retries").and_then(u64_of),
            ooms: stats.get("num_ooms").and_then(u64_of),
            ..StepRecord::default()
        });
        if let Some(meta) = e.get("metadata").and_then(|m| m.as_object()) {
            for (key, v) in meta {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => continue,
                    other => other.to_string(),
                };
                run.config.entry(key.clone()).or_insert(text);
            }
        }
    }
    Ok(run)
}

/// `{"<iteration>": {"samples": [{timestamp_s, allocated_memory_MB, reserved_memory_MB}], "peak_allocated_MB",
/// "theoretical_memory_MB", "static_memory_MB"}}`.
fn megatron_trace(o: &serde_json::Map<String, serde_json::Value>) -> Result<StepRun, String> {
    let mut run = StepRun {
        format: "megatron-trace",
        reserved_is_device_used: true,
        ..StepRun::default()
    };
    for (key, it) in o {
        let step: u64 = key
            .trim()
            .parse()
            .map_err(|_| format!("iteration '{key}' is not a number"))?;
        let samples = it
            .get("samples")
            .and_then(|s| s.as_array())
            .ok_or_else(|| format!("iteration {key} has no samples"))?;
        let mb = |v: &serde_json::Value, k: &str| {
            v.get(k).and_then(f64_of).and_then(|x| to_bytes(x, MIB))
        };
        let max_of = |k: &str| samples.iter().filter_map(|s| mb(s, k)).max();
        let first_time = samples
            .first()
            .and_then(|s| s.get("timestamp_s"))
            .and_then(f64_of);
        run.steps.push(StepRecord {
            step,
            time: first_time,
            peak_allocated_bytes: mb(it, "peak_allocated_MB")
                .or_else(|| max_of("allocated_memory_MB")),
            peak_reserved_bytes: max_of("reserved_memory_MB"),
            ..StepRecord::default()
        });
        if run.static_bytes.is_none() {
            run.static_bytes = mb(it, "static_memory_MB");
        }
        if run.theoretical_bytes.is_none() {
            run.theoretical_bytes = mb(it, "theoretical_memory_MB");
        }
    }
    run.steps.sort_by_key(|s| s.step);
    Ok(run)
}

/// JSON Lines: memograph-capture's step records or torchtitan's metric rows.
fn json_lines(text: &str) -> Result<Vec<StepRun>, String> {
    let mut by_rank: BTreeMap<Option<u32>, StepRun> = BTreeMap::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("line {} is not JSON ({e})", k + 1))?;
        let Some(o) = v.as_object() else {
            return Err(format!("line {} is not a JSON object", k + 1));
        };
        let capture =
            o.contains_key("allocated_peak_bytes") || o.contains_key("reserved_peak_bytes");
        let titan = o.keys().any(|key| key.starts_with("memory/"));
        if !capture && !titan {
            continue;
        }
        let step = o
            .get("step")
            .and_then(u64_of)
            .ok_or_else(|| format!("line {} has no step", k + 1))?;
        let rank = o.get("rank").and_then(|r| r.as_u64()).map(|r| r as u32);
        let run = by_rank.entry(rank).or_insert_with(|| StepRun {
            rank,
            format: if capture {
                "memograph-capture"
            } else {
                "torchtitan"
            },
            ..StepRun::default()
        });
        let int = |key: &str| o.get(key).and_then(u64_of);
        let gib = |key: &str| o.get(key).and_then(f64_of).and_then(|v| to_bytes(v, GIB));
        run.steps.push(if capture {
            StepRecord {
                step,
                time: o.get("time").and_then(f64_of),
                allocated_bytes: int("allocated_bytes"),
                peak_allocated_bytes: int("allocated_peak_bytes"),
                reserved_bytes: int("reserved_bytes"),
                peak_reserved_bytes: int("reserved_peak_bytes"),
                alloc_retries: int("alloc_retries"),
                ooms: int("ooms"),
            }
        } else {
            StepRecord {
                step,
                time: o
                    .get("time")
                    .or_else(|| o.get("timestamp"))
                    .and_then(f64_of),
                peak_allocated_bytes: gib("memory/max_active(GiB)"),
                peak_reserved_bytes: gib("memory/max_reserved(GiB)"),
                alloc_retries: int("memory/num_alloc_retries"),
                ooms: int("memory/num_ooms"),
                ..StepRecord::default()
            }
        });
    }
    Ok(by_rank.into_values().collect())
}

/// Which column of a CSV header is what, when it is a step table: (step column, memory columns as
/// (index, field, bytes per unit)).
type Columns = (usize, Vec<(usize, Field, f64)>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Allocated,
    PeakAllocated,
    Reserved,
    PeakReserved,
    Retries,
    Ooms,
}

fn csv_columns(header: &str) -> Option<Columns> {
    let cells = split_csv(header, delimiter(header));
    let lower: Vec<String> = cells
        .iter()
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let step = lower.iter().position(|c| {
        let c = c.trim_start_matches("train/");
        matches!(
            c,
            "step" | "steps" | "iteration" | "iter" | "epoch" | "global_step"
        )
    })?;
    let mut memory = Vec::new();
    for (k, c) in lower.iter().enumerate() {
        if k == step || c.contains("(%)") || c.contains("pct") || c.contains("percent") {
            continue;
        }
        let tokens: Vec<&str> = c
            .split(|ch: char| !ch.is_ascii_alphanumeric())
            .filter(|t| !t.is_empty())
            .collect();
        let has = |w: &str| tokens.iter().any(|t| t.contains(w));
        let field = if has("retr") {
            Field::Retries
        } else if has("oom") {
            Field::Ooms
        } else if has("reserved") {
            if has("max") || has("peak") {
                Field::PeakReserved
            } else {
                Field::Reserved
            }
        } else if has("allocated") || has("active") || has("memory") || has("mem") {
            if has("max") || has("peak") || !(has("allocated") || has("active")) {
                Field::PeakAllocated
            } else {
                Field::Allocated
            }
        } else {
            continue;
        };
        let unit = if matches!(field, Field::Retries | Field::Ooms) {
            1.0
        } else if tokens.iter().any(|t| matches!(*t, "gib" | "gb")) {
            GIB
        } else if tokens.iter().any(|t| matches!(*t, "mib" | "mb")) {
            MIB
        } else if tokens.iter().any(|t| matches!(*t, "kib" | "kb")) {
            1024.0
        } else {
            1.0
        };
        memory.push((k, field, unit));
    }
    (!memory.is_empty() && cells.len() > 1).then_some((step, memory))
}

/// What separates a CSV file's cells, from its header: a comma, else a tab (`sep='\t'`), else a
/// semicolon (a spreadsheet's export where the comma is the decimal mark).
fn delimiter(header: &str) -> char {
    [',', '\t', ';']
        .into_iter()
        .find(|&d| header.contains(d))
        .unwrap_or(',')
}

/// Splits a CSV line on `delimiter` outside double quotes (quotes removed, `""` kept as one).
fn split_csv(line: &str, delimiter: char) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cells.last_mut().expect("a cell").push('"');
            }
            '"' => quoted = !quoted,
            d if d == delimiter && !quoted => cells.push(String::new()),
            c => cells.last_mut().expect("a cell").push(c),
        }
    }
    cells
}

fn csv(text: &str) -> Result<StepRun, String> {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let (step_col, memory) = csv_columns(header).ok_or("no step and memory columns")?;
    let delimiter = delimiter(header);
    let titan = header.contains("memory/");
    let mut run = StepRun {
        format: if titan { "torchtitan" } else { "csv" },
        ..StepRun::default()
    };
    for (k, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let cells = split_csv(line, delimiter);
        let row = k + 2;
        let step = cells
            .get(step_col)
            .map(|c| c.trim())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| format!("row {row} has no step"))?;
        let step = step
            .parse::<f64>()
            .ok()
            .filter(|s| *s >= 0.0)
            .ok_or_else(|| format!("row {row}: step '{step}' is not a number"))?
            .round() as u64;
        let mut r = StepRecord {
            step,
            ..StepRecord::default()
        };
        for &(col, field, unit) in &memory {
            let Some(cell) = cells.get(col).map(|c| c.trim()).filter(|c| !c.is_empty()) else {
                continue;
            };
            let value: f64 = cell.parse().map_err(|_| {
                format!("row {row}: '{cell}' in column {} is not a number", col + 1)
            })?;
            // NaN is how pandas and numpy write a missing figure; a negative or infinite one is no
            // amount of memory.
            if value.is_nan() {
                continue;
            }
            let bytes = Some(to_bytes(value, unit).ok_or_else(|| {
                format!(
                    "row {row}: '{cell}' in column {} is not an amount of memory",
                    col + 1
                )
            })?);
            match field {
                Field::Allocated => r.allocated_bytes = bytes,
                Field::PeakAllocated => r.peak_allocated_bytes = r.peak_allocated_bytes.or(bytes),
                Field::Reserved => r.reserved_bytes = bytes,
                Field::PeakReserved => r.peak_reserved_bytes = bytes,
                Field::Retries => r.alloc_retries = bytes,
                Field::Ooms => r.ooms = bytes,
            }
        }
        run.steps.push(r);
    }
    Ok(run)
}

/// Whether a JSON value is one line of step records (capture's or torchtitan's).
fn is_record(v: &serde_json::Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.contains_key("allocated_peak_bytes")
            || o.contains_key("reserved_peak_bytes")
            || o.keys().any(|k| k.starts_with("memory/"))
    })
}

/// Whether text that starts with `[` is a log (`[rank0]:`, `[2025-01-01 …]`) rather than a JSON array.
fn log_like(text: &str) -> bool {
    let first = text.trim_start().lines().next().unwrap_or_default();
    let rest = first.trim_start_matches('[').trim_start();
    !(rest.starts_with('{') || rest.starts_with('[') || rest.starts_with(']') || rest.is_empty())
}

fn torchtitan_line() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"step:\s*(\d+)\b.*?memory:\s*([\d.]+)\s*GiB\(\s*([\d.]+)%\)").expect("valid")
    })
}

/// The run of `rank` in `runs`, made when new.
fn run_at<'a>(
    runs: &'a mut BTreeMap<Option<u32>, StepRun>,
    rank: Option<u32>,
    format: &'static str,
) -> &'a mut StepRun {
    runs.entry(rank).or_insert_with(|| StepRun {
        rank,
        format,
        ..StepRun::default()
    })
}

/// Console logs: torchtitan's step lines and Megatron-LM's memory lines, one run per rank.
fn log_lines(text: &str) -> Result<Vec<StepRun>, String> {
    static RES: std::sync::OnceLock<[Regex; 5]> = std::sync::OnceLock::new();
    let [prefix, megatron, megatron_gb, iteration, theoretical] = RES.get_or_init(|| {
        [
            Regex::new(r"^\s*\[(?:rank|default)(\d+)\]:").expect("valid"),
            Regex::new(
                r"\[Rank (\d+)\] \(after (\d+) iterations\) memory \(MB\) \| allocated: ([\d.]+) \| max allocated: ([\d.]+) \| reserved: ([\d.]+) \| max reserved: ([\d.]+)",
            )
            .expect("valid"),
            Regex::new(r"mem-max-allocated-gigabytes:\s*([\d.]+)").expect("valid"),
            Regex::new(r"iteration\s+(\d+)\s*/").expect("valid"),
            Regex::new(
                r"Theoretical memory footprints: weight and optimizer=([\d.]+) MB, activation=([\d.]+) MB, total=([\d.]+) MB",
            )
            .expect("valid"),
        ]
    });
    let mut runs: BTreeMap<Option<u32>, StepRun> = BTreeMap::new();
    let mut theory: Option<(u64, u64, u64)> = None;
    for line in text.lines() {
        let rank = prefix.captures(line).and_then(|c| c[1].parse::<u32>().ok());
        if let Some(c) = theoretical.captures(line) {
            let mb = |k: usize| {
                c[k].parse::<f64>()
                    .ok()
                    .and_then(|v| to_bytes(v, MIB))
                    .unwrap_or(0)
            };
            theory = Some((mb(1), mb(2), mb(3)));
        } else if let Some(c) = megatron.captures(line) {
            let rank = c[1].parse::<u32>().ok();
            let mb = |k: usize| c[k].parse::<f64>().ok().and_then(|v| to_bytes(v, MIB));
            let run = run_at(&mut runs, rank, "megatron-log");
            run.steps.push(StepRecord {
                step: c[2].parse().unwrap_or(0),
                allocated_bytes: mb(3),
                peak_allocated_bytes: mb(4),
                reserved_bytes: mb(5),
                peak_reserved_bytes: mb(6),
                ..StepRecord::default()
            });
        } else if let (Some(g), Some(it)) = (megatron_gb.captures(line), iteration.captures(line)) {
            let run = run_at(&mut runs, rank, "megatron-log");
            run.steps.push(StepRecord {
                step: it[1].parse().unwrap_or(0),
                peak_allocated_bytes: g[1].parse::<f64>().ok().and_then(|v| to_bytes(v, GIB)),
                ..StepRecord::default()
            });
        } else if let Some(c) = torchtitan_line().captures(line) {
            let run = run_at(&mut runs, rank, "torchtitan-log");
            run.steps.push(StepRecord {
                step: c[1].parse().unwrap_or(0),
                peak_reserved_bytes: c[2].parse::<f64>().ok().and_then(|v| to_bytes(v, GIB)),
                ..StepRecord::default()
            });
        }
    }
    if let Some((weights, activation, total)) = theory {
        if runs.is_empty() {
            runs.insert(
                None,
                StepRun {
                    format: "megatron-log",
                    ..StepRun::default()
                },
            );
        }
        for run in runs.values_mut() {
            run.theoretical_bytes = Some(total);
            run.components = vec![
                ("Weights and optimizer (theoretical)".into(), weights),
                ("Activations (theoretical)".into(), activation),
            ];
        }
    }
    Ok(runs.into_values().collect())
}

/// Runs from every file, manifests attached to the run of the same rank in the same folder (its
/// static memory and parameter, gradient and optimizer-state bytes), each run's growth found.
pub fn merge(files: Vec<StepFile>) -> Vec<StepRun> {
    let mut runs = Vec::new();
    let mut manifests = Vec::new();
    for f in files {
        match f {
            StepFile::Runs(r) => runs.extend(r),
            StepFile::Manifest(m) => manifests.push(m),
        }
    }
    let folder = crate::names::folder;
    for m in manifests {
        if let Some(run) = runs.iter_mut().find(|r| {
            r.format == "memograph-capture"
                && r.rank == m.rank
                && folder(&r.file) == folder(&m.file)
        }) {
            run.static_bytes = run.static_bytes.or(m.static_bytes);
            if run.device.is_none() {
                run.device = m.device;
            }
            if run.components.is_empty() {
                run.components = m.components;
            }
        }
    }
    // Once a run is whole (its GPU, from the manifest, tells when a growth would fill it).
    for run in &mut runs {
        run.growth = run.find_growth();
    }
    runs
}

/// The per-run table: run, rank, config, steps, the highest peak allocated and its delta against the
/// baseline run (`runs[baseline]`), the highest peak reserved, where a run says what GPU it ran on its
/// memory and the headroom the peak reserved left, where a run grows step after step its growth a
/// step ([`StepRun::growth`]), static and theoretical memory, retries and OOMs.
/// `exact`: bytes as whole numbers (CSV), else in binary units. Missing figures are empty.
pub fn steps_table(
    runs: &[StepRun],
    baseline: usize,
    exact: bool,
) -> crate::analysis::compare::Table {
    use crate::analysis::compare::{delta, Table};
    use crate::format::bytes;
    let size = |b: Option<u64>| {
        b.map_or(
            String::new(),
            |b| if exact { b.to_string() } else { bytes(b) },
        )
    };
    let mut keys: Vec<String> = Vec::new();
    for r in runs {
        for k in r.config.keys() {
            if k != "rank" && !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let base = runs.get(baseline).and_then(StepRun::peak_allocated_bytes);
    let mut header: Vec<String> = vec!["run".into(), "rank".into()];
    header.extend(keys.iter().cloned());
    let mut numeric = vec![false; header.len()];
    let on_device = runs.iter().any(|r| r.device.is_some());
    let gpu: &[&str] = if on_device {
        &["GPU memory", "headroom"]
    } else {
        &[]
    };
    let growing = runs.iter().any(|r| r.growth.is_some());
    let growth: &[&str] = if growing { &["growth a step"] } else { &[] };
    for h in ["steps", "peak allocated", "vs baseline", "peak reserved"]
        .iter()
        .chain(gpu)
        .chain(growth)
        .chain(&["static", "theoretical", "alloc retries", "OOMs"])
    {
        header.push(h.to_string());
        numeric.push(true);
    }
    // As the peak table of snapshots writes them: the baseline's own delta `±0` (`0` exact).
    let signed = |d: i64| {
        let m = size(Some(d.unsigned_abs()));
        match d.signum() {
            1 => format!("+{m}"),
            -1 => format!("-{m}"),
            _ if exact => "0".into(),
            _ => "±0".into(),
        }
    };
    let rows = runs
        .iter()
        .map(|r| {
            let mut cells = vec![
                format!(
                    "{}{}",
                    r.name,
                    if r.simulated { " (simulated)" } else { "" }
                ),
                r.rank.map_or(String::new(), |x| x.to_string()),
            ];
            cells.extend(
                keys.iter()
                    .map(|k| r.config.get(k).cloned().unwrap_or_default()),
            );
            let peak = r.peak_allocated_bytes();
            cells.push(r.steps.len().to_string());
            cells.push(size(peak));
            cells.push(match (base, peak) {
                (Some(a), Some(b)) => signed(delta(a, b)),
                _ => String::new(),
            });
            cells.push(size(r.peak_reserved_bytes()));
            if on_device {
                cells.push(size(r.device.as_ref().map(|d| d.1)));
                cells.push(r.headroom_bytes().map_or(String::new(), signed));
            }
            if growing {
                let per_step = r.growth.as_ref().map(|g| g.bytes_per_step.round() as u64);
                cells.push(per_step.map_or(String::new(), |b| format!("+{}", size(Some(b)))));
            }
            cells.push(size(r.static_bytes));
            cells.push(size(r.theoretical_bytes));
            cells.push(r.alloc_retries().map_or(String::new(), |x| x.to_string()));
            cells.push(r.ooms().map_or(String::new(), |x| x.to_string()));
            cells
        })
        .collect();
    Table {
        header,
        rows,
        numeric,
    }
}

/// The ranks of one job's step runs: its name and its rank strip (`runs` index the runs given).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepRanks {
    pub name: String,
    /// Its name where other jobs' runs stand beside it; empty where it is the only job.
    #[serde(skip)]
    pub label: String,
    #[serde(flatten)]
    pub strip: crate::analysis::compare::RankStrip,
}

/// The rank strips of the jobs among `runs`: runs of one name (the file's folder and name without
/// the rank) that carry a rank, by their highest peak allocated (`reserved`: peak reserved), for each
/// job of two ranks or more. Simulated runs are left out.
pub fn rank_sets(runs: &[StepRun], reserved: bool) -> Vec<StepRanks> {
    let mut jobs: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        if r.rank.is_none() || r.simulated {
            continue;
        }
        match jobs.iter_mut().find(|(name, _)| *name == r.name) {
            Some((_, members)) => members.push(i),
            None => jobs.push((&r.name, vec![i])),
        }
    }
    let alone = jobs.len() < 2 && runs.iter().all(|r| jobs.iter().any(|(n, _)| *n == r.name));
    jobs.into_iter()
        .filter_map(|(name, members)| {
            let peak = |r: &StepRun| {
                if reserved {
                    r.peak_reserved_bytes()
                } else {
                    r.peak_allocated_bytes()
                }
            };
            let ranked: Vec<(usize, u32, u64)> = members
                .iter()
                .filter_map(|&i| Some((i, runs[i].rank?, peak(&runs[i])?)))
                .collect();
            let strip = crate::analysis::compare::RankStrip::of(&ranked)?;
            Some(StepRanks {
                name: name.to_string(),
                label: if alone {
                    String::new()
                } else {
                    name.to_string()
                },
                strip,
            })
        })
        .collect()
}

/// A run as the command line's JSON and the page's contract spell it.
pub fn run_json(r: &StepRun) -> serde_json::Value {
    serde_json::json!({
        "file": r.file,
        "name": r.name,
        "rank": r.rank,
        "format": r.format,
        "simulated": r.simulated,
        "config": r.config,
        "steps": r.steps.len(),
        "peak_allocated_bytes": r.peak_allocated_bytes(),
        "peak_step": r.peak_step(),
        "peak_reserved_bytes": r.peak_reserved_bytes(),
        "reserved_is_device_used": r.reserved_is_device_used,
        "static_bytes": r.static_bytes,
        "theoretical_bytes": r.theoretical_bytes,
        "device": r.device.as_ref().map(|(name, total)| serde_json::json!({"name": name, "total_memory_bytes": total})),
        "headroom_bytes": r.headroom_bytes(),
        "components": r.components.iter().map(|(k, v)| serde_json::json!({"name": k, "bytes": v})).collect::<Vec<_>>(),
        "alloc_retries": r.alloc_retries(),
        "ooms": r.ooms(),
        "growth": r.growth,
    })
}
