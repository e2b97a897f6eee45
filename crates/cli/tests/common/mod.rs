//! The real fixtures (`../shared/fixtures` beside the project root, or `MEMOGRAPH_FIXTURES`) and a way to
//! run the `memograph` binary as users do.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn fixtures() -> PathBuf {
    std::env::var("MEMOGRAPH_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures")
        })
}

/// The fixtures that have reference figures, by file name, sorted.
pub fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures().join("reference"))
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.trim_end_matches(".json").to_string()
        })
        .collect();
    names.sort();
    names
}

/// `reference/NAME.json` of a fixture.
pub fn reference(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(fixtures().join("reference").join(format!("{name}.json")));
    serde_json::from_str(&text.unwrap()).unwrap()
}

/// Runs `memograph ARGS` in `cwd`: (exit status, stdout, stderr).
pub fn memograph_in(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memograph"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs `memograph ARGS` here.
pub fn memograph(args: &[&str]) -> (i32, String, String) {
    memograph_in(args, Path::new("."))
}
