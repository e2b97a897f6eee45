//! The whole path of an opened file: read, every analysis on every device, the codec's round trip, the
//! timeline geometry at several detail levels and budgets with hit-tests over a viewport grid, and
//! a comparison's digests with the diff of the live sets at the peak and at the start. Nothing
//! panics, the codec gives back what it was given, geometry stays within its budget, and a diff's
//! deltas add up.
#![no_main]

use memograph_snapshot::analysis::categories::{categorize, category_totals, Rules};
use memograph_snapshot::analysis::compare::{
    diff, diff_text, digest_at, grown_sites, tree_text, DiffNode,
};
use memograph_snapshot::analysis::lifetimes::{event_versions, reserved_series, Lifetimes};
use memograph_snapshot::analysis::report::{report_of, ReportOptions};
use memograph_snapshot::analysis::timeline::{timeline_layout_within, RangeMax};
use memograph_snapshot::analysis::{efficiency, stats, summary};
use memograph_snapshot::model::Action;
use memograph_snapshot::{codec, read_bytes};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(s) = read_bytes(data) else {
        return;
    };
    let encoded = codec::encode(&s);
    assert_eq!(codec::sizes(&s).total, encoded.len());
    let back = codec::decode(&encoded).expect("the codec reads what it wrote");
    assert_eq!(codec::encode(&back), encoded);
    let _ = summary::summarize(&s);
    let rules = Rules::built_in();
    let names = rules.names();
    // The steps the profiler marks, as `memograph steps` reads a snapshot.
    let _ = memograph_snapshot::analysis::trace_steps::step_file("f.pickle", &s);
    for d in s.devices() {
        let _ = stats::segment_stats(&s, d);
        let _ = reserved_series(&s, d);
        let _ = event_versions(s.trace(d));
        let blocks = Lifetimes::of(&s, d);
        let of = categorize(&s, &blocks, &rules);
        let _ = efficiency::efficiency(&s, &blocks, d);
        let peak = blocks.peak();
        let _ = category_totals(&blocks, &of, &names, peak.event);
        let at_peak = digest_at(&s, &blocks, &rules, None);
        let at_start = digest_at(&s, &blocks, &rules, Some(0));
        let tree = diff(&at_start.live_set, &at_peak.live_set);
        adds_up(&tree);
        let _ = grown_sites(&at_start.sites, &at_peak.sites);
        // Written out, as `memograph diff` and the page's copy do: the same tree in both, fenced in
        // the Markdown.
        let lines = tree_text(&tree);
        assert!(diff_text(&at_start, &at_peak, &tree, false).contains(&lines));
        assert!(
            diff_text(&at_start, &at_peak, &tree, true).contains(&format!("```text\n{lines}```\n"))
        );
        for event in [None, Some(-1), Some(0), Some(peak.event)] {
            let options = ReportOptions {
                event,
                ..ReportOptions::default()
            };
            let r = report_of(&s, &blocks, &of, &names, &options);
            let by_category = r
                .categories
                .iter()
                .fold(0u64, |t, c| t.saturating_add(c.bytes));
            assert_eq!(
                by_category, r.live_bytes,
                "categories add up to what is live"
            );
            if let Some(steps) = &r.steps {
                // Two steps or more, in order, within the trace, each peaking at or above where it
                // began and ended; written out a row each.
                assert!(steps.steps.len() >= 2);
                let mut end = 0;
                for step in &steps.steps {
                    assert!(end <= step.first_entry && step.first_entry <= step.end_entry);
                    end = step.end_entry;
                    assert!(step.peak_bytes >= step.live_at_start.max(step.live_at_end));
                }
                assert!(end as usize <= s.trace(d).len());
                assert_eq!(steps.table().rows.len(), steps.steps.len());
                let _ = (steps.finding(), r.findings(None), r.in_step_text());
                // No step runs out of memory more often than the trace does.
                let ooms = s
                    .trace(d)
                    .action
                    .iter()
                    .filter(|&&a| a == Action::Oom)
                    .count();
                assert!(steps.steps.iter().map(|s| s.ooms as usize).sum::<usize>() <= ooms);
            }
            // The comparison's digest carries the same steps, and the Steps view a run of them.
            assert_eq!(at_peak.steps, r.steps);
            let runs = memograph_snapshot::analysis::trace_steps::step_runs_of(&[&at_peak]);
            assert_eq!(runs.len(), usize::from(r.steps.is_some()));
        }
        for l in [&blocks, &Lifetimes::of_segments(&s, d)] {
            let totals = RangeMax::new(&l.live_after);
            let n = l.live_after.len();
            let _ = totals.max(&l.live_after, 0, n);
            for (detail, budget) in [(0.0, 64), (0.3, 16), (1.0, 1 << 12), (1.0, 4)] {
                let layout = timeline_layout_within(l, detail, budget);
                assert!(layout.points.len() as u64 <= layout.bands.len() as u64 + budget);
                for k in 0..8u32 {
                    let x = (layout.x_len as u64 * u64::from(k) / 8) as u32;
                    for j in 0..4 {
                        let bytes = layout.max_bytes as f64 * f64::from(j) / 3.0;
                        if let Some(b) = layout.band_at(x, bytes) {
                            let _ = layout.offset_at(&layout.bands[b], x);
                        }
                    }
                    // What the keyboard steps through, in a view from x to the end.
                    let largest = layout.largest_in(x, layout.x_len, 3);
                    assert!(largest.len() <= 3);
                    assert!(largest
                        .windows(2)
                        .all(|w| layout.bands[w[0]].size >= layout.bands[w[1]].size));
                }
            }
        }
    }
});

/// Each node's delta is its B bytes less its A bytes (saturating at i64's ends), and what moved at
/// or beneath a node is at least its own delta and at least what moved beneath any child.
fn adds_up(n: &DiffNode) {
    let exact = i128::from(n.b_bytes) - i128::from(n.a_bytes);
    assert_eq!(
        exact.clamp(i64::MIN.into(), i64::MAX.into()),
        i128::from(n.delta_bytes),
        "a delta is B less A"
    );
    assert!(n.moved_bytes >= n.delta_bytes.unsigned_abs());
    for c in &n.children {
        assert!(c.moved_bytes <= n.moved_bytes);
        adds_up(c);
    }
}
