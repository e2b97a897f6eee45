//! `memograph steps`: per-step memory records (memograph-capture, torchtitan, Megatron-LM, CSV) as a
//! table per run × rank, as JSON, or as a chart drawn by the page's chart code.

use std::path::PathBuf;

use memograph_snapshot::steps::{
    growth_lines, merge, rank_sets, read_steps, run_json, steps_table, StepFile, StepRun,
};

use crate::{load, Failure};

pub struct StepsArgs {
    pub files: Vec<String>,
    pub json: bool,
    pub markdown: bool,
    pub theoretical: bool,
    pub reserved: bool,
    pub chart: Option<PathBuf>,
}

pub fn run(args: &StepsArgs) -> Result<(), Failure> {
    let mut files: Vec<StepFile> = Vec::new();
    let mut failures = 0;
    for path in &args.files {
        let bytes = std::fs::read(path).map_err(|e| load::io_reason(&e));
        // What is no step records may be a snapshot whose trace marks steps.
        let read = bytes
            .and_then(|bytes| read_steps(path, &bytes))
            .or_else(|reason| trace_steps_of(path).unwrap_or(Err(reason)));
        match read {
            Ok(f) => files.push(f),
            Err(reason) => {
                eprintln!("error: {path}: {reason}");
                failures += 1;
            }
        }
    }
    let runs = merge(files);
    let ranks = rank_sets(&runs, args.reserved);
    if args.json {
        let runs: Vec<serde_json::Value> = runs.iter().map(run_json).collect();
        println!("{}", serde_json::json!({ "runs": runs, "ranks": ranks }));
    } else if !runs.is_empty() {
        let table = steps_table(&runs, 0, false);
        print!(
            "{}",
            if args.markdown {
                table.markdown()
            } else {
                crate::text_table(&table)
            }
        );
        for set in &ranks {
            let of = if set.label.is_empty() {
                String::new()
            } else {
                format!(" of {}", set.label)
            };
            let by = if args.reserved {
                " (peak reserved)"
            } else {
                ""
            };
            println!("\nRanks{of}{by}: {}", set.strip.describe());
        }
        let growing = growth_lines(&runs);
        if !growing.is_empty() {
            let list = crate::list("Growing step after step:", growing, args.markdown);
            print!("\n{list}");
        }
        notes(&runs);
    }
    if let Some(out) = &args.chart {
        let refs: Vec<&StepRun> = runs.iter().collect();
        crate::charts::draw_steps(&refs, args.reserved, args.theoretical, out).map_err(Failure)?;
        eprintln!("wrote {}", out.display());
    }
    if failures > 0 {
        return Err(Failure::reported());
    }
    Ok(())
}

/// The training steps the profiler's annotations mark in a snapshot's trace, as step records;
/// `None` when the file is no snapshot.
fn trace_steps_of(path: &str) -> Option<Result<StepFile, String>> {
    let snapshot = load::open(path).ok()?;
    let steps = memograph_snapshot::analysis::trace_steps::step_file(path, &snapshot);
    Some(steps.ok_or_else(|| {
        "a memory snapshot whose trace marks no training steps (no ProfilerStep#N, \
         Optimizer.step or DataLoader annotations, nor ranges named as steps, two or more); \
         memograph report reads it"
            .into()
    }))
}

/// What the table's figures mean where the inputs differ from the allocator's own counters.
fn notes(runs: &[StepRun]) {
    if runs.iter().any(|r| r.reserved_is_device_used) {
        println!("\nreserved: for Megatron memory traces, the device's used memory (not the allocator's reserved bytes)");
    }
    for r in runs.iter().filter(|r| !r.components.is_empty()) {
        let sum: u64 = r.components.iter().map(|c| c.1).sum();
        let parts: Vec<String> = r
            .components
            .iter()
            .map(|(k, v)| format!("{k} {}", memograph_snapshot::format::bytes(*v)))
            .collect();
        let peak = r.peak_allocated_bytes().unwrap_or(0);
        println!(
            "\n{}: {} = {} in all; the measured peak is {} ({} {})",
            r.name,
            parts.join(" + "),
            memograph_snapshot::format::bytes(sum),
            memograph_snapshot::format::bytes(peak),
            memograph_snapshot::format::bytes(peak.abs_diff(sum)),
            if peak >= sum { "more" } else { "less" }
        );
    }
    println!("\nMB in these files is 2^20 bytes and GB/GiB 2^30.");
}
