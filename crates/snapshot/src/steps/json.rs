//! The JSON formats: memograph-capture's `rank{R}_steps.jsonl` and manifest, torchtitan's metric rows
//! and structured exports, and Megatron-LM forks' per-rank memory traces.

use std::collections::BTreeMap;

use super::read::name_run;
use super::{to_bytes, Manifest, StepFile, StepRecord, StepRun, GIB, MIB};
use crate::analysis::compare::config_from_name;

pub(super) fn u64_of(v: &serde_json::Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f.round() as u64))
}

pub(super) fn f64_of(v: &serde_json::Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// A JSON document: a capture manifest, a torchtitan export, or a Megatron memory trace.
pub(super) fn json_document(file: &str, value: &serde_json::Value) -> Result<StepFile, String> {
    use serde_json::Value;
    let runs = match value {
        Value::Object(o)
            if o.contains_key("static_memory_bytes")
                || o.contains_key("first_step")
                || o.contains_key("command") =>
        {
            let mut components = Vec::new();
            if let Some(first) = o.get("first_step").and_then(Value::as_object) {
                for (key, label) in [
                    ("parameter_bytes", "Parameters"),
                    ("gradient_bytes", "Gradients"),
                    ("optimizer_state_bytes", "Optimizer state"),
                ] {
                    if let Some(b) = first.get(key).and_then(u64_of) {
                        components.push((label.to_string(), b));
                    }
                }
            }
            let rank = o
                .get("rank")
                .and_then(Value::as_u64)
                .map(|r| r as u32)
                .or_else(|| {
                    config_from_name(file)
                        .get("rank")
                        .and_then(|r| r.parse().ok())
                });
            return Ok(StepFile::Manifest(Manifest {
                file: file.to_string(),
                rank,
                static_bytes: o.get("static_memory_bytes").and_then(u64_of),
                components,
                device: o.get("device").and_then(|d| {
                    let total = d.get("total_memory_bytes").and_then(u64_of)?;
                    let name = d.get("name").and_then(Value::as_str).unwrap_or("GPU");
                    Some((name.to_string(), total)).filter(|_| total > 0)
                }),
            }));
        }
        Value::Object(o) if o.get("history").is_some_and(Value::is_array) => {
            vec![torchtitan_export(
                o["history"].as_array().expect("an array"),
            )?]
        }
        Value::Array(entries) => vec![torchtitan_export(entries)?],
        Value::Object(o) if o.values().any(|v| v.get("samples").is_some()) => {
            vec![megatron_trace(o)?]
        }
        _ => return Err("a JSON document that holds no step records".into()),
    };
    let mut runs = runs;
    for r in &mut runs {
        name_run(r, file);
    }
    Ok(StepFile::Runs(runs))
}

/// `[{step, timestamp, device_mem_stats: {...}, metadata: {...}}]`.
fn torchtitan_export(entries: &[serde_json::Value]) -> Result<StepRun, String> {
    let mut run = StepRun {
        format: "torchtitan",
        ..StepRun::default()
    };
    for (k, e) in entries.iter().enumerate() {
        let step = e
            .get("step")
            .and_then(u64_of)
            .ok_or_else(|| format!("entry {k} has no step"))?;
        let stats = e
            .get("device_mem_stats")
            .ok_or_else(|| format!("entry {k} has no device_mem_stats"))?;
        let gib = |key: &str| {
            stats
                .get(key)
                .and_then(f64_of)
                .and_then(|v| to_bytes(v, GIB))
        };
        run.steps.push(StepRecord {
            step,
            time: e.get("timestamp").and_then(f64_of),
            peak_allocated_bytes: gib("peak_allocated_gib").or_else(|| gib("max_active_gib")),
            peak_reserved_bytes: gib("max_reserved_gib"),
            alloc_retries: stats.get("num_alloc_retries").and_then(u64_of),
            ooms: stats.get("num_ooms").and_then(u64_of),
            ..StepRecord::default()
        });
        if let Some(meta) = e.get("metadata").and_then(|m| m.as_object()) {
            for (key, v) in meta {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => continue,
                    other => other.to_string(),
                };
                run.config.entry(key.clone()).or_insert(text);
            }
        }
    }
    Ok(run)
}

/// `{"<iteration>": {"samples": [{timestamp_s, allocated_memory_MB, reserved_memory_MB}], "peak_allocated_MB",
/// "theoretical_memory_MB", "static_memory_MB"}}`.
fn megatron_trace(o: &serde_json::Map<String, serde_json::Value>) -> Result<StepRun, String> {
    let mut run = StepRun {
        format: "megatron-trace",
        reserved_is_device_used: true,
        ..StepRun::default()
    };
    for (key, it) in o {
        let step: u64 = key
            .trim()
            .parse()
            .map_err(|_| format!("iteration '{key}' is not a number"))?;
        let samples = it
            .get("samples")
            .and_then(|s| s.as_array())
            .ok_or_else(|| format!("iteration {key} has no samples"))?;
        let mb = |v: &serde_json::Value, k: &str| {
            v.get(k).and_then(f64_of).and_then(|x| to_bytes(x, MIB))
        };
        let max_of = |k: &str| samples.iter().filter_map(|s| mb(s, k)).max();
        let first_time = samples
            .first()
            .and_then(|s| s.get("timestamp_s"))
            .and_then(f64_of);
        run.steps.push(StepRecord {
            step,
            time: first_time,
            peak_allocated_bytes: mb(it, "peak_allocated_MB")
                .or_else(|| max_of("allocated_memory_MB")),
            peak_reserved_bytes: max_of("reserved_memory_MB"),
            ..StepRecord::default()
        });
        if run.static_bytes.is_none() {
            run.static_bytes = mb(it, "static_memory_MB");
        }
        if run.theoretical_bytes.is_none() {
            run.theoretical_bytes = mb(it, "theoretical_memory_MB");
        }
    }
    run.steps.sort_by_key(|s| s.step);
    Ok(run)
}

/// JSON Lines: memograph-capture's step records or torchtitan's metric rows.
pub(super) fn json_lines(text: &str) -> Result<Vec<StepRun>, String> {
    let mut by_rank: BTreeMap<Option<u32>, StepRun> = BTreeMap::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("line {} is not JSON ({e})", k + 1))?;
        let Some(o) = v.as_object() else {
            return Err(format!("line {} is not a JSON object", k + 1));
        };
        let capture =
            o.contains_key("allocated_peak_bytes") || o.contains_key("reserved_peak_bytes");
        let titan = o.keys().any(|key| key.starts_with("memory/"));
        if !capture && !titan {
            continue;
        }
        let step = o
            .get("step")
            .and_then(u64_of)
            .ok_or_else(|| format!("line {} has no step", k + 1))?;
        let rank = o.get("rank").and_then(|r| r.as_u64()).map(|r| r as u32);
        let run = by_rank.entry(rank).or_insert_with(|| StepRun {
            rank,
            format: if capture {
                "memograph-capture"
            } else {
                "torchtitan"
            },
            ..StepRun::default()
        });
        let int = |key: &str| o.get(key).and_then(u64_of);
        let gib = |key: &str| o.get(key).and_then(f64_of).and_then(|v| to_bytes(v, GIB));
        run.steps.push(if capture {
            StepRecord {
                step,
                time: o.get("time").and_then(f64_of),
                allocated_bytes: int("allocated_bytes"),
                peak_allocated_bytes: int("allocated_peak_bytes"),
                reserved_bytes: int("reserved_bytes"),
                peak_reserved_bytes: int("reserved_peak_bytes"),
                alloc_retries: int("alloc_retries"),
                ooms: int("ooms"),
            }
        } else {
            StepRecord {
                step,
                time: o
                    .get("time")
                    .or_else(|| o.get("timestamp"))
                    .and_then(f64_of),
                peak_allocated_bytes: gib("memory/max_active(GiB)"),
                peak_reserved_bytes: gib("memory/max_reserved(GiB)"),
                alloc_retries: int("memory/num_alloc_retries"),
                ooms: int("memory/num_ooms"),
                ..StepRecord::default()
            }
        });
    }
    Ok(by_rank.into_values().collect())
}
