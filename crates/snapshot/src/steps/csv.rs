//! Any CSV (or TSV) with a step, iteration or epoch column and memory columns whose header names the
//! unit.

use super::{to_bytes, StepRecord, StepRun, GIB, MIB};

/// Which column of a CSV header is what, when it is a step table: (step column, memory columns as
/// (index, field, bytes per unit)).
type Columns = (usize, Vec<(usize, Field, f64)>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Allocated,
    PeakAllocated,
    Reserved,
    PeakReserved,
    Retries,
    Ooms,
}

/// Whether `header` is a step table's: a step, iteration or epoch column and memory columns.
pub(super) fn is_step_header(header: &str) -> bool {
    csv_columns(header).is_some()
}

fn csv_columns(header: &str) -> Option<Columns> {
    let cells = split_csv(header, delimiter(header));
    let lower: Vec<String> = cells
        .iter()
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let step = lower.iter().position(|c| {
        let c = c.trim_start_matches("train/");
        matches!(
            c,
            "step" | "steps" | "iteration" | "iter" | "epoch" | "global_step"
        )
    })?;
    let mut memory = Vec::new();
    for (k, c) in lower.iter().enumerate() {
        if k == step || c.contains("(%)") || c.contains("pct") || c.contains("percent") {
            continue;
        }
        let tokens: Vec<&str> = c
            .split(|ch: char| !ch.is_ascii_alphanumeric())
            .filter(|t| !t.is_empty())
            .collect();
        let has = |w: &str| tokens.iter().any(|t| t.contains(w));
        let field = if has("retr") {
            Field::Retries
        } else if has("oom") {
            Field::Ooms
        } else if has("reserved") {
            if has("max") || has("peak") {
                Field::PeakReserved
            } else {
                Field::Reserved
            }
        } else if has("allocated") || has("active") || has("memory") || has("mem") {
            if has("max") || has("peak") || !(has("allocated") || has("active")) {
                Field::PeakAllocated
            } else {
                Field::Allocated
            }
        } else {
            continue;
        };
        let unit = if matches!(field, Field::Retries | Field::Ooms) {
            1.0
        } else if tokens.iter().any(|t| matches!(*t, "gib" | "gb")) {
            GIB
        } else if tokens.iter().any(|t| matches!(*t, "mib" | "mb")) {
            MIB
        } else if tokens.iter().any(|t| matches!(*t, "kib" | "kb")) {
            1024.0
        } else {
            1.0
        };
        memory.push((k, field, unit));
    }
    (!memory.is_empty() && cells.len() > 1).then_some((step, memory))
}

/// What separates a CSV file's cells, from its header: a comma, else a tab (`sep='\t'`), else a
/// semicolon (a spreadsheet's export where the comma is the decimal mark).
pub(super) fn delimiter(header: &str) -> char {
    [',', '\t', ';']
        .into_iter()
        .find(|&d| header.contains(d))
        .unwrap_or(',')
}

/// Splits a CSV line on `delimiter` outside double quotes (quotes removed, `""` kept as one).
pub(super) fn split_csv(line: &str, delimiter: char) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cells.last_mut().expect("a cell").push('"');
            }
            '"' => quoted = !quoted,
            d if d == delimiter && !quoted => cells.push(String::new()),
            c => cells.last_mut().expect("a cell").push(c),
        }
    }
    cells
}

pub(super) fn csv(text: &str) -> Result<StepRun, String> {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let (step_col, memory) = csv_columns(header).ok_or("no step and memory columns")?;
    let delimiter = delimiter(header);
    let titan = header.contains("memory/");
    let mut run = StepRun {
        format: if titan { "torchtitan" } else { "csv" },
        ..StepRun::default()
    };
    for (k, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let cells = split_csv(line, delimiter);
        let row = k + 2;
        let step = cells
            .get(step_col)
            .map(|c| c.trim())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| format!("row {row} has no step"))?;
        let step = step
            .parse::<f64>()
            .ok()
            .filter(|s| *s >= 0.0)
            .ok_or_else(|| format!("row {row}: step '{step}' is not a number"))?
            .round() as u64;
        let mut r = StepRecord {
            step,
            ..StepRecord::default()
        };
        for &(col, field, unit) in &memory {
            let Some(cell) = cells.get(col).map(|c| c.trim()).filter(|c| !c.is_empty()) else {
                continue;
            };
            let value: f64 = cell.parse().map_err(|_| {
                format!("row {row}: '{cell}' in column {} is not a number", col + 1)
            })?;
            // NaN is how pandas and numpy write a missing figure; a negative or infinite one is no
            // amount of memory.
            if value.is_nan() {
                continue;
            }
            let bytes = Some(to_bytes(value, unit).ok_or_else(|| {
                format!(
                    "row {row}: '{cell}' in column {} is not an amount of memory",
                    col + 1
                )
            })?);
            match field {
                Field::Allocated => r.allocated_bytes = bytes,
                Field::PeakAllocated => r.peak_allocated_bytes = r.peak_allocated_bytes.or(bytes),
                Field::Reserved => r.reserved_bytes = bytes,
                Field::PeakReserved => r.peak_reserved_bytes = bytes,
                Field::Retries => r.alloc_retries = bytes,
                Field::Ooms => r.ooms = bytes,
            }
        }
        run.steps.push(r);
    }
    Ok(run)
}
