//! The diff of two runs written out: as text for a terminal (`memograph diff`), or as Markdown to paste
//! into an issue or a pull request (`memograph diff --markdown`, the Compare view's "Copy as
//! Markdown"). One writer, so the two say the same.

use std::fmt::Write as _;

use super::table::Column::{Number, Text};
use super::{grown_sites, DiffNode, Digest, Presence, SiteDelta, Table};
use crate::format::{self, at_entry, bytes, ratio, signed_bytes};

/// The call paths that grew, listed at most.
pub const GROWN_LISTED: usize = 10;

/// Levels of the tree written at most.
const DEPTH: usize = 14;

/// Where a side's live set was taken: `cuda:0, its peak at entry 6 278`, or `cuda:0 at entry 99`
/// where another entry was picked.
pub fn taken_at(d: &Digest) -> String {
    match d.live_entry {
        Some(e) if e != d.peak_event_index => format!("cuda:{} {}", d.device, at_entry(e)),
        _ => format!(
            "cuda:{}, its peak {}",
            d.device,
            at_entry(d.peak_event_index)
        ),
    }
}

/// The call paths that grew (as [`grown_sites`] gives them, most growth first): a line each,
/// `A → B  (+Δ, ×ratio)  path`, indented under a heading of the caller's, or a Markdown table.
pub fn grown_text(sites: &[SiteDelta], markdown: bool) -> String {
    let ratio_of = |s: &SiteDelta| s.ratio.map_or("new".to_string(), ratio);
    if markdown {
        let rows = sites
            .iter()
            .map(|s| {
                vec![
                    bytes(s.a_bytes),
                    bytes(s.b_bytes),
                    format!("+{}", bytes(s.delta_bytes.unsigned_abs())),
                    ratio_of(s),
                    format!("`{}`", s.site),
                ]
            })
            .collect();
        let columns = [
            Number("A"),
            Number("B"),
            Number("Δ"),
            Number("×"),
            Text("call path"),
        ];
        return Table::new(&columns, rows).markdown();
    }
    let mut o = String::new();
    for s in sites {
        let _ = writeln!(
            o,
            "  {:>10} → {:>10}  (+{}, {})  {}",
            bytes(s.a_bytes),
            bytes(s.b_bytes),
            bytes(s.delta_bytes.unsigned_abs()),
            ratio_of(s),
            s.site
        );
    }
    o
}

/// A line of the written tree: a node (at a depth, and whether its children are written), or the
/// sum of a level's smaller changes.
enum Line<'a> {
    Node(&'a DiffNode, usize, bool),
    Smaller {
        count: usize,
        a: u64,
        b: u64,
        delta: i64,
        depth: usize,
    },
}

/// The diff tree under a heading line (A, B, delta, call path), two spaces per level, down to changes
/// of at least 0.5 % of the larger total (or 14 levels). The rest of each level's changes are summed
/// on one line, or, where that is one change, written as that change's own line (without its
/// children, smaller still). A path whose total held is written for what moved beneath it, and says
/// so.
pub fn tree_text(root: &DiffNode) -> String {
    let mut o = format!(
        "{:>11} {:>11} {:>12}  call path (framework frames hidden; + new, - vanished)\n",
        "A", "B", "delta"
    );
    let total = root.a_bytes.max(root.b_bytes).max(1);
    let shown = |n: &DiffNode| n.moved_bytes.saturating_mul(200) >= total;
    let row = |o: &mut String, (a, b, delta): (u64, u64, i64), depth: usize, text: &str| {
        let _ = writeln!(
            o,
            "{:>11} {:>11} {:>12}  {}{text}",
            bytes(a),
            bytes(b),
            signed_bytes(delta),
            "  ".repeat(depth)
        );
    };
    let mut todo = vec![Line::Node(root, 0, true)];
    while let Some(line) = todo.pop() {
        let (n, depth, expand) = match line {
            Line::Smaller {
                count,
                a,
                b,
                delta,
                depth,
            } => {
                let text = format::count(count as u64, "smaller change", "smaller changes");
                row(&mut o, (a, b, delta), depth, &format!("<{text}>"));
                continue;
            }
            Line::Node(n, depth, expand) => (n, depth, expand),
        };
        let mark = match n.presence {
            Presence::New => "+ ",
            Presence::Vanished => "- ",
            Presence::Both => "",
        };
        let frame = n.frame.as_deref().unwrap_or("<all live memory>");
        let moved = n
            .moved_beneath()
            .map_or(String::new(), |m| format!("  ({} moved beneath)", bytes(m)));
        let text = format!("{mark}{frame}{moved}");
        row(&mut o, (n.a_bytes, n.b_bytes, n.delta_bytes), depth, &text);
        if depth >= DEPTH || !expand {
            continue;
        }
        let hidden: Vec<&DiffNode> = n.children.iter().filter(|c| !shown(c)).collect();
        if let [lone] = hidden[..] {
            if lone.moved_bytes != 0 {
                todo.push(Line::Node(lone, depth + 1, false));
            }
        } else if hidden.iter().any(|c| c.moved_bytes != 0) {
            // Written after the shown children: pushed first.
            todo.push(Line::Smaller {
                count: hidden.len(),
                a: hidden.iter().map(|c| c.a_bytes).sum(),
                b: hidden.iter().map(|c| c.b_bytes).sum(),
                delta: hidden.iter().map(|c| c.delta_bytes).sum(),
                depth: depth + 1,
            });
        }
        todo.extend(
            n.children
                .iter()
                .filter(|c| shown(c))
                .rev()
                .map(|c| Line::Node(c, depth + 1, true)),
        );
    }
    o
}

/// The whole diff of `a` and `b` (each at its `live_entry`, with `tree` = [`diff`](super::diff) of
/// their live sets): which files and entries, the live totals, the tree, and the call paths that grew.
/// As Markdown, the tree is a fenced block (its columns stay aligned) and the grown paths a table.
pub fn diff_text(a: &Digest, b: &Digest, tree: &DiffNode, markdown: bool) -> String {
    let mut o = String::new();
    let live = format!(
        "{} → {}  ({})",
        bytes(tree.a_bytes),
        bytes(tree.b_bytes),
        signed_bytes(tree.delta_bytes)
    );
    if markdown {
        let _ = write!(
            o,
            "- A `{}` ({})\n- B `{}` ({})\n- live: {live}\n\n```text\n{}```\n",
            a.file,
            taken_at(a),
            b.file,
            taken_at(b),
            tree_text(tree)
        );
    } else {
        let _ = write!(
            o,
            "A {}  ({})\nB {}  ({})\nlive: {live}\n\n{}",
            a.file,
            taken_at(a),
            b.file,
            taken_at(b),
            tree_text(tree)
        );
    }
    if let Some(line) = tree.unchanged_line() {
        let _ = writeln!(o, "\n{line}");
    }
    let mut grown = grown_sites(&a.sites, &b.sites);
    grown.truncate(GROWN_LISTED);
    if !grown.is_empty() {
        let heading = "Grew at the same call path:";
        let gap = if markdown { "\n" } else { "" };
        let _ = write!(o, "\n{heading}\n{gap}{}", grown_text(&grown, markdown));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::{diff, test_digest, Site};
    use crate::analysis::live_set::Node;

    /// A digest of one device holding `fwd` and `bwd` MiB under `main`, its live set taken at `at`.
    fn run(file: &str, fwd: u64, bwd: u64, at: Option<i64>) -> Digest {
        let mib = 1u64 << 20;
        let mut d = test_digest(file, (fwd + bwd) * mib, (fwd + bwd) * mib);
        d.peak_event_index = 7;
        d.live_entry = at;
        d.live_set = Node::of(
            "",
            (fwd + bwd) * mib,
            vec![Node::of(
                "main",
                (fwd + bwd) * mib,
                vec![
                    Node::of("fwd", fwd * mib, vec![]),
                    Node::of("bwd", bwd * mib, vec![]),
                ],
            )],
        );
        d.sites = [("fwd", fwd), ("bwd", bwd)]
            .map(|(site, b)| Site {
                site: site.to_string(),
                bytes: b * mib,
                count: 1,
            })
            .to_vec();
        d
    }

    #[test]
    fn the_diff_reads_the_same_as_text_and_as_markdown() {
        let (a, b) = (
            run("a.pickle", 700, 324, Some(7)),
            run("b.pickle", 100, 924, Some(3)),
        );
        let tree = diff(&a.live_set, &b.live_set);
        let squeeze = |s: &str| -> Vec<String> {
            s.lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect()
        };
        assert_eq!(
            squeeze(&diff_text(&a, &b, &tree, false)),
            [
                "A a.pickle (cuda:0, its peak at entry 7)",
                "B b.pickle (cuda:0 at entry 3)",
                "live: 1.0 GiB → 1.0 GiB (±0 B)",
                "",
                "A B delta call path (framework frames hidden; + new, - vanished)",
                "1.0 GiB 1.0 GiB ±0 B <all live memory> (600.0 MiB moved beneath)",
                "1.0 GiB 1.0 GiB ±0 B main (600.0 MiB moved beneath)",
                "324.0 MiB 924.0 MiB +600.0 MiB bwd",
                "700.0 MiB 100.0 MiB -600.0 MiB fwd",
                "",
                "Grew at the same call path:",
                "324.0 MiB → 924.0 MiB (+600.0 MiB, ×2.85) bwd",
            ]
        );
        let md = diff_text(&a, &b, &tree, true);
        assert!(
            md.starts_with(
                "- A `a.pickle` (cuda:0, its peak at entry 7)\n- B `b.pickle` (cuda:0 at entry 3)\n\
                 - live: 1.0 GiB → 1.0 GiB  (±0 B)\n\n```text\n"
            ),
            "{md}"
        );
        // The tree inside the fence is the text's, line for line.
        let fenced = md
            .split("```text\n")
            .nth(1)
            .and_then(|s| s.split("```").next());
        assert_eq!(fenced, Some(tree_text(&tree).as_str()));
        assert!(
            md.ends_with(
                "```\n\nGrew at the same call path:\n\n| A | B | Δ | × | call path |\n\
                 |---:|---:|---:|---:|---|\n| 324.0 MiB | 924.0 MiB | +600.0 MiB | ×2.85 | `bwd` |\n"
            ),
            "{md}"
        );
    }

    #[test]
    fn nothing_moved_is_said_once_and_nothing_grew_is_left_out() {
        let a = run("a.pickle", 700, 324, None);
        let tree = diff(&a.live_set, &a.live_set);
        for markdown in [false, true] {
            let o = diff_text(&a, &a, &tree, markdown);
            assert!(
                o.ends_with("\n\nEvery call path holds the same bytes in A and B.\n"),
                "{o}"
            );
            assert!(!o.contains("Grew"), "{o}");
            assert!(o.contains("(cuda:0, its peak at entry 7)"), "{o}");
        }
    }
}
