//! The training steps within a trace, found by the profiler annotations PyTorch records.

mod common;

use common::repository_fixture;

use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::analysis::trace_steps::{trace_steps, TraceSteps};
use memograph_snapshot::{read_bytes, Snapshot};

/// A snapshot saved as JSON: parameters (1 000 `unit`s) allocated before the steps, then `steps`
/// steps that each allocate 500 units of activations and free them, and keep 100 units live (a leak),
/// every step within the annotation `marker` (START and END; each step 100 µs). Each is allocated
/// at `train.py`'s line of its size in units: `train.py:100:step` keeps.
fn json_snapshot(marker: impl Fn(usize) -> String, steps: usize, unit: u64) -> Snapshot {
    let mut trace = vec![entry("alloc", 0x1000 * unit, 1000, unit, 10)];
    let mut annotations = Vec::new();
    for k in 0..steps {
        let t = 100 + 100 * k as i64;
        let (act, kept) = (0x10000 + 0x1000 * k as u64, 0x80000 + 0x1000 * k as u64);
        let (act, kept) = (act * unit, kept * unit);
        annotations.push(mark("START", &marker(k), t));
        trace.push(entry("alloc", act, 500, unit, t + 10));
        trace.push(entry("alloc", kept, 100, unit, t + 20));
        trace.push(entry("free_requested", act, 500, unit, t + 30));
        trace.push(entry("free_completed", act, 500, unit, t + 40));
        annotations.push(mark("END", &marker(k), t + 90));
    }
    let json = format!(
        r#"{{"segments": [], "device_traces": [[{}]], "allocator_settings": {{}}, "external_annotations": [{}]}}"#,
        trace.join(","),
        annotations.join(",")
    );
    read_bytes(json.as_bytes()).unwrap()
}

fn entry(action: &str, addr: u64, units: u64, unit: u64, t: i64) -> String {
    let size = units * unit;
    format!(
        r#"{{"action": "{action}", "addr": {addr}, "size": {size}, "stream": 0, "time_us": {t}, "frames": [{{"filename": "train.py", "line": {units}, "name": "step"}}]}}"#
    )
}

fn mark(stage: &str, name: &str, t: i64) -> String {
    format!(r#"{{"stage": "{stage}", "name": "{name}", "device": 0, "time_us": {t}}}"#)
}

fn steps_of(s: &Snapshot, device: i64) -> Option<TraceSteps> {
    trace_steps(s, &Lifetimes::of(s, device))
}

#[test]
fn profiler_steps_begin_where_each_starts() {
    let s = json_snapshot(|k| format!("ProfilerStep#{}", k + 1), 3, 1);
    let found = steps_of(&s, 0).unwrap();
    assert_eq!(found.marker, "ProfilerStep#N");
    assert!(!found.ends_at_marker);
    assert_eq!((found.entries_before, found.entries_after), (1, 0));
    let figures: Vec<_> = found
        .steps
        .iter()
        .map(|s| {
            (
                s.step,
                s.first_entry,
                s.end_entry,
                s.live_at_start,
                s.peak_bytes,
                s.live_at_end,
            )
        })
        .collect();
    assert_eq!(
        figures,
        [
            (1, 1, 5, 1000, 1600, 1100),
            (2, 5, 9, 1100, 1700, 1200),
            (3, 9, 13, 1200, 1800, 1300),
        ]
    );
    // The peak is reached after the step's second allocation: its entry 1 + 4k + 1.
    let peaks: Vec<i64> = found.steps.iter().map(|s| s.peak_entry).collect();
    assert_eq!(peaks, [2, 6, 10]);
    assert!(found.steps.iter().all(|s| s.allocations == 2));
    // Steps to the next start; the last to its own end.
    let durations: Vec<_> = found.steps.iter().map(|s| s.duration_us).collect();
    assert_eq!(durations, [Some(100), Some(100), Some(90)]);
    assert_eq!(found.steps[1].kept_bytes(), 100);
    assert_eq!(found.highest().unwrap().step, 3);
    // Three steps are too few to call 100 bytes a step a trend.
    assert_eq!(found.growth, None);
    assert_eq!(
        found.finding(),
        "**3 steps in the trace** (marked by `ProfilerStep#N`): the highest peak, 1.8 KiB, in step 3 \
         (200 B above the lowest step's). Steps 2 to 3 leave 200 B more live in all, the most at `train.py:100:step` \
         (+200 B)."
    );
}

#[test]
fn optimizer_steps_end_each_step_and_a_leak_is_said() {
    let s = json_snapshot(|_| "Optimizer.step#AdamW.step".into(), 40, 1 << 20);
    let found = steps_of(&s, 0).unwrap();
    assert!(found.ends_at_marker);
    assert_eq!(found.steps.len(), 40);
    // Step 1 counts from the trace's start (the parameters' allocation with it).
    assert_eq!(
        (found.steps[0].first_entry, found.steps[0].end_entry),
        (0, 5)
    );
    assert_eq!(found.steps[0].live_at_start, 0);
    assert_eq!(
        (found.steps[1].first_entry, found.steps[1].end_entry),
        (5, 9)
    );
    assert_eq!((found.entries_before, found.entries_after), (0, 0));
    let growth = found.growth.as_ref().unwrap();
    assert_eq!(growth.bytes_per_step, 100.0 * 1048576.0);
    assert_eq!(
        found.finding(),
        "**40 steps in the trace** (marked by `Optimizer.step#AdamW.step`): the highest peak, 5.4 GiB, \
         in step 40 (3.8 GiB above the lowest step's). What each step leaves live grows +100.0 MiB a step \
         (steps 5 to 40), the most at `train.py:100:step` (+3.8 GiB): something outlives its step."
    );
}

#[test]
fn user_ranges_named_as_steps_mark_them_and_others_do_not() {
    let s = json_snapshot(|k| format!("train_step_{k}"), 2, 1);
    let found = steps_of(&s, 0).unwrap();
    assert_eq!(
        (found.marker.as_str(), found.steps.len()),
        ("train_step_N", 2)
    );
    for (name, marker) in [
        ("TrainStep", "TrainStepN"),
        ("iteration ", "iteration N"),
        ("next_batch", "next_batchN"),
    ] {
        let found = steps_of(&json_snapshot(|k| format!("{name}{k}"), 3, 1), 0).unwrap();
        assert_eq!((found.marker.as_str(), found.steps.len()), (marker, 3));
    }
    // A forward pass, torch.compile's ranges, an operator, a single step: no steps.
    for name in [
        "forward",
        "pad_mm_benchmark (dynamo_timed)",
        "Optimizer.zero_grad#AdamW.zero_grad",
        "aten::batch_norm",
        "batch_norm",
    ] {
        assert_eq!(
            steps_of(&json_snapshot(|_| name.into(), 5, 1), 0),
            None,
            "{name}"
        );
    }
    assert_eq!(
        steps_of(&json_snapshot(|_| "ProfilerStep#1".into(), 1, 1), 0),
        None
    );
}

#[test]
fn each_step_has_the_most_reserved_from_just_before_it_and_its_out_of_memory_entries() {
    // A 4 KiB segment before the steps; step 1 maps 8 KiB more, gives it back and runs out of memory;
    // step 2 begins by giving back the first segment (its peak reserved is the level it began at).
    let seg = |action: &str, addr: u64, size: u64, t: i64| {
        format!(
            r#"{{"action": "{action}", "addr": {addr}, "size": {size}, "stream": 0, "time_us": {t}}}"#
        )
    };
    let trace = [
        seg("segment_alloc", 0x100000, 4096, 10),
        entry("alloc", 0x100000, 512, 1, 110),
        seg("segment_alloc", 0x200000, 8192, 120),
        seg("segment_free", 0x200000, 8192, 130),
        r#"{"action": "oom", "addr": 0, "size": 65536, "stream": 0, "time_us": 140, "device_free": 0}"#
            .to_string(),
        seg("segment_free", 0x100000, 4096, 210),
        entry("alloc", 0x300000, 256, 1, 220),
    ];
    let marks = [
        mark("START", "ProfilerStep#1", 100),
        mark("END", "ProfilerStep#1", 190),
        mark("START", "ProfilerStep#2", 200),
        mark("END", "ProfilerStep#2", 290),
    ];
    let json = format!(
        r#"{{"segments": [], "device_traces": [[{}]], "allocator_settings": {{}}, "external_annotations": [{}]}}"#,
        trace.join(","),
        marks.join(",")
    );
    let found = steps_of(&read_bytes(json.as_bytes()).unwrap(), 0).unwrap();
    let got: Vec<_> = found
        .steps
        .iter()
        .map(|s| ((s.first_entry, s.end_entry), s.peak_reserved_bytes, s.ooms))
        .collect();
    assert_eq!(got, [((1, 5), 12288, 1), ((5, 7), 4096, 0)]);
    let run = found.step_run();
    assert_eq!(
        run.steps
            .iter()
            .map(|s| (s.peak_reserved_bytes, s.ooms))
            .collect::<Vec<_>>(),
        [(Some(12288), Some(1)), (Some(4096), Some(0))]
    );
    let table = found.table();
    assert_eq!(table.header[6..9], ["peak reserved", "allocations", "OOMs"]);
    assert_eq!(table.rows[0][6..9], ["12.0 KiB", "1", "1"]);
}

/// `name`'s trace `times` times over, each copy at addresses and times of its own, with its
/// annotations: a run of that many steps, each the fixture's.
fn tiled(one: &Snapshot, times: u64) -> Snapshot {
    let mut s = one.clone();
    let t = s.device_traces[0].clone();
    let span = t.time_us[t.len() - 1] - t.time_us[0] + 1000;
    let one = s.external_annotations.clone();
    let trace = &mut s.device_traces[0];
    for k in 1..times {
        let shift = k << 40;
        trace.action.extend(&t.action);
        trace.addr.extend(t.addr.iter().map(|a| a + shift));
        trace.size.extend(&t.size);
        trace.stream.extend(&t.stream);
        trace
            .time_us
            .extend(t.time_us.iter().map(|x| x + span * k as i64));
        trace.stack.extend(&t.stack);
        trace.compile_context.extend(&t.compile_context);
        trace.user_metadata.extend(&t.user_metadata);
        s.external_annotations.extend(one.iter().map(|a| {
            let mut a = a.clone();
            a.time_us = a.time_us.map(|x| x + span * k as i64);
            a
        }));
    }
    s
}

#[test]
fn a_real_step_repeated_is_a_step_each_time() {
    let name = "kk_memory_ctx128_fullstep.pickle";
    // One optimizer step alone: no steps.
    let one = read_bytes(&fixture_or_skip!(name)).unwrap();
    assert_eq!(steps_of(&one, 0), None);
    let reference = &common::reference(name)["devices"]["0"];
    let alone = Lifetimes::of(&one, 0);
    let rise = reference["timeline_peak_bytes"].as_u64().unwrap() - alone.initial_bytes;

    let times = 12;
    let s = tiled(&one, times);
    let found = steps_of(&s, 0).unwrap();
    assert_eq!(found.marker, "Optimizer.step#AdamW.step");
    assert_eq!(found.steps.len(), times as usize);
    let entries = one.trace(0).len() as u32;
    let allocs = reference["events"]["alloc"].as_u64().unwrap() as u32;
    for (k, step) in found.steps.iter().enumerate() {
        // Each step is one copy of the fixture's trace, and rises as far above where it began.
        assert_eq!(step.first_entry, k as u32 * entries, "step {}", step.step);
        assert_eq!(step.end_entry, (k as u32 + 1) * entries);
        assert_eq!(step.allocations, allocs);
        assert_eq!(step.peak_bytes - step.live_at_start, rise);
    }
    // Each copy keeps what the fixture's step never frees: a leak of that much a step.
    let kept = found.steps[1].kept_bytes();
    assert!(kept > 0);
    assert!(found.steps[1..].iter().all(|s| s.kept_bytes() == kept));
    assert_eq!(found.growth.as_ref().unwrap().bytes_per_step, kept as f64);
    assert_eq!(found.highest().unwrap().step, times as u32);
    // Where: places that hold more at the last step's end than at the first's, most first.
    assert!(!found.kept_at.is_empty());
    assert!(found
        .kept_at
        .windows(2)
        .all(|w| w[0].delta_bytes >= w[1].delta_bytes));
    assert!(found.kept_at[0].delta_bytes > 0);
}

#[test]
fn no_fixture_marks_two_steps() {
    // Each records one optimizer step at most, one batch, or torch.compile's ranges.
    for name in common::fixture_names() {
        let s = read_bytes(&common::fixture_bytes(&name)).unwrap();
        for d in s.devices() {
            assert_eq!(steps_of(&s, d), None, "{name} device {d}");
        }
    }
}

#[test]
fn many_families_of_one_mark_each_are_no_steps_and_no_quadratic_search() {
    // 100 000 ranges each named as a step of its own (`r0_step` … `r99999_step`): a family each
    // (found by a map: a search through the families was 5·10⁹ comparisons), none marking two steps.
    let s = json_snapshot(|k| format!("r{k}_step"), 100_000, 1);
    assert_eq!(steps_of(&s, 0), None);
}

/// A step's (entries, live at start, peak, live at end, allocations).
type Figures = ((u32, u32), u64, u64, u64, u32);

fn figures(found: &TraceSteps) -> Vec<Figures> {
    found
        .steps
        .iter()
        .map(|s| {
            let entries = (s.first_entry, s.end_entry);
            (
                entries,
                s.live_at_start,
                s.peak_bytes,
                s.live_at_end,
                s.allocations,
            )
        })
        .collect()
}

// The figures below were computed apart from the engine, in Python from each pickle: live bytes by
// the fixtures' README definitions (unmatched frees and snapshot-only blocks live from the start),
// each mark placed at the first entry at or after its time.

#[test]
fn a_real_training_loop_is_three_optimizer_steps_and_keeps_nothing_after_the_first() {
    // Three AdamW steps (scripts/record_fixtures.py's `training`): the first allocates the
    // optimizer's state, the next two leave what they began with.
    let found = steps_of(&repository_fixture("training.pickle"), 0).unwrap();
    assert_eq!(found.marker, "Optimizer.step#AdamW.step");
    assert_eq!(
        figures(&found),
        [
            ((0, 74), 0, 89_159_680, 84_959_232, 36),
            ((74, 137), 84_959_232, 89_159_680, 84_959_232, 21),
            ((137, 200), 84_959_232, 89_159_680, 84_959_232, 21),
        ]
    );
    // Reserved (computed apart as the figures above): one 86.0 MiB level all along.
    let reserved: Vec<_> = found.steps.iter().map(|s| s.peak_reserved_bytes).collect();
    assert_eq!(reserved, [90_177_536; 3]);
    // No step ran out of memory: the table has no OOMs column.
    assert!(!found.table().header.iter().any(|h| h == "OOMs"));
    assert_eq!((found.growth.clone(), found.kept_at.len()), (None, 0));
    assert_eq!(
        found.summary(),
        "every step peaks at 85.0 MiB. Steps 2 to 3 leave nothing more live."
    );
}

#[test]
fn real_ranges_named_step_n_under_torch_compile_are_two_steps() {
    // `step_0` and `step_1` ranges around a compiled model's forward and backward (`compiled`):
    // the first compiles, and peaks far higher.
    let found = steps_of(&repository_fixture("compiled.pickle"), 0).unwrap();
    assert_eq!(found.marker, "step_N");
    assert_eq!(
        figures(&found),
        [
            ((6, 1499), 4_200_448, 137_900_040, 76_558_340, 502),
            ((1499, 1547), 76_558_340, 81_020_936, 76_558_340, 16),
        ]
    );
    assert_eq!(found.entries_before, 6);
    assert_eq!(found.highest().unwrap().step, 1);
    let reserved: Vec<_> = found.steps.iter().map(|s| s.peak_reserved_bytes).collect();
    assert_eq!(reserved, [182_452_224; 2]);
}

#[test]
fn digests_carry_the_steps_and_name_their_runs_as_memograph_steps_does() {
    use memograph_snapshot::analysis::categories::Rules;
    use memograph_snapshot::analysis::compare::{digests, Digest};
    use memograph_snapshot::analysis::trace_steps::{step_file, step_runs_of};
    use memograph_snapshot::steps::StepFile;
    let mut all = Vec::new();
    for name in ["training.pickle", "compiled.pickle", "oom.pickle"] {
        let s = repository_fixture(name);
        let made = digests(&s, &Rules::built_in(), &format!("runs/{name}"), 1);
        assert_eq!(made[0].steps, steps_of(&s, 0), "{name}");
        // Across the worker (as JSON): the steps survive.
        let json = serde_json::to_string(&made).unwrap();
        let back: Vec<Digest> = serde_json::from_str(&json).unwrap();
        assert!(back.iter().zip(&made).all(|(b, m)| b.steps == m.steps));
        let Some(StepFile::Runs(of_file)) = step_file(&format!("runs/{name}"), &s) else {
            assert_eq!(made[0].steps, None, "{name}");
            all.extend(made);
            continue;
        };
        assert_eq!(step_runs_of(&made), of_file);
        all.extend(made);
    }
    let runs = step_runs_of(&all);
    let names: Vec<_> = runs
        .iter()
        .map(|r| (r.name.as_str(), r.steps.len()))
        .collect();
    assert_eq!(names, [("runs/training", 3), ("runs/compiled", 2)]);
    assert_eq!(runs[0].peak_allocated_bytes(), Some(89_159_680));
    // Two devices of one file with steps: each run says its device.
    let mut two = all[0].clone();
    two.device = 1;
    let runs = step_runs_of(&[&all[0], &two]);
    let names: Vec<_> = runs
        .iter()
        .map(|r| (r.name.as_str(), r.config["device"].as_str()))
        .collect();
    assert_eq!(
        names,
        [("runs/training cuda:0", "0"), ("runs/training cuda:1", "1")]
    );
}

#[test]
fn a_traces_steps_beside_step_records_of_its_job_and_rank_are_no_run_of_their_own() {
    use memograph_snapshot::analysis::trace_steps::unrecorded;
    use memograph_snapshot::steps::StepRun;
    let run = |file: &str, rank: Option<u32>| StepRun {
        file: file.into(),
        rank,
        ..StepRun::default()
    };
    let records = [
        run("job/rank0_steps.jsonl", Some(0)),
        run("steps.csv", Some(3)),
    ];
    let traces = vec![
        // Its job has records (of rank 0: a capture's folder whose rank 1 wrote none is one job);
        // another job has none.
        run("job/rank0_peak_3.pickle", Some(0)),
        run("job/rank1_peak_3.pickle", Some(1)),
        run("other/rank0_exit_9.pickle", Some(0)),
        // In a folder, beside records picked without theirs: of their rank, or of another.
        run("x/rank3_exit_9.pickle", Some(3)),
        run("x/snapshot.pickle", None),
        // Picked without its folder, beside records picked so too (of one job, whatever the rank).
        run("rank5_exit_9.pickle", Some(5)),
    ];
    let kept: Vec<_> = unrecorded(&records, traces)
        .into_iter()
        .map(|r| r.file)
        .collect();
    assert_eq!(kept, ["other/rank0_exit_9.pickle", "x/snapshot.pickle"]);
}
