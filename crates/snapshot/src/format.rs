//! Human formatting shared by the CLI and the page.

/// `1.5 GiB`, `12.0 MiB`, `512 B`: binary units, one decimal.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut u = 0;
    // Up a unit also where one decimal would round to 1024.0 (`1024.0 TiB` reads as `1.0 PiB`).
    while v >= 1023.95 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// `1.5GiB`, `100 MB`, `4096`, `4 KiB` as bytes (MB, GB: binary, as PyTorch's own tools print them),
/// and whether a unit was given.
pub fn parse_size(text: &str) -> Option<(u64, bool)> {
    let t = text.trim().to_ascii_lowercase().replace(' ', "");
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|&k| k > 0)?;
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().ok()?;
    let scale = match unit.trim_end_matches('s') {
        "b" | "byte" => 1u64,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    };
    let bytes = value * scale as f64;
    (0.0..1.8e19)
        .contains(&bytes)
        .then_some((bytes.round() as u64, true))
}

/// A change in bytes: `+1.2 GiB`, `-3.0 MiB`, `±0 B`.
pub fn signed_bytes(delta: i64) -> String {
    let sign = match delta.signum() {
        1 => "+",
        -1 => "-",
        _ => "±",
    };
    format!("{sign}{}", bytes(delta.unsigned_abs()))
}

/// A ratio of two sizes as the comparisons show it, `×1.01`: two decimals under ten, so that a few
/// percent of growth does not read as `×1.0`, fewer above, and whole numbers grouped from a thousand
/// (`×185 002 496`, a run against a baseline of a few bytes).
pub fn ratio(x: f64) -> String {
    // Two decimals where they count; a run against a tiny baseline is thousands of times it.
    match x.abs() {
        a if a >= 1000.0 && x.is_finite() => format!("×{}", grouped(x.round() as u64)),
        a if a >= 100.0 => format!("×{x:.0}"),
        a if a >= 10.0 => format!("×{x:.1}"),
        _ => format!("×{x:.2}"),
    }
}

/// `1234567` → `1 234 567` (thin grouping that reads well in tables and tooltips).
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `part` as a percentage of `whole` (0 when `whole` is 0).
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// `1 run`, `2 runs`, `1 234 allocations`: a grouped count and its noun, singular for one.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

/// `1.5 KiB (1 536 bytes)`: the readable size and the exact count.
pub fn bytes_exact(n: u64) -> String {
    format!("{} ({})", bytes(n), count(n, "byte", "bytes"))
}

/// Where a trace entry stands, as every view and the CLI say it: `at entry 1 234`, or `before the first
/// entry` for the `-1` the analyses give the state before any entry (a peak there is memory allocated
/// before recording began, e.g. a snapshot whose trace holds one `snapshot` entry).
pub fn at_entry(event: i64) -> String {
    match u64::try_from(event) {
        Ok(e) => format!("at entry {}", grouped(e)),
        Err(_) => "before the first entry".to_string(),
    }
}

/// Time of entry `i` since the first entry, as the page and the CLI show it: `+1.234 s`. `None` when
/// `times` does not reach `i`.
pub fn seconds_since(times: &[i64], i: usize) -> Option<String> {
    let (t, t0) = (times.get(i)?, times.first()?);
    Some(format!("+{:.3} s", t.saturating_sub(*t0) as f64 / 1e6))
}

/// The decimals that tell axis ticks `step` apart (0 for a step of 1 or more, 1 for 0.1, …), at most
/// 6: every axis that zooms in (charts, the page's timeline) labels its ticks with these, so that
/// zoomed in they do not all read the same. 0 for a step that is no step (0, negative, not finite).
pub fn tick_decimals(step: f64) -> usize {
    if !(step > 0.0 && step.is_finite()) {
        return 0;
    }
    (-step.log10() - 1e-9).ceil().clamp(0.0, 6.0) as usize
}

/// A duration in microseconds as it reads best: `750 µs`, `12.5 ms`, `1.234 s`.
pub fn micros(us: i64) -> String {
    match us {
        us if us < 1_000 => format!("{us} µs"),
        us if us < 1_000_000 => format!("{:.1} ms", us as f64 / 1e3),
        us => format!("{:.3} s", us as f64 / 1e6),
    }
}

/// `text` with its first letter a capital (`At entry 3`, `Before the first entry`).
pub fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_get_the_decimals_their_step_needs() {
        assert_eq!(tick_decimals(10.0), 0);
        assert_eq!(tick_decimals(1.0), 0);
        assert_eq!(tick_decimals(0.1), 1);
        assert_eq!(tick_decimals(0.05), 2);
        assert_eq!(tick_decimals(0.01), 2);
        assert_eq!(tick_decimals(1e-13), 6);
        for nothing in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(tick_decimals(nothing), 0);
        }
    }

    #[test]
    fn counts_name_one_in_the_singular() {
        assert_eq!(count(1, "run", "runs"), "1 run");
        assert_eq!(count(0, "run", "runs"), "0 runs");
        assert_eq!(
            count(1_234, "allocation", "allocations"),
            "1 234 allocations"
        );
    }

    #[test]
    fn ratios_keep_two_decimals_under_ten_and_group_thousands() {
        assert_eq!(ratio(1.0), "×1.00");
        assert_eq!(ratio(1.014), "×1.01");
        assert_eq!(ratio(12.34), "×12.3");
        assert_eq!(ratio(240.4), "×240");
        assert_eq!(ratio(185_002_496.0), "×185 002 496");
    }

    #[test]
    fn entries_read_as_words_and_minus_one_as_before_the_first() {
        assert_eq!(at_entry(1_234_567), "at entry 1 234 567");
        assert_eq!(at_entry(0), "at entry 0");
        assert_eq!(at_entry(-1), "before the first entry");
    }

    #[test]
    fn times_read_as_seconds_since_the_first_entry() {
        assert_eq!(
            seconds_since(&[1_000, 2_501_000], 1).as_deref(),
            Some("+2.500 s")
        );
        assert_eq!(seconds_since(&[1_000], 3), None);
    }

    #[test]
    fn bytes_use_binary_units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(217763364), "207.7 MiB");
        // Never `1024.0` of a unit: what rounds there reads in the next one.
        assert_eq!(bytes((1 << 20) - 1), "1.0 MiB");
        assert_eq!(bytes((1 << 50) - (146 << 20)), "1.0 PiB");
        assert_eq!(bytes(1023 * 1024 + 900), "1023.9 KiB");
    }

    #[test]
    fn grouping_inserts_a_space_every_three_digits() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1 000");
        assert_eq!(grouped(217763364), "217 763 364");
    }

    #[test]
    fn exact_sizes_give_both_forms() {
        assert_eq!(bytes_exact(1536), "1.5 KiB (1 536 bytes)");
    }
}
