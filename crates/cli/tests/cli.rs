//! The `memograph` binary, run as users run it.

mod common;

use common::{fixture_names, fixtures, json_lines, memograph, memograph_in, reference};
use memograph_snapshot::format;

#[test]
fn summary_json_matches_every_reference_one_line_per_file() {
    if !common::present("summary_json_matches_every_reference_one_line_per_file") {
        return;
    }
    let names = fixture_names();
    let paths: Vec<String> = names
        .iter()
        .map(|n| fixtures().join(n).display().to_string())
        .collect();
    let mut args = vec!["summary", "--json"];
    args.extend(paths.iter().map(String::as_str));
    let (code, stdout, stderr) = memograph(&args);
    assert_eq!(code, 0, "{stderr}");
    let lines = json_lines(&stdout);
    assert_eq!(lines.len(), names.len());
    for (got, name) in lines.iter().zip(&names) {
        let reference = reference(name);
        assert!(got["file"].as_str().unwrap().ends_with(name.as_str()));
        assert_eq!(got["devices"], reference["devices"], "{name}");
    }
}

#[test]
fn summary_table_shows_exact_peak_bytes_per_device() {
    if !common::present("summary_table_shows_exact_peak_bytes_per_device") {
        return;
    }
    let path = fixtures().join("cs_memory_snapshot.pickle");
    let (code, stdout, _) = memograph(&["summary", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(stdout.contains("\n  cuda:2\n"), "{stdout}");
    // Counts grouped as every figure is.
    assert!(
        stdout.contains("trace entries    6 445  (alloc 2 434, free_completed 1 918, free_requested 1 918, segment_map 175)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("(8 456 473 388 bytes)  after entry 6 278\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("timeline peak    78.3 GiB (84 063 351 764 bytes)  after entry 420"),
        "{stdout}"
    );
    // Device 1 ran out of memory right after its peak; the others did not.
    assert_eq!(stdout.matches("out of memory").count(), 1, "{stdout}");
    assert!(
        stdout.contains(
            "    out of memory at entry 421\n      a request of 4.9 GiB with 91.2 MiB free on the \
             device\n      PyTorch held 78.3 GiB allocated, 78.4 GiB reserved (132.9 MiB cached but \
             free)\n      asked for by "
        ),
        "{stdout}"
    );
}

#[test]
fn summary_names_an_out_of_memory_entry_of_a_repository_fixture() {
    // Tier 1: recorded on an H200 (PyTorch 2.11), a request of 1 PiB after a 4 MiB tensor.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/oom.pickle"
    );
    let (code, stdout, _) = memograph(&["summary", path]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains(
            "    out of memory at entry 2\n      a request of 1.0 PiB with 139.3 GiB free on the \
             device\n      PyTorch held 4.0 MiB allocated, 20.0 MiB reserved (16.0 MiB cached but \
             free)\n      asked for by "
        ),
        "{stdout}"
    );
}

#[test]
fn summary_and_trace_say_how_to_record_history_when_a_snapshot_has_none() {
    // What `torch.cuda.memory._snapshot()` gives without `_record_memory_history()`: segments and no
    // trace (as JSON, which reads into the same model).
    let dir = scratch("no-history");
    let path = dir.join("no_history.json");
    let block = r#"{"address": 139000000000000, "size": 1048576, "requested_size": 1000000,
        "state": "active_allocated", "frames": [{"filename": "train.py", "line": 10, "name": "forward"}]}"#;
    let json = format!(
        r#"{{"segments": [{{"device": 0, "address": 139000000000000, "total_size": 2097152,
        "allocated_size": 1048576, "active_size": 1048576, "requested_size": 1000000, "stream": 0,
        "segment_type": "small", "frames": [], "blocks": [{block}]}}], "device_traces": [[]]}}"#
    );
    std::fs::write(&path, json).unwrap();
    let (code, stdout, stderr) = memograph(&["summary", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("no_history.json  (JSON, 1 device)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "    No allocator history: only what was allocated when the snapshot was taken, not \
             how it got there (call torch.cuda.memory._record_memory_history() before the steps \
             you care about, then _dump_snapshot())\n"
        ),
        "{stdout}"
    );
    // `trace` says why it lists nothing, rather than a header over nothing.
    let (code, stdout, _) = memograph(&["trace", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("No allocator history: "), "{stdout}");
    // A snapshot with a trace says nothing of it.
    let (synth_dir, path, _) = synth_file("no-history-synth");
    let (_, stdout, _) = memograph(&["summary", path.to_str().unwrap()]);
    assert!(!stdout.contains("allocator history"), "{stdout}");
    for d in [dir, synth_dir] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn trace_prints_one_line_per_event_with_versioned_addresses() {
    if !common::present("trace_prints_one_line_per_event_with_versioned_addresses") {
        return;
    }
    let path = fixtures().join("a0kuma_adam.pickle");
    let (code, stdout, _) = memograph(&["trace", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1 + 35);
    assert!(
        lines[2].contains("alloc") && lines[2].contains("b7f89b4000000_0"),
        "{}",
        lines[2]
    );
    let (code, _, stderr) = memograph(&["trace", path.to_str().unwrap(), "--device", "3"]);
    assert_eq!(code, 1);
    // Named with the devices the file has, as compare, diff, stats and report name them.
    assert!(stderr.ends_with(": no device 3 (devices: 0)\n"), "{stderr}");
    let (code, _, stderr) = memograph(&["stats", path.to_str().unwrap(), "--device", "3"]);
    assert_eq!(code, 1);
    assert!(stderr.ends_with(": no device 3 (devices: 0)\n"), "{stderr}");
}

#[test]
fn trace_and_stats_name_the_devices_they_left_out() {
    if !common::present("trace_and_stats_name_the_devices_they_left_out") {
        return;
    }
    // cs holds three devices: the default (cuda:0, the longest trace) is shown and the others named.
    let path = fixtures().join("cs_memory_snapshot.pickle");
    let file = path.to_str().unwrap();
    for (command, verb) in [("trace", "listed"), ("stats", "shown")] {
        let (code, stdout, stderr) = memograph(&[command, file]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "note: {file} also has cuda:1, cuda:2 ({verb}: its device with the longest trace; \
                 --device N for the others)\n"
            )
        );
        assert!(!stdout.contains("note:"), "{stdout}");
        // A device asked for: nothing to say.
        let (code, _, stderr) = memograph(&[command, file, "--device", "1"]);
        assert_eq!((code, stderr.as_str()), (0, ""));
    }
    let (_, stdout, _) = memograph(&["stats", file, "-d", "2"]);
    assert!(
        stdout.starts_with(&format!("{file}  cuda:2: 2 segments")),
        "{stdout}"
    );
    // One device: no note.
    let single = fixtures().join("a0kuma_adam.pickle");
    let (_, _, stderr) = memograph(&["stats", single.to_str().unwrap()]);
    assert_eq!(stderr, "");
}

#[test]
fn trace_finds_allocations_as_the_page_does_and_writes_json_lines() {
    if !common::present("trace_finds_allocations_as_the_page_does_and_writes_json_lines") {
        return;
    }
    let name = "kk_memory_ctx128_fullstep.pickle";
    let path = fixtures().join(name);
    let file = path.to_str().unwrap();
    let reference = reference(name);
    let events = &reference["devices"]["0"]["events"];
    let total: u64 = events
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();

    // Every event as a JSON line, as many of each action as the reference counts.
    let (code, stdout, stderr) = memograph(&["trace", file, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let rows = json_lines(&stdout);
    assert_eq!(rows.len() as u64, total);
    for (action, n) in events.as_object().unwrap() {
        let got = rows
            .iter()
            .filter(|r| r["action"] == action.as_str())
            .count();
        assert_eq!(got as u64, n.as_u64().unwrap(), "{action}");
    }
    assert!(rows.iter().enumerate().all(|(i, r)| r["entry"] == i));
    // Versioned names as MemoryViz gives them: the first entry maps a segment.
    assert_eq!(rows[0]["action"], "segment_alloc");
    assert_eq!(rows[0]["name"], "s7f2d88200000_0");

    // The trace's largest allocation (157.0 MiB): its alloc, free request and free, with its stack.
    let (code, stdout, _) = memograph(&["trace", file, "--find", ">100MiB"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "find \">100MiB\": 1 allocation, 157.0 MiB allocated in all; 3 of their events below"
    );
    let entries: Vec<&str> = lines[2..]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(entries, ["4660", "4664", "4665"]);
    let (code, stdout, _) = memograph(&["trace", file, "--find", ">100MiB", "--json", "--stacks"]);
    assert_eq!(code, 0);
    let found = json_lines(&stdout);
    assert_eq!(found.len(), 3);
    for (r, action) in found
        .iter()
        .zip(["alloc", "free_requested", "free_completed"])
    {
        assert_eq!(r["action"], action);
        assert_eq!(r["size"], 164_626_432u64);
        let frames = r["frames"].as_array().unwrap();
        assert!(
            frames.iter().any(|f| f
                .as_str()
                .unwrap()
                .ends_with("training.py:21:cross_entropy_loss")),
            "{frames:?}"
        );
    }
    // Text in a frame, within a range of entries: every event shown lies in it.
    let (code, stdout, _) = memograph(&[
        "trace",
        file,
        "--find",
        "cross_entropy",
        "--entries",
        "4000:5000",
    ]);
    assert_eq!(code, 0);
    let shown: Vec<u64> = stdout
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert!(shown.contains(&4660), "{stdout}");
    assert!(shown.iter().all(|e| (4000..5000).contains(e)));
    // A range alone: the entries from 19 000 to the end.
    let (code, stdout, _) = memograph(&["trace", file, "--entries", "19000:"]);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count() as u64, 1 + total - 19_000);
    // A range past the end says so, rather than a header over nothing; a find of nothing says its
    // count alone.
    let (code, stdout, _) = memograph(&["trace", file, "--entries", "99999999:"]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        format!(
            "no entries from 99 999 999 on: cuda:0's trace has {} entries (0 to {})\n",
            format::grouped(total),
            format::grouped(total - 1)
        )
    );
    let (code, stdout, _) = memograph(&["trace", file, "--find", ">1TiB"]);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
}

#[test]
fn stats_totals_add_up_to_the_reserved_bytes() {
    if !common::present("stats_totals_add_up_to_the_reserved_bytes") {
        return;
    }
    let path = fixtures().join("kk_memory_ctx128_fullstep.pickle");
    let (code, stdout, _) = memograph(&["stats", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let t = &v["totals"];
    assert_eq!(t["reserved"], 61_111_009_280u64);
    assert_eq!(t["segments"], 1010);
    let parts = t["allocated"].as_u64().unwrap()
        + t["pending_free"].as_u64().unwrap()
        + t["free"].as_u64().unwrap();
    assert_eq!(parts, 61_111_009_280);
}

#[test]
fn bad_input_is_one_line_naming_the_file_and_exit_1() {
    if !common::present("bad_input_is_one_line_naming_the_file_and_exit_1") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("memograph-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let truncated = dir.join("big.pickle");
    let bytes = std::fs::read(fixtures().join("a0kuma_adam.pickle")).unwrap();
    std::fs::write(&truncated, &bytes[..18_446]).unwrap();
    let evil = dir.join("evil.pickle");
    std::fs::write(&evil, b"cos\nsystem\n(S'touch /tmp/pwned'\ntR.").unwrap();
    let cases = [
        (
            truncated.clone(),
            "unexpected end of file at byte 18446 (file truncated?)",
        ),
        (evil.clone(), "refusing pickle opcode GLOBAL at byte 0"),
        (dir.join("missing.pickle"), "no such file"),
    ];
    for (path, reason) in cases {
        let (code, stdout, stderr) = memograph(&["summary", path.to_str().unwrap()]);
        assert_eq!(code, 1, "{path:?}");
        assert!(stdout.is_empty());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: {}: ", path.display())),
            "{stderr}"
        );
        assert!(stderr.contains(reason), "{stderr}");
        assert!(!stderr.contains("panicked"));
    }
    // Good files are still summarised when another one fails.
    let good = fixtures().join("a0kuma_adam.pickle");
    let (code, stdout, stderr) = memograph(&[
        "summary",
        "--json",
        evil.to_str().unwrap(),
        good.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().count(), 1);
    assert_eq!(stderr.lines().count(), 1);
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(memograph(&["frobnicate"]).0, 2);
    assert_eq!(memograph(&["summary"]).0, 2);
    assert_eq!(memograph(&["diff", "a.pickle"]).0, 2);
    assert_eq!(memograph(&["compare", "a", "--json", "--markdown"]).0, 2);
    assert_eq!(memograph(&["trace", "a.pickle", "--entries", "8:5"]).0, 2);
    assert_eq!(memograph(&["trace", "a.pickle", "--entries", "x"]).0, 2);
    assert_eq!(memograph(&["trace", "a.pickle", "--find", " "]).0, 2);
    assert_eq!(memograph(&["--help"]).0, 0);
}

#[test]
fn help_version_completions_and_suggestions_as_cargo_users_expect() {
    let (code, stdout, _) = memograph(&["help", "report"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Where the memory goes") && stdout.contains("--rules"),
        "{stdout}"
    );
    let (code, stdout, _) = memograph(&["compare", "--help"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("--baseline"), "{stdout}");
    let (code, stdout, _) = memograph(&["--version"]);
    assert_eq!(
        (code, stdout.trim()),
        (0, concat!("memograph ", env!("CARGO_PKG_VERSION")))
    );
    // A typo: exit 2 and the command meant.
    let (code, _, stderr) = memograph(&["sumary", "x.pickle"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("a similar subcommand exists: 'summary'"),
        "{stderr}"
    );
    let (code, _, stderr) = memograph(&["summary", "--jsn", "x.pickle"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--json"), "{stderr}");
    for shell in ["bash", "zsh", "fish"] {
        let (code, stdout, _) = memograph(&["completions", shell]);
        assert_eq!(code, 0, "{shell}");
        assert!(
            stdout.contains("memograph") && stdout.contains("compare") && stdout.len() > 1000,
            "{shell}"
        );
    }
}

/// A scratch directory for one test (tier 1: files the test writes itself).
fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("memograph-cli-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A synthetic snapshot of 50 steps written into a scratch directory for `test`: (the directory, the
/// file, what was written).
fn synth_file(
    test: &str,
) -> (
    std::path::PathBuf,
    std::path::PathBuf,
    memograph_snapshot::synth::Written,
) {
    let dir = scratch(test);
    let written = memograph_snapshot::synth::pickle(50);
    let path = dir.join("synth.pickle");
    std::fs::write(&path, &written.bytes).unwrap();
    (dir, path, written)
}

#[test]
fn a_synthetic_snapshot_summarises_to_the_figures_it_was_written_with() {
    let (dir, path, written) = synth_file("synth");
    let (code, out, err) = memograph(&["summary", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let d = &json["devices"]["0"];
    assert_eq!(d["timeline_peak_bytes"], written.peak_bytes);
    assert_eq!(d["events"]["alloc"], written.allocations);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_synthetic_trace_has_one_json_line_per_entry_and_finds_by_size() {
    let (dir, path, written) = synth_file("synth-trace");
    let file = path.to_str().unwrap();
    let rows = |args: &[&str]| -> Vec<serde_json::Value> {
        let (code, out, err) = memograph(&[&["trace", file, "--json"], args].concat());
        assert_eq!(code, 0, "{err}");
        json_lines(&out)
    };
    let all = rows(&["--stacks"]);
    assert_eq!(all.len(), written.entries);
    let allocs = all.iter().filter(|r| r["action"] == "alloc").count();
    assert_eq!(allocs, written.allocations);
    // Every entry was written with a stack of 8–24 frames.
    assert!(all
        .iter()
        .all(|r| (8..=24).contains(&r["frames"].as_array().unwrap().len())));
    // A size query: every alloc it shows is of that size or more, and it shows each one that is.
    let big = all
        .iter()
        .filter(|r| r["action"] == "alloc")
        .map(|r| r["size"].as_u64().unwrap())
        .max()
        .unwrap();
    let found = rows(&["--find", &format!(">={big}")]);
    let wanted = all
        .iter()
        .filter(|r| r["action"] == "alloc" && r["size"] == big)
        .count();
    assert!(wanted > 0);
    assert_eq!(
        found.iter().filter(|r| r["action"] == "alloc").count(),
        wanted
    );
    assert!(found.iter().all(|r| r["size"] == big));
    // A range of entries, the end left out.
    assert_eq!(rows(&["--entries", "10:"]).len(), written.entries - 10);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn files_that_are_no_snapshot_are_named_in_one_line_with_exit_1() {
    let dir = scratch("named");
    let cases: [(&str, &[u8], &str); 2] = [
        ("model.pt", b"PK\x03\x04\x14\x00\x00\x00\x00\x00\x0a\x35\x77\x5d\x77\x8d\xea\x73\x8c\x00\x00\x00\x8c\x00\x00\x00\x10\x00\x00\x00archive/data.pkl\x80\x02}q\x00", "as torch.save writes"),
        ("page.html", b"<!DOCTYPE html><html><head><title>404</title></head></html>", "an HTML page"),
    ];
    for (name, bytes, what) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let (code, out, err) = memograph(&["summary", path.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "error: {}: not a memory snapshot: ",
                path.display()
            )),
            "{err}"
        );
        assert!(err.contains(what), "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// `memograph trace F | head`: the reader closes the pipe early; the CLI stops without a panic message.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/compiled.pickle"
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_memograph"))
        .args(["trace", file])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Its trace is 139 kB, more than a pipe holds: the CLI is still writing when the pipe closes.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("entry"), "{first}");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "{stderr}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
    }
}

/// capture's folder as a run leaves it: ranks' snapshots (rank10 and rank2, to be listed by number,
/// and one in a folder of its own), step records and a run manifest, and what people keep beside them.
fn capture_folder() -> std::path::PathBuf {
    let root = std::env::temp_dir().join(format!("memograph-cli-folder-{}", std::process::id()));
    let dir = root.join("memograph_snapshots");
    std::fs::create_dir_all(dir.join("older")).unwrap();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let copy = |from: &str, to: &str| std::fs::copy(repo.join(from), dir.join(to)).unwrap();
    copy("tests/fixtures/training.pickle", "rank10_exit_0.pickle");
    copy("tests/fixtures/compiled.pickle", "rank2_exit_0.pickle");
    copy(
        "tests/fixtures/training.pickle",
        "older/rank0_exit_0.pickle",
    );
    copy(
        "crates/snapshot/fuzz/corpus/steps/capture_steps.jsonl",
        "rank0_steps.jsonl",
    );
    copy(
        "crates/snapshot/fuzz/corpus/steps/capture_run.json",
        "rank0_run.json",
    );
    std::fs::write(dir.join("README.md"), "# what this run was\n").unwrap();
    std::fs::write(dir.join("config.json"), "{\"lr\": 0.001}\n").unwrap();
    std::fs::write(dir.join(".hidden.pickle"), "not read").unwrap();
    dir
}

#[test]
fn a_folder_stands_for_its_snapshots_or_its_step_records() {
    // Tier 1: the repository's fixtures.
    let dir = capture_folder();
    let folder = dir.display().to_string();
    let named = |f: &str| dir.join(f).display().to_string();
    let (code, stdout, stderr) = memograph(&["summary", "--json", &folder]);
    assert_eq!(code, 0, "{stderr}");
    let files: Vec<String> = json_lines(&stdout)
        .iter()
        .map(|l| l["file"].as_str().unwrap().to_string())
        .collect();
    // Walked whole, numbers in order as numbers; the README, the config and hidden files left alone.
    assert_eq!(
        files,
        [
            named("older/rank0_exit_0.pickle"),
            named("rank2_exit_0.pickle"),
            named("rank10_exit_0.pickle")
        ]
    );
    // A file named beside its folder (and by another spelling) is compared once.
    let again = format!("{folder}/older/../rank2_exit_0.pickle");
    let (code, stdout, stderr) = memograph(&["compare", "--json", &again, &folder]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        rows,
        [
            again.as_str(),
            &named("older/rank0_exit_0.pickle"),
            &named("rank10_exit_0.pickle")
        ]
    );
    // A baseline named by another spelling of a file in the folder is that file, where it stands.
    let baseline = format!("{folder}/older/../rank10_exit_0.pickle");
    let (code, stdout, stderr) =
        memograph(&["compare", "--json", "--baseline", &baseline, &folder]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(v["baseline"], named("rank10_exit_0.pickle").as_str());
    assert_eq!(rows[2]["delta_bytes"], 0);
    // In the folder, `.` names its files from there (not `./older/…`).
    let (code, stdout, stderr) = memograph_in(&["compare", "--json", "."], &dir);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["rows"][0]["file"], "older/rank0_exit_0.pickle");
    let (code, stdout, stderr) = memograph(&["steps", "--json", &folder]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v}");
    // A report of the folder, twice into the same output directory (which holds no snapshots, so it
    // stays the output directory).
    let out = dir.parent().unwrap().join("reports");
    for _ in 0..2 {
        let (code, stdout, stderr) =
            memograph(&["report", "-q", &folder, out.to_str().unwrap(), "ranks"]);
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.contains("| ranks_rank2_exit_0 |"), "{stdout}");
    }
    // One file is read where one is named; a folder with nothing to read says so.
    let (code, _, stderr) = memograph(&["trace", &folder]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("memograph_snapshots: is a folder: name one snapshot in it"),
        "{stderr}"
    );
    let empty = dir.join("older/empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, stderr) = memograph(&["compare", empty.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("empty: no snapshots in this folder"),
        "{stderr}"
    );
    let (code, _, stderr) = memograph(&["steps", empty.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("empty: no step records in this folder"),
        "{stderr}"
    );
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}
