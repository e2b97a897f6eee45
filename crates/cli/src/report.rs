//! `memograph report FILE... [OUT_DIR] [NAME]`: where the memory goes, as a directory a person can open
//! (five charts, a text report, a README with the findings) or, with `--json`, as one JSON line per file.
//!
//! Each file gets `OUT_DIR/YYYYMMDD_HHMMSS_NAME/`; `OUT_DIR/latest` then points at the newest. Several
//! files (one per rank, two runs) also get a combined table, on stdout and in `OUT_DIR`. With a GPU's
//! memory (`--gpu-memory`, or what an out-of-memory entry says the device gave), each device is held
//! against it: headroom and whether it fits (see `memograph_snapshot::analysis::fit`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use memograph_snapshot::analysis::categories::Rules;
use memograph_snapshot::analysis::compare::{common_folder, digests, Digest};
use memograph_snapshot::analysis::fit::{fit, Fit, Limit, Verdict};
use memograph_snapshot::analysis::live_set::Node;
use memograph_snapshot::analysis::report::{device_report, Component, DeviceReport, ReportOptions};
use memograph_snapshot::format::{bytes, bytes_exact, count, grouped, percent, signed_bytes};
use memograph_snapshot::{Action, Snapshot};

use crate::{charts, load, Failure};

pub const DEFAULT_OUT_DIR: &str = "memograph_reports";

/// `memograph report`'s arguments.
pub struct ReportArgs {
    pub files: Vec<String>,
    pub out_dir: PathBuf,
    pub name: Option<String>,
    pub json: bool,
    /// The device the charts show; by default the one with the longest trace.
    pub device: Option<i64>,
    /// Extra category rules (a JSON file), tried before the built-in ones.
    pub rules: Option<String>,
    /// The memory of the GPU the runs should fit, in bytes.
    pub gpu_memory: Option<u64>,
}

impl ReportArgs {
    /// `FILE... [OUT_DIR] [NAME]`: the first argument is a file (or a folder); later ones are files
    /// while they name existing files or folders of snapshots (or look like snapshots), then the
    /// output directory, then the report's name.
    /// `--out` and `--name` stand for the positional ones.
    pub fn new(
        positional: Vec<String>,
        out: Option<PathBuf>,
        name: Option<String>,
        json: bool,
        device: Option<i64>,
        rules: Option<String>,
    ) -> Result<ReportArgs, String> {
        let mut r = ReportArgs {
            files: Vec::new(),
            out_dir: out.unwrap_or_else(|| PathBuf::from(DEFAULT_OUT_DIR)),
            name,
            json,
            device,
            rules,
            gpu_memory: None,
        };
        let mut positional = positional.into_iter();
        r.files.extend(positional.next());
        let mut after: Vec<String> = Vec::new();
        for a in positional {
            if after.is_empty() && looks_like_input(&a) {
                r.files.push(a);
            } else {
                after.push(a);
            }
        }
        let mut after = after.into_iter();
        if let Some(dir) = after.next() {
            r.out_dir = PathBuf::from(dir);
        }
        if let Some(name) = after.next() {
            r.name = Some(name);
        }
        if let Some(extra) = after.next() {
            return Err(format!("unexpected argument '{extra}'"));
        }
        if r.files.is_empty() {
            return Err("no FILE given".into());
        }
        Ok(r)
    }
}

/// A file, a folder that holds snapshots, or a name that looks like a snapshot's (to be said missing).
fn looks_like_input(arg: &str) -> bool {
    let p = Path::new(arg);
    p.is_file()
        || (p.is_dir()
            && crate::load::expand(vec![arg.to_string()], crate::load::Holds::Snapshots).is_ok())
        || [".pickle", ".pkl", ".pickle.gz", ".pkl.gz", ".gz"]
            .iter()
            .any(|ext| arg.ends_with(ext))
}

/// One file's reports, one per device.
struct FileReport {
    path: String,
    name: String,
    reports: Vec<DeviceReport>,
    /// Index into `reports` of the device the charts show.
    charted: usize,
    /// Each device's digest, named after the file: when the file is held against a GPU's memory or
    /// compared with others (empty otherwise).
    digests: Vec<Digest>,
    /// The memory the file is held against: the one stated, else what its own out-of-memory entry
    /// says the device gave.
    limit: Option<Limit>,
}

impl FileReport {
    /// The digest of `device`, when digests were made.
    fn digest(&self, device: i64) -> Option<&Digest> {
        self.digests.iter().find(|d| d.device == device)
    }

    /// How `device` fits the memory the file is held against, and whether it ran out of memory.
    fn fit(&self, device: i64) -> Option<(Fit, &Limit, bool)> {
        let limit = self.limit.as_ref()?;
        let d = self.digest(device)?;
        Some((fit(d, limit.bytes), limit, d.oom()))
    }
}

pub fn run(args: &ReportArgs) -> Result<(), Failure> {
    let rules = match &args.rules {
        None => Rules::built_in(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure(format!("{path}: {}", crate::load::io_reason(&e))))?;
            Rules::with_user(Rules::from_json(&text).map_err(|e| Failure(format!("{path}: {e}")))?)
        }
    };
    let stamp = crate::clock::local_stamp();
    let mut done: Vec<(FileReport, PathBuf)> = Vec::new();
    let mut failures = 0;
    let stems = stems(&args.files);
    for (path, stem) in args.files.iter().zip(&stems) {
        let result = load::open(path).and_then(|snapshot| {
            let mut report = analyse(path, stem, &snapshot, &rules, args)?;
            let ran_out = snapshot
                .devices()
                .iter()
                .any(|&d| snapshot.trace(d).action.contains(&Action::Oom));
            if args.gpu_memory.is_some() || (args.files.len() > 1 && !args.json) || ran_out {
                report.digests = digests(&snapshot, &rules, "", 0);
                for d in &mut report.digests {
                    d.file = report.name.clone();
                }
                let own: Vec<&Digest> = report.digests.iter().collect();
                report.limit = Limit::of(args.gpu_memory, &own);
            }
            if args.json {
                println!("{}", json_line(&report));
                return Ok(None);
            }
            let dir = write_report(&report, &args.out_dir, &stamp).map_err(Failure)?;
            Ok(Some((report, dir)))
        });
        match result {
            Ok(Some(written)) => {
                println!("{}", written.1.display());
                done.push(written);
            }
            Ok(None) => {}
            Err(f) => {
                eprintln!("error: {}", f.0);
                failures += 1;
            }
        }
    }
    if let Some((_, newest)) = done.last() {
        point_latest(&args.out_dir, newest)
            .map_err(|e| Failure(format!("{}: {e}", args.out_dir.display())))?;
    }
    if done.len() > 1 {
        let all: Vec<&Digest> = done.iter().flat_map(|(f, _)| &f.digests).collect();
        let limit = Limit::of(args.gpu_memory, &all);
        let table = combined_table(&done, limit.as_ref());
        print!("\n{table}");
        let chart = format!("{stamp}_compare.png");
        // The device each file's charts show.
        let runs: Vec<&Digest> = done
            .iter()
            .filter_map(|(f, _)| f.digest(f.reports.get(f.charted)?.device))
            .collect();
        charts::draw_compare(&runs, &args.out_dir.join(&chart)).map_err(Failure)?;
        let path = args.out_dir.join(format!("{stamp}_summary.md"));
        let text = format!(
            "# Memograph reports, {stamp}\n\n{table}\n![Live memory over each trace, and the peaks]({chart})\n"
        );
        std::fs::write(&path, text).map_err(|e| Failure(crate::load::write_failure(&path, &e)))?;
    }
    if failures > 0 {
        return Err(Failure::reported());
    }
    Ok(())
}

fn analyse(
    path: &str,
    stem: &str,
    snapshot: &Snapshot,
    rules: &Rules,
    args: &ReportArgs,
) -> Result<FileReport, Failure> {
    let devices = snapshot.devices();
    // A snapshot of no device still has a report (saying so), charted as device 0.
    let charted_device = match args.device {
        Some(_) => crate::load::device_of(path, snapshot, args.device)?,
        None => snapshot.default_device().unwrap_or(0),
    };
    let options = ReportOptions::default();
    let reports: Vec<DeviceReport> = devices
        .iter()
        .map(|&d| device_report(snapshot, d, rules, &options))
        .collect();
    let charted = reports
        .iter()
        .position(|r| r.device == charted_device)
        .unwrap_or(0);
    let name = match (&args.name, args.files.len()) {
        (Some(n), 1) => sanitize(n),
        (Some(n), _) => format!("{}_{stem}", sanitize(n)),
        (None, _) => stem.to_string(),
    };
    Ok(FileReport {
        path: path.to_string(),
        name,
        reports,
        charted,
        digests: Vec::new(),
        limit: None,
    })
}

/// Each file's part of its report's name: [`name_of`] it, or, where two files would share one (two
/// runs' `rank0.pickle`), the folders from where their paths part and it (`run_a_rank0`; of
/// `a/run/rank0.pickle` and `b/run/rank0.pickle`, `a_run_rank0` and `b_run_rank0`).
fn stems(files: &[String]) -> Vec<String> {
    let own: Vec<String> = files.iter().map(|f| name_of(f)).collect();
    let paths: Vec<String> = files
        .iter()
        .map(|f| {
            std::path::absolute(f)
                .map_or_else(|_| f.clone(), |p| p.to_string_lossy().into_owned())
                .replace('\\', "/")
        })
        .collect();
    own.iter()
        .zip(&paths)
        .map(|(stem, path)| {
            let twins: Vec<&str> = own
                .iter()
                .zip(&paths)
                .filter(|(o, _)| *o == stem)
                .map(|(_, p)| p.as_str())
                .collect();
            if twins.len() < 2 {
                return stem.clone();
            }
            let shared = common_folder(twins).len();
            let folders = path
                .get(shared..)
                .and_then(|rest| rest.rsplit_once(['/', '\\']))
                .map_or("", |(folders, _)| folders);
            if folders.is_empty() {
                stem.clone()
            } else {
                format!("{}_{stem}", sanitize(&folders.replace(['/', '\\'], "_")))
            }
        })
        .collect()
}

/// A report name from a file path: the file name without its snapshot extensions.
fn name_of(path: &str) -> String {
    let stem = memograph_snapshot::names::stem(path.trim_end_matches(['/', '\\']));
    sanitize(if stem.is_empty() { "snapshot" } else { stem })
}

/// Letters, digits, `-`, `_` and `.` kept; anything else becomes `_`.
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('.').to_string();
    if s.is_empty() {
        "snapshot".into()
    } else {
        s
    }
}

fn json_line(report: &FileReport) -> String {
    let fits: Vec<serde_json::Value> = report
        .reports
        .iter()
        .filter_map(|r| {
            let (fit, _, _) = report.fit(r.device)?;
            Some(serde_json::json!({ "device": r.device, "fit": fit }))
        })
        .collect();
    serde_json::json!({
        "file": report.path,
        "devices": report.reports,
        "gpu_memory": report.limit,
        "fits": fits,
    })
    .to_string()
}

/// Writes the report directory; a name already taken this second gets `_2`, `_3`, …
fn write_report(report: &FileReport, out_dir: &Path, stamp: &str) -> Result<PathBuf, String> {
    let fail = |p: &Path, e: std::io::Error| crate::load::write_failure(p, &e);
    std::fs::create_dir_all(out_dir).map_err(|e| fail(out_dir, e))?;
    let base = format!("{stamp}_{}", report.name);
    let mut dir = out_dir.join(&base);
    let mut k = 2;
    loop {
        match std::fs::create_dir(&dir) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                dir = out_dir.join(format!("{base}_{k}"));
                k += 1;
            }
            Err(e) => return Err(fail(&dir, e)),
        }
    }
    let filled = (|| {
        if let Some(main) = report.reports.get(report.charted) {
            charts::draw_all(main, &report.name, &dir)?;
        }
        let write = |file: &str, text: String| {
            let p = dir.join(file);
            std::fs::write(&p, text).map_err(|e| fail(&p, e))
        };
        write("analysis_report.txt", text_report(report, stamp))?;
        write("README.md", readme(report))?;
        write("analysis.json", json_line(report) + "\n")
    })();
    match filled {
        Ok(()) => Ok(dir),
        Err(e) => {
            // No half-written report is left for `latest` or a reader to find.
            let _ = std::fs::remove_dir_all(&dir);
            Err(e)
        }
    }
}

/// Points `out_dir/latest` at `dir` (a relative symbolic link, replaced atomically; a text file holding
/// the directory's name where links are not available).
fn point_latest(out_dir: &Path, dir: &Path) -> std::io::Result<()> {
    let target = dir.file_name().unwrap_or_default();
    let latest = out_dir.join("latest");
    let staged = out_dir.join(format!(".latest.{}", std::process::id()));
    let _ = std::fs::remove_file(&staged);
    #[cfg(unix)]
    std::os::unix::fs::symlink(target, &staged)?;
    #[cfg(not(unix))]
    std::fs::write(&staged, target.to_string_lossy().as_bytes())?;
    if latest.is_dir() && !latest.is_symlink() {
        return Err(std::io::Error::other(
            "'latest' is a directory; remove it to let memograph point it at the newest report",
        ));
    }
    std::fs::rename(&staged, &latest)
}

/// `20261122_102922` → `2026-11-22 10:29:22`.
fn readable(stamp: &str) -> String {
    let d: Vec<char> = stamp.chars().filter(char::is_ascii_digit).collect();
    if d.len() != 14 {
        return stamp.to_string();
    }
    let s = |a: usize, b: usize| d[a..b].iter().collect::<String>();
    format!(
        "{}-{}-{} {}:{}:{}",
        s(0, 4),
        s(4, 6),
        s(6, 8),
        s(8, 10),
        s(10, 12),
        s(12, 14)
    )
}

/// `analysis_report.txt`: every figure, for reading in a terminal or attaching to a bug.
fn text_report(report: &FileReport, stamp: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Memograph report: {}", report.path);
    let _ = writeln!(
        o,
        "Made {} by memograph {}. Sizes in binary units (1 GiB = 2^30 bytes).",
        readable(stamp),
        env!("CARGO_PKG_VERSION")
    );
    if report.reports.is_empty() {
        let _ = writeln!(o, "\nThe snapshot has no segments and no trace entries.");
    }
    for r in &report.reports {
        device_text(&mut o, r);
    }
    o
}

fn device_text(o: &mut String, r: &DeviceReport) {
    let e = &r.efficiency;
    let _ = writeln!(o, "\n======== cuda:{} ========", r.device);
    let _ = writeln!(
        o,
        "Peak allocated: {} {}{}; {} over the trace, {} live at the peak.",
        bytes_exact(r.peak.bytes),
        r.at_text(),
        r.in_step_text(),
        count(r.summary.allocations as u64, "allocation", "allocations"),
        grouped(r.live_allocations as u64)
    );
    let _ = writeln!(
        o,
        "Reserved: {} at the peak, {} at most; at the snapshot {} in {}.",
        bytes(e.reserved_at_peak),
        bytes(e.max_reserved),
        bytes(r.summary.reserved_bytes),
        count(r.summary.segments as u64, "segment", "segments")
    );

    if let Some(steps) = &r.steps {
        let _ = writeln!(
            o,
            "\n-- {} steps in the trace, marked by {} --",
            grouped(steps.steps.len() as u64),
            steps.marker
        );
        for line in steps.table().text().lines() {
            let _ = writeln!(o, "  {line}");
        }
        if !steps.kept_at.is_empty() {
            let _ = writeln!(
                o,
                "\n  Left live since step 1's end, by where it was allocated (step 1's end → step {}'s):",
                grouped(steps.steps.len() as u64)
            );
            o.push_str(&memograph_snapshot::analysis::compare::grown_text(
                &steps.kept_at,
                false,
            ));
        }
    }

    let _ = writeln!(o, "\n-- Allocator efficiency --");
    let _ = writeln!(
        o,
        "  cache overhead at the peak   {:>6.1} %  (reserved {} − allocated {})",
        e.cache_overhead * 100.0,
        bytes(e.reserved_at_peak),
        bytes(e.peak_allocated)
    );
    let _ = writeln!(
        o,
        "  cached free at the snapshot  {}  (largest block {})",
        bytes(e.free_bytes),
        bytes(e.largest_free_block)
    );
    let _ = writeln!(
        o,
        "  fragmentation                {:>6.2}    (1 − largest free block / free bytes)",
        e.fragmentation
    );
    let _ = writeln!(
        o,
        "  rounding waste               {}  (block size − requested size, allocated blocks)",
        bytes(e.rounding_waste)
    );

    let _ = writeln!(o, "\n-- Components {} --", r.at_text());
    for c in &r.components {
        let _ = writeln!(
            o,
            "  {:<18} {:>12}  {:>5.1} %",
            c.component.label(),
            bytes(c.bytes),
            percent(c.bytes, r.live_bytes)
        );
    }
    let _ = writeln!(o, "\n-- Categories {} --", r.at_text());
    for c in r.categories.iter().filter(|c| c.count > 0) {
        let _ = writeln!(
            o,
            "  {:<18} {:>12}  {:>5.1} %  {:>8} allocations",
            c.category,
            bytes(c.bytes),
            percent(c.bytes, r.live_bytes),
            grouped(c.count)
        );
    }

    let _ = writeln!(
        o,
        "\n-- The {} largest allocations live {} --",
        r.top_consumers.len(),
        r.at_text()
    );
    let _ = writeln!(
        o,
        "  {:>3}  {:>10}  {:>5}  {:<22} {:>8}  {:<16} frame",
        "#", "size", "%", "block", "entry", "category"
    );
    for (k, c) in r.top_consumers.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {:>3}  {:>10}  {:>5.1}  {:<22} {:>8}  {:<16} {}",
            k + 1,
            bytes(c.bytes),
            percent(c.bytes, r.live_bytes),
            c.name,
            c.alloc_event
                .map(|x| x.to_string())
                .unwrap_or_else(|| "before".into()),
            c.category.as_deref().unwrap_or(""),
            c.frame
        );
    }

    let mut frag: Vec<(u64, f64)> = e.segment_fragmentation.clone();
    frag.retain(|&(_, f)| f > 0.0);
    frag.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let _ = writeln!(
        o,
        "\n-- Fragmentation by segment ({} of {} {} split free space; the 20 worst) --",
        frag.len(),
        count(e.segment_fragmentation.len() as u64, "segment", "segments"),
        if frag.len() == 1 { "has" } else { "have" }
    );
    for (addr, f) in frag.iter().take(20) {
        let _ = writeln!(o, "  s{addr:x}  {f:.2}");
    }

    let _ = writeln!(o, "\n-- Sizes of the allocations live {} --", r.at_text());
    histogram_text(o, &r.live_sizes);
    let _ = writeln!(o, "\n-- Sizes of the cached free blocks at the snapshot --");
    histogram_text(o, &r.free_sizes);

    let _ = writeln!(o, "\n-- Recommendations --");
    if r.recommendations.is_empty() {
        let _ = writeln!(o, "  none: no threshold was crossed.");
    }
    for rec in &r.recommendations {
        let _ = writeln!(o, "  [{}] {}", rec.kind, rec.message);
        let _ = writeln!(o, "      evidence: {}", rec.evidence);
    }

    let _ = writeln!(
        o,
        "\n-- Live set {} by call stack (outermost first; torch and library frames hidden; paths under 0.1 % merged) --",
        r.at_text()
    );
    tree_text(o, &r.live_set, r.live_bytes);
}

fn histogram_text(o: &mut String, buckets: &[memograph_snapshot::analysis::efficiency::Bucket]) {
    if buckets.is_empty() {
        let _ = writeln!(o, "  none");
    }
    for b in buckets {
        let _ = writeln!(
            o,
            "  ≥ {:>10}  {:>8} × {:>12}",
            bytes(b.from),
            grouped(b.count),
            bytes(b.bytes)
        );
    }
}

/// The tree with two spaces per level, down to nodes of at least 1 % (or 12 levels).
fn tree_text(o: &mut String, root: &Node, total: u64) {
    let mut todo: Vec<(&Node, usize)> = root.children.iter().rev().map(|c| (c, 0)).collect();
    while let Some((n, depth)) = todo.pop() {
        let _ = writeln!(
            o,
            "  {:>10} {:>5.1} % {}{}",
            bytes(n.bytes),
            percent(n.bytes, total),
            "  ".repeat(depth),
            n.frame.as_deref().unwrap_or("")
        );
        if depth < 12 {
            todo.extend(
                n.children
                    .iter()
                    .rev()
                    .filter(|c| percent(c.bytes, total) >= 1.0)
                    .map(|c| (c, depth + 1)),
            );
        }
    }
}

/// `README.md`: the findings in a few lines, then the charts.
fn readme(report: &FileReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Memory report: {}\n", report.name);
    let _ = writeln!(o, "Snapshot `{}`.\n", report.path);
    let Some(r) = report.reports.get(report.charted) else {
        let _ = writeln!(o, "The snapshot has no segments and no trace entries.");
        return o;
    };
    let _ = writeln!(o, "## Findings (cuda:{})\n", r.device);
    let fit = report
        .fit(r.device)
        .map(|(fit, limit, ran_out)| fit_finding(fit, limit, ran_out));
    o.push_str(&r.findings(fit.as_deref()));
    if report.reports.len() > 1 {
        let others: Vec<String> = report
            .reports
            .iter()
            .filter(|x| x.device != r.device)
            .map(|x| format!("cuda:{} peak {}", x.device, bytes(x.peak.bytes)))
            .collect();
        let _ = writeln!(
            o,
            "- Other devices: {} (see `analysis_report.txt`).",
            others.join(", ")
        );
    }
    let _ = writeln!(o);
    for (file, title) in charts::FILES {
        let _ = writeln!(o, "## {title}\n\n![{title}]({file})\n");
    }
    let _ = writeln!(
        o,
        "Every figure is in `analysis_report.txt`; `analysis.json` holds them for scripts."
    );
    o
}

/// A finding of how a device fits `limit`: `**In 80.0 GiB: yes**, headroom +12.3 GiB …`.
fn fit_finding(fit: Fit, limit: &Limit, ran_out: bool) -> String {
    let less = match ran_out {
        true => "what it needed when it ran out of memory, held plus asked for",
        false => "the most it reserved",
    };
    let why = match fit.verdict {
        Verdict::Fits | Verdict::TooBig => "",
        Verdict::Fragmented => {
            "; its peak allocated fits, but the cache's free pieces made its reservation too big \
             (`expandable_segments:True` may help)"
        }
        Verdict::Unknown => "; it ran out of memory needing less than that",
    };
    format!(
        "**In {}: {}**, headroom {} (the memory less {less}){why}.",
        limit.describe(),
        fit.verdict.label(),
        signed_bytes(fit.headroom_bytes)
    )
}

/// One row per file and device: the comparison across ranks or runs; with `limit`, each device's
/// headroom and whether it fits.
fn combined_table(done: &[(FileReport, PathBuf)], limit: Option<&Limit>) -> String {
    let mut o = String::new();
    if let Some(l) = limit {
        let _ = writeln!(o, "GPU memory: {}\n", l.describe());
    }
    let components: Vec<String> = Component::ALL
        .iter()
        .map(|c| c.label().to_lowercase())
        .collect();
    let (fit_heads, fit_rule) = match limit {
        Some(_) => (" headroom | fits |", "---:|---|"),
        None => ("", ""),
    };
    let _ = writeln!(
        o,
        "| file | device | peak allocated | reserved (max) |{fit_heads} {} | recommendations |",
        components.join(" | ")
    );
    let _ = writeln!(
        o,
        "|---|---|---:|---:|{fit_rule}{}---|",
        "---:|".repeat(components.len())
    );
    for (f, _) in done {
        for r in &f.reports {
            let comp: Vec<String> = r.components.iter().map(|c| bytes(c.bytes)).collect();
            let recs: Vec<&str> = r.recommendations.iter().map(|x| x.kind).collect();
            let fits = match limit {
                None => String::new(),
                Some(l) => match f.digest(r.device) {
                    Some(d) => {
                        let fit = fit(d, l.bytes);
                        format!(
                            " {} | {} |",
                            signed_bytes(fit.headroom_bytes),
                            fit.verdict.label()
                        )
                    }
                    None => " — | — |".into(),
                },
            };
            let _ = writeln!(
                o,
                "| {} | cuda:{} | {} | {} |{fits} {} | {} |",
                f.name,
                r.device,
                bytes(r.peak.bytes),
                bytes(r.efficiency.max_reserved),
                comp.join(" | "),
                if recs.is_empty() {
                    "—".to_string()
                } else {
                    recs.join(", ")
                }
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<ReportArgs, String> {
        let positional = a.iter().map(|s| s.to_string()).collect();
        ReportArgs::new(positional, None, None, false, None, None)
    }

    #[test]
    fn positional_arguments_are_files_then_out_dir_then_name() {
        let r = parse(&["a.pickle", "b.pickle.gz", "out", "run1"]).unwrap();
        assert_eq!(r.files, ["a.pickle", "b.pickle.gz"]);
        assert_eq!(r.out_dir, PathBuf::from("out"));
        assert_eq!(r.name.as_deref(), Some("run1"));
        let r = parse(&["a.pickle"]).unwrap();
        assert_eq!(r.out_dir, PathBuf::from(DEFAULT_OUT_DIR));
        assert!(parse(&["a.pickle", "out", "n", "extra"]).is_err());
        assert!(parse(&[]).is_err());
    }

    #[test]
    fn files_of_the_same_name_are_told_apart_by_their_folders() {
        let files: Vec<String> = [
            "/r/run_a/rank0.pickle",
            "/r/run_b/rank0.pickle",
            "/r/run_b/rank1.pickle",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(stems(&files), ["run_a_rank0", "run_b_rank0", "rank1"]);
        // Folders of the same name in two places: named from where the paths part.
        let files: Vec<String> = ["/r/a/run/rank0.pickle", "/r/b/run/rank0.pickle"]
            .map(String::from)
            .to_vec();
        assert_eq!(stems(&files), ["a_run_rank0", "b_run_rank0"]);
        // Paths typed at a Windows prompt.
        let files: Vec<String> = [r"C:\r\a\run\rank0.pickle", r"C:\r\b\run\rank0.pickle"]
            .map(String::from)
            .to_vec();
        assert_eq!(stems(&files), ["a_run_rank0", "b_run_rank0"]);
    }

    #[test]
    fn names_come_from_the_file_name() {
        assert_eq!(name_of("/x/y/rank0_oom_12.pickle.gz"), "rank0_oom_12");
        assert_eq!(name_of("run 1.pkl"), "run_1");
        assert_eq!(sanitize("../../etc"), "_.._etc");
    }
}
