//! What a share link carries: the view on screen, as the URL's hash (`#view=timeline&device=0&…`). The
//! address bar follows the view; opening a link (with `?url=`, or opening the same file) restores it.

/// The view state a link restores. Every field is optional: a link restores what it names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewState {
    /// The file the view is of (its name and size), to restore only on that file.
    pub file: Option<(String, u64)>,
    pub device: Option<i64>,
    /// A view's key (`timeline`, `analysis`, `compare`, …).
    pub view: Option<String>,
    /// The visible range of trace entries and the byte axis's top.
    pub range: Option<(f64, f64, f64)>,
    /// The detail slider, 0–1.
    pub detail: Option<f64>,
    pub by_category: bool,
    /// The pinned allocation by MemoryViz's name (`b7f3a…_3`).
    pub pinned: Option<String>,
    /// The highlighted category's name.
    pub category: Option<String>,
    /// The entry the analysis panels describe.
    pub entry: Option<i64>,
    /// The Compare view's baseline (file name and device).
    pub baseline: Option<(String, i64)>,
    /// A hash of the file's first MiB ([`HeadHash`]): the same file under another name still matches.
    pub head: Option<String>,
    /// The search in force (its text).
    pub search: Option<String>,
    /// The highlighted node of the live-set tree (frames, outermost first), at `entry`.
    pub path: Option<Vec<String>>,
    /// Whether the live-set tree hides framework frames (its paths depend on it); unset: hidden.
    pub hide_framework: Option<bool>,
    /// The compared runs (file name and size), in their order.
    pub runs: Vec<(String, u64)>,
    /// The GPU memory the compared runs are held against, in bytes.
    pub gpu_memory: Option<u64>,
    /// The Steps view's part (its step-record files and choices), when step records are open.
    pub steps: Option<StepsState>,
}

/// What a link carries of the Steps view. Step files are named, not sized: capture's
/// `rank*_steps.jsonl` grows by a line each step, and the link is still for it after it grew.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepsState {
    /// The step-record files (their names), in the order they were read.
    pub files: Vec<String>,
    /// The baseline run: its file and rank.
    pub baseline: Option<(String, Option<u32>)>,
    /// Peak reserved per step instead of peak allocated.
    pub reserved: bool,
    /// Theoretical memory drawn.
    pub theoretical: bool,
}

impl StepsState {
    /// Whether every file the link names is among `read` (the step files open).
    pub fn is_among(&self, read: &[String]) -> bool {
        self.files.iter().all(|f| read.contains(f))
    }
}

/// A file's identity beside its name and size: FNV-1a (64 bits) of its first MiB (of all of it when
/// shorter), as 16 hex digits. Fed the file's pieces as a load reads them ([`Self::add`] each in turn);
/// what follows the first MiB is ignored.
#[derive(Clone, Debug)]
pub struct HeadHash {
    h: u64,
    seen: usize,
}

impl Default for HeadHash {
    fn default() -> Self {
        HeadHash {
            h: 0xcbf2_9ce4_8422_2325,
            seen: 0,
        }
    }
}

impl HeadHash {
    /// How many more bytes it reads.
    pub fn wants(&self) -> usize {
        HEAD_BYTES - self.seen
    }

    pub fn add(&mut self, bytes: &[u8]) {
        let bytes = &bytes[..bytes.len().min(self.wants())];
        for &b in bytes {
            self.h ^= u64::from(b);
            self.h = self.h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.seen += bytes.len();
    }

    pub fn finish(&self) -> String {
        format!("{:016x}", self.h)
    }
}

/// How much of a file [`HeadHash`] reads.
pub const HEAD_BYTES: usize = 1 << 20;

impl ViewState {
    /// Whether a file opened as `name`, `size` bytes, whose first MiB hashes to `head`, is the link's
    /// file: the same size, and the same first MiB when both are known (a renamed copy matches),
    /// else the same name. A link that names no file matches any.
    pub fn is_for(&self, name: &str, size: u64, head: Option<&str>) -> bool {
        let Some((want, want_size)) = &self.file else {
            return true;
        };
        if *want_size != 0 && *want_size != size {
            return false;
        }
        match (self.head.as_deref(), head) {
            (Some(a), Some(b)) => a == b,
            _ => want == name,
        }
    }
}

/// The name a file downloaded from `url` (a link's `?url=`) goes by: the last segment of its path,
/// `%`-escapes undone, without the query or fragment (`…/run%201.pickle?download=true` is
/// `run 1.pickle`); the URL itself when its path ends in no name.
pub fn name_from_url(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let name = unescape(path.rsplit('/').next().unwrap_or(path));
    if name.trim().is_empty() {
        url.to_string()
    } else {
        name
    }
}

/// `%`-escapes what a hash value cannot hold as it is.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~:/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl ViewState {
    /// The hash, `#` included (empty when nothing is to be said).
    pub fn to_hash(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut put = |k: &str, v: String| parts.push(format!("{k}={}", escape(&v)));
        if let Some((name, size)) = &self.file {
            put("file", name.clone());
            put("size", size.to_string());
        }
        if let Some(v) = &self.view {
            put("view", v.clone());
        }
        if let Some(d) = self.device {
            put("device", d.to_string());
        }
        if let Some((x0, x1, y)) = self.range {
            put("range", format!("{x0:.1}_{x1:.1}_{y:.0}"));
        }
        if let Some(d) = self.detail {
            put("detail", format!("{:.0}", d * 100.0));
        }
        if self.by_category {
            put("bycat", "1".into());
        }
        if let Some(p) = &self.pinned {
            put("pin", p.clone());
        }
        if let Some(c) = &self.category {
            put("cat", c.clone());
        }
        if let Some(e) = self.entry {
            put("entry", e.to_string());
        }
        if let Some((f, d)) = &self.baseline {
            put("base", f.clone());
            put("basedev", d.to_string());
        }
        if let Some(h) = &self.head {
            put("head", h.clone());
        }
        if let Some(q) = &self.search {
            put("find", q.clone());
        }
        if let Some(p) = &self.path {
            put("path", p.join("\n"));
        }
        if let Some(h) = self.hide_framework {
            put("hidefw", if h { "1" } else { "0" }.into());
        }
        if !self.runs.is_empty() {
            let runs: Vec<String> = self.runs.iter().map(|(n, s)| format!("{s}:{n}")).collect();
            put("runs", runs.join("\n"));
        }
        if let Some(b) = self.gpu_memory {
            put("gpu", b.to_string());
        }
        if let Some(st) = &self.steps {
            put("steps", st.files.join("\n"));
            if let Some((file, rank)) = &st.baseline {
                put("sbase", file.clone());
                if let Some(r) = rank {
                    put("srank", r.to_string());
                }
            }
            if st.reserved {
                put("sres", "1".into());
            }
            if st.theoretical {
                put("stheo", "1".into());
            }
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("#{}", parts.join("&"))
        }
    }

    /// Reads a hash (`#…` or without the `#`); what it does not say stays unset.
    pub fn from_hash(hash: &str) -> ViewState {
        let mut v = ViewState::default();
        let mut size = None;
        let mut base_dev = None;
        let mut steps = StepsState::default();
        let mut steps_rank = None;
        for pair in hash.trim_start_matches('#').split('&') {
            let Some((k, raw)) = pair.split_once('=') else {
                continue;
            };
            let val = unescape(raw);
            match k {
                "file" => v.file = Some((val, 0)),
                "size" => size = val.parse().ok(),
                "view" => v.view = Some(val),
                "device" => v.device = val.parse().ok(),
                "range" => {
                    let n: Vec<f64> = val.split('_').filter_map(|x| x.parse().ok()).collect();
                    // A view the page can draw: a hand-edited or garbled link (`NaN`, an end before
                    // its start) once stopped the page.
                    if let [x0, x1, y] = n[..] {
                        let drawable =
                            [x0, x1, y].iter().all(|n| n.is_finite()) && x0 < x1 && y > 0.0;
                        v.range = drawable.then_some((x0, x1, y));
                    }
                }
                "detail" => {
                    let d = val.parse::<f64>().ok().filter(|d| !d.is_nan());
                    v.detail = d.map(|d| (d / 100.0).clamp(0.0, 1.0))
                }
                "bycat" => v.by_category = val == "1",
                "pin" => v.pinned = Some(val),
                "cat" => v.category = Some(val),
                "entry" => v.entry = val.parse().ok(),
                "base" => v.baseline = Some((val, 0)),
                "basedev" => base_dev = val.parse().ok(),
                "head" => v.head = Some(val),
                "find" => v.search = Some(val),
                "path" => v.path = Some(val.split('\n').map(str::to_string).collect()),
                "hidefw" => v.hide_framework = Some(val != "0"),
                "gpu" => v.gpu_memory = val.parse().ok().filter(|&b| b > 0),
                "steps" => {
                    steps.files = val
                        .split('\n')
                        .filter(|f| !f.is_empty())
                        .map(str::to_string)
                        .collect()
                }
                "sbase" => steps.baseline = Some((val, None)),
                "srank" => steps_rank = val.parse().ok(),
                "sres" => steps.reserved = val == "1",
                "stheo" => steps.theoretical = val == "1",
                "runs" => {
                    v.runs = val
                        .split('\n')
                        .filter_map(|r| {
                            let (size, name) = r.split_once(':')?;
                            Some((name.to_string(), size.parse().ok()?))
                        })
                        .collect()
                }
                _ => {}
            }
        }
        if let (Some(f), Some(s)) = (v.file.as_mut(), size) {
            f.1 = s;
        }
        if let (Some(b), Some(d)) = (v.baseline.as_mut(), base_dev) {
            b.1 = d;
        }
        if let Some((_, rank)) = steps.baseline.as_mut() {
            *rank = steps_rank;
        }
        // Choices without files to show them on are no Steps view.
        if !steps.files.is_empty() {
            v.steps = Some(steps);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_hash(bytes: &[u8]) -> String {
        let mut h = HeadHash::default();
        h.add(bytes);
        h.finish()
    }

    #[test]
    fn a_file_matches_by_size_and_first_mib_or_else_by_name() {
        let link = ViewState {
            file: Some(("a.pickle".into(), 100)),
            head: Some("00ff".into()),
            ..ViewState::default()
        };
        assert!(link.is_for("renamed.pickle", 100, Some("00ff")));
        assert!(!link.is_for("a.pickle", 100, Some("0100")));
        assert!(!link.is_for("a.pickle", 101, Some("00ff")));
        assert!(link.is_for("a.pickle", 100, None));
        let old = ViewState {
            file: Some(("a.pickle".into(), 100)),
            ..ViewState::default()
        };
        assert!(old.is_for("a.pickle", 100, Some("00ff")));
        assert!(!old.is_for("b.pickle", 100, Some("00ff")));
        assert!(ViewState::default().is_for("any", 1, None));
    }

    #[test]
    fn a_downloaded_file_is_named_by_the_last_segment_of_its_path() {
        let cases = [
            ("https://h.org/runs/rank0.pickle", "rank0.pickle"),
            (
                "https://h.org/a/run%201.pickle?download=true",
                "run 1.pickle",
            ),
            ("snap.pickle.gz#x", "snap.pickle.gz"),
            ("https://h.org/", "https://h.org/"),
            (
                "https://h.org/?file=a.pickle",
                "https://h.org/?file=a.pickle",
            ),
        ];
        for (url, name) in cases {
            assert_eq!(name_from_url(url), name, "{url}");
        }
    }

    #[test]
    fn every_field_round_trips_through_the_hash() {
        let v = ViewState {
            file: Some(("run 1/rank0 snapshot.pickle".into(), 3_221_225)),
            device: Some(1),
            view: Some("analysis".into()),
            range: Some((120.5, 3000.0, 5.5e10)),
            detail: Some(0.35),
            by_category: true,
            pinned: Some("b7f3a2c000000_3".into()),
            category: Some("Optimizer state".into()),
            entry: Some(-1),
            baseline: Some(("a&b=c#.pickle".into(), 0)),
            head: Some(head_hash(b"abc")),
            search: Some(">100MB & x".into()),
            path: Some(vec!["train.py:10:main".into(), "model.py:7:forward".into()]),
            hide_framework: Some(false),
            runs: vec![("a:b.pickle".into(), 12), ("c d.pickle".into(), 0)],
            gpu_memory: Some(85_899_345_920),
            steps: Some(StepsState {
                files: vec!["job/rank0_steps.jsonl".into(), "a&b run.json".into()],
                baseline: Some(("job/rank0_steps.jsonl".into(), Some(3))),
                reserved: true,
                theoretical: true,
            }),
        };
        let hash = v.to_hash();
        assert!(
            hash.starts_with("#file=run%201/rank0%20snapshot.pickle&size=3221225&view=analysis"),
            "{hash}"
        );
        assert_eq!(ViewState::from_hash(&hash), v);
        assert_eq!(ViewState::from_hash(""), ViewState::default());
        assert_eq!(ViewState::default().to_hash(), "");
        // FNV-1a's published value for "a".
        assert_eq!(head_hash(b"a"), "af63dc4c8601ec8c");
        // In pieces, as a load reads them: the same, and only the first MiB counts.
        let bytes: Vec<u8> = (0..(HEAD_BYTES + 5000))
            .map(|k| (k * 7 % 251) as u8)
            .collect();
        let mut pieced = HeadHash::default();
        for piece in bytes.chunks(300_007) {
            pieced.add(piece);
        }
        assert_eq!(pieced.finish(), head_hash(&bytes));
        assert_eq!(pieced.wants(), 0);
        assert_ne!(head_hash(&bytes[..HEAD_BYTES - 1]), head_hash(&bytes));
        // Unknown keys and broken values are left alone.
        let v = ViewState::from_hash("#view=state&detail=oops&zz=1&range=1_2");
        assert_eq!(
            (v.view.as_deref(), v.detail, v.range),
            (Some("state"), None, None)
        );
        // Ranges no view can be, and a detail that is no number, are left unset too; a detail past
        // either end is the end.
        for range in [
            "NaN_10_5", "10_inf_5", "500_10_5", "3_3_5", "0_10_0", "0_10_-1", "0_10_NaN",
        ] {
            let v = ViewState::from_hash(&format!("#range={range}&detail=NaN"));
            assert_eq!((v.range, v.detail), (None, None), "{range}");
        }
        let v = ViewState::from_hash("#range=-5_1e300_1e-300&detail=1e400");
        assert_eq!(
            (v.range, v.detail),
            (Some((-5.0, 1e300, 1e-300)), Some(1.0))
        );
    }

    #[test]
    fn a_steps_link_names_its_files_and_waits_for_all_of_them() {
        // Baseline of a run without a rank (a single log), the default choices.
        let v = ViewState {
            view: Some("steps".into()),
            steps: Some(StepsState {
                files: vec!["train.log".into(), "rank0_steps.jsonl".into()],
                baseline: Some(("train.log".into(), None)),
                ..StepsState::default()
            }),
            ..ViewState::default()
        };
        let hash = v.to_hash();
        assert_eq!(
            hash,
            "#view=steps&steps=train.log%0Arank0_steps.jsonl&sbase=train.log"
        );
        assert_eq!(ViewState::from_hash(&hash), v);
        let st = v.steps.unwrap();
        let read = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert!(st.is_among(&read(&["rank0_steps.jsonl", "x.csv", "train.log"])));
        assert!(!st.is_among(&read(&["train.log"])));
        // Choices with no file named are no Steps view; a rank that is no number is none.
        assert_eq!(ViewState::from_hash("#sbase=a&sres=1").steps, None);
        let v = ViewState::from_hash("#steps=a%0A%0A&sbase=a&srank=x");
        assert_eq!(
            v.steps,
            Some(StepsState {
                files: vec!["a".into()],
                baseline: Some(("a".into(), None)),
                ..StepsState::default()
            })
        );
    }
}
