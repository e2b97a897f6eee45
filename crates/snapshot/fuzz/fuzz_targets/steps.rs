//! Step records from any bytes, under each of the names that choose how a file is read (a capture's
//! `rank{R}_steps.jsonl` and `rank{R}_run.json`, a CSV, a log, a Megatron memory trace, a simulated
//! one): nothing panics, and what is read goes on through what the page and `memograph steps` do with
//! it (the merge of runs and manifests, the per-run table against every baseline, each run's JSON and
//! figures, and the runs that grow step after step).
#![no_main]

use memograph_snapshot::steps::{
    growth_lines, looks_like_steps, merge, read_steps, run_json, steps_table,
};

const NAMES: [&str; 7] = [
    "job/rank0_steps.jsonl",
    "job/rank0_run.json",
    "metrics.csv",
    "train.log",
    "export.json",
    "memory_traces/memory_trace_rank1_tp2.json",
    "memory_traces_scaling/memory_trace_rank0_tp2_pp4.json",
];

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = looks_like_steps(data);
    let files: Vec<_> = NAMES
        .iter()
        .filter_map(|name| read_steps(name, data).ok())
        .collect();
    let runs = merge(files);
    for baseline in 0..runs.len() {
        for exact in [false, true] {
            let table = steps_table(&runs, baseline, exact);
            assert!(table.rows.iter().all(|r| r.len() == table.header.len()));
        }
    }
    let _ = growth_lines(&runs);
    for r in &runs {
        let _ = run_json(r);
        let _ = (
            r.peak_allocated_bytes(),
            r.peak_reserved_bytes(),
            r.headroom_bytes(),
        );
        let _ = (r.alloc_retries(), r.ooms(), r.peak_step());
    }
});
