//! The synthetic snapshot (the page's warm-up input) reads with the figures it was written with.

use memograph_snapshot::analysis::summary::summarize;
use memograph_snapshot::{codec, read_bytes, synth, PushReader};

#[test]
fn the_synthetic_snapshot_reads_with_the_figures_it_was_written_with() {
    for steps in [0, 1, 50, 400] {
        let w = synth::pickle(steps);
        let s = read_bytes(&w.bytes).unwrap_or_else(|e| panic!("{steps} steps: {e}"));
        let summary = summarize(&s);
        assert_eq!(summary.len(), 1);
        let d = &summary[0];
        assert_eq!(d.device, 0);
        assert_eq!(s.trace(0).len(), w.entries, "{steps} steps");
        assert_eq!(d.allocations, w.allocations, "{steps} steps");
        assert_eq!(d.events["alloc"] as usize, w.allocations);
        assert_eq!(
            d.events.get("free_completed").copied().unwrap_or(0) as usize,
            21 * steps
        );
        assert_eq!(d.timeline_peak_bytes, w.peak_bytes, "{steps} steps");
        assert_eq!(s.segments.len(), 6);
        assert_eq!(d.unique_frames, w.frames, "{steps} steps");
    }
}

#[test]
fn the_synthetic_snapshot_is_the_same_bytes_every_time_and_reads_the_same_pushed() {
    let w = synth::pickle(120);
    assert_eq!(w, synth::pickle(120));
    let pulled = read_bytes(&w.bytes).unwrap();
    let mut push = PushReader::new(Some(w.bytes.len() as u64));
    for piece in w.bytes.chunks(10_007) {
        push.push(piece).unwrap();
    }
    let pushed = push.finish().unwrap();
    assert_eq!(codec::encode(&pulled), codec::encode(&pushed));
}
