#!/usr/bin/env python3
"""Tile real snapshots into a large synthetic one, for benchmarks and big-file tests.

    python3 scripts/tile_snapshot.py --size 190 --out bench-out/tiled_190mb.pickle [SOURCE.pickle ...]
    python3 scripts/tile_snapshot.py --rounds --size 185 --out bench-out/rounds_185mb.pickle

Each tile is a copy of a source snapshot's device traces and segments with addresses shifted into a fresh
range and times shifted past the previous tile, so lifetimes never collide. Frame dicts stay shared (every
tile's entries refer to the same frame objects, as a real run's do), and each entry gets its own frames
list, as PyTorch writes them. Output is pickle protocol 4, written by CPython's own pickler.

With --rounds the file looks like a long run recorded with max_entries=1_000_000: the source's steps
repeat round after round at the same addresses (the allocator reuses them), so one set of segments holds
many rounds of allocations and frees; what the source never frees (parameters, optimizer state) is
allocated in the first round only. Frame lists are new each round, frame dicts shared.

The sources are trusted fixtures from ../shared/fixtures; this script is the only place pickle.load runs.
"""
import argparse, copy, os, pickle, sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOURCE = os.path.join(HERE, "..", "..", "shared", "fixtures", "kk_memory_ctx128_fullstep.pickle")


def address_span(snap):
    addrs = [s["address"] + s["total_size"] for s in snap["segments"]]
    addrs += [e.get("addr", 0) + e.get("size", 0) for t in snap["device_traces"] for e in t]
    top = max(addrs or [0])
    return ((top >> 32) + 1) << 32  # a fresh 4 GiB-aligned range per tile


def time_span(snap):
    times = [e["time_us"] for t in snap["device_traces"] for e in t if "time_us" in e]
    return (max(times) - min(times) + 1000) if times else 0


def shifted_entry(e, da, dt):
    e = dict(e)
    if "addr" in e and e["action"] not in ("oom", "snapshot", "user_defined"):
        e["addr"] += da
    if "time_us" in e:
        e["time_us"] += dt
    if "frames" in e:
        e["frames"] = list(e["frames"])
    return e


def shifted_segment(s, da):
    s = dict(s)
    s["address"] += da
    s["blocks"] = [dict(b, address=b["address"] + da, frames=list(b.get("frames", []))) if "address" in b else dict(b)
                   for b in s["blocks"]]
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=float, default=190, help="target size in MB (10**6 bytes)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", action="store_true", help="repeat the first source's steps at the same addresses")
    ap.add_argument("sources", nargs="*", default=[DEFAULT_SOURCE])
    args = ap.parse_args()
    sources = []
    for path in args.sources:
        with open(path, "rb") as f:
            snap = pickle.load(f)
        # What one more tile adds: frame dicts are pickled once for all tiles, so measure two minus one.
        def tiles(n):
            return {"segments": [shifted_segment(x, 0) for _ in range(n) for x in snap["segments"]],
                    "device_traces": [[shifted_entry(e, 0, 0) for _ in range(n) for e in t] for t in snap["device_traces"]]}
        one, two = (len(pickle.dumps(tiles(n), protocol=4)) for n in (1, 2))
        sources.append((snap, two - one))
    target = int(args.size * 1e6)
    if args.rounds:
        return rounds(sources[0][0], sources[0][1], target, args.out)
    devices = max(len(s["device_traces"]) for s, _ in sources)
    out = {"segments": [], "device_traces": [[] for _ in range(devices)],
           "allocator_settings": sources[0][0].get("allocator_settings"),
           "external_annotations": []}
    total, k, base_addr, base_time = 0, 0, 0, 0
    while total < target:
        snap, size = sources[k % len(sources)]
        span, tspan = address_span(snap), time_span(snap)
        for d, trace in enumerate(snap["device_traces"]):
            out["device_traces"][d].extend(shifted_entry(e, base_addr, base_time) for e in trace)
        out["segments"].extend(shifted_segment(s, base_addr) for s in snap["segments"])
        for a in snap.get("external_annotations") or []:
            a = dict(a)
            if "time_us" in a:
                a["time_us"] += base_time
            out["external_annotations"].append(a)
        base_addr += span
        base_time += tspan
        total += size
        k += 1
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "wb") as f:
        pickle.dump(out, f, protocol=4)
    print(f"{args.out}: {os.path.getsize(args.out) / 1e6:.1f} MB, {k} tiles, "
          f"{sum(len(t) for t in out['device_traces'])} trace entries, {len(out['segments'])} segments")


def round_trip_entries(trace):
    """Indices of the entries a round can repeat: allocations freed within the trace (with their
    free_requested and free), segments freed within it, and everything that is no allocation or free.
    What stays allocated is allocated once, so memory stays level from round to round."""
    keep, open_blocks, open_segments = set(), {}, {}
    for i, e in enumerate(trace):
        a, addr = e["action"], e.get("addr")
        if a == "alloc":
            open_blocks[addr] = [i]
        elif a == "free_requested" and addr in open_blocks:
            open_blocks[addr].append(i)
        elif a in ("free_completed", "free") and addr in open_blocks:
            keep.update(open_blocks.pop(addr) + [i])
        elif a in ("segment_alloc", "segment_map"):
            open_segments[addr] = i
        elif a in ("segment_free", "segment_unmap") and addr in open_segments:
            keep.update([open_segments.pop(addr), i])
        elif a not in ("free_requested", "free_completed", "free", "segment_free", "segment_unmap"):
            keep.add(i)
    return keep


def rounds(snap, tile_size, target, out_path):
    """The long-run shape: the source's trace repeated at the same addresses (see the module's doc)."""
    out = {"segments": [shifted_segment(s, 0) for s in snap["segments"]],
           "device_traces": [[] for _ in snap["device_traces"]],
           "allocator_settings": snap.get("allocator_settings"), "external_annotations": []}
    tspan = time_span(snap)
    kept = [round_trip_entries(t) for t in snap["device_traces"]]
    share = sum(map(len, kept)) / max(1, sum(map(len, snap["device_traces"])))
    n = max(1, round(target / max(tile_size * share, 1)))
    for d, trace in enumerate(snap["device_traces"]):
        repeated = kept[d]
        for k in range(n):
            for i, e in enumerate(trace):
                if k == 0 or i in repeated:
                    out["device_traces"][d].append(shifted_entry(e, 0, k * tspan))
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "wb") as f:
        pickle.dump(out, f, protocol=4)
    print(f"{out_path}: {os.path.getsize(out_path) / 1e6:.1f} MB, {n} rounds, "
          f"{sum(len(t) for t in out['device_traces'])} trace entries, {len(out['segments'])} segments")


if __name__ == "__main__":
    sys.exit(main())
