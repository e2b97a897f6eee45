//! What a file's name says it holds, for the page and the CLI alike: which files of a folder are
//! snapshots, which may be step records (their first bytes decide: [`crate::steps::looks_like_steps`]),
//! and the order a folder's files are listed in.

use std::cmp::Ordering;

/// Pickles' endings (each maybe followed by `.gz`): step records never have them.
pub const PICKLE_ENDINGS: [&str; 3] = [".pickle", ".pkl", ".pk"];

/// The last part of a path, `/` or `\` separated (a folder's files are named by their path in it).
pub fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The folder part of a path, `/` or `\\` separated, without its last separator; empty for a bare
/// name (`run_a/rank0.pickle` → `run_a`): what tells one job's files from another's.
pub fn folder(path: &str) -> &str {
    path.rsplit_once(['/', '\\']).map_or("", |(dir, _)| dir)
}

/// The file name in lower case without a `.gz` ending: what the tests below look at.
fn plain(path: &str) -> String {
    let name = file_name(path).to_ascii_lowercase();
    name.strip_suffix(".gz").map(str::to_string).unwrap_or(name)
}

fn ends_with_any(name: &str, endings: &[&str]) -> bool {
    endings.iter().any(|e| name.ends_with(e))
}

/// A name only pickles go by (`x.pickle`, `x.pkl.gz`).
pub fn pickle_named(path: &str) -> bool {
    ends_with_any(&plain(path), &PICKLE_ENDINGS)
}

/// Endings of what lies beside snapshots and is none, whatever its name says: pages and reports
/// (`memograph html` names its page after the folder: `memograph_snapshots.html`), charts, notes,
/// tables, configs, archives and checkpoints, and code and what builds make of it (a project's
/// `snapshot_utils.py`, a `snapshotter.js` in its `node_modules`, a `libmemory_snapshot.so`).
const NOT_SNAPSHOTS: &[&str] = &[
    ".html", ".htm", ".md", ".rst", ".png", ".jpg", ".jpeg", ".svg", ".pdf", ".csv", ".tsv",
    ".log", ".txt", ".jsonl", ".ipynb", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".xml", ".zip",
    ".tar", ".pt", ".pth", ".whl", ".py", ".pyc", ".pyi", ".sh", ".js", ".mjs", ".cjs", ".ts",
    ".css", ".map", ".wasm", ".rs", ".rlib", ".rmeta", ".d", ".c", ".h", ".cc", ".cpp", ".hpp",
    ".cu", ".cuh", ".o", ".a", ".so", ".dylib", ".dll", ".exe", ".lock",
];

/// A name a folder's snapshots go by: a pickle's, a `.pt.trace`, or one with `snapshot` in it
/// (`memory_snapshot.json`) that is no page, chart, note or table. The file's own name counts, not
/// its folder's: capture writes into `memograph_snapshots/`, where a README or a chart is no snapshot.
pub fn snapshot_named(path: &str) -> bool {
    let name = plain(path);
    pickle_named(path)
        || name.ends_with(".pt.trace")
        || (name.contains("snapshot") && !ends_with_any(&name, NOT_SNAPSHOTS))
}

/// Endings a snapshot's name may carry, stripped (in any order, any case) to name what came of it:
/// a report, a page, an export, a run's label.
const SNAPSHOT_ENDINGS: [&str; 7] = [
    ".gz",
    ".pickle",
    ".pkl",
    ".pk",
    ".json",
    ".bin",
    ".pt.trace",
];

/// A file's name without its folder and its snapshot endings (`runs/rank0_oom.pickle.gz` →
/// `rank0_oom`); the whole name where nothing would be left (`.pickle` stays `.pickle`).
pub fn stem(path: &str) -> &str {
    let mut s = file_name(path);
    while let Some(cut) = SNAPSHOT_ENDINGS.iter().find_map(|e| {
        let keep = s.len().checked_sub(e.len()).filter(|&k| k > 0)?;
        let tail = s.get(keep..)?;
        tail.eq_ignore_ascii_case(e).then_some(keep)
    }) {
        s = &s[..cut];
    }
    s
}

/// `path` numbered `k`, as browsers number downloads of one name: ` (k)` after its file name's
/// stem, before its endings (`a/run.pickle.gz`, 2 → `a/run (2).pickle.gz`; `notes.txt` →
/// `notes (2).txt`). Two files of one name shown side by side are told apart so.
pub fn numbered(path: &str, k: usize) -> String {
    let name = file_name(path);
    let dir = &path[..path.len() - name.len()];
    let stem = stem(name);
    let cut = if stem.len() < name.len() {
        stem.len()
    } else {
        // No snapshot ending: before the last extension, if it has one (not a leading dot's).
        name.rfind('.').filter(|&i| i > 0).unwrap_or(name.len())
    };
    format!("{dir}{} ({k}){}", &name[..cut], &name[cut..])
}

/// The first of `name`, `name` numbered 2, 3, … (see [`numbered`]) that is not `taken`.
pub fn free_name(name: &str, taken: impl FnMut(&str) -> bool) -> String {
    first_free(name, |k| numbered(name, k), taken)
}

/// The first of the folder name `folder`, `folder (2)`, `folder (3)`, … that is not `taken`: the
/// files of a second folder of one name (two runs' `memograph_snapshots`) are shown under it.
pub fn free_folder(folder: &str, taken: impl FnMut(&str) -> bool) -> String {
    first_free(folder, |k| format!("{folder} ({k})"), taken)
}

fn first_free(
    name: &str,
    numbered: impl Fn(usize) -> String,
    mut taken: impl FnMut(&str) -> bool,
) -> String {
    if !taken(name) {
        return name.to_string();
    }
    // `taken` says yes to finitely many names: one of the numbered ones is free.
    (2..)
        .map(numbered)
        .find(|n| !taken(n))
        .unwrap_or_else(|| name.to_string())
}

/// A path's first folder and the rest (`memograph_snapshots/rank0.pickle` →
/// (`memograph_snapshots`, `rank0.pickle`)); `None` for a bare name.
pub fn top_folder(path: &str) -> Option<(&str, &str)> {
    path.split_once(['/', '\\'])
}

/// What [`snapshot_named`] looks for, in words (for a folder with none).
pub const SNAPSHOT_NAMES: &str =
    "files named *.pickle, *.pkl or *.pk, maybe .gz, or with \"snapshot\" in their name";

/// What a folder's step records are, in words (for a folder with none).
pub const STEP_RECORDS: &str = "capture's rank*_steps.jsonl and rank*_run.json, logs, metrics, CSV";

/// A name step records go by in a folder (JSON lines, JSON, CSV, logs): their content decides.
pub fn text_named(path: &str) -> bool {
    ends_with_any(&plain(path), &crate::steps::TEXT_ENDINGS)
}

/// `a` against `b` with runs of digits compared as numbers (`rank2` before `rank10`), the order a
/// folder's files are listed in.
pub fn natural_order(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut out: Vec<(bool, &str)> = Vec::new();
        let mut start = 0;
        for (i, c) in s.char_indices() {
            let digit = c.is_ascii_digit();
            match out.last_mut() {
                Some((d, run)) if *d == digit => *run = &s[start..i + c.len_utf8()],
                _ => {
                    start = i;
                    out.push((digit, &s[i..i + c.len_utf8()]));
                }
            }
        }
        out
    }
    let key = |&(digit, run): &(bool, &str)| {
        if digit {
            let trimmed = run.trim_start_matches('0');
            (trimmed.len(), trimmed.to_string())
        } else {
            (0, run.to_string())
        }
    };
    parts(a).iter().map(key).cmp(parts(b).iter().map(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_one_name_are_numbered_before_their_endings() {
        assert_eq!(numbered("run.pickle", 2), "run (2).pickle");
        assert_eq!(numbered("a/run.PICKLE.gz", 3), "a/run (3).PICKLE.gz");
        assert_eq!(
            numbered("traces/memory_snapshot.json", 2),
            "traces/memory_snapshot (2).json"
        );
        assert_eq!(numbered("notes.txt", 2), "notes (2).txt");
        assert_eq!(numbered("run", 2), "run (2)");
        assert_eq!(numbered(".pickle", 2), ".pickle (2)");
        assert_eq!(numbered("dir.v2/run", 2), "dir.v2/run (2)");
        // What a name tells is kept: its endings, its rank, its stem's config.
        assert!(pickle_named(&numbered("rank3_exit_0.pickle.gz", 2)));
        assert_eq!(stem(&numbered("ranks/rank3.pickle", 2)), "rank3 (2)");
    }

    #[test]
    fn the_first_free_name_or_folder_is_taken() {
        let taken = [
            "run.pickle",
            "run (2).pickle",
            "snaps",
            "snaps (2)",
            "snaps (3)",
        ];
        let is_taken = |n: &str| taken.contains(&n);
        assert_eq!(free_name("other.pickle", is_taken), "other.pickle");
        assert_eq!(free_name("run.pickle", is_taken), "run (3).pickle");
        assert_eq!(free_folder("snaps", is_taken), "snaps (4)");
        assert_eq!(free_folder("runs", is_taken), "runs");
        assert_eq!(
            top_folder("snaps/rank0.pickle"),
            Some(("snaps", "rank0.pickle"))
        );
        assert_eq!(
            top_folder("snaps\\a\\rank0.pickle"),
            Some(("snaps", "a\\rank0.pickle"))
        );
        assert_eq!(top_folder("rank0.pickle"), None);
    }

    #[test]
    fn a_files_own_name_says_what_it_holds() {
        assert!(snapshot_named("run/rank0_exit_0.pickle"));
        assert!(snapshot_named("RUN.PKL.GZ"));
        assert!(snapshot_named("traces/memory_snapshot.json"));
        assert!(snapshot_named("trace.pt.trace.gz"));
        // Names without an ending of their own, or with one no code or page has.
        assert!(snapshot_named("snapshots/memory_snapshot_step100"));
        assert!(snapshot_named("oom_snapshot.bin"));
        assert!(snapshot_named("memory_snapshot.rank3"));
        // In capture's folder, its other files are no snapshots.
        for other in [
            "memograph_snapshots.html",
            "runs/snapshot_peaks.png",
            "snapshot_notes.md",
            "memograph_snapshots/README.md",
            "memograph_snapshots/rank0_steps.jsonl",
            "memograph_snapshots/rank0_run.json",
            "memograph_snapshots\\chart.png",
            // A project's code, and what its builds and packages hold.
            "tools/snapshot_utils.py",
            "node_modules/playwright-core/lib/server/trace/recorder/snapshotter.js",
            "target/release/deps/libmemograph_snapshot-10bbcc3c.rlib",
            "target/release/deps/memograph_snapshot-10bbcc3c.d",
            "build/libmemory_snapshot.so",
            "checkpoints/snapshot_step100.pt",
        ] {
            assert!(!snapshot_named(other), "{other}");
        }
        assert!(text_named("memograph_snapshots/rank0_steps.jsonl"));
        assert!(text_named("x/metrics.CSV.gz"));
        assert!(!text_named("x/notes.md"));
        assert!(pickle_named("a.pk") && !pickle_named("a.pickle.json"));
        assert_eq!(file_name("a/b\\c.pickle"), "c.pickle");
        assert_eq!(file_name("c.pickle"), "c.pickle");
        assert_eq!(folder("a/b\\c.pickle"), "a/b");
        assert_eq!(folder("c.pickle"), "");
    }

    #[test]
    fn a_stem_is_the_name_without_snapshot_endings() {
        assert_eq!(stem("/x/y/rank0_oom_12.pickle.gz"), "rank0_oom_12");
        assert_eq!(stem("runs\\b.PKL"), "b");
        assert_eq!(stem("memory_snapshot.json"), "memory_snapshot");
        assert_eq!(stem("trace.pt.trace.gz"), "trace");
        assert_eq!(stem("a.pk"), "a");
        assert_eq!(stem("bs8.ctx2k.pickle"), "bs8.ctx2k");
        assert_eq!(stem(".pickle"), ".pickle");
        assert_eq!(stem("runs/"), "");
        assert_eq!(stem("ränk.pickle"), "ränk");
    }

    #[test]
    fn folder_files_sort_with_numbers_as_numbers() {
        let mut names = vec![
            "run/rank10_a.pickle",
            "run/rank2_a.pickle",
            "run/rank1_a.pickle",
            "run/rank02_b.pickle",
            "run/ränk3.pickle",
        ];
        names.sort_by(|a, b| natural_order(a, b));
        assert_eq!(
            names,
            [
                "run/rank1_a.pickle",
                "run/rank2_a.pickle",
                "run/rank02_b.pickle",
                "run/rank10_a.pickle",
                "run/ränk3.pickle"
            ]
        );
    }
}
