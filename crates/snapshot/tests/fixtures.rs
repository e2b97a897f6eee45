//! Every real fixture reads, and its figures equal `reference/FILE.json` exactly.

mod common;

use common::repository_fixture;

use memograph_snapshot::analysis::summary::summarize;
use memograph_snapshot::{read_bytes, read_snapshot, Format};

#[test]
fn every_fixture_summary_equals_its_reference() {
    let names = common::fixture_names();
    if names.is_empty() {
        return;
    }
    assert!(
        names.len() >= 9,
        "expected the shared fixtures, found {names:?}"
    );
    for name in names {
        let reference = common::reference(&name);
        assert_summary_is_reference(&name, &common::fixture_bytes(&name), &reference);
    }
}

/// The real snapshots recorded for this repository (`tests/fixtures`, by `scripts/gpu_check.sh` on a
/// GPU machine) with `reference/FILE.json` from `scripts/reference_figures.py`: each reads, and its
/// figures equal its reference. (`MEMOGRAPH_REPO_FIXTURES` points elsewhere.)
#[test]
fn every_repository_fixture_summary_equals_its_reference() {
    let dir = std::env::var_os("MEMOGRAPH_REPO_FIXTURES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
        });
    let Ok(references) = std::fs::read_dir(dir.join("reference")) else {
        eprintln!("no repository fixtures in {}", dir.display());
        return;
    };
    for entry in references {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
        let name = reference["file"].as_str().unwrap();
        let bytes = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_summary_is_reference(name, &bytes, &reference);
    }
}

/// `bytes` read into the summary whose devices and figures are `reference`'s.
fn assert_summary_is_reference(name: &str, bytes: &[u8], reference: &serde_json::Value) {
    let snapshot = read_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let expected = reference["devices"].as_object().unwrap();
    let got = summarize(&snapshot);
    let got_devices: Vec<String> = got.iter().map(|d| d.device.to_string()).collect();
    let expected_devices: Vec<String> = expected.keys().cloned().collect();
    assert_eq!(got_devices, expected_devices, "{name}: devices");
    for d in got {
        let mut json = serde_json::to_value(&d).unwrap();
        json.as_object_mut().unwrap().remove("device");
        assert_eq!(
            json,
            expected[&d.device.to_string()],
            "{name}: device {}",
            d.device
        );
    }
}

#[test]
fn the_reader_streams_from_any_reader_with_progress() {
    let bytes = fixture_or_skip!("kk_memory_ctx128_fullstep.pickle");
    let seen = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let s2 = seen.clone();
    let snapshot = read_snapshot(
        std::io::Cursor::new(&bytes),
        Some(bytes.len() as u64),
        Some(Box::new(move |n| s2.set(n))),
    )
    .unwrap();
    assert_eq!(seen.get(), bytes.len() as u64);
    assert_eq!(snapshot.trace(0).len(), 19_342);
}

#[test]
fn gzip_is_detected_by_magic_bytes_not_by_name() {
    let gz = fixture_or_skip!("magma_memory_snapshot.pickle.gz");
    let plain = fixture_or_skip!("magma_memory_snapshot.pickle");
    let a = summarize(&read_bytes(&gz).unwrap());
    let b = summarize(&read_bytes(&plain).unwrap());
    assert_eq!(a, b);
}

#[test]
fn protocol_5_reads_like_protocol_4() {
    let p5 = read_bytes(&fixture_or_skip!("a0kuma_adam.proto5.pickle")).unwrap();
    let p4 = read_bytes(&fixture_or_skip!("a0kuma_adam.pickle")).unwrap();
    assert_eq!(p5.protocol, 5);
    assert_eq!(p4.protocol, 4);
    assert_eq!(p4.encoding(), "pickle protocol 4");
    assert_eq!(summarize(&p5), summarize(&p4));
}

#[test]
fn a_line_of_2_pow_64_minus_1_is_read_exactly() {
    let s = read_bytes(&fixture_or_skip!("kk_memory_ctx128_forward.pickle")).unwrap();
    let max_line = (0..s.interner.frame_count() as u32)
        .map(|i| s.frame(memograph_snapshot::FrameId(i)).line)
        .max();
    assert_eq!(max_line, Some(u64::MAX));
}

/// Where `trace`'s first `oom` entry is.
fn first_oom(trace: &memograph_snapshot::DeviceTrace) -> usize {
    trace
        .action
        .iter()
        .position(|a| *a == memograph_snapshot::Action::Oom)
        .expect("an oom entry")
}

#[test]
fn schema_details_are_kept() {
    let cs = read_bytes(&fixture_or_skip!("cs_memory_snapshot.pickle")).unwrap();
    assert_eq!(cs.device_traces.len(), 4);
    let oom = cs.trace(1);
    let e = oom.get(first_oom(oom));
    assert_eq!(e.device_free, Some(95_682_560));
    assert_eq!(e.size, 5_308_694_528);
    assert_eq!(cs.str(e.compile_context.unwrap()), "N/A");
    assert!(cs.segments.iter().any(|s| s.is_expandable));
    assert!(!cs.external_annotations.is_empty());
    let settings = cs.allocator_settings.as_ref().unwrap().to_python();
    assert!(
        settings.contains("'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True'"),
        "{settings}"
    );
    assert_eq!(cs.default_device(), Some(0));

    let magma = read_bytes(&fixture_or_skip!("magma_memory_snapshot.pickle")).unwrap();
    assert!(magma.trace(0).get(0).user_metadata.is_some());

    let ft = read_bytes(&fixture_or_skip!("ftcourse_memory_snapshot.pickle")).unwrap();
    assert!(!ft.trace(0).has_time());
    assert!(ft.allocator_settings.is_none());

    let yiyi = read_bytes(&fixture_or_skip!("yiyi_oom_snapshot.pickle")).unwrap();
    assert_eq!(yiyi.format, Format::LegacyHistory);
    assert!(yiyi.segments[0].blocks[0].stack != memograph_snapshot::StackId::EMPTY);
}

#[test]
fn the_binary_model_codec_round_trips_every_fixture() {
    for name in common::fixture_names() {
        let s = read_bytes(&common::fixture_bytes(&name)).unwrap();
        let bytes = memograph_snapshot::codec::encode(&s);
        // Known before it is written (a page decodes a worker's encoding as it arrives).
        let sizes = memograph_snapshot::codec::sizes(&s);
        assert_eq!(sizes.total, bytes.len(), "{name}");
        assert!(sizes.head <= sizes.total, "{name}");
        let back =
            memograph_snapshot::codec::decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(summarize(&back), summarize(&s), "{name}");
        assert_eq!(back.segments, s.segments);
        assert_eq!(back.allocator_settings, s.allocator_settings);
        assert_eq!(back.external_annotations, s.external_annotations);
        assert_eq!(
            memograph_snapshot::codec::encode(&back),
            bytes,
            "{name}: re-encoding differs"
        );
        // A damaged buffer is an error, never a panic.
        for cut in (0..bytes.len()).step_by(bytes.len() / 50 + 1) {
            assert!(memograph_snapshot::codec::decode(&bytes[..cut]).is_err());
        }
    }
}

fn strings_of(s: &memograph_snapshot::Snapshot, ids: &[u32]) -> Vec<String> {
    ids.iter()
        .filter(|&&i| i != memograph_snapshot::NONE_ID)
        .map(|&i| s.str(memograph_snapshot::StrId(i)).to_string())
        .collect()
}

#[test]
fn pytorch_2_11_private_pools_keep_their_ids() {
    use memograph_snapshot::analysis::stats::segment_stats;
    let s = repository_fixture("pools.pickle");
    let (rows, totals) = segment_stats(&s, 0);
    let mut by_pool = std::collections::BTreeMap::<(i64, i64), u64>::new();
    for g in s.segments_of(0) {
        *by_pool.entry(g.segment_pool_id.unwrap()).or_default() += g.total_size;
    }
    // A CUDA graph's private pool (1, 0) and a MemPool (0, 1) beside the allocator's own (0, 0).
    assert_eq!(
        by_pool.into_iter().collect::<Vec<_>>(),
        [
            ((0, 0), 60_817_408),
            ((0, 1), 20_971_520),
            ((1, 0), 35_651_584)
        ]
    );
    let private: Vec<_> = rows.iter().filter_map(|r| r.private_pool).collect();
    assert_eq!(private, [(1, 0), (0, 1), (1, 0)]);
    assert_eq!(totals.reserved, 117_440_512);
}

#[test]
fn pytorch_2_11_a_block_freed_while_its_stream_works_is_pending() {
    use memograph_snapshot::analysis::stats::segment_stats;
    use memograph_snapshot::BlockState;
    let s = repository_fixture("pending_free.pickle");
    let pending: Vec<(u64, u64)> = s
        .segments_of(0)
        .flat_map(|g| &g.blocks)
        .filter(|b| b.state == BlockState::ActivePendingFree)
        .map(|b| (b.address, b.size))
        .collect();
    assert_eq!(pending, [(0x7f9f_f660_0000, 4_194_304)]);
    assert_eq!(segment_stats(&s, 0).1.pending_free, 4_194_304);
}

#[test]
fn pytorch_2_11_expandable_segments_map_and_unmap() {
    use memograph_snapshot::Action;
    let s = repository_fixture("expandable.pickle");
    let t = s.trace(0);
    let count = |a: Action| t.action.iter().filter(|&&x| x == a).count();
    assert_eq!(
        (count(Action::SegmentMap), count(Action::SegmentUnmap)),
        (9, 1)
    );
    assert!(s.segments_of(0).all(|g| g.is_expandable));
    assert_eq!(s.segments_of(0).count(), 3);
}

#[test]
fn pytorch_2_11_user_metadata_and_compile_context_are_kept() {
    let s = repository_fixture("metadata.pickle");
    assert_eq!(
        strings_of(&s, &s.trace(0).user_metadata),
        [
            "phase=forward",
            "phase=forward",
            "phase=backward",
            "phase=backward",
            "phase=backward"
        ]
    );
    let c = repository_fixture("compiled.pickle");
    let compiled = strings_of(&c, &c.trace(0).compile_context);
    assert_eq!(compiled.len(), 1565);
    assert_eq!(
        compiled
            .iter()
            .filter(|x| *x == "Torch-Compiled Region: 0/0")
            .count(),
        16
    );
    // record_function ranges, recorded with global_record_annotations=True.
    let names: Vec<String> = c
        .external_annotations
        .iter()
        .map(|a| format!("{} {}", c.str(a.stage), c.str(a.name)))
        .collect();
    assert_eq!(names.len(), 12);
    assert_eq!(
        names[..6],
        [
            "START step_0",
            "START forward",
            "END forward",
            "START backward",
            "END backward",
            "END step_0"
        ]
    );
}

#[test]
fn pytorch_2_11_cpp_frames_oom_and_protocol_5() {
    let s = repository_fixture("all_stacks.pickle");
    let names: Vec<&str> = s
        .segments_of(0)
        .flat_map(|g| &g.blocks)
        .flat_map(|b| s.stack(b.stack))
        .map(|&f| s.str(s.frame(f).name))
        .collect();
    assert!(names
        .iter()
        .any(|n| n.contains("c10::cuda::CUDACachingAllocator")));
    let o = repository_fixture("oom.pickle");
    let t = o.trace(0);
    let i = first_oom(t);
    assert_eq!(t.size[i], 1 << 50);
    assert_eq!(t.device_free, [(i as u32, 149_536_505_856)]);
    // A comparison places it on the run's curve: its entry, time and the 4 MiB live then.
    use memograph_snapshot::analysis::{categories::Rules, compare::digests};
    let d = &digests(&o, &Rules::built_in(), "oom.pickle", 0)[0];
    let at = d.oom_at.expect("the oom entry's point");
    assert!(d.oom());
    assert_eq!((at.entry, at.bytes), (i as i64, 4 << 20));
    assert_eq!(at.time_us, Some(t.time_us[i] - t.time_us[0]));
    assert_eq!(repository_fixture("training.pickle").protocol, 5);
}

#[test]
fn pytorch_2_11_context_state_gives_live_allocations_their_blocks_frames() {
    use memograph_snapshot::analysis::lifetimes::Lifetimes;
    // stacks="all", context="state": the trace has no frames, the snapshot's blocks do.
    let s = repository_fixture("all_stacks.pickle");
    assert!(s.trace(0).stack.iter().all(|&k| s.stack(k).is_empty()));
    let lifetimes = Lifetimes::of(&s, 0);
    let live: Vec<_> = lifetimes
        .allocations
        .iter()
        .filter(|a| a.alloc_event().is_some() && a.free_event().is_none())
        .collect();
    assert_eq!(live.len(), 3);
    assert!(live.iter().all(|a| !s.stack(a.stack).is_empty()));
}
