//! Console logs: torchtitan's step lines and Megatron-LM's memory lines (and its theoretical
//! footprint), one run per rank.

use std::collections::BTreeMap;

use regex_lite::Regex;

use super::{to_bytes, StepRecord, StepRun, GIB, MIB};

pub(super) fn torchtitan_line() -> &'static Regex {
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
pub(super) fn log_lines(text: &str) -> Result<Vec<StepRun>, String> {
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
