//! A line through points in device pixels, with the points that add nothing to its pixels left out: a
//! point where the line already is, and inside a straight (vertical or horizontal) run of points, all
//! but the first, the last and the farthest each way. The Compare chart's step curves of 300 runs are
//! 600 000 points, one canvas call each; on a chart a thousand pixels wide, many of a curve's steps
//! share a pixel column, and the runs they make need no more than four.

/// Puts in `out` (emptied first) the points of the line through `points` (device pixels) that its
/// pixels need: the line through them covers what the line through `points` covers (the same
/// segments, or a straight run's whole span drawn once).
pub fn simplify(points: &[(i32, i32)], out: &mut Vec<(i32, i32)>) {
    out.clear();
    let mut vertical = Vec::with_capacity(points.len());
    compact_runs(points, |p| p.0, |p| p.1, &mut vertical);
    compact_runs(&vertical, |p| p.1, |p| p.0, out);
}

/// Appends `points` to `out` with each run of consecutive points that share `line` (a column or a
/// row) cut to its first point, its lowest and highest `along` it (in the order they came) and its
/// last; repeated points once.
fn compact_runs(
    points: &[(i32, i32)],
    line: impl Fn((i32, i32)) -> i32,
    along: impl Fn((i32, i32)) -> i32,
    out: &mut Vec<(i32, i32)>,
) {
    let push = |p: (i32, i32), out: &mut Vec<(i32, i32)>| {
        if out.last() != Some(&p) {
            out.push(p);
        }
    };
    let mut i = 0;
    while i < points.len() {
        let on = line(points[i]);
        let run = points[i..].iter().take_while(|&&p| line(p) == on).count();
        let run = &points[i..i + run];
        i += run.len();
        if run.len() <= 3 {
            for &p in run {
                push(p, out);
            }
            continue;
        }
        // The lowest and highest, the first of equals.
        let (mut lo, mut hi) = (0, 0);
        for (k, &p) in run.iter().enumerate() {
            if along(p) < along(run[lo]) {
                lo = k;
            }
            if along(p) > along(run[hi]) {
                hi = k;
            }
        }
        let last = run.len() - 1;
        push(run[0], out);
        for k in [lo.min(hi), lo.max(hi)] {
            if k != 0 && k != last {
                push(run[k], out);
            }
        }
        push(run[last], out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simplified(points: &[(i32, i32)]) -> Vec<(i32, i32)> {
        let mut out = Vec::new();
        simplify(points, &mut out);
        out
    }

    /// The pixels a line through `points` covers, one pixel wide (each segment is vertical or
    /// horizontal in these tests).
    fn covered(points: &[(i32, i32)]) -> std::collections::BTreeSet<(i32, i32)> {
        let mut at = std::collections::BTreeSet::new();
        at.extend(points.first().copied());
        for w in points.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            assert!(x0 == x1 || y0 == y1, "only straight segments here");
            for x in x0.min(x1)..=x0.max(x1) {
                for y in y0.min(y1)..=y0.max(y1) {
                    at.insert((x, y));
                }
            }
        }
        at
    }

    #[test]
    fn a_step_curve_keeps_its_corners_and_its_pixels() {
        // Steps one column apart: every point is a corner, nothing to leave out.
        let steps = [(0, 10), (1, 10), (1, 5), (2, 5), (2, 8), (3, 8)];
        assert_eq!(simplified(&steps), steps);
    }

    #[test]
    fn steps_in_one_column_become_its_first_lowest_highest_and_last() {
        // Four steps that fall in column 5: up, down, up, down along it.
        let line = [
            (0, 10),
            (5, 10),
            (5, 3),
            (5, 3),
            (5, 12),
            (5, 7),
            (5, 1),
            (5, 9),
            (9, 9),
        ];
        let out = simplified(&line);
        assert_eq!(out, [(0, 10), (5, 10), (5, 12), (5, 1), (5, 9), (9, 9)]);
        assert_eq!(covered(&out), covered(&line));
    }

    #[test]
    fn a_flat_stretch_is_one_segment_and_repeats_go() {
        let line = [(0, 4), (1, 4), (1, 4), (2, 4), (3, 4), (7, 4), (7, 9)];
        let out = simplified(&line);
        assert_eq!(out, [(0, 4), (7, 4), (7, 9)]);
        assert_eq!(covered(&out), covered(&line));
    }

    #[test]
    fn a_single_point_and_nothing_stay_as_they_are() {
        assert_eq!(simplified(&[(3, 3)]), [(3, 3)]);
        assert_eq!(simplified(&[(3, 3), (3, 3)]), [(3, 3)]);
        assert!(simplified(&[]).is_empty());
    }

    #[test]
    fn any_axis_aligned_line_covers_the_same_pixels_with_at_most_as_many_points() {
        // A pseudo-random walk of straight moves, many in the same row or column.
        let mut seed = 0x2545_f491_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for _ in 0..200 {
            let mut p = (50, 50);
            let mut line = vec![p];
            for _ in 0..(next() % 40) {
                let d = (next() % 7) as i32 - 3;
                if next() % 3 == 0 {
                    p.0 += d.abs();
                } else {
                    p.1 += d;
                }
                line.push(p);
            }
            let out = simplified(&line);
            assert!(out.len() <= line.len());
            assert_eq!(covered(&out), covered(&line), "{line:?} → {out:?}");
            assert_eq!(out.first(), line.first());
            assert_eq!(out.last(), line.last());
        }
    }
}
