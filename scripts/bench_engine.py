#!/usr/bin/env python3
"""Engine benchmark: `memograph summary --json` against CPython's `pickle.load` on the same files.

    python3 scripts/bench_engine.py [--runs 5] [--size 192] [FILE ...]

Without FILEs it benchmarks kk_memory_ctx128_fullstep.pickle and a ~190 MB snapshot tiled from it
(generated into bench-out/ by scripts/tile_snapshot.py when missing). For each file it reports the median
wall time of the whole `memograph` process (start-up, read, analyses, output), its throughput and peak RSS,
and, in the same run, the median time of `pickle.load` alone inside CPython and that process's peak RSS.
Bars (issue #3): memograph at least 5x faster, at most 0.4x the memory. Results also go to
bench-out/engine.json.
"""
import argparse, json, os, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.environ.get("MEMOGRAPH_FIXTURES", os.path.join(ROOT, "..", "shared", "fixtures"))
BIN = os.path.join(ROOT, "target", "release", "memograph")


def run_measured(cmd):
    """Runs cmd; returns (wall seconds, peak RSS bytes, stdout)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    return wall, usage.ru_maxrss * 1024, out


def bench(path, runs):
    size = os.path.getsize(path)
    load = "import pickle,sys,time; f=open(sys.argv[1],'rb'); t=time.perf_counter(); pickle.load(f); print(time.perf_counter()-t)"
    # Interleaved, so that drift in the machine's speed (shared, noisy VMs) hits both sides alike.
    ours, theirs = [], []
    for i in range(runs):
        ours.append(run_measured([BIN, "summary", "--json", path]))
        if i % 2 == 0 or len(theirs) < 3:
            theirs.append(run_measured([sys.executable, "-c", load, path]))
    t_ours = statistics.median(w for w, _, _ in ours)
    rss_ours = max(r for _, r, _ in ours)
    t_py = statistics.median(float(out) for _, _, out in theirs)
    rss_py = max(r for _, r, _ in theirs)
    return {
        "file": os.path.basename(path), "bytes": size,
        "memograph_s": round(t_ours, 3), "memograph_mb_per_s": round(size / t_ours / 1e6, 1),
        "memograph_peak_rss_mb": round(rss_ours / 1e6, 1),
        "pickle_load_s": round(t_py, 3), "pickle_load_peak_rss_mb": round(rss_py / 1e6, 1),
        "speedup": round(t_py / t_ours, 2), "memory_ratio": round(rss_ours / rss_py, 3),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", type=float, default=188, help="MB of the tiled snapshot")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "memograph"], cwd=ROOT, check=True)
    files = args.files
    if not files:
        tiled = os.path.join(ROOT, "bench-out", "tiled_190mb.pickle")
        if not os.path.exists(tiled):
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "tile_snapshot.py"), "--size",
                            str(args.size), "--out", tiled], check=True)
        files = [os.path.join(FIXTURES, "kk_memory_ctx128_fullstep.pickle"), tiled]
    results = []
    print(f"{'file':<34} {'MB':>7} {'memograph':>10} {'MB/s':>7} {'RSS MB':>7} | {'pickle.load':>11} {'RSS MB':>7} | {'speed':>6} {'mem':>6}")
    for f in files:
        r = bench(f, args.runs)
        results.append(r)
        print(f"{r['file']:<34} {r['bytes'] / 1e6:>7.1f} {r['memograph_s']:>9.3f}s {r['memograph_mb_per_s']:>7.0f} "
              f"{r['memograph_peak_rss_mb']:>7.0f} | {r['pickle_load_s']:>10.3f}s {r['pickle_load_peak_rss_mb']:>7.0f} | "
              f"{r['speedup']:>5.1f}x {r['memory_ratio']:>5.2f}x")
    big = max(results, key=lambda r: r["bytes"])
    ok = big["speedup"] >= 5 and big["memory_ratio"] <= 0.4
    print(f"bar on {big['file']}: >=5x faster and <=0.4x memory: {'PASS' if ok else 'FAIL'}")
    os.makedirs(os.path.join(ROOT, "bench-out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench-out", "engine.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
