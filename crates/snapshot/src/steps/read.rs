//! Telling step records from snapshots by their first bytes, and reading a file of them: text (plain
//! or gzip) handed to the reader of its format, the run named from its file.

use std::io::Read;

use regex_lite::Regex;

use super::csv::{csv, is_step_header};
use super::json::{json_document, json_lines};
use super::log::{log_lines, torchtitan_line};
use super::{StepFile, StepRun, TEXT_ENDINGS};
use crate::analysis::compare::config_from_name;

/// Whether the first bytes of a file look like step records rather than a snapshot (the page asks
/// before choosing how to read a file).
pub fn looks_like_steps(head: &[u8]) -> bool {
    let mut out = Vec::new();
    let bytes = if crate::is_gzip(head) {
        let _ = flate2::read::MultiGzDecoder::new(head)
            .take(1 << 16)
            .read_to_end(&mut out);
        &out[..]
    } else {
        &head[..head.len().min(1 << 16)]
    };
    // Text has no NUL byte; a program's strings may hold a mark (memograph's own does), and a
    // pickle's are all binary.
    if bytes.contains(&0) {
        return false;
    }
    let text = String::from_utf8_lossy(bytes);
    // A spreadsheet's CSV starts with a byte-order mark, which `read_steps` skips too.
    let text = text.trim_start_matches('\u{feff}');
    if text.contains("\"device_traces\"") || text.contains("\"segments\"") {
        return false;
    }
    const MARKS: [&str; 13] = [
        "\"allocated_peak_bytes\"",
        "\"reserved_peak_bytes\"",
        "\"static_memory_bytes\"",
        "\"first_step\"",
        // memograph-capture's manifest as it is first written (the GPU, before any step).
        "\"total_memory_bytes\"",
        "memory/max_active",
        "memory/max_reserved",
        "device_mem_stats",
        "allocated_memory_MB",
        "memory (MB) | allocated:",
        "mem-max-allocated-gigabytes",
        "Theoretical memory footprints",
        "peak_allocated_MB",
    ];
    MARKS.iter().any(|m| text.contains(m))
        || torchtitan_line().is_match(text)
        || text.lines().next().is_some_and(is_step_header)
}

/// Reads a step-record file (plain or gzip) named `file`. Errors are one line naming what is wrong
/// (`entry 12 has no step`); the caller names the file.
pub fn read_steps(file: &str, bytes: &[u8]) -> Result<StepFile, String> {
    if bytes.first() == Some(&0x80) {
        return Err(
            "a pickle (a memory snapshot?), not step records (memograph summary and report \
                    read snapshots)"
                .into(),
        );
    }
    let text = if crate::is_gzip(bytes) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .take(crate::MAX_GZIP_RATIO.saturating_mul(bytes.len() as u64 + (1 << 20)))
            .read_to_end(&mut out)
            .map_err(|e| format!("not valid gzip ({e})"))?;
        String::from_utf8(out).map_err(|_| "not text (UTF-8)".to_string())?
    } else {
        String::from_utf8(bytes.to_vec()).map_err(|_| "not text (UTF-8)".to_string())?
    };
    let text = text.trim_start_matches('\u{feff}');
    if text.contains("\"device_traces\"") && text.contains("\"segments\"") {
        return Err(
            "a memory snapshot, not step records (memograph summary and report read it)".into(),
        );
    }
    let trimmed = text.trim_start();
    let document = (trimmed.starts_with('{') || trimmed.starts_with('['))
        .then(|| serde_json::from_str::<serde_json::Value>(text));
    let mut runs = if let Some(Ok(value)) = document.as_ref().filter(|d| {
        // One step record alone is JSON Lines of one line.
        d.as_ref().is_ok_and(|v| !is_record(v))
    }) {
        return json_document(file, value);
    } else if trimmed.starts_with('{') {
        json_lines(text)?
    } else if matches!(document, Some(Err(_))) && !log_like(text) {
        let Some(Err(e)) = document else {
            unreachable!()
        };
        return Err(format!("not valid JSON ({e})"));
    } else if text.lines().next().is_some_and(is_step_header) {
        vec![csv(text)?]
    } else {
        log_lines(text)?
    };
    if runs.iter().all(|r| r.steps.is_empty()) && runs.iter().all(|r| r.theoretical_bytes.is_none())
    {
        return Err(
            "no step records found (expected memograph-capture, torchtitan, Megatron-LM \
                    or CSV step records)"
                .into(),
        );
    }
    for r in &mut runs {
        name_run(r, file);
    }
    Ok(StepFile::Runs(runs))
}

/// The run's name and config from its file name (rank from the name when the input had none).
pub(crate) fn name_run(run: &mut StepRun, file: &str) {
    run.file = file.to_string();
    let from_name = config_from_name(file);
    if run.rank.is_none() {
        run.rank = from_name.get("rank").and_then(|r| r.parse().ok());
    }
    for (k, v) in from_name {
        run.config.entry(k).or_insert(v);
    }
    if let Some(r) = run.rank {
        run.config.insert("rank".into(), r.to_string());
    }
    run.simulated |= file.contains("memory_traces_scaling");
    let (dir, base) = match file.rsplit_once(['/', '\\']) {
        Some((d, b)) => (Some(d.rsplit(['/', '\\']).next().unwrap_or(d)), b),
        None => (None, file),
    };
    let stem = TEXT_ENDINGS
        .iter()
        .chain(&crate::names::PICKLE_ENDINGS)
        .fold(base.trim_end_matches(".gz"), |s, e| s.trim_end_matches(e));
    static RANK: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let rank = RANK.get_or_init(|| Regex::new(r"(?i)_?rank[_-]?\d+_?").expect("valid"));
    let stem = rank.replace_all(stem, "_");
    let stem = stem.trim_matches('_');
    let stem = if stem.is_empty() { "run" } else { stem };
    run.name = match dir {
        Some(d) => format!("{d}/{stem}"),
        None => stem.to_string(),
    };
}

/// Whether a JSON value is one line of step records (capture's or torchtitan's).
pub(super) fn is_record(v: &serde_json::Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.contains_key("allocated_peak_bytes")
            || o.contains_key("reserved_peak_bytes")
            || o.keys().any(|k| k.starts_with("memory/"))
    })
}

/// Whether text that starts with `[` is a log (`[rank0]:`, `[2025-01-01 …]`) rather than a JSON array.
pub(super) fn log_like(text: &str) -> bool {
    let first = text.trim_start().lines().next().unwrap_or_default();
    let rest = first.trim_start_matches('[').trim_start();
    !(rest.starts_with('{') || rest.starts_with('[') || rest.starts_with(']') || rest.is_empty())
}
