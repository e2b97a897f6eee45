//! Where tests find the shared real fixtures (one lookup for every crate's tests), and the generator
//! their "random" inputs come from.
//!
//! Tests come in two tiers. The first needs nothing beside the repository (synthetic snapshots with
//! known figures, small hand-made pickles). The second reads the real snapshots in `../shared/fixtures`
//! beside the repository (or `MEMOGRAPH_FIXTURES`); when they are absent those tests say so on stderr
//! and pass, unless `MEMOGRAPH_REQUIRE_FIXTURES=1` (the test script sets it when they are there, so CI
//! cannot skip them silently).

use std::path::PathBuf;

/// The shared fixtures' folder, whether or not it exists.
pub fn fixtures_dir() -> PathBuf {
    match std::env::var("MEMOGRAPH_FIXTURES") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures"),
    }
}

/// Whether the second tier may not be skipped.
fn required() -> bool {
    std::env::var("MEMOGRAPH_REQUIRE_FIXTURES").is_ok_and(|v| v == "1")
}

/// Whether the shared fixtures are there; when not, notes that `what` is skipped (or panics when they
/// are required).
pub fn fixtures_present(what: &str) -> bool {
    let dir = fixtures_dir();
    if dir.join("reference").is_dir() {
        return true;
    }
    assert!(
        !required(),
        "MEMOGRAPH_REQUIRE_FIXTURES=1 but {} has no fixtures",
        dir.display()
    );
    eprintln!(
        "skipped (tier 2): {what} needs the shared fixtures in {}",
        dir.display()
    );
    false
}

/// A fixture's bytes, or `None` (with the note above) when the shared fixtures are absent.
pub fn fixture(name: &str) -> Option<Vec<u8>> {
    if !fixtures_present(name) {
        return None;
    }
    let path = fixtures_dir().join(name);
    Some(std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// Every fixture that has reference figures, by file name, sorted (empty when absent).
pub fn fixture_names() -> Vec<String> {
    if !fixtures_present("the fixtures' reference figures") {
        return Vec::new();
    }
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir().join("reference"))
        .expect("the reference folder exists")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(String::from)
        })
        .collect();
    names.sort();
    names
}

/// `reference/NAME.json` of a fixture, as text.
pub fn reference_text(name: &str) -> String {
    let path = fixtures_dir()
        .join("reference")
        .join(format!("{name}.json"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fixed-seed xorshift generator: the same "random" inputs on every run.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
