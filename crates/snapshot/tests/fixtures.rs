//! Every real fixture reads, and its figures equal `reference/FILE.json` exactly.

mod common;

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

#[test]
fn schema_details_are_kept() {
    let cs = read_bytes(&fixture_or_skip!("cs_memory_snapshot.pickle")).unwrap();
    assert_eq!(cs.device_traces.len(), 4);
    let oom = cs.trace(1);
    let i = oom
        .action
        .iter()
        .position(|a| *a == memograph_snapshot::Action::Oom)
        .unwrap();
    let e = oom.get(i);
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
