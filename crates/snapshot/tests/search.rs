//! Finding allocations in a real fixture by each kind of query.

mod common;

use memograph_snapshot::analysis::categories::{categorize, Rules};
use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::analysis::search::{parse, search};
use memograph_snapshot::read_bytes;

#[test]
fn addresses_sizes_frames_and_categories_find_known_allocations() {
    let bytes = fixture_or_skip!("kk_memory_ctx128_fullstep.pickle");
    let s = read_bytes(&bytes).unwrap();
    let l = Lifetimes::of(&s, 0);
    let rules = Rules::built_in();
    let names = rules.names();
    let of = categorize(&s, &l, &rules);
    let find = |q: &str| search(&s, &l, Some((&of, &names)), &parse(q).unwrap());
    // By name: the largest allocation, as MemoryViz names it, finds exactly it.
    let (big, a) = l
        .allocations
        .iter()
        .enumerate()
        .max_by_key(|(_, a)| a.size)
        .unwrap();
    assert_eq!(find(&a.name()), vec![big as u32]);
    assert!(find(&format!("0x{:x}", a.addr)).contains(&(big as u32)));
    // By size: every match is over the bound, and every allocation over it matches.
    let over = find(">100MB");
    assert_eq!(
        over.len(),
        l.allocations.iter().filter(|a| a.size > 100 << 20).count()
    );
    assert!(!over.is_empty());
    let shown = memograph_snapshot::format::bytes(a.size);
    assert!(find(&shown).contains(&(big as u32)));
    // By frame text: Adam's moment buffers (cs336_basics/optimizers.py lines 82 and 84).
    let adam = find("optimizers.py:82");
    assert!(!adam.is_empty());
    for &i in &adam {
        let stack = s.stack(l.allocations[i as usize].stack);
        assert!(stack
            .iter()
            .any(
                |&f| memograph_snapshot::analysis::stacks::frame_text(&s, s.frame(f))
                    .contains("optimizers.py:82")
            ));
    }
    // By category: every allocation of it.
    let k = names.iter().position(|n| n == "Optimizer state").unwrap();
    let in_category = of.iter().filter(|&&c| c as usize == k).count();
    assert!(find("optimizer state").len() >= in_category);
    assert!(find("no such frame anywhere").is_empty());
    // Found in ascending order, each once (the page highlights them without sorting again).
    for q in [
        "0x7f",
        ">1KB",
        "optimizers.py",
        "optimizer state",
        "forward",
    ] {
        assert!(find(q).is_sorted_by(|a, b| a < b), "{q}");
    }
}
