//! The push reader fed the input in pieces of sizes drawn from its first bytes gives exactly what the
//! pull reader gives: the same snapshot (encoded byte for byte) or the same error.
#![no_main]

use memograph_snapshot::{codec, read_bytes, PushReader};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&seed, input)) = data.split_first() else {
        return;
    };
    let pulled = read_bytes(input).map(|s| codec::encode(&s));
    // Piece sizes cycle through a few drawn from the seed: 1 to 256 bytes, or large.
    let sizes = [
        1 + (seed as usize & 7),
        1 + seed as usize,
        3,
        4093,
        1 + (seed as usize % 17),
    ];
    let mut reader = PushReader::new(Some(input.len() as u64));
    let mut at = 0;
    let mut k = 0;
    let mut pushed = Ok(());
    while at < input.len() && pushed.is_ok() {
        let n = sizes[k % sizes.len()].min(input.len() - at);
        let piece = &input[at..at + n];
        // As slices, and (the seed's top bit) every other piece written in place, as the page's worker
        // hands them over.
        pushed = if seed & 0x80 != 0 && k % 2 == 1 {
            reader.push_from(n, &mut |room| room.copy_from_slice(piece))
        } else {
            reader.push(piece)
        };
        at += n;
        k += 1;
    }
    let got = pushed
        .and_then(|()| reader.finish())
        .map(|s| codec::encode(&s));
    assert_eq!(got, pulled);
});
