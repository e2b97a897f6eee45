//! `memograph`: summaries, traces and allocator statistics of PyTorch CUDA memory snapshots.

mod charts;
mod clock;
mod compare;
mod load;
mod report;
mod steps;
mod summary;
mod trace;

use std::process::ExitCode;

const USAGE: &str = "\
memograph — read PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot) safely

USAGE:
    memograph summary FILE... [--json]      peak, allocations, reserved/active bytes per device
    memograph trace FILE [--device N]        the event history, one line per event
    memograph stats FILE [--device N] [--json]
                                            per-segment allocated, free and rounding waste
    memograph report FILE... [OUT_DIR] [NAME] [--json] [--device N] [--rules RULES.json]
                                            where the memory goes: the live set at the peak by
                                            call stack, category and component, top consumers,
                                            allocator efficiency, recommendations. Writes
                                            OUT_DIR/YYYYMMDD_HHMMSS_NAME/ (five PNG charts,
                                            analysis_report.txt, README.md, analysis.json) and
                                            points OUT_DIR/latest at it; OUT_DIR defaults to
                                            ./memograph_reports. --json prints the analyses as
                                            one JSON line per file instead. --rules adds your
                                            category rules: [{\"category\": …, \"pattern\": regex}]
    memograph compare FILE... [--baseline FILE] [--device N] [--json | --markdown] [--top N]
                                            runs side by side: one row per file with the config
                                            its name tells (ctx512, bs8, bf16, rank3…), peak
                                            allocated and its delta against the baseline (the
                                            first FILE unless given), reserved, components at the
                                            peak; the rank strip when names carry ranks; then the
                                            call paths that grew from the baseline to each file
    memograph diff A B [--at peak|ENTRY_A:ENTRY_B] [--device N] [--json]
                                            what is live in B and not in A (and back), as a call-
                                            stack tree with A bytes, B bytes and the delta, at the
                                            peaks unless --at names two entries
    memograph steps FILE... [--json | --markdown] [--show-theoretical] [--reserved] [-o OUT.png]
                                            per-step memory records (memograph-capture's
                                            rank*_steps.jsonl and run.json, torchtitan metrics,
                                            logs and exports, Megatron-LM logs and memory
                                            traces, CSV): a row per run and rank with its highest
                                            peak allocated and reserved, static and theoretical
                                            memory, retries and OOMs; -o draws them per step
    memograph help | --help | --version

FILE may be a plain or gzip-compressed pickle (protocols 0-5). No pickle code is ever run.
Exit status: 0 on success, 1 when a file cannot be read, 2 on a usage error.";

/// A failure to report as `error: {0}` with exit status 1 (an empty message: already reported).
pub struct Failure(pub String);

impl Failure {
    pub fn reported() -> Failure {
        Failure(String::new())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        None | Some("help" | "--help" | "-h") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some("--version" | "-V") => {
            println!("memograph {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Some("summary") => Options::parse(&args[1..], true).map(|o| summary::run(&o)),
        Some("trace") => Options::parse(&args[1..], false).map(|o| trace::run_trace(&o)),
        Some("stats") => Options::parse(&args[1..], false).map(|o| trace::run_stats(&o)),
        Some("report") => report::ReportArgs::parse(&args[1..]).map(|r| report::run(&r)),
        Some("compare") => {
            compare::CompareArgs::parse(&args[1..]).map(|c| compare::run_compare(&c))
        }
        Some("diff") => compare::DiffArgs::parse(&args[1..]).map(|d| compare::run_diff(&d)),
        Some("steps") => steps::StepsArgs::parse(&args[1..]).map(|s| steps::run(&s)),
        Some(other) => Err(format!("unknown command '{other}'")),
    };
    match result {
        Err(usage) => {
            eprintln!("error: {usage}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(Failure(message))) => {
            if !message.is_empty() {
                eprintln!("error: {message}");
            }
            ExitCode::from(1)
        }
    }
}

/// The value of `--device N`.
pub fn device_arg(value: Option<&String>) -> Result<i64, String> {
    let v = value.ok_or("--device needs a number")?;
    v.parse()
        .map_err(|_| format!("--device needs a number, not '{v}'"))
}

/// Parsed command-line options shared by the commands.
pub struct Options {
    pub files: Vec<String>,
    pub json: bool,
    pub device: Option<i64>,
}

impl Options {
    fn parse(args: &[String], many_files: bool) -> Result<Options, String> {
        let mut o = Options {
            files: Vec::new(),
            json: false,
            device: None,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--json" => o.json = true,
                "--device" | "-d" => o.device = Some(device_arg(it.next())?),
                flag if flag.starts_with("--") => return Err(format!("unknown option '{flag}'")),
                file => o.files.push(file.to_string()),
            }
        }
        if o.files.is_empty() {
            return Err("no FILE given".into());
        }
        if !many_files && o.files.len() > 1 {
            return Err("this command takes one FILE".into());
        }
        Ok(o)
    }
}
