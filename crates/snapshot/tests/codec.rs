//! The model's encoding (worker → page) gives back what it was given, and its decoder never panics on
//! damaged bytes: every bit flip is a clean error or a model that encodes again to what was decoded.

mod common;

use memograph_snapshot::{codec, read_bytes, synth};

#[test]
fn a_synthetic_snapshot_round_trips_byte_for_byte() {
    let s = read_bytes(&synth::pickle(40).bytes).unwrap();
    let bytes = codec::encode(&s);
    let back = codec::decode(&bytes).unwrap();
    assert_eq!(codec::encode(&back), bytes);
    // In pieces, as the page reads it.
    let reader = std::io::BufReader::with_capacity(7, bytes.as_slice());
    let pieces = codec::decode_from(reader, bytes.len()).unwrap();
    assert_eq!(codec::encode(&pieces), bytes);
}

#[test]
fn an_encoding_handed_on_in_chunks_is_the_encoding() {
    // Enough entries for columns of several chunks (a MiB each), and a real fixture's segments and
    // legacy fields where there is one.
    let mut snapshots = vec![read_bytes(&synth::pickle(3000).bytes).unwrap()];
    if let Some(bytes) = common::fixture("kk_memory_ctx128_fullstep.pickle") {
        snapshots.push(read_bytes(&bytes).unwrap());
    }
    for (k, s) in snapshots.iter().enumerate() {
        let whole = codec::encode(s);
        let mut chunks = Vec::new();
        let len = codec::encode_into(s, &mut |c| chunks.push(c.to_vec()));
        assert_eq!(len, whole.len());
        assert!(chunks.iter().all(|c| !c.is_empty() && c.len() < 2 << 20));
        if k == 0 {
            assert!(
                whole.len() > 3 << 20 && chunks.len() > 2,
                "{} bytes",
                whole.len()
            );
        }
        assert_eq!(chunks.concat(), whole);
    }
}

#[test]
fn thousands_of_bit_flips_in_an_encoding_never_panic() {
    let s = read_bytes(&synth::pickle(6).bytes).unwrap();
    let original = codec::encode(&s);
    let mut next = common::xorshift(0x5DEE_CE66_D1CE_4E5B);
    let (mut errors, mut decoded) = (0, 0);
    for round in 0..3000 {
        let mut bytes = original.clone();
        for _ in 0..1 + round % 4 {
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] ^= 1 << (next() % 8);
        }
        match codec::decode(&bytes) {
            Err(e) => {
                assert!(e.to_string().starts_with("corrupt model buffer: "), "{e}");
                errors += 1;
            }
            Ok(model) => {
                // What decodes is a model like any other: it encodes and decodes again unchanged.
                let again = codec::encode(&model);
                assert_eq!(codec::encode(&codec::decode(&again).unwrap()), again);
                decoded += 1;
            }
        }
    }
    assert!(
        errors > 0 && decoded > 0,
        "{errors} errors, {decoded} decoded"
    );
}

#[test]
fn a_cut_encoding_is_an_error_at_every_length() {
    let s = read_bytes(&synth::pickle(2).bytes).unwrap();
    let bytes = codec::encode(&s);
    for end in 0..bytes.len() {
        assert!(codec::decode(&bytes[..end]).is_err(), "cut at {end}");
    }
}

#[test]
fn a_decode_in_slices_that_suspends_between_them_gives_the_same_snapshot() {
    let written = memograph_snapshot::synth::pickle(400);
    let s = memograph_snapshot::read_bytes(&written.bytes).unwrap();
    let encoded = codec::encode(&s);
    let mut pause = common::Yield(0);
    let mut future = std::pin::pin!(codec::decode_sliced(
        codec::Whole(&encoded[..]),
        codec::Sizes::whole(encoded.len()),
        &mut pause
    ));
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let mut polls = 0;
    let decoded = loop {
        polls += 1;
        if let std::task::Poll::Ready(r) = std::future::Future::poll(future.as_mut(), &mut context)
        {
            break r.unwrap();
        }
    };
    assert!(polls > 10, "{polls} polls");
    assert_eq!(codec::encode(&decoded), encoded);
}

#[test]
fn lifetimes_built_in_slices_that_suspend_equal_those_built_at_once() {
    use memograph_snapshot::analysis::lifetimes::Lifetimes;
    let s = read_bytes(&synth::pickle(400).bytes).unwrap();
    let whole = Lifetimes::of(&s, 0);
    let mut pause = common::Yield(0);
    let (sliced, polls) = common::poll_to_end(Lifetimes::of_sliced(&s, 0, &mut pause));
    assert!(polls > 2, "{polls} polls");
    assert_eq!(format!("{sliced:?}"), format!("{whole:?}"));
}

/// An encoding that arrives `step` bytes at a time, one step per wait: reading a byte that has not
/// arrived is an error (`read` returns what there is), so a decode that reads ahead of what it waited
/// for fails. Records every wait's `upto`.
struct Trickle<'a> {
    bytes: &'a [u8],
    read: usize,
    arrived: usize,
    step: usize,
    waits: Vec<usize>,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = out.len().min(self.arrived - self.read);
        out[..n].copy_from_slice(&self.bytes[self.read..self.read + n]);
        self.read += n;
        Ok(n)
    }
}

/// Pending once, then ready: a wait that suspends the decode.
struct Later(bool);

impl std::future::Future for Later {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }
}

impl codec::Arriving for Trickle<'_> {
    async fn until(&mut self, upto: usize) -> bool {
        self.waits.push(upto);
        while self.arrived < upto {
            if self.arrived == self.bytes.len() {
                return false;
            }
            Later(false).await;
            self.arrived = (self.arrived + self.step).min(self.bytes.len());
        }
        true
    }
}

fn trickled(
    bytes: &[u8],
    sizes: codec::Sizes,
    step: usize,
) -> (
    Result<memograph_snapshot::Snapshot, codec::DecodeError>,
    Vec<usize>,
) {
    let mut input = Trickle {
        bytes,
        read: 0,
        arrived: 0,
        step,
        waits: Vec::new(),
    };
    let mut pause = memograph_snapshot::batch::NoPause;
    let decoded = {
        let mut future = std::pin::pin!(codec::decode_sliced(&mut input, sizes, &mut pause));
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        loop {
            if let std::task::Poll::Ready(r) =
                std::future::Future::poll(future.as_mut(), &mut context)
            {
                break r;
            }
        }
    };
    (decoded, input.waits)
}

#[test]
fn sizes_are_known_before_the_encoding_is_written() {
    let mut snapshots = vec![
        read_bytes(&synth::pickle(40).bytes).unwrap(),
        read_bytes(&synth::pickle(0).bytes).unwrap(),
    ];
    // A fixture with legacy history records, and one with a long real trace.
    for name in [
        "yiyi_oom_snapshot.pickle",
        "kk_memory_ctx128_fullstep.pickle",
    ] {
        if let Some(bytes) = common::fixture(name) {
            snapshots.push(read_bytes(&bytes).unwrap());
        }
    }
    for s in &snapshots {
        let sizes = codec::sizes(s);
        assert_eq!(sizes.total, codec::encode(s).len());
        assert!(sizes.head <= sizes.total);
    }
}

#[test]
fn a_model_decodes_as_its_bytes_arrive_reading_only_what_it_waited_for() {
    let s = read_bytes(&synth::pickle(40).bytes).unwrap();
    let bytes = codec::encode(&s);
    let sizes = codec::sizes(&s);
    assert!(sizes.head < sizes.total / 2, "{sizes:?}");
    for step in [1, 7, 4096, 1 << 20] {
        let (decoded, waits) = trickled(&bytes, sizes, step);
        let decoded = decoded.unwrap_or_else(|e| panic!("step {step}: {e}"));
        assert_eq!(codec::encode(&decoded), bytes, "step {step}");
        // The head whole first, then the first trace column's length right after it: the head ends
        // exactly where `sizes` says.
        assert_eq!(waits[..2], [sizes.head, sizes.head + 8], "step {step}");
        assert_eq!(waits.last(), Some(&sizes.total));
    }
}

#[test]
fn a_model_whose_bytes_stop_arriving_is_an_error() {
    let s = read_bytes(&synth::pickle(40).bytes).unwrap();
    let bytes = codec::encode(&s);
    let sizes = codec::sizes(&s);
    for end in [0, 9, sizes.head - 1, sizes.head + 100, bytes.len() - 1] {
        let (decoded, _) = trickled(&bytes[..end], sizes, 997);
        let e = decoded.expect_err("a cut encoding");
        assert!(e.to_string().contains("ends early"), "cut at {end}: {e}");
    }
}
