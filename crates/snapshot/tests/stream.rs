//! A snapshot streamed from a reader to a receiver (the page's worker to the page): the rows while
//! reading, the rest at the end. What arrives is what the pull reader reads, and the lifetimes the
//! receiver replayed on the way are the ones worked out on the whole snapshot.

mod common;

use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::stream::{Receiver, Sender};
use memograph_snapshot::{batch, codec, read_bytes, synth, PushReader};

/// Streams `bytes` in pieces of `piece`, rows sent once at least `min` are read; the snapshot received
/// (encoded, for comparison) and the lifetimes replayed, if any.
fn streamed(bytes: &[u8], piece: usize, min: usize) -> (Vec<u8>, Option<Lifetimes>, usize) {
    let mut reader = PushReader::new(Some(bytes.len() as u64));
    let mut sender = Sender::new();
    let mut receiver = Receiver::new();
    let mut messages = 0;
    for chunk in bytes.chunks(piece) {
        reader.push(chunk).unwrap();
        if let Some(rows) = sender.rows(&reader, min) {
            receiver.expect(receiver.received() * 2);
            receiver.rows(&rows).unwrap();
            messages += 1;
        }
    }
    let (last, rest) = sender.finish(reader).unwrap();
    for rows in &last {
        receiver.rows(rows).unwrap();
    }
    let mut pause = batch::NoPause;
    let finished = receiver.finish_sliced(rest.as_slice(), rest.len(), &mut pause);
    let (snapshot, lifetimes) = batch::run_ready(finished).unwrap();
    (codec::encode(&snapshot), lifetimes, messages)
}

fn assert_streams(what: &str, bytes: &[u8]) {
    let pulled = read_bytes(bytes).unwrap();
    let device = pulled.default_device().unwrap_or(0);
    let expected = Lifetimes::of(&pulled, device);
    for (piece, min) in [(4096, 1), (65_536, 1000), (1 << 22, 100_000)] {
        let (encoded, lifetimes, _) = streamed(bytes, piece, min);
        assert!(
            encoded == codec::encode(&pulled),
            "{what}: snapshots differ"
        );
        let single = pulled
            .device_traces
            .iter()
            .enumerate()
            .all(|(d, t)| t.is_empty() || d as i64 == device);
        let Some(got) = lifetimes else {
            assert!(
                !single,
                "{what}: one device's trace, yet no lifetimes on the way"
            );
            continue;
        };
        assert_eq!(got.device, expected.device, "{what}");
        assert_eq!(got.allocations, expected.allocations, "{what}");
        assert_eq!(got.initial_bytes, expected.initial_bytes, "{what}");
        assert_eq!(got.live_after, expected.live_after, "{what}");
        assert_eq!(got.changes, expected.changes, "{what}");
        assert_eq!(got.streams, expected.streams, "{what}");
    }
}

#[test]
fn a_streamed_snapshot_arrives_whole_with_its_lifetimes() {
    let w = synth::pickle(400);
    assert_streams("synth 400", &w.bytes);
    let (_, lifetimes, messages) = streamed(&w.bytes, 65_536, 1000);
    assert!(lifetimes.is_some());
    assert!(messages > 10, "the rows went in {messages} messages");
    let example = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../assets/example.pickle.gz"
    ))
    .unwrap();
    assert_streams("example (gzip)", &example);
    for p in 0..=4 {
        let path = format!(
            "{}/tests/data/synthetic.proto{p}.pickle",
            env!("CARGO_MANIFEST_DIR")
        );
        assert_streams(&path, &std::fs::read(&path).unwrap());
    }
}

#[test]
fn every_fixture_streams_whole_with_its_lifetimes() {
    for name in common::fixture_names() {
        assert_streams(&name, &common::fixture_bytes(&name));
    }
}
