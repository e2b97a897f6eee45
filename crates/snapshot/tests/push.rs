//! The push reader (bytes handed over as they arrive, as the page's worker gets them) gives what the pull
//! reader gives on the same bytes, whatever the pieces: the same snapshot, or the same error at the same
//! offset. Checked on every fixture and on the hostile corpus.

mod common;

use common::Pickle;
use memograph_snapshot::{codec, read_bytes, PushReader, ReadError};

/// Reads `bytes` pushed in pieces of `piece` bytes; the snapshot comes back encoded, for comparison.
fn pushed(bytes: &[u8], piece: usize) -> Result<Vec<u8>, ReadError> {
    let mut reader = PushReader::new(Some(bytes.len() as u64));
    // Every other piece written in place, as the page's worker hands them over (`push_from`).
    for (k, chunk) in bytes.chunks(piece).enumerate() {
        if k % 2 == 0 {
            reader.push(chunk)?;
        } else {
            reader.push_from(chunk.len(), &mut |room| room.copy_from_slice(chunk))?;
        }
    }
    assert_eq!(reader.pushed(), bytes.len() as u64);
    reader.finish().map(|s| codec::encode(&s))
}

fn pulled(bytes: &[u8]) -> Result<Vec<u8>, ReadError> {
    read_bytes(bytes).map(|s| codec::encode(&s))
}

/// Same outcome, compared exactly: the encoded snapshot byte for byte, or the error's variant, offset and
/// message.
fn assert_same(what: &str, bytes: &[u8], pieces: &[usize]) {
    let expected = pulled(bytes);
    for &piece in pieces {
        let got = pushed(bytes, piece);
        match (&expected, &got) {
            (Ok(a), Ok(b)) => assert!(a == b, "{what}, pieces of {piece}: snapshots differ"),
            (Err(a), Err(b)) => assert_eq!(a, b, "{what}, pieces of {piece}"),
            (a, b) => panic!(
                "{what}, pieces of {piece}: pull gave {:?}, push gave {:?}",
                a.as_ref().map(|_| "a snapshot"),
                b.as_ref().map(|_| "a snapshot")
            ),
        }
    }
}

#[test]
fn every_fixture_reads_the_same_in_any_pieces() {
    for name in common::fixture_names() {
        let bytes = common::fixture_bytes(&name);
        // Primes, so pieces end inside opcodes of every length; one piece; and the page's size.
        assert_same(&name, &bytes, &[7, 4093, 65_537, bytes.len(), 1 << 22]);
    }
}

#[test]
fn byte_by_byte_is_the_same() {
    let bytes = common::small_input();
    assert_same("a0kuma_adam", &bytes, &[1, 2, 3]);
    let gz = fixture_or_skip!("magma_memory_snapshot.pickle.gz");
    assert_same("magma gz", &gz, &[1, 5]);
}

#[test]
fn finishing_with_the_leftovers_gives_the_same_snapshot() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read(dir.join("../../assets/example.pickle.gz")).unwrap();
    let plain = std::fs::read(dir.join("tests/data/synthetic.proto4.pickle")).unwrap();
    let json = br#"{"segments": [], "device_traces": [[]]}"#.to_vec();
    for (what, bytes) in [("gzip", example), ("pickle", plain), ("json", json)] {
        let mut reader = PushReader::new(Some(bytes.len() as u64));
        reader.push(&bytes).unwrap();
        let (snapshot, leftovers) = reader.finish_leaving().unwrap();
        drop(leftovers);
        assert!(
            codec::encode(&snapshot) == pulled(&bytes).unwrap(),
            "{what}: snapshots differ"
        );
    }
}

#[test]
fn every_protocol_reads_the_same() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for p in 0..=5 {
        let bytes = std::fs::read(dir.join(format!("synthetic.proto{p}.pickle"))).unwrap();
        assert_same(&format!("protocol {p}"), &bytes, &[1, 3, 64]);
    }
}

#[test]
fn every_truncation_fails_the_same() {
    let bytes = common::small_input();
    // Every 7th offset (a prime, so cuts land at every position within opcodes) and the whole tail.
    let n = bytes.len();
    for cut in (0..n).step_by(7).chain(n - 64..n) {
        assert_same(&format!("cut at {cut}"), &bytes[..cut], &[3, 4096]);
    }
}

#[test]
fn random_bit_flips_give_the_same_outcome() {
    let original = common::small_input();
    let mut next = common::xorshift(0x2545_F491_4F6C_DD1Du64);
    for round in 0..1500 {
        let mut bytes = original.clone();
        for _ in 0..(1 + round % 4) {
            let i = (next() as usize) % bytes.len();
            bytes[i] ^= 1 << (next() % 8);
        }
        assert_same(&format!("round {round}"), &bytes, &[13, 8192]);
    }
}

#[test]
fn hand_written_attacks_fail_the_same() {
    let cases: [&[u8]; 8] = [
        b"",
        b"\x80",
        b"hello, world",
        b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93.",
        b"\x80\x04X\xff\xff\xff\x7f",
        b"\x80\x04h\x05.",
        b"\x80\x04}\x94\x8c\x01a\x94K\x01s.",
        b"\x80\x04]\x94(K\x01K\x02e.trailing bytes are never read",
    ];
    for bytes in cases {
        assert_same(&format!("{bytes:?}"), bytes, &[1, 2, 100]);
    }
}

#[test]
fn gzip_reads_the_same_and_fails_the_same_way() {
    let plain = fixture_or_skip!("kk_memory_ctx128_fullstep.pickle");
    let gz = common::gzip(&plain);
    assert_same("kk gz", &gz, &[7, 65_537, gz.len()]);
    // Two members, as `cat a.gz b.gz` makes: the second holds bytes after STOP, never read.
    let mut two = common::gzip(&plain[..1000]);
    two.extend(common::gzip(&plain[1000..]));
    assert_same("two members", &two, &[999, 1 << 20]);

    // Corrupt and truncated streams: the same kind of error (the pull reader reads ahead, so the
    // decompressor may notice at another point).
    let mut flipped = gz.clone();
    flipped[gz.len() / 2] ^= 0xff;
    for (what, bad) in [
        ("flipped", &flipped[..]),
        ("half", &gz[..gz.len() / 2]),
        ("trailer cut", &gz[..gz.len() - 3]),
        ("header cut", &gz[..5]),
    ] {
        let (a, b) = (pulled(bad), pushed(bad, 4093));
        let (Err(a), Err(b)) = (&a, &b) else {
            panic!("{what}: pull ok: {}, push ok: {}", a.is_ok(), b.is_ok())
        };
        assert_eq!(
            std::mem::discriminant(a),
            std::mem::discriminant(b),
            "{what}: pull: {a}; push: {b}"
        );
    }
}

#[test]
fn a_pushed_gzip_bomb_is_refused() {
    let bomb = common::gzip_bomb();
    // The whole bomb in one piece: the decompressor still works a bounded piece at a time.
    for piece in [bomb.len(), 4096] {
        let e = pushed(&bomb, piece).unwrap_err();
        assert!(e.to_string().contains("gzip bomb?"), "{e}");
    }
}

#[test]
fn after_an_error_every_call_repeats_it() {
    let mut reader = PushReader::new(None);
    let e = reader.push(b"\x80\x04\x8c\x08builtins\x8c");
    let e = e.and(reader.push(b"\x04eval\x93."));
    let e = e.unwrap_err();
    assert!(matches!(e, ReadError::Forbidden { .. }), "{e}");
    assert_eq!(reader.push(b"more").unwrap_err(), e);
    assert_eq!(reader.finish().unwrap_err(), e);
}

#[test]
fn a_plain_pickle_wants_no_bytes_after_its_stop_and_ignores_them() {
    let bytes = common::small_input();
    let mut reader = PushReader::new(None);
    reader.push(&bytes).unwrap();
    assert!(!reader.wants_more());
    // Whatever follows (here a mebibyte of 0xff, never looked at) changes nothing.
    reader.push(&vec![0xff; 1 << 20]).unwrap();
    let got = codec::encode(&reader.finish().unwrap());
    assert_eq!(got, codec::encode(&read_bytes(&bytes).unwrap()));
    // Gzip is read to its end.
    let mut gz = PushReader::new(None);
    gz.push(&common::gzip(&bytes)).unwrap();
    assert!(gz.wants_more());
}

/// Trace entries of every shape the reader's whole-dict path takes and of shapes it leaves to the
/// opcode loop, written by hand as `pickle.dump` writes a snapshot (every string, dict and list
/// memoised, each memoised string read again with a GET).
#[test]
fn flat_dicts_read_whole_give_what_the_opcode_loop_gives() {
    // Each string memoised as it is written; its memo index.
    let str = |p: &mut Pickle, s: &str| p.str(s).memoize();
    let mut p = Pickle::new();
    p.op(b"}");
    p.memoize();
    p.op(b"(");
    str(&mut p, "segments");
    p.op(b"]");
    p.memoize();
    str(&mut p, "device_traces");
    p.op(b"]");
    p.memoize();
    p.op(b"]");
    p.memoize();
    p.op(b"(");
    let [action, addr, size, stream, time_us, frames, alloc, free, extra] = [
        "action",
        "addr",
        "size",
        "stream",
        "time_us",
        "frames",
        "alloc",
        "free_completed",
        "extra",
    ]
    .map(|s| str(&mut p, s));
    p.op(b"000000000"); // POPs: the strings stay in the memo only
                        // Two frames, memoised once: dicts of GET keys and a string value (the loop reads those).
    let (filename, name, line) = (
        str(&mut p, "filename"),
        str(&mut p, "name"),
        str(&mut p, "line"),
    );
    p.op(b"0").op(b"0").op(b"0");
    let mut frame_memo = Vec::new();
    for (file, func) in [("a.py", "f"), ("b.py", "g")] {
        p.op(b"}");
        frame_memo.push(p.memoize());
        p.op(b"(");
        p.get(filename);
        str(&mut p, file);
        p.get(name);
        str(&mut p, func);
        p.get(line);
        p.op(&[b'K', 7]);
        p.op(b"u0"); // SETITEMS, POP: the frame stays in the memo only
    }
    let an_int = {
        p.op(&[b'K', 9]);
        let k = p.memoize();
        p.op(b"0");
        k
    };
    // The entries: (kind, addr) in a pattern that repeats, so frame lists are known after their first.
    for n in 0..40u32 {
        p.op(b"}");
        p.memoize();
        p.op(b"(");
        let kind = n % 10;
        p.get(action).get(if n % 2 == 0 { alloc } else { free });
        p.get(addr);
        match kind {
            // An address past 2^63 (a 9-byte LONG1) and a LONG1 of no bytes (0).
            3 => p.long1(1i128 << 63 | 0x1000, 9),
            4 => p.long1(0, 0),
            _ => p.long1(0x7f00_0000_0000 + 512 * n as i128, 6),
        };
        p.get(size);
        match kind {
            5 => p.op(&[b'M', 0x00, 0x02]), // BININT2
            6 => p.op(&[b'J', 0x05, 0x00, 0x00, 0x00]),
            7 => p.get(an_int),
            _ => p.op(&[b'J', 0x00, 0x02, 0x00, 0x00]),
        };
        p.get(stream).op(&[b'K', 0]);
        p.get(time_us);
        match kind {
            8 => p.op(b"N"),
            _ => p.long1(1_700_000_000_000_000 + n as i128, 8),
        };
        if kind == 1 {
            // A key that is no string, and the same key twice: left to the loop, and read as it does.
            p.get(an_int).op(&[b'K', 1]);
            p.get(size).op(&[b'K', 64]);
        }
        if kind == 2 {
            // A value the whole-dict path does not take (a frame): left to the loop.
            p.get(extra).get(frame_memo[0]);
        }
        p.get(frames);
        p.op(b"]");
        p.memoize();
        p.op(b"(");
        for &f in &frame_memo[..1 + (n as usize / 3) % 2] {
            p.get(f);
        }
        p.op(b"e"); // APPENDS
        if kind == 9 {
            // Seventeen pairs: more than the whole-dict path reads.
            for _ in 0..11 {
                p.get(stream).op(&[b'K', 0]);
            }
        }
        p.op(b"u"); // SETITEMS
    }
    p.op(b"e"); // APPENDS: the entries into the device's trace
    p.op(b"a"); // APPEND: the trace into device_traces
    p.op(b"u"); // SETITEMS
    let bytes = p.stop();
    let pulled = read_bytes(&bytes).expect("the hand-written snapshot reads");
    assert_eq!(pulled.device_traces[0].len(), 40);
    // Byte by byte the whole-dict path never has a dict whole in its buffer.
    assert_same(
        "hand-written entries",
        &bytes,
        &[1, 2, 3, 5, 64, bytes.len()],
    );
}
