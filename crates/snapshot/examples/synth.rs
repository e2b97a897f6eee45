//! Writes the synthetic snapshot of [`memograph_snapshot::synth`]: `cargo run --example synth -- STEPS OUT`.
fn main() {
    let mut args = std::env::args().skip(1);
    let steps: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .expect("usage: synth STEPS OUT");
    let out = args.next().expect("usage: synth STEPS OUT");
    let w = memograph_snapshot::synth::pickle(steps);
    std::fs::write(&out, &w.bytes).expect("writable output");
    println!(
        "{out}: {} bytes, {} entries, {} allocations, peak {} bytes",
        w.bytes.len(),
        w.entries,
        w.allocations,
        w.peak_bytes
    );
}
