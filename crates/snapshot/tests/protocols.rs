//! Pickle protocols 0–5 and every data opcode a CPython pickler can emit for plain data.

use memograph_snapshot::analysis::summary::summarize;
use memograph_snapshot::{read_bytes, Action, PyValue};

fn data(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

#[test]
fn every_protocol_from_0_to_5_reads_the_same_snapshot() {
    let reference = read_bytes(&data("synthetic.proto4.pickle")).unwrap();
    let expected = summarize(&reference);
    assert_eq!(expected.len(), 1);
    let d = &expected[0];
    assert_eq!(d.events["alloc"], 1202);
    assert_eq!(d.events["brand_new_action"], 1);
    assert_eq!(d.events["free"], 1);
    assert_eq!(d.events["user_defined"], 1);
    // 1200 alloc/free pairs + one legacy alloc/free + one alloc still live; the snapshot's active block
    // is that live alloc, so it adds nothing. Lifetimes never overlap: the peak is the largest one.
    assert_eq!(d.allocations, 1202);
    assert_eq!(d.timeline_peak_bytes, 2048);
    for proto in 0..=5 {
        let s = read_bytes(&data(&format!("synthetic.proto{proto}.pickle")))
            .unwrap_or_else(|e| panic!("proto {proto}: {e}"));
        assert_eq!(summarize(&s), expected, "protocol {proto}");
        assert_eq!(s.external_annotations.len(), 2);
        let settings = s.allocator_settings.as_ref().unwrap();
        let PyValue::Dict(kv) = settings else {
            panic!("settings is not a dict")
        };
        assert_eq!(kv.len(), 6, "protocol {proto}");
        assert!(settings
            .to_python()
            .contains("'expandable_segments:False,é'"));
        assert!(settings.to_python().contains("'t': (1, 2, 3, 4)"));
        let fx = (0..s.interner.frame_count() as u32)
            .map(|i| s.frame(memograph_snapshot::FrameId(i)))
            .find(|f| f.fx.is_some())
            .expect("an FX frame");
        assert_eq!(s.str(fx.fx.unwrap().node_target.unwrap()), "aten.mm");
        let t = s.trace(0);
        assert!(t
            .action
            .iter()
            .any(|a| matches!(a, Action::Other(n) if s.str(*n) == "brand_new_action")));
    }
}

/// A tiny assembler for hand-written pickles.
fn op(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
}
fn key(out: &mut Vec<u8>, s: &str) {
    out.push(0x8c);
    out.push(s.len() as u8);
    out.extend_from_slice(s.as_bytes());
}

#[test]
fn rarer_data_opcodes_are_read() {
    let mut p = vec![0x80, 4, b'}', b'('];
    key(&mut p, "segments");
    op(&mut p, b"]");
    key(&mut p, "allocator_settings");
    op(&mut p, b"}(");
    key(&mut p, "S");
    op(&mut p, b"S'a\\x41b\\n'\n");
    key(&mut p, "C");
    op(&mut p, b"C\x03xyz");
    key(&mut p, "B");
    op(&mut p, b"B\x02\x00\x00\x00xy");
    key(&mut p, "U8");
    op(&mut p, b"\x8d\x02\x00\x00\x00\x00\x00\x00\x00hi");
    key(&mut p, "L4");
    op(
        &mut p,
        b"\x8b\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01",
    );
    key(&mut p, "neg");
    op(&mut p, b"\x8a\x01\xff");
    key(&mut p, "set");
    op(&mut p, b"\x8f(K\x01K\x02\x90");
    key(&mut p, "fs");
    op(&mut p, b"(K\x03\x91");
    key(&mut p, "ba");
    op(&mut p, b"\x96\x01\x00\x00\x00\x00\x00\x00\x00z");
    key(&mut p, "I");
    op(&mut p, b"I01\n");
    key(&mut p, "L");
    op(&mut p, b"L-123L\n");
    key(&mut p, "F");
    op(&mut p, b"F0.25\n");
    key(&mut p, "V");
    op(&mut p, b"Vcaf\\u00e9\n");
    key(&mut p, "t0");
    op(&mut p, b")");
    key(&mut p, "dup");
    op(&mut p, b"K\x052\x86");
    op(&mut p, b"uu.");
    let s = read_bytes(&p).unwrap_or_else(|e| panic!("{e}"));
    let settings = s.allocator_settings.unwrap();
    let PyValue::Dict(kv) = &settings else {
        panic!()
    };
    let get = |k: &str| {
        kv.iter()
            .find(|(key, _)| *key == PyValue::Str(k.into()))
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(get("S"), PyValue::Str("aAb\n".into()));
    assert_eq!(get("C"), PyValue::Bytes(b"xyz".to_vec()));
    assert_eq!(get("B"), PyValue::Bytes(b"xy".to_vec()));
    assert_eq!(get("U8"), PyValue::Str("hi".into()));
    assert_eq!(get("L4"), PyValue::Int(1i128 << 64));
    assert_eq!(get("neg"), PyValue::Int(-1));
    assert_eq!(
        get("set"),
        PyValue::Tuple(vec![PyValue::Int(1), PyValue::Int(2)])
    );
    assert_eq!(get("fs"), PyValue::Tuple(vec![PyValue::Int(3)]));
    assert_eq!(get("ba"), PyValue::Bytes(b"z".to_vec()));
    assert_eq!(get("I"), PyValue::Bool(true));
    assert_eq!(get("L"), PyValue::Int(-123));
    assert_eq!(get("F"), PyValue::Float(0.25));
    assert_eq!(get("V"), PyValue::Str("café".into()));
    assert_eq!(get("t0"), PyValue::Tuple(vec![]));
    assert_eq!(
        get("dup"),
        PyValue::Tuple(vec![PyValue::Int(5), PyValue::Int(5)])
    );
}

#[test]
fn a_bare_list_of_segments_is_the_oldest_format() {
    // [{'device': 0, 'address': 4096, 'total_size': 2097152, 'blocks': [{'size': 2097152, 'state': 'active_allocated'}]}]
    let mut p = vec![0x80, 2, b']', b'}', b'('];
    key(&mut p, "device");
    op(&mut p, b"K\x00");
    key(&mut p, "address");
    op(&mut p, b"M\x00\x10");
    key(&mut p, "total_size");
    op(&mut p, b"J\x00\x00\x20\x00");
    key(&mut p, "blocks");
    op(&mut p, b"]}(");
    key(&mut p, "size");
    op(&mut p, b"J\x00\x00\x20\x00");
    key(&mut p, "state");
    key(&mut p, "active_allocated");
    op(&mut p, b"uaua.");
    let s = read_bytes(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.format, memograph_snapshot::Format::SegmentList);
    let d = &summarize(&s)[0];
    assert_eq!(d.segments, 1);
    assert_eq!(d.timeline_peak_bytes, 2 << 20);
    assert_eq!(d.allocations, 1);
    assert_eq!(s.segments[0].blocks[0].address, 4096);
}

/// A frame dict memoised at `memo` (`BINPUT`), named `name`.
fn frame(out: &mut Vec<u8>, memo: u8, name: &str) {
    op(out, &[b'}', b'q', memo, b'(']);
    key(out, "filename");
    key(out, "a.py");
    key(out, "line");
    op(out, b"K\x01");
    key(out, "name");
    key(out, name);
    op(out, b"u");
}

/// A trace entry whose frame list is `frames` (the list's opcodes, between its MARK and APPENDS).
fn entry(out: &mut Vec<u8>, addr: u8, frames: impl FnOnce(&mut Vec<u8>)) {
    op(out, b"}(");
    key(out, "action");
    key(out, "alloc");
    key(out, "addr");
    op(out, &[b'K', addr]);
    key(out, "size");
    op(out, b"M\x00\x02");
    key(out, "stream");
    op(out, b"K\x00");
    key(out, "frames");
    op(out, b"](");
    frames(out);
    op(out, b"eu");
}

#[test]
fn a_known_run_of_frame_gets_means_what_the_memo_holds_now() {
    // Entries 2 and 4 list their frames with the same bytes (GETs of memo 0 and 1), but between them
    // memo 0 is overwritten with another frame: entry 4's first frame is "c", not "a".
    let mut p = vec![0x80, 4, b'}', b'('];
    key(&mut p, "segments");
    op(&mut p, b"]");
    key(&mut p, "device_traces");
    op(&mut p, b"](](");
    entry(&mut p, 0x10, |p| {
        frame(p, 0, "a");
        frame(p, 1, "b");
    });
    entry(&mut p, 0x20, |p| op(p, b"h\x00h\x01"));
    entry(&mut p, 0x30, |p| frame(p, 0, "c"));
    entry(&mut p, 0x40, |p| op(p, b"h\x00h\x01"));
    entry(&mut p, 0x50, |p| op(p, b"h\x01h\x00"));
    op(&mut p, b"eeu.");
    let names = |s: &memograph_snapshot::Snapshot| -> Vec<Vec<String>> {
        let t = &s.device_traces[0];
        (0..t.len())
            .map(|k| {
                let frames = s.interner.stack(t.stack[k]);
                let name = |f: &_| s.interner.str(s.interner.frame(*f).name).to_string();
                frames.iter().map(name).collect()
            })
            .collect()
    };
    let expected = [
        vec!["a", "b"],
        vec!["a", "b"],
        vec!["c"],
        vec!["c", "b"],
        vec!["b", "c"],
    ];
    let pulled = read_bytes(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(names(&pulled), expected);
    for piece in [1, 3, 7, p.len()] {
        let mut reader = memograph_snapshot::PushReader::new(Some(p.len() as u64));
        for bytes in p.chunks(piece) {
            reader.push(bytes).unwrap();
        }
        let pushed = reader.finish().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(names(&pushed), expected, "pieces of {piece}");
    }
}
