//! What is made of the runs read: runs merged with their manifests, the steps table, a job's ranks
//! summed up, and a run as JSON.

use super::{StepFile, StepRun};

/// Runs from every file, manifests attached to the run of the same rank in the same folder (its
/// static memory and parameter, gradient and optimizer-state bytes), each run's growth found.
pub fn merge(files: Vec<StepFile>) -> Vec<StepRun> {
    let mut runs = Vec::new();
    let mut manifests = Vec::new();
    for f in files {
        match f {
            StepFile::Runs(r) => runs.extend(r),
            StepFile::Manifest(m) => manifests.push(m),
        }
    }
    let folder = crate::names::folder;
    for m in manifests {
        if let Some(run) = runs.iter_mut().find(|r| {
            r.format == "memograph-capture"
                && r.rank == m.rank
                && folder(&r.file) == folder(&m.file)
        }) {
            run.static_bytes = run.static_bytes.or(m.static_bytes);
            if run.device.is_none() {
                run.device = m.device;
            }
            if run.components.is_empty() {
                run.components = m.components;
            }
        }
    }
    // Once a run is whole (its GPU, from the manifest, tells when a growth would fill it).
    for run in &mut runs {
        run.growth = run.find_growth();
    }
    runs
}

/// The per-run table: run, rank, config, steps, the highest peak allocated and its delta against the
/// baseline run (`runs[baseline]`), the highest peak reserved, where a run says what GPU it ran on its
/// memory and the headroom the peak reserved left, where a run grows step after step its growth a
/// step ([`StepRun::growth`]), static and theoretical memory, retries and OOMs.
/// `exact`: bytes as whole numbers (CSV), else in binary units. Missing figures are empty.
pub fn steps_table(
    runs: &[StepRun],
    baseline: usize,
    exact: bool,
) -> crate::analysis::compare::Table {
    use crate::analysis::compare::{delta, Table};
    use crate::format::bytes;
    let size = |b: Option<u64>| {
        b.map_or(
            String::new(),
            |b| if exact { b.to_string() } else { bytes(b) },
        )
    };
    let mut keys: Vec<String> = Vec::new();
    for r in runs {
        for k in r.config.keys() {
            if k != "rank" && !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let base = runs.get(baseline).and_then(StepRun::peak_allocated_bytes);
    let mut header: Vec<String> = vec!["run".into(), "rank".into()];
    header.extend(keys.iter().cloned());
    let mut numeric = vec![false; header.len()];
    let on_device = runs.iter().any(|r| r.device.is_some());
    let gpu: &[&str] = if on_device {
        &["GPU memory", "headroom"]
    } else {
        &[]
    };
    let growing = runs.iter().any(|r| r.growth.is_some());
    let growth: &[&str] = if growing { &["growth a step"] } else { &[] };
    for h in ["steps", "peak allocated", "vs baseline", "peak reserved"]
        .iter()
        .chain(gpu)
        .chain(growth)
        .chain(&["static", "theoretical", "alloc retries", "OOMs"])
    {
        header.push(h.to_string());
        numeric.push(true);
    }
    // As the peak table of snapshots writes them: the baseline's own delta `±0` (`0` exact).
    let signed = |d: i64| {
        let m = size(Some(d.unsigned_abs()));
        match d.signum() {
            1 => format!("+{m}"),
            -1 => format!("-{m}"),
            _ if exact => "0".into(),
            _ => "±0".into(),
        }
    };
    let rows = runs
        .iter()
        .map(|r| {
            let mut cells = vec![
                format!(
                    "{}{}",
                    r.name,
                    if r.simulated { " (simulated)" } else { "" }
                ),
                r.rank.map_or(String::new(), |x| x.to_string()),
            ];
            cells.extend(
                keys.iter()
                    .map(|k| r.config.get(k).cloned().unwrap_or_default()),
            );
            let peak = r.peak_allocated_bytes();
            cells.push(r.steps.len().to_string());
            cells.push(size(peak));
            cells.push(match (base, peak) {
                (Some(a), Some(b)) => signed(delta(a, b)),
                _ => String::new(),
            });
            cells.push(size(r.peak_reserved_bytes()));
            if on_device {
                cells.push(size(r.device.as_ref().map(|d| d.1)));
                cells.push(r.headroom_bytes().map_or(String::new(), signed));
            }
            if growing {
                let per_step = r.growth.as_ref().map(|g| g.bytes_per_step.round() as u64);
                cells.push(per_step.map_or(String::new(), |b| format!("+{}", size(Some(b)))));
            }
            cells.push(size(r.static_bytes));
            cells.push(size(r.theoretical_bytes));
            cells.push(r.alloc_retries().map_or(String::new(), |x| x.to_string()));
            cells.push(r.ooms().map_or(String::new(), |x| x.to_string()));
            cells
        })
        .collect();
    Table {
        header,
        rows,
        numeric,
    }
}

/// The ranks of one job's step runs: its name and its rank strip (`runs` index the runs given).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StepRanks {
    pub name: String,
    /// Its name where other jobs' runs stand beside it; empty where it is the only job.
    #[serde(skip)]
    pub label: String,
    #[serde(flatten)]
    pub strip: crate::analysis::compare::RankStrip,
}

/// The rank strips of the jobs among `runs`: runs of one name (the file's folder and name without
/// the rank) that carry a rank, by their highest peak allocated (`reserved`: peak reserved), for each
/// job of two ranks or more. Simulated runs are left out.
pub fn rank_sets(runs: &[StepRun], reserved: bool) -> Vec<StepRanks> {
    let mut jobs: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        if r.rank.is_none() || r.simulated {
            continue;
        }
        match jobs.iter_mut().find(|(name, _)| *name == r.name) {
            Some((_, members)) => members.push(i),
            None => jobs.push((&r.name, vec![i])),
        }
    }
    let alone = jobs.len() < 2 && runs.iter().all(|r| jobs.iter().any(|(n, _)| *n == r.name));
    jobs.into_iter()
        .filter_map(|(name, members)| {
            let peak = |r: &StepRun| {
                if reserved {
                    r.peak_reserved_bytes()
                } else {
                    r.peak_allocated_bytes()
                }
            };
            let ranked: Vec<(usize, u32, u64)> = members
                .iter()
                .filter_map(|&i| Some((i, runs[i].rank?, peak(&runs[i])?)))
                .collect();
            let strip = crate::analysis::compare::RankStrip::of(&ranked)?;
            Some(StepRanks {
                name: name.to_string(),
                label: if alone {
                    String::new()
                } else {
                    name.to_string()
                },
                strip,
            })
        })
        .collect()
}

/// A run as the command line's JSON and the page's contract spell it.
pub fn run_json(r: &StepRun) -> serde_json::Value {
    serde_json::json!({
        "file": r.file,
        "name": r.name,
        "rank": r.rank,
        "format": r.format,
        "simulated": r.simulated,
        "config": r.config,
        "steps": r.steps.len(),
        "peak_allocated_bytes": r.peak_allocated_bytes(),
        "peak_step": r.peak_step(),
        "peak_reserved_bytes": r.peak_reserved_bytes(),
        "reserved_is_device_used": r.reserved_is_device_used,
        "static_bytes": r.static_bytes,
        "theoretical_bytes": r.theoretical_bytes,
        "device": r.device.as_ref().map(|(name, total)| serde_json::json!({"name": name, "total_memory_bytes": total})),
        "headroom_bytes": r.headroom_bytes(),
        "components": r.components.iter().map(|(k, v)| serde_json::json!({"name": k, "bytes": v})).collect::<Vec<_>>(),
        "alloc_retries": r.alloc_retries(),
        "ooms": r.ooms(),
        "growth": r.growth,
    })
}
