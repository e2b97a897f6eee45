//! `memograph compare` and `memograph diff`, run as users run them, on real fixtures.

mod common;

use std::path::Path;

use common::{fixtures, memograph, memograph_with, present, reference};

fn path(name: &str) -> String {
    fixtures().join(name).display().to_string()
}

#[test]
fn compare_json_rows_hold_the_reference_peaks_config_and_deltas() {
    if !present("compare_json_rows_hold_the_reference_peaks_config_and_deltas") {
        return;
    }
    let names = [
        "kk_memory_ctx128_forward.pickle",
        "kk_memory_ctx128_fullstep.pickle",
        "cs_memory_snapshot.pickle",
    ];
    let files: Vec<String> = names.iter().map(|n| path(n)).collect();
    let mut args = vec!["compare", "--json", "--baseline", &files[1]];
    args.extend(files.iter().map(String::as_str));
    let (code, stdout, stderr) = memograph(&args);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["baseline"], files[1].as_str());
    let rows = v["rows"].as_array().unwrap();
    // Rows keep the order given; deltas are against the baseline's peak.
    let order: Vec<&str> = rows.iter().map(|r| r["file"].as_str().unwrap()).collect();
    assert_eq!(order, files);
    let base_peak = rows[1]["timeline_peak_bytes"].as_i64().unwrap();
    assert_eq!(rows[1]["delta_bytes"], 0);
    for row in rows {
        let file = row["file"].as_str().unwrap();
        let name = file.rsplit('/').next().unwrap();
        let r = &reference(name)["devices"][row["device"].to_string()];
        let peak = row["timeline_peak_bytes"].as_i64().unwrap();
        assert_eq!(peak, r["timeline_peak_bytes"].as_i64().unwrap(), "{name}");
        assert_eq!(row["peak_event_index"], r["peak_event_index"], "{name}");
        assert_eq!(
            row["delta_bytes"].as_i64().unwrap(),
            peak - base_peak,
            "{name}"
        );
        let components: i64 = row["components"]
            .as_object()
            .unwrap()
            .values()
            .map(|b| b.as_i64().unwrap())
            .sum();
        assert_eq!(components, peak, "{name}");
        assert!(row["reserved_at_peak_bytes"].as_i64().unwrap() >= peak);
        // None of these devices ran out of memory (their references count no `oom` entry).
        assert!(r["events"].get("oom").is_none(), "{name}");
        assert_eq!(
            (&row["oom"], &row["oom_entry"]),
            (&false.into(), &serde_json::Value::Null)
        );
    }
    assert_eq!(rows[1]["config"]["phase"], "fullstep");
    assert_eq!(rows[0]["config"]["ctx"], "128");
    assert_eq!(rows[0]["config"]["phase"], "forward");
    assert_eq!(rows[2]["config"], serde_json::json!({}));
}

#[test]
fn compare_says_what_other_devices_a_file_has_and_all_compares_each() {
    if !present("compare_says_what_other_devices_a_file_has_and_all_compares_each") {
        return;
    }
    // cs_memory_snapshot holds three devices; cuda:1 ran out of memory.
    let (cs, kk) = (
        path("cs_memory_snapshot.pickle"),
        path("kk_memory_ctx128_forward.pickle"),
    );
    let (code, stdout, stderr) = memograph(&["compare", "--json", &cs, &kk]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    assert_eq!(
        stderr.trim(),
        format!(
            "note: {cs} also has cuda:1, cuda:2 (compared: its device with the longest trace; \
             --device N or --device all for the others)"
        )
    );
    let (code, stdout, stderr) = memograph(&["compare", "--json", "--device", "all", &cs, &kk]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let seen: Vec<(&str, i64, i64, bool)> = rows
        .iter()
        .map(|r| {
            (
                r["file"].as_str().unwrap(),
                r["device"].as_i64().unwrap(),
                r["timeline_peak_bytes"].as_i64().unwrap(),
                r["oom"].as_bool().unwrap(),
            )
        })
        .collect();
    let peak = |name: &str, d: &str| {
        reference(name)["devices"][d]["timeline_peak_bytes"]
            .as_i64()
            .unwrap()
    };
    let cs_name = "cs_memory_snapshot.pickle";
    assert_eq!(
        seen,
        [
            (cs.as_str(), 0, peak(cs_name, "0"), false),
            (cs.as_str(), 1, peak(cs_name, "1"), true),
            (cs.as_str(), 2, peak(cs_name, "2"), false),
            (
                kk.as_str(),
                0,
                peak("kk_memory_ctx128_forward.pickle", "0"),
                false
            ),
        ]
    );
    // In text, a file on several devices is named with its device (and without the folder, named
    // once above).
    let (code, stdout, _) = memograph(&["compare", "--device", "all", &cs, &kk]);
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with(&format!(
            "In {}/\nBaseline: {cs_name} cuda:0\n",
            fixtures().display()
        )),
        "{stdout}"
    );
    let (code, _, stderr) = memograph(&["compare", "--device", "most", &cs]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("\"most\" is no device (say 0, 1, … or all)"),
        "{stderr}"
    );
}

#[test]
fn compare_json_says_where_a_run_ran_out_of_memory() {
    // Tier 1: the repository's fixtures, one of which asked for 1 PiB at its entry 2.
    let repo = |name: &str| format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let (code, stdout, stderr) = memograph(&[
        "compare",
        "--json",
        &repo("oom.pickle"),
        &repo("pools.pickle"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(
        (&rows[0]["oom"], &rows[0]["oom_entry"]),
        (&true.into(), &2.into())
    );
    assert_eq!(
        (&rows[1]["oom"], &rows[1]["oom_entry"]),
        (&false.into(), &serde_json::Value::Null)
    );
}

#[test]
fn compare_text_and_markdown_tables_name_every_run() {
    if !present("compare_text_and_markdown_tables_name_every_run") {
        return;
    }
    let (a, b) = (
        path("kk_memory_ctx128_forward.pickle"),
        path("kk_memory_ctx128_fullstep.pickle"),
    );
    let (code, stdout, stderr) = memograph(&["compare", &a, &b]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("peak allocated")
            && stdout.contains("16.4 GiB")
            && stdout.contains("51.0 GiB"),
        "{stdout}"
    );
    assert!(
        stdout.contains("+34.6 GiB") && stdout.contains("×3.11"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Grew at the same call path") && stdout.contains("optimizers.py:82:step"),
        "{stdout}"
    );
    // Their folder is named once, above the table; the rows hold the files' own names. Neither run
    // holds parameters (both kk runs' weights were allocated before recording began): no column of
    // 0 B, a line under the table instead.
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], format!("In {}/", fixtures().display()));
    assert_eq!(lines[1], "Baseline: kk_memory_ctx128_forward.pickle");
    assert!(lines[3].starts_with("file ") && !lines[3].contains("parameters"));
    assert!(lines[4].starts_with("kk_memory_ctx128_forward.pickle "));
    assert!(lines[5].starts_with("kk_memory_ctx128_fullstep.pickle "));
    assert_eq!(lines[6], "0 B in every run: parameters");
    // Wider than the terminal (COLUMNS here), the table comes in blocks of columns, each led by the
    // files' names, no line wider than the terminal.
    let (code, narrow, _) =
        memograph_with(&["compare", &a, &b], Path::new("."), &[("COLUMNS", "100")]);
    assert_eq!(code, 0);
    let table: Vec<&str> = narrow
        .lines()
        .skip(3)
        .take_while(|l| !l.starts_with("0 B in every run"))
        .collect();
    assert!(table.iter().all(|l| l.chars().count() <= 100), "{narrow}");
    let heads: Vec<&&str> = table.iter().filter(|l| l.starts_with("file ")).collect();
    assert!(heads.len() >= 2, "{narrow}");
    assert_eq!(
        table.len(),
        heads.len() * 4 - 1,
        "three lines and a blank per block: {narrow}"
    );
    // Every column is in one block or another, once.
    let columns = |text: &str| {
        text.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty() && *c != "file")
            .count()
    };
    assert_eq!(
        heads.iter().map(|h| columns(h)).sum::<usize>(),
        columns(lines[3]),
        "{narrow}"
    );
    let (code, stdout, _) = memograph(&["compare", "--markdown", &a, &b]);
    assert_eq!(code, 0);
    let table: Vec<&str> = (stdout.split("\n\n"))
        .find(|block| block.starts_with("| file |"))
        .map_or(Vec::new(), |block| block.lines().collect());
    assert_eq!(table.len(), 4, "{stdout}");
    assert!(table[1].starts_with("|---|---|"), "{stdout}");
    // Markdown keeps every column, for tables pasted side by side.
    assert!(table[0].contains("| parameters |"), "{stdout}");
    // The call paths that grew are a table of their own (indented lines ran into one paragraph),
    // apart from the runs' table.
    let grown: Vec<&str> = stdout
        .split("\n\n")
        .filter(|block| block.starts_with("| A | B | Δ | × | call path |"))
        .flat_map(str::lines)
        .collect();
    assert_eq!(grown.len(), 2 + 8, "{stdout}");
    assert!(
        grown[2].starts_with("| 0 B | 12.7 GiB | +12.7 GiB | new | `")
            && grown[2].ends_with("optimizers.py:82:step` |"),
        "{stdout}"
    );
}

#[test]
fn a_bad_file_is_one_line_and_exit_1_while_the_others_are_compared() {
    if !present("a_bad_file_is_one_line_and_exit_1_while_the_others_are_compared") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("memograph-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("broken.pickle");
    std::fs::write(&bad, b"\x80\x04\x95\x10\x00").unwrap();
    let good = path("a0kuma_adam.pickle");
    let (code, stdout, stderr) = memograph(&[
        "compare",
        &good,
        bad.to_str().unwrap(),
        &path("magma_memory_snapshot.pickle"),
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 1);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}: ", bad.display())),
        "{stderr}"
    );
    assert!(
        stdout.contains("a0kuma_adam.pickle") && stdout.contains("magma_memory_snapshot.pickle"),
        "{stdout}"
    );
}

#[test]
fn diff_json_root_delta_is_the_difference_of_the_peaks() {
    if !present("diff_json_root_delta_is_the_difference_of_the_peaks") {
        return;
    }
    let (a, b) = (
        path("kk_memory_ctx128_forward.pickle"),
        path("kk_memory_ctx128_fullstep.pickle"),
    );
    let (code, stdout, stderr) = memograph(&["diff", &a, &b, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let peak = |name: &str| {
        reference(name)["devices"]["0"]["timeline_peak_bytes"]
            .as_i64()
            .unwrap()
    };
    let (pa, pb) = (
        peak("kk_memory_ctx128_forward.pickle"),
        peak("kk_memory_ctx128_fullstep.pickle"),
    );
    assert_eq!(v["a_bytes"].as_i64().unwrap(), pa);
    assert_eq!(v["b_bytes"].as_i64().unwrap(), pb);
    assert_eq!(v["delta_bytes"].as_i64().unwrap(), pb - pa);
    let tree = &v["tree"];
    assert_eq!(tree["delta_bytes"].as_i64().unwrap(), pb - pa);
    let children: i64 = tree["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["delta_bytes"].as_i64().unwrap())
        .sum();
    assert_eq!(children, pb - pa);
    // At two chosen entries instead of the peaks: the start of both traces.
    let (code, stdout, _) = memograph(&["diff", &a, &b, "--at", "-1:-1", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["b_bytes"].as_i64().unwrap() < pb);
    // Text: the tree with A, B and the delta.
    let (code, stdout, _) = memograph(&["diff", &a, &b]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("<all live memory>") && stdout.contains("+34.6 GiB"),
        "{stdout}"
    );
    // An entry that is not there, and a usage error.
    let (code, _, stderr) = memograph(&["diff", &a, &b, "--at", "0:99999999"]);
    assert_eq!((code, stderr.lines().count()), (1, 1), "{stderr}");
    assert_eq!(memograph(&["diff", &a]).0, 2);
}

#[test]
fn diff_takes_a_device_per_side_and_names_the_devices_it_left_out() {
    if !present("diff_takes_a_device_per_side_and_names_the_devices_it_left_out") {
        return;
    }
    // cs holds three devices; its cuda:1 ran out of memory.
    let cs = path("cs_memory_snapshot.pickle");
    let devices = &reference("cs_memory_snapshot.pickle")["devices"];
    let (code, stdout, stderr) = memograph(&["diff", &cs, &cs, "--device", "0:2", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "", "devices named: nothing left out to say");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for (side, device) in [("a", "0"), ("b", "2")] {
        let r = &devices[device];
        assert_eq!(v[format!("{side}_device")].to_string(), device);
        assert_eq!(v[format!("{side}_entry")], r["peak_event_index"]);
        assert_eq!(v[format!("{side}_bytes")], r["timeline_peak_bytes"]);
    }
    // One device for both sides.
    let (code, stdout, _) = memograph(&["diff", &cs, &cs, "-d", "1", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (v["a_device"].as_i64(), v["b_device"].as_i64()),
        (Some(1), Some(1))
    );
    assert_eq!(v["delta_bytes"], 0);
    // Left to the default, the other devices are named once on stderr (the text stays the diff).
    let (code, stdout, stderr) = memograph(&["diff", &cs, &cs]);
    assert_eq!(code, 0);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "note: {cs} also has cuda:1, cuda:2 (diffed: its device with the longest trace; \
             --device N or --device A:B for the others)"
        )
    );
    assert!(
        stdout.starts_with(&format!("A {cs}  (cuda:0, its peak at entry 6 278)")),
        "{stdout}"
    );
    // A level's one hidden change is that change's own line (a line either way), not "<1 smaller
    // change>"; several are counted on one.
    let kk = path("kk_memory_ctx128_fullstep.pickle");
    let (_, stdout, _) = memograph(&["diff", &cs, &kk]);
    assert!(
        !stdout.contains("<1 smaller change") && stdout.contains(" smaller changes>"),
        "{stdout}"
    );
    let (_, forward, _) = memograph(&["diff", &path("kk_memory_ctx128_forward.pickle"), &kk]);
    let lone = "   0 B   195.3 MiB   +195.3 MiB          + /home/c-kaitwang/assignment1/cs336_basics/optimizers.py:100:step";
    assert!(forward.contains(&format!("{lone}\n")), "{forward}");
    // An entry past the end, grouped as every figure is; a device that is not there; no device.
    let (code, _, stderr) = memograph(&["diff", &cs, &cs, "--at", "0:99999999"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(
            "no entry 99 999 999 on cuda:0 (entries -1 to 6 444; -1 is before the first)"
        ),
        "{stderr}"
    );
    let (code, _, stderr) = memograph(&["diff", &cs, &kk, "--device", "0:2"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("kk_memory_ctx128_fullstep.pickle: no device 2 (devices: 0)"),
        "{stderr}"
    );
    let (code, _, stderr) = memograph(&["diff", &cs, &cs, "--device", "0:x"]);
    assert_eq!(code, 2, "{stderr}");
}

/// Copies of the repository's fixtures under the names a sweep's files would have (`from`, `to`), in a
/// fresh directory named after `tag`: the directory and the copies' paths.
fn renamed_fixtures(tag: &str, names: &[(&str, &str)]) -> (std::path::PathBuf, Vec<String>) {
    let repo = |name: &str| format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("memograph-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files = names
        .iter()
        .map(|(from, to)| {
            let file = dir.join(to);
            std::fs::copy(repo(from), &file).unwrap();
            file.display().to_string()
        })
        .collect();
    (dir, files)
}

#[test]
fn gpu_memory_says_which_runs_fit_and_how_far_a_sweep_goes() {
    // Tier 1: the repository's real fixtures, named as a batch-size sweep would be; bs8 ran out.
    let (dir, files) = renamed_fixtures(
        "sweep",
        &[
            ("training.pickle", "lm_bs2.pickle"),
            ("compiled.pickle", "lm_bs4.pickle"),
            ("oom.pickle", "lm_bs8.pickle"),
        ],
    );
    let args = |extra: &[&'static str]| -> Vec<String> {
        let mut a: Vec<String> = ["compare", "--json"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a.extend(files.iter().cloned());
        a
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = memograph(&a);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap()
    };
    const MIB: u64 = 1 << 20;

    let v = run(args(&["--gpu-memory", "150MiB"]));
    assert_eq!(
        v["gpu_memory"],
        serde_json::json!({ "bytes": 150 * MIB, "from_oom": null })
    );
    let rows = v["rows"].as_array().unwrap();
    let verdicts: Vec<&str> = rows
        .iter()
        .map(|r| r["fit"]["verdict"].as_str().unwrap())
        .collect();
    // 86 MiB reserved fits; 174 MiB reserved with a 131.5 MiB peak would, unfragmented; the run that
    // asked for 1 PiB does not.
    assert_eq!(verdicts, ["fits", "fragmented", "too_big"]);
    for r in &rows[..2] {
        let reserved = r["max_reserved_bytes"].as_i64().unwrap();
        assert_eq!(
            r["fit"]["headroom_bytes"].as_i64().unwrap(),
            150 * MIB as i64 - reserved
        );
    }
    // The run that ran out needed at least what it held (4 MiB) and asked for (1 PiB).
    assert_eq!(
        rows[2]["fit"]["headroom_bytes"].as_i64().unwrap(),
        150 * MIB as i64 - (4 * MIB as i64 + (1i64 << 50))
    );
    let sweeps = v["sweeps"].as_array().unwrap();
    assert_eq!(sweeps.len(), 1, "{sweeps:?}");
    let s = &sweeps[0];
    assert_eq!(s["knob"], "bs");
    let points = s["points"].as_array().unwrap();
    let values: Vec<i64> = points
        .iter()
        .map(|p| p["value"].as_i64().unwrap())
        .collect();
    assert_eq!(values, [2, 4]);
    assert_eq!(
        points[0]["max_reserved_bytes"],
        rows[0]["max_reserved_bytes"]
    );
    assert_eq!(
        points[1]["max_reserved_bytes"],
        rows[1]["max_reserved_bytes"]
    );
    assert_eq!(s["ran_out"], serde_json::json!([[8, files[2]]]));
    // 86 MiB at bs 2, 174 MiB at bs 4: 44 MiB a sample, so 150 MiB holds bs 3.45, and the runs'
    // values are multiples of 2.
    assert_eq!(
        s["reach"],
        serde_json::json!({ "kind": "up_to", "value": 2, "extrapolated": false })
    );

    // Without a size, the run that ran out tells what its device gave: reserved plus free.
    let v = run(args(&[]));
    // The oom entry's device_free (pickle.load reads 149 536 505 856) and the one 20 MiB segment.
    let (reserved, free) = (20 * MIB, 149_536_505_856u64);
    assert_eq!(
        v["gpu_memory"]["bytes"].as_u64(),
        Some(reserved + free),
        "{}",
        v["gpu_memory"]
    );
    assert_eq!(
        v["gpu_memory"]["from_oom"],
        serde_json::json!([files[2], 0])
    );

    let mut text = args(&["--gpu-memory", "150MiB"]);
    text.remove(1);
    let mut text: Vec<&str> = text.iter().map(String::as_str).collect();
    let (code, stdout, _) = memograph(&text);
    assert_eq!(code, 0);
    assert!(stdout.contains("GPU memory: 150.0 MiB\n"), "{stdout}");
    assert!(
        stdout.contains("headroom") && stdout.contains("if unfragmented"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Sweeps (the most each run reserved):\n  bs (cuda:0): 2 → 86.0 MiB · 4 → 174.0 MiB reserved at most; ×2.02 per doubling; in 150.0 MiB up to bs 2 (linear through 2 runs); bs 8 ran out of memory"),
        "{stdout}"
    );
    // In Markdown, each line above the table its own paragraph and the sweeps a list.
    text.insert(1, "--markdown");
    let (code, stdout, _) = memograph(&text);
    assert_eq!(code, 0);
    assert!(stdout.contains("GPU memory: 150.0 MiB\n\n|"), "{stdout}");
    assert!(
        stdout.contains("Sweeps (the most each run reserved):\n\n- bs (cuda:0): 2 → 86.0 MiB"),
        "{stdout}"
    );
    let (code, _, stderr) = memograph(&["compare", "--gpu-memory", "lots", &files[0]]);
    assert_eq!(code, 2);
    assert!(stderr.contains("\"lots\" is no memory size"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_tensor_parallel_sweep_says_from_which_degree_runs_fit() {
    // Tier 1: the repository's real fixtures, named as a tensor-parallel sweep would be: 174 MiB
    // reserved at tp 2, 86 MiB at tp 4.
    let (dir, files) = renamed_fixtures(
        "tp",
        &[
            ("compiled.pickle", "lm_tp2.pickle"),
            ("training.pickle", "lm_tp4.pickle"),
        ],
    );
    let with = |memory: &str, json: bool| {
        let mut a = vec!["compare", "--gpu-memory", memory];
        if json {
            a.push("--json");
        }
        a.extend(files.iter().map(String::as_str));
        let (code, stdout, stderr) = memograph(&a);
        assert_eq!(code, 0, "{stderr}");
        stdout
    };
    // a + d/tp through both: d = 4 × 88 MiB, a = −2 MiB; 150 MiB needs tp ≥ 352 / 152 = 2.3, so 4
    // (both values are powers of two); 50 MiB needs 6.8, so 8, beyond the runs.
    let v: serde_json::Value = serde_json::from_str(&with("150MiB", true)).unwrap();
    let sweeps = v["sweeps"].as_array().unwrap();
    assert_eq!(sweeps.len(), 1, "{sweeps:?}");
    assert_eq!(sweeps[0]["knob"], "tp");
    assert_eq!(sweeps[0]["curve"]["b"], 0.0);
    assert_eq!(
        sweeps[0]["reach"],
        serde_json::json!({ "kind": "at_least", "value": 4, "extrapolated": false })
    );
    let text = with("50MiB", false);
    assert!(
        text.contains("  tp (cuda:0): 2 → 174.0 MiB · 4 → 86.0 MiB reserved at most; ×0.49 per doubling; in 50.0 MiB from tp 8 on (extrapolated, as 1/tp through 2 runs)"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_jobs_compared_get_a_rank_strip_each() {
    // Tier 1: the repository's fixtures as two runs' folders of two ranks each.
    let root = std::env::temp_dir().join(format!("memograph-compare-jobs-{}", std::process::id()));
    let repo = |name: &str| format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    for (run, r0, r1) in [
        ("run_a", "training.pickle", "training.pickle"),
        ("run_b", "compiled.pickle", "training.pickle"),
    ] {
        let dir = root.join("sweep").join(run);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(repo(r0), dir.join("rank0_exit_0.pickle")).unwrap();
        std::fs::copy(repo(r1), dir.join("rank1_exit_0.pickle")).unwrap();
    }
    let sweep = root.join("sweep").display().to_string();
    let (code, stdout, stderr) = memograph(&["compare", &sweep]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("Ranks")).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("Ranks of run_a: 2 ranks · mean 85.0 MiB"),
        "{stdout}"
    );
    assert!(lines[1].ends_with("imbalance ×1.21"), "{stdout}");
    let (_, stdout, _) = memograph(&["compare", "--json", &sweep]);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let sets = v["ranks"].as_array().unwrap();
    assert_eq!(sets.len(), 2);
    assert_eq!(sets[1]["label"], "run_b");
    // Each rank's run, as an index into the rows.
    assert_eq!(sets[1]["runs"], serde_json::json!([2, 3]));
    let rows = v["rows"].as_array().unwrap();
    assert!(rows[2]["file"]
        .as_str()
        .unwrap()
        .ends_with("run_b/rank0_exit_0.pickle"));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn compare_of_one_file_says_this_run_and_asks_for_others() {
    if !present("compare_of_one_file_says_this_run_and_asks_for_others") {
        return;
    }
    let file = path("kk_memory_ctx128_forward.pickle");
    let (code, stdout, stderr) = memograph(&["compare", "-q", &file]);
    assert_eq!(code, 0, "{stderr}");
    // The forward pass holds no parameters, gradients or optimizer state the trace saw allocated.
    assert!(
        stdout.contains("\n0 B in this run: parameters, gradients, optimizer state, other\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("every run"), "{stdout}");
    assert!(
        stdout.ends_with(
            "\nOne run: name two or more snapshots, or a folder of them, to compare it with others.\n"
        ),
        "{stdout}"
    );
    // With a second file the table speaks of every run and asks for nothing.
    let other = path("kk_memory_ctx128_fullstep.pickle");
    let (code, stdout, _) = memograph(&["compare", "-q", &file, &other]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("\n0 B in every run: parameters\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("One run"), "{stdout}");
}

#[test]
fn diff_of_one_run_in_two_protocols_says_every_path_holds_the_same() {
    if !present("diff_of_one_run_in_two_protocols_says_every_path_holds_the_same") {
        return;
    }
    // The same run written with pickle protocols 4 and 5.
    let (a, b) = (
        path("a0kuma_adam.pickle"),
        path("a0kuma_adam.proto5.pickle"),
    );
    let (code, stdout, stderr) = memograph(&["diff", &a, &b]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("  (±0 B)\n"), "{stdout}");
    assert!(
        stdout.ends_with("<all live memory>\n\nEvery call path holds the same bytes in A and B.\n"),
        "{stdout}"
    );
    // Two runs that differ say nothing of the kind.
    let (_, stdout, _) = memograph(&["diff", &a, &path("magma_memory_snapshot.pickle")]);
    assert!(!stdout.contains("Every call path"), "{stdout}");
}

#[test]
fn diff_as_markdown_pastes_the_same_diff() {
    if !present("diff_as_markdown_pastes_the_same_diff") {
        return;
    }
    // The context's forward pass against the full step: the optimizer's state is new in B.
    let (a, b) = (
        path("kk_memory_ctx128_forward.pickle"),
        path("kk_memory_ctx128_fullstep.pickle"),
    );
    let (code, text, stderr) = memograph(&["diff", &a, &b]);
    assert_eq!(code, 0, "{stderr}");
    let (code, md, stderr) = memograph(&["diff", &a, &b, "--markdown"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        md.starts_with(&format!(
            "- A `{a}` (cuda:0, its peak at entry 8 226)\n- B `{b}` (cuda:0, its peak at entry 19 335)\n\
             - live: 16.4 GiB → 51.0 GiB  (+34.6 GiB)\n\n```text\n"
        )),
        "{md}"
    );
    // The fenced tree is the text's tree, line for line.
    let tree = |s: &str| -> String {
        let from = s.find("          A           B        delta").unwrap();
        s[from..].split("\n\n").next().unwrap().to_string()
    };
    assert_eq!(tree(&md).trim_end_matches("```"), tree(&text) + "\n");
    // The call paths that grew: a line each as text, a table as Markdown (the same figures).
    assert!(
        text.contains("\nGrew at the same call path:\n         0 B →   12.7 GiB  (+12.7 GiB, new)  /home/c-kaitwang/assignment1/cs336_basics/optimizers.py:82:step\n"),
        "{text}"
    );
    assert!(
        md.contains("\nGrew at the same call path:\n\n| A | B | Δ | × | call path |\n|---:|---:|---:|---:|---|\n\
             | 0 B | 12.7 GiB | +12.7 GiB | new | `/home/c-kaitwang/assignment1/cs336_basics/optimizers.py:82:step` |\n"),
        "{md}"
    );
    // One or the other.
    let (code, _, stderr) = memograph(&["diff", &a, &b, "--markdown", "--json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

#[test]
fn compare_says_each_runs_training_steps_as_text_and_json() {
    // Tier 1: the repository's real fixtures, two whose traces mark steps and one that marks none.
    let repo = |name: &str| format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let files = [
        repo("training.pickle"),
        repo("compiled.pickle"),
        repo("oom.pickle"),
    ];
    let mut args = vec!["compare"];
    args.extend(files.iter().map(String::as_str));
    let (code, stdout, stderr) = memograph(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "\nTraining steps (as the trace's annotations mark them; `memograph steps` draws them):\n  \
             training.pickle: 3 steps (`Optimizer.step#AdamW.step`): every step peaks at 85.0 MiB. Steps 2 to 3 \
             leave nothing more live.\n  \
             compiled.pickle: 2 steps (`step_N`): the highest peak, 131.5 MiB, in step 1 (54.2 MiB above the \
             lowest step's). Step 2 leaves nothing more live.\n"
        ),
        "{stdout}"
    );
    args.insert(1, "--json");
    let (code, stdout, stderr) = memograph(&args);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let peaks: Vec<Vec<u64>> = rows[..2]
        .iter()
        .map(|r| {
            r["steps"]["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["peak_bytes"].as_u64().unwrap())
                .collect()
        })
        .collect();
    // As computed apart (crates/snapshot/tests/trace_steps.rs).
    assert_eq!(peaks, [vec![89_159_680; 3], vec![137_900_040, 81_020_936]]);
    assert_eq!(rows[2]["steps"], serde_json::Value::Null);
}
