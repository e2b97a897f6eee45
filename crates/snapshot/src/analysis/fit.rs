//! Which runs fit a GPU, and how far a sweep can go. A run fits when the most its allocator ever
//! reserved fits the memory a device gives the process: a figure the user states, or one read off an
//! out-of-memory entry (what PyTorch had reserved then plus what the driver said was free). Runs that
//! differ in one knob of their file names (`ctx`, `bs`, the model's size…, see
//! [`config_from_name`](super::compare::config_from_name)) form a sweep: how their largest
//! reservation grows with the knob, and the largest value a curve through them says would fit. Knobs
//! that split the model across GPUs (`tp`, `pp`, `dp`) shrink it instead: the smallest value that fits.

use std::collections::BTreeMap;

use super::compare::Digest;
use crate::format::{bytes, grouped, parse_size, ratio};

/// A device's memory as typed: `80GiB`, `80 GB`, `81559 MiB` (GB and MB binary, as PyTorch's tools
/// print them), or a bare number of GiB (`80`); `None` when it reads as no size or as zero.
pub fn parse_memory(text: &str) -> Option<u64> {
    let bytes = match parse_size(text) {
        Some((b, true)) => b,
        _ => {
            let gib: f64 = text.trim().parse().ok()?;
            if !(0.0..1.0e9).contains(&gib) {
                return None;
            }
            (gib * (1u64 << 30) as f64).round() as u64
        }
    };
    (bytes > 0).then_some(bytes)
}

/// The memory runs are held against: the one stated, else the least an out-of-memory entry among
/// `digests` tells (see [`usable_from_ooms`]), with the file and device that told it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Limit {
    pub bytes: u64,
    /// `None`: stated; else the run whose out-of-memory entry told it.
    pub from_oom: Option<(String, i64)>,
}

impl Limit {
    pub fn of(stated: Option<u64>, digests: &[&Digest]) -> Option<Limit> {
        match stated {
            Some(bytes) => Some(Limit {
                bytes,
                from_oom: None,
            }),
            None => usable_from_ooms(digests).map(|(bytes, k)| Limit {
                bytes,
                from_oom: Some((digests[k].file.clone(), digests[k].device)),
            }),
        }
    }

    /// `80.0 GiB`, or `79.2 GiB (what run.pickle cuda:0 had when it ran out: reserved + free)`.
    pub fn describe(&self) -> String {
        match &self.from_oom {
            None => bytes(self.bytes),
            Some((file, device)) => format!(
                "{} (what {file} cuda:{device} had when it ran out of memory: reserved + free)",
                bytes(self.bytes)
            ),
        }
    }
}

/// Whether a run fits a device's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The most it reserved fits.
    Fits,
    /// Its peak allocated fits but the most it reserved does not: the difference is cached free
    /// memory in pieces (`expandable_segments:True`, or a smaller cache, may let it fit).
    Fragmented,
    /// Its peak allocated alone is more than the device has.
    TooBig,
    /// It ran out of memory, and what it held then plus what it asked for would fit: what it needs
    /// in all is not known.
    Unknown,
}

impl Verdict {
    /// The word in the peak table's `fits` column.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Fits => "yes",
            Verdict::Fragmented => "if unfragmented",
            Verdict::TooBig => "no",
            Verdict::Unknown => "ran out: unknown",
        }
    }
}

/// A run against a device's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Fit {
    /// The device's memory less the most the run reserved, or for a run that ran out of memory less
    /// the least it needed (what it held then plus what it asked for) where that is more; negative:
    /// over by that much.
    pub headroom_bytes: i64,
    pub verdict: Verdict,
}

/// `d` against `limit` bytes of device memory. A run that ran out of memory never plainly fits: it
/// needed at least what it held then plus what it asked for.
pub fn fit(d: &Digest, limit: u64) -> Fit {
    let needed = d.oom_at.map_or(0, |o| o.bytes.saturating_add(o.requested));
    let headroom_bytes = super::compare::delta(d.max_reserved_bytes.max(needed), limit);
    let verdict = match d.oom_at {
        Some(_) if needed > limit => Verdict::TooBig,
        Some(_) => Verdict::Unknown,
        None if d.max_reserved_bytes <= limit => Verdict::Fits,
        None if d.timeline_peak_bytes <= limit => Verdict::Fragmented,
        None => Verdict::TooBig,
    };
    Fit {
        headroom_bytes,
        verdict,
    }
}

/// The memory the device of `d` gave its process, when its trace ran out of memory and the entry says
/// what was free: reserved then plus free then.
pub fn usable(d: &Digest) -> Option<u64> {
    let o = d.oom_at?;
    Some(o.reserved.saturating_add(o.device_free?))
}

/// The least memory any of `digests` was given (see [`usable`]), and which digest told it.
pub fn usable_from_ooms(digests: &[&Digest]) -> Option<(u64, usize)> {
    digests
        .iter()
        .enumerate()
        .filter_map(|(k, d)| Some((usable(d)?, k)))
        .min()
}

/// The knobs a sweep can vary, in the order they are tried: sizes whose growth memory follows (the
/// model's as a count of parameters, `350M`, `1.3B`).
pub const KNOBS: [&str; 7] = ["ctx", "seq", "bs", "lbs", "mbs", "gbs", "model"];

/// The knobs that split the work across GPUs (tensor, pipeline, data parallel degree): what each
/// GPU holds shrinks as `a + b / x` (the part split `x` ways, and the part every GPU keeps whole; with
/// data parallelism only sharded state splits, ZeRO's or FSDP's).
pub const SPLITS: [&str; 3] = ["tp", "pp", "dp"];

/// A knob's value as a number: digits, or for `model` a size in parameters (`1.3B`, `350M`).
fn knob_value(knob: &str, text: &str) -> Option<u64> {
    if knob != "model" {
        return text.parse().ok();
    }
    let (num, scale) = match text.as_bytes().last()? {
        b'B' | b'b' => (&text[..text.len() - 1], 1e9),
        b'M' | b'm' => (&text[..text.len() - 1], 1e6),
        _ => return None,
    };
    let n: f64 = num.parse().ok()?;
    let v = (n * scale).round();
    (v.is_finite() && (1.0..1e15).contains(&v)).then_some(v as u64)
}

/// A knob's value as the names spell it: `1 024`, or for `model` `1.3B`, `350M`.
fn knob_text(knob: &str, value: u64) -> String {
    if knob != "model" {
        return grouped(value);
    }
    let (v, unit) = if value >= 1_000_000_000 {
        (value as f64 / 1e9, "B")
    } else {
        (value as f64 / 1e6, "M")
    };
    let digits = format!("{v:.2}");
    format!(
        "{}{unit}",
        digits.trim_end_matches('0').trim_end_matches('.')
    )
}

/// Runs that differ in one knob only.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sweep {
    pub knob: String,
    /// What the runs share: the rest of their config, and the device (`None` for a job's ranks).
    pub fixed: BTreeMap<String, String>,
    pub device: Option<i64>,
    /// How many ranks of a job the sweep is the most of (0: the runs of one device).
    pub ranks: usize,
    /// One per value of the knob, by value (the larger reservation where runs share a value, as a
    /// job's ranks do); a value at which a run ran out of memory is left out, its peaks cut short.
    pub points: Vec<SweepPoint>,
    /// Files of the sweep that ran out of memory, with their knob's value.
    pub ran_out: Vec<(u64, String)>,
    /// How the most reserved grows when the knob doubles, on average from the smallest value to the
    /// largest.
    pub per_doubling: Option<f64>,
    pub curve: Growth,
}

/// A run of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SweepPoint {
    pub value: u64,
    pub file: String,
    pub max_reserved_bytes: u64,
    pub peak_bytes: u64,
}

/// The curve through a sweep's largest reservations, bytes as a function of the knob's value:
/// `a + b·x + c·x²` for a knob that grows them (least squares; `c` is 0 unless three values or more
/// bend it upwards), `a + d/x` for one that splits them ([`SPLITS`]; `b` and `c` are 0).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Growth {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
}

impl Growth {
    pub fn at(&self, x: f64) -> f64 {
        let split = if self.d != 0.0 { self.d / x } else { 0.0 };
        self.a + x * (self.b + x * self.c) + split
    }

    pub fn kind(&self) -> &'static str {
        if self.d != 0.0 {
            "inverse"
        } else if self.c > 0.0 {
            "quadratic"
        } else {
            "linear"
        }
    }
}

/// How far a sweep's knob can go in a device's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Reach {
    /// The curve does not grow with the knob: memory sets it no bound.
    Unbounded,
    /// The largest value (a multiple of the step the runs' values share) whose curve fits; beyond the
    /// largest run when `extrapolated`.
    UpTo { value: u64, extrapolated: bool },
    /// For a knob that splits the memory ([`SPLITS`]): the smallest value (a power of two when the
    /// runs' values all are, else a multiple of their step) whose curve fits; outside the runs' values
    /// when `extrapolated`.
    AtLeast { value: u64, extrapolated: bool },
    /// Not even the smallest step fits (or, splitting, no value: what every GPU keeps whole is more).
    Nothing,
}

impl Sweep {
    /// The step the runs' values share (their greatest common divisor; 1 at least).
    fn step(&self) -> u64 {
        self.points.iter().fold(0, |g, p| gcd(g, p.value)).max(1)
    }

    /// Whether the knob splits the memory across GPUs ([`SPLITS`]) rather than growing it.
    pub fn splits(&self) -> bool {
        SPLITS.contains(&self.knob.as_str())
    }

    /// The largest value of the knob whose reservation fits `limit`, by the curve (the smallest, for a
    /// knob that splits it).
    pub fn reach(&self, limit: u64) -> Reach {
        if self.splits() {
            return self.least_that_fits(limit);
        }
        let Growth { a, b, c, .. } = self.curve;
        let limit = limit as f64;
        let x = if c > 0.0 {
            let d = b * b - 4.0 * c * (a - limit);
            if d < 0.0 {
                return Reach::Nothing;
            }
            (-b + d.sqrt()) / (2.0 * c)
        } else if b > 0.0 {
            (limit - a) / b
        } else if self
            .points
            .iter()
            .all(|p| p.max_reserved_bytes as f64 <= limit)
        {
            return Reach::Unbounded;
        } else {
            return Reach::Nothing;
        };
        let step = self.step();
        if !x.is_finite() || x < step as f64 {
            return Reach::Nothing;
        }
        // The curve is fitted to whole bytes: a value it reaches within half a byte counts.
        let value = ((x + 1e-6 * x) / step as f64)
            .floor()
            .min(u64::MAX as f64 / step as f64) as u64;
        let value = value.saturating_mul(step);
        if value == 0 {
            return Reach::Nothing;
        }
        let largest = self.points.last().map_or(0, |p| p.value);
        Reach::UpTo {
            value,
            extrapolated: value > largest,
        }
    }

    /// [`Self::reach`] of a knob that splits: `a + d/x ≤ limit` from `x = d / (limit − a)` on.
    fn least_that_fits(&self, limit: u64) -> Reach {
        let Growth { a, d, .. } = self.curve;
        let limit = limit as f64;
        let all_fit = || {
            self.points
                .iter()
                .all(|p| p.max_reserved_bytes as f64 <= limit)
        };
        if d <= 0.0 {
            // It does not shrink as the knob grows.
            return if all_fit() {
                Reach::Unbounded
            } else {
                Reach::Nothing
            };
        }
        if a >= limit {
            return Reach::Nothing;
        }
        // Fitted to whole bytes: a value it reaches within half a byte counts.
        let x = (d / (limit - a) * (1.0 - 1e-6)).max(1.0);
        if !x.is_finite() || x > u32::MAX as f64 {
            return Reach::Nothing;
        }
        let x = x.ceil() as u64;
        let value = if self.points.iter().all(|p| p.value.is_power_of_two()) {
            x.next_power_of_two()
        } else {
            let step = self.step();
            x.div_ceil(step) * step
        };
        let (first, last) = match (self.points.first(), self.points.last()) {
            (Some(f), Some(l)) => (f.value, l.value),
            _ => return Reach::Nothing,
        };
        Reach::AtLeast {
            value,
            extrapolated: value < first || value > last,
        }
    }

    /// What the sweep says, in a line: `ctx (bf16, training, cuda:0): 128 → 3.1 GiB · 256 → 4.0 GiB;
    /// ×1.45 per doubling; in 79.6 GiB up to ctx 4 608 (extrapolated, quadratic through 3 runs)`.
    pub fn describe(&self, limit: Option<u64>) -> String {
        // Words (`bf16`, `training`) say what they are; numbers are named (`bs 8`, `rank 0`).
        let mut shared: Vec<String> = self
            .fixed
            .iter()
            .map(|(k, v)| {
                if v.bytes().all(|b| b.is_ascii_digit()) {
                    format!("{k} {v}")
                } else {
                    v.clone()
                }
            })
            .collect();
        shared.push(match self.device {
            Some(device) => format!("cuda:{device}"),
            None => format!("the most of {} ranks", self.ranks),
        });
        let points: Vec<String> = self
            .points
            .iter()
            .map(|p| {
                format!(
                    "{} → {}",
                    knob_text(&self.knob, p.value),
                    bytes(p.max_reserved_bytes)
                )
            })
            .collect();
        let mut text = format!(
            "{} ({}): {} reserved at most",
            self.knob,
            shared.join(", "),
            points.join(" · ")
        );
        if let Some(g) = self.per_doubling {
            text.push_str(&format!("; {} per doubling", ratio(g)));
        }
        if let Some(limit) = limit {
            let kind = match self.splits() {
                true => format!("as 1/{}", self.knob),
                false => self.curve.kind().to_string(),
            };
            let how = format!("{kind} through {} runs", self.points.len());
            let (grows, none) = match self.splits() {
                true => ("shrink", "no"),
                false => ("grow", "not even the smallest"),
            };
            text.push_str(&match self.reach(limit) {
                Reach::Unbounded => {
                    format!(
                        "; in {} any {} (it does not {grows})",
                        bytes(limit),
                        self.knob
                    )
                }
                Reach::Nothing => format!("; in {} {none} {} ({how})", bytes(limit), self.knob),
                Reach::AtLeast {
                    value,
                    extrapolated,
                } => format!(
                    "; in {} from {} {} on ({}{how})",
                    bytes(limit),
                    self.knob,
                    knob_text(&self.knob, value),
                    if extrapolated { "extrapolated, " } else { "" }
                ),
                Reach::UpTo {
                    value,
                    extrapolated,
                } => format!(
                    "; in {} up to {} {} ({}{how})",
                    bytes(limit),
                    self.knob,
                    knob_text(&self.knob, value),
                    if extrapolated { "extrapolated, " } else { "" }
                ),
            });
        }
        for (value, file) in &self.ran_out {
            text.push_str(&format!(
                "; {} {} ran out of memory ({file})",
                self.knob,
                knob_text(&self.knob, *value)
            ));
        }
        text
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The sweeps among `digests`: for each knob, the runs whose configs differ in that knob alone, when
/// they hold two values of it or more (runs that ran out of memory aside). Runs of one device make a
/// sweep; a job's ranks (the same config, several `rank`s) make one, of the most any rank reserved at
/// each value, since a config fits only when every rank does.
pub fn sweeps(digests: &[&Digest]) -> Vec<Sweep> {
    let mut out = Vec::new();
    for knob in KNOBS.into_iter().chain(SPLITS) {
        let splits = SPLITS.contains(&knob);
        // The runs by the rest of their config, their ranks aside.
        let mut jobs: BTreeMap<BTreeMap<String, String>, Vec<(u64, &Digest)>> = BTreeMap::new();
        for d in digests {
            let value = d.config.get(knob).and_then(|v| knob_value(knob, v));
            // Split no ways is no run of a split.
            let Some(value) = value.filter(|&v| v > 0 || !splits) else {
                continue;
            };
            let mut rest = d.config.clone();
            rest.remove(knob);
            rest.remove("rank");
            jobs.entry(rest).or_default().push((value, d));
        }
        for (rest, runs) in jobs {
            let ranks: std::collections::BTreeSet<Option<&String>> =
                runs.iter().map(|(_, d)| d.config.get("rank")).collect();
            if ranks.len() > 1 {
                out.extend(sweep_of(knob, rest, None, ranks.len(), &runs));
                continue;
            }
            let mut fixed = rest;
            if let Some(Some(rank)) = ranks.first() {
                fixed.insert("rank".into(), rank.to_string());
            }
            let mut by_device: BTreeMap<i64, Vec<(u64, &Digest)>> = BTreeMap::new();
            for (value, d) in runs {
                by_device.entry(d.device).or_default().push((value, d));
            }
            for (device, runs) in by_device {
                out.extend(sweep_of(knob, fixed.clone(), Some(device), 0, &runs));
            }
        }
    }
    out
}

/// The sweep of `knob` through `runs` (value, digest), on `device` or over `ranks` ranks; `None` with
/// fewer than two values fitted.
fn sweep_of(
    knob: &str,
    fixed: BTreeMap<String, String>,
    device: Option<i64>,
    ranks: usize,
    runs: &[(u64, &Digest)],
) -> Option<Sweep> {
    let mut by_value: BTreeMap<u64, SweepPoint> = BTreeMap::new();
    let mut ran_out = Vec::new();
    for &(value, d) in runs {
        if d.oom() {
            ran_out.push((value, d.file.clone()));
            continue;
        }
        let point = SweepPoint {
            value,
            file: d.file.clone(),
            max_reserved_bytes: d.max_reserved_bytes,
            peak_bytes: d.timeline_peak_bytes,
        };
        by_value
            .entry(value)
            .and_modify(|p| {
                if point.max_reserved_bytes > p.max_reserved_bytes {
                    *p = point.clone();
                }
            })
            .or_insert(point);
    }
    // A value at which a run (a rank) ran out of memory does not fit, whatever the others reserved.
    for (value, _) in &ran_out {
        by_value.remove(value);
    }
    if by_value.len() < 2 || by_value.keys().all(|&v| v == 0) {
        return None;
    }
    let points: Vec<SweepPoint> = by_value.into_values().collect();
    ran_out.sort();
    Some(Sweep {
        knob: knob.to_string(),
        fixed,
        device,
        ranks,
        per_doubling: per_doubling(&points),
        curve: match SPLITS.contains(&knob) {
            true => split_growth(&points),
            false => growth(&points),
        },
        points,
        ran_out,
    })
}

/// The growth factor per doubling from the smallest nonzero value to the largest.
fn per_doubling(points: &[SweepPoint]) -> Option<f64> {
    let first = points
        .iter()
        .find(|p| p.value > 0 && p.max_reserved_bytes > 0)?;
    let last = points.last()?;
    let doublings = (last.value as f64 / first.value as f64).log2();
    (doublings > 0.0 && last.max_reserved_bytes > 0).then(|| {
        (last.max_reserved_bytes as f64 / first.max_reserved_bytes as f64).powf(1.0 / doublings)
    })
}

/// Least squares through the points: a parabola when there are three values or more and it bends
/// upwards, else a line (two points: the line through them).
fn growth(points: &[SweepPoint]) -> Growth {
    // x is scaled to the largest value so the normal equations stay well conditioned.
    let scale = points.iter().map(|p| p.value).max().unwrap_or(1).max(1) as f64;
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.value as f64 / scale, p.max_reserved_bytes as f64))
        .collect();
    let y_max = xy.iter().map(|p| p.1).fold(0.0, f64::max);
    if xy.len() >= 3 {
        if let Some([a, b, c]) = least_squares::<3>(&xy) {
            // A bend of rounding's size (points on a line) is none.
            if c > 1e-9 * y_max {
                return Growth {
                    a,
                    b: b / scale,
                    c: c / (scale * scale),
                    d: 0.0,
                };
            }
        }
    }
    match least_squares::<2>(&xy) {
        Some([a, b]) => Growth {
            a,
            b: b / scale,
            c: 0.0,
            d: 0.0,
        },
        None => Growth {
            a: xy.first().map_or(0.0, |p| p.1),
            b: 0.0,
            c: 0.0,
            d: 0.0,
        },
    }
}

/// Least squares of `a + d/x` through the points of a knob that splits the memory (a line in `1/x`).
fn split_growth(points: &[SweepPoint]) -> Growth {
    // 1/x is scaled to its largest (the smallest value's) so the normal equations stay well conditioned.
    let least = points.iter().map(|p| p.value).min().unwrap_or(1).max(1) as f64;
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (least / p.value.max(1) as f64, p.max_reserved_bytes as f64))
        .collect();
    let y_max = xy.iter().map(|p| p.1).fold(0.0, f64::max);
    let mean = xy.iter().map(|p| p.1).sum::<f64>() / xy.len().max(1) as f64;
    let (a, d) = match least_squares::<2>(&xy) {
        // A split of rounding's size (the same bytes at every value) is none.
        Some([_, d]) if d.abs() <= 1e-9 * y_max => (mean, 0.0),
        Some([a, d]) => (a, d * least),
        None => (mean, 0.0),
    };
    Growth {
        a,
        b: 0.0,
        c: 0.0,
        d,
    }
}

/// The polynomial of `N` coefficients (lowest power first) nearest the points in least squares, by
/// Gaussian elimination on the normal equations; `None` when they are singular.
fn least_squares<const N: usize>(xy: &[(f64, f64)]) -> Option<[f64; N]> {
    let mut m = [[0.0f64; N]; N];
    let mut v = [0.0f64; N];
    for &(x, y) in xy {
        let powers: [f64; N] = std::array::from_fn(|k| x.powi(k as i32));
        for i in 0..N {
            v[i] += powers[i] * y;
            for j in 0..N {
                m[i][j] += powers[i] * powers[j];
            }
        }
    }
    for col in 0..N {
        let pivot = (col..N).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        v.swap(col, pivot);
        let (pivot_row, pivot_v) = (m[col], v[col]);
        for row in (0..N).filter(|&r| r != col) {
            let f = m[row][col] / pivot_row[col];
            for (x, p) in m[row].iter_mut().zip(pivot_row).skip(col) {
                *x -= f * p;
            }
            v[row] -= f * pivot_v;
        }
    }
    Some(std::array::from_fn(|i| v[i] / m[i][i]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::{test_digest as run, OomPoint};

    const GIB: u64 = 1 << 30;

    fn ran_out(mut d: Digest, live: u64, requested: u64, free: Option<u64>) -> Digest {
        d.oom_at = Some(OomPoint {
            entry: 5,
            time_us: None,
            bytes: live,
            requested,
            device_free: free,
            reserved: d.max_reserved_bytes,
        });
        d
    }

    #[test]
    fn device_memory_reads_as_typed() {
        assert_eq!(parse_memory("80"), Some(80 * GIB));
        assert_eq!(parse_memory(" 80 GiB "), Some(80 * GIB));
        assert_eq!(parse_memory("80GB"), Some(80 * GIB));
        assert_eq!(parse_memory("81559 MiB"), Some(81_559 << 20));
        assert_eq!(parse_memory("79.5"), Some(79 * GIB + GIB / 2));
        for bad in ["", "0", "-8", "eighty", "80 parsecs", "nan"] {
            assert_eq!(parse_memory(bad), None, "{bad:?}");
        }
        let d = ran_out(run("a.pickle", GIB, 30 * GIB), GIB, GIB, Some(9 * GIB));
        let limit = Limit::of(None, &[&d]).unwrap();
        assert_eq!(limit.bytes, 39 * GIB);
        assert_eq!(
            limit.describe(),
            "39.0 GiB (what a.pickle cuda:0 had when it ran out of memory: reserved + free)"
        );
        assert_eq!(Limit::of(Some(GIB), &[&d]).unwrap().describe(), "1.0 GiB");
        assert_eq!(Limit::of(None, &[]), None);
    }

    #[test]
    fn a_run_fits_when_the_most_it_reserved_does() {
        let d = run("a.pickle", 60 * GIB, 70 * GIB);
        assert_eq!(
            fit(&d, 80 * GIB),
            Fit {
                headroom_bytes: 10 * GIB as i64,
                verdict: Verdict::Fits
            }
        );
        // Reserved is over, allocated under: the cache's free pieces made the difference.
        assert_eq!(fit(&d, 65 * GIB).verdict, Verdict::Fragmented);
        assert_eq!(fit(&d, 65 * GIB).headroom_bytes, -5 * GIB as i64);
        assert_eq!(fit(&d, 50 * GIB).verdict, Verdict::TooBig);
        // Exactly the limit fits.
        assert_eq!(fit(&d, 70 * GIB).verdict, Verdict::Fits);
    }

    #[test]
    fn a_run_that_ran_out_needs_at_least_what_it_held_and_asked_for() {
        let d = ran_out(
            run("a.pickle", 70 * GIB, 78 * GIB),
            70 * GIB,
            2 * GIB,
            Some(GIB),
        );
        assert_eq!(fit(&d, 71 * GIB).verdict, Verdict::TooBig);
        assert_eq!(fit(&d, 80 * GIB).verdict, Verdict::Unknown);
        // Its headroom counts from the most it reserved (78 GiB) or what it needed (72 GiB at least).
        assert_eq!(fit(&d, 80 * GIB).headroom_bytes, 2 * GIB as i64);
        let asked_much = ran_out(run("e.pickle", GIB, 2 * GIB), GIB, 100 * GIB, Some(0));
        assert_eq!(fit(&asked_much, 80 * GIB).headroom_bytes, -21 * GIB as i64);
        // The device gave it what it had reserved and what was still free.
        assert_eq!(usable(&d), Some(79 * GIB));
        let unknown_free = ran_out(run("b.pickle", GIB, GIB), GIB, GIB, None);
        assert_eq!(usable(&unknown_free), None);
        let other = ran_out(run("c.pickle", GIB, 30 * GIB), GIB, GIB, Some(9 * GIB));
        let plain = run("d.pickle", GIB, GIB);
        assert_eq!(
            usable_from_ooms(&[&plain, &d, &unknown_free, &other]),
            Some((39 * GIB, 3))
        );
        assert_eq!(usable_from_ooms(&[&plain]), None);
    }

    #[test]
    fn runs_differing_in_one_knob_are_a_sweep() {
        // Activations grow with the context; 10 GiB of weights and optimizer state do not.
        let at = |ctx: u64| 10 * GIB + ctx * (GIB / 64) + ctx * ctx * (GIB / 65_536);
        let runs: Vec<Digest> = [128u64, 256, 512]
            .iter()
            .map(|&ctx| run(&format!("gpt_bf16_ctx{ctx}.pickle"), at(ctx) - GIB, at(ctx)))
            .chain([
                // Another dtype: a sweep of its own, of one run, so none.
                run("gpt_fp32_ctx128.pickle", 20 * GIB, 21 * GIB),
                ran_out(
                    run("gpt_bf16_ctx2048.pickle", 70 * GIB, 79 * GIB),
                    70 * GIB,
                    GIB,
                    Some(0),
                ),
            ])
            .collect();
        let refs: Vec<&Digest> = runs.iter().collect();
        let found = sweeps(&refs);
        assert_eq!(found.len(), 1);
        let s = &found[0];
        assert_eq!(s.knob, "ctx");
        assert_eq!(s.fixed.get("dtype").map(String::as_str), Some("bf16"));
        let values: Vec<u64> = s.points.iter().map(|p| p.value).collect();
        assert_eq!(values, [128, 256, 512]);
        assert_eq!(s.ran_out, [(2048, "gpt_bf16_ctx2048.pickle".to_string())]);
        assert_eq!(s.curve.kind(), "quadratic");
        for ctx in [128u64, 512, 1024] {
            let rel = (s.curve.at(ctx as f64) - at(ctx) as f64).abs() / at(ctx) as f64;
            assert!(rel < 1e-9, "ctx {ctx}: off by {rel}");
        }
        // 80 GiB: 10 + x/64 + x²/65 536 = 80 → x = 1 690.2; the runs' values share a step of 128.
        assert_eq!(
            s.reach(80 * GIB),
            Reach::UpTo {
                value: 1664,
                extrapolated: true
            }
        );
        assert_eq!(
            s.reach(at(256)),
            Reach::UpTo {
                value: 256,
                extrapolated: false
            }
        );
        assert_eq!(s.reach(10 * GIB), Reach::Nothing);
        let g = s.per_doubling.unwrap();
        let expected = (at(512) as f64 / at(128) as f64).sqrt();
        assert!((g - expected).abs() < 1e-9);
        let line = s.describe(Some(80 * GIB));
        assert!(
            line.starts_with("ctx (bf16, cuda:0): 128 → 12.2 GiB · 256 → 15.0 GiB · 512 → 22.0 GiB reserved at most; ×1.34 per doubling; in 80.0 GiB up to ctx 1 664 (extrapolated, quadratic through 3 runs)"),
            "{line}"
        );
        assert!(
            line.ends_with("; ctx 2 048 ran out of memory (gpt_bf16_ctx2048.pickle)"),
            "{line}"
        );
        // Numbers in what the runs share are named.
        let mut ranked: Vec<Digest> = runs[..3].to_vec();
        for d in &mut ranked {
            d.config.insert("rank".into(), "3".into());
        }
        let refs: Vec<&Digest> = ranked.iter().collect();
        let line = sweeps(&refs)[0].describe(None);
        assert!(
            line.starts_with("ctx (bf16, rank 3, cuda:0): 128 → "),
            "{line}"
        );
    }

    #[test]
    fn model_sizes_are_a_sweep_in_parameters() {
        // 16 bytes a parameter (weights, gradients, Adam's two moments in fp32) and 2 GiB besides.
        let at = |params: u64| 2 * GIB + 16 * params;
        let runs: Vec<Digest> = [
            (125_000_000u64, "125M"),
            (350_000_000, "350M"),
            (1_300_000_000, "1.3B"),
        ]
        .iter()
        .map(|&(p, name)| run(&format!("gpt_{name}_bf16.pickle"), at(p), at(p)))
        .collect();
        let refs: Vec<&Digest> = runs.iter().collect();
        let found = sweeps(&refs);
        assert_eq!(found.len(), 1);
        let s = &found[0];
        assert_eq!(s.knob, "model");
        assert_eq!(s.curve.kind(), "linear");
        // 80 GiB: (80 − 2) GiB / 16 = 5.234 B parameters, in steps of 25 M (the gcd of the sizes).
        assert_eq!(
            s.reach(80 * GIB),
            Reach::UpTo {
                value: 5_225_000_000,
                extrapolated: true
            }
        );
        let line = s.describe(Some(80 * GIB));
        assert!(
            line.starts_with(
                "model (bf16, cuda:0): 125M → 3.9 GiB · 350M → 7.2 GiB · 1.3B → 21.4 GiB"
            ),
            "{line}"
        );
        assert!(
            line.contains("up to model 5.22B (extrapolated, linear through 3 runs)"),
            "{line}"
        );
        assert_eq!(knob_value("model", "2.7B"), Some(2_700_000_000));
        assert_eq!(knob_value("model", "7b"), Some(7_000_000_000));
        assert_eq!(
            (knob_value("model", "B"), knob_value("model", "x")),
            (None, None)
        );
        assert_eq!(knob_text("model", 350_000_000), "350M");
    }

    #[test]
    fn a_knob_that_splits_the_memory_finds_the_least_that_fits() {
        // 6 GiB every GPU keeps whole (activations, buffers) and 96 GiB split tp ways.
        let at = |tp: u64| 6 * GIB + 96 * GIB / tp;
        let runs: Vec<Digest> = [2u64, 4, 8]
            .iter()
            .map(|&tp| run(&format!("llama_bf16_tp{tp}.pickle"), at(tp) - GIB, at(tp)))
            .collect();
        let refs: Vec<&Digest> = runs.iter().collect();
        let found = sweeps(&refs);
        assert_eq!(found.len(), 1);
        let s = &found[0];
        assert!(s.splits());
        assert_eq!(s.curve.kind(), "inverse");
        for tp in [1u64, 2, 16] {
            let rel = (s.curve.at(tp as f64) - at(tp) as f64).abs() / at(tp) as f64;
            assert!(rel < 1e-9, "tp {tp}: off by {rel}");
        }
        let least = |value, extrapolated| Reach::AtLeast {
            value,
            extrapolated,
        };
        // 96 / (limit − 6) GiB, up to the next power of two (the runs' values all are).
        assert_eq!(s.reach(80 * GIB), least(2, false));
        assert_eq!(s.reach(24 * GIB), least(8, false));
        assert_eq!(s.reach(at(4)), least(4, false));
        assert_eq!(s.reach(16 * GIB), least(16, true));
        assert_eq!(s.reach(140 * GIB), least(1, true));
        assert_eq!(s.reach(6 * GIB), Reach::Nothing);
        let line = s.describe(Some(24 * GIB));
        assert_eq!(
            line,
            "tp (bf16, cuda:0): 2 → 54.0 GiB · 4 → 30.0 GiB · 8 → 18.0 GiB reserved at most; \
             ×0.58 per doubling; in 24.0 GiB from tp 8 on (as 1/tp through 3 runs)"
        );
        assert!(s
            .describe(Some(5 * GIB))
            .ends_with("; in 5.0 GiB no tp (as 1/tp through 3 runs)"));

        // Values that are not powers of two round up to their step.
        let runs: Vec<Digest> = [3u64, 6]
            .iter()
            .map(|&pp| run(&format!("pp{pp}.pickle"), at(pp), at(pp)))
            .collect();
        let refs: Vec<&Digest> = runs.iter().collect();
        assert_eq!(sweeps(&refs)[0].reach(20 * GIB), least(9, true));

        // Data parallelism without sharded state splits nothing.
        let runs: Vec<Digest> = [2u64, 4, 8]
            .iter()
            .map(|&dp| run(&format!("dp{dp}.pickle"), 29 * GIB, 30 * GIB))
            .collect();
        let refs: Vec<&Digest> = runs.iter().collect();
        let s = &sweeps(&refs)[0];
        assert_eq!((s.knob.as_str(), s.curve.d), ("dp", 0.0));
        assert_eq!(s.reach(40 * GIB), Reach::Unbounded);
        assert_eq!(s.reach(20 * GIB), Reach::Nothing);
        assert!(s
            .describe(Some(40 * GIB))
            .ends_with("; in 40.0 GiB any dp (it does not shrink)"));
        // Split no ways is not a run of the sweep.
        let runs = [run("tp0.pickle", GIB, GIB), run("tp2.pickle", GIB, GIB)];
        let refs: Vec<&Digest> = runs.iter().collect();
        assert!(sweeps(&refs).is_empty());
    }

    #[test]
    fn a_jobs_ranks_make_one_sweep_of_the_most_any_rank_reserved() {
        // Four ranks at ctx 128, 256 and 512; rank 2 holds the most; at ctx 1024 rank 3 ran out.
        let at = |ctx: u64, rank: u64| {
            4 * GIB + ctx * (GIB / 64) + rank * (GIB / 8) * u64::from(rank == 2)
        };
        let mut runs: Vec<Digest> = Vec::new();
        for ctx in [128u64, 256, 512, 1024] {
            for rank in 0..4u64 {
                let mut d = run(
                    &format!("llama_ctx{ctx}_rank{rank}.pickle"),
                    at(ctx, rank),
                    at(ctx, rank),
                );
                d.device = rank as i64;
                if ctx == 1024 && rank == 3 {
                    d = ran_out(d, 60 * GIB, GIB, Some(0));
                }
                runs.push(d);
            }
        }
        let refs: Vec<&Digest> = runs.iter().collect();
        let found = sweeps(&refs);
        assert_eq!(found.len(), 1, "{found:?}");
        let s = &found[0];
        assert_eq!((s.device, s.ranks), (None, 4));
        assert!(!s.fixed.contains_key("rank"));
        let points: Vec<(u64, &str, u64)> = s
            .points
            .iter()
            .map(|p| (p.value, p.file.as_str(), p.max_reserved_bytes))
            .collect();
        assert_eq!(
            points,
            [
                (128, "llama_ctx128_rank2.pickle", at(128, 2)),
                (256, "llama_ctx256_rank2.pickle", at(256, 2)),
                (512, "llama_ctx512_rank2.pickle", at(512, 2)),
            ]
        );
        assert_eq!(
            s.ran_out,
            [(1024, "llama_ctx1024_rank3.pickle".to_string())]
        );
        assert!(
            s.describe(None)
                .starts_with("ctx (the most of 4 ranks): 128 → 6.2 GiB · 256 → 8.2 GiB"),
            "{}",
            s.describe(None)
        );
        // One rank's files are a sweep of that rank, on its device.
        let refs: Vec<&Digest> = runs.iter().filter(|d| d.device == 1).collect();
        let s = &sweeps(&refs)[0];
        assert_eq!((s.device, s.ranks), (Some(1), 0));
        assert_eq!(s.fixed.get("rank").map(String::as_str), Some("1"));
        assert_eq!(s.points.len(), 4);
    }

    #[test]
    fn two_runs_draw_a_line_and_a_flat_sweep_sets_no_bound() {
        let runs = [
            run("bs4.pickle", 5 * GIB, 6 * GIB),
            run("bs8.pickle", 9 * GIB, 10 * GIB),
        ];
        let refs: Vec<&Digest> = runs.iter().collect();
        let s = &sweeps(&refs)[0];
        assert_eq!(s.curve.kind(), "linear");
        // 2 + x GiB: up to bs 78 in 80 GiB, a multiple of the runs' common step 4.
        assert_eq!(
            s.reach(80 * GIB),
            Reach::UpTo {
                value: 76,
                extrapolated: true
            }
        );
        let flat = [
            run("bs4.pickle", 5 * GIB, 6 * GIB),
            run("bs8.pickle", 5 * GIB, 6 * GIB),
            run("bs16.pickle", 5 * GIB, 6 * GIB),
        ];
        let refs: Vec<&Digest> = flat.iter().collect();
        let s = &sweeps(&refs)[0];
        assert_eq!(s.reach(80 * GIB), Reach::Unbounded);
        assert_eq!(s.reach(GIB), Reach::Nothing);
        assert_eq!(s.per_doubling, Some(1.0));
        // Different devices are different sweeps; one value is none.
        let mut other = run("bs8.pickle", GIB, GIB);
        other.device = 1;
        let refs = [&runs[0], &other];
        assert!(sweeps(&refs).is_empty());
    }
}
