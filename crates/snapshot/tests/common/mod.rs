//! Where the shared real fixtures live: `../shared/fixtures` beside the project root
//! (override with `MEMOGRAPH_FIXTURES`).
#![allow(dead_code)]

use std::path::PathBuf;

pub fn fixtures_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("MEMOGRAPH_FIXTURES") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures")
}

/// Every fixture file name that has a reference, sorted.
pub fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir().join("reference"))
        .expect("../shared/fixtures/reference must exist")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().map(|s| s.to_string()))
        .filter_map(|n| n.strip_suffix(".json").map(|s| s.to_string()))
        .collect();
    names.sort();
    names
}

pub fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixtures_dir().join(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

pub fn reference(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(
        fixtures_dir()
            .join("reference")
            .join(format!("{name}.json")),
    )
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A fixed-seed xorshift generator: the same "random" corpus on every run.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// `data` gzip-compressed.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// A gzip bomb of valid opcodes: a list, then 256 members of `N` `a` (append None) that expand 1000×.
pub fn gzip_bomb() -> Vec<u8> {
    let chunk: Vec<u8> = b"Na".iter().copied().cycle().take(1 << 20).collect();
    let member = gzip(&chunk);
    let mut bomb = gzip(b"\x80\x04]");
    for _ in 0..256 {
        bomb.extend_from_slice(&member);
    }
    bomb
}
