//! The Compare view as it shows: which rows take part, their order, the hover readout of the overlaid
//! curves, the diff tree's visible rows, and the component and category deltas. Plain data over the
//! engine's digests (`memograph_snapshot::analysis::compare`).

use std::collections::HashSet;
use std::sync::Arc;

use memograph_charts::{curve_points, CompareAxis};
use memograph_snapshot::analysis::compare::{DiffNode, Digest, Presence, Table};

/// A run's digest as the page holds it: made once, then shared by the store and every list of the
/// Compare view, never copied; two are equal when they are the same digest. A list of 300 runs was
/// copied whole (curves, live-set trees) at every change of which take part, and told unchanged
/// field by field.
#[derive(Clone, Debug)]
pub struct SharedDigest(Arc<Digest>);

impl SharedDigest {
    pub fn new(digest: Digest) -> SharedDigest {
        SharedDigest(Arc::new(digest))
    }
}

impl PartialEq for SharedDigest {
    fn eq(&self, other: &SharedDigest) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for SharedDigest {
    type Target = Digest;
    fn deref(&self) -> &Digest {
        &self.0
    }
}

impl std::borrow::Borrow<Digest> for SharedDigest {
    fn borrow(&self) -> &Digest {
        &self.0
    }
}

/// The digests of `rows`, borrowed (as the engine's analyses of several runs take them).
pub fn refs(rows: &[SharedDigest]) -> Vec<&Digest> {
    rows.iter().map(|d| &**d).collect()
}

/// A table's sort: the heading of the column (its name, not its place: columns come and go as runs and
/// a GPU's memory do) and whether largest first.
pub type SortBy = Option<(String, bool)>;

/// The rows of the peak table in the order a click on column `column` sorts them (`None`, or a column
/// the table no longer has: as they came); numbers sort as numbers. `table` must be the exact table of
/// the same digests, row for row.
pub fn sorted_order(table: &Table, column: &SortBy) -> Vec<usize> {
    let mut order: Vec<usize> = (0..table.rows.len()).collect();
    let Some((k, descending)) = column
        .as_ref()
        .and_then(|(h, d)| Some((table.header.iter().position(|x| x == h)?, *d)))
    else {
        return order;
    };
    let number = |s: &str| {
        s.trim_start_matches('+')
            .parse::<f64>()
            .unwrap_or(f64::NEG_INFINITY)
    };
    // Config columns of numbers (ctx 128, 1024) sort as numbers too.
    let cell = |r: usize| table.rows[r].get(k).map_or("", String::as_str);
    let numeric = table.numeric.get(k).copied().unwrap_or(false)
        || (0..table.rows.len()).all(|r| cell(r).parse::<f64>().is_ok());
    order.sort_by(|&a, &b| {
        let (x, y) = (cell(a), cell(b));
        let by = if numeric {
            number(x).total_cmp(&number(y))
        } else {
            x.cmp(y)
        };
        if descending {
            by.reverse()
        } else {
            by
        }
    });
    order
}

/// The bytes each curve holds at `x` (a step function: the last point at or before `x`), `None` where a
/// curve has not begun or cannot be placed on `axis`.
pub fn values_at(digests: &[&Digest], axis: &CompareAxis, x: f64) -> Vec<Option<u64>> {
    digests
        .iter()
        .map(|d| {
            let points = curve_points(d, axis);
            let k = points.partition_point(|p| p.0 <= x);
            (k > 0).then(|| points[k - 1].1)
        })
        .collect()
}

/// The chart's readout names every run up to this many.
pub const READOUT_ALL: usize = 12;

/// Which runs the chart's readout names, given what each holds at the pointer (`values_at`): all of a
/// few; of more, the 6 highest and the 3 lowest there, highest first (300 runs' values wrapped
/// into 60 lines that came and went as the pointer crossed the chart), with how many are left
/// out and the median of all.
pub fn readout_picks(values: &[Option<u64>]) -> (Vec<usize>, Option<(usize, Option<u64>)>) {
    if values.len() <= READOUT_ALL {
        return ((0..values.len()).collect(), None);
    }
    let mut by_value: Vec<(usize, u64)> = values
        .iter()
        .enumerate()
        .filter_map(|(k, v)| Some((k, (*v)?)))
        .collect();
    // Highest first; among equals, in the table's order.
    by_value.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let median = (!by_value.is_empty()).then(|| by_value[by_value.len() / 2].1);
    let mut picked: Vec<usize> = by_value.iter().take(6).map(|p| p.0).collect();
    let low = by_value.len().saturating_sub(3).max(picked.len());
    picked.extend(by_value[low..].iter().map(|p| p.0));
    let more = values.len() - picked.len();
    (picked, Some((more, median)))
}

/// The trace entry a curve shows at `x` (its last point at or before `x`; the first point before it).
pub fn entry_at(d: &Digest, axis: &CompareAxis, x: f64) -> Option<i64> {
    let points = curve_points(d, axis);
    if points.is_empty() {
        return None;
    }
    let k = points.partition_point(|p| p.0 <= x).max(1);
    // The points' x come from the curve's entries, in the same order.
    let entries: Vec<i64> = match axis {
        CompareAxis::Seconds if d.curve.time_us.is_empty() => return None,
        _ => d.curve.entries.clone(),
    };
    entries.get(k - 1).copied()
}

/// The `external_annotations` names every one of `digests` carries (for "align at").
pub fn common_marks(digests: &[&Digest]) -> Vec<String> {
    let Some(first) = digests.first() else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for (name, _) in &first.marks {
        if !names.contains(name)
            && digests
                .iter()
                .all(|d| d.marks.iter().any(|(n, _)| n == name))
        {
            names.push(name.clone());
        }
    }
    names
}

/// One visible row of the diff tree.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffRow {
    pub path: Vec<usize>,
    pub frame: String,
    pub a_bytes: u64,
    pub b_bytes: u64,
    pub delta_bytes: i64,
    pub presence: Presence,
    /// What moved beneath a row whose own total held ([`DiffNode::moved_beneath`]).
    pub moved_beneath: Option<u64>,
    pub open: bool,
    pub leaf: bool,
}

/// Rows shown at most.
pub const MAX_DIFF_ROWS: usize = 2000;

/// Whether the diff node at `path` is open: the chain of largest changes is open five levels deep by
/// default, and a click toggles.
pub fn is_open(path: &[usize], toggled: &HashSet<Vec<usize>>) -> bool {
    let default = path.len() <= 5 && path.iter().all(|&k| k == 0);
    default != toggled.contains(path)
}

/// The visible rows of the diff tree under `root`, depth first, at most [`MAX_DIFF_ROWS`].
pub fn diff_rows(root: &DiffNode, toggled: &HashSet<Vec<usize>>) -> Vec<DiffRow> {
    super::analysis::visible(
        root,
        |n| &n.children,
        |p| is_open(p, toggled),
        MAX_DIFF_ROWS,
    )
    .into_iter()
    .map(|(path, n, open)| DiffRow {
        frame: n.frame.clone().unwrap_or_default(),
        a_bytes: n.a_bytes,
        b_bytes: n.b_bytes,
        delta_bytes: n.delta_bytes,
        presence: n.presence,
        moved_beneath: n.moved_beneath(),
        open,
        leaf: n.children.is_empty(),
        path,
    })
    .collect()
}

/// A labelled pair of figures and their difference.
#[derive(Clone, Debug, PartialEq)]
pub struct Delta {
    pub label: String,
    pub a_bytes: u64,
    pub b_bytes: u64,
    pub delta_bytes: i64,
}

/// Components at the two peaks, side by side (every component, in the engine's order).
pub fn component_deltas(a: &Digest, b: &Digest) -> Vec<Delta> {
    a.components
        .iter()
        .map(|ca| {
            let b_bytes = b
                .components
                .iter()
                .find(|cb| cb.component == ca.component)
                .map_or(0, |cb| cb.bytes);
            delta_row(ca.component.label(), ca.bytes, b_bytes)
        })
        .collect()
}

/// Categories at the two peaks, side by side (those either holds), largest change first.
pub fn category_deltas(a: &Digest, b: &Digest) -> Vec<Delta> {
    let mut names: Vec<&str> = a.categories.iter().map(|c| c.category.as_str()).collect();
    for c in &b.categories {
        if !names.contains(&c.category.as_str()) {
            names.push(&c.category);
        }
    }
    let of = |d: &Digest, n: &str| {
        d.categories
            .iter()
            .find(|c| c.category == n)
            .map_or(0, |c| c.bytes)
    };
    let mut rows: Vec<Delta> = names
        .into_iter()
        .map(|n| delta_row(n, of(a, n), of(b, n)))
        .filter(|d| d.a_bytes > 0 || d.b_bytes > 0)
        .collect();
    rows.sort_by_key(|d| std::cmp::Reverse(d.delta_bytes.unsigned_abs()));
    rows
}

fn delta_row(label: &str, a_bytes: u64, b_bytes: u64) -> Delta {
    Delta {
        label: label.to_string(),
        a_bytes,
        b_bytes,
        delta_bytes: memograph_snapshot::analysis::compare::delta(a_bytes, b_bytes),
    }
}

/// The run B of the diff is when none is picked, against A (`rows[a]`): where A is one rank of a job,
/// the rank out of line (if it is not A's), else the rank whose peak is farthest from A's (two alike
/// ranks' diff says nothing, and a capture folder's other snapshots of A's own rank are seldom the
/// question); else the first other row.
pub fn default_b<D: std::borrow::Borrow<Digest>>(rows: &[D], a: usize) -> Option<usize> {
    use memograph_snapshot::analysis::compare::rank_sets;
    let first_other = (0..rows.len()).find(|&k| k != a);
    let rows: Vec<&Digest> = rows.iter().map(|d| d.borrow()).collect();
    let of = rows.get(a)?;
    let Some(rank) = of.config.get("rank").and_then(|r| r.parse::<u32>().ok()) else {
        return first_other;
    };
    let sets = rank_sets(&rows);
    // A's job: the set A is a run of.
    let job = sets.iter().find(|s| s.members.contains(&a));
    let Some(job) = job else {
        return first_other;
    };
    let strip = &job.strip;
    let run_of = |r: u32| {
        strip
            .peaks
            .iter()
            .position(|&(x, _)| x == r)
            .map(|i| strip.runs[i])
    };
    if let Some(out) = strip.outlier.filter(|&o| o != rank) {
        return run_of(out);
    }
    let farthest = strip
        .peaks
        .iter()
        .filter(|&&(r, _)| r != rank)
        // The lowest rank of those as far (`max_by_key` keeps the last).
        .rev()
        .max_by_key(|&&(_, b)| b.abs_diff(of.timeline_peak_bytes))
        .map(|&(r, _)| r);
    farthest.and_then(run_of).or(first_other)
}

/// Which ranks a strip of `ranks` bars labels: those whose rank is a multiple of the step this returns
/// (1, 2, 5, 10, 20, 25, 50, 100, then hundreds), so that labels of a few digits (about 24 pixels
/// with room) do not run into each other on a strip about a thousand pixels wide: 300 ranks labelled
/// each were a smear of digits. Every bar keeps its rank in its tooltip and accessible name.
pub fn rank_label_every(ranks: usize) -> u32 {
    const STEPS: [u32; 8] = [1, 2, 5, 10, 20, 25, 50, 100];
    let wanted = (ranks as f64 * 24.0 / 1000.0).ceil().max(1.0) as u32;
    STEPS
        .into_iter()
        .find(|&s| s >= wanted)
        .unwrap_or_else(|| wanted.div_ceil(100) * 100)
}

/// When the comparison was last redrawn while a batch of files was read: the time (ms) and how many
/// of the batch had ended then.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Redrawn {
    pub at_ms: f64,
    pub done: usize,
}

impl Redrawn {
    /// Nothing redrawn yet.
    pub const NONE: Redrawn = Redrawn {
        at_ms: f64::NEG_INFINITY,
        done: 0,
    };

    /// Whether the comparison is redrawn at `now_ms`, when `done` files of a batch have ended
    /// (`over`: all of them), and what is remembered if it is. A redraw costs in proportion to the runs
    /// (the table, the curves, the rank strips), so one per file would make a folder of hundreds
    /// quadratic. It is redrawn when the batch is over, when the runs ended have grown by a quarter
    /// since the last redraw (the first files show at once), or when a second has passed (big files,
    /// each seconds apart, show as they come).
    pub fn due(self, now_ms: f64, done: usize, over: bool) -> Option<Redrawn> {
        // A new batch began since (its count starts again).
        let then = if done < self.done { 0 } else { self.done };
        let due = over || done >= then + then.div_ceil(4).max(1) || now_ms - self.at_ms >= 1000.0;
        due.then_some(Redrawn {
            at_ms: now_ms,
            done: if over { 0 } else { done },
        })
    }
}

/// A table of more rows than this draws only those near its view ([`rows_in_view`]).
pub const DRAWN_ALL_UP_TO: usize = 100;
/// Rows drawn beyond each edge of the view, so that a step of the wheel or a Tab to the next row
/// finds it drawn.
const ROWS_BEYOND_VIEW: usize = 10;
/// The drawn rows start and end on multiples of this: a scroll changes them now and then, not at
/// every pixel.
const ROWS_STEP: usize = 8;

/// Which of a table's `rows` rows are drawn, when each is `row_height` pixels high and its scroller,
/// `view_height` high, is scrolled `scroll` down: all up to [`DRAWN_ALL_UP_TO`] rows (and while the
/// heights are not known), otherwise those in view and some beyond. At 300 runs the peak table's rows
/// were most of a click's work (a new baseline: each row's cells, then the table's layout and paint).
pub fn rows_in_view(
    rows: usize,
    row_height: f64,
    scroll: f64,
    view_height: f64,
) -> std::ops::Range<usize> {
    let known = |v: f64| v.is_finite() && v > 0.0;
    if rows <= DRAWN_ALL_UP_TO || !known(row_height) || !known(view_height) {
        return 0..rows;
    }
    let scroll = if scroll.is_finite() {
        scroll.max(0.0)
    } else {
        0.0
    };
    // Float to usize saturates (and is 0 for NaN): no overflow whatever the figures.
    let first = ((scroll / row_height).floor() as usize).saturating_sub(ROWS_BEYOND_VIEW);
    let last =
        (((scroll + view_height) / row_height).ceil() as usize).saturating_add(ROWS_BEYOND_VIEW);
    let start = (first / ROWS_STEP * ROWS_STEP).min(rows);
    let end = last
        .div_ceil(ROWS_STEP)
        .saturating_mul(ROWS_STEP)
        .clamp(start, rows);
    start..end
}

/// The names a batch of files picked or dropped together are shown by, where a folder of theirs is
/// shown under another name: the second of two folders of one name (two runs'
/// `memograph_snapshots`, picked one after the other) is shown numbered, `memograph_snapshots (2)`,
/// and its files with it; picked again, a folder keeps the name its files were shown under.
/// `batch`: each file's path (its folder first, where it came in one) and, for a file open,
/// compared or being read already, the name it is shown by; `in_use`: the names shown now. For
/// each file, its new name if it has one (never for a file seen already).
pub fn shown_paths(batch: &[(&str, Option<&str>)], in_use: &[String]) -> Vec<Option<String>> {
    use memograph_snapshot::names::{free_folder, top_folder};
    let top = |path: &str| top_folder(path).map(|(folder, _)| folder.to_string());
    let mut taken: HashSet<String> = in_use.iter().filter_map(|n| top(n)).collect();
    let mut folders: Vec<(&str, String)> = Vec::new();
    for (path, _) in batch {
        let Some((folder, _)) = top_folder(path) else {
            continue;
        };
        if folders.iter().any(|(f, _)| *f == folder) {
            continue;
        }
        let again = batch
            .iter()
            .filter(|(p, _)| top_folder(p).is_some_and(|(f, _)| f == folder))
            .find_map(|(_, seen)| seen.and_then(top));
        let shown = again.unwrap_or_else(|| free_folder(folder, |f| taken.contains(f)));
        taken.insert(shown.clone());
        folders.push((folder, shown));
    }
    batch
        .iter()
        .map(|(path, seen)| {
            let (folder, rest) = top_folder(path).filter(|_| seen.is_none())?;
            let shown = &folders.iter().find(|(f, _)| *f == folder)?.1;
            // The separator the path had.
            let sep = &path[folder.len()..path.len() - rest.len()];
            (shown != folder).then(|| format!("{shown}{sep}{rest}"))
        })
        .collect()
}

/// What changed from `was` to `now`, as one span: from `start`, `removed` items of `was` became `added`
/// items of `now` (what lies before and after it is the same in both). A list of 600 runs' names that
/// lost, gained or renamed one is changed in one place, not made anew.
pub fn changed_span<T: PartialEq>(was: &[T], now: &[T]) -> (usize, usize, usize) {
    let start = was.iter().zip(now).take_while(|(a, b)| a == b).count();
    let end = was[start..]
        .iter()
        .rev()
        .zip(now[start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    (start, was.len() - start - end, now.len() - start - end)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_second_folder_of_one_name_is_numbered_and_keeps_its_number_when_picked_again() {
        use super::shown_paths;
        let none = |n: usize| vec![None; n];
        // Nothing shown yet: every name as it came.
        assert_eq!(
            shown_paths(&[("snaps/rank0.pickle", None), ("loose.pickle", None)], &[]),
            none(2)
        );
        // Another run's `snaps` shown already: this one's is `snaps (2)`, all its files with it.
        let in_use = vec![
            "snaps/rank0.pickle".to_string(),
            "snaps/rank1.pickle".to_string(),
        ];
        assert_eq!(
            shown_paths(
                &[
                    ("snaps/rank0.pickle", None),
                    ("snaps\\sub\\rank1.pickle", None),
                    ("x.pickle", None)
                ],
                &in_use
            ),
            vec![
                Some("snaps (2)/rank0.pickle".to_string()),
                Some("snaps (2)\\sub\\rank1.pickle".to_string()),
                None
            ]
        );
        // `snaps (2)` taken too: `snaps (3)`.
        let mut more = in_use.clone();
        more.push("snaps (2)/rank0.pickle".to_string());
        assert_eq!(
            shown_paths(&[("snaps/rank0.pickle", None)], &more),
            vec![Some("snaps (3)/rank0.pickle".to_string())]
        );
        // The second folder picked again with a new file: the file it knows says where it is
        // shown, and the new one joins it there; the one seen already is not renamed.
        assert_eq!(
            shown_paths(
                &[
                    ("snaps/rank0.pickle", Some("snaps (2)/rank0.pickle")),
                    ("snaps/rank2.pickle", None)
                ],
                &more
            ),
            vec![None, Some("snaps (2)/rank2.pickle".to_string())]
        );
        // The first folder picked again with a new file: it stays `snaps`.
        assert_eq!(
            shown_paths(
                &[
                    ("snaps/rank0.pickle", Some("snaps/rank0.pickle")),
                    ("snaps/rank2.pickle", None)
                ],
                &more
            ),
            none(2)
        );
        // Two folders of one name in one drop can't be; two of other names keep theirs.
        assert_eq!(
            shown_paths(&[("a/r.pickle", None), ("b/r.pickle", None)], &in_use),
            none(2)
        );
    }

    #[test]
    fn shared_digests_are_equal_when_they_are_the_same_one() {
        use super::SharedDigest;
        let d = synth_digest("run.pickle", 2);
        let (a, b) = (SharedDigest::new(d.clone()), SharedDigest::new(d));
        assert_eq!(a, a.clone());
        assert_ne!(a, b, "equal fields, another digest");
        assert_eq!(a.file, b.file);
    }

    #[test]
    fn the_readout_of_many_runs_names_the_highest_and_lowest() {
        use super::readout_picks;
        // A few: all, in order.
        let few = [Some(5), None, Some(7)];
        assert_eq!(readout_picks(&few), (vec![0, 1, 2], None));
        // 300: six highest, three lowest, the rest counted, the median of all.
        let many: Vec<Option<u64>> = (0..300u64)
            .map(|k| if k == 7 { None } else { Some((k * 37) % 300) })
            .collect();
        let (picked, more) = readout_picks(&many);
        let shown: Vec<u64> = picked.iter().map(|&k| many[k].unwrap()).collect();
        assert_eq!(shown, [299, 298, 297, 296, 295, 294, 2, 1, 0]);
        assert_eq!(more, Some((291, Some(149))));
        // Ties keep the table's order; fewer values than picks: each once.
        let mut flat = vec![Some(4); 13];
        flat[12] = None;
        let (picked, more) = readout_picks(&flat);
        assert_eq!(picked, [0, 1, 2, 3, 4, 5, 9, 10, 11]);
        assert_eq!(more, Some((4, Some(4))));
        let sparse: Vec<Option<u64>> = (0..20).map(|k| (k < 4).then_some(k)).collect();
        let (picked, _) = readout_picks(&sparse);
        assert_eq!(picked, [3, 2, 1, 0]);
        let none = vec![None; 20];
        assert_eq!(readout_picks(&none), (vec![], Some((20, None))));
    }

    #[test]
    fn a_long_table_draws_the_rows_in_view_and_a_few_beyond() {
        use super::{rows_in_view, DRAWN_ALL_UP_TO};
        // Few rows: all, wherever it is scrolled.
        assert_eq!(
            rows_in_view(DRAWN_ALL_UP_TO, 24.0, 500.0, 600.0),
            0..DRAWN_ALL_UP_TO
        );
        // 300 rows of 24 px in 600 px: 25 in view.
        let top = rows_in_view(300, 24.0, 0.0, 600.0);
        assert_eq!(top.start, 0);
        assert!((35..=48).contains(&top.end), "{top:?}");
        let mid = rows_in_view(300, 24.0, 100.0 * 24.0, 600.0);
        assert!(
            mid.start <= 90 && mid.start >= 80 && mid.end >= 135 && mid.end <= 150,
            "{mid:?}"
        );
        let bottom = rows_in_view(300, 24.0, 300.0 * 24.0 - 600.0, 600.0);
        assert_eq!(bottom.end, 300);
        assert!(bottom.start <= 265, "{bottom:?}");
        // Scrolled a few pixels: the same rows (no redraw at every pixel).
        assert_eq!(rows_in_view(300, 24.0, 100.0 * 24.0 + 5.0, 600.0), mid);
        // Past the end (a table that shrank under its scroll), heights not known, figures absurd.
        let past = rows_in_view(300, 24.0, 1e9, 600.0);
        assert!(past.start <= past.end && past.end == 300);
        assert_eq!(rows_in_view(300, 0.0, 0.0, 600.0), 0..300);
        assert_eq!(rows_in_view(300, 24.0, 0.0, f64::NAN), 0..300);
        assert_eq!(rows_in_view(300, 24.0, f64::NAN, 600.0), top);
        assert_eq!(rows_in_view(300, 24.0, -50.0, 600.0), top);
        let huge = rows_in_view(usize::MAX, 1e-300, 1e300, 1e308);
        assert!(huge.start <= huge.end);
    }

    #[test]
    fn a_crowded_rank_strip_labels_every_tenth_rank_or_so() {
        let steps: Vec<u32> = [1, 8, 41, 42, 64, 100, 300, 1000, 2048, 9000]
            .into_iter()
            .map(super::rank_label_every)
            .collect();
        assert_eq!(steps, [1, 1, 1, 2, 2, 5, 10, 25, 50, 300]);
    }

    #[test]
    fn a_batch_of_hundreds_is_redrawn_a_few_dozen_times_and_its_first_files_at_once() {
        // 300 small files, 30 ms apart.
        let mut redrawn = super::Redrawn::NONE;
        let mut at = Vec::new();
        for done in 1..=300 {
            if let Some(r) = redrawn.due(done as f64 * 30.0, done, done == 300) {
                redrawn = r;
                at.push(done);
            }
        }
        assert_eq!(&at[..5], [1, 2, 3, 4, 5]);
        assert_eq!(at.last(), Some(&300));
        assert!(at.len() <= 40, "{at:?}");
        // Big files, seconds apart: each shows as it comes.
        let mut redrawn = super::Redrawn::NONE;
        for done in 1..=8 {
            redrawn = redrawn.due(done as f64 * 1500.0, done, done == 8).unwrap();
        }
        assert_eq!(redrawn.done, 0);
        // After a batch, the next one's first file shows at once.
        assert!(redrawn.due(12_001.0, 1, false).is_some());
    }

    use super::*;
    use memograph_snapshot::analysis::categories::Rules;
    use memograph_snapshot::analysis::compare::{diff, digests, peak_rows, peak_table};

    fn synth_digest(name: &str, steps: usize) -> Digest {
        let s = memograph_snapshot::read_bytes(&memograph_snapshot::synth::pickle(steps).bytes)
            .unwrap();
        digests(&s, &Rules::built_in(), name, 0).remove(0)
    }

    #[test]
    fn the_default_b_of_a_rank_is_the_rank_out_of_line_or_the_farthest() {
        let with_peak = |name: &str, peak: u64| {
            let mut d = synth_digest(name, 4);
            d.timeline_peak_bytes = peak;
            d
        };
        const G: u64 = 1 << 30;
        // Capture's folder: rank 0 at exit and at a peak, ranks 1 to 3, rank 2 out of line.
        let rows = vec![
            with_peak("run/rank0_exit_10.pickle", 10 * G),
            with_peak("run/rank0_peak_3.pickle", 10 * G),
            with_peak("run/rank1_exit_10.pickle", 10 * G),
            with_peak("run/rank2_exit_10.pickle", 14 * G),
            with_peak("run/rank3_exit_10.pickle", 10 * G + 1),
        ];
        assert_eq!(default_b(&rows, 0), Some(3));
        // A is a run of its rank other than the highest (rank 0's peak snapshot stands for it).
        let mut higher = rows.clone();
        higher[1].timeline_peak_bytes = 10 * G + 7;
        assert_eq!(default_b(&higher, 0), Some(3));
        // A is the one out of line: B is the rank farthest from it.
        assert_eq!(default_b(&rows, 3), Some(0));
        // Alike ranks, none out of line: the farthest from A.
        let alike = vec![
            with_peak("run/rank0_exit_10.pickle", 10 * G),
            with_peak("run/rank0_peak_3.pickle", 10 * G),
            with_peak("run/rank1_exit_10.pickle", 10 * G + 5),
            with_peak("run/rank2_exit_10.pickle", 10 * G + 9),
        ];
        assert_eq!(default_b(&alike, 0), Some(3));
        // Runs without ranks: the first other row.
        let plain = vec![
            with_peak("a_bs8.pickle", G),
            with_peak("b_bs16.pickle", 2 * G),
        ];
        assert_eq!(default_b(&plain, 1), Some(0));
        assert_eq!(default_b(&plain[..1], 0), None);
    }

    #[test]
    fn sorting_by_a_number_column_sorts_numbers_not_text() {
        let ds = vec![
            synth_digest("a_bs8.pickle", 40),
            synth_digest("b_bs16.pickle", 4),
            synth_digest("c_bs2.pickle", 12),
        ];
        let rows = peak_rows(&ds, 0);
        let table = peak_table(&rows, true, None);
        let peak = table
            .header
            .iter()
            .position(|h| h == "peak allocated")
            .unwrap();
        let order = sorted_order(&table, &Some((table.header[peak].clone(), true)));
        let peaks: Vec<u64> = order.iter().map(|&k| ds[k].timeline_peak_bytes).collect();
        assert!(peaks.windows(2).all(|w| w[0] >= w[1]), "{peaks:?}");
        let bs = table.header.iter().position(|h| h == "bs").unwrap();
        // A config column of numbers sorts as numbers ("16" after "8").
        assert_eq!(
            sorted_order(&table, &Some((table.header[bs].clone(), false))),
            vec![2, 0, 1]
        );
        assert_eq!(sorted_order(&table, &None), vec![0, 1, 2]);
        // A column the table no longer has (headroom, once the GPU's memory is cleared): as they came.
        assert_eq!(
            sorted_order(&table, &Some(("headroom".into(), true))),
            vec![0, 1, 2]
        );
    }

    #[test]
    fn the_readout_follows_each_curve_as_a_step() {
        let d = synth_digest("a.pickle", 20);
        let points = curve_points(&d, &CompareAxis::Fraction);
        let (x, b) = points[points.len() / 2];
        assert_eq!(values_at(&[&d], &CompareAxis::Fraction, x), vec![Some(b)]);
        assert_eq!(values_at(&[&d], &CompareAxis::Fraction, -0.5), vec![None]);
        // No marks in the synthetic run: it cannot be aligned at one.
        assert_eq!(
            values_at(&[&d], &CompareAxis::AtMark("x".into()), 0.0),
            vec![None]
        );
        assert!(common_marks(&[&d]).is_empty());
        let e = entry_at(&d, &CompareAxis::Fraction, x).unwrap();
        assert_eq!(d.curve.entries[points.len() / 2], e);
        assert_eq!(
            entry_at(&d, &CompareAxis::Fraction, -1.0),
            Some(d.curve.entries[0])
        );
    }

    #[test]
    fn diff_rows_open_the_largest_change_and_deltas_add_up() {
        let a = synth_digest("a.pickle", 8);
        let b = synth_digest("b.pickle", 30);
        let tree = diff(&a.live_set, &b.live_set);
        let rows = diff_rows(&tree, &HashSet::new());
        assert!(!rows.is_empty() && rows[0].open);
        let top: i64 = tree.children.iter().map(|c| c.delta_bytes).sum();
        assert_eq!(top, tree.delta_bytes);
        let comps = component_deltas(&a, &b);
        assert_eq!(
            comps.iter().map(|c| c.delta_bytes).sum::<i64>(),
            tree.delta_bytes
        );
        let cats = category_deltas(&a, &b);
        assert_eq!(
            cats.iter().map(|c| c.delta_bytes).sum::<i64>(),
            tree.delta_bytes
        );
        assert_eq!(memograph_snapshot::format::signed_bytes(-1024), "-1.0 KiB");
    }

    #[test]
    fn a_row_whose_total_held_says_what_moved_beneath_it() {
        use memograph_snapshot::analysis::live_set::Node;
        let run = |fwd: u64, bwd: u64| {
            Node::of(
                "",
                100,
                vec![Node::of(
                    "train",
                    100,
                    vec![Node::of("fwd", fwd, vec![]), Node::of("bwd", bwd, vec![])],
                )],
            )
        };
        let rows = diff_rows(&diff(&run(90, 10), &run(10, 90)), &HashSet::new());
        let moved: Vec<(&str, Option<u64>)> = rows
            .iter()
            .map(|r| (r.frame.as_str(), r.moved_beneath))
            .collect();
        assert_eq!(
            moved,
            [("train", Some(80)), ("bwd", None), ("fwd", None)],
            "the root is not a row; a leaf's own total changed"
        );
    }

    #[test]
    fn a_list_changes_in_one_span() {
        let list = |s: &str| s.chars().collect::<Vec<_>>();
        // One gone, one come, one renamed, one added at the end, nothing, everything.
        assert_eq!(changed_span(&list("abcde"), &list("abde")), (2, 1, 0));
        assert_eq!(changed_span(&list("abde"), &list("abcde")), (2, 0, 1));
        assert_eq!(changed_span(&list("abcde"), &list("abxde")), (2, 1, 1));
        assert_eq!(changed_span(&list("abc"), &list("abcd")), (3, 0, 1));
        assert_eq!(changed_span(&list("abc"), &list("abc")), (3, 0, 0));
        assert_eq!(changed_span(&list("abc"), &list("xyz")), (0, 3, 3));
        assert_eq!(changed_span(&list(""), &list("ab")), (0, 0, 2));
        assert_eq!(changed_span(&list("ab"), &list("")), (0, 2, 0));
        // Repeats: the span never runs past either list.
        assert_eq!(changed_span(&list("aaa"), &list("aa")), (2, 1, 0));
        assert_eq!(changed_span(&list("aa"), &list("aaa")), (2, 0, 1));
        // Applied, the span turns `was` into `now`.
        for (was, now) in [
            ("abcde", "axe"),
            ("abab", "ab"),
            ("b", "abba"),
            ("xay", "xaay"),
        ] {
            let (was, now) = (list(was), list(now));
            let (start, removed, added) = changed_span(&was, &now);
            let mut made = was.clone();
            made.splice(
                start..start + removed,
                now[start..start + added].iter().copied(),
            );
            assert_eq!(made, now);
        }
    }
}
