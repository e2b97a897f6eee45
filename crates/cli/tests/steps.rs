//! `memograph steps` on step records written here (tier 1: no fixture needed).

mod common;

use common::memograph_in as memograph;

const MIB: u64 = 1 << 20;

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("memograph-steps-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("run")).unwrap();
    dir
}

/// Two capture ranks (rank 1 peaks higher, at step 4) with a manifest, and a Megatron trace.
fn write_inputs(dir: &std::path::Path) {
    for rank in 0..2u64 {
        let mut lines = String::new();
        for step in 1..=6u64 {
            let peak = 1000 * MIB + (step % 5) * MIB + rank * 100 * MIB;
            lines.push_str(&format!(
                "{{\"step\": {step}, \"time\": 1.0, \"rank\": {rank}, \"allocated_bytes\": 1, \"allocated_peak_bytes\": {peak}, \"active_bytes\": 1, \"active_peak_bytes\": 1, \"reserved_bytes\": 2, \"reserved_peak_bytes\": {}, \"alloc_retries\": 0, \"ooms\": 0}}\n",
                peak + MIB
            ));
        }
        std::fs::write(dir.join(format!("run/rank{rank}_steps.jsonl")), lines).unwrap();
    }
    std::fs::write(
        dir.join("run/rank1_run.json"),
        r#"{"rank": 1, "command": ["train.py"], "static_memory_bytes": 524288000, "first_step": {"parameter_bytes": 100, "gradient_bytes": 100, "optimizer_state_bytes": 200}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("memory_trace_rank0_tp2.json"),
        r#"{"1": {"samples": [{"timestamp_s": 0, "allocated_memory_MB": 10, "reserved_memory_MB": 20}], "peak_allocated_MB": 12.5, "theoretical_memory_MB": 30}}"#,
    )
    .unwrap();
}

#[test]
fn steps_json_has_one_run_per_rank_with_nulls_where_inputs_lack_figures() {
    let dir = scratch("json");
    write_inputs(&dir);
    let (code, stdout, stderr) = memograph(
        &[
            "steps",
            "--json",
            "run/rank0_steps.jsonl",
            "run/rank1_steps.jsonl",
            "run/rank1_run.json",
            "memory_trace_rank0_tp2.json",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0]["rank"], 0);
    assert_eq!(runs[0]["peak_allocated_bytes"], 1004 * MIB);
    assert_eq!(runs[0]["static_bytes"], serde_json::Value::Null);
    assert_eq!(runs[1]["rank"], 1);
    assert_eq!(runs[1]["peak_allocated_bytes"], 1104 * MIB);
    assert_eq!(runs[1]["peak_reserved_bytes"], 1105 * MIB);
    assert_eq!(runs[1]["static_bytes"], 500 * MIB);
    assert_eq!(runs[1]["steps"], 6);
    assert_eq!(runs[2]["peak_allocated_bytes"], (12.5 * MIB as f64) as u64);
    assert_eq!(runs[2]["theoretical_bytes"], 30 * MIB);
    assert_eq!(runs[2]["alloc_retries"], serde_json::Value::Null);
    // The job's two ranks (the trace has a rank too, but is another run): rank 1 peaks 100 MiB higher.
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 1);
    assert_eq!(ranks[0]["name"], "run/steps");
    assert_eq!(ranks[0]["max_bytes"], 1104 * MIB);
    assert_eq!(
        ranks[0]["peaks"],
        serde_json::json!([[0, 1004 * MIB], [1, 1104 * MIB]])
    );
    // The text table and a chart.
    let (code, stdout, _) = memograph(
        &[
            "steps",
            "run/rank0_steps.jsonl",
            "run/rank1_steps.jsonl",
            "-o",
            "steps.png",
        ],
        &dir,
    );
    assert_eq!(code, 0);
    assert!(
        stdout.contains("peak allocated")
            && stdout.contains("1004.0 MiB")
            && stdout.contains("1.1 GiB"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nRanks: 2 ranks · mean 1.0 GiB · max 1.1 GiB · imbalance ×1.05\n"),
        "{stdout}"
    );
    assert!(std::fs::metadata(dir.join("steps.png")).unwrap().len() > 10_000);
    // A chart that cannot be written says why, in a line; one not named .png is a usage error, before
    // any file is read.
    let (code, _, stderr) = memograph(
        &["steps", "run/rank0_steps.jsonl", "-o", "nowhere/steps.png"],
        &dir,
    );
    assert_eq!(
        (code, stderr.trim()),
        (1, "error: cannot write nowhere/steps.png: no such folder")
    );
    let (code, stdout, stderr) =
        memograph(&["steps", "run/rank0_steps.jsonl", "-o", "steps.svg"], &dir);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.contains("the chart is drawn as PNG: name it OUT.png"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_malformed_file_is_one_line_and_exit_1_while_the_others_are_read() {
    let dir = scratch("bad");
    write_inputs(&dir);
    std::fs::write(
        dir.join("steps.json"),
        r#"[{"step": 1, "device_mem_stats": {}}, {"device_mem_stats": {}}]"#,
    )
    .unwrap();
    let (code, stdout, stderr) = memograph(
        &["steps", "--json", "steps.json", "run/rank0_steps.jsonl"],
        &dir,
    );
    assert_eq!(code, 1);
    assert_eq!(stderr.trim(), "error: steps.json: entry 1 has no step");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_run_that_grows_step_after_step_is_said_with_its_rate_and_when_it_fills_the_gpu() {
    let dir = scratch("growth");
    // Rank 0 holds 20 GiB after each step; rank 1 32 MiB more each step (a leak), on a 40 GiB GPU.
    for rank in 0..2u64 {
        let mut lines = String::new();
        for step in 1..=100u64 {
            let at_end = 20 * 1024 * MIB + rank * step * 32 * MIB;
            lines.push_str(&format!(
                "{{\"step\": {step}, \"time\": 1.0, \"rank\": {rank}, \"allocated_bytes\": {at_end}, \"allocated_peak_bytes\": {}, \"reserved_bytes\": 2, \"reserved_peak_bytes\": 3, \"alloc_retries\": 0, \"ooms\": 0}}\n",
                at_end + 1024 * MIB
            ));
        }
        std::fs::write(dir.join(format!("run/rank{rank}_steps.jsonl")), lines).unwrap();
        std::fs::write(
            dir.join(format!("run/rank{rank}_run.json")),
            format!(r#"{{"rank": {rank}, "command": ["train.py"], "device": {{"index": 0, "name": "A40", "total_memory_bytes": {}}}}}"#, 40 * 1024 * MIB),
        )
        .unwrap();
    }
    // At step 100 rank 1 holds 20 GiB + 3 200 MiB; the 17 280 MiB left are 540 steps more.
    let (code, stdout, stderr) = memograph(&["steps", "run"], &dir);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("\nGrowing step after step:\n  run/steps rank 1 grows 32.0 MiB a step (allocated at step end, steps 11 to 100); at that rate it reaches the GPU's 40.0 GiB near step 640\n"),
        "{stdout}"
    );
    assert!(stdout.contains("growth a step"), "{stdout}");
    // In Markdown the lines are a list (indented, they ran into one paragraph where pasted).
    let (_, stdout, _) = memograph(&["steps", "--markdown", "run"], &dir);
    assert!(
        stdout.contains("\nGrowing step after step:\n\n- run/steps rank 1 grows 32.0 MiB a step"),
        "{stdout}"
    );
    let (_, stdout, _) = memograph(&["steps", "--json", "run"], &dir);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["runs"][0]["growth"], serde_json::Value::Null);
    let g = &v["runs"][1]["growth"];
    assert_eq!(g["bytes_per_step"], (32 * MIB) as f64);
    assert_eq!(
        (g["from_step"].as_u64(), g["to_step"].as_u64()),
        (Some(11), Some(100))
    );
    assert_eq!(g["reaches_gpu_at"], 640);
    assert_eq!(g["of"], "allocated at step end");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A snapshot saved as JSON whose trace the profiler marks in `steps` steps (`ProfilerStep#N`), each
/// allocating 512 MiB and keeping 100 MiB of it live, after 1 GiB of parameters.
fn snapshot_with_steps(steps: u64) -> String {
    let entry = |action: &str, addr: u64, size: u64, t: u64| {
        format!(
            r#"{{"action": "{action}", "addr": {addr}, "size": {size}, "stream": 0, "time_us": {t}, "frames": []}}"#
        )
    };
    let mark = |stage: &str, k: u64, t: u64| {
        format!(
            r#"{{"stage": "{stage}", "name": "ProfilerStep#{k}", "device": 0, "time_us": {t}}}"#
        )
    };
    let (mut trace, mut marks) = (vec![entry("alloc", 1 << 40, 1024 * MIB, 1)], Vec::new());
    for k in 0..steps {
        let (t, act, kept) = (100 + 100 * k, (2 << 40) + (k << 32), (3 << 40) + (k << 32));
        marks.push(mark("START", k, t));
        trace.push(entry("alloc", act, 412 * MIB, t + 10));
        trace.push(entry("alloc", kept, 100 * MIB, t + 20));
        trace.push(entry("free_completed", act, 412 * MIB, t + 30));
        marks.push(mark("END", k, t + 90));
    }
    format!(
        r#"{{"segments": [], "device_traces": [[{}]], "external_annotations": [{}]}}"#,
        trace.join(","),
        marks.join(",")
    )
}

#[test]
fn a_snapshot_whose_trace_marks_steps_reads_as_step_records() {
    let dir = scratch("snapshot");
    std::fs::write(dir.join("leak_snapshot.json"), snapshot_with_steps(20)).unwrap();
    let (code, stdout, stderr) = memograph(&["steps", "--json", "leak_snapshot.json"], &dir);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["format"], "snapshot trace");
    assert_eq!(run["name"], "leak_snapshot");
    assert_eq!(run["steps"], 20);
    // Step 20 begins with the parameters and 19 steps' 100 MiB, and peaks 512 MiB above that.
    assert_eq!(run["peak_allocated_bytes"], (1024 + 19 * 100 + 512) * MIB);
    assert_eq!(run["static_bytes"], 1024 * MIB);
    let (code, stdout, stderr) = memograph(&["steps", "leak_snapshot.json"], &dir);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "leak_snapshot grows 100.0 MiB a step (allocated at step end, steps 3 to 20)"
        ),
        "{stdout}"
    );
    // `summary` says them in a line.
    let (code, stdout, stderr) = memograph(&["summary", "leak_snapshot.json"], &dir);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("\n    steps            20, marked by ProfilerStep#N; the highest peak, 3.4 GiB, in step 20\n"),
        "{stdout}"
    );
    // One that marks a single step is said to mark none, and which command reads it.
    std::fs::write(dir.join("one_step.json"), snapshot_with_steps(1)).unwrap();
    let (code, _, stderr) = memograph(&["steps", "one_step.json"], &dir);
    assert_eq!(code, 1);
    assert_eq!(
        stderr.trim(),
        "error: one_step.json: a memory snapshot whose trace marks no training steps (no \
         ProfilerStep#N, Optimizer.step or DataLoader annotations, nor ranges named as steps, two \
         or more); memograph report reads it"
    );
}
