//! The Steps view as it shows: each run's figure at the step under the pointer, the components against
//! the measured peak, and where a snapshot of the same run sits on the step chart.

use memograph_charts::step_value;
use memograph_snapshot::analysis::compare::Digest;
use memograph_snapshot::names;
use memograph_snapshot::steps::StepRun;

/// Each run's bytes at the last step at or before `step` (`None` before its first step and after its
/// last: a run that ended says nothing of later steps).
pub fn values_at(runs: &[&StepRun], step: f64, reserved: bool) -> Vec<Option<(u64, u64)>> {
    runs.iter()
        .map(|r| {
            let last = r.steps.iter().map(|s| s.step).max()?;
            if step > last as f64 + 1e-9 {
                return None;
            }
            r.steps
                .iter()
                .take_while(|s| s.step as f64 <= step + 1e-9)
                .filter_map(|s| Some((s.step, step_value(s, reserved)?)))
                .last()
        })
        .collect()
}

/// A run's named components, their sum, the measured peak and the gap between them (peak − sum).
#[derive(Clone, Debug, PartialEq)]
pub struct Breakdown {
    pub parts: Vec<(String, u64)>,
    pub sum: u64,
    pub peak: Option<u64>,
    pub gap: Option<i64>,
}

pub fn breakdown(r: &StepRun) -> Option<Breakdown> {
    if r.components.is_empty() {
        return None;
    }
    let mut parts = r.components.clone();
    if let Some(s) = r.static_bytes {
        parts.push(("Static (before the first step)".into(), s));
    }
    let sum = r.components.iter().map(|c| c.1).sum();
    let peak = r.peak_allocated_bytes();
    Some(Breakdown {
        gap: peak.map(|p| memograph_snapshot::analysis::compare::delta(sum, p)),
        parts,
        sum,
        peak,
    })
}

/// Where snapshots sit on the step chart: (run index, step, digest index) for each digest whose name
/// gives a rank and a step inside a run of that rank.
pub fn snapshot_marks<D: std::borrow::Borrow<Digest>>(
    runs: &[&StepRun],
    digests: &[D],
) -> Vec<(usize, u64, usize)> {
    let mut marks = Vec::new();
    for (k, d) in digests.iter().map(|d| d.borrow()).enumerate() {
        if !d.default_device {
            continue;
        }
        let rank = d.config.get("rank").and_then(|r| r.parse::<u32>().ok());
        let Some(step) = d.config.get("step").and_then(|s| s.parse::<u64>().ok()) else {
            continue;
        };
        for (i, r) in runs.iter().enumerate() {
            let inside = r.steps.first().is_some_and(|f| f.step <= step)
                && r.steps.last().is_some_and(|l| step <= l.step);
            // Of another job's folder it is no snapshot of this run (files picked without their
            // folder are matched by rank and step alone).
            let (a, b) = (names::folder(&r.file), names::folder(&d.file));
            let same_job = a == b || a.is_empty() || b.is_empty();
            if r.rank == rank && inside && same_job {
                marks.push((i, step, k));
            }
        }
    }
    marks
}

/// What a snapshot marked on the step chart is called: the reason in memograph-capture's name
/// (`rank0_peak_3.pickle` → `peak`, `rank1_oom_12.pickle` → `oom`), else "snapshot".
pub fn mark_label(file: &str) -> String {
    let stem = memograph_snapshot::names::stem(file);
    let parts: Vec<&str> = stem.split('_').collect();
    match parts[..] {
        [rank, reason, step]
            if rank.starts_with("rank")
                && !reason.is_empty()
                && step.bytes().all(|c| c.is_ascii_digit()) =>
        {
            reason.to_string()
        }
        _ => "snapshot".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memograph_snapshot::steps::StepRecord;

    fn run(rank: u32, peaks: &[(u64, u64)]) -> StepRun {
        StepRun {
            rank: Some(rank),
            steps: peaks
                .iter()
                .map(|&(step, b)| StepRecord {
                    step,
                    peak_allocated_bytes: Some(b),
                    ..StepRecord::default()
                })
                .collect(),
            components: vec![("Parameters".into(), 40), ("Gradients".into(), 40)],
            static_bytes: Some(10),
            ..StepRun::default()
        }
    }

    #[test]
    fn readout_breakdown_and_snapshot_marks() {
        let a = run(0, &[(1, 100), (2, 120), (4, 90)]);
        let b = run(1, &[(3, 50)]);
        assert_eq!(
            values_at(&[&a, &b], 3.0, false),
            vec![Some((2, 120)), Some((3, 50))]
        );
        assert_eq!(values_at(&[&a, &b], 0.5, false), vec![None, None]);
        // After a run's last step it says nothing (b ended at step 3).
        assert_eq!(values_at(&[&a, &b], 4.0, false), vec![Some((4, 90)), None]);
        let k = breakdown(&a).unwrap();
        assert_eq!((k.sum, k.peak, k.gap), (80, Some(120), Some(40)));
        let mut d: Digest = serde_json::from_str(
            &serde_json::to_string(
                &memograph_snapshot::analysis::compare::digests(
                    &memograph_snapshot::read_bytes(&memograph_snapshot::synth::pickle(2).bytes)
                        .unwrap(),
                    &memograph_snapshot::analysis::categories::Rules::built_in(),
                    "x",
                    0,
                )[0],
            )
            .unwrap(),
        )
        .unwrap();
        d.config = memograph_snapshot::analysis::compare::config_from_name("rank0_peak_2.pickle");
        assert_eq!(snapshot_marks(&[&a, &b], &[d.clone()]), vec![(0, 2, 0)]);
        // Of another job's folder it marks nothing; picked without its folder, it marks by rank.
        let mut a2 = a.clone();
        a2.file = "run_a/rank0_steps.jsonl".into();
        d.file = "run_b/rank0_peak_2.pickle".into();
        assert!(snapshot_marks(&[&a2], &[d.clone()]).is_empty());
        d.file = "run_a/rank0_peak_2.pickle".into();
        assert_eq!(snapshot_marks(&[&a2], &[d.clone()]), vec![(0, 2, 0)]);
        d.file = "rank0_peak_2.pickle".into();
        assert_eq!(snapshot_marks(&[&a2], &[d.clone()]), vec![(0, 2, 0)]);
        d.config = memograph_snapshot::analysis::compare::config_from_name("rank1_peak_9.pickle");
        assert!(snapshot_marks(&[&a, &b], &[d]).is_empty());
    }

    #[test]
    fn a_mark_is_named_by_the_reason_in_captures_name() {
        assert_eq!(mark_label("run/rank0_peak_3.pickle"), "peak");
        assert_eq!(mark_label("rank12_oom_120.pickle.gz"), "oom");
        assert_eq!(mark_label("rank1_exit_0.pkl"), "exit");
        assert_eq!(mark_label("memory_snapshot_rank0_step3.pickle"), "snapshot");
        assert_eq!(mark_label("rank0_peak_x.pickle"), "snapshot");
    }
}
