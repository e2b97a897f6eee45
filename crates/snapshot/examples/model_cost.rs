//! Prints what reading a snapshot and building each model part costs: `cargo run --release --example
//! model_cost -- FILE`. Used to keep the page's load time and memory in check.

use std::time::Instant;

use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::analysis::timeline::timeline_layout;

fn main() {
    let path = std::env::args().nth(1).expect("usage: model_cost FILE");
    let bytes = std::fs::read(&path).expect("readable file");
    let t = Instant::now();
    let s = memograph_snapshot::read_bytes(&bytes).expect("a snapshot");
    println!(
        "read            {:>8.0} ms  model heap {:.1} MB",
        t.elapsed().as_secs_f64() * 1e3,
        s.heap_bytes() as f64 / 1e6
    );
    println!(
        "                {} segments, {} blocks in them",
        s.segments.len(),
        s.segments.iter().map(|g| g.blocks.len()).sum::<usize>()
    );
    let t = Instant::now();
    let encoded = memograph_snapshot::codec::encode(&s);
    println!(
        "encode          {:>8.0} ms  {:.1} MB",
        t.elapsed().as_secs_f64() * 1e3,
        encoded.len() as f64 / 1e6
    );
    let t = Instant::now();
    let s = memograph_snapshot::codec::decode(&encoded).expect("decodes");
    println!(
        "decode          {:>8.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let device = s.default_device().unwrap_or(0);
    let t = Instant::now();
    let blocks = Lifetimes::of(&s, device);
    println!(
        "block lifetimes {:>8.0} ms  {} allocations",
        t.elapsed().as_secs_f64() * 1e3,
        blocks.allocations.len()
    );
    let t = Instant::now();
    let segments = Lifetimes::of_segments(&s, device);
    println!(
        "segment lifetimes {:>6.0} ms  {} segments",
        t.elapsed().as_secs_f64() * 1e3,
        segments.allocations.len()
    );
    for detail in [0.017, 0.15, 1.0] {
        let t = Instant::now();
        let layout = timeline_layout(&blocks, detail);
        println!(
            "layout {detail:>4}     {:>8.0} ms  {} bands, {} points, {} summary points ({:.1} MB)",
            t.elapsed().as_secs_f64() * 1e3,
            layout.bands.len(),
            layout.points.len(),
            layout.summary.len(),
            (layout.points.len() * 8 + layout.bands.len() * std::mem::size_of_val(&layout.bands[0]))
                as f64
                / 1e6
        );
    }
    let t = Instant::now();
    let segment_layout = timeline_layout(&segments, 1.0);
    println!(
        "segment layout  {:>8.0} ms  {} points, tolerance {} bytes",
        t.elapsed().as_secs_f64() * 1e3,
        segment_layout.points.len(),
        segment_layout.tolerance
    );
    let t = Instant::now();
    let _ = memograph_snapshot::analysis::lifetimes::event_versions(s.trace(device));
    println!(
        "versions        {:>8.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    let rules = memograph_snapshot::analysis::categories::Rules::built_in();
    let of = memograph_snapshot::analysis::categories::categorize(&s, &blocks, &rules);
    println!(
        "categories      {:>8.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let t = Instant::now();
    let options = memograph_snapshot::analysis::report::ReportOptions::default();
    let _ =
        memograph_snapshot::analysis::report::report_of(&s, &blocks, &of, &rules.names(), &options);
    println!(
        "report          {:>8.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    // What the page makes on its main thread for an open file the Compare or Steps view takes.
    let t = Instant::now();
    let digests = memograph_snapshot::analysis::compare::digests(&s, &rules, "file", 0);
    println!(
        "digests         {:>8.0} ms  {} devices, steps in {}",
        t.elapsed().as_secs_f64() * 1e3,
        digests.len(),
        digests.iter().filter(|d| d.steps.is_some()).count()
    );
}
