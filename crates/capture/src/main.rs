//! `memograph-capture`: runs a PyTorch program unmodified and records CUDA memory snapshots from it.
//!
//! ```text
//! memograph-capture [OPTIONS] -- python train.py ARGS…
//! memograph-capture [OPTIONS] -- torchrun --nproc-per-node 8 train.py …
//! memograph-capture demo [--model tiny|small] [--context 128,256,512] [--precision fp32,bf16] [--mode forward,train]
//! ```
//!
//! It puts a bootstrap `sitecustomize` first on `PYTHONPATH` (the user's own still runs after it), so
//! every Python process of the job records allocator history from CUDA's initialisation and writes
//! snapshots (pickle protocol 4) on exit, OOM, SIGUSR1, every N optimizer steps and at the highest peak.

mod bootstrap;
mod launch;

use std::process::ExitCode;

const USAGE: &str = "\
memograph-capture — record PyTorch CUDA memory snapshots from unmodified programs

USAGE:
    memograph-capture [OPTIONS] -- COMMAND [ARGS...]     e.g. -- python train.py, -- torchrun ... train.py
    memograph-capture demo [OPTIONS] [DEMO OPTIONS]      a small transformer study: one snapshot per setting

OPTIONS:
    --out DIR              where snapshots go (default ./memograph_snapshots)
    --max-entries N        allocator events kept (default 100000)
    --stacks python|all    python frames only (default), or also C++ (slow to dump)
    --context none|alloc|state|all
                           which events record stacks (default all); none keeps the history
                           without stacks, at about no cost (stacks cost up to ~20 % on small steps)
    --every-steps N        a snapshot every N optimizer steps
    --on-peak              a snapshot at the step with the highest peak so far
    --no-exit-snapshot     no snapshot when a process exits
    --python PATH          the python used for the checks and the demo (default python3)
    --no-check             run even if torch or CUDA is missing (records nothing then)

DEMO OPTIONS:
    --model tiny|small     (default tiny)
    --context 128,256,512  context lengths (default 128,256,512)
    --precision fp32,bf16  (default fp32,bf16)
    --mode forward,train   (default forward,train)

Snapshots: OUT/rank{R}_{reason}_{step}.pickle; step records: OUT/rank{R}_steps.jsonl;
run manifest: OUT/rank{R}_run.json. The command's exit status is passed on; SIGINT and SIGTERM are
forwarded to it; SIGUSR1 to a process of the job writes a snapshot.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match launch::Options::parse(&args) {
        Ok(launch::Parsed::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(launch::Parsed::Run(opts)) => match launch::run(&opts) {
            Ok(code) => code,
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::from(1)
            }
        },
        Err(usage) => {
            eprintln!("error: {usage}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
