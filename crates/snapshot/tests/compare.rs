//! Comparing runs on the real fixtures: digests agree with the reference figures, the call-stack diff
//! adds up exactly, the call path that really grows is on top, and a rank set names its outlier.

mod common;

use memograph_snapshot::analysis::categories::Rules;
use memograph_snapshot::analysis::compare::{diff, digests, grown_sites, peak_rows, ranks, Digest};
use memograph_snapshot::{read_bytes, Snapshot};

fn digest_of(name: &str, bytes: &[u8]) -> Digest {
    let s = read_bytes(bytes).unwrap();
    let all = digests(&s, &Rules::built_in(), name, bytes.len() as u64);
    all.into_iter().find(|d| d.default_device).unwrap()
}

/// Sums of a diff node's children equal its delta, all the way down (no allocation ends above a leaf
/// in a live-set tree with hidden frames, so each level's own allocations make up the rest).
fn check_sums(n: &memograph_snapshot::analysis::compare::DiffNode) {
    let a: u64 = n.children.iter().map(|c| c.a_bytes).sum();
    let b: u64 = n.children.iter().map(|c| c.b_bytes).sum();
    assert!(a <= n.a_bytes && b <= n.b_bytes, "{:?}", n.frame);
    for c in &n.children {
        check_sums(c);
    }
}

#[test]
fn forward_against_fullstep_adds_up_and_names_the_optimizer_state() {
    let forward = fixture_or_skip!("kk_memory_ctx128_forward.pickle");
    let fullstep = fixture_or_skip!("kk_memory_ctx128_fullstep.pickle");
    let a = digest_of("kk_memory_ctx128_forward.pickle", &forward);
    let b = digest_of("kk_memory_ctx128_fullstep.pickle", &fullstep);
    for d in [&a, &b] {
        let r = common::reference(&d.file);
        let r = &r["devices"][d.device.to_string()];
        assert_eq!(
            d.timeline_peak_bytes,
            r["timeline_peak_bytes"].as_u64().unwrap()
        );
        assert_eq!(d.peak_event_index, r["peak_event_index"].as_i64().unwrap());
        assert_eq!(d.allocations as u64, r["allocations"].as_u64().unwrap());
        assert_eq!(d.live_set.bytes, d.timeline_peak_bytes);
        let components: u64 = d.components.iter().map(|c| c.bytes).sum();
        assert_eq!(components, d.timeline_peak_bytes, "{}", d.file);
        assert_eq!(
            d.sites.iter().map(|s| s.bytes).sum::<u64>(),
            d.timeline_peak_bytes
        );
        assert_eq!(d.config["ctx"], "128");
        assert!(
            d.curve.bytes.contains(&d.timeline_peak_bytes),
            "the curve keeps the peak"
        );
        assert!(d.curve.entries.len() <= 1000);
    }
    assert_eq!(a.config["phase"], "forward");
    assert_eq!(b.config["phase"], "fullstep");
    // The parameters predate recording in both runs: their own component, the same bytes in both.
    let before = |d: &Digest| {
        d.components
            .iter()
            .find(|c| c.component.label() == "Before recording")
            .unwrap()
            .bytes
    };
    assert!(
        before(&a) > 12 << 30 && before(&a) == before(&b),
        "{} {}",
        before(&a),
        before(&b)
    );

    let tree = diff(&a.live_set, &b.live_set);
    assert_eq!(tree.a_bytes, a.timeline_peak_bytes);
    assert_eq!(tree.b_bytes, b.timeline_peak_bytes);
    assert_eq!(
        tree.delta_bytes as i128,
        b.timeline_peak_bytes as i128 - a.timeline_peak_bytes as i128
    );
    assert_eq!(
        tree.children.iter().map(|c| c.delta_bytes).sum::<i64>(),
        tree.delta_bytes
    );
    check_sums(&tree);
    // What the full step holds at its peak that the forward pass never did: Adam's two moment buffers,
    // made in the optimizer's step (cs336_basics/optimizers.py lines 82 and 84), 12.7 GiB each.
    let grown = grown_sites(&a.sites, &b.sites);
    for s in &grown[..2] {
        assert!(
            s.site.ends_with("cs336_basics/optimizers.py:82:step")
                || s.site.ends_with("cs336_basics/optimizers.py:84:step"),
            "{s:?}"
        );
        assert!(s.b_bytes > 12 << 30 && s.a_bytes == 0, "{s:?}");
    }
    // A node's call path finds its allocations in the file: those live at the peak add up to its B bytes.
    let path = [0usize, 0];
    let frames = tree.frames_to(&path).unwrap();
    let s = read_bytes(&fullstep).unwrap();
    let l = memograph_snapshot::analysis::lifetimes::Lifetimes::of(&s, 0);
    let under = memograph_snapshot::analysis::live_set::allocations_under(&s, &l, &frames, true);
    let live: u64 = under
        .iter()
        .map(|&i| &l.allocations[i as usize])
        .filter(|x| x.is_live_at(b.peak_event_index))
        .map(|x| x.size)
        .sum();
    assert_eq!(live, tree.at(&path).unwrap().b_bytes);
    // The live set at the peak as a table: its bytes add up to the peak.
    let rules = Rules::built_in();
    let of = memograph_snapshot::analysis::categories::categorize(&s, &l, &rules);
    let table = memograph_snapshot::analysis::live_set::live_set_table(
        &s,
        &l,
        &of,
        &rules.names(),
        b.peak_event_index,
    );
    let sum: u64 = table
        .rows
        .iter()
        .map(|r| r[2].parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, b.timeline_peak_bytes);
    assert!(table
        .csv()
        .starts_with("name,address,bytes,category,allocated at,alloc entry\n"));
    let both = [a.clone(), b.clone()];
    let rows = peak_rows(&both, 0);
    assert_eq!(
        rows[1].delta_bytes as u64,
        b.timeline_peak_bytes - a.timeline_peak_bytes
    );
}

/// `s` with every size multiplied by `num / den` (trace entries, blocks and segments alike).
fn scaled(mut s: Snapshot, num: u64, den: u64) -> Snapshot {
    let f = |x: &mut u64| *x = *x * num / den;
    for t in &mut s.device_traces {
        t.size.iter_mut().for_each(f);
    }
    for seg in &mut s.segments {
        for x in [
            &mut seg.total_size,
            &mut seg.allocated_size,
            &mut seg.active_size,
            &mut seg.requested_size,
        ] {
            f(x);
        }
        for b in &mut seg.blocks {
            f(&mut b.size);
            f(&mut b.requested_size);
        }
    }
    s
}

#[test]
fn a_rank_set_names_its_outlier_and_imbalance() {
    let bytes = fixture_or_skip!("a0kuma_adam.pickle");
    let rules = Rules::built_in();
    // Eight ranks within 3 % of one another, except rank 6, which holds 40 % more.
    let set: Vec<Digest> = (0..8u64)
        .map(|r| {
            let (num, den) = if r == 6 {
                (140, 100)
            } else {
                (100 + r % 4, 100)
            };
            let s = scaled(read_bytes(&bytes).unwrap(), num, den);
            let name = format!("rank{r}_memory_snapshot.pickle");
            digests(&s, &rules, &name, 0)
                .into_iter()
                .find(|d| d.default_device)
                .unwrap()
        })
        .collect();
    let strip = ranks(&set.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(strip.peaks.len(), 8);
    assert_eq!(strip.outlier, Some(6));
    let peaks: Vec<f64> = set.iter().map(|d| d.timeline_peak_bytes as f64).collect();
    let mean = peaks.iter().sum::<f64>() / 8.0;
    assert_eq!(strip.max_bytes, set[6].timeline_peak_bytes);
    assert!((strip.imbalance - set[6].timeline_peak_bytes as f64 / mean).abs() < 1e-12);
    assert!(
        strip.imbalance > 1.3 && strip.imbalance < 1.4,
        "{}",
        strip.imbalance
    );
    // Without rank 6 the set is balanced: nobody is out of line.
    let even: Vec<&Digest> = set.iter().filter(|d| d.config["rank"] != "6").collect();
    assert_eq!(ranks(&even).unwrap().outlier, None);
}
