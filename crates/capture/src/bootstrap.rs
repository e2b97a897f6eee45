//! The Python side, compiled into the binary and written to a fresh directory at each run.

use std::path::{Path, PathBuf};

const SITECUSTOMIZE: &str = include_str!("../python/memograph_bootstrap/sitecustomize.py");
const CAPTURE: &str = include_str!("../python/memograph_bootstrap/memograph_capture.py");
pub const DEMO: &str = include_str!("../python/demo.py");
pub const CHECK: &str = include_str!("../python/check.py");

/// A directory holding the bootstrap, removed when dropped.
pub struct BootstrapDir {
    pub path: PathBuf,
}

impl BootstrapDir {
    pub fn create() -> std::io::Result<BootstrapDir> {
        let path = std::env::temp_dir().join(format!("memograph-capture-{}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        write(&path, "sitecustomize.py", SITECUSTOMIZE)?;
        write(&path, "memograph_capture.py", CAPTURE)?;
        write(&path, "memograph_demo.py", DEMO)?;
        write(&path, "memograph_check.py", CHECK)?;
        Ok(BootstrapDir { path })
    }
}

fn write(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    std::fs::write(dir.join(name), text)
}

impl Drop for BootstrapDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
