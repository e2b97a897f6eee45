//! The push reader fed the input in pieces of sizes drawn from its first bytes gives exactly what the
//! pull reader gives: the same snapshot (encoded byte for byte) or the same error. Its rows streamed
//! on while it reads (as the page's worker does) arrive as that snapshot too, with the block lifetimes
//! of its main device when those rows are that device's trace alone.
#![no_main]

use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::stream::{Receiver, Sender};
use memograph_snapshot::{batch, codec, read_bytes, PushReader};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&seed, input)) = data.split_first() else {
        return;
    };
    let pulled = read_bytes(input);
    // Piece sizes cycle through a few drawn from the seed: 1 to 256 bytes, or large.
    let sizes = [
        1 + (seed as usize & 7),
        1 + seed as usize,
        3,
        4093,
        1 + (seed as usize % 17),
    ];
    let mut reader = PushReader::new(Some(input.len() as u64));
    let mut sender = Sender::new();
    let mut receiver = Receiver::new();
    let mut at = 0;
    let mut k = 0;
    let mut pushed = Ok(());
    while at < input.len() && pushed.is_ok() {
        let n = sizes[k % sizes.len()].min(input.len() - at);
        pushed = reader.push(&input[at..at + n]);
        if let Some(rows) = sender.rows(&reader, 1 + (seed as usize % 5)) {
            receiver
                .rows(&rows)
                .expect("the receiver reads the rows sent");
        }
        at += n;
        k += 1;
    }
    let streamed = pushed.and_then(|()| sender.finish(reader));
    let (last, rest) = match (streamed, &pulled) {
        (Ok(sent), Ok(_)) => sent,
        (Err(got), Err(want)) => return assert_eq!(&got, want),
        (got, want) => panic!(
            "streamed {:?}, pulled {:?}",
            got.map(|_| ()),
            want.as_ref().map(|_| ())
        ),
    };
    let pulled = pulled.expect("matched above");
    for rows in &last {
        receiver
            .rows(rows)
            .expect("the receiver reads the last rows");
    }
    let mut pause = batch::NoPause;
    let (got, lifetimes) =
        batch::run_ready(receiver.finish_sliced(rest.as_slice(), rest.len(), &mut pause))
            .expect("the receiver reads the snapshot sent");
    assert_eq!(codec::encode(&got), codec::encode(&pulled));
    if let Some(l) = lifetimes {
        let want = Lifetimes::of(&pulled, l.device);
        assert_eq!(l.allocations, want.allocations);
        assert_eq!(l.live_after, want.live_after);
        assert_eq!(l.changes, want.changes);
    }
});
