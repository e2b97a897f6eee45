//! "Where the memory goes" as the view shows it: the visible rows of the live-set tree and the labels
//! around it.

use std::collections::HashSet;

use memograph_snapshot::analysis::live_set::Node;
use memograph_snapshot::format::percent;

/// One visible row of the call-stack tree.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeRow {
    /// Child indices from the root to this node.
    pub path: Vec<usize>,
    pub frame: String,
    pub bytes: u64,
    pub count: u64,
    /// Percent of the root's bytes.
    pub share: f64,
    pub open: bool,
    pub leaf: bool,
}

/// Rows shown at most, so a huge tree cannot freeze the page.
pub const MAX_TREE_ROWS: usize = 2000;

/// Whether the node at `path` is open: the largest chain is open six levels deep by default, and a
/// click toggles.
pub fn is_open(path: &[usize], toggled: &HashSet<Vec<usize>>) -> bool {
    let default = path.len() <= 6 && path.iter().all(|&k| k == 0);
    default != toggled.contains(path)
}

/// The rows of `root`'s tree that are visible with `toggled` nodes toggled, depth first, at most
/// [`MAX_TREE_ROWS`].
pub fn tree_rows(root: &Node, toggled: &HashSet<Vec<usize>>) -> Vec<TreeRow> {
    visible(
        root,
        |n| &n.children,
        |p| is_open(p, toggled),
        MAX_TREE_ROWS,
    )
    .into_iter()
    .map(|(path, n, open)| TreeRow {
        frame: n.frame.clone().unwrap_or_default(),
        bytes: n.bytes,
        count: n.count,
        share: percent(n.bytes, root.bytes),
        open,
        leaf: n.children.is_empty(),
        path,
    })
    .collect()
}

/// The visible nodes of a tree under `root` (which is not shown), depth first: each with its path
/// (child indices) and whether it is open (`open` says, by path); children of closed nodes are not
/// visited. At most `limit`, so a huge tree cannot freeze the page.
pub fn visible<N>(
    root: &N,
    children: fn(&N) -> &[N],
    open: impl Fn(&[usize]) -> bool,
    limit: usize,
) -> Vec<(Vec<usize>, &N, bool)> {
    let mut rows = Vec::new();
    let mut todo: Vec<(Vec<usize>, &N)> = children(root)
        .iter()
        .enumerate()
        .rev()
        .map(|(k, c)| (vec![k], c))
        .collect();
    while let Some((path, n)) = todo.pop() {
        if rows.len() >= limit {
            break;
        }
        let is_open = open(&path);
        if is_open {
            for (k, c) in children(n).iter().enumerate().rev() {
                let mut p = path.clone();
                p.push(k);
                todo.push((p, c));
            }
        }
        rows.push((path, n, is_open));
    }
    rows
}

/// `file.py:12:fn` with the directories dropped, for labels.
pub fn short_frame(frame: &str) -> String {
    match frame.rsplit_once(['/', '\\']) {
        Some((_, tail)) if !frame.starts_with('<') => tail.to_string(),
        _ => frame.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memograph_snapshot::{read_bytes, synth};

    fn tree() -> Node {
        let s = read_bytes(&synth::pickle(60).bytes).unwrap();
        let mut m = crate::view_model::DeviceModel::new(&s, 0);
        m.report(&s, (None, true)).live_set.clone()
    }

    #[test]
    fn the_largest_chain_is_open_and_every_row_sums_its_children() {
        let root = tree();
        let rows = tree_rows(&root, &HashSet::new());
        assert!(!rows.is_empty());
        assert!(rows[0].open && rows[0].path == vec![0]);
        let top: u64 = rows
            .iter()
            .filter(|r| r.path.len() == 1)
            .map(|r| r.bytes)
            .sum();
        assert_eq!(top, root.bytes);
        assert!(rows.iter().all(|r| r.share <= 100.0));
    }

    #[test]
    fn toggling_a_node_closes_it_and_hides_its_children() {
        let root = tree();
        let open = tree_rows(&root, &HashSet::new());
        let closed = tree_rows(&root, &HashSet::from([vec![0]]));
        assert!(!closed[0].open);
        assert!(closed.len() < open.len());
        assert!(closed.iter().all(|r| r.path.len() == 1));
    }

    #[test]
    fn labels_drop_directories_but_not_bracketed_names() {
        assert_eq!(
            short_frame("/a/b/models.py:174:update"),
            "models.py:174:update"
        );
        assert_eq!(
            short_frame("D:\\Dev\\cs336_basics\\model.py:39:forward"),
            "model.py:39:forward"
        );
        assert_eq!(
            short_frame("<3 smaller call paths>"),
            "<3 smaller call paths>"
        );
        assert_eq!(percent(1, 0), 0.0);
    }
}
