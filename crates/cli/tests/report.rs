//! `memograph report`, run as users run it, on every real fixture.

mod common;

use std::path::{Path, PathBuf};

use common::{fixture_names, fixtures, memograph_in as memograph, reference};
use memograph_snapshot::format::grouped;

/// A scratch directory, removed when the test ends.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(tag: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("memograph-report-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// Decodes a PNG and counts its distinct colours (a blank chart has one).
fn png_colours(path: &Path) -> (u32, u32, usize) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bpp = info.line_size / info.width as usize;
    let mut colours: Vec<&[u8]> = buf[..info.buffer_size()].chunks(bpp).collect();
    colours.sort_unstable();
    colours.dedup();
    (info.width, info.height, colours.len())
}

const CHARTS: [&str; 5] = [
    "memory_overview.png",
    "top_consumers.png",
    "category_breakdown.png",
    "size_distribution.png",
    "memory_efficiency.png",
];

#[test]
fn every_fixture_gets_a_report_directory_with_five_charts_two_texts_and_latest_pointing_at_it() {
    if !common::present("every_fixture_gets_a_report_directory_with_five_charts_two_texts_and_latest_pointing_at_it") {
        return;
    }
    let out = scratch("each");
    for name in fixture_names() {
        let file = fixtures().join(&name);
        let (code, stdout, stderr) =
            memograph(&["report", file.to_str().unwrap(), "reports"], &out);
        assert_eq!(code, 0, "{name}: {stderr}");
        let dir = out.join(stdout.trim());
        let dir_name = dir.file_name().unwrap().to_string_lossy().into_owned();
        // YYYYMMDD_HHMMSS_NAME, NAME from the file name.
        let stem = name.trim_end_matches(".gz").trim_end_matches(".pickle");
        // Two files with one stem reported in the same second: the second directory gets `_2`.
        let unsuffixed = match dir_name.rsplit_once('_') {
            Some((head, n)) if n.parse::<u32>().is_ok() && head.ends_with(stem) => head,
            _ => dir_name.as_str(),
        };
        assert!(unsuffixed.ends_with(stem), "{dir_name}");
        assert!(
            dir_name.as_bytes()[..15]
                .iter()
                .enumerate()
                .all(|(i, c)| if i == 8 {
                    *c == b'_'
                } else {
                    c.is_ascii_digit()
                }),
            "{dir_name}"
        );
        for chart in CHARTS {
            let (w, h, colours) = png_colours(&dir.join(chart));
            assert!(w >= 800 && h >= 500, "{name} {chart}");
            assert!(
                colours > 8,
                "{name} {chart} looks blank ({colours} colours)"
            );
        }
        let text = std::fs::read_to_string(dir.join("analysis_report.txt")).unwrap();
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        let r = reference(&name);
        for (device, figures) in r["devices"].as_object().unwrap() {
            let peak = figures["timeline_peak_bytes"].as_u64().unwrap();
            let exact = grouped(peak);
            assert!(
                text.contains(&format!("======== cuda:{device} ========")),
                "{name}"
            );
            assert!(
                text.contains(&exact),
                "{name}: the text report names the exact peak {exact}"
            );
            // Where the peak is, worded as the page words it.
            let at = match figures["peak_event_index"].as_i64().unwrap() {
                e if e < 0 => "before the first entry".to_string(),
                e => format!("at entry {}", grouped(e as u64)),
            };
            assert!(text.contains(&at), "{name}: the text report says {at}");
        }
        for section in [
            "Allocator efficiency",
            "Categories",
            "largest allocations",
            "Fragmentation",
            "Recommendations",
            "Live set",
        ] {
            assert!(text.contains(section), "{name}: no {section} section");
        }
        for chart in CHARTS {
            assert!(
                readme.contains(&format!("]({chart})")),
                "{name}: README shows {chart}"
            );
        }
        assert!(readme.contains("## Findings"));
        let latest = std::fs::read_link(out.join("reports/latest")).unwrap();
        assert_eq!(latest, PathBuf::from(&dir_name), "{name}");
    }
}

#[test]
fn report_json_is_one_parsable_line_per_file_whose_figures_add_up() {
    if !common::present("report_json_is_one_parsable_line_per_file_whose_figures_add_up") {
        return;
    }
    let out = scratch("json");
    let files: Vec<String> = ["cs_memory_snapshot.pickle", "a0kuma_adam.pickle"]
        .iter()
        .map(|n| fixtures().join(n).display().to_string())
        .collect();
    let (code, stdout, stderr) = memograph(&["report", "--json", &files[0], &files[1]], &out);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    for (line, file) in lines.iter().zip(&files) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["file"], file.as_str());
        let name = Path::new(file)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let r = reference(&name);
        for d in v["devices"].as_array().unwrap() {
            let device = d["device"].to_string();
            let peak = r["devices"][&device]["timeline_peak_bytes"]
                .as_u64()
                .unwrap();
            assert_eq!(d["live_bytes"].as_u64().unwrap(), peak, "{name} {device}");
            let categories: u64 = d["categories"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["bytes"].as_u64().unwrap())
                .sum();
            assert_eq!(categories, peak, "{name} {device}");
            assert_eq!(d["live_set"]["bytes"].as_u64().unwrap(), peak);
            assert!(d["recommendations"].is_array() && d["top_consumers"].is_array());
        }
    }
    // --json writes no directory.
    assert!(!out.join("memograph_reports").exists());
}

#[test]
fn several_files_get_one_directory_each_and_a_combined_table() {
    if !common::present("several_files_get_one_directory_each_and_a_combined_table") {
        return;
    }
    let out = scratch("many");
    let a = fixtures().join("a0kuma_adam.pickle");
    let b = fixtures().join("yiyi_oom_snapshot.pickle");
    let (code, stdout, stderr) = memograph(
        &[
            "report",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "out",
            "run",
        ],
        &out,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| file | device | peak allocated"),
        "{stdout}"
    );
    assert!(stdout.contains("| run_a0kuma_adam | cuda:0 |"), "{stdout}");
    assert!(
        stdout.contains("| run_yiyi_oom_snapshot | cuda:0 |"),
        "{stdout}"
    );
    let entries: Vec<String> = std::fs::read_dir(out.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(entries.iter().any(|e| e.ends_with("_run_a0kuma_adam")));
    assert!(entries
        .iter()
        .any(|e| e.ends_with("_run_yiyi_oom_snapshot")));
    let summary = entries.iter().find(|e| e.ends_with("_summary.md")).unwrap();
    let chart = entries
        .iter()
        .find(|e| e.ends_with("_compare.png"))
        .unwrap();
    let summary = std::fs::read_to_string(out.join("out").join(summary)).unwrap();
    assert!(summary.contains(&format!("]({chart})")), "{summary}");
    // Two run colours and ink on a background: a real chart, not a blank image.
    let (_, _, colours) = png_colours(&out.join("out").join(chart));
    assert!(colours > 8, "{colours} colours");
    let latest = std::fs::read_link(out.join("out/latest")).unwrap();
    assert!(latest.to_string_lossy().ends_with("_run_yiyi_oom_snapshot"));
}

#[test]
fn a_bad_file_is_one_line_and_exit_1_while_good_ones_are_still_written() {
    if !common::present("a_bad_file_is_one_line_and_exit_1_while_good_ones_are_still_written") {
        return;
    }
    let out = scratch("bad");
    std::fs::write(out.join("broken.pickle"), b"\x80\x04\x95\x10\x00").unwrap();
    let good = fixtures().join("a0kuma_adam.pickle");
    let (code, stdout, stderr) = memograph(
        &["report", "broken.pickle", good.to_str().unwrap(), "r"],
        &out,
    );
    assert_eq!(code, 1);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: broken.pickle: "), "{stderr}");
    assert!(stdout.contains("a0kuma_adam"));
    assert!(out.join("r/latest").exists());
    // An output directory that cannot be made says why.
    std::fs::write(out.join("taken"), b"").unwrap();
    let (code, _, stderr) = memograph(&["report", good.to_str().unwrap(), "-o", "taken"], &out);
    assert_eq!(
        (code, stderr.trim()),
        (1, "error: cannot write taken: a file is in the way")
    );
}

#[test]
fn user_category_rules_come_first_and_bad_ones_are_one_line() {
    if !common::present("user_category_rules_come_first_and_bad_ones_are_one_line") {
        return;
    }
    let out = scratch("rules");
    std::fs::write(
        out.join("rules.json"),
        r#"[{"category": "Adam moments", "scope": "stack", "pattern": "optimizers\\.py:\\d+:step"}]"#,
    )
    .unwrap();
    let file = fixtures().join("kk_memory_ctx128_fullstep.pickle");
    let (code, stdout, stderr) = memograph(
        &[
            "report",
            "--json",
            "--rules",
            "rules.json",
            file.to_str().unwrap(),
        ],
        &out,
    );
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let cats = v["devices"][0]["categories"].as_array().unwrap();
    assert_eq!(cats[0]["category"], "Adam moments");
    assert!(cats[0]["bytes"].as_u64().unwrap() > 20 << 30);
    let optimizer = cats
        .iter()
        .find(|c| c["category"] == "Optimizer state")
        .unwrap();
    assert_eq!(optimizer["bytes"], 0);

    std::fs::write(
        out.join("bad.json"),
        r#"[{"category": "x", "pattern": "("}]"#,
    )
    .unwrap();
    let (code, _, stderr) = memograph(
        &["report", "--rules", "bad.json", file.to_str().unwrap()],
        &out,
    );
    assert_eq!(code, 1);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: bad.json: category rule 'x': bad pattern"),
        "{stderr}"
    );
}

#[test]
fn a_gpus_memory_says_which_devices_fit_in_the_findings_the_json_and_the_combined_table() {
    // Tier 1: the repository's real fixtures.
    let repo = |name: &str| format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let out = scratch("fit");
    let files = [
        repo("training.pickle"),
        repo("compiled.pickle"),
        repo("oom.pickle"),
    ];
    let mut args = vec!["report", "--gpu-memory", "150MiB"];
    args.extend(files.iter().map(String::as_str));
    args.push("out");
    let (code, stdout, stderr) = memograph(&args, &out);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("GPU memory: 150.0 MiB\n"), "{stdout}");
    assert!(
        stdout.contains("| file | device | peak allocated | reserved (max) | headroom | fits |"),
        "{stdout}"
    );
    // 86 MiB reserved fits; 174 MiB reserved (131.5 MiB allocated) only unfragmented; the run that
    // asked for 1 PiB does not.
    for row in [
        "| training | cuda:0 | 85.0 MiB | 86.0 MiB | +64.0 MiB | yes |",
        "| compiled | cuda:0 | 131.5 MiB | 174.0 MiB | -24.0 MiB | if unfragmented |",
        "| oom | cuda:0 | 4.0 MiB | 20.0 MiB | -1.0 PiB | no |",
    ] {
        assert!(stdout.contains(row), "{row} in {stdout}");
    }
    let readme = |name: &str| {
        let dir = std::fs::read_dir(out.join("out"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(&format!("_{name}")))
            .unwrap();
        std::fs::read_to_string(dir.join("README.md")).unwrap()
    };
    assert!(
        readme("compiled").contains(
            "- **In 150.0 MiB: if unfragmented**, headroom -24.0 MiB (the memory less the most it \
             reserved); its peak allocated fits, but the cache's free pieces made its reservation \
             too big (`expandable_segments:True` may help)."
        ),
        "{}",
        readme("compiled")
    );
    assert!(readme("training").contains("- **In 150.0 MiB: yes**, headroom +64.0 MiB"));

    // Without a size, a file that ran out of memory is held against what its device gave then:
    // 20 MiB reserved plus the 149 536 505 856 bytes the driver called free.
    let (code, stdout, stderr) = memograph(&["report", "--json", &files[2]], &out);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        v["gpu_memory"]["bytes"].as_u64(),
        Some((20 << 20) + 149_536_505_856)
    );
    assert_eq!(v["fits"][0]["device"], 0);
    assert_eq!(v["fits"][0]["fit"]["verdict"], "too_big");
    // A file that did not, without a size, is held against nothing.
    let (_, stdout, _) = memograph(&["report", "--json", &files[0]], &out);
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(v["gpu_memory"].is_null() && v["fits"] == serde_json::json!([]));

    let (code, _, stderr) = memograph(&["report", "--gpu-memory", "lots", &files[0]], &out);
    assert_eq!(code, 2);
    assert!(stderr.contains("\"lots\" is no memory size"), "{stderr}");
}
