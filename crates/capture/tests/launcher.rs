//! memograph-capture end to end with a real python3 (no CUDA needed), and, opt-in with
//! MEMOGRAPH_CUDA_TESTS=1 on a CUDA machine with torch, real captures.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The launcher, run in a folder of this test run's: without `--out` it writes `./memograph_snapshots`,
/// which is not to be left in the source tree.
fn capture() -> Command {
    let cwd =
        std::env::temp_dir().join(format!("memograph-capture-test-{}-cwd", std::process::id()));
    std::fs::create_dir_all(&cwd).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_memograph-capture"));
    command.current_dir(cwd);
    command
}

fn python_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("python")
}

fn fake_torch() -> PathBuf {
    python_dir().join("tests/fake_torch")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "memograph-capture-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_bootstraps_python_unit_tests_pass() {
    let out = Command::new("python3")
        .args(["-m", "unittest", "discover", "-s"])
        .arg(python_dir().join("tests"))
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    // Surface the count in cargo's output.
    let ran = text.lines().find(|l| l.starts_with("Ran ")).unwrap_or("");
    println!("python unittest: {ran}");
}

#[test]
fn the_command_runs_with_the_bootstrap_first_and_its_environment() {
    let out_dir = tmp("env");
    let user = tmp("user-site");
    std::fs::write(
        user.join("sitecustomize.py"),
        "import builtins\nbuiltins.USER_SITE = 'ran'\n",
    )
    .unwrap();
    let out = capture()
        .args(["--no-check", "--out"])
        .arg(&out_dir)
        .args(["--every-steps", "3", "--on-peak", "--", "python3", "-c"])
        .arg(
            "import builtins, os, sys\n\
             print(os.environ['PYTHONPATH'].split(':')[0].split('/')[-1].startswith('memograph-capture-'))\n\
             print('memograph_capture' in sys.modules, getattr(builtins, 'USER_SITE', 'missing'))\n\
             print(os.environ['MEMOGRAPH_CAPTURE_EVERY_STEPS'], os.environ['MEMOGRAPH_CAPTURE_ON_PEAK'])\n\
             print(os.environ['MEMOGRAPH_CAPTURE_OUT'] == sys.argv[1])",
        )
        .arg(std::path::absolute(&out_dir).unwrap())
        .env("PYTHONPATH", &user)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["True", "True ran", "3 1", "True"],
        "{stdout}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "the bootstrap must stay silent"
    );
    // Without a sitecustomize of the user's, too.
    let out = capture()
        .args(["--no-check", "--", "python3", "-c", "print('ok')"])
        .env_remove("PYTHONPATH")
        .output()
        .unwrap();
    assert_eq!(
        (
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        ("ok", "")
    );
}

#[test]
fn the_commands_exit_status_is_passed_on() {
    for code in [0, 3, 7, 255] {
        let status = capture()
            .args([
                "--no-check",
                "--",
                "python3",
                "-c",
                &format!("raise SystemExit({code})"),
            ])
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(code));
    }
    let status = capture()
        .args(["--no-check", "--", "false"])
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}

fn wait_ready(child: &mut std::process::Child) {
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
}

#[test]
fn sigterm_and_sigint_are_forwarded_to_the_command() {
    let marker = tmp("signals").join("got");
    let script = format!(
        "import signal, sys, time\n\
         def stop(sig, frame):\n    open({:?}, 'w').write(str(sig)); sys.exit(5)\n\
         signal.signal(signal.SIGTERM, stop)\n\
         print('ready', flush=True)\n\
         time.sleep(30)",
        marker.to_str().unwrap()
    );
    let mut child = capture()
        .args(["--no-check", "--", "python3", "-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_ready(&mut child);
    // SAFETY: sends SIGTERM to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(5));
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "15");

    // An unhandled SIGINT ends Python by SIGINT; the launcher ends the same way.
    let mut child = capture()
        .args([
            "--no-check",
            "--",
            "python3",
            "-c",
            "import time\nprint('ready', flush=True)\ntime.sleep(30)",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_ready(&mut child);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert!(
        status.signal() == Some(libc::SIGINT) || status.code() == Some(130),
        "{status:?}"
    );
}

fn one_error_line(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

#[test]
fn after_the_run_it_says_what_was_written_and_how_to_look_at_it() {
    // The test double of torch (CUDA "available"): the exit snapshot is written as on a GPU.
    let out_dir = tmp("next");
    let run = || {
        capture()
            .arg("--out")
            .arg(&out_dir)
            .args(["--", "python3", "-c", "import torch"])
            .env("PYTHONPATH", fake_torch())
            .output()
            .unwrap()
    };
    let out = run();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let snapshot = out_dir.join("rank0_exit_0.pickle");
    assert!(snapshot.is_file(), "{stderr}");
    assert_eq!(
        stderr.lines().last().unwrap(),
        format!(
            "memograph-capture: 1 snapshot in {}; look with memograph report {}, or the page's \
             Open folder…",
            out_dir.display(),
            snapshot.display()
        )
    );
    // Files of an earlier run that this one left alone are not counted.
    std::fs::write(out_dir.join("rank3_exit_0.pickle"), b"earlier").unwrap();
    let earlier = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let set_old = |p: &Path| {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(earlier)
            .unwrap()
    };
    set_old(&out_dir.join("rank3_exit_0.pickle"));
    set_old(&snapshot);
    let stderr = String::from_utf8_lossy(&run().stderr).to_string();
    // Said before the run: the folder holds an earlier run's snapshots, which it may replace.
    assert!(
        stderr.contains(&format!(
            "memograph-capture: {} already holds 2 snapshots of an earlier run; this run's \
             snapshots replace those of the same name (--out DIR keeps runs apart)\n",
            out_dir.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!(
            "memograph-capture: 1 snapshot in {}; look with memograph report {}, or the page's \
             Open folder…\n",
            out_dir.display(),
            snapshot.display()
        )),
        "{stderr}"
    );
}

#[test]
fn missing_python_torch_cuda_or_gpu_is_one_clear_line() {
    let out = capture()
        .args(["--python", "/nonexistent/python3", "--", "python3", "x.py"])
        .output()
        .unwrap();
    assert_eq!(
        one_error_line(&out),
        "error: no /nonexistent/python3 on PATH (use --python PATH)\n"
    );

    let torch_installed = Command::new("python3")
        .args(["-c", "import torch"])
        .output()
        .unwrap()
        .status
        .success();
    if !torch_installed {
        let out = capture()
            .args(["--", "python3", "train.py"])
            .output()
            .unwrap();
        let line = one_error_line(&out);
        assert!(
            line.starts_with("error: torch is not importable by "),
            "{line}"
        );
        assert!(line.contains("No module named 'torch'"), "{line}");
    }

    let out = capture()
        .args(["--", "python3", "train.py"])
        .env("PYTHONPATH", fake_torch())
        .env("FAKE_TORCH_BUILD_CUDA", "")
        .output()
        .unwrap();
    assert_eq!(
        one_error_line(&out),
        "error: torch 0.0+fake was built without CUDA (a CPU-only build)\n"
    );

    let out = capture()
        .args(["--", "python3", "train.py"])
        .env("PYTHONPATH", fake_torch())
        .env("FAKE_TORCH_DEVICES", "0")
        .output()
        .unwrap();
    let line = one_error_line(&out);
    assert!(line.starts_with("error: no CUDA GPU is visible"), "{line}");

    // An --out that cannot be made says why.
    let taken = tmp("taken").join("file");
    std::fs::write(&taken, b"").unwrap();
    let out = capture()
        .args(["--no-check", "--out"])
        .arg(&taken)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(
        one_error_line(&out),
        format!(
            "error: cannot make --out {}: a file is in the way\n",
            taken.display()
        )
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(capture().output().unwrap().status.code(), Some(2));
    assert_eq!(
        capture()
            .args(["--stacks", "cpp", "--", "x"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        capture().args(["--help"]).output().unwrap().status.code(),
        Some(0)
    );
}

// ---- Opt-in: a CUDA machine with torch (MEMOGRAPH_CUDA_TESTS=1). ----

fn cuda_tests() -> bool {
    std::env::var("MEMOGRAPH_CUDA_TESTS").is_ok_and(|v| v == "1")
}

fn peak_of(path: &Path) -> u64 {
    let s = memograph_snapshot::read_bytes(&std::fs::read(path).unwrap()).unwrap();
    memograph_snapshot::analysis::summary::summarize(&s)
        .iter()
        .map(|d| d.timeline_peak_bytes)
        .max()
        .unwrap()
}

#[test]
fn cuda_demo_peaks_grow_with_context_and_bf16_training_needs_less_than_fp32() {
    if !cuda_tests() {
        eprintln!("skipped: set MEMOGRAPH_CUDA_TESTS=1 on a CUDA machine");
        return;
    }
    let out = tmp("demo");
    let run = capture()
        .arg("--out")
        .arg(&out)
        .args(["demo", "--context", "128,256,512"])
        .output()
        .unwrap();
    assert!(run.status.success());
    // The printed table: mode, precision, context, live peak (requested bytes), allocated peak
    // (torch.cuda.max_memory_allocated), file. Both grow with the context under capture (on an H200 the
    // allocated peak once read 178 MiB at every length: capture's per-step peak resets showed through),
    // and the live peak is the one memograph reads from each file, to the table's 0.1 MiB.
    let table = String::from_utf8_lossy(&run.stdout);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 6 && (f[0] == "train" || f[0] == "forward"))
        .collect();
    assert_eq!(rows.len(), 12, "{table}");
    let mib = |s: &str| -> f64 { s.parse().unwrap() };
    for f in &rows {
        let file_peak = peak_of(Path::new(f[5])) as f64 / (1 << 20) as f64;
        assert!(
            (file_peak - mib(f[3])).abs() <= 0.05 + 1e-9,
            "live peak of {}: {table}",
            f[5]
        );
        assert!(mib(f[4]) >= mib(f[3]), "{table}");
    }
    for prec in ["fp32", "bf16"] {
        let train: Vec<f64> = rows
            .iter()
            .filter(|f| f[0] == "train" && f[1] == prec)
            .map(|f| mib(f[4]))
            .collect();
        assert!(train.windows(2).all(|w| w[0] < w[1]), "{table}");
    }
    let p = |mode: &str, prec: &str, ctx: u32| {
        peak_of(&out.join(format!("demo_tiny_{mode}_{prec}_ctx{ctx}.pickle")))
    };
    for mode in ["forward", "train"] {
        assert!(
            p(mode, "fp32", 128) < p(mode, "fp32", 256)
                && p(mode, "fp32", 256) < p(mode, "fp32", 512)
        );
    }
    assert!(p("train", "bf16", 512) < p("train", "fp32", 512));
}

#[test]
fn cuda_an_induced_oom_writes_an_oom_snapshot_with_the_oom_event() {
    if !cuda_tests() {
        return;
    }
    let out = tmp("oom");
    let script = "import torch\nx = torch.empty(1 << 20, device='cuda')\ntry:\n    torch.empty(1 << 50, device='cuda')\nexcept torch.OutOfMemoryError:\n    pass";
    let status = capture()
        .arg("--out")
        .arg(&out)
        .args(["--", "python3", "-c", script])
        .status()
        .unwrap();
    assert!(status.success());
    let oom = out.join("rank0_oom_0.pickle");
    let s = memograph_snapshot::read_bytes(&std::fs::read(&oom).unwrap()).unwrap();
    assert!(s
        .device_traces
        .iter()
        .any(|t| t.action.contains(&memograph_snapshot::Action::Oom)));
}

#[test]
fn cuda_every_two_steps_of_six_writes_three_snapshots_and_six_records() {
    if !cuda_tests() {
        return;
    }
    let out = tmp("steps");
    let script = "import torch\nm = torch.nn.Linear(256, 256).cuda()\no = torch.optim.AdamW(m.parameters())\nfor _ in range(6):\n    m(torch.randn(64, 256, device='cuda')).sum().backward()\n    o.step()\n    o.zero_grad()";
    let status = capture()
        .arg("--out")
        .arg(&out)
        .args(["--every-steps", "2", "--", "python3", "-c", script])
        .status()
        .unwrap();
    assert!(status.success());
    let steps: Vec<_> = (1..=6)
        .filter(|s| out.join(format!("rank0_step_{s}.pickle")).exists())
        .collect();
    assert_eq!(steps, [2, 4, 6]);
    let records = std::fs::read_to_string(out.join("rank0_steps.jsonl")).unwrap();
    assert_eq!(records.lines().count(), 6);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("rank0_run.json")).unwrap())
            .unwrap();
    assert!(manifest["first_step"]["parameter_bytes"].as_u64().unwrap() > 0);
    assert!(manifest["static_memory_bytes"].is_u64());
}
