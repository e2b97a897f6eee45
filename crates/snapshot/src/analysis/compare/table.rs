//! The peak table: a row per run against a baseline, written out as Markdown, CSV or aligned text
//! (in blocks of columns where a terminal is narrower than the table).

use super::Digest;

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

/// A column of a table whose headings are known in advance: its heading, and whether its cells are
/// numbers (right-aligned) or text.
#[derive(Debug, Clone, Copy)]
pub enum Column {
    Text(&'static str),
    Number(&'static str),
}

impl Table {
    /// A table of fixed `columns` (headings and alignment side by side, so they cannot drift apart).
    pub fn new(columns: &[Column], rows: Vec<Vec<String>>) -> Table {
        let (header, numeric) = columns
            .iter()
            .map(|c| match *c {
                Column::Text(h) => (h.to_string(), false),
                Column::Number(h) => (h.to_string(), true),
            })
            .unzip();
        Table {
            header,
            rows,
            numeric,
        }
    }

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
/// fits (see [`fit`](crate::analysis::fit::fit)), components at the peak, the largest allocation, allocations,
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
    let components = crate::analysis::report::Component::ALL;
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
                let fit = crate::analysis::fit::fit(d, limit);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_wider_than_the_terminal_comes_in_blocks_led_by_the_names() {
        use Column::{Number, Text};
        let table = Table::new(
            &[
                Text("file"),
                Number("peak"),
                Number("reserved"),
                Number("parameters"),
                Text("OOM"),
            ],
            vec![
                ["a.pickle", "1.0 GiB", "2.0 GiB", "0 B", "OOM"]
                    .map(String::from)
                    .to_vec(),
                ["bb.pickle", "10.0 GiB", "12.0 GiB", "0 B", ""]
                    .map(String::from)
                    .to_vec(),
            ],
        );
        assert_eq!(table.numeric, [false, true, true, true, false]);
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
}
