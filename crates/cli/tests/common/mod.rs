//! The real fixtures (`../shared/fixtures` beside the project root, or `MEMOGRAPH_FIXTURES`) and a way to
//! run the `memograph` binary as users do.
#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub use memograph_snapshot::testing::fixture_names;

/// The shared fixtures' folder (tier 2: call [`present`] first).
pub fn fixtures() -> PathBuf {
    memograph_snapshot::testing::fixtures_dir()
}

/// Whether the shared fixtures are there (when not, the test says it is skipped and returns).
pub fn present(test: &str) -> bool {
    memograph_snapshot::testing::fixtures_present(test)
}

/// `reference/NAME.json` of a fixture.
pub fn reference(name: &str) -> serde_json::Value {
    serde_json::from_str(&memograph_snapshot::testing::reference_text(name)).unwrap()
}

/// Output of `--json` modes that write one object per line (`summary`, `trace`), each line read.
pub fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Runs `memograph ARGS` in `cwd`: (exit status, stdout, stderr).
pub fn memograph_in(args: &[&str], cwd: &Path) -> (i32, String, String) {
    memograph_with(args, cwd, &[])
}

/// Runs `memograph ARGS` in `cwd` with `vars` set (and `COLUMNS` unset unless among them: tables as
/// into a pipe).
pub fn memograph_with(args: &[&str], cwd: &Path, vars: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memograph"))
        .args(args)
        .current_dir(cwd)
        .env_remove("COLUMNS")
        .envs(vars.iter().copied())
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
