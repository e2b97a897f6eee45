//! What is live at an event (by default the peak), as a call-stack tree with bytes and counts rolled up
//! at every level, and the largest live allocations with the user code that made them.

use super::compare::Column::{Number, Text};
use super::compare::Table;
use super::lifetimes::Lifetimes;
use super::stacks::{frame_text, is_plumbing, with_slashes};
use crate::model::{FrameId, Snapshot, StackId};

/// Frames of torch, Python's standard library, installed packages and C++ dispatch: hidden on request so
/// the user's own code is on top. Windows paths are matched with `/` for `\` ([`with_slashes`]).
pub fn is_framework(filename: &str, name: &str) -> bool {
    const PARTS: &[&str] = &[
        "/torch/",
        "site-packages/",
        "dist-packages/",
        "/lib/python3",
        // Windows' standard library: `C:\…\Python311\Lib\contextlib.py`.
        "/Lib/",
        "<frozen",
    ];
    let slashed = with_slashes(filename);
    let filename = &*slashed;
    const NATIVE: &[&str] = &[
        ".cpp", ".h", ".hpp", ".cu", ".cuh", ".cc", ".c", ".o", ".so", ".S",
    ];
    filename == "??"
        || filename.is_empty()
        || PARTS.iter().any(|p| filename.contains(p))
        || NATIVE.iter().any(|e| filename.ends_with(e))
        || filename.contains(".so.")
        || is_plumbing(filename, name)
}

/// The innermost frame of `stack` that is the user's own code, if any.
pub fn innermost_user_frame(snapshot: &Snapshot, stack: StackId) -> Option<FrameId> {
    snapshot.stack(stack).iter().copied().find(|&f| {
        let fr = snapshot.frame(f);
        !is_framework(snapshot.str(fr.filename), snapshot.str(fr.name))
    })
}

/// Deepest path of the tree; deeper stacks end in a `<N more frames>` node.
pub const MAX_DEPTH: usize = 512;

/// Where an allocation was made, in one line: the innermost user frame; for stacks with none (the autograd
/// engine's thread runs backward ops with C++ frames only) the op, as `BmmBackward0 (autograd)` or
/// `aten::bmm`; else the innermost frame that is not allocator plumbing.
pub fn allocation_site(snapshot: &Snapshot, stack: StackId) -> String {
    if stack == StackId::EMPTY {
        return "<allocated before recording began>".to_string();
    }
    if let Some(f) = innermost_user_frame(snapshot, stack) {
        return frame_text(snapshot, snapshot.frame(f));
    }
    let frames = snapshot.stack(stack);
    let names = frames.iter().map(|&f| snapshot.str(snapshot.frame(f).name));
    for name in names.clone() {
        if let Some(node) = between(name, "autograd::generated::", "::apply") {
            return format!("{node} (autograd)");
        }
        if let Some(op) = between(name, "at::_ops::", "::call") {
            return format!("aten::{op}");
        }
    }
    frames
        .iter()
        .map(|&f| snapshot.frame(f))
        .find(|fr| !is_plumbing(snapshot.str(fr.filename), snapshot.str(fr.name)))
        .map(|fr| frame_text(snapshot, fr))
        .unwrap_or_else(|| "<no frames>".to_string())
}

/// The identifier between `open` and `close` in a C++ function name, if both are there.
fn between<'a>(name: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = name.find(open)? + open.len();
    let len = name[start..].find(close)?;
    let ident = &name[start..start + len];
    (!ident.is_empty() && ident.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(ident)
}

/// One node of the tree: a frame (the root has none) and what is live beneath it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Node {
    pub frame: Option<String>,
    pub bytes: u64,
    pub count: u64,
    pub children: Vec<Node>,
    /// Indices into the lifetimes' allocations whose path ends at this node (the rest are beneath it).
    #[serde(skip)]
    pub allocations: Vec<u32>,
}

impl Node {
    fn new(frame: Option<String>) -> Node {
        Node {
            frame,
            bytes: 0,
            count: 0,
            children: Vec::new(),
            allocations: Vec::new(),
        }
    }

    /// A node of `bytes` in one allocation with `children` beneath it (the root where `frame` is
    /// empty): a tree written out by hand, as tests and diffs of made-up runs need.
    pub fn of(frame: &str, bytes: u64, children: Vec<Node>) -> Node {
        Node {
            frame: (!frame.is_empty()).then(|| frame.to_string()),
            bytes,
            count: 1,
            children,
            allocations: Vec::new(),
        }
    }

    /// Every allocation at or beneath this node.
    pub fn all_allocations(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.count as usize);
        let mut todo = vec![self];
        while let Some(n) = todo.pop() {
            out.extend_from_slice(&n.allocations);
            todo.extend(&n.children);
        }
        out
    }

    /// Merges, under every node, the children holding under `min_bytes` into one `<N smaller call
    /// paths>` child, so a report stays readable; bytes, counts and allocations are kept.
    pub fn prune(&mut self, min_bytes: u64) {
        let (keep, small): (Vec<Node>, Vec<Node>) = std::mem::take(&mut self.children)
            .into_iter()
            .partition(|c| c.bytes >= min_bytes);
        self.children = keep;
        for c in &mut self.children {
            c.prune(min_bytes);
        }
        if !small.is_empty() {
            let what = crate::format::count(
                small.len() as u64,
                "smaller call path",
                "smaller call paths",
            );
            let mut merged = Node::new(Some(format!("<{what}>")));
            for s in &small {
                merged.bytes += s.bytes;
                merged.count += s.count;
                merged.allocations.extend(s.all_allocations());
            }
            self.children.push(merged);
        }
    }

    /// The node at `path` (child indices from this node), if any.
    pub fn at(&self, path: &[usize]) -> Option<&Node> {
        path.iter().try_fold(self, |n, &k| n.children.get(k))
    }

    /// The frames along `path` (child indices from this node): a name for the node that another tree
    /// of the same snapshot (a link reopened) can find with [`Node::find`].
    pub fn frames_of(&self, path: &[usize]) -> Option<Vec<String>> {
        let mut node = self;
        let mut frames = Vec::with_capacity(path.len());
        for &k in path {
            node = node.children.get(k)?;
            frames.push(node.frame.clone().unwrap_or_default());
        }
        Some(frames)
    }

    /// The node reached by following children named `frames`, if any.
    pub fn find(&self, frames: &[String]) -> Option<&Node> {
        frames.iter().try_fold(self, |n, f| {
            n.children
                .iter()
                .find(|c| c.frame.as_deref() == Some(f.as_str()))
        })
    }
}

/// The live set at `event` as a tree from the outermost frame inwards. Plumbing frames are always left
/// out; `hide_framework` also leaves out framework frames. Children are sorted by bytes, largest first.
/// The root's bytes equal the live bytes at `event`.
pub fn live_set_tree(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    event: i64,
    hide_framework: bool,
) -> Node {
    live_set_tree_of(
        snapshot,
        lifetimes,
        &lifetimes.live_set_at(event),
        hide_framework,
    )
}

/// [`live_set_tree`] of the allocations `live` (the live set at an entry, which the caller has).
pub fn live_set_tree_of(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    live: &[u32],
    hide_framework: bool,
) -> Node {
    let mut root = Node::new(None);
    // Live sets hold many allocations from few stacks: each stack's route through the tree (the child
    // index at every level; children are only appended until the tree is sorted) is found once.
    let mut routes: foldhash::HashMap<StackId, Vec<usize>> = foldhash::HashMap::default();
    for &i in live {
        let a = &lifetimes.allocations[i as usize];
        if let std::collections::hash_map::Entry::Vacant(vacant) = routes.entry(a.stack) {
            let mut route = Vec::new();
            let mut node = &mut root;
            for text in tree_path(snapshot, a.stack, hide_framework) {
                let k = match node
                    .children
                    .iter()
                    .position(|c| c.frame.as_deref() == Some(text.as_str()))
                {
                    Some(k) => k,
                    None => {
                        node.children.push(Node::new(Some(text)));
                        node.children.len() - 1
                    }
                };
                route.push(k);
                node = &mut node.children[k];
            }
            vacant.insert(route);
        }
        let mut node = &mut root;
        node.bytes += a.size;
        node.count += 1;
        for &k in &routes[&a.stack] {
            node = &mut node.children[k];
            node.bytes += a.size;
            node.count += 1;
        }
        node.allocations.push(i);
    }
    sort(&mut root);
    root
}

/// Every allocation of `lifetimes` (live at any time) whose tree path begins with `path` (frames
/// outermost first, as [`live_set_tree`] names its nodes): what a call-stack tree's node stands for over
/// the whole trace. Sorted.
pub fn allocations_under(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    path: &[String],
    hide_framework: bool,
) -> Vec<u32> {
    let mut under: foldhash::HashMap<StackId, bool> = foldhash::HashMap::default();
    lifetimes
        .allocations
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            *under
                .entry(a.stack)
                .or_insert_with(|| tree_path(snapshot, a.stack, hide_framework).starts_with(path))
        })
        .map(|(i, _)| i as u32)
        .collect()
}

/// The tree path of a stack, outermost frame first: plumbing (and, with `hide_framework`, framework)
/// frames left out, at most [`MAX_DEPTH`] deep, never empty.
fn tree_path(snapshot: &Snapshot, stack: StackId, hide_framework: bool) -> Vec<String> {
    let frames = snapshot.stack(stack).iter().rev().filter(|&&f| {
        let fr = snapshot.frame(f);
        let (file, name) = (snapshot.str(fr.filename), snapshot.str(fr.name));
        let hidden = is_plumbing(file, name) || (hide_framework && is_framework(file, name));
        !hidden
    });
    let mut path: Vec<String> = frames
        .map(|&f| frame_text(snapshot, snapshot.frame(f)))
        .collect();
    if path.len() > MAX_DEPTH {
        // Bounds the recursion of sorting, pruning and printing the tree (stacks come from the file).
        let more = path.len() - (MAX_DEPTH - 1);
        path.truncate(MAX_DEPTH - 1);
        path.push(format!("<{more} more frames>"));
    }
    if path.is_empty() {
        path.push(allocation_site(snapshot, stack));
    }
    path
}

fn sort(node: &mut Node) {
    node.children
        .sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.frame.cmp(&b.frame)));
    for c in &mut node.children {
        sort(c);
    }
}

/// One of the largest live allocations.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Consumer {
    /// Index into the lifetimes' allocations.
    pub allocation: u32,
    pub name: String,
    pub bytes: u64,
    pub alloc_event: Option<u32>,
    /// `file:line:function` of the innermost user frame, else of the innermost non-plumbing frame.
    pub frame: String,
    /// Its category, when the caller classified it (see [`super::report`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

/// The `n` largest allocations live at `event`, largest first.
pub fn top_consumers(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    event: i64,
    n: usize,
) -> Vec<Consumer> {
    top_consumers_of(snapshot, lifetimes, &lifetimes.live_set_at(event), n)
}

/// [`top_consumers`] among the allocations `live` (the live set at an entry, which the caller has).
pub fn top_consumers_of(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    live: &[u32],
    n: usize,
) -> Vec<Consumer> {
    let mut live = live.to_vec();
    live.sort_by_key(|&i| (std::cmp::Reverse(lifetimes.allocations[i as usize].size), i));
    live.truncate(n);
    live.into_iter()
        .map(|i| {
            let a = &lifetimes.allocations[i as usize];
            let frame = allocation_site(snapshot, a.stack);
            Consumer {
                allocation: i,
                name: a.name(),
                bytes: a.size,
                alloc_event: a.alloc_event(),
                frame,
                category: None,
            }
        })
        .collect()
}

/// Top consumers (as a report lists them) as a table: rank, name, bytes, category, where allocated
/// (the innermost user frame) and the entry of the allocation.
pub fn consumers_table(consumers: &[Consumer]) -> Table {
    let rows = consumers
        .iter()
        .enumerate()
        .map(|(k, c)| {
            vec![
                (k + 1).to_string(),
                c.name.clone(),
                c.bytes.to_string(),
                c.category.clone().unwrap_or_default(),
                c.frame.clone(),
                c.alloc_event
                    .map_or("before the trace".into(), |e| e.to_string()),
            ]
        })
        .collect();
    Table::new(
        &[
            Number("rank"),
            Text("name"),
            Number("bytes"),
            Text("category"),
            Text("allocated at"),
            Number("alloc entry"),
        ],
        rows,
    )
}

/// The allocations live at `event` as a table, largest first: name (`b…_N`), address, size in bytes,
/// category (`of[i]` indexes `names`), where it was allocated, and the entry of its allocation. Its
/// sizes add up to the live bytes at `event`.
pub fn live_set_table(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    of: &[u16],
    names: &[String],
    event: i64,
) -> Table {
    let mut live = lifetimes.live_set_at(event);
    live.sort_by_key(|&i| (std::cmp::Reverse(lifetimes.allocations[i as usize].size), i));
    let rows = live
        .into_iter()
        .map(|i| {
            let a = &lifetimes.allocations[i as usize];
            vec![
                a.name(),
                format!("0x{:x}", a.addr),
                a.size.to_string(),
                names
                    .get(of.get(i as usize).copied().unwrap_or(0) as usize)
                    .cloned()
                    .unwrap_or_default(),
                allocation_site(snapshot, a.stack),
                a.alloc_event()
                    .map_or("before the trace".into(), |e| e.to_string()),
            ]
        })
        .collect();
    Table::new(
        &[
            Text("name"),
            Text("address"),
            Number("bytes"),
            Text("category"),
            Text("allocated at"),
            Number("alloc entry"),
        ],
        rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_merges_the_small_call_paths_into_one_counted_node() {
        let leaf = |frame: &str, bytes: u64, allocation: u32| Node {
            bytes,
            count: 1,
            allocations: vec![allocation],
            ..Node::new(Some(frame.into()))
        };
        let mut root = Node {
            bytes: 1_000_010,
            count: 4,
            children: vec![leaf("big.py:1:f", 1_000_000, 0), leaf("tiny.py:2:g", 4, 1)],
            ..Node::new(None)
        };
        root.prune(1_000);
        let names: Vec<&str> = root
            .children
            .iter()
            .flat_map(|c| c.frame.as_deref())
            .collect();
        assert_eq!(names, ["big.py:1:f", "<1 smaller call path>"]);
        root.children[0].children = vec![leaf("a.py:1:x", 3, 2), leaf("b.py:1:y", 3, 3)];
        root.prune(1_000);
        let merged = &root.children[0].children[0];
        assert_eq!(merged.frame.as_deref(), Some("<2 smaller call paths>"));
        assert_eq!((merged.bytes, merged.count), (6, 2));
        assert_eq!(merged.all_allocations(), [2, 3]);
    }
}
