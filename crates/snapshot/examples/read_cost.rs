fn main() {
    let path = std::env::args().nth(1).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let mut r = memograph_snapshot::PushReader::new(Some(bytes.len() as u64));
        let mut scratch = vec![0u8; 4 << 20];
        for piece in bytes.chunks(4 << 20) {
            if std::env::var("OLD").is_ok() {
                scratch[..piece.len()].copy_from_slice(piece);
                r.push(&scratch[..piece.len()]).unwrap();
            } else {
                r.push_from(piece.len(), &mut |room| room.copy_from_slice(piece))
                    .unwrap();
            }
        }
        let s = r.finish().unwrap();
        eprintln!("push read {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
        drop(s);
    }
}
