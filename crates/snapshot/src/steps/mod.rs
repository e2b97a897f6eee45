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
//!
//! `read.rs` tells a file's format and hands its text to the reader of that format (`json.rs`,
//! `csv.rs`, `log.rs`); `runs.rs` makes tables and rank sets of the runs read; `growth.rs` finds
//! memory that keeps growing.

use std::collections::BTreeMap;

mod csv;
mod growth;
mod json;
mod log;
mod read;
mod runs;

pub use growth::{growth_lines, Growth};
pub(crate) use read::name_run;
pub use read::{looks_like_steps, read_steps};
pub use runs::{merge, rank_sets, run_json, steps_table, StepRanks};

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
