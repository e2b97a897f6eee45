//! Text cut to fit a chart: a frame's tail, a run's name cut where it does not tell it from the
//! runs beside it.

/// Cuts `text` to `max` characters, keeping its end (a frame's function and line).
pub(crate) fn tail(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        text.to_string()
    } else {
        let kept: String = text.chars().skip(n - max + 1).collect();
        format!("…{kept}")
    }
}

/// `text` cut in its middle (`…`) to at most `max` characters: a run's label keeps the start of its
/// name and its figures at the end.
fn middle_cut(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let head = max.saturating_sub(1) * 2 / 5;
    let end = max.saturating_sub(1) - head;
    let start: String = text.chars().take(head).collect();
    let last: String = text.chars().skip(n - end).collect();
    format!("{start}…{last}")
}

/// Where each of `names` differs from the others: the characters past the longest beginning it
/// shares with another and before the longest ending it shares with another, widened to whole words
/// (`kk_memory_ctx128_forward.pickle` beside `…_fullstep.pickle`: `forward`), so that a name cut to
/// fit keeps what tells it apart. A name that shares nothing is all its own. Pairwise: for a legend's
/// dozen lines.
pub(crate) fn distinct_parts(names: &[&str]) -> Vec<(usize, usize)> {
    let chars: Vec<Vec<char>> = names.iter().map(|n| n.chars().collect()).collect();
    let shared = |x: &[char], y: &[char], from_end: bool| {
        let n = x.len().min(y.len());
        let at = |c: &[char], k: usize| if from_end { c[c.len() - 1 - k] } else { c[k] };
        (0..n).take_while(|&k| at(x, k) == at(y, k)).count()
    };
    let word = |c: &char| "_-./ ".contains(*c);
    chars
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let others = chars.iter().enumerate().filter(|&(j, _)| j != i);
            let begin = others.clone().map(|(_, o)| shared(c, o, false)).max();
            let end = others.map(|(_, o)| shared(c, o, true)).max();
            let begin = begin.unwrap_or(0);
            let end = end.unwrap_or(0).min(c.len() - begin);
            let a = c[..begin].iter().rposition(word).map_or(0, |k| k + 1);
            let b = c.len() - end;
            let b = c[b..].iter().position(word).map_or(c.len(), |k| b + k);
            (a, b)
        })
        .collect()
}

/// `name` cut to at most `max` characters keeping `keep` (a character range: what tells it from
/// the names beside it): first the end of what follows `keep`, then the middle of what precedes it
/// (its first characters stay), and only then `keep`'s own middle.
pub(crate) fn cut_keeping(name: &str, max: usize, (a, b): (usize, usize)) -> String {
    let chars: Vec<char> = name.chars().collect();
    let n = chars.len();
    if n <= max {
        return name.to_string();
    }
    let text = |r: std::ops::Range<usize>| chars[r].iter().collect::<String>();
    let (a, b) = (a.min(n), b.clamp(a.min(n), n));
    if b < max {
        return format!("{}…", text(0..max.saturating_sub(1)));
    }
    let (lead, tail) = (usize::from(a > 0), usize::from(b < n));
    let mark = |on: usize| if on == 1 { "…" } else { "" };
    let rest = max.saturating_sub(b - a + 1 + tail);
    if a > 0 && rest >= 1 {
        return format!("{}…{}{}", text(0..rest), text(a..b), mark(tail));
    }
    let inner = middle_cut(&text(a..b), max.saturating_sub(lead + tail));
    format!("{}{inner}{}", mark(lead), mark(tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_labels_keep_their_end() {
        assert_eq!(tail("abcdef", 4), "…def");
        assert_eq!(tail("abc", 4), "abc");
    }

    #[test]
    fn a_cut_name_keeps_what_tells_it_from_the_others() {
        let names = [
            "kk_memory_ctx128_forward.pickle",
            "kk_memory_ctx128_fullstep.pickle",
        ];
        let keep = distinct_parts(&names);
        assert_eq!(keep, [(17, 24), (17, 25)]);
        // The shared ending goes first, then the shared beginning's middle.
        assert_eq!(
            cut_keeping(names[0], 26, keep[0]),
            "kk_memory_ctx128_forward.…"
        );
        assert_eq!(cut_keeping(names[0], 16, keep[0]), "kk_memo…forward…");
        assert_eq!(cut_keeping(names[1], 16, keep[1]), "kk_mem…fullstep…");
        // Words: "enable" and "disable" share "able", which stays with each.
        let names = ["cache_enable.pickle", "cache_disable.pickle"];
        let keep = distinct_parts(&names);
        assert_eq!(cut_keeping(names[1], 12, keep[1]), "cac…disable…");
        // Ranks: the number is in the first word.
        let names = ["rank0_snapshot.pickle", "rank12_snapshot.pickle"];
        let keep = distinct_parts(&names);
        assert_eq!(keep, [(0, 5), (0, 6)]);
        assert_eq!(cut_keeping(names[1], 9, keep[1]), "rank12_s…");
        // Alone, or where the part to keep is longer than the room: its middle goes.
        assert_eq!(distinct_parts(&["magma.pickle"]), [(0, 12)]);
        assert_eq!(cut_keeping("short", 8, (0, 5)), "short");
        assert_eq!(
            cut_keeping("kk_memory_ctx128_fullstep.pickle", 12, (0, 32)),
            "kk_m….pickle"
        );
        assert_eq!(
            cut_keeping("x_a_very_long_distinct_part_y", 12, (2, 27)),
            "…a_v…t_part…"
        );
        // Names the same but for their case or an ending of their own.
        assert_eq!(distinct_parts(&["run", "run"]), [(0, 3), (0, 3)]);
        assert_eq!(distinct_parts(&["run", "run.1"]), [(0, 3), (0, 5)]);
        // Each against the name it is most like.
        let names = ["kk_ctx128_forward", "kk_ctx128_fullstep", "magma"];
        assert_eq!(distinct_parts(&names), [(10, 17), (10, 18), (0, 5)]);
    }
}
