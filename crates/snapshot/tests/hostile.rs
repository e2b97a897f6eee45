//! Bad input never panics, never hangs, and always says why. The corpus is built here from the real
//! fixtures and from hand-written attacks.

mod common;

use std::time::{Duration, Instant};

use memograph_snapshot::{read_bytes, ReadError};

/// CPU time this thread has used: what reading costs, whatever else the machine is doing (tests run in
/// parallel, and CI machines are shared).
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into `ts`, which outlives the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Reads `bytes`, which must fail, within 3 s of CPU time, without panicking. (A bound on a hang or an
/// unguarded expansion, not a benchmark: in a debug build the gzip bomb's guarded part takes 0.8 s
/// alone and up to 1.3 s beside the other test binaries.)
fn must_fail(what: &str, bytes: &[u8]) -> ReadError {
    let (start, cpu_start) = (Instant::now(), thread_cpu_time());
    let result = std::panic::catch_unwind(|| read_bytes(bytes));
    let (elapsed, cpu) = (start.elapsed(), thread_cpu_time() - cpu_start);
    assert!(cpu < Duration::from_secs(3), "{what}: took {cpu:?} of CPU");
    assert!(
        elapsed < Duration::from_secs(20),
        "{what}: took {elapsed:?}"
    );
    match result {
        Ok(Ok(_)) => panic!("{what}: was accepted"),
        Ok(Err(e)) => {
            assert!(!e.to_string().is_empty());
            e
        }
        Err(_) => panic!("{what}: panicked"),
    }
}

#[test]
fn truncation_at_every_offset_of_a_small_fixture_is_an_error() {
    let bytes = common::small_input();
    for cut in 0..bytes.len() {
        let e = must_fail(&format!("cut at {cut}"), &bytes[..cut]);
        if cut > 0 {
            assert!(
                matches!(
                    e,
                    ReadError::UnexpectedEof { .. } | ReadError::Malformed { .. }
                ),
                "cut at {cut}: {e}"
            );
        }
    }
}

#[test]
fn truncation_reports_the_offset_where_the_file_ends() {
    let bytes = common::small_input();
    let e = must_fail("cut", &bytes[..18_446]);
    assert_eq!(
        e.to_string(),
        "unexpected end of file at byte 18446 (file truncated?)"
    );
}

#[test]
fn truncation_at_many_offsets_of_a_large_fixture_is_an_error() {
    let bytes = fixture_or_skip!("kk_memory_ctx128_fullstep.pickle");
    let step = bytes.len() / 157;
    for cut in (1..bytes.len()).step_by(step).chain([bytes.len() - 1]) {
        must_fail(&format!("cut at {cut}"), &bytes[..cut]);
    }
}

#[test]
fn thousands_of_random_bit_flips_never_panic() {
    let original = common::small_input();
    let mut next = common::xorshift(0x9E37_79B9_7F4A_7C15u64);
    let (mut accepted, mut rejected) = (0, 0);
    for round in 0..4000 {
        let mut bytes = original.clone();
        for _ in 0..(1 + round % 4) {
            let i = (next() as usize) % bytes.len();
            bytes[i] ^= 1 << (next() % 8);
        }
        let cpu_start = thread_cpu_time();
        let result = std::panic::catch_unwind(|| read_bytes(&bytes));
        assert!(
            thread_cpu_time() - cpu_start < Duration::from_secs(1),
            "round {round} was slow"
        );
        match result {
            Ok(Ok(_)) => accepted += 1,
            Ok(Err(_)) => rejected += 1,
            Err(_) => panic!("round {round} panicked"),
        }
    }
    assert!(rejected > 0 && accepted + rejected == 4000);
}

#[test]
fn code_execution_opcodes_are_refused_with_their_name_and_offset() {
    // pickle.dumps(os.system('echo pwned')) as protocol 0 and 4 would emit these.
    let global = b"cos\nsystem\n(S'echo pwned'\ntR.";
    let e = must_fail("GLOBAL", global);
    assert_eq!(
        e.to_string(),
        "refusing pickle opcode GLOBAL at byte 0: it would import or call code, and a memory snapshot holds only plain data"
    );
    let stack_global = b"\x80\x04\x95\x20\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x04echo\x94\x85\x94R\x94.";
    let e = must_fail("STACK_GLOBAL", stack_global);
    assert!(e.to_string().contains("STACK_GLOBAL at byte 25"), "{e}");
    for (name, op) in [
        ("REDUCE", b'R'),
        ("BUILD", b'b'),
        ("INST", b'i'),
        ("OBJ", b'o'),
        ("NEWOBJ", 0x81),
        ("BINPERSID", b'Q'),
    ] {
        let e = must_fail(name, &[0x80, 4, b'N', op, b'.']);
        assert!(
            e.to_string().contains(&format!("opcode {name} at byte 3")),
            "{e}"
        );
    }
}

#[test]
fn a_million_nested_lists_are_refused_or_read_without_recursion() {
    let mut marks = vec![0x80, 4];
    marks.extend(std::iter::repeat_n(b'(', 1_000_000));
    let e = must_fail("marks", &marks);
    assert!(e.to_string().contains("nesting deeper than"), "{e}");

    // Nested by APPEND, with no MARK at all.
    let mut lists = vec![0x80, 4];
    lists.extend(std::iter::repeat_n(b']', 1_000_000));
    lists.extend(std::iter::repeat_n(b'a', 999_999));
    lists.push(b'.');
    let e = must_fail("lists", &lists);
    assert_eq!(
        e.to_string(),
        "not a PyTorch memory snapshot (top level is a list of lists)"
    );
}

#[test]
fn memo_index_out_of_range_is_an_error() {
    let e = must_fail("memo", b"\x80\x04h\x05.");
    assert_eq!(
        e.to_string(),
        "corrupt pickle: memo index 5 was never stored at byte 2"
    );
    let e = must_fail("memo put", b"\x80\x04Nr\xff\xff\xff\x7f.");
    assert!(
        e.to_string()
            .contains("memo index 2147483647 is far beyond"),
        "{e}"
    );
}

#[test]
fn lengths_that_point_past_the_end_are_errors() {
    let e = must_fail("BINUNICODE", b"\x80\x04X\xff\xff\x00\x00abc.");
    assert_eq!(
        e.to_string(),
        "corrupt pickle: length 65535 runs past the end of the file (4 bytes left) at byte 2"
    );
    must_fail("BINBYTES", b"\x80\x04B\x10\x00\x00\x00ab.");
    must_fail("LONG4", b"\x80\x04\x8b\x10\x00\x00\x00ab.");
    must_fail("SHORT_BINUNICODE", b"\x80\x04\x8c\x10ab");
}

#[test]
fn a_declared_4_gb_string_is_refused_before_any_allocation() {
    let mut p = b"\x80\x04\x8d".to_vec();
    p.extend_from_slice(&(4u64 << 30).to_le_bytes());
    p.extend_from_slice(b"abc.");
    let e = must_fail("BINUNICODE8", &p);
    assert!(
        e.to_string()
            .contains("length 4294967296 runs past the end"),
        "{e}"
    );
    // Streamed input has no known length: the string limit applies.
    let mut stream = std::io::Cursor::new(&p);
    let e = memograph_snapshot::read_snapshot(&mut stream, None, None).unwrap_err();
    assert!(e.to_string().contains("exceeds the 64 MiB limit"), "{e}");
}

#[test]
fn a_gzip_bomb_cannot_exhaust_memory() {
    let bomb = common::gzip_bomb();
    let e = must_fail("bomb", &bomb);
    assert!(e.to_string().contains("gzip bomb?"), "{e}");

    // The classic: 64 MiB of zeros fails on the first zero.
    let zeros = common::gzip(&vec![0u8; 64 << 20]);
    let e = must_fail("zeros", &zeros);
    assert!(e.to_string().starts_with("not a pickle file"), "{e}");
    // Behind a valid header, on the first zero after it.
    let mut header_then_zeros = b"\x80\x04".to_vec();
    header_then_zeros.extend(vec![0u8; 64 << 20]);
    let e = must_fail("header then zeros", &common::gzip(&header_then_zeros));
    assert!(
        e.to_string().contains("unknown opcode 0x00 at byte 2"),
        "{e}"
    );
}

#[test]
fn corrupt_gzip_is_an_error() {
    let mut gz = fixture_or_skip!("magma_memory_snapshot.pickle.gz");
    let n = gz.len();
    gz[n / 2] ^= 0xff;
    must_fail("flipped", &gz);
    must_fail("truncated", &gz[..n / 2]);
}

#[test]
fn valid_pickles_that_are_not_snapshots_say_why() {
    let cases: [(&[u8], &str); 5] = [
        (b"\x80\x04]\x94(K\x01K\x02e.", "top level is a list of ints"),
        (b"\x80\x04K\x07.", "top level is an int"),
        (
            b"\x80\x04}\x94\x8c\x01a\x94K\x01s.",
            "top-level dict has no 'segments' key; its keys are 'a'",
        ),
        (
            b"\x80\x04}\x94\x8c\x08segments\x94K\x01s.",
            "'segments' is an int, not a list",
        ),
        (b"\x80\x04}.", "top level is an empty dict"),
    ];
    for (bytes, why) in cases {
        let e = must_fail(why, bytes);
        assert_eq!(
            e.to_string(),
            format!("not a PyTorch memory snapshot ({why})")
        );
    }
    assert_eq!(must_fail("empty", b"").to_string(), "empty file");
}
