//! The rank strip: each rank's peak in a job's runs, and the rank out of line; runs of several jobs get
//! a strip each.

use std::collections::BTreeMap;

use super::{common_folder, Digest};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::{peak_rows, test_digest};

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
