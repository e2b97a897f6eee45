//! Inputs that once broke Memograph: each reads to its right answer or to an error that says what is
//! wrong, never a panic, the same in the pull and the push reader whatever the pieces.
//!
//! The first tier builds the inputs here; the second reads `../shared/repro` (override with
//! `MEMOGRAPH_REPRO`) and says so when it is absent.

mod common;

use common::Pickle;

use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::analysis::summary::summarize;
use memograph_snapshot::analysis::timeline::{timeline_layout, POINT_BUDGET};
use memograph_snapshot::{codec, read_bytes, PushReader, ReadError};

/// `{'segments': [], 'device_traces': [[{'action': 'alloc', 'addr': addr, 'size': size, ...}]]}`.
fn one_alloc(addr: impl Fn(&mut Pickle), size: impl Fn(&mut Pickle)) -> Vec<u8> {
    one_entry("alloc", addr, size)
}

fn one_entry(action: &str, addr: impl Fn(&mut Pickle), size: impl Fn(&mut Pickle)) -> Vec<u8> {
    let mut p = Pickle::new();
    p.op(b"}(")
        .str("segments")
        .op(b"]")
        .str("device_traces")
        .op(b"]]");
    p.op(b"}(").str("action").str(action).str("addr");
    addr(&mut p);
    p.str("size");
    size(&mut p);
    p.str("stream").int(0).str("frames").op(b"]").op(b"u"); // the entry's SETITEMS
    p.op(b"aa"); // into the device's list, into device_traces
    p.op(b"u"); // the top dict's SETITEMS
    p.stop()
}

fn pull_and_push(bytes: &[u8]) -> Result<Vec<u8>, ReadError> {
    let pulled = read_bytes(bytes).map(|s| codec::encode(&s));
    for piece in [1, 3, 7, 64, 4093, 8191, bytes.len().max(1)] {
        let mut reader = PushReader::new(Some(bytes.len() as u64));
        let pushed = bytes
            .chunks(piece)
            .try_for_each(|c| reader.push(c))
            .and_then(|()| reader.finish())
            .map(|s| codec::encode(&s));
        assert_eq!(pushed, pulled, "pieces of {piece}");
    }
    pulled
}

fn error_of(bytes: &[u8]) -> String {
    match pull_and_push(bytes) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_negative_size_is_an_error_naming_the_entry_not_sixteen_pebibytes() {
    let e = error_of(&one_alloc(
        |p| {
            p.int(4096);
        },
        |p| {
            p.int(-5);
        },
    ));
    assert_eq!(
        e,
        "not a PyTorch memory snapshot (device_traces[0][0] has size -5 (negative))"
    );
}

#[test]
fn a_negative_address_is_an_error() {
    let e = error_of(&one_alloc(
        |p| {
            p.int(-1);
        },
        |p| {
            p.int(512);
        },
    ));
    assert!(
        e.contains("device_traces[0][0] has address -1 (negative)"),
        "{e}"
    );
}

#[test]
fn an_allocation_past_the_end_of_the_address_space_is_an_error() {
    let e = error_of(&one_alloc(
        |p| {
            p.u64(u64::MAX - 100);
        },
        |p| {
            p.int(512);
        },
    ));
    assert!(
        e.contains("run past the end of the 64-bit address space"),
        "{e}"
    );
    let e = error_of(&one_alloc(
        |p| {
            p.int(0);
        },
        |p| {
            p.u64(1 << 63);
        },
    ));
    assert!(
        e.contains("has size 9223372036854775808 (over 1 PiB)"),
        "{e}"
    );
}

/// Seen on an H200 (PyTorch 2.11): `torch.empty(1 << 50, device="cuda")` (4 PiB of fp32) writes an `oom`
/// entry of that size. An OOM's size is the program's request, not memory: any amount reads.
#[test]
fn an_oom_asking_for_petabytes_reads() {
    for request in [1u64 << 52, 1 << 63, u64::MAX] {
        let bytes = one_entry(
            "oom",
            |p| {
                p.int(0);
            },
            |p| {
                p.u64(request);
            },
        );
        pull_and_push(&bytes).unwrap();
        let s = read_bytes(&bytes).unwrap();
        assert_eq!(s.trace(0).action[0], memograph_snapshot::Action::Oom);
        assert_eq!(s.trace(0).size[0], request);
        let summary = summarize(&s);
        assert_eq!(summary[0].timeline_peak_bytes, 0);
    }
    let e = error_of(&one_entry(
        "oom",
        |p| {
            p.int(0);
        },
        |p| {
            p.int(-5);
        },
    ));
    assert!(e.contains("-5 (negative)"), "{e}");
}

#[test]
fn an_address_near_the_top_that_fits_reads() {
    let bytes = one_alloc(
        |p| {
            p.u64(u64::MAX - 4096);
        },
        |p| {
            p.int(4096);
        },
    );
    let s = read_bytes(&bytes).unwrap();
    let l = Lifetimes::of(&s, 0);
    assert_eq!(l.peak().bytes, 4096);
    assert!(pull_and_push(&bytes).is_ok());
}

#[test]
fn files_that_are_no_pickle_are_named() {
    let zip_member = |name: &str| {
        let mut z = b"PK\x03\x04".to_vec();
        z.extend_from_slice(&[0u8; 22]);
        z.extend_from_slice(&(name.len() as u16).to_le_bytes());
        z.extend_from_slice(&[0, 0]);
        z.extend_from_slice(name.as_bytes());
        z.extend_from_slice(b"\x80\x02}q\x00X\x06\x00\x00\x00weight");
        z
    };
    let cases: &[(Vec<u8>, &str)] = &[
        (zip_member("archive/data.pkl"), "as torch.save writes"),
        (zip_member("x.npy"), "a NumPy .npz archive"),
        (zip_member("notes.txt"), "a zip archive"),
        (
            b"<!DOCTYPE html><html><body>404</body></html>".to_vec(),
            "an HTML page",
        ),
        (
            b"\x93NUMPY\x01\x00v\x00{'descr': '<f4'".to_vec(),
            "a NumPy .npy array",
        ),
        // Compressed otherwise than with gzip (which is read), and other archives.
        (
            b"\x28\xb5\x2f\xfd\xa4\xd8\x8d\x07".to_vec(),
            "zstd-compressed data; decompress it first (zstd -d)",
        ),
        (
            b"\xfd7zXZ\x00\x00\x04\xe6\xd6".to_vec(),
            "xz-compressed data; decompress it first (xz -d)",
        ),
        (
            b"BZh91AY&SY\x98\xdb".to_vec(),
            "bzip2-compressed data; decompress it first (bunzip2)",
        ),
        (
            b"\x04\x22\x4d\x18\x64\x40\xa7".to_vec(),
            "LZ4-compressed data",
        ),
        (b"7z\xbc\xaf\x27\x1c\x00\x04".to_vec(), "a 7-Zip archive"),
        (
            [vec![b'x'; 257], b"ustar\x0000".to_vec()].concat(),
            "a tar archive",
        ),
        // What else lies in a project's folders: its programs, its data.
        (b"\x7fELF\x02\x01\x01\x00".to_vec(), "a program or library"),
        (b"\xcf\xfa\xed\xfe\x07\x00".to_vec(), "a program or library"),
        (b"\x89HDF\r\n\x1a\n\x00\x00".to_vec(), "an HDF5 file"),
        (
            b"SQLite format 3\x00\x10\x00".to_vec(),
            "an SQLite database",
        ),
    ];
    for (bytes, what) in cases {
        let e = error_of(bytes);
        assert!(
            e.starts_with("not a memory snapshot: ") && e.contains(what),
            "{e}"
        );
    }
    // Text that is nothing known still quotes its first bytes.
    assert!(error_of(b"# notes\nhello").starts_with("not a pickle file (it starts with"));
}

#[test]
fn a_corrupt_gzip_stream_is_a_gzip_error_in_any_pieces() {
    // A real snapshot, gzipped, with its deflate data damaged a little way in: the decoder emits some
    // garbage before it notices, which the pickle machine must not get to explain first.
    let plain = memograph_snapshot::synth::pickle(50).bytes;
    let mut gz = common::gzip(&plain);
    for k in 0..64 {
        let at = 40 + k * 3;
        gz[at] ^= 0x5a;
    }
    let e = error_of(&gz);
    assert!(e.starts_with("corrupt gzip data"), "{e}");
}

#[test]
fn a_corrupt_gzip_stream_of_what_is_no_pickle_is_a_gzip_error_too() {
    // Naming what a file that is no pickle is reads its first 512 bytes, here up to a checksum that
    // does not match: the gzip error wins, pulled as pushed (fuzzing found it said "not a pickle").
    for len in [40, 300, 2000] {
        let text = b"# run notes\n".repeat(len / 12 + 1);
        let mut gz = common::gzip(&text[..len]);
        let crc = gz.len() - 8;
        gz[crc] ^= 0xff;
        let e = error_of(&gz);
        assert!(e.starts_with("corrupt gzip data"), "{len}: {e}");
    }
}

#[test]
fn freeing_thirty_thousand_oldest_first_lays_out_within_the_budget() {
    let n = 30_000u64;
    let mut p = Pickle::new();
    p.op(b"}(")
        .str("segments")
        .op(b"]")
        .str("device_traces")
        .op(b"]]");
    for (k, action) in (0..2 * n).map(|k| (k, if k < n { "alloc" } else { "free_completed" })) {
        let i = if k < n { k } else { k - n };
        p.op(b"}(").str("action").str(action).str("addr");
        p.u64(0x7f00_0000_0000 + i * 512)
            .str("size")
            .int(512)
            .op(b"u");
        p.op(b"a");
    }
    p.op(b"a").op(b"u");
    let bytes = p.stop();
    let s = read_bytes(&bytes).unwrap();
    let l = Lifetimes::of(&s, 0);
    let layout = timeline_layout(&l, 1.0);
    assert_eq!(layout.bands.len(), n as usize);
    assert_eq!(layout.max_bytes, n * 512);
    assert!(layout.points.len() as u64 <= n + POINT_BUDGET);
}

/// The shared reproducers, when present.
fn repro(name: &str) -> Option<Vec<u8>> {
    let dir = std::env::var("MEMOGRAPH_REPRO")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| common::fixtures_dir().join("../repro"));
    match std::fs::read(dir.join(name)) {
        Ok(b) => Some(b),
        Err(_) => {
            eprintln!("skipped: {name} not found in {} (tier 2)", dir.display());
            None
        }
    }
}

#[test]
fn every_shared_reproducer_reads_or_fails_as_it_should() {
    let expect: &[(&str, Result<(), &str>)] = &[
        ("fifo30k-quadratic-timeline.pickle.gz", Ok(())),
        ("annotations-small.pickle", Ok(())),
        (
            "negative-size.pickle",
            Err("device_traces[0][0] has address -1 (negative)"),
        ),
        (
            "addr-near-2p64.pickle",
            Err("runs past the end of the 64-bit address space"),
        ),
        (
            "push-gzip-corrupt-deflate.pickle.gz",
            Err("corrupt gzip data"),
        ),
        ("torch-save-archive.pt", Err("as torch.save writes")),
    ];
    for (name, outcome) in expect {
        let Some(bytes) = repro(name) else { continue };
        match (pull_and_push(&bytes), outcome) {
            (Ok(_), Ok(())) => {
                let s = read_bytes(&bytes).unwrap();
                for d in s.devices() {
                    for l in [Lifetimes::of(&s, d), Lifetimes::of_segments(&s, d)] {
                        let layout = timeline_layout(&l, 1.0);
                        assert!(
                            layout.points.len() as u64 <= l.allocations.len() as u64 + POINT_BUDGET
                        );
                        assert_eq!(layout.max_bytes, l.peak().bytes, "{name}");
                    }
                }
            }
            (Err(e), Err(what)) => assert!(e.to_string().contains(what), "{name}: {e}"),
            (got, _) => panic!("{name}: {:?}", got.map(|_| "a snapshot")),
        }
    }
}

#[test]
fn a_snapshot_saved_as_json_reads_as_its_pickle_does_in_any_pieces_plain_or_gzip() {
    let entry = |action: &str, addr: u64, size: u64, t: u64| {
        format!(
            r#"{{"action": "{action}", "addr": {addr}, "size": {size}, "stream": 0, "time_us": {t},
            "frames": [{{"filename": "/home/u/train.py", "line": 7, "name": "step"}}]}}"#
        )
    };
    let base = 0x7f00_0000_0000u64;
    let trace = [
        entry("segment_alloc", base, 2 << 20, 1),
        entry("alloc", base, 1 << 20, 2),
        entry("alloc", base + (1 << 20), 4096, 3),
        entry("free_requested", base, 1 << 20, 4),
        entry("free_completed", base, 1 << 20, 5),
    ];
    let json = format!(
        r#"{{"segments": [{{"device": 0, "address": {base}, "total_size": {}, "stream": 0,
        "segment_type": "large", "blocks": [{{"address": {}, "size": 4096, "requested_size": 4000,
        "state": "active_allocated", "frames": []}}]}}], "device_traces": [[{}]],
        "allocator_settings": {{"expandable_segments": false}}}}"#,
        2u64 << 20,
        base + (1 << 20),
        trace.join(", ")
    );
    let s = memograph_snapshot::read_bytes(json.as_bytes()).unwrap();
    // Said to be JSON (the translation it runs through is a protocol-4 pickle, which it is not).
    assert_eq!(s.encoding(), "JSON");
    let summary = memograph_snapshot::analysis::summary::summarize(&s);
    assert_eq!(summary[0].timeline_peak_bytes, (1 << 20) + 4096);
    assert_eq!(summary[0].requested_bytes, 4000);
    assert_eq!(summary[0].reserved_bytes, 2 << 20);
    assert!(pull_and_push(json.as_bytes()).is_ok());
    assert_eq!(
        pull_and_push(&common::gzip(json.as_bytes())).unwrap(),
        pull_and_push(json.as_bytes()).unwrap()
    );
    // Broken JSON says where, in the pull and the push reader alike.
    let e = error_of(&json.as_bytes()[..json.len() - 9]);
    assert!(
        e.starts_with("corrupt JSON: unexpected end of the JSON text at byte"),
        "{e}"
    );
    // A JSON array of numbers is JSON but no snapshot.
    assert!(error_of(b"  [1, 2, 3]").contains("top level is a list of ints"));
}

#[test]
fn every_record_of_a_legacy_block_history_counts_and_survives_the_codec() {
    // A PyTorch 2.0 snapshot: one block whose history holds two records with different stacks.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fuzz/corpus/seeds/legacy_history.pickle"
    );
    let bytes = std::fs::read(path).unwrap();
    let s = read_bytes(&bytes).unwrap();
    let block = &s.segments[0].blocks[0];
    assert_eq!(block.history.len(), 2);
    assert_eq!(block.requested_size, 4000, "the first record's real size");
    assert_eq!(block.history[1].real_size, 100);
    assert_ne!(block.history[0].stack, block.history[1].stack);
    // Three frames in the first record; the second shares two of them and adds its own: four in all.
    let summary = memograph_snapshot::analysis::summary::summarize(&s);
    assert_eq!(summary[0].unique_frames, 4);
    let back = codec::decode(&codec::encode(&s)).unwrap();
    assert_eq!(back.segments[0].blocks[0].history, block.history);
}

#[test]
fn pull_and_push_decide_json_or_pickle_on_the_same_first_bytes() {
    // Found by the push fuzz target: 130 tabs, then a JSON object. Both readers decide on the first 64
    // bytes, so both call it no pickle (and a JSON text whose object starts within them is JSON).
    let mut late = vec![b'\t'; 130];
    late.extend_from_slice(br#"{"segments": []}"#);
    let e = error_of(&late);
    assert!(e.starts_with("not a pickle file"), "{e}");
    let mut early = vec![b'\t'; 40];
    early.extend_from_slice(br#"{"segments": []}"#);
    assert!(pull_and_push(&early).is_ok());
    assert!(pull_and_push(&common::gzip(&late)).is_err());
    assert!(pull_and_push(&common::gzip(&early)).is_ok());
}

#[test]
fn a_gzip_stream_whose_checksum_fails_in_its_first_bytes_is_a_gzip_error_both_ways() {
    // Found by the push fuzz target (its first byte picks the piece sizes): the decoder's checksum
    // error came while the pull reader read the first opcode, and was taken for "not a pickle".
    let data = include_bytes!("data/fuzz-push-gzip-checksum.bin");
    let e = error_of(&data[1..]);
    assert!(e.starts_with("corrupt gzip data"), "{e}");
}
