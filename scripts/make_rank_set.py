#!/usr/bin/env python3
"""Write a set of rank snapshots from one real snapshot, for compare tests and benchmarks.

    python3 scripts/make_rank_set.py --out DIR [--ranks 8] [--outlier 6] [--source FILE.pickle]

Rank R is a copy of the source with every size (trace entries, blocks, segments) multiplied by
(100 + R % 4) / 100, except the outlier rank, whose sizes are multiplied by 1.4: the set a job with one
rank out of line leaves (`rank{R}_memory_snapshot.pickle`). Written with CPython's pickler, protocol 4.

The source is a trusted fixture from ../shared/fixtures; pickle.load runs only on it.
"""
import argparse, os, pickle

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOURCE = os.path.join(HERE, "..", "..", "shared", "fixtures", "a0kuma_adam.pickle")
SIZE_KEYS = ("size", "total_size", "allocated_size", "active_size", "requested_size", "real_size")


def scaled(value, num, den):
    """A deep copy of `value` with every size field multiplied by num/den (frames shared, as loaded)."""
    if isinstance(value, dict):
        if "filename" in value and "line" in value:
            return value  # a frame
        return {k: (v * num // den if k in SIZE_KEYS and isinstance(v, int) else scaled(v, num, den))
                for k, v in value.items()}
    if isinstance(value, list):
        return [scaled(v, num, den) for v in value]
    return value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--outlier", type=int, default=6)
    ap.add_argument("--source", default=DEFAULT_SOURCE)
    args = ap.parse_args()
    with open(args.source, "rb") as f:
        snap = pickle.load(f)
    os.makedirs(args.out, exist_ok=True)
    for r in range(args.ranks):
        num, den = (140, 100) if r == args.outlier else (100 + r % 4, 100)
        path = os.path.join(args.out, f"rank{r}_memory_snapshot.pickle")
        with open(path, "wb") as f:
            pickle.dump(scaled(snap, num, den), f, protocol=4)
        print(path)


if __name__ == "__main__":
    main()
