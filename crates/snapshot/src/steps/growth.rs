//! Whether a run's memory keeps growing step after step (a leak, or a cache that never settles), and
//! at that rate when it would reach the GPU's memory.

use super::{StepRecord, StepRun, MIB};

/// Memory that keeps growing step after step (a leak, a cache never emptied, a list that holds on to
/// each step's tensors): the trend of what is still allocated at each step's end (peak allocated
/// where the input logs no such figure), after the first tenth of the steps (warm-up: the optimizer's
/// state and the allocator's first segments come then).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Growth {
    /// Bytes per step: the median of the slopes between pairs of steps (Theil–Sen), so that a few odd
    /// steps, or a level that jumps once and stays, do not make a trend.
    pub bytes_per_step: f64,
    /// The steps the trend is taken over.
    pub from_step: u64,
    pub to_step: u64,
    /// The figure: "allocated at step end" or "peak allocated".
    pub of: std::borrow::Cow<'static, str>,
    /// At this rate, the step at which that figure would reach the GPU's memory (when the run says what
    /// GPU it ran on, and it has not reached it yet).
    pub reaches_gpu_at: Option<u64>,
}

/// The fewest steps, after warm-up, a trend is taken over.
const GROWTH_MIN_STEPS: usize = 8;

/// The most steps the slopes are taken between (evenly spaced among more): pairs grow as the square.
const GROWTH_POINTS: usize = 200;

/// The least growth over the steps taken that is said: 64 MiB, and 2 % of the figure's level.
const GROWTH_MIN_BYTES: f64 = 64.0 * MIB;

const GROWTH_MIN_SHARE: f64 = 0.02;

impl StepRun {
    /// Memory that grows step after step, when it does (see [`Growth`]); [`merge`](super::merge) keeps
    /// it in [`StepRun::growth`], where the table, the JSON and the sentences read it.
    pub fn find_growth(&self) -> Option<Growth> {
        // What is still allocated at a step's end, where most steps say it: a peak within a step
        // grows with a leak too, but swings with the step's own work.
        let at_end = self
            .steps
            .iter()
            .filter(|s| s.allocated_bytes.is_some())
            .count();
        let (of, figure): (&'static str, fn(&StepRecord) -> Option<u64>) =
            if at_end * 5 >= self.steps.len() * 4 {
                ("allocated at step end", |s| s.allocated_bytes)
            } else {
                ("peak allocated", |s| s.peak_allocated_bytes)
            };
        let mut points: Vec<(f64, f64)> = self
            .steps
            .iter()
            .filter_map(|s| Some((s.step as f64, figure(s)? as f64)))
            .collect();
        // In step order (a log of a resumed run holds some steps twice, not always in order).
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let points = &points[(points.len() / 10).max(1).min(points.len())..];
        if points.len() < GROWTH_MIN_STEPS {
            return None;
        }
        let every = points.len().div_ceil(GROWTH_POINTS);
        let taken: Vec<(f64, f64)> = points.iter().step_by(every).copied().collect();
        let mut slopes = Vec::with_capacity(taken.len() * taken.len() / 2);
        for (i, a) in taken.iter().enumerate() {
            for b in &taken[i + 1..] {
                if b.0 > a.0 {
                    slopes.push((b.1 - a.1) / (b.0 - a.0));
                }
            }
        }
        if slopes.is_empty() {
            return None;
        }
        let slope = median(&mut slopes);
        let (first, last) = (points[0], points[points.len() - 1]);
        let level = median(&mut points.iter().map(|p| p.1).collect::<Vec<_>>());
        let grown = slope * (last.0 - first.0);
        if !(grown >= GROWTH_MIN_BYTES && grown >= GROWTH_MIN_SHARE * level) {
            return None;
        }
        // And it grows all along: each quarter of the steps higher than the one before by a good part
        // of what the trend says (a level that jumps once and stays slopes the pairs across the jump).
        let quarter = points.len() / 4;
        let medians: Vec<f64> = (0..4)
            .map(|q| {
                let part = &points[q * quarter..(q + 1) * quarter];
                median(&mut part.iter().map(|p| p.1).collect::<Vec<_>>())
            })
            .collect();
        if medians.windows(2).any(|m| m[1] - m[0] < grown / 16.0) {
            return None;
        }
        let reaches_gpu_at = self.device.as_ref().and_then(|&(_, total)| {
            let left = total as f64 - last.1;
            let steps = (left / slope).ceil();
            (left > 0.0 && steps < 1e15).then(|| (last.0 as u64).saturating_add(steps as u64))
        });
        Some(Growth {
            bytes_per_step: slope,
            from_step: first.0 as u64,
            to_step: last.0 as u64,
            of: of.into(),
            reaches_gpu_at,
        })
    }
}

/// The median of `v` (the upper one of an even count), reordering it; `v` is not empty.
fn median(v: &mut [f64]) -> f64 {
    let mid = v.len() / 2;
    *v.select_nth_unstable_by(mid, f64::total_cmp).1
}

/// Each growing run's growth in a sentence: "job/steps rank 2 grows 48.0 MiB a step (allocated at
/// step end, steps 3 to 500); at that rate it reaches the GPU's 80.0 GiB near step 1 320".
pub fn growth_lines(runs: &[StepRun]) -> Vec<String> {
    use crate::format::{bytes, grouped};
    runs.iter()
        .filter_map(|r| {
            let g = r.growth.as_ref()?;
            let name = match r.rank {
                Some(rank) => format!("{} rank {rank}", r.name),
                None => r.name.clone(),
            };
            let mut line = format!(
                "{name} grows {} a step ({}, steps {} to {})",
                bytes(g.bytes_per_step.round() as u64),
                g.of,
                grouped(g.from_step),
                grouped(g.to_step)
            );
            if let (Some(at), Some((_, total))) = (g.reaches_gpu_at, &r.device) {
                line.push_str(&format!(
                    "; at that rate it reaches the GPU's {} near step {}",
                    bytes(*total),
                    grouped(at)
                ));
            }
            Some(line)
        })
        .collect()
}
