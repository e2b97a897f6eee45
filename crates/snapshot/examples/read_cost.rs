//! Prints what reading a snapshot costs, pulled from memory (as `memograph` reads a file) and pushed in
//! the page's 4 MiB pieces (as its worker does, with `push_from`): the median of 5 reads each.
//! Then the finish alone: the snapshot built from a pushed pickle once every piece is in (the worker's
//! `finish` in the page's load timings).
//! `cargo run --release --example read_cost -- FILE`.

use std::time::Instant;

use memograph_snapshot::PushReader;

/// The page's piece size (`PIECE` in the web app's `load::page`).
const PIECE: usize = 4 << 20;

/// The middle of five figures.
fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

fn median_ms(mut read: impl FnMut()) -> f64 {
    median(
        (0..5)
            .map(|_| {
                let t = Instant::now();
                read();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

/// A reader with all of `bytes` pushed in the page's pieces, not finished.
fn pushed(bytes: &[u8]) -> PushReader {
    let mut reader = PushReader::new(Some(bytes.len() as u64));
    for piece in bytes.chunks(PIECE) {
        reader
            .push_from(piece.len(), &mut |room| room.copy_from_slice(piece))
            .expect("pushed");
    }
    reader
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: read_cost FILE");
    let bytes = std::fs::read(&path).expect("readable file");
    let pulled = median_ms(|| {
        memograph_snapshot::read_bytes(&bytes).expect("a snapshot");
    });
    println!("pull read {pulled:>8.0} ms");
    let push = median_ms(|| {
        pushed(&bytes).finish().expect("a snapshot");
    });
    println!("push read {push:>8.0} ms  (pieces of {} MiB)", PIECE >> 20);
    // Of which the finish: the snapshot built from the parsed pickle, once every piece is in.
    let finish = median(
        (0..5)
            .map(|_| {
                let reader = pushed(&bytes);
                let t = Instant::now();
                let built = reader.finish_leaving().expect("a snapshot");
                let ms = t.elapsed().as_secs_f64() * 1e3;
                drop(built);
                ms
            })
            .collect(),
    );
    println!("  finish  {finish:>8.0} ms  (the snapshot built once all is pushed)");
}
