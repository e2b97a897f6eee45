//! The analyses agree with the reference figures and with each other on every fixture.

mod common;

use memograph_snapshot::analysis::lifetimes::{reserved_at_sliced, reserved_series, Lifetimes};
use memograph_snapshot::analysis::timeline::{timeline_layout, RangeMax};
use memograph_snapshot::read_bytes;

fn each_device(mut f: impl FnMut(&str, &memograph_snapshot::Snapshot, i64, &serde_json::Value)) {
    for name in common::fixture_names() {
        let s = read_bytes(&common::fixture_bytes(&name)).unwrap();
        let reference = common::reference(&name);
        for d in s.devices() {
            f(&name, &s, d, &reference["devices"][d.to_string()]);
        }
    }
}

#[test]
fn the_live_set_at_the_peak_sums_to_the_timeline_peak() {
    each_device(|name, s, d, r| {
        let l = Lifetimes::of(s, d);
        let peak = l.peak();
        let live: u64 = l
            .live_set_at(peak.event)
            .iter()
            .map(|&i| l.allocations[i as usize].size)
            .sum();
        assert_eq!(
            live,
            r["timeline_peak_bytes"].as_u64().unwrap(),
            "{name} device {d}"
        );
        assert_eq!(l.live_bytes_at(peak.event), live);
    });
}

#[test]
fn every_detail_level_stacks_to_the_same_peak() {
    each_device(|name, s, d, r| {
        let l = Lifetimes::of(s, d);
        let peak = r["timeline_peak_bytes"].as_u64().unwrap();
        for detail in [0.0, 0.1, 0.5, 1.0] {
            let layout = timeline_layout(&l, detail);
            assert_eq!(layout.max_bytes, peak, "{name} device {d} detail {detail}");
            if detail == 1.0 {
                assert_eq!(layout.bands.len(), l.allocations.len());
                assert!(layout.summary.iter().all(|p| p.height == 0.0));
            }
            if detail == 0.0 {
                assert!(layout.bands.is_empty());
            }
        }
    });
}

#[test]
fn at_full_detail_the_bands_at_the_peak_are_the_live_set_and_do_not_overlap() {
    each_device(|name, s, d, _| {
        let l = Lifetimes::of(s, d);
        let layout = timeline_layout(&l, 1.0);
        let peak = l.peak();
        let x = peak.event.max(0) as u32;
        let mut spans: Vec<(f64, f64)> = layout
            .bands
            .iter()
            .filter(|b| l.allocations[b.allocation as usize].is_live_at(peak.event))
            .map(|b| {
                let o = layout.offset_at(b, x) as f64;
                (o, o + b.size as f64)
            })
            .collect();
        spans.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        assert_eq!(
            spans.len(),
            l.live_set_at(peak.event).len(),
            "{name} device {d}"
        );
        for w in spans.windows(2) {
            // f32 offsets: allow the rounding of the larger offset.
            assert!(
                w[1].0 >= w[0].1 - w[0].1 * 1e-6,
                "{name} device {d}: bands overlap at the peak"
            );
        }
        // Clicking in the middle of the top band at the peak finds it.
        if let Some(&(lo, hi)) = spans.last() {
            let hit = layout
                .band_at(x, (lo + hi) / 2.0)
                .expect("a band under the cursor");
            let o = layout.offset_at(&layout.bands[hit], x) as f64;
            assert!((o - lo).abs() <= lo * 1e-6 + 1.0);
        }
    });
}

#[test]
fn the_reserved_series_ends_at_the_reserved_bytes() {
    each_device(|name, s, d, r| {
        let (start, series) = reserved_series(s, d);
        // The same figures at a few entries, without the series.
        let picked: Vec<usize> = (0..series.len()).step_by(series.len() / 7 + 1).collect();
        let at = memograph_snapshot::batch::run_ready(reserved_at_sliced(
            s,
            d,
            &picked,
            &mut memograph_snapshot::batch::NoPause,
        ));
        let expected: Vec<u64> = picked.iter().map(|&i| series[i]).collect();
        assert_eq!(at, expected, "{name} device {d}");
        let end = series.last().copied().unwrap_or(start);
        assert_eq!(
            end,
            r["reserved_bytes"].as_u64().unwrap(),
            "{name} device {d}"
        );
        let segs = Lifetimes::of_segments(s, d);
        let live_end = segs.live_bytes_at(series.len() as i64 - 1);
        assert_eq!(
            live_end, end,
            "{name} device {d}: segment lifetimes live at the end"
        );
    });
}

#[test]
fn range_max_matches_a_scan() {
    let values: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 1013).collect();
    let rm = RangeMax::new(&values);
    for (lo, hi) in [
        (0, 5000),
        (3, 4),
        (250, 770),
        (255, 257),
        (1000, 1000),
        (4990, 9999),
    ] {
        let want = values[lo..hi.min(5000)].iter().copied().max().unwrap_or(0);
        assert_eq!(rm.max(&values, lo, hi), want, "{lo}..{hi}");
    }
}

#[test]
fn the_live_set_tree_at_the_peak_rolls_up_to_the_timeline_peak() {
    use memograph_snapshot::analysis::live_set::{live_set_tree, Node};
    fn check(n: &Node) {
        if !n.children.is_empty() {
            // A node holds what its children hold, plus allocations whose stack ends there.
            assert!(n.children.iter().map(|c| c.bytes).sum::<u64>() <= n.bytes);
            assert!(
                n.children.windows(2).all(|w| w[0].bytes >= w[1].bytes),
                "children sorted by bytes"
            );
        }
        n.children.iter().for_each(check);
    }
    each_device(|name, s, d, r| {
        let l = Lifetimes::of(s, d);
        let peak = l.peak();
        for hide in [false, true] {
            let tree = live_set_tree(s, &l, peak.event, hide);
            assert_eq!(
                tree.bytes,
                r["timeline_peak_bytes"].as_u64().unwrap(),
                "{name} device {d}"
            );
            assert_eq!(tree.count as usize, l.live_set_at(peak.event).len());
            assert_eq!(
                tree.children.iter().map(|c| c.bytes).sum::<u64>(),
                tree.bytes,
                "{name}: every allocation has a path"
            );
            check(&tree);
        }
    });
}

/// The frames down the first child of each node of the live-set tree at the peak of device 0 (its
/// largest path), framework frames hidden.
fn largest_path_without_framework(s: &memograph_snapshot::Snapshot) -> Vec<String> {
    use memograph_snapshot::analysis::live_set::live_set_tree;
    let l = Lifetimes::of(s, 0);
    let tree = live_set_tree(s, &l, l.peak().event, true);
    let mut frames = Vec::new();
    let mut node = &tree;
    while let Some(first) = node.children.first() {
        frames.extend(first.frame.clone());
        node = first;
    }
    frames
}

#[test]
fn hiding_framework_frames_puts_user_code_on_top() {
    let s = read_bytes(&fixture_or_skip!("kk_memory_ctx128_fullstep.pickle")).unwrap();
    let path = largest_path_without_framework(&s);
    assert!(!path.is_empty());
    for frame in path {
        assert!(
            !frame.contains("/torch/") && !frame.starts_with("??"),
            "{frame}"
        );
    }
}

#[test]
fn frames_recorded_on_windows_are_told_apart_as_frames_recorded_elsewhere_are() {
    use memograph_snapshot::analysis::categories::Rules;
    use memograph_snapshot::analysis::live_set::is_framework;
    use memograph_snapshot::analysis::report::{device_report, ReportOptions};
    // magma_memory_snapshot was recorded on Windows (`D:\Dev\…\.venv\Lib\site-packages\torch\…`):
    // torch's frames were taken for the user's code, on top of the tree and naming the allocations.
    let s = read_bytes(&fixture_or_skip!("magma_memory_snapshot.pickle")).unwrap();
    let l = Lifetimes::of(&s, 0);
    let path = largest_path_without_framework(&s);
    assert!(!path.is_empty());
    for frame in path {
        assert!(
            !frame.contains("\\torch\\") && !frame.contains("site-packages"),
            "{frame}"
        );
    }
    let r = device_report(&s, 0, &Rules::built_in(), &ReportOptions::default());
    assert_eq!(
        r.top_consumers[0].frame,
        "D:\\Dev\\assignment2-systems\\cs336-basics\\cs336_basics\\model.py:39:forward"
    );
    // Either separator finds its frames.
    let find = |q: &str| {
        let query = memograph_snapshot::analysis::search::parse(q).unwrap();
        memograph_snapshot::analysis::search::search(&s, &l, None, &query).len()
    };
    let found = find("cs336_basics/model.py:39:");
    assert!(found > 0);
    assert_eq!(find("CS336_basics\\model.py:39:"), found);
    for (path, framework) in [
        ("D:\\x\\.venv\\Lib\\site-packages\\einops\\einops.py", true),
        ("C:\\Python311\\Lib\\contextlib.py", true),
        ("D:\\Dev\\project\\model.py", false),
    ] {
        assert_eq!(is_framework(path, "f"), framework, "{path}");
    }
}

#[test]
fn a_tree_node_named_by_its_frames_is_found_again_in_a_new_tree() {
    use memograph_snapshot::analysis::live_set::live_set_tree;
    let s = read_bytes(&fixture_or_skip!("kk_memory_ctx128_fullstep.pickle")).unwrap();
    let l = Lifetimes::of(&s, 0);
    let tree = live_set_tree(&s, &l, l.peak().event, true);
    // Every node three levels down, by its indices, then by its frames in a tree made anew.
    let again = live_set_tree(&s, &l, l.peak().event, true);
    let mut checked = 0;
    for (a, child) in tree.children.iter().enumerate() {
        for (b, grandchild) in child.children.iter().enumerate() {
            for c in 0..grandchild.children.len() {
                let frames = tree.frames_of(&[a, b, c]).unwrap();
                assert_eq!(frames.len(), 3);
                let node = again.find(&frames).unwrap();
                assert_eq!(node, tree.at(&[a, b, c]).unwrap());
                checked += 1;
            }
        }
    }
    assert!(checked > 0);
    assert_eq!(tree.frames_of(&[tree.children.len()]), None);
    assert!(tree.find(&["no such frame".into()]).is_none());
}

#[test]
fn top_consumers_are_the_largest_live_allocations_with_a_user_frame() {
    use memograph_snapshot::analysis::live_set::top_consumers;
    each_device(|name, s, d, _| {
        let l = Lifetimes::of(s, d);
        let peak = l.peak();
        let top = top_consumers(s, &l, peak.event, 30);
        assert_eq!(top.len(), l.live_set_at(peak.event).len().min(30), "{name}");
        assert!(top.windows(2).all(|w| w[0].bytes >= w[1].bytes));
        let largest = l
            .live_set_at(peak.event)
            .iter()
            .map(|&i| l.allocations[i as usize].size)
            .max();
        assert_eq!(top.first().map(|c| c.bytes), largest);
        assert!(top.iter().all(|c| !c.frame.is_empty()));
    });
}

#[test]
fn every_allocation_falls_in_exactly_one_category_and_totals_add_up() {
    use memograph_snapshot::analysis::categories::{categorize, category_totals, Rules};
    let rules = Rules::built_in();
    let names = rules.names();
    each_device(|name, s, d, r| {
        let l = Lifetimes::of(s, d);
        let cats = categorize(s, &l, &rules);
        assert_eq!(cats.len(), l.allocations.len());
        let peak = l.peak();
        let totals = category_totals(&l, &cats, &names, peak.event);
        assert_eq!(
            totals.iter().map(|t| t.bytes).sum::<u64>(),
            r["timeline_peak_bytes"].as_u64().unwrap(),
            "{name}"
        );
    });
    // A training step (its parameters were made before recording began, so they have no stack):
    // optimizer state and gradients are recognised, and what stays live at the end is mostly optimizer state.
    let s = read_bytes(&fixture_or_skip!("kk_memory_ctx128_fullstep.pickle")).unwrap();
    let l = Lifetimes::of(&s, 0);
    let cats = categorize(&s, &l, &rules);
    let count = |c: &str| cats.iter().filter(|&&k| names[k as usize] == c).count();
    assert!(
        count("Optimizer state") > 0
            && count("Gradient") > 0
            && count("Activation") + count("Linear/MatMul") > 0
    );
    let at_end = category_totals(&l, &cats, &names, l.live_after.len() as i64 - 1);
    let top = at_end
        .iter()
        .filter(|t| t.category != "Other")
        .max_by_key(|t| t.bytes)
        .unwrap();
    assert_eq!(top.category, "Optimizer state", "{at_end:?}");
}

#[test]
fn user_rules_come_first_and_bad_patterns_are_reported() {
    use memograph_snapshot::analysis::categories::Rules;
    let user = Rules::from_json(r#"[{"category": "My cache", "pattern": "kv_cache"}]"#).unwrap();
    let all = Rules::with_user(user);
    assert_eq!(all.names()[0], "My cache");
    assert_eq!(all.names().last().unwrap(), "Other");
    let err = Rules::from_json(r#"[{"category": "X", "pattern": "("}]"#).unwrap_err();
    assert!(err.starts_with("category rule 'X': bad pattern"), "{err}");
}

#[test]
fn efficiency_figures_agree_with_the_reference_and_the_segments() {
    use memograph_snapshot::analysis::efficiency::{efficiency, size_distributions};
    each_device(|name, s, d, r| {
        let l = Lifetimes::of(s, d);
        let e = efficiency(s, &l, d);
        assert_eq!(
            e.peak_allocated,
            r["timeline_peak_bytes"].as_u64().unwrap(),
            "{name}"
        );
        assert!(
            e.max_reserved >= r["reserved_bytes"].as_u64().unwrap(),
            "{name}: reserved never exceeds its maximum"
        );
        assert!((0.0..=1.0).contains(&e.fragmentation));
        assert!(e.largest_free_block <= e.free_bytes);
        let (live, free) = size_distributions(s, &l, d, l.peak().event);
        assert_eq!(
            live.iter().map(|b| b.bytes).sum::<u64>(),
            e.peak_allocated,
            "{name}"
        );
        assert_eq!(
            free.iter().map(|b| b.bytes).sum::<u64>(),
            e.free_bytes,
            "{name}"
        );
        assert!(live.iter().all(|b| b.from.is_power_of_two()));
    });
}

#[test]
fn recommendations_cite_their_evidence() {
    use memograph_snapshot::analysis::efficiency::recommendations;
    // cs_memory_snapshot device 1 ran out of memory: the OOM is reported with its request and free memory.
    let s = read_bytes(&fixture_or_skip!("cs_memory_snapshot.pickle")).unwrap();
    let l = Lifetimes::of(&s, 1);
    let recs = recommendations(&s, &l, 1);
    let oom = recs
        .iter()
        .find(|r| r.kind == "oom")
        .expect("an oom recommendation");
    assert!(
        oom.evidence
            .contains("a request of 4.9 GiB with 91.2 MiB free"),
        "{}",
        oom.evidence
    );
    // …and what held the memory: the code paths with the most live bytes.
    assert!(
        oom.evidence
            .contains("most held by 29.7 GiB from /mnt/data3/haoyangsun/CurProject/src/train/models.py:174:update_nodes"),
        "{}",
        oom.evidence
    );
    // ftcourse reserves far more than it allocates at the end: cached free blocks are reported.
    let s = read_bytes(&fixture_or_skip!("ftcourse_memory_snapshot.pickle")).unwrap();
    let l = Lifetimes::of(&s, 0);
    let recs = recommendations(&s, &l, 0);
    assert!(recs
        .iter()
        .all(|r| !r.evidence.is_empty() && !r.message.is_empty()));
    assert!(
        recs.iter()
            .any(|r| r.kind == "large_free_blocks" || r.kind == "cache_overhead"),
        "{recs:?}"
    );
    // kk_memory_ctx128_fullstep leaves one cached block of 100 MiB: counted in the singular.
    let s = read_bytes(&fixture_or_skip!("kk_memory_ctx128_fullstep.pickle")).unwrap();
    let l = Lifetimes::of(&s, 0);
    let recs = recommendations(&s, &l, 0);
    let large = recs.iter().find(|r| r.kind == "large_free_blocks").unwrap();
    assert_eq!(
        large.evidence,
        "1 free block of at least 100.0 MiB holds 100.0 MiB"
    );
}

#[test]
fn the_report_at_the_peak_adds_up_by_category_component_tree_and_histogram() {
    use memograph_snapshot::analysis::categories::Rules;
    use memograph_snapshot::analysis::report::{device_report, ReportOptions};
    let rules = Rules::built_in();
    each_device(|name, s, d, r| {
        let rep = device_report(s, d, &rules, &ReportOptions::default());
        let peak = r["timeline_peak_bytes"].as_u64().unwrap();
        let what = format!("{name} device {d}");
        assert_eq!(rep.live_bytes, peak, "{what}");
        assert_eq!(rep.event, r["peak_event_index"].as_i64().unwrap(), "{what}");
        assert_eq!(
            rep.categories.iter().map(|c| c.bytes).sum::<u64>(),
            peak,
            "{what}"
        );
        assert_eq!(
            rep.components.iter().map(|c| c.bytes).sum::<u64>(),
            peak,
            "{what}"
        );
        assert_eq!(rep.live_set.bytes, peak, "{what}");
        assert_eq!(
            rep.live_set.all_allocations().len(),
            rep.live_allocations,
            "{what}"
        );
        assert_eq!(
            rep.live_sizes.iter().map(|b| b.bytes).sum::<u64>(),
            peak,
            "{what}"
        );
        assert!(rep.top_consumers.len() <= 50);
        // Pruned children still add up to their parent.
        let mut todo = vec![&rep.live_set];
        while let Some(n) = todo.pop() {
            if !n.children.is_empty() {
                let below: u64 = n.children.iter().map(|c| c.bytes).sum();
                let here: u64 = n.allocations.len() as u64;
                assert!(below <= n.bytes && n.count >= here, "{what}");
            }
            todo.extend(&n.children);
        }
    });
}

#[test]
fn the_category_series_follows_the_live_bytes_and_keeps_the_peak() {
    use memograph_snapshot::analysis::categories::{categorize, Rules};
    use memograph_snapshot::analysis::report::category_series;
    let rules = Rules::built_in();
    each_device(|name, s, d, r| {
        let l = Lifetimes::of(s, d);
        let of = categorize(s, &l, &rules);
        let (start, reserved) = reserved_series(s, d);
        let series = category_series(&l, &of, &rules.names(), (start, &reserved), 300);
        assert!(series.entries.len() <= 300);
        for (k, &e) in series.entries.iter().enumerate() {
            assert_eq!(
                series.total_at(k),
                l.live_bytes_at(e),
                "{name} device {d} entry {e}"
            );
        }
        let top = (0..series.entries.len())
            .map(|k| series.total_at(k))
            .max()
            .unwrap();
        if !l.live_after.is_empty() {
            assert_eq!(
                top,
                r["timeline_peak_bytes"].as_u64().unwrap(),
                "{name} device {d}"
            );
        }
    });
}

#[test]
fn on_a_training_step_the_components_find_parameters_gradients_and_optimizer_state() {
    use memograph_snapshot::analysis::categories::Rules;
    use memograph_snapshot::analysis::report::{device_report, Component, ReportOptions};
    let s = read_bytes(&fixture_or_skip!("kk_memory_ctx128_fullstep.pickle")).unwrap();
    let rep = device_report(&s, 0, &Rules::built_in(), &ReportOptions::default());
    let bytes = |c: Component| {
        rep.components
            .iter()
            .find(|t| t.component == c)
            .unwrap()
            .bytes
    };
    // Adam keeps two moments per parameter: the optimizer state is the largest part at the peak.
    assert!(bytes(Component::OptimizerState) > 20 << 30);
    assert!(bytes(Component::Gradients) > 10 << 30);
    assert!(bytes(Component::OptimizerState) > bytes(Component::Activations));
}

#[test]
fn a_snapshot_without_allocator_history_says_how_to_record_it_and_one_without_memory_says_so() {
    use memograph_snapshot::analysis::summary::missing_history;
    let mut s = read_bytes(&memograph_snapshot::synth::pickle(40).bytes).unwrap();
    assert_eq!(missing_history(&s, 0), None);
    // What `torch.cuda.memory._snapshot()` gives without `_record_memory_history()`: segments alone.
    s.device_traces.clear();
    let said = missing_history(&s, 0).unwrap();
    assert!(said.starts_with("No allocator history"), "{said}");
    assert!(
        said.contains("torch.cuda.memory._record_memory_history()"),
        "{said}"
    );
    // A device with neither, and a snapshot with neither.
    assert!(missing_history(&s, 7)
        .unwrap()
        .starts_with("No CUDA memory"));
    s.segments.clear();
    assert!(missing_history(&s, 0)
        .unwrap()
        .starts_with("No CUDA memory"));
}

#[test]
fn findings_say_the_peak_or_the_entry_analysed_and_the_peak() {
    use memograph_snapshot::analysis::categories::Rules;
    use memograph_snapshot::analysis::report::{device_report, ReportOptions};
    let s = read_bytes(&fixture_or_skip!("kk_memory_ctx128_fullstep.pickle")).unwrap();
    let rules = Rules::built_in();
    let at = |event: Option<i64>| {
        let options = ReportOptions {
            event,
            ..ReportOptions::default()
        };
        device_report(&s, 0, &rules, &options)
    };
    let peak = at(None);
    let entries: u64 = peak.summary.events.values().sum();
    let findings = peak.findings(Some("**In 80.0 GiB: yes**, headroom …"));
    let lines: Vec<&str> = findings.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "- **Peak: 51.0 GiB** at entry 19 335 of {}, with {} allocations live; ",
            memograph_snapshot::format::grouped(entries),
            memograph_snapshot::format::grouped(peak.live_allocations as u64)
        )),
        "{findings}"
    );
    assert!(
        lines[1].starts_with("- At the peak: optimizer state 25.6 GiB ("),
        "{findings}"
    );
    assert!(lines.iter().all(|l| l.starts_with("- ")), "{findings}");
    // The caller's line on the fit comes after the allocator's, before the recommendations.
    let fit = lines
        .iter()
        .position(|l| l.starts_with("- **In 80.0 GiB"))
        .unwrap();
    assert!(lines[fit - 1].starts_with("- Allocator: "), "{findings}");
    // Elsewhere: the entry, what is live there, and where the peak is.
    let early = at(Some(1000));
    let findings = early.findings(None);
    assert!(
        findings.starts_with(&format!(
            "- **At entry 1 000 of {}: {} live**, in {} allocations; the peak is 51.0 GiB at entry 19 335.\n- Live then: ",
            memograph_snapshot::format::grouped(entries),
            memograph_snapshot::format::bytes(early.live_bytes),
            memograph_snapshot::format::grouped(early.live_allocations as u64)
        )),
        "{findings}"
    );
    assert!(!findings.contains("In 80.0 GiB"));
    // Before the first entry.
    let start = at(Some(-1)).findings(None);
    assert!(start.starts_with("- **Before the first entry: "), "{start}");
}
