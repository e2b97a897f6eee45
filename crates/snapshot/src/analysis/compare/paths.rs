//! What differs between runs' call paths: the diff of two live sets as a call-stack tree whose deltas
//! add up exactly, and the call paths that grew.

use std::collections::HashMap;

use super::{delta, Site};
use crate::analysis::live_set::Node;

/// Whether a diff node's path exists in both live sets, or only in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Both,
    /// Only in B.
    New,
    /// Only in A.
    Vanished,
}

/// A node of the call-stack diff: one frame, what A and B hold beneath it, and the difference.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiffNode {
    pub frame: Option<String>,
    pub a_bytes: u64,
    pub b_bytes: u64,
    pub delta_bytes: i64,
    pub a_count: u64,
    pub b_count: u64,
    pub presence: Presence,
    /// The largest |delta| of this node or of any node beneath it: a path whose total is unchanged can
    /// still hold bytes that moved between its callees (`fwd` −4 GiB and `bwd` +4 GiB under `train`).
    pub moved_bytes: u64,
    /// Sorted by what moved beneath each ([`DiffNode::moved_bytes`]), largest first.
    pub children: Vec<DiffNode>,
}

impl DiffNode {
    /// The node at `path` (child indices from this node), if any.
    pub fn at(&self, path: &[usize]) -> Option<&DiffNode> {
        path.iter().try_fold(self, |n, &k| n.children.get(k))
    }

    /// What moved beneath a node whose own total held: `Some(moved_bytes)` where its delta is 0 but
    /// a call beneath it holds more or less in B (its ±0 would otherwise read as "nothing here").
    pub fn moved_beneath(&self) -> Option<u64> {
        (self.delta_bytes == 0 && self.moved_bytes > 0).then_some(self.moved_bytes)
    }

    /// The sentence to say under a diff (of this root) where no call path holds other bytes in B
    /// than in A, if none does: the CLI's `diff` and the page's Compare tree say it alike.
    pub fn unchanged_line(&self) -> Option<&'static str> {
        (self.moved_bytes == 0).then_some("Every call path holds the same bytes in A and B.")
    }

    /// The frames from this node down to the node at `path`, outermost first (the call path a node
    /// stands for, to find its allocations in either file with `live_set::allocations_under`).
    pub fn frames_to(&self, path: &[usize]) -> Option<Vec<String>> {
        let mut node = self;
        let mut frames = Vec::with_capacity(path.len());
        for &k in path {
            node = node.children.get(k)?;
            frames.push(node.frame.clone()?);
        }
        Some(frames)
    }
}

/// The call-stack diff of two live-set trees, matched frame by frame from the outermost. Every node's
/// delta is its B bytes minus its A bytes, and the root's is the difference of the two totals exactly.
pub fn diff(a: &Node, b: &Node) -> DiffNode {
    merge(Some(a), Some(b))
}

fn merge(a: Option<&Node>, b: Option<&Node>) -> DiffNode {
    let frame = a.or(b).and_then(|n| n.frame.clone());
    let (a_bytes, a_count) = a.map_or((0, 0), |n| (n.bytes, n.count));
    let (b_bytes, b_count) = b.map_or((0, 0), |n| (n.bytes, n.count));
    let presence = match (a, b) {
        (Some(_), None) => Presence::Vanished,
        (None, Some(_)) => Presence::New,
        _ => Presence::Both,
    };
    let mut children: Vec<DiffNode> = Vec::new();
    let b_children: &[Node] = b.map_or(&[], |n| &n.children);
    let mut b_by_frame: HashMap<Option<&str>, &Node> =
        b_children.iter().map(|c| (c.frame.as_deref(), c)).collect();
    for ac in a.map_or(&[][..], |n| &n.children[..]) {
        let bc = b_by_frame.remove(&ac.frame.as_deref());
        children.push(merge(Some(ac), bc));
    }
    // B's own children in B's order (the map only says which are left).
    for bc in b_children {
        if b_by_frame.remove(&bc.frame.as_deref()).is_some() {
            children.push(merge(None, Some(bc)));
        }
    }
    children.sort_by(|x, y| {
        y.moved_bytes
            .cmp(&x.moved_bytes)
            .then_with(|| {
                y.delta_bytes
                    .unsigned_abs()
                    .cmp(&x.delta_bytes.unsigned_abs())
            })
            .then_with(|| y.b_bytes.max(y.a_bytes).cmp(&x.b_bytes.max(x.a_bytes)))
            .then_with(|| x.frame.cmp(&y.frame))
    });
    let delta_bytes = delta(a_bytes, b_bytes);
    let moved_bytes = children
        .first()
        .map_or(0, |c| c.moved_bytes)
        .max(delta_bytes.unsigned_abs());
    DiffNode {
        frame,
        a_bytes,
        b_bytes,
        delta_bytes,
        a_count,
        b_count,
        presence,
        moved_bytes,
        children,
    }
}

/// Bytes allocated at one place in A and in B.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SiteDelta {
    pub site: String,
    pub a_bytes: u64,
    pub b_bytes: u64,
    pub delta_bytes: i64,
    /// B over A (`None` where A holds nothing there: a new path).
    pub ratio: Option<f64>,
}

/// The places whose live bytes grew from A to B, most growth first: which allocations scale with the
/// knob a sweep turns.
pub fn grown_sites(a: &[Site], b: &[Site]) -> Vec<SiteDelta> {
    let before: HashMap<&str, u64> = a.iter().map(|s| (s.site.as_str(), s.bytes)).collect();
    let mut grown: Vec<SiteDelta> = b
        .iter()
        .filter_map(|s| {
            let a_bytes = before.get(s.site.as_str()).copied().unwrap_or(0);
            (s.bytes > a_bytes).then(|| SiteDelta {
                site: s.site.clone(),
                a_bytes,
                b_bytes: s.bytes,
                delta_bytes: delta(a_bytes, s.bytes),
                ratio: (a_bytes > 0).then(|| s.bytes as f64 / a_bytes as f64),
            })
        })
        .collect();
    grown.sort_by(|x, y| {
        y.delta_bytes
            .cmp(&x.delta_bytes)
            .then_with(|| x.site.cmp(&y.site))
    });
    grown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_adds_up_and_marks_new_and_vanished_paths() {
        let a = Node::of(
            "",
            100,
            vec![Node::of(
                "train",
                100,
                vec![Node::of("fwd", 60, vec![]), Node::of("old", 40, vec![])],
            )],
        );
        let b = Node::of(
            "",
            250,
            vec![
                Node::of("train", 200, vec![Node::of("fwd", 200, vec![])]),
                Node::of("cache", 50, vec![]),
            ],
        );
        let d = diff(&a, &b);
        assert_eq!((d.a_bytes, d.b_bytes, d.delta_bytes), (100, 250, 150));
        assert_eq!(d.children[0].frame.as_deref(), Some("train"));
        assert_eq!(d.children[1].presence, Presence::New);
        let train = &d.children[0];
        assert_eq!(train.children[0].frame.as_deref(), Some("fwd"));
        assert_eq!(train.children[0].delta_bytes, 140);
        assert_eq!(train.children[1].presence, Presence::Vanished);
        assert_eq!(train.children[1].delta_bytes, -40);
        let sum: i64 = d.children.iter().map(|c| c.delta_bytes).sum();
        assert_eq!(sum, d.delta_bytes);
        assert_eq!(d.moved_bytes, 150);
        assert_eq!(train.moved_bytes, 140);
    }

    #[test]
    fn bytes_that_moved_under_an_unchanged_path_rank_it_first() {
        // `train` holds 100 in both, but 80 moved from `fwd` to `bwd`; `cache` grew by 10.
        let a = Node::of(
            "",
            110,
            vec![
                Node::of(
                    "train",
                    100,
                    vec![Node::of("fwd", 90, vec![]), Node::of("bwd", 10, vec![])],
                ),
                Node::of("cache", 10, vec![]),
            ],
        );
        let b = Node::of(
            "",
            120,
            vec![
                Node::of(
                    "train",
                    100,
                    vec![Node::of("fwd", 10, vec![]), Node::of("bwd", 90, vec![])],
                ),
                Node::of("cache", 20, vec![]),
            ],
        );
        let d = diff(&a, &b);
        let train = &d.children[0];
        assert_eq!(train.frame.as_deref(), Some("train"));
        assert_eq!((train.delta_bytes, train.moved_bytes), (0, 80));
        assert_eq!(d.children[1].frame.as_deref(), Some("cache"));
        assert_eq!((d.delta_bytes, d.moved_bytes), (10, 80));
        assert_eq!(train.moved_beneath(), Some(80));
        assert_eq!(d.moved_beneath(), None, "its own total changed");
        assert_eq!(d.unchanged_line(), None);
        // Beneath it, the two moves of 80 (a tie, by name).
        let moves: Vec<(&str, i64)> = train
            .children
            .iter()
            .map(|c| (c.frame.as_deref().unwrap_or(""), c.delta_bytes))
            .collect();
        assert_eq!(moves, [("bwd", 80), ("fwd", -80)]);
        // The same trees: nothing moved anywhere.
        assert_eq!(diff(&a, &a).moved_bytes, 0);
        assert_eq!(
            diff(&a, &a).unchanged_line(),
            Some("Every call path holds the same bytes in A and B.")
        );
        assert_eq!(diff(&a, &a).moved_beneath(), None);
    }
}
