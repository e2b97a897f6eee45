#!/usr/bin/env python3
"""Tile real snapshots into a large synthetic one, for benchmarks and big-file tests.

    python3 scripts/tile_snapshot.py --size 190 --out bench-out/tiled_190mb.pickle [SOURCE.pickle ...]

Each tile is a copy of a source snapshot's device traces and segments with addresses shifted into a fresh
range and times shifted past the previous tile, so lifetimes never collide. Frame dicts stay shared (every
tile's entries refer to the same frame objects, as a real run's do), and each entry gets its own frames
list, as PyTorch writes them. Output is pickle protocol 4, written by CPython's own pickler.

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


if __name__ == "__main__":
    sys.exit(main())
