//! `memograph`: summaries, traces, statistics, reports, comparisons and step records of PyTorch CUDA
//! memory snapshots. Arguments are parsed by clap (per-command help, suggestions for typos, shell
//! completions); errors on files are one line, `error: FILE: reason`, and exit status 1; usage errors
//! exit 2.

mod charts;
mod clock;
mod compare;
mod html;
mod load;
mod report;
mod steps;
mod summary;
mod trace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use load::Holds;

const AFTER_HELP: &str = "\
FILE may be a plain or gzip-compressed pickle (protocols 0-5) or a snapshot saved as JSON. No
pickle code is ever run. Where a command takes several files, a folder stands for the snapshots
in it (named *.pickle, *.pkl, *.pk, maybe .gz, or with \"snapshot\" in the name; for steps, its
step records), in natural order: memograph compare memograph_snapshots/
Exit status: 0 on success, 1 when a file cannot be read, 2 on a usage error.";

/// Read PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot) safely.
#[derive(Parser)]
#[command(name = "memograph", version, after_help = AFTER_HELP, propagate_version = true)]
struct Cli {
    /// No progress bars.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Peak, allocations, reserved/active/requested bytes per device.
    ///
    /// The timeline peak is the highest sum of live allocations over the trace, each at the size the
    /// program asked for: the trace records those sizes, and PyTorch's Active Memory Timeline draws them.
    /// torch.cuda.max_memory_allocated() counts the allocator's blocks instead (each rounded up to 512
    /// bytes, some not split), so it can read higher: by up to 2 MiB on a small bf16 training step.
    Summary {
        /// Snapshots (a folder: the snapshots in it).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        /// One JSON object per file per line (the shape of the reference figures).
        #[arg(long)]
        json: bool,
    },
    /// The event history, one line per event.
    ///
    /// With --find, only the events of the allocations a query finds (each one's alloc, free request
    /// and free), as the page's find box finds them: an address (b7f4…_3, 0x7f4…, a hex prefix), a
    /// size (>100MB, <=4KiB, 1.0GiB; MB and GB are binary), or text in a frame, the category,
    /// compile_context or user_metadata.
    #[command(
        after_help = "Examples:\n  memograph trace run.pickle --find '>1GiB' --stacks\n  \
        memograph trace run.pickle --find models.py:174 --entries 1200:1530\n  \
        memograph trace run.pickle --json | jq 'select(.action == \"oom\")'"
    )]
    Trace {
        /// A snapshot (plain or gzip-compressed pickle, or JSON).
        file: String,
        /// The device (default: the one with the longest trace).
        #[arg(short, long, allow_negative_numbers = true)]
        device: Option<i64>,
        /// Only the events of the allocations this finds (see above).
        #[arg(long, value_name = "QUERY", value_parser = trace::query)]
        find: Option<trace::Find>,
        /// Only entries FROM:TO (TO excluded; either may be left out: 1200:, :500).
        #[arg(long, value_name = "FROM:TO", value_parser = trace::entry_range)]
        entries: Option<std::ops::Range<u64>>,
        /// Each event's stack under it (framework plumbing left out; in JSON every frame).
        #[arg(long)]
        stacks: bool,
        /// One JSON object per event per line.
        #[arg(long)]
        json: bool,
    },
    /// Per segment: allocated, free, pending and rounding waste.
    Stats {
        /// A snapshot (plain or gzip-compressed pickle, or JSON).
        file: String,
        /// The device (default: the one with the longest trace).
        #[arg(short, long, allow_negative_numbers = true)]
        device: Option<i64>,
        /// One JSON object: each segment's figures and the totals.
        #[arg(long)]
        json: bool,
    },
    /// Where the memory goes: the live set at the peak by call stack, category and component, top
    /// consumers, allocator efficiency, recommendations.
    ///
    /// Writes OUT_DIR/YYYYMMDD_HHMMSS_NAME/ (five PNG charts, analysis_report.txt, README.md,
    /// analysis.json) and points OUT_DIR/latest at it; OUT_DIR defaults to ./memograph_reports. Given
    /// several files, also a combined table and compare.png.
    Report {
        /// FILE... [OUT_DIR] [NAME]: files (or folders of snapshots) while they exist (or look like
        /// snapshots), then the output directory, then the report's name.
        // The brackets are the help's usage notation, not links.
        #[allow(rustdoc::broken_intra_doc_links)]
        #[arg(required = true, value_name = "FILE... [OUT_DIR] [NAME]")]
        args: Vec<String>,
        /// The analyses as one JSON line per file instead of a directory.
        #[arg(long)]
        json: bool,
        /// The device the charts show (default: the one with the longest trace).
        #[arg(short, long, allow_negative_numbers = true)]
        device: Option<i64>,
        /// Your category rules, tried before the built-in ones: [{"category": …, "pattern": regex}].
        #[arg(long, value_name = "RULES.json")]
        rules: Option<String>,
        /// The output directory (instead of the positional OUT_DIR).
        #[arg(short, long, value_name = "OUT_DIR")]
        out: Option<PathBuf>,
        /// The report's name (instead of the positional NAME).
        #[arg(long)]
        name: Option<String>,
        /// The memory of the GPU the runs should fit (`80GiB`, `80GB`, or GiB: `80`): each device's
        /// headroom and whether it fits, in the findings, the JSON and the combined table. Without
        /// it, a run that ran out of memory tells what its device gave: reserved plus free then.
        #[arg(long, value_name = "SIZE", value_parser = gpu_memory)]
        gpu_memory: Option<u64>,
    },
    /// Runs side by side: the peak table with the config file names tell (ctx512, bs8, bf16,
    /// rank3…), deltas against a baseline, the rank strip, and the call paths that grew.
    ///
    /// "peak allocated" is each snapshot's timeline peak (see `memograph help summary`): the sizes the
    /// program asked for, so it can read below torch.cuda.max_memory_allocated(), which counts the
    /// allocator's rounded blocks.
    ///
    /// As text, the folder the files share is named once above the table, components no run holds
    /// are named under it rather than given a column, and a table wider than the terminal comes in
    /// blocks of columns, each led by the files' names. --markdown and --json keep every column.
    Compare {
        /// Snapshots (a folder: the snapshots in it, rank2 before rank10).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        /// The run the others are compared with (default: the first FILE).
        #[arg(short, long, value_name = "FILE")]
        baseline: Option<String>,
        /// The device of each file to compare, or `all` for a row per device (default: each file's
        /// device with the longest trace).
        #[arg(short, long, value_name = "N|all", allow_negative_numbers = true, value_parser = compare::devices)]
        device: Option<compare::Devices>,
        /// One JSON object: the rows with exact bytes, their config, components and grown call
        /// paths, the ranks and the sweeps.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Markdown to paste into an issue or a PR: the table with every column, the call paths
        /// that grew as tables, the sweeps as lists.
        #[arg(long)]
        markdown: bool,
        /// Grown call paths listed per file.
        #[arg(long, default_value_t = 10)]
        top: usize,
        /// The memory of the GPU the runs should fit (`80GiB`, `80GB`, or GiB: `80`): the table gains
        /// each run's headroom and whether it fits, and each sweep (runs differing in ctx, seq, a
        /// batch size or the model's size alone) the largest value that would; a sweep of tp, pp or dp
        /// the smallest degree. Without it, a run that ran out of memory tells what its device gave:
        /// reserved plus free then.
        #[arg(long, value_name = "SIZE", value_parser = gpu_memory)]
        gpu_memory: Option<u64>,
    },
    /// What is live in B and not in A (and back): a call-stack tree with A bytes, B bytes and the
    /// delta, at the peaks unless --at names two entries.
    Diff {
        /// The snapshot diffed against (the "before").
        a: String,
        /// The snapshot diffed (the "after"); A again to diff two moments or devices of one run.
        b: String,
        /// `peak` (each side's own peak), or ENTRY_A:ENTRY_B (-1: before the first entry).
        #[arg(long, value_name = "peak|ENTRY_A:ENTRY_B", allow_hyphen_values = true)]
        at: Option<String>,
        /// The device of both files, or A's and B's (0:1) (default: each file's device with the
        /// longest trace).
        #[arg(short, long, value_name = "N|A:B", allow_hyphen_values = true, value_parser = compare::diff_devices)]
        device: Option<(i64, i64)>,
        /// The tree as one JSON object, with each side's device and entry.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Markdown to paste into an issue or a PR: the files as a list, the tree in a fenced block
        /// (its columns aligned), the call paths that grew as a table.
        #[arg(long)]
        markdown: bool,
    },
    /// Per-step memory records: memograph-capture's rank*_steps.jsonl and run.json, torchtitan
    /// metrics, logs and exports, Megatron-LM logs and memory traces, CSV, and snapshots whose
    /// trace the profiler marks in steps (ProfilerStep#N, Optimizer.step). A job's ranks are summed
    /// up (mean, max, imbalance, the rank out of line).
    Steps {
        /// Step-record files (a folder: those in it, as capture's memograph_snapshots/).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        /// The runs and the jobs' ranks as one JSON object.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// The table as Markdown.
        #[arg(long)]
        markdown: bool,
        /// Draw each run's theoretical memory (with -o).
        #[arg(long)]
        show_theoretical: bool,
        /// Peak reserved instead of peak allocated: on the chart (with -o) and for the ranks.
        #[arg(long)]
        reserved: bool,
        /// Draw the records per step into this PNG.
        #[arg(short, value_name = "OUT.png", value_parser = charts::png_path)]
        o: Option<PathBuf>,
    },
    /// One self-contained HTML file: the page and the snapshots (and step records) in it, to open
    /// offline from disk by double-click, send, or attach to a bug report. Several files open compared.
    Html {
        /// Snapshots and step records (a folder: those in it, as the page's Open folder takes them).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        /// Where to write it (default: NAME.html in the current directory, NAME the first file's or
        /// the folder's).
        #[arg(short, value_name = "OUT.html")]
        o: Option<PathBuf>,
        /// Start at this view: a share link (Copy link in the page) or its #hash.
        #[arg(long, value_name = "LINK|#HASH")]
        view: Option<String>,
        /// The built page (Trunk's dist/ folder); default: MEMOGRAPH_PAGE, page/ beside the
        /// executable, or the repository's dist/.
        #[arg(long, value_name = "DIR")]
        page: Option<PathBuf>,
    },
    /// Shell completions: `memograph completions bash > /etc/bash_completion.d/memograph`.
    Completions { shell: clap_complete::Shell },
}

/// A failure to report as `error: {0}` with exit status 1 (an empty message: already reported).
pub struct Failure(pub String);

impl Failure {
    pub fn reported() -> Failure {
        Failure(String::new())
    }
}

/// `table` as aligned text, cut into blocks of columns where it is wider than the terminal (or than
/// `COLUMNS`, where that is set): wrapped by the terminal, a wide table's lines run into one another.
/// Into a pipe or a file, whole lines.
pub fn text_table(table: &memograph_snapshot::analysis::compare::Table) -> String {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .or_else(|| terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)));
    match columns {
        Some(width) => table.text_within(width),
        None => table.text(),
    }
}

/// How `compare` and `diff` write, from their `--json` and `--markdown` (which clap keeps apart).
fn output(json: bool, markdown: bool) -> compare::Output {
    match (json, markdown) {
        (true, _) => compare::Output::Json,
        (_, true) => compare::Output::Markdown,
        _ => compare::Output::Text,
    }
}

/// `heading` and its `items` under it: indented lines as text; a list in Markdown, where indented
/// lines run into one paragraph once the output is pasted into an issue.
pub fn list(heading: &str, items: impl IntoIterator<Item = String>, markdown: bool) -> String {
    let mut o = format!("{heading}\n");
    if markdown {
        o.push('\n');
    }
    for item in items {
        o.push_str(if markdown { "- " } else { "  " });
        o.push_str(&item);
        o.push('\n');
    }
    o
}

/// A closed pipe ends the program quietly, as it does other Unix filters (`memograph trace F | head`),
/// instead of a panic in `println!`: Rust starts programs with SIGPIPE ignored, so each write to the
/// closed pipe would fail with EPIPE.
#[cfg(unix)]
fn die_on_closed_pipe() {
    // SAFETY: called first thing in main, before any other thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    #[cfg(unix)]
    die_on_closed_pipe();
    let cli = Cli::parse();
    load::set_quiet(cli.quiet);
    let result = match cli.command {
        Command::Summary { files, json } => {
            Ok(load::expand(files, Holds::Snapshots).and_then(|files| {
                summary::run(&Options {
                    files,
                    json,
                    device: None,
                })
            }))
        }
        Command::Trace {
            file,
            device,
            find,
            entries,
            stacks,
            json,
        } => Ok(trace::run_trace(&trace::TraceArgs {
            options: Options {
                files: vec![file],
                json,
                device,
            },
            find,
            entries,
            stacks,
        })),
        Command::Stats { file, device, json } => Ok(trace::run_stats(&Options {
            files: vec![file],
            json,
            device,
        })),
        Command::Report {
            args,
            json,
            device,
            rules,
            out,
            name,
            gpu_memory,
        } => report::ReportArgs::new(args, out, name, json, device, rules).map(|mut r| {
            r.gpu_memory = gpu_memory;
            load::expand(std::mem::take(&mut r.files), Holds::Snapshots).and_then(|files| {
                r.files = files;
                report::run(&r)
            })
        }),
        Command::Compare {
            files,
            baseline,
            device,
            json,
            markdown,
            top,
            gpu_memory,
        } => Ok(load::expand(files, Holds::Snapshots).and_then(|files| {
            compare::run_compare(&compare::CompareArgs::new(
                files,
                baseline,
                device.unwrap_or(compare::Devices::Default),
                output(json, markdown),
                top,
                gpu_memory,
            ))
        })),
        Command::Diff {
            a,
            b,
            at,
            device,
            json,
            markdown,
        } => compare::DiffArgs::new(a, b, at.as_deref(), device, output(json, markdown))
            .map(|d| compare::run_diff(&d)),
        Command::Steps {
            files,
            json,
            markdown,
            show_theoretical,
            reserved,
            o,
        } => Ok(load::expand(files, Holds::Steps).and_then(|files| {
            steps::run(&steps::StepsArgs {
                files,
                json,
                markdown,
                theoretical: show_theoretical,
                reserved,
                chart: o,
            })
        })),
        Command::Html {
            files,
            o,
            view,
            page,
        } => {
            // A folder's page is named after the folder.
            let o = o.or_else(|| {
                let first = std::fs::canonicalize(&files[0])
                    .ok()
                    .filter(|p| p.is_dir())?;
                Some(PathBuf::from(format!(
                    "{}.html",
                    first.file_name()?.to_string_lossy()
                )))
            });
            Ok(load::expand(files, Holds::Runs).and_then(|files| {
                html::run(&html::HtmlArgs {
                    files,
                    out: o,
                    view,
                    page,
                })
            }))
        }
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "memograph",
                &mut std::io::stdout(),
            );
            Ok(Ok(()))
        }
    };
    match result {
        Err(usage) => Cli::command()
            .error(clap::error::ErrorKind::ValueValidation, usage)
            .exit(),
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(Failure(message))) => {
            if !message.is_empty() {
                eprintln!("error: {message}");
            }
            ExitCode::from(1)
        }
    }
}

/// Options shared by summary, trace and stats.
pub struct Options {
    pub files: Vec<String>,
    pub json: bool,
    pub device: Option<i64>,
}

/// `--gpu-memory`'s value (see [`fit::parse_memory`](memograph_snapshot::analysis::fit::parse_memory)).
fn gpu_memory(v: &str) -> Result<u64, String> {
    memograph_snapshot::analysis::fit::parse_memory(v)
        .ok_or_else(|| format!("{v:?} is no memory size (say 80GiB, 80GB, or 80 for GiB)"))
}
