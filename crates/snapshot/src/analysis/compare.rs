//! Comparing runs. A comparison keeps of each file and device only a [`Digest`] (its peak figures, its
//! components, a downsampled live curve and the live set at the peak as a call-stack tree): small
//! whatever the file's size, so many files can be compared at once. From digests come the peak table
//! ([`peak_rows`], with a baseline and deltas), the call-stack diff of two live sets ([`diff`], whose
//! deltas add up exactly), the call paths that grew ([`grown_sites`]), and the rank strip ([`ranks`]).
//! [`config_from_name`] reads a sweep's knobs (`ctx512`, `bf16`, `rank3`…) out of file names.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use regex_lite::Regex;

use super::categories::{categorize, category_totals, CategoryTotal, Rules};
use super::lifetimes::{reserved_series, Lifetimes};
use super::live_set::{allocation_site, live_set_tree, Node};
use super::report::{component_totals, ComponentTotal};
use crate::model::{Action, Snapshot};

/// Points of a digest's live curve, at most.
pub const CURVE_POINTS: usize = 1000;

/// What a comparison keeps of one device of one file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Digest {
    /// The file's name (as opened) and size in bytes.
    pub file: String,
    pub file_bytes: u64,
    pub device: i64,
    /// Whether this is the file's default device (the one with the longest trace).
    pub default_device: bool,
    /// As `summary`'s figures (the reference files' definitions).
    pub timeline_peak_bytes: u64,
    pub peak_event_index: i64,
    /// Reserved bytes right after the peak's entry, and at most over the trace.
    pub reserved_at_peak_bytes: u64,
    pub max_reserved_bytes: u64,
    /// Live at the peak, by component and by category.
    pub components: Vec<ComponentTotal>,
    pub categories: Vec<CategoryTotal>,
    pub largest_allocation_bytes: u64,
    pub allocations: usize,
    pub entries: usize,
    /// Where the first `oom` entry is (see [`OomPoint`]); `None` when the trace holds none.
    #[serde(default)]
    pub oom_at: Option<OomPoint>,
    /// Knobs read from the file name (see [`config_from_name`]).
    pub config: BTreeMap<String, String>,
    pub curve: Curve,
    /// `external_annotations` of this device that could be placed on the trace: (name, entry).
    pub marks: Vec<(String, i64)>,
    /// The entry the live set and sites were taken at (the peak's unless asked for another).
    #[serde(default)]
    pub live_entry: Option<i64>,
    /// The live set at the peak (or `live_entry`), framework frames hidden, unpruned (so diffs add up
    /// exactly).
    pub live_set: Node,
    /// The live set at the peak by where each allocation was made (the innermost user frame).
    pub sites: Vec<Site>,
}

impl Digest {
    /// Whether the trace holds an `oom` entry.
    pub fn oom(&self) -> bool {
        self.oom_at.is_some()
    }

    /// Names the digest after the file it is of: its name, size and the config the name tells.
    pub fn name_after(&mut self, file: &str, file_bytes: u64) {
        self.file = file.to_string();
        self.file_bytes = file_bytes;
        self.config = config_from_name(file);
    }
}

/// Where a trace first ran out of memory: its entry, microseconds since the trace's first entry (when
/// every entry has a time) and the bytes live then, to be placed on its curve; with the request that
/// failed, what the driver said was free (when the entry says) and the bytes PyTorch had reserved,
/// which tell what the device gave the process (see [`fit::usable`](super::fit::usable)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OomPoint {
    pub entry: i64,
    pub time_us: Option<i64>,
    pub bytes: u64,
    #[serde(default)]
    pub requested: u64,
    #[serde(default)]
    pub device_free: Option<u64>,
    #[serde(default)]
    pub reserved: u64,
}

/// Live bytes over the trace, downsampled: each point stands for a run of entries and is taken at the
/// run's highest total, so the peak survives.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Curve {
    /// The trace entry of each point (`-1`: before the first entry).
    pub entries: Vec<i64>,
    pub bytes: Vec<u64>,
    /// Microseconds since the trace's first entry, when every entry has a time; else empty.
    pub time_us: Vec<i64>,
}

/// Bytes live at an entry that were allocated at one place.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Site {
    pub site: String,
    pub bytes: u64,
    pub count: u64,
}

/// The digest of every device of `snapshot` (empty devices left out), named `file`.
pub fn digests(snapshot: &Snapshot, rules: &Rules, file: &str, file_bytes: u64) -> Vec<Digest> {
    snapshot
        .devices()
        .into_iter()
        .map(|device| digest_of(snapshot, device, rules, file, file_bytes))
        .collect()
}

/// The digest of one device of `snapshot`, its live set at the peak, named `file`.
pub fn digest_of(
    snapshot: &Snapshot,
    device: i64,
    rules: &Rules,
    file: &str,
    file_bytes: u64,
) -> Digest {
    let lifetimes = Lifetimes::of(snapshot, device);
    let mut d = digest_at(snapshot, &lifetimes, rules, None);
    d.name_after(file, file_bytes);
    d.default_device = snapshot.default_device() == Some(device);
    d
}

/// The digest of one device from its block lifetimes, with the live set taken at `event` (`None`: the
/// peak). File fields are left empty for the caller.
pub fn digest_at(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    rules: &Rules,
    event: Option<i64>,
) -> Digest {
    let device = lifetimes.device;
    let trace = snapshot.trace(device);
    let peak = lifetimes.peak();
    let event = event.unwrap_or(peak.event);
    let names = rules.names();
    let of = categorize(snapshot, lifetimes, rules);
    let categories = category_totals(lifetimes, &of, &names, event);
    let (start, reserved) = reserved_series(snapshot, device);
    let reserved_at = |e: i64| match e {
        -1 => start,
        e => reserved.get(e as usize).copied().unwrap_or(start),
    };
    let oom_at = trace
        .action
        .iter()
        .position(|&a| a == Action::Oom)
        .map(|i| OomPoint {
            entry: i as i64,
            time_us: trace
                .has_time()
                .then(|| trace.time_us[i].saturating_sub(trace.time_us[0])),
            bytes: lifetimes.live_bytes_at(i as i64),
            requested: trace.get(i).size,
            device_free: trace.get(i).device_free,
            reserved: reserved_at(i as i64),
        });
    let live = lifetimes.live_set_at(event);
    let mut sites: HashMap<crate::model::StackId, (u64, u64)> = HashMap::new();
    for &i in &live {
        let a = &lifetimes.allocations[i as usize];
        let s = sites.entry(a.stack).or_default();
        s.0 = s.0.saturating_add(a.size);
        s.1 += 1;
    }
    let mut by_site: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (stack, (bytes, count)) in sites {
        let s = by_site.entry(allocation_site(snapshot, stack)).or_default();
        s.0 = s.0.saturating_add(bytes);
        s.1 += count;
    }
    let mut sites: Vec<Site> = by_site
        .into_iter()
        .map(|(site, (bytes, count))| Site { site, bytes, count })
        .collect();
    sites.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.site.cmp(&b.site)));
    Digest {
        file: String::new(),
        file_bytes: 0,
        device,
        default_device: false,
        timeline_peak_bytes: peak.bytes,
        peak_event_index: peak.event,
        reserved_at_peak_bytes: reserved_at(peak.event),
        max_reserved_bytes: reserved.iter().copied().fold(start, u64::max),
        components: component_totals(&categories),
        categories,
        largest_allocation_bytes: lifetimes
            .allocations
            .iter()
            .map(|a| a.size)
            .max()
            .unwrap_or(0),
        allocations: lifetimes.allocations.len(),
        entries: trace.len(),
        oom_at,
        config: BTreeMap::new(),
        curve: curve(snapshot, lifetimes, CURVE_POINTS),
        marks: marks(snapshot, device),
        live_entry: Some(event),
        live_set: live_set_tree(snapshot, lifetimes, event, true),
        sites,
    }
}

/// Live bytes at up to `points` entries spread over the trace, each at its run's highest total.
pub fn curve(snapshot: &Snapshot, lifetimes: &Lifetimes, points: usize) -> Curve {
    let n = lifetimes.live_after.len();
    let mut c = Curve::default();
    if n == 0 {
        c.entries.push(-1);
        c.bytes.push(lifetimes.initial_bytes);
        return c;
    }
    let points = points.clamp(1, n);
    // In u64: `k * n` passes usize::MAX on wasm32 for long traces.
    let at = |k: usize| (k as u64 * n as u64 / points as u64) as usize;
    for k in 0..points {
        let (lo, hi) = (at(k), at(k + 1).max(at(k) + 1));
        let (mut best, mut best_bytes) = (lo, lifetimes.live_after[lo]);
        for (i, &b) in lifetimes.live_after[lo..hi].iter().enumerate() {
            if b > best_bytes {
                (best, best_bytes) = (lo + i, b);
            }
        }
        c.entries.push(best as i64);
        c.bytes.push(best_bytes);
    }
    let trace = snapshot.trace(lifetimes.device);
    if trace.has_time() {
        let t0 = trace.time_us[0];
        c.time_us = c
            .entries
            .iter()
            .map(|&e| trace.time_us[e as usize].saturating_sub(t0))
            .collect();
    }
    c
}

/// The `START` annotations of `device` placed at the first entry at or after their time (traces with
/// times only).
fn marks(snapshot: &Snapshot, device: i64) -> Vec<(String, i64)> {
    let trace = snapshot.trace(device);
    if !trace.has_time() {
        return Vec::new();
    }
    snapshot
        .external_annotations
        .iter()
        .filter(|a| a.device == device && snapshot.str(a.stage).eq_ignore_ascii_case("start"))
        .filter_map(|a| {
            let t = a.time_us?;
            let e = trace.time_us.partition_point(|&x| x < t);
            (e < trace.len()).then(|| (snapshot.str(a.name).to_string(), e as i64))
        })
        .collect()
}

/// The knobs of a sweep that a file name tells, by common spellings: `ctx`/`seq` (context length),
/// `bs`/`lbs`/`gbs`/`mbs` (batch sizes), `dtype` (`bf16`, `fp16`, `fp32`, `fp8`), `phase` (`forward`,
/// `training`, `fullstep`, `inference`…), `rank`, `iter`, `step`, `tp`/`pp`/`dp`, and `model` (a size
/// such as `2.7B` or `350M`).
pub fn config_from_name(name: &str) -> BTreeMap<String, String> {
    static PATTERNS: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        const TOKEN_END: &str = r"(?:[^a-z0-9]|$)";
        [
            ("ctx", r"(?:ctx|context|ctxlen)[_-]?(\d+)"),
            ("seq", r"(?:seq|seqlen|seq_len)[_-]?(\d+)"),
            ("bs", r"(?:bs|batch|batchsize|batch_size)[_-]?(\d+)"),
            ("lbs", r"lbs[_-]?(\d+)"),
            ("gbs", r"gbs[_-]?(\d+)"),
            ("mbs", r"mbs[_-]?(\d+)"),
            ("dtype", r"(bf16|fp16|fp32|fp8|float16|float32|bfloat16|half|amp)"),
            (
                "phase",
                r"(forward|fwd|backward|bwd|training|train|fullstep|full_step|inference|infer|eval|optimizer)",
            ),
            ("rank", r"rank[_-]?(\d+)"),
            ("iter", r"(?:iter|iteration|it)[_-]?(\d+)"),
            ("step", r"step[_-]?(\d+)"),
            // memograph-capture's snapshots: rank{R}_{reason}_{step}.pickle.
            ("step", r"rank\d+_(?:exit|oom|peak|signal)_(\d+)"),
            ("tp", r"tp[_-]?(\d+)"),
            ("pp", r"pp[_-]?(\d+)"),
            ("dp", r"dp[_-]?(\d+)"),
            ("model", r"(\d+(?:\.\d+)?[bm])"),
        ]
        .into_iter()
        .map(|(key, p)| {
            let full = format!(r"(?:^|[^a-z0-9]){p}{TOKEN_END}");
            (key, Regex::new(&full).expect("a valid built-in pattern"))
        })
        .collect()
    });
    let stem = crate::names::stem(name).to_ascii_lowercase();
    let mut config = BTreeMap::new();
    for (key, re) in patterns {
        if config.contains_key(*key) {
            continue;
        }
        if let Some(m) = re.captures(&stem).and_then(|c| c.get(1)) {
            let value = m.as_str();
            let value = match *key {
                "model" => value.to_ascii_uppercase(),
                "phase" => match value {
                    "fwd" => "forward".into(),
                    "bwd" => "backward".into(),
                    "train" => "training".into(),
                    "full_step" => "fullstep".into(),
                    "infer" => "inference".into(),
                    v => v.to_string(),
                },
                "dtype" => match value {
                    "float16" | "half" => "fp16".into(),
                    "float32" => "fp32".into(),
                    "bfloat16" => "bf16".into(),
                    v => v.to_string(),
                },
                _ => value.trim_start_matches('0').to_string(),
            };
            let value = if value.is_empty() { "0".into() } else { value };
            config.insert(key.to_string(), value);
        }
    }
    config
}

/// The folder every name in `names` lies in (`runs/ctx128/` of `runs/ctx128/rank0.pickle` and
/// `runs/ctx128/rank1.pickle`), to be shown once rather than on every run: the longest prefix ending in
/// `/` (or `\`, as Windows paths are typed) that all of them share, when there are two or more; else
/// empty.
pub fn common_folder<'a>(names: impl IntoIterator<Item = &'a str>) -> &'a str {
    let mut names = names.into_iter();
    let Some(first) = names.next() else {
        return "";
    };
    let mut rest = names.peekable();
    if rest.peek().is_none() {
        return "";
    }
    let mut len = first.rfind(['/', '\\']).map_or(0, |k| k + 1);
    for name in rest {
        let shared = first
            .bytes()
            .zip(name.bytes())
            .take(len)
            .take_while(|(a, b)| a == b)
            .count();
        // By bytes: `shared` may end inside a character; a `/` or `\` (ASCII) never does.
        len = first.as_bytes()[..shared]
            .iter()
            .rposition(|&b| b == b'/' || b == b'\\')
            .map_or(0, |k| k + 1);
    }
    &first[..len]
}

/// `name` as shown among runs that share `folder` (see [`common_folder`]).
pub fn within<'a>(name: &'a str, folder: &str) -> &'a str {
    name.strip_prefix(folder).unwrap_or(name)
}

/// A row of the peak table: a digest against the baseline's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row<'a> {
    pub digest: &'a Digest,
    /// Peak minus the baseline's peak.
    pub delta_bytes: i64,
    /// Peak over the baseline's peak (`None` when the baseline's is 0).
    pub ratio: Option<f64>,
}

/// The peak table: each digest with its delta against `digests[baseline]` (digests held any way:
/// owned, borrowed, shared).
pub fn peak_rows<D: std::borrow::Borrow<Digest>>(digests: &[D], baseline: usize) -> Vec<Row<'_>> {
    let base = digests
        .get(baseline)
        .map_or(0, |d| d.borrow().timeline_peak_bytes);
    digests
        .iter()
        .map(|d| d.borrow())
        .map(|d| Row {
            digest: d,
            delta_bytes: delta(base, d.timeline_peak_bytes),
            ratio: (base > 0).then(|| d.timeline_peak_bytes as f64 / base as f64),
        })
        .collect()
}

/// `b - a`, saturating at i64's ends.
pub fn delta(a: u64, b: u64) -> i64 {
    (i128::from(b) - i128::from(a)).clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

/// A table of text cells, written out as Markdown, CSV or aligned text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns whose cells are numbers (right-aligned).
    pub numeric: Vec<bool>,
}

impl Table {
    pub fn markdown(&self) -> String {
        let cell = |c: &String| c.replace('|', "\\|");
        let line = |cells: &[String]| {
            format!(
                "| {} |\n",
                cells.iter().map(cell).collect::<Vec<_>>().join(" | ")
            )
        };
        let mut o = line(&self.header);
        let rule: Vec<String> = self
            .numeric
            .iter()
            .map(|&n| if n { "---:" } else { "---" }.to_string())
            .collect();
        o.push_str(&format!("|{}|\n", rule.join("|")));
        for r in &self.rows {
            o.push_str(&line(r));
        }
        o
    }

    pub fn csv(&self) -> String {
        let cell = |c: &String| {
            if c.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.clone()
            }
        };
        let line = |cells: &[String]| cells.iter().map(cell).collect::<Vec<_>>().join(",") + "\n";
        std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|r| line(r))
            .collect()
    }

    /// The columns `keep` takes, by index: header, cells and alignment alike.
    pub fn columns(&self, keep: impl Fn(usize) -> bool) -> Table {
        let pick = |cells: &[String]| -> Vec<String> {
            cells
                .iter()
                .enumerate()
                .filter(|(k, _)| keep(*k))
                .map(|(_, c)| c.clone())
                .collect()
        };
        Table {
            header: pick(&self.header),
            rows: self.rows.iter().map(|r| pick(r)).collect(),
            numeric: self
                .numeric
                .iter()
                .enumerate()
                .filter(|(k, _)| keep(*k))
                .map(|(_, &n)| n)
                .collect(),
        }
    }

    /// The indices of the columns whose every cell is `cell` (none of a table without rows).
    pub fn columns_all(&self, cell: &str) -> Vec<usize> {
        if self.rows.is_empty() {
            return Vec::new();
        }
        (0..self.header.len())
            .filter(|&k| {
                self.rows
                    .iter()
                    .all(|r| r.get(k).is_some_and(|c| c == cell))
            })
            .collect()
    }

    /// [`text`](Self::text) in lines of at most `width` characters where it can be: a table wider
    /// than that is cut into blocks of columns, one under another, each led by the first column (the
    /// rows' names), so that a terminal shows every cell where it belongs rather than wrapping each
    /// line. A column wider than `width` alone still makes a line of its own.
    pub fn text_within(&self, width: usize) -> String {
        let widths = self.widths();
        let n = widths.len();
        let line_width = |cols: &[usize]| -> usize {
            cols.iter().map(|&k| widths[k]).sum::<usize>() + 2 * cols.len().saturating_sub(1)
        };
        let all: Vec<usize> = (0..n).collect();
        if n < 3 || line_width(&all) <= width {
            return self.text();
        }
        let mut blocks: Vec<Vec<usize>> = vec![vec![0]];
        for (k, &w) in widths.iter().enumerate().skip(1) {
            let block = blocks.last_mut().expect("one block at least");
            if block.len() > 1 && line_width(block) + 2 + w > width {
                blocks.push(vec![0, k]);
            } else {
                block.push(k);
            }
        }
        blocks
            .iter()
            .map(|cols| self.columns(|k| cols.contains(&k)).text())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn widths(&self) -> Vec<usize> {
        (0..self.header.len())
            .map(|k| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|r| r.get(k).map_or(0, |c| c.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// Columns padded to their widest cell, numbers right-aligned.
    pub fn text(&self) -> String {
        let widths = self.widths();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .zip(&self.numeric)
                .map(|((c, &w), &n)| {
                    if n {
                        format!("{c:>w$}")
                    } else {
                        format!("{c:<w$}")
                    }
                })
                .collect();
            padded.join("  ").trim_end().to_string() + "\n"
        };
        std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|r| line(r))
            .collect()
    }
}

/// The config keys of `digests`, in a fixed order.
pub fn config_keys(digests: &[&Digest]) -> Vec<String> {
    const ORDER: [&str; 15] = [
        "model", "ctx", "seq", "bs", "lbs", "mbs", "gbs", "dtype", "phase", "tp", "pp", "dp",
        "rank", "iter", "step",
    ];
    ORDER
        .iter()
        .filter(|k| digests.iter().any(|d| d.config.contains_key(**k)))
        .map(|k| k.to_string())
        .collect()
}

/// The columns of a peak table in binary units (not `exact`) that read 0 B on every row, components
/// no run holds: shown as text, they are left out and named under the table instead. Their indices,
/// and that line ("0 B in every run: parameters", "0 B in this run: …" for a table of one),
/// `None` where there are none.
pub fn zero_columns(table: &Table) -> (Vec<usize>, Option<String>) {
    let zero = table.columns_all(&crate::format::bytes(0));
    let named: Vec<&str> = zero.iter().map(|&k| table.header[k].as_str()).collect();
    let runs = if table.rows.len() == 1 {
        "this run"
    } else {
        "every run"
    };
    let line = (!named.is_empty()).then(|| format!("0 B in {runs}: {}", named.join(", ")));
    (zero, line)
}

/// The peak table: file, device, the config read from names, peak and its delta against the baseline,
/// reserved, with `limit` (a device's memory) the headroom the most reserved leaves and whether the run
/// fits (see [`fit`](super::fit::fit)), components at the peak, the largest allocation, allocations,
/// OOM. `exact`: bytes as whole numbers (for CSV and machines), else in binary units.
pub fn peak_table(rows: &[Row], exact: bool, limit: Option<u64>) -> Table {
    use crate::format::bytes;
    let digests: Vec<&Digest> = rows.iter().map(|r| r.digest).collect();
    let keys = config_keys(&digests);
    let size = |b: u64| if exact { b.to_string() } else { bytes(b) };
    let signed = |d: i64| {
        let magnitude = size(d.unsigned_abs());
        match d.signum() {
            1 => format!("+{magnitude}"),
            -1 => format!("-{magnitude}"),
            _ => {
                if exact {
                    "0".into()
                } else {
                    "±0".into()
                }
            }
        }
    };
    let mut header: Vec<String> = vec!["file".into(), "device".into()];
    header.extend(keys.iter().cloned());
    let mut numeric = vec![false; header.len()];
    let numbers = [
        "peak allocated",
        "vs baseline",
        "×",
        "peak entry",
        "reserved at peak",
        "reserved (max)",
    ];
    header.extend(numbers.iter().map(|s| s.to_string()));
    numeric.resize(header.len(), true);
    if limit.is_some() {
        header.extend(["headroom", "fits"].map(String::from));
        numeric.extend([true, false]);
    }
    let components = super::report::Component::ALL;
    header.extend(components.iter().map(|c| c.label().to_lowercase()));
    header.extend(["largest allocation", "allocations"].map(String::from));
    numeric.resize(header.len(), true);
    header.push("OOM".into());
    numeric.push(false);
    let table_rows = rows
        .iter()
        .map(|r| {
            let d = r.digest;
            let mut cells = vec![d.file.clone(), format!("cuda:{}", d.device)];
            cells.extend(
                keys.iter()
                    .map(|k| d.config.get(k).cloned().unwrap_or_default()),
            );
            cells.push(size(d.timeline_peak_bytes));
            cells.push(signed(r.delta_bytes));
            cells.push(r.ratio.map_or(String::new(), |x| {
                if exact {
                    format!("{x:.4}")
                } else {
                    crate::format::ratio(x)
                }
            }));
            // Before the first entry: what was allocated before recording began (CSV keeps -1).
            cells.push(if d.peak_event_index < 0 && !exact {
                "before the first entry".into()
            } else {
                d.peak_event_index.to_string()
            });
            cells.push(size(d.reserved_at_peak_bytes));
            cells.push(size(d.max_reserved_bytes));
            if let Some(limit) = limit {
                let fit = super::fit::fit(d, limit);
                cells.push(signed(fit.headroom_bytes));
                cells.push(fit.verdict.label().to_string());
            }
            for c in components {
                let b = d
                    .components
                    .iter()
                    .find(|t| t.component == c)
                    .map_or(0, |t| t.bytes);
                cells.push(size(b));
            }
            cells.push(size(d.largest_allocation_bytes));
            cells.push(d.allocations.to_string());
            cells.push(if d.oom() { "OOM".into() } else { String::new() });
            cells
        })
        .collect();
    Table {
        header,
        rows: table_rows,
        numeric,
    }
}

/// Whether a diff node's path exists in both live sets, or only in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Both,
    /// Only in B.
    New,
    /// Only in A.
    Vanished,
}

/// A node of the call-stack diff: one frame, what A and B hold beneath it, and the difference.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiffNode {
    pub frame: Option<String>,
    pub a_bytes: u64,
    pub b_bytes: u64,
    pub delta_bytes: i64,
    pub a_count: u64,
    pub b_count: u64,
    pub presence: Presence,
    /// Sorted by |delta|, largest first.
    pub children: Vec<DiffNode>,
}

impl DiffNode {
    /// The node at `path` (child indices from this node), if any.
    pub fn at(&self, path: &[usize]) -> Option<&DiffNode> {
        path.iter().try_fold(self, |n, &k| n.children.get(k))
    }

    /// The frames from this node down to the node at `path`, outermost first (the call path a node
    /// stands for, to find its allocations in either file with `live_set::allocations_under`).
    pub fn frames_to(&self, path: &[usize]) -> Option<Vec<String>> {
        let mut node = self;
        let mut frames = Vec::with_capacity(path.len());
        for &k in path {
            node = node.children.get(k)?;
            frames.push(node.frame.clone()?);
        }
        Some(frames)
    }
}

/// The call-stack diff of two live-set trees, matched frame by frame from the outermost. Every node's
/// delta is its B bytes minus its A bytes, and the root's is the difference of the two totals exactly.
pub fn diff(a: &Node, b: &Node) -> DiffNode {
    merge(Some(a), Some(b))
}

fn merge(a: Option<&Node>, b: Option<&Node>) -> DiffNode {
    let frame = a.or(b).and_then(|n| n.frame.clone());
    let (a_bytes, a_count) = a.map_or((0, 0), |n| (n.bytes, n.count));
    let (b_bytes, b_count) = b.map_or((0, 0), |n| (n.bytes, n.count));
    let presence = match (a, b) {
        (Some(_), None) => Presence::Vanished,
        (None, Some(_)) => Presence::New,
        _ => Presence::Both,
    };
    let mut children: Vec<DiffNode> = Vec::new();
    let b_children: &[Node] = b.map_or(&[], |n| &n.children);
    let mut b_by_frame: HashMap<Option<&str>, &Node> =
        b_children.iter().map(|c| (c.frame.as_deref(), c)).collect();
    for ac in a.map_or(&[][..], |n| &n.children[..]) {
        let bc = b_by_frame.remove(&ac.frame.as_deref());
        children.push(merge(Some(ac), bc));
    }
    // B's own children in B's order (the map only says which are left).
    for bc in b_children {
        if b_by_frame.remove(&bc.frame.as_deref()).is_some() {
            children.push(merge(None, Some(bc)));
        }
    }
    children.sort_by(|x, y| {
        y.delta_bytes
            .unsigned_abs()
            .cmp(&x.delta_bytes.unsigned_abs())
            .then_with(|| y.b_bytes.max(y.a_bytes).cmp(&x.b_bytes.max(x.a_bytes)))
            .then_with(|| x.frame.cmp(&y.frame))
    });
    DiffNode {
        frame,
        a_bytes,
        b_bytes,
        delta_bytes: delta(a_bytes, b_bytes),
        a_count,
        b_count,
        presence,
        children,
    }
}

/// Bytes allocated at one place in A and in B.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SiteDelta {
    pub site: String,
    pub a_bytes: u64,
    pub b_bytes: u64,
    pub delta_bytes: i64,
    /// B over A (`None` where A holds nothing there: a new path).
    pub ratio: Option<f64>,
}

/// The places whose live bytes grew from A to B, most growth first: which allocations scale with the
/// knob a sweep turns.
pub fn grown_sites(a: &[Site], b: &[Site]) -> Vec<SiteDelta> {
    let before: HashMap<&str, u64> = a.iter().map(|s| (s.site.as_str(), s.bytes)).collect();
    let mut grown: Vec<SiteDelta> = b
        .iter()
        .filter_map(|s| {
            let a_bytes = before.get(s.site.as_str()).copied().unwrap_or(0);
            (s.bytes > a_bytes).then(|| SiteDelta {
                site: s.site.clone(),
                a_bytes,
                b_bytes: s.bytes,
                delta_bytes: delta(a_bytes, s.bytes),
                ratio: (a_bytes > 0).then(|| s.bytes as f64 / a_bytes as f64),
            })
        })
        .collect();
    grown.sort_by(|x, y| {
        y.delta_bytes
            .cmp(&x.delta_bytes)
            .then_with(|| x.site.cmp(&y.site))
    });
    grown
}

/// The peaks of a set of ranks and which one is out of line.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RankStrip {
    /// (rank, peak bytes), by rank.
    pub peaks: Vec<(u32, u64)>,
    /// For each rank, the index (in the digests given) of the run its peak is from.
    pub runs: Vec<usize>,
    pub mean_bytes: f64,
    pub max_bytes: u64,
    /// Highest peak over the mean (1.0: perfectly balanced).
    pub imbalance: f64,
    /// The rank farthest from the median, when it is more than [`OUTLIER_SHARE`] away from it.
    pub outlier: Option<u32>,
}

/// How far from the median a rank's peak must be to be called out of line.
pub const OUTLIER_SHARE: f64 = 0.05;

impl RankStrip {
    /// `8 ranks · mean 61.2 GiB · max 66.0 GiB · imbalance ×1.08 · rank 6 is out of line`.
    pub fn describe(&self) -> String {
        use crate::format::{bytes, ratio};
        format!(
            "{} ranks · mean {} · max {} · imbalance {}{}",
            self.peaks.len(),
            bytes(self.mean_bytes as u64),
            bytes(self.max_bytes),
            ratio(self.imbalance),
            self.outlier
                .map(|r| format!(" · rank {r} is out of line"))
                .unwrap_or_default()
        )
    }
}

/// The ranks of one job among the runs compared.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RankSet {
    /// What tells this job from the others compared (its folder, the knobs its names differ in);
    /// empty when there is one job.
    pub label: String,
    #[serde(flatten)]
    pub strip: RankStrip,
    /// Every run of the job (indices into the runs given), not only each rank's highest.
    #[serde(skip)]
    pub members: Vec<usize>,
}

/// The config keys that tell a job's runs apart from each other rather than from other jobs' runs.
const PER_RUN_KEYS: [&str; 3] = ["rank", "step", "iter"];

/// The rank strips of the jobs among `digests`: runs that carry a `rank` are grouped by their folder
/// and the rest of their config (a sweep's bs8 and bs16 jobs, or two runs' folders, are not one set
/// of ranks), and each group of two ranks or more gets a strip. `runs` indexes into `digests`.
pub fn rank_sets(digests: &[&Digest]) -> Vec<RankSet> {
    type Key = (String, Vec<(String, String)>);
    let key_of = |d: &Digest| -> Key {
        let folder = crate::names::folder(&d.file);
        let config = d
            .config
            .iter()
            .filter(|(k, _)| !PER_RUN_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (folder.to_string(), config)
    };
    let mut groups: Vec<(Key, Vec<usize>)> = Vec::new();
    for (i, d) in digests.iter().enumerate() {
        if !d.config.contains_key("rank") {
            continue;
        }
        let key = key_of(d);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    // Labels tell every job apart, those of one rank too (a strip alone is still named when other
    // jobs' runs are compared beside it).
    let keys: Vec<&Key> = groups.iter().map(|(k, _)| k).collect();
    let folders_differ = keys.windows(2).any(|w| w[0].0 != w[1].0);
    // A folder is named from where the jobs' folders part (`a/run` and `b/run`, not `run` twice).
    let folders: Vec<String> = keys
        .iter()
        .map(|k| format!("{}/", k.0.replace('\\', "/")))
        .collect();
    let shared = common_folder(folders.iter().map(String::as_str)).len();
    let label = |key: &Key, folder: &str| -> String {
        if keys.len() < 2 {
            return String::new();
        }
        let mut parts = Vec::new();
        if folders_differ {
            let own = folder[shared..].trim_end_matches('/');
            let last = folder
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            parts.push(match (own.is_empty(), last.is_empty()) {
                (false, _) => own.to_string(),
                (true, false) => last.to_string(),
                (true, true) => ".".to_string(),
            });
        }
        for pair in &key.1 {
            if keys.iter().any(|other| !other.1.contains(pair)) {
                parts.push(format!("{} {}", pair.0, pair.1));
            }
        }
        parts.join(" · ")
    };
    let labels: Vec<String> = keys
        .iter()
        .zip(&folders)
        .map(|(k, f)| label(k, f))
        .collect();
    groups
        .into_iter()
        .zip(labels)
        .filter_map(|((_, members), label)| {
            let strip = RankStrip::of(&ranked(digests, members.iter().copied()))?;
            Some(RankSet {
                label,
                strip,
                members,
            })
        })
        .collect()
}

/// The rank strip of digests that carry a `rank` in their config, when there are two ranks or more
/// (see [`rank_sets`] for runs of several jobs). A rank with several runs (capture's snapshots at
/// exit, at each new peak, every N steps) stands by its highest peak: the most memory that rank was
/// seen to need (the first run of it on a tie).
pub fn ranks(digests: &[&Digest]) -> Option<RankStrip> {
    RankStrip::of(&ranked(digests, 0..digests.len()))
}

/// (run index, rank, peak bytes) of the runs `at` among `digests` that carry a rank in their config.
fn ranked(digests: &[&Digest], at: impl IntoIterator<Item = usize>) -> Vec<(usize, u32, u64)> {
    at.into_iter()
        .filter_map(|i| {
            let d = digests[i];
            let rank = d.config.get("rank")?.parse::<u32>().ok()?;
            Some((i, rank, d.timeline_peak_bytes))
        })
        .collect()
}

impl RankStrip {
    /// The strip of runs given as (run index, rank, peak bytes), when they hold two ranks or more.
    /// A rank with several runs stands by its highest peak (the first on a tie); `runs` holds the
    /// run indices given.
    pub fn of(ranked: &[(usize, u32, u64)]) -> Option<RankStrip> {
        let mut by_rank: BTreeMap<u32, (u64, usize)> = BTreeMap::new();
        for &(i, rank, peak) in ranked {
            let best = by_rank.entry(rank).or_insert((peak, i));
            if peak > best.0 {
                *best = (peak, i);
            }
        }
        if by_rank.len() < 2 {
            return None;
        }
        let peaks: Vec<(u32, u64)> = by_rank.iter().map(|(&r, &(b, _))| (r, b)).collect();
        let runs: Vec<usize> = by_rank.values().map(|&(_, i)| i).collect();
        let n = peaks.len() as f64;
        let mean_bytes = peaks.iter().map(|&(_, b)| b as f64).sum::<f64>() / n;
        let max_bytes = peaks.iter().map(|&(_, b)| b).max().unwrap_or(0);
        let mut sorted: Vec<u64> = peaks.iter().map(|&(_, b)| b).collect();
        sorted.sort_unstable();
        let mid = sorted.len() / 2;
        let median = if sorted.len().is_multiple_of(2) {
            (sorted[mid - 1] as f64 + sorted[mid] as f64) / 2.0
        } else {
            sorted[mid] as f64
        };
        let distances: Vec<(u32, f64)> = peaks
            .iter()
            .map(|&(r, b)| (r, (b as f64 - median).abs()))
            .collect();
        let (far_rank, far) =
            distances
                .iter()
                .copied()
                .fold((0, -1.0), |best, x| if x.1 > best.1 { x } else { best });
        // A rank is out of line only when it alone is farthest: of two ranks, or two far on either
        // side, none is named (the imbalance still says how far apart they are).
        let alone = distances.iter().filter(|&&(_, d)| d == far).count() == 1;
        Some(RankStrip {
            mean_bytes,
            max_bytes,
            imbalance: if mean_bytes > 0.0 {
                max_bytes as f64 / mean_bytes
            } else {
                1.0
            },
            outlier: (alone && median > 0.0 && far > median * OUTLIER_SHARE).then_some(far_rank),
            peaks,
            runs,
        })
    }
}

/// A digest of `file` with only its peak and most reserved, config from its name (for tests).
#[cfg(test)]
pub(crate) fn test_digest(file: &str, peak: u64, reserved: u64) -> Digest {
    Digest {
        file: file.into(),
        file_bytes: 0,
        device: 0,
        default_device: true,
        timeline_peak_bytes: peak,
        peak_event_index: 0,
        reserved_at_peak_bytes: reserved,
        max_reserved_bytes: reserved,
        components: Vec::new(),
        categories: Vec::new(),
        largest_allocation_bytes: 0,
        allocations: 0,
        entries: 0,
        oom_at: None,
        config: config_from_name(file),
        curve: Curve::default(),
        marks: Vec::new(),
        live_entry: None,
        live_set: Node {
            frame: None,
            bytes: peak,
            count: 1,
            children: Vec::new(),
            allocations: Vec::new(),
        },
        sites: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_wider_than_the_terminal_comes_in_blocks_led_by_the_names() {
        let table = Table {
            header: ["file", "peak", "reserved", "parameters", "OOM"]
                .map(String::from)
                .to_vec(),
            rows: vec![
                ["a.pickle", "1.0 GiB", "2.0 GiB", "0 B", "OOM"]
                    .map(String::from)
                    .to_vec(),
                ["bb.pickle", "10.0 GiB", "12.0 GiB", "0 B", ""]
                    .map(String::from)
                    .to_vec(),
            ],
            numeric: vec![false, true, true, true, false],
        };
        assert_eq!(table.columns_all("0 B"), [3]);
        assert_eq!(Table::default().columns_all("0 B"), Vec::<usize>::new());
        assert_eq!(
            zero_columns(&table),
            (vec![3], Some("0 B in every run: parameters".to_string()))
        );
        assert_eq!(zero_columns(&Table::default()), (vec![], None));
        let one = Table {
            rows: table.rows[..1].to_vec(),
            ..table.clone()
        };
        assert_eq!(
            zero_columns(&one),
            (vec![3], Some("0 B in this run: parameters".to_string()))
        );
        let kept = table.columns(|k| k != 3);
        assert_eq!(kept.header, ["file", "peak", "reserved", "OOM"]);
        assert_eq!(kept.numeric, [false, true, true, false]);
        assert_eq!(kept.rows[1], ["bb.pickle", "10.0 GiB", "12.0 GiB", ""]);
        // Wide enough: the one table as it is.
        assert_eq!(table.text_within(200), table.text());
        // 40 characters: two blocks, the names leading each.
        assert_eq!(
            table.text_within(40),
            "file           peak  reserved\n\
             a.pickle    1.0 GiB   2.0 GiB\n\
             bb.pickle  10.0 GiB  12.0 GiB\n\
             \n\
             file       parameters  OOM\n\
             a.pickle          0 B  OOM\n\
             bb.pickle         0 B\n"
        );
        // Narrower than any column beside the names: a column each.
        assert_eq!(table.text_within(5).matches("file").count(), 4);
    }

    #[test]
    fn the_folder_runs_share_is_shown_once() {
        assert_eq!(
            common_folder(["runs/ctx128/rank0.pickle", "runs/ctx128/rank1.pickle"]),
            "runs/ctx128/"
        );
        // Up to the last `/` both have: a shared start of a file name is not a folder.
        assert_eq!(
            common_folder(["runs/ctx128/a.pickle", "runs/ctx256/a.pickle"]),
            "runs/"
        );
        assert_eq!(common_folder(["rank0.pickle", "rank1.pickle"]), "");
        assert_eq!(common_folder(["a/x.pickle", "b/x.pickle"]), "");
        assert_eq!(common_folder(["a/x.pickle", "x.pickle"]), "");
        // Paths typed at a Windows prompt part at `\`.
        assert_eq!(
            common_folder([r"runs\ctx128\rank0.pickle", r"runs\ctx128\rank1.pickle"]),
            r"runs\ctx128\"
        );
        assert_eq!(
            common_folder([r"C:\runs\ctx128\a.pickle", r"C:\runs\ctx256\a.pickle"]),
            r"C:\runs\"
        );
        // One run, or none: nothing to factor out.
        assert_eq!(common_folder(["runs/a.pickle"]), "");
        assert_eq!(common_folder([]), "");
        // Multi-byte names are cut at a `/`, never inside a character.
        assert_eq!(
            common_folder(["läufe/é/a.pickle", "läufe/é/b.pickle", "läufe/è/c.pickle"]),
            "läufe/"
        );
        assert_eq!(
            within("runs/ctx128/rank0.pickle", "runs/ctx128/"),
            "rank0.pickle"
        );
        assert_eq!(within("other/rank0.pickle", "runs/"), "other/rank0.pickle");
    }

    fn node(frame: &str, bytes: u64, children: Vec<Node>) -> Node {
        Node {
            frame: (!frame.is_empty()).then(|| frame.to_string()),
            bytes,
            count: 1,
            children,
            allocations: Vec::new(),
        }
    }

    #[test]
    fn config_comes_from_common_spellings() {
        let c = config_from_name("memory_ctx512_bs8_bf16_forward.pickle");
        assert_eq!(c["ctx"], "512");
        assert_eq!(c["bs"], "8");
        assert_eq!(c["dtype"], "bf16");
        assert_eq!(c["phase"], "forward");
        let c = config_from_name("runs/rank3_memory_snapshot_iter2.pickle.gz");
        assert_eq!((c["rank"].as_str(), c["iter"].as_str()), ("3", "2"));
        let c = config_from_name("gpt2-2.7B_lbs6_fp32_iteration_05_training.pkl");
        assert_eq!(c["model"], "2.7B");
        assert_eq!(c["lbs"], "6");
        assert_eq!(c["iter"], "5");
        assert_eq!(c["phase"], "training");
        assert!(!c.contains_key("bs"), "lbs is not bs: {c:?}");
        let c = config_from_name("memory_trace_rank0_tp2_pp4_dp1.json");
        assert_eq!(
            (c["tp"].as_str(), c["pp"].as_str(), c["dp"].as_str()),
            ("2", "4", "1")
        );
        assert!(config_from_name("snapshot.pickle").is_empty());
        let c = config_from_name("memograph_snapshots/rank2_peak_37.pickle");
        assert_eq!((c["rank"].as_str(), c["step"].as_str()), ("2", "37"));
        assert!(config_from_name("cs_memory_snapshot.pickle").is_empty());
    }

    #[test]
    fn diff_adds_up_and_marks_new_and_vanished_paths() {
        let a = node(
            "",
            100,
            vec![node(
                "train",
                100,
                vec![node("fwd", 60, vec![]), node("old", 40, vec![])],
            )],
        );
        let b = node(
            "",
            250,
            vec![
                node("train", 200, vec![node("fwd", 200, vec![])]),
                node("cache", 50, vec![]),
            ],
        );
        let d = diff(&a, &b);
        assert_eq!((d.a_bytes, d.b_bytes, d.delta_bytes), (100, 250, 150));
        assert_eq!(d.children[0].frame.as_deref(), Some("train"));
        assert_eq!(d.children[1].presence, Presence::New);
        let train = &d.children[0];
        assert_eq!(train.children[0].frame.as_deref(), Some("fwd"));
        assert_eq!(train.children[0].delta_bytes, 140);
        assert_eq!(train.children[1].presence, Presence::Vanished);
        assert_eq!(train.children[1].delta_bytes, -40);
        let sum: i64 = d.children.iter().map(|c| c.delta_bytes).sum();
        assert_eq!(sum, d.delta_bytes);
    }

    #[test]
    fn the_rank_out_of_line_is_named() {
        let digest = |rank: u32, peak: u64| test_digest(&format!("rank{rank}.pickle"), peak, 0);
        let even: Vec<Digest> = (0..8).map(|r| digest(r, 1000)).collect();
        let strip = ranks(&even.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!((strip.outlier, strip.imbalance), (None, 1.0));
        let mut odd = even.clone();
        odd[5] = digest(5, 1400);
        let strip = ranks(&odd.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(strip.outlier, Some(5));
        assert!((strip.imbalance - 1400.0 / 1050.0).abs() < 1e-9);
        assert_eq!(peak_rows(&odd, 0)[5].delta_bytes, 400);
        // Two ranks, or two far on either side of the rest: no one rank is out of line.
        let two = [digest(0, 850), digest(1, 1315)];
        let strip = ranks(&two.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(strip.outlier, None);
        assert!((strip.imbalance - 1315.0 / 1082.5).abs() < 1e-9);
        let mut both = even.clone();
        both[2] = digest(2, 600);
        both[6] = digest(6, 1400);
        assert_eq!(
            ranks(&both.iter().collect::<Vec<_>>()).unwrap().outlier,
            None
        );
        // One of them farther: that one.
        both[6] = digest(6, 1500);
        assert_eq!(
            ranks(&both.iter().collect::<Vec<_>>()).unwrap().outlier,
            Some(6)
        );
        // Several runs of a rank (capture's exit, peak and step snapshots): its highest peak stands.
        let runs = [
            test_digest("rank0_step_100.pickle", 900, 0),
            test_digest("rank1_step_100.pickle", 950, 0),
            test_digest("rank0_peak_150.pickle", 1200, 0),
            test_digest("rank1_exit_300.pickle", 1000, 0),
            test_digest("rank0_exit_300.pickle", 1100, 0),
        ];
        let strip = ranks(&runs.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(strip.peaks, [(0, 1200), (1, 1000)]);
        assert_eq!(strip.runs, [2, 3]);
        assert_eq!(
            strip.describe(),
            "2 ranks · mean 1.1 KiB · max 1.2 KiB · imbalance ×1.09"
        );
    }

    /// The labels of the rank sets of `runs`.
    fn labels_of(runs: &[Digest]) -> Vec<String> {
        rank_sets(&runs.iter().collect::<Vec<_>>())
            .into_iter()
            .map(|s| s.label)
            .collect()
    }

    #[test]
    fn each_job_gets_its_own_rank_strip() {
        let runs = [
            test_digest("sweep/bs8_rank0.pickle", 800, 0),
            test_digest("sweep/bs8_rank1.pickle", 1200, 0),
            test_digest("sweep/bs16_rank0.pickle", 1600, 0),
            test_digest("sweep/bs16_rank1.pickle", 1600, 0),
            test_digest("sweep/bs16_rank2.pickle", 2400, 0),
            test_digest("sweep/notes_snapshot.pickle", 5, 0),
        ];
        let sets = rank_sets(&runs.iter().collect::<Vec<_>>());
        let labels: Vec<&str> = sets.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["bs 8", "bs 16"]);
        assert_eq!(sets[0].strip.peaks, [(0, 800), (1, 1200)]);
        // Indices into the runs given.
        assert_eq!(sets[1].strip.runs, [2, 3, 4]);
        assert_eq!(sets[1].strip.outlier, Some(2));
        // Two runs' folders, their ranks at several steps: a set per folder, steps kept together.
        let runs = [
            test_digest("run_a/rank0_exit_10.pickle", 850, 0),
            test_digest("run_b/rank0_exit_10.pickle", 1315, 0),
            test_digest("run_b/rank1_peak_7.pickle", 850, 0),
            test_digest("run_b/rank1_exit_10.pickle", 800, 0),
        ];
        let sets = rank_sets(&runs.iter().collect::<Vec<_>>());
        assert_eq!(sets.len(), 1, "run_a has one rank: no strip");
        assert_eq!(
            sets[0].label, "run_b",
            "named: run_a's rank is compared beside it"
        );
        assert_eq!(sets[0].strip.peaks, [(0, 1315), (1, 850)]);
        assert_eq!(sets[0].strip.runs, [1, 2]);
        let both = [
            runs[0].clone(),
            test_digest("run_a/rank1_exit_10.pickle", 900, 0),
            runs[1].clone(),
            runs[2].clone(),
        ];
        assert_eq!(labels_of(&both), ["run_a", "run_b"]);
        // Folders of the same name in two places are told apart by where they part.
        let twins = [
            test_digest("/x/a/run/rank0.pickle", 1, 0),
            test_digest("/x/a/run/rank1.pickle", 1, 0),
            test_digest("/x/b/run/rank0.pickle", 1, 0),
            test_digest("/x/b/run/rank1.pickle", 1, 0),
            test_digest("/x/rank0.pickle", 1, 0),
            test_digest("/x/rank1.pickle", 1, 0),
        ];
        assert_eq!(labels_of(&twins), ["a/run", "b/run", "x"]);
    }
}
