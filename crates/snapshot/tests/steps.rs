//! Step records in every format the engine reads, written here from the formats' documented shapes
//! with series whose maxima are known, and a malformed file of each format.

use memograph_snapshot::steps::{
    looks_like_steps, merge, rank_sets, read_steps, run_json, steps_table, StepFile, StepRun,
};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// A step series whose highest value is known: (step, step × 7 mod 11) for steps 1 to n; for n = 10 the
/// values are 1 to 10 in another order, the highest (10) at step 3.
fn series(n: u64) -> Vec<(u64, u64)> {
    (1..=n).map(|s| (s, (s * 7) % 11)).collect()
}

fn runs(name: &str, text: &str) -> Vec<StepRun> {
    assert!(looks_like_steps(text.as_bytes()), "{name} not recognised");
    match read_steps(name, text.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}")) {
        StepFile::Runs(r) => r,
        StepFile::Manifest(_) => panic!("{name}: a manifest"),
    }
}

fn err(name: &str, text: &str) -> String {
    read_steps(name, text.as_bytes()).unwrap_err()
}

#[test]
fn memograph_capture_steps_and_manifest() {
    let s = series(10);
    let mut jsonl = String::new();
    for &(step, v) in &s {
        let peak = 4 * GIB + v * MIB;
        jsonl.push_str(&format!(
            "{{\"step\": {step}, \"time\": 1700000000.5, \"rank\": 3, \"allocated_bytes\": {}, \"allocated_peak_bytes\": {peak}, \"active_bytes\": 1, \"active_peak_bytes\": 2, \"reserved_bytes\": {}, \"reserved_peak_bytes\": {}, \"alloc_retries\": {}, \"ooms\": 0}}\n",
            GIB, 6 * GIB, 6 * GIB + v * MIB, step / 5
        ));
    }
    let r = runs("job/rank3_steps.jsonl", &jsonl);
    assert_eq!(r.len(), 1);
    let r = &r[0];
    assert_eq!(
        (r.rank, r.format, r.steps.len()),
        (Some(3), "memograph-capture", 10)
    );
    assert_eq!(r.peak_allocated_bytes(), Some(4 * GIB + 10 * MIB));
    assert_eq!(r.peak_reserved_bytes(), Some(6 * GIB + 10 * MIB));
    assert_eq!((r.alloc_retries(), r.ooms()), (Some(2), Some(0)));
    assert_eq!(r.name, "job/steps");
    // A path typed at a Windows prompt names the run the same way.
    let windows = runs(r"C:\runs\job\rank3_steps.jsonl", &jsonl);
    assert_eq!(
        (windows[0].name.as_str(), windows[0].rank),
        ("job/steps", Some(3))
    );
    assert_eq!((r.static_bytes, r.theoretical_bytes), (None, None));
    let manifest = r#"{"command": ["python", "train.py"], "rank": 3, "static_memory_bytes": 1234567,
        "device": {"index": 0, "name": "NVIDIA H100 80GB HBM3", "total_memory_bytes": 85520809984},
        "first_step": {"parameter_bytes": 1000, "gradient_bytes": 1000, "optimizer_state_bytes": 2000}}"#;
    let m = read_steps("job/rank3_run.json", manifest.as_bytes()).unwrap();
    assert_eq!(r.headroom_bytes(), None);
    let merged = merge(vec![StepFile::Runs(vec![r.clone()]), m]);
    assert_eq!(merged[0].static_bytes, Some(1234567));
    assert_eq!(merged[0].components.len(), 3);
    // The GPU it ran on, and what its highest peak reserved left of it.
    assert_eq!(
        merged[0].device,
        Some(("NVIDIA H100 80GB HBM3".to_string(), 85_520_809_984))
    );
    let headroom = 85_520_809_984 - (6 * GIB + 10 * MIB) as i64;
    assert_eq!(merged[0].headroom_bytes(), Some(headroom));
    let table = steps_table(&merged, 0, true);
    let cell = |name: &str| {
        let k = table.header.iter().position(|h| h == name).unwrap();
        table.rows[0][k].clone()
    };
    assert_eq!(cell("GPU memory"), "85520809984");
    assert_eq!(cell("headroom"), format!("+{headroom}"));
    // The baseline against itself: `0` exact, `±0` as shown (as the snapshots' peak table writes it).
    assert_eq!(cell("vs baseline"), "0");
    let shown = steps_table(&merged, 0, false);
    let k = shown
        .header
        .iter()
        .position(|h| h == "vs baseline")
        .unwrap();
    assert_eq!(shown.rows[0][k], "±0");
    assert_eq!(run_json(&merged[0])["headroom_bytes"], headroom);
    assert_eq!(
        run_json(&merged[0])["device"]["name"],
        "NVIDIA H100 80GB HBM3"
    );
    // The manifest as capture writes it when recording starts, before the first forward and step
    // (a run killed early, or one without an nn.Module): a folder's walk finds it by its contents too.
    let early = r#"{"command": ["python", "train.py"], "rank": 3, "pid": 4242, "started": 1700000000.1,
        "torch": "2.5.1", "cuda": "12.4", "device": {"index": 0, "name": "NVIDIA H100 80GB HBM3",
        "total_memory_bytes": 85520809984}, "allocator_settings": "", "recording": {"max_entries": 100000,
        "stacks": "all", "context": "all"}}"#;
    assert!(looks_like_steps(early.as_bytes()));
    let m = read_steps("job/rank3_run.json", early.as_bytes()).unwrap();
    let merged = merge(vec![StepFile::Runs(vec![r.clone()]), m]);
    assert_eq!(merged[0].headroom_bytes(), Some(headroom));
    // Runs that say no GPU have no such columns.
    let plain = steps_table(std::slice::from_ref(r), 0, false);
    assert!(!plain.header.iter().any(|h| h == "headroom"));
    // Malformed: a record without a step.
    let bad = "{\"allocated_peak_bytes\": 5, \"reserved_peak_bytes\": 6}\n";
    assert_eq!(err("rank0_steps.jsonl", bad), "line 1 has no step");
    assert!(err(
        "rank0_steps.jsonl",
        "{\"step\": 1, \"allocated_peak_bytes\": 5}\n{oops\n"
    )
    .starts_with("line 2 is not JSON"));
}

#[test]
fn torchtitan_rows_logs_and_exports() {
    let s = series(10);
    // Metric rows as JSONL (GiB with two decimals, as logged).
    let mut jsonl = String::new();
    for &(step, v) in &s {
        jsonl.push_str(&format!(
            "{{\"step\": {step}, \"loss\": 7.9, \"memory/max_active(GiB)\": {}, \"memory/max_active(%)\": 30.1, \"memory/max_reserved(GiB)\": {}, \"memory/max_reserved(%)\": 35.0, \"memory/num_alloc_retries\": 0, \"memory/num_ooms\": 0, \"tps\": 1000}}\n",
            20.0 + v as f64 * 0.25, 25.0 + v as f64 * 0.25
        ));
    }
    let r = &runs("titan_metrics.jsonl", &jsonl)[0];
    assert_eq!(r.format, "torchtitan");
    assert_eq!(r.peak_allocated_bytes(), Some((22.5 * GIB as f64) as u64));
    assert_eq!(r.peak_reserved_bytes(), Some((27.5 * GIB as f64) as u64));
    assert_eq!(r.peak_step(), Some(3));
    // The same rows as CSV.
    let mut csv = String::from("step,loss,memory/max_active(GiB),memory/max_active(%),memory/max_reserved(GiB),memory/num_alloc_retries,memory/num_ooms\n");
    for &(step, v) in &s {
        csv.push_str(&format!(
            "{step},7.9,{},30.1,{},0,1\n",
            20.0 + v as f64 * 0.25,
            25.0 + v as f64 * 0.25
        ));
    }
    let c = &runs("titan.csv", &csv)[0];
    assert_eq!(c.peak_allocated_bytes(), r.peak_allocated_bytes());
    assert_eq!(c.peak_reserved_bytes(), r.peak_reserved_bytes());
    assert_eq!(c.ooms(), Some(1));
    // The console log, rank prefixes from torchrun: one run per rank; memory there is max reserved.
    let mut log = String::from("[rank0]:[titan] Starting job\n");
    for &(step, v) in &s {
        for rank in 0..2 {
            log.push_str(&format!(
                "[rank{rank}]:[titan] 2025-01-01 12:00:00,000 - root - INFO - step: {step:2}  loss:  7.9300  memory: {:5.2}GiB({:.2}%)  tps: 1,234  mfu: 40.0%\n",
                25.0 + v as f64 * 0.25 + rank as f64, 26.72
            ));
        }
    }
    let l = runs("train.log", &log);
    assert_eq!(l.len(), 2);
    assert_eq!((l[1].rank, l[1].format), (Some(1), "torchtitan-log"));
    assert_eq!(l[1].peak_reserved_bytes(), Some((28.5 * GIB as f64) as u64));
    assert_eq!(l[0].peak_allocated_bytes(), None);
    // A structured export, metadata as columns, under "history".
    let entries: Vec<String> = s
        .iter()
        .map(|&(step, v)| format!(
            "{{\"step\": {step}, \"timestamp\": 1700000000, \"device_mem_stats\": {{\"max_active_gib\": {}, \"max_active_pct\": 1, \"max_reserved_gib\": 30, \"max_reserved_pct\": 2, \"num_alloc_retries\": 0, \"num_ooms\": 0}}, \"metadata\": {{\"model_flavor\": \"8B\", \"batch_size\": 8, \"seq_len\": 8192}}}}",
            20.0 + v as f64 * 0.25
        ))
        .collect();
    let export = format!("{{\"history\": [{}]}}", entries.join(","));
    let e = &runs("export.json", &export)[0];
    assert_eq!(e.peak_allocated_bytes(), Some((22.5 * GIB as f64) as u64));
    assert_eq!(e.config["seq_len"], "8192");
    assert_eq!(e.config["model_flavor"], "8B");
    // peak_allocated_gib, where written, is the allocated peak.
    let with_peak = export.replace(
        "\"max_active_gib\"",
        "\"peak_allocated_gib\": 1.0, \"max_active_gib\"",
    );
    assert_eq!(
        runs("export.json", &with_peak)[0].peak_allocated_bytes(),
        Some(GIB)
    );
    // Malformed: an entry without a step.
    let bad = "[{\"step\": 1, \"device_mem_stats\": {}}, {\"device_mem_stats\": {}}]";
    assert_eq!(err("steps.json", bad), "entry 1 has no step");
}

#[test]
fn megatron_logs_and_memory_traces() {
    let s = series(10);
    let mut log = String::from(
        "Theoretical memory footprints: weight and optimizer=1024.00 MB, activation=2048.50 MB, total=3072.50 MB\n",
    );
    for &(step, v) in &s {
        log.push_str(&format!(
            "[Rank 0] (after {step} iterations) memory (MB) | allocated: 1000.0 | max allocated: {} | reserved: 3000.0 | max reserved: 3500.0\n",
            2000.0 + v as f64 * 10.0
        ));
    }
    let r = &runs("megatron.log", &log)[0];
    assert_eq!((r.rank, r.format), (Some(0), "megatron-log"));
    assert_eq!(r.peak_allocated_bytes(), Some(2100 * MIB));
    assert_eq!(r.theoretical_bytes, Some((3072.5 * MIB as f64) as u64));
    assert_eq!(r.components[1].1, (2048.5 * MIB as f64) as u64);
    assert_eq!(r.static_bytes, None);
    // The GB variant in iteration lines.
    let gb = " [2025-01-01 00:00:00] iteration       10/    100 | consumed samples: 80 | mem-max-allocated-gigabytes: 12.5 | loss: 1.0\n";
    assert_eq!(
        runs("m.log", gb)[0].peak_allocated_bytes(),
        Some((12.5 * GIB as f64) as u64)
    );
    // A memory trace, with and without the optional static and theoretical figures.
    let iteration = |k: u64, v: u64, extra: &str| {
        format!(
        "\"{k}\": {{\"samples\": [{{\"timestamp_s\": 1.0, \"allocated_memory_MB\": 100.0, \"reserved_memory_MB\": 900.0}}, {{\"timestamp_s\": 1.5, \"allocated_memory_MB\": {}, \"reserved_memory_MB\": 950.0}}], \"peak_allocated_MB\": {}{extra}}}",
        500 + v, 600 + v
    )
    };
    let full: Vec<String> = s
        .iter()
        .map(|&(k, v)| {
            iteration(
                k,
                v,
                ", \"theoretical_memory_MB\": 700.0, \"static_memory_MB\": 300.0",
            )
        })
        .collect();
    let t = &runs(
        "memory_traces_scaling/memory_trace_rank2_tp2_pp4_dp1_mbs1_gbs64.json",
        &format!("{{{}}}", full.join(",")),
    )[0];
    assert_eq!(
        (t.rank, t.simulated, t.reserved_is_device_used),
        (Some(2), true, true)
    );
    assert_eq!(t.peak_allocated_bytes(), Some(610 * MIB));
    assert_eq!(t.peak_reserved_bytes(), Some(950 * MIB));
    assert_eq!(
        (t.static_bytes, t.theoretical_bytes),
        (Some(300 * MIB), Some(700 * MIB))
    );
    assert_eq!(
        (t.config["tp"].as_str(), t.config["gbs"].as_str()),
        ("2", "64")
    );
    let old: Vec<String> = s.iter().map(|&(k, v)| iteration(k, v, "")).collect();
    let o = &runs(
        "memory_traces/memory_trace_rank0_tp1.json",
        &format!("{{{}}}", old.join(",")),
    )[0];
    assert_eq!(
        (o.static_bytes, o.theoretical_bytes, o.simulated),
        (None, None, false)
    );
    // Malformed: an iteration without samples.
    assert_eq!(
        err(
            "memory_trace_rank0.json",
            "{\"1\": {\"samples\": []}, \"2\": {\"peak_allocated_MB\": 1}}"
        ),
        "iteration 2 has no samples"
    );
}

#[test]
fn csv_with_units_in_the_header() {
    let s = series(10);
    let mut csv = String::from("epoch,train_loss,peak_memory_mb,reserved_GiB\n");
    for &(step, v) in &s {
        csv.push_str(&format!("{step},0.5,{},{}\n", 1000 + v, 2.0));
    }
    let r = &runs("epochs.csv", &csv)[0];
    assert_eq!((r.format, r.steps.len()), ("csv", 10));
    assert_eq!(r.peak_allocated_bytes(), Some(1010 * MIB));
    assert_eq!(r.peak_reserved_bytes(), Some(2 * GIB));
    // With a byte-order mark and CRLF line ends, as a spreadsheet saves it: recognised as well as read.
    let excel = format!("\u{feff}{}", csv.replace('\n', "\r\n"));
    assert_eq!(
        runs("epochs.csv", &excel)[0].peak_allocated_bytes(),
        Some(1010 * MIB)
    );
    // Tab- and semicolon-separated, as pandas' sep='\t' and a spreadsheet's export write them.
    for sep in ['\t', ';'] {
        let other = csv.replace(',', &sep.to_string());
        let o = &runs("epochs.tsv", &other)[0];
        assert_eq!(o.name, "epochs");
        assert_eq!(
            (
                o.steps.len(),
                o.peak_allocated_bytes(),
                o.peak_reserved_bytes()
            ),
            (10, Some(1010 * MIB), Some(2 * GIB)),
            "{sep:?}"
        );
    }
    let bad = "epoch,peak_memory_mb\n1,100\n2,lots\n";
    assert_eq!(
        err("epochs.csv", bad),
        "row 3: 'lots' in column 2 is not a number"
    );
    assert_eq!(
        err("x.csv", "epoch,peak_memory_mb\n,100\n"),
        "row 2 has no step"
    );
    // A missing figure, as pandas writes NaN, is left out; a negative or infinite one is an error.
    let gaps = runs("x.csv", "epoch,peak_memory_mb\n1,100\n2,nan\n3,NaN\n4,\n")[0].clone();
    assert_eq!(
        gaps.steps
            .iter()
            .map(|s| s.peak_allocated_bytes)
            .collect::<Vec<_>>(),
        [Some(100 * MIB), None, None, None]
    );
    for (cell, row) in [("-5", 3), ("inf", 3), ("-inf", 3), ("1e300", 3)] {
        assert_eq!(
            err("x.csv", &format!("epoch,peak_memory_mb\n1,100\n2,{cell}\n")),
            format!("row {row}: '{cell}' in column 2 is not an amount of memory")
        );
    }
}

#[test]
fn snapshots_and_other_files_are_not_step_records() {
    assert!(!looks_like_steps(
        b"{\"segments\": [], \"device_traces\": []}"
    ));
    assert!(!looks_like_steps(b"\x80\x04\x95"));
    assert!(!looks_like_steps(b"hello, world\nnothing here\n"));
    // A program whose strings hold a mark (memograph's own holds every one): the page read it as
    // step records and said "not text (UTF-8)", where as a snapshot it is named for what it is.
    let program = [
        &b"\x7fELF\x02\x01\x01\x00\x00\x00"[..],
        b"\"allocated_peak_bytes\"\x00",
    ]
    .concat();
    assert!(!looks_like_steps(&program));
    let e = memograph_snapshot::read_bytes(&program)
        .unwrap_err()
        .to_string();
    assert!(e.contains("a program or library"), "{e}");
    assert!(read_steps("notes.txt", b"hello\n")
        .unwrap_err()
        .starts_with("no step records found"));
}

#[test]
fn a_jobs_ranks_name_the_one_out_of_line() {
    // Two jobs' capture step records, eight ranks each; job a's rank 5 peaks 512 MiB higher. Job b's
    // ranks are alike; a simulated run and a run without a rank stand in no strip.
    let mut all = Vec::new();
    for job in ["a", "b"] {
        for rank in 0..8u64 {
            let extra = if job == "a" && rank == 5 {
                512 * MIB
            } else {
                rank * MIB
            };
            let jsonl: String = (1..=4)
                .map(|step| {
                    format!(
                        "{{\"step\": {step}, \"rank\": {rank}, \"allocated_bytes\": {GIB}, \"allocated_peak_bytes\": {}, \"reserved_bytes\": {}, \"reserved_peak_bytes\": {}}}\n",
                        4 * GIB + extra + step,
                        6 * GIB,
                        6 * GIB + if rank == 2 { GIB } else { 0 },
                    )
                })
                .collect();
            all.extend(runs(&format!("{job}/rank{rank}_steps.jsonl"), &jsonl));
        }
    }
    all.extend(runs("c/steps.csv", "step,peak allocated (GiB)\n1,4\n2,5\n"));
    let sets = rank_sets(&all, false);
    let names: Vec<&str> = sets.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a/steps", "b/steps"]);
    // Named where other jobs' runs stand beside; not where it is the only job.
    assert_eq!(sets[0].label, "a/steps");
    assert_eq!(rank_sets(&all[..8], false)[0].label, "");
    assert_eq!(sets[0].strip.outlier, Some(5));
    assert_eq!(sets[0].strip.max_bytes, 4 * GIB + 512 * MIB + 4);
    assert_eq!(all[sets[0].strip.runs[5]].rank, Some(5));
    assert_eq!(sets[1].strip.outlier, None);
    assert!(sets[0].strip.describe().ends_with("rank 5 is out of line"));
    // By peak reserved, rank 2 of each job is the one.
    let reserved = rank_sets(&all, true);
    assert_eq!(reserved[0].strip.outlier, Some(2));
    assert_eq!(reserved[1].strip.outlier, Some(2));
}

/// A run of `n` steps whose allocated-at-step-end bytes are `at(step)`, peaks 1 GiB above.
fn run_of(n: u64, at: impl Fn(u64) -> u64) -> StepRun {
    StepRun {
        name: "job/steps".into(),
        rank: Some(2),
        steps: (1..=n)
            .map(|step| memograph_snapshot::steps::StepRecord {
                step,
                allocated_bytes: Some(at(step)),
                peak_allocated_bytes: Some(at(step) + GIB),
                ..Default::default()
            })
            .collect(),
        ..StepRun::default()
    }
}

#[test]
fn memory_that_grows_step_after_step_is_found_with_its_rate() {
    // 48 MiB a step after a warm-up that allocated 20 GiB at step 1, with ±100 MiB of noise.
    let noise = |step: u64| ((step * 7) % 11) * 20 * MIB;
    let leak = run_of(500, |step| {
        if step == 1 {
            GIB
        } else {
            20 * GIB + step * 48 * MIB + noise(step)
        }
    });
    let g = leak.find_growth().expect("a growth");
    assert!(
        (g.bytes_per_step - (48 * MIB) as f64).abs() < MIB as f64,
        "{}",
        g.bytes_per_step
    );
    assert_eq!(
        (g.from_step, g.to_step, g.of.as_ref()),
        (51, 500, "allocated at step end")
    );
    assert_eq!(g.reaches_gpu_at, None);
    // On an 80 GiB GPU: at step 500 it holds 20 GiB + 500 × 48 MiB (+ noise 100 MiB) = 43.53 GiB;
    // the rest, 36.47 GiB, is 778 steps more.
    let mut on_gpu = leak.clone();
    on_gpu.device = Some(("H100".into(), 80 * GIB));
    // As the page and the CLI have it: through `merge`, which keeps each run's growth.
    let on_gpu = merge(vec![StepFile::Runs(vec![on_gpu])]).remove(0);
    let at = on_gpu.growth.as_ref().unwrap().reaches_gpu_at.unwrap();
    assert!((1270..=1285).contains(&at), "{at}");
    assert_eq!(
        memograph_snapshot::steps::growth_lines(std::slice::from_ref(&on_gpu)),
        [format!(
            "job/steps rank 2 grows 48.0 MiB a step (allocated at step end, steps 51 to 500); at that rate it reaches the GPU's 80.0 GiB near step {}",
            grouped(at)
        )]
    );
    let table = steps_table(std::slice::from_ref(&on_gpu), 0, true);
    let k = table
        .header
        .iter()
        .position(|h| h == "growth a step")
        .unwrap();
    assert_eq!(
        table.rows[0][k],
        format!("+{}", g.bytes_per_step.round() as u64)
    );
    assert_eq!(run_json(&on_gpu)["growth"]["to_step"], 500);

    // Not growth: a flat run with noise; a level that jumps once (a cache filled) and stays; too
    // little (1 MiB a step over 40 steps, under 64 MiB); too few steps; a run that shrinks.
    let flat = run_of(500, |step| 20 * GIB + noise(step));
    let jump = run_of(
        500,
        |step| if step < 250 { 20 * GIB } else { 22 * GIB } + noise(step),
    );
    let small = run_of(40, |step| 20 * GIB + step * MIB);
    let short = run_of(8, |step| 20 * GIB + step * GIB);
    let shrinks = run_of(500, |step| 40 * GIB - step * 48 * MIB);
    for (name, r) in [
        ("flat", flat),
        ("jump", jump),
        ("small", small),
        ("short", short),
        ("shrinks", shrinks),
    ] {
        assert_eq!(r.find_growth(), None, "{name}");
    }
    assert!(!steps_table(&[run_of(500, |_| GIB)], 0, false)
        .header
        .iter()
        .any(|h| h == "growth a step"));

    // Growth in chunks (a cache that takes 1 GiB every 50 steps) is growth: 1 GiB / 50 steps.
    let stairs = run_of(500, |step| 20 * GIB + (step / 50) * GIB + noise(step));
    let g = stairs.find_growth().expect("growth in chunks");
    assert!(
        (g.bytes_per_step / (GIB / 50) as f64 - 1.0).abs() < 0.1,
        "{}",
        g.bytes_per_step
    );
    // Where few steps say what is allocated at their end, the peaks make the trend.
    let mut peaks = run_of(100, |step| 10 * GIB + step * 100 * MIB);
    for s in peaks.steps.iter_mut().skip(10) {
        s.allocated_bytes = None;
    }
    let g = peaks.find_growth().unwrap();
    assert_eq!(g.of, "peak allocated");
    assert!((g.bytes_per_step - (100 * MIB) as f64).abs() < 1.0);
}

fn grouped(n: u64) -> String {
    memograph_snapshot::format::grouped(n)
}
