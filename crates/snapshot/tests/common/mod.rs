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
