//! The pull reader on any bytes: a snapshot or an error, never a panic, an abort or a hang.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memograph_snapshot::read_bytes(data);
});
