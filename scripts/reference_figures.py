#!/usr/bin/env python3
"""Reference figures of PyTorch memory snapshots, computed straight from the pickle with `pickle.load`,
apart from Memograph's engine, by the definitions in ../shared/fixtures/README.md (per device: events by
action, segments, reserved/active/requested bytes, the Active Memory Timeline's allocations and peak,
unique frames). New fixtures recorded on a GPU machine get their reference/*.json from it.

    python3 scripts/reference_figures.py FILE...        # one JSON object per file
    python3 scripts/reference_figures.py --check DIR    # DIR's snapshots against DIR/reference/FILE.json

`pickle.load` runs whatever code a pickle names: use this on files you trust only (Memograph itself
never does).
"""
import gzip
import json
import os
import pickle
import sys
from collections import Counter, defaultdict


def load(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open if gz else open)(path, "rb") as f:
        return pickle.load(f)


def frame_keys(frames):
    return {(f.get("filename"), f.get("line"), f.get("name")) for f in frames or ()}


def block_requested(block):
    if "requested_size" in block:
        return block["requested_size"]
    history = block.get("history") or []
    if history and "real_size" in history[0]:
        return history[0]["real_size"]
    return block["size"]


def with_addresses(segment):
    """The segment's blocks, each with its address (older files leave it out: blocks tile the segment
    in order from its start)."""
    at = segment["address"]
    for b in segment.get("blocks") or ():
        yield b if "address" in b else {**b, "address": at}
        at += b["size"]


def timeline(trace, blocks):
    """Allocations and peak of the Active Memory Timeline (MemoryViz's `process_alloc_data`)."""
    open_at = {}  # address -> size of the lifetime open there
    allocations = 0
    before = 0  # bytes live before the first entry: unmatched frees
    live = []  # live bytes after each entry, less `before` and the snapshot-only blocks
    now = 0
    for e in trace:
        action, addr, size = e["action"], e.get("addr"), e.get("size", 0)
        if action == "alloc":
            open_at[addr] = size  # an address already open is replaced; that lifetime never closes
            allocations += 1
            now += size
        elif action in ("free_completed", "free"):
            if addr in open_at:
                now -= open_at.pop(addr)
            else:
                allocations += 1
                before += size
                now -= size
        live.append(now)
    snapshot_only = [b for b in blocks if b.get("state") == "active_allocated" and b["address"] not in open_at]
    allocations += len(snapshot_only)
    start = before + sum(block_requested(b) for b in snapshot_only)
    series = [start + x for x in live]
    peak = max([start] + series)
    index = -1 if start == peak else series.index(peak)
    return allocations, peak, index


def figures(snapshot):
    if isinstance(snapshot, list):  # the oldest format: the segments alone
        snapshot = {"segments": snapshot, "device_traces": []}
    segments = snapshot.get("segments") or []
    traces = snapshot.get("device_traces") or []
    by_device = defaultdict(list)
    for s in segments:
        by_device[s["device"]].append(s)
    devices = sorted(set(by_device) | {d for d, t in enumerate(traces) if t})
    out = {}
    for d in devices:
        trace = traces[d] if d < len(traces) else []
        segs = by_device.get(d, [])
        blocks = [b for s in segs for b in with_addresses(s)]
        frames = set()
        for x in list(trace) + segs + blocks:
            frames |= frame_keys(x.get("frames"))
        for b in blocks:
            for h in b.get("history") or ():
                frames |= frame_keys(h.get("frames"))
        allocations, peak, index = timeline(trace, blocks)
        out[str(d)] = {
            "events": dict(sorted(Counter(e["action"] for e in trace).items())),
            "segments": len(segs),
            "reserved_bytes": sum(s["total_size"] for s in segs),
            "active_bytes": sum(b["size"] for b in blocks if b.get("state") in ("active_allocated", "active_pending_free")),
            "requested_bytes": sum(block_requested(b) for b in blocks if b.get("state") == "active_allocated"),
            "allocations": allocations,
            "timeline_peak_bytes": peak,
            "peak_event_index": index,
            "unique_frames": len(frames),
        }
    return out


def main(args):
    if args[:1] == ["--check"] and len(args) == 2:
        folder, failed, checked = args[1], 0, 0
        for name in sorted(os.listdir(os.path.join(folder, "reference"))):
            want = json.load(open(os.path.join(folder, "reference", name)))
            got = figures(load(os.path.join(folder, want["file"])))
            checked += 1
            if got != want["devices"]:
                failed += 1
                print(f"DIFFERS {want['file']}:\n  got  {json.dumps(got, sort_keys=True)}\n  want {json.dumps(want['devices'], sort_keys=True)}")
        print(f"{checked - failed} of {checked} files agree with {folder}/reference")
        return 1 if failed or not checked else 0
    if not args or args[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in args:
        print(json.dumps({"file": os.path.basename(path), "devices": figures(load(path))}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
