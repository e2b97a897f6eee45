//! Options, the preflight check, and running the command with the bootstrap: exit status passed on,
//! SIGINT and SIGTERM forwarded.

use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use crate::bootstrap::BootstrapDir;

pub enum Parsed {
    Help,
    Run(Options),
}

pub struct Options {
    pub out: String,
    pub max_entries: u64,
    pub stacks: String,
    pub context: String,
    pub every_steps: u64,
    pub on_peak: bool,
    pub on_exit: bool,
    pub python: String,
    pub check: bool,
    /// `demo` and its options, or the command after `--`.
    pub demo: Option<Vec<String>>,
    pub command: Vec<String>,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Parsed, String> {
        let mut o = Options {
            out: "memograph_snapshots".into(),
            max_entries: 100_000,
            stacks: "python".into(),
            context: "all".into(),
            every_steps: 0,
            on_peak: false,
            on_exit: true,
            python: "python3".into(),
            check: true,
            demo: None,
            command: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
            match a.as_str() {
                "-h" | "--help" | "help" => return Ok(Parsed::Help),
                "--" => {
                    o.command = it.by_ref().cloned().collect();
                    break;
                }
                "demo" if o.demo.is_none() => o.demo = Some(Vec::new()),
                "--out" => o.out = value("--out")?,
                "--max-entries" => {
                    o.max_entries = number(&value("--max-entries")?, "--max-entries")?
                }
                "--every-steps" => {
                    o.every_steps = number(&value("--every-steps")?, "--every-steps")?
                }
                "--stacks" => {
                    o.stacks = one_of(value("--stacks")?, "--stacks", &["python", "all"])?
                }
                "--context" if o.demo.is_none() => {
                    o.context = one_of(
                        value("--context")?,
                        "--context",
                        &["none", "alloc", "state", "all"],
                    )?
                }
                "--on-peak" => o.on_peak = true,
                "--no-exit-snapshot" => o.on_exit = false,
                "--python" => o.python = value("--python")?,
                "--no-check" => o.check = false,
                "--model" | "--context" | "--precision" | "--mode" if o.demo.is_some() => {
                    let v = value(a)?;
                    o.demo.as_mut().expect("checked").extend([a.clone(), v]);
                }
                other => return Err(format!("unknown option '{other}'")),
            }
        }
        if o.demo.is_none() && o.command.is_empty() {
            return Err(
                "no command: put it after --, as in: memograph-capture -- python train.py".into(),
            );
        }
        Ok(Parsed::Run(o))
    }
}

fn number(v: &str, name: &str) -> Result<u64, String> {
    v.parse()
        .map_err(|_| format!("{name} needs a number, not '{v}'"))
}

fn one_of(v: String, name: &str, allowed: &[&str]) -> Result<String, String> {
    if allowed.contains(&v.as_str()) {
        Ok(v)
    } else {
        Err(format!(
            "{name} must be one of {}, not '{v}'",
            allowed.join(", ")
        ))
    }
}

/// Finds `program` on PATH (or as a path).
fn which(program: &str) -> Option<std::path::PathBuf> {
    if program.contains('/') {
        let p = std::path::PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Runs the command (or the demo) with the bootstrap and returns its exit status.
pub fn run(o: &Options) -> Result<ExitCode, String> {
    let python =
        which(&o.python).ok_or_else(|| format!("no {} on PATH (use --python PATH)", o.python))?;
    let dir = BootstrapDir::create().map_err(|e| format!("cannot write the bootstrap: {e}"))?;
    let out = std::path::absolute(&o.out).map_err(|e| format!("--out {}: {e}", o.out))?;
    std::fs::create_dir_all(&out).map_err(|e| {
        use std::io::ErrorKind;
        let reason = match e.kind() {
            ErrorKind::AlreadyExists | ErrorKind::NotADirectory => "a file is in the way".into(),
            ErrorKind::PermissionDenied => "permission denied".into(),
            ErrorKind::ReadOnlyFilesystem => "read-only file system".into(),
            _ => e.to_string(),
        };
        format!("cannot make --out {}: {reason}", out.display())
    })?;

    if o.check {
        let check = Command::new(&python)
            .arg(dir.path.join("memograph_check.py"))
            .output()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        let line = String::from_utf8_lossy(&check.stdout).trim().to_string();
        if !check.status.success() {
            return Err(if line.is_empty() {
                String::from_utf8_lossy(&check.stderr).trim().to_string()
            } else {
                line
            });
        }
        eprintln!(
            "memograph-capture: {line}; snapshots go to {}",
            out.display()
        );
    }

    let (program, args): (std::ffi::OsString, Vec<std::ffi::OsString>) = match &o.demo {
        Some(demo) => {
            let mut args = vec![
                dir.path.join("memograph_demo.py").into_os_string(),
                "--out".into(),
                out.clone().into(),
            ];
            args.extend(demo.iter().map(Into::into));
            (python.into_os_string(), args)
        }
        None => (
            o.command[0].clone().into(),
            o.command[1..].iter().map(Into::into).collect(),
        ),
    };
    let mut pythonpath = std::ffi::OsString::from(&dir.path);
    if let Some(existing) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
        pythonpath.push(":");
        pythonpath.push(existing);
    }
    let mut cmd = Command::new(&program);
    cmd.args(&args)
        .env("PYTHONPATH", pythonpath)
        .env("MEMOGRAPH_CAPTURE_OUT", &out)
        .env("MEMOGRAPH_CAPTURE_MAX_ENTRIES", o.max_entries.to_string())
        .env("MEMOGRAPH_CAPTURE_STACKS", &o.stacks)
        .env("MEMOGRAPH_CAPTURE_CONTEXT", &o.context)
        .env("MEMOGRAPH_CAPTURE_EVERY_STEPS", o.every_steps.to_string())
        .env(
            "MEMOGRAPH_CAPTURE_ON_PEAK",
            if o.on_peak { "1" } else { "0" },
        )
        .env(
            "MEMOGRAPH_CAPTURE_ON_EXIT",
            if o.on_exit && o.demo.is_none() {
                "1"
            } else {
                "0"
            },
        )
        .env(
            "MEMOGRAPH_CAPTURE_COMMAND",
            serde_json::to_string(&o.command).unwrap_or_default(),
        );
    let before = listing(&out);
    let earlier = before
        .iter()
        .filter(|(p, _)| p.to_string_lossy().ends_with(".pickle"))
        .count();
    if earlier > 0 {
        eprintln!(
            "memograph-capture: {} already holds {earlier} snapshot{} of an earlier run; this run's \
             snapshots replace those of the same name (--out DIR keeps runs apart)",
            out.display(),
            if earlier == 1 { "" } else { "s" }
        );
    }
    forward_signals();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", program.to_string_lossy()))?;
    let status = loop {
        let pending = PENDING.swap(0, Ordering::SeqCst);
        if pending != 0 {
            // SAFETY: kill(2) with the child's pid and a signal number has no memory effects.
            unsafe { libc::kill(child.id() as libc::pid_t, pending) };
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("waiting for the command failed: {e}")),
        }
    };
    drop(dir);
    if let Some(next) = what_next(&out, &before) {
        eprintln!("memograph-capture: {next}");
    }
    Ok(exit_code_of(status))
}

/// The files in `out` and when each last changed.
fn listing(out: &std::path::Path) -> Vec<(std::path::PathBuf, Option<std::time::SystemTime>)> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| (e.path(), e.metadata().and_then(|m| m.modified()).ok()))
        .collect()
}

/// After the run: what it wrote into `out` (files new or changed since `before`), and how to look at
/// it; `None` when it wrote nothing (a run without torch or CUDA stays silent).
fn what_next(
    out: &std::path::Path,
    before: &[(std::path::PathBuf, Option<std::time::SystemTime>)],
) -> Option<String> {
    let written: Vec<std::path::PathBuf> = listing(out)
        .into_iter()
        .filter(|f| !before.contains(f))
        .map(|(path, _)| path)
        .collect();
    let named = |ending: &str| -> Vec<&std::path::PathBuf> {
        written
            .iter()
            .filter(|p| p.to_string_lossy().ends_with(ending))
            .collect()
    };
    let (snapshots, steps) = (named(".pickle"), named("_steps.jsonl"));
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut said = Vec::new();
    let mut how = Vec::new();
    match snapshots[..] {
        [] => {}
        [one] => {
            said.push("1 snapshot".to_string());
            how.push(format!("memograph report {}", one.display()));
        }
        _ => {
            said.push(plural(snapshots.len(), "snapshot", "snapshots"));
            how.push(format!("memograph compare {}", out.display()));
        }
    }
    if !steps.is_empty() {
        said.push(plural(steps.len(), "step record file", "step record files"));
        how.push(format!("memograph steps {}", out.display()));
    }
    if said.is_empty() {
        return None;
    }
    how.push("the page's Open folder…".to_string());
    Some(format!(
        "{} in {}; look with {}",
        said.join(" and "),
        out.display(),
        how.join(", or ")
    ))
}

/// The signal waiting to be forwarded (0: none).
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    PENDING.store(sig, Ordering::SeqCst);
}

fn forward_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installs an async-signal-safe handler (one atomic store).
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

/// The child's status as ours: its exit code, or, when a signal ended it, that signal re-raised
/// (falling back to 128 + signal, as shells report it).
fn exit_code_of(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return ExitCode::from(code as u8);
    }
    if let Some(sig) = status.signal() {
        // SAFETY: restores the default action and raises the same signal on ourselves.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return ExitCode::from((128 + sig) as u8);
    }
    ExitCode::from(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_snapshots_are_compared_and_step_records_charted() {
        let out =
            std::env::temp_dir().join(format!("memograph-capture-next-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("notes.txt"), b"kept").unwrap();
        let before = listing(&out);
        assert_eq!(
            what_next(&out, &before),
            None,
            "nothing written: nothing said"
        );
        for name in [
            "rank0_exit_4.pickle",
            "rank1_exit_4.pickle",
            "rank0_steps.jsonl",
            "rank1_steps.jsonl",
            "rank0_run.json",
        ] {
            std::fs::write(out.join(name), b"x").unwrap();
        }
        let o = out.display();
        assert_eq!(
            what_next(&out, &before).unwrap(),
            format!(
                "2 snapshots and 2 step record files in {o}; look with memograph compare {o}, or \
                 memograph steps {o}, or the page's Open folder…"
            )
        );
        std::fs::remove_dir_all(&out).unwrap();
    }
}
