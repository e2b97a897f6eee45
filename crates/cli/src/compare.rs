//! `memograph compare` (the peak table of several runs, with the call paths that grew) and `memograph
//! diff` (the call-stack diff of two live sets).

use std::fmt::Write as _;

use memograph_snapshot::analysis::categories::Rules;
use memograph_snapshot::analysis::compare::{
    common_folder, diff, diff_text, digest_at, digest_of, digests, grown_sites, grown_text,
    peak_rows, peak_table, rank_sets, within, zero_columns, Digest, SiteDelta,
};
use memograph_snapshot::analysis::fit::{fit, sweeps, Limit};
use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::format::grouped;

use crate::{load, Failure};

/// How a comparison is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Text,
    Json,
    Markdown,
}

/// Which devices of each file `memograph compare` puts in its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Devices {
    /// The one with the longest trace.
    Default,
    One(i64),
    /// Each device with segments or trace entries, a row each (the page lists them so too).
    All,
}

/// `--device`: a device number or `all`.
pub fn devices(v: &str) -> Result<Devices, String> {
    if v.eq_ignore_ascii_case("all") {
        return Ok(Devices::All);
    }
    v.parse()
        .map(Devices::One)
        .map_err(|_| format!("{v:?} is no device (say 0, 1, … or all)"))
}

pub struct CompareArgs {
    pub files: Vec<String>,
    pub baseline: Option<String>,
    pub devices: Devices,
    pub output: Output,
    /// Grown call paths listed per file.
    pub top: usize,
    /// The memory of the GPU the runs should fit, in bytes.
    pub gpu_memory: Option<u64>,
}

impl CompareArgs {
    /// The baseline is the file of its path among `files`; one not among them is compared first.
    pub fn new(
        mut files: Vec<String>,
        mut baseline: Option<String>,
        devices: Devices,
        output: Output,
        top: usize,
        gpu_memory: Option<u64>,
    ) -> CompareArgs {
        // The baseline is the file of that path among them, however it is spelt (a folder's files
        // are named through the folder); one not among them is compared first.
        if let Some(b) = baseline.clone() {
            match files.iter().position(|f| load::same_file(f, &b)) {
                Some(i) => baseline = Some(files[i].clone()),
                None => files.insert(0, b),
            }
        }
        CompareArgs {
            files,
            baseline,
            devices,
            output,
            top,
            gpu_memory,
        }
    }
}

/// One file's digests of the chosen devices, and the devices it has that were left out; the snapshot
/// is dropped once they are made, so many files can be compared in the memory of one.
fn digest_file(
    path: &str,
    wanted: Devices,
    rules: &Rules,
) -> Result<(Vec<Digest>, Vec<i64>), Failure> {
    let snapshot = load::open(path)?;
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    if wanted == Devices::All {
        let all = digests(&snapshot, rules, path, size);
        return Ok((all, Vec::new()));
    }
    let one = match wanted {
        Devices::One(d) => Some(d),
        _ => None,
    };
    let (device, others) = load::device_left_out(path, &snapshot, one)?;
    let d = digest_of(&snapshot, device, rules, path, size);
    Ok((vec![d], others))
}

pub fn run_compare(args: &CompareArgs) -> Result<(), Failure> {
    let rules = Rules::built_in();
    let mut digests: Vec<Digest> = Vec::new();
    let mut left_out: Vec<(&str, Vec<i64>)> = Vec::new();
    let mut failures = 0;
    for path in &args.files {
        match digest_file(path, args.devices, &rules) {
            Ok((d, others)) => {
                digests.extend(d);
                if !others.is_empty() {
                    left_out.push((path, others));
                }
            }
            // The others are still compared; exit 1 at the end.
            Err(f) => {
                eprintln!("error: {}", f.0);
                failures += 1;
            }
        }
    }
    let baseline = args
        .baseline
        .as_ref()
        .and_then(|b| digests.iter().position(|d| &d.file == b))
        .unwrap_or(0);
    if !digests.is_empty() {
        print!("{}", comparison(&digests, baseline, args));
    }
    // On stderr, so that JSON and Markdown stay what they are.
    for (path, others) in left_out {
        load::note_left_out(path, &others, "compared", "--device N or --device all");
    }
    if failures > 0 {
        return Err(Failure::reported());
    }
    Ok(())
}

fn comparison(digests: &[Digest], baseline: usize, args: &CompareArgs) -> String {
    let rows = peak_rows(digests, baseline);
    let base = &digests[baseline];
    let grown = |d: &Digest| -> Vec<SiteDelta> {
        let mut g = grown_sites(&base.sites, &d.sites);
        g.truncate(args.top);
        g
    };
    let all: Vec<&Digest> = digests.iter().collect();
    let rank_sets = rank_sets(&all);
    let limit = Limit::of(args.gpu_memory, &all);
    let sweeps = sweeps(&all);
    if args.output == Output::Json {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let d = r.digest;
                let components: serde_json::Map<String, serde_json::Value> = d
                    .components
                    .iter()
                    .map(|c| (c.component.label().to_string(), c.bytes.into()))
                    .collect();
                serde_json::json!({
                    "file": d.file,
                    "device": d.device,
                    "timeline_peak_bytes": d.timeline_peak_bytes,
                    "peak_event_index": d.peak_event_index,
                    "reserved_at_peak_bytes": d.reserved_at_peak_bytes,
                    "max_reserved_bytes": d.max_reserved_bytes,
                    "components": components,
                    "config": d.config,
                    "delta_bytes": r.delta_bytes,
                    "ratio": r.ratio,
                    "largest_allocation_bytes": d.largest_allocation_bytes,
                    "allocations": d.allocations,
                    "entries": d.entries,
                    "oom": d.oom(),
                    "oom_entry": d.oom_at.map(|o| o.entry),
                    "grown": grown(d),
                    "fit": limit.as_ref().map(|l| fit(d, l.bytes)),
                    "steps": d.steps,
                })
            })
            .collect();
        let sweeps: Vec<serde_json::Value> = sweeps
            .iter()
            .map(|s| {
                let mut v = serde_json::to_value(s).unwrap_or_default();
                v["reach"] = serde_json::to_value(limit.as_ref().map(|l| s.reach(l.bytes)))
                    .unwrap_or_default();
                v
            })
            .collect();
        let json = serde_json::json!({
            "baseline": base.file,
            "gpu_memory": limit,
            "rows": rows,
            "ranks": rank_sets,
            "sweeps": sweeps,
        });
        return format!("{json}\n");
    }
    let mut table = peak_table(&rows, false, limit.as_ref().map(|l| l.bytes));
    let markdown = args.output == Output::Markdown;
    // As text, for a reader at a terminal: the folder every file lies in is named once, not on every
    // row, and the components no run holds are named under the table rather than given a column of
    // 0 B each. Markdown keeps every column and the files' names as given.
    let folder = if markdown {
        ""
    } else {
        common_folder(digests.iter().map(|d| d.file.as_str()))
    };
    let mut none_hold = None;
    if !markdown {
        for row in &mut table.rows {
            row[0] = within(&row[0], folder).to_string();
        }
        let (zero, line) = zero_columns(&table);
        none_hold = line;
        table = table.columns(|k| !zero.contains(&k));
    }
    // A file compared on several devices is named with the device.
    let name = |d: &Digest| {
        let file = within(&d.file, folder);
        if digests.iter().filter(|o| o.file == d.file).count() > 1 {
            format!("{file} cuda:{}", d.device)
        } else {
            file.to_string()
        }
    };
    let mut o = String::new();
    if !folder.is_empty() {
        let _ = writeln!(o, "In {folder}");
    }
    // In Markdown each line its own paragraph: lines in a row run into one.
    let end = if markdown { "\n\n" } else { "\n" };
    let _ = write!(o, "Baseline: {}{end}", name(base));
    if let Some(l) = &limit {
        let _ = write!(o, "GPU memory: {}{end}", l.describe());
    }
    if !markdown {
        o.push('\n');
    }
    o.push_str(&if markdown {
        table.markdown()
    } else {
        crate::text_table(&table)
    });
    if let Some(line) = none_hold {
        let _ = writeln!(o, "{line}");
    }
    for set in &rank_sets {
        let of = if set.label.is_empty() {
            String::new()
        } else {
            format!(" of {}", set.label)
        };
        let _ = writeln!(o, "\nRanks{of}: {}", set.strip.describe());
    }
    if !sweeps.is_empty() {
        let bytes = limit.as_ref().map(|l| l.bytes);
        let lines = sweeps.iter().map(|s| s.describe(bytes));
        let heading = "Sweeps (the most each run reserved):";
        let _ = write!(o, "\n{}", crate::list(heading, lines, markdown));
        if limit.is_none() {
            let _ = writeln!(
                o,
                "{}(--gpu-memory SIZE says how far each would go on a GPU of that size)",
                if markdown { "\n" } else { "  " }
            );
        }
    }
    // Each run's training steps, where its trace's annotations mark them.
    let steps: Vec<String> = digests
        .iter()
        .filter_map(|d| {
            let s = d.steps.as_ref()?;
            let n = memograph_snapshot::format::grouped(s.steps.len() as u64);
            Some(format!(
                "{}: {n} steps (`{}`): {}",
                name(d),
                s.marker,
                s.summary()
            ))
        })
        .collect();
    if !steps.is_empty() {
        let heading =
            "Training steps (as the trace's annotations mark them; `memograph steps` draws them):";
        let _ = write!(o, "\n{}", crate::list(heading, steps, markdown));
    }
    for d in digests.iter().filter(|d| !std::ptr::eq(*d, base)) {
        let g = grown(d);
        if g.is_empty() {
            continue;
        }
        let _ = writeln!(
            o,
            "\nGrew at the same call path, {} → {}:",
            name(base),
            name(d)
        );
        let gap = if markdown { "\n" } else { "" };
        let _ = write!(o, "{gap}{}", grown_text(&g, markdown));
    }
    // One file, one device: a table of one, which says so and what compare is for.
    if args.files.len() == 1 && digests.len() == 1 {
        let _ = write!(
            o,
            "\nOne run: name two or more snapshots, or a folder of them, to compare it with others.\n"
        );
    }
    o
}

pub struct DiffArgs {
    pub a: String,
    pub b: String,
    /// Entries of A and B (`None`: their peaks).
    pub at: Option<(i64, i64)>,
    /// The devices of A and B (`None`: each file's device with the longest trace).
    pub devices: Option<(i64, i64)>,
    pub output: Output,
}

/// `memograph diff --device`: `N` for both files, or `N:M` (A's device, then B's).
pub fn diff_devices(v: &str) -> Result<(i64, i64), String> {
    let bad = || format!("{v:?} is no device (say 0, or 0:1 for A's device and B's)");
    let number = |t: &str| t.trim().parse::<i64>().map_err(|_| bad());
    match v.split_once(':') {
        Some((a, b)) => Ok((number(a)?, number(b)?)),
        None => number(v).map(|d| (d, d)),
    }
}

impl DiffArgs {
    pub fn new(
        a: String,
        b: String,
        at: Option<&str>,
        devices: Option<(i64, i64)>,
        output: Output,
    ) -> Result<DiffArgs, String> {
        Ok(DiffArgs {
            a,
            b,
            at: at.map(parse_at).transpose()?.flatten(),
            devices,
            output,
        })
    }
}

fn parse_at(v: &str) -> Result<Option<(i64, i64)>, String> {
    if v == "peak" {
        return Ok(None);
    }
    let bad = || format!("--at needs peak or ENTRY_A:ENTRY_B, not '{v}'");
    let (a, b) = v.split_once(':').ok_or_else(bad)?;
    Ok(Some((
        a.parse().map_err(|_| bad())?,
        b.parse().map_err(|_| bad())?,
    )))
}

pub fn run_diff(args: &DiffArgs) -> Result<(), Failure> {
    let rules = Rules::built_in();
    let mut left_out: Vec<(String, Vec<i64>)> = Vec::new();
    let mut side =
        |path: &str, entry: Option<i64>, device: Option<i64>| -> Result<Digest, Failure> {
            let snapshot = load::open(path)?;
            let (device, others) = load::device_left_out(path, &snapshot, device)?;
            if !others.is_empty() {
                left_out.push((path.to_string(), others));
            }
            let lifetimes = Lifetimes::of(&snapshot, device);
            let last = lifetimes.live_after.len() as i64 - 1;
            if let Some(e) = entry.filter(|&e| e < -1 || e > last) {
                let number = |n: i64| match n {
                    ..0 => format!("-{}", grouped(n.unsigned_abs())),
                    _ => grouped(n.unsigned_abs()),
                };
                return Err(Failure(format!(
                "{path}: no entry {} on cuda:{device} (entries -1 to {}; -1 is before the first)",
                number(e),
                number(last)
            )));
            }
            let mut d = digest_at(&snapshot, &lifetimes, &rules, entry);
            d.file = path.to_string();
            Ok(d)
        };
    let a = side(&args.a, args.at.map(|x| x.0), args.devices.map(|d| d.0))?;
    let b = side(&args.b, args.at.map(|x| x.1), args.devices.map(|d| d.1))?;
    // On stderr, so that JSON stays what it is; once for a file diffed with itself.
    left_out.dedup_by(|x, y| x.0 == y.0);
    for (path, others) in &left_out {
        load::note_left_out(path, others, "diffed", "--device N or --device A:B");
    }
    let tree = diff(&a.live_set, &b.live_set);
    if args.output == Output::Json {
        let entry = |d: &Digest, at: Option<i64>| at.unwrap_or(d.peak_event_index);
        let json = serde_json::json!({
            "a": a.file,
            "b": b.file,
            "a_device": a.device,
            "b_device": b.device,
            "a_entry": entry(&a, args.at.map(|x| x.0)),
            "b_entry": entry(&b, args.at.map(|x| x.1)),
            "a_bytes": tree.a_bytes,
            "b_bytes": tree.b_bytes,
            "delta_bytes": tree.delta_bytes,
            "tree": tree,
            "grown": grown_sites(&a.sites, &b.sites),
        });
        println!("{json}");
        return Ok(());
    }
    print!(
        "{}",
        diff_text(&a, &b, &tree, args.output == Output::Markdown)
    );
    Ok(())
}
