//! What the page builds in slices, giving its thread back between them, is what the CLI builds at once:
//! each analysis run with a pause that really suspends equals its synchronous version.

mod common;

use memograph_snapshot::analysis::categories::{categorize, categorize_sliced, Rules};
use memograph_snapshot::analysis::lifetimes::{Kind, Lifetimes};
use memograph_snapshot::analysis::report::{report_of, report_sliced, ReportOptions};
use memograph_snapshot::analysis::search::{parse, search, search_sliced};
use memograph_snapshot::analysis::timeline::{timeline_layout, timeline_layout_sliced};
use memograph_snapshot::{read_bytes, synth};

#[test]
fn layouts_segments_categories_and_reports_built_in_slices_equal_those_built_at_once() {
    let s = read_bytes(&synth::pickle(1600).bytes).unwrap();
    let blocks = Lifetimes::of(&s, 0);
    assert!(blocks.changes.len() > 3 * memograph_snapshot::batch::BATCH);
    for detail in [1.0, 0.1, 0.0] {
        let mut pause = common::Yield(0);
        let (sliced, polls) =
            common::poll_to_end(timeline_layout_sliced(&blocks, detail, &mut pause));
        assert!(polls > 3, "detail {detail}: {polls} polls");
        let whole = timeline_layout(&blocks, detail);
        assert_eq!(
            format!("{sliced:?}"),
            format!("{whole:?}"),
            "detail {detail}"
        );
    }

    let mut pause = common::Yield(0);
    let (segments, _) =
        common::poll_to_end(Lifetimes::of_kind_sliced(&s, 0, Kind::Segments, &mut pause));
    let whole = Lifetimes::of_segments(&s, 0);
    assert_eq!(format!("{segments:?}"), format!("{whole:?}"));

    let rules = Rules::built_in();
    let mut pause = common::Yield(0);
    let (of, _) = common::poll_to_end(categorize_sliced(&s, &blocks, &rules, &mut pause));
    assert_eq!(of, categorize(&s, &blocks, &rules));
    // Classifying a stack runs every rule's pattern over its frames (a millisecond or more on a page):
    // the page may take its thread back after each new one.
    let stacks: std::collections::HashSet<_> = blocks.allocations.iter().map(|a| a.stack).collect();
    assert!(
        pause.0 >= stacks.len() - 1,
        "{} pauses for {} stacks",
        pause.0,
        stacks.len()
    );

    let names = rules.names();
    for event in [None, Some(blocks.changes.len() as i64 / 3)] {
        let options = ReportOptions {
            event,
            ..ReportOptions::default()
        };
        let mut pause = common::Yield(0);
        let (sliced, polls) = common::poll_to_end(report_sliced(
            &s, &blocks, &of, &names, &options, &mut pause,
        ));
        assert!(polls > 8, "{polls} polls");
        let whole = report_of(&s, &blocks, &of, &names, &options);
        assert_eq!(
            serde_json::to_string(&sliced).unwrap(),
            serde_json::to_string(&whole).unwrap()
        );
    }

    // Searches, one of each kind: each finds something and something is left unfound.
    let some = blocks.allocations[blocks.allocations.len() / 2];
    let name = format!("b{:x}_{}", some.addr, some.version);
    let prefix = format!("0x{}", &format!("{:x}", some.addr)[..9]);
    for q in [">4KiB", "<=512", &name, &prefix, "op_159("] {
        let query = parse(q).unwrap();
        let mut pause = common::Yield(0);
        let (sliced, polls) = common::poll_to_end(search_sliced(
            &s,
            &blocks,
            Some((&of, &names)),
            &query,
            &mut pause,
        ));
        assert!(polls > 3, "{q}: {polls} polls");
        let whole = search(&s, &blocks, Some((&of, &names)), &query);
        assert_eq!(sliced, whole, "{q}");
        assert!(
            !whole.is_empty() && whole.len() < blocks.allocations.len(),
            "{q}: {} of {}",
            whole.len(),
            blocks.allocations.len()
        );
    }
}

#[test]
fn digests_made_in_slices_equal_those_made_at_once() {
    use memograph_snapshot::analysis::compare::{digests, digests_sliced};
    let rules = Rules::built_in();
    // A long synthetic trace, and a real one whose annotations mark three training steps.
    for s in [
        read_bytes(&synth::pickle(1600).bytes).unwrap(),
        common::repository_fixture("training.pickle"),
    ] {
        let mut pause = common::Yield(0);
        let (sliced, polls) =
            common::poll_to_end(digests_sliced(&s, &rules, "f.pickle", 7, &mut pause));
        assert!(polls > 3, "{polls} polls");
        let whole = digests(&s, &rules, "f.pickle", 7);
        assert_eq!(format!("{sliced:?}"), format!("{whole:?}"));
    }
}
