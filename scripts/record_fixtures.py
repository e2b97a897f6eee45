#!/usr/bin/env python3
"""Records small real snapshots on a CUDA machine, one per feature today's PyTorch writes (issue #15),
each in a process of its own (a clean allocator, its own PYTORCH_CUDA_ALLOC_CONF), then their reference
figures with scripts/reference_figures.py.

    python3 scripts/record_fixtures.py OUT_DIR              # every scenario
    python3 scripts/record_fixtures.py OUT_DIR NAME...      # some (names: see SCENARIOS)

Writes OUT_DIR/NAME.pickle (as `_dump_snapshot` writes it, under 5 MB), OUT_DIR/reference/NAME.pickle.json
and OUT_DIR/recorded.json: per scenario, what was recorded or why not, and which recording options this
PyTorch refused. A scenario that fails is reported and the others still run. Run by scripts/gpu_check.sh.
"""
import json
import os
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_BYTES = 5 << 20


def record(**options):
    """Starts recording with `options`, leaving out those this PyTorch does not take (returned)."""
    import torch
    refused = []
    while True:
        try:
            torch.cuda.memory._record_memory_history(**options)
            return refused
        except TypeError as e:
            bad = next((k for k in options if f"'{k}'" in str(e)), None)
            if bad is None:
                raise
            refused.append(bad)
            options.pop(bad)


def small_model():
    import torch
    return torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512)).cuda()


def train_steps(model, steps=2, batch=32):
    import torch
    opt = torch.optim.AdamW(model.parameters())
    for _ in range(steps):
        model(torch.randn(batch, 512, device="cuda")).square().mean().backward()
        opt.step()
        opt.zero_grad()


def compiled():
    """torch.compile with compile_context and record_function ranges as external annotations."""
    import torch
    refused = record(max_entries=20000, compile_context=True, global_record_annotations=True)
    model = torch.compile(small_model())
    for step in range(2):
        with torch.profiler.record_function(f"step_{step}"):
            with torch.profiler.record_function("forward"):
                loss = model(torch.randn(32, 512, device="cuda")).square().mean()
            with torch.profiler.record_function("backward"):
                loss.backward()
    return refused


def pools():
    """A CUDA graph's private pool and a MemPool: segment_pool_id other than (0, 0)."""
    import torch
    refused = record(max_entries=20000)
    model = small_model()
    x = torch.randn(32, 512, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            model(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = model(x)
    graph.replay()
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        kept = [torch.empty(1 << 20, device="cuda") for _ in range(3)]
    torch.cuda.synchronize()
    globals()["_keep"] = (graph, y, pool, kept)
    return refused


def expandable():
    """expandable_segments:True (set for this process by the driver): segment_map / segment_unmap."""
    import torch
    refused = record(max_entries=20000)
    kept = []
    for k in range(6):
        kept.append(torch.empty((k + 1) << 24, dtype=torch.uint8, device="cuda"))
    del kept[1:4]
    torch.cuda.empty_cache()
    train_steps(small_model())
    return refused


def pending_free():
    """A side stream with record_stream: blocks freed while that stream still works (active_pending_free)."""
    import torch
    refused = record(max_entries=20000)
    side = torch.cuda.Stream()
    x = torch.randn(1 << 20, device="cuda")
    with torch.cuda.stream(side):
        torch.cuda._sleep(2_000_000_000)  # about a second of work queued on the side stream
        y = x * 2
    x.record_stream(side)
    del x  # pending until the side stream's work is done: the snapshot is taken before that
    globals()["_keep"] = y
    return refused


def metadata():
    """_set_memory_metadata (a string, and a dict where this version takes one) -> user_metadata."""
    import torch
    refused = record(max_entries=20000)
    set_metadata = torch.cuda.memory._set_memory_metadata
    set_metadata("phase=forward")
    a = torch.randn(1 << 18, device="cuda")
    try:
        set_metadata({"phase": "backward", "step": 1})
    except Exception as e:  # noqa: BLE001 - which kinds it takes is what is being found out
        refused.append(f"_set_memory_metadata(dict): {type(e).__name__}: {e}")
        set_metadata("phase=backward")
    b = torch.randn(1 << 18, device="cuda")
    del a
    set_metadata("")
    globals()["_keep"] = b
    return refused


def all_stacks():
    """stacks='all' (C++ frames), context='state', skip_actions where this version has it."""
    refused = record(max_entries=3000, stacks="all", context="state", skip_actions=["free_requested"])
    train_steps(small_model(), steps=1, batch=8)
    return refused


def oom():
    """An allocation the GPU cannot hold: the trace's `oom` event."""
    import torch
    refused = record(max_entries=20000)
    keep = torch.empty(1 << 20, device="cuda")
    try:
        torch.empty(1 << 50, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError:
        pass
    globals()["_keep"] = keep
    return refused


def training():
    """A plain few-step training run, written with pickle protocol 5 (the others: as `_dump_snapshot`
    writes them, this Python's default protocol)."""
    refused = record(max_entries=20000)
    train_steps(small_model(), steps=3)
    return refused


def profiled():
    """torch.profiler's steps (ProfilerStep#N annotations) over four training steps that each keep a
    copy of their output (a leak of 64 KiB a step): the steps Memograph finds in a trace."""
    import torch
    refused = record(max_entries=20000)
    model = small_model()
    opt = torch.optim.AdamW(model.parameters())
    kept = []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(4):
            out = model(torch.randn(32, 512, device="cuda"))
            out.square().mean().backward()
            opt.step()
            opt.zero_grad()
            kept.append(out.detach().clone())
            prof.step()
    globals()["_keep"] = kept
    return refused


SCENARIOS = {  # torch.compile last: its first compile is the slowest, the others must not wait on it
    "pools": (pools, {}),
    "expandable": (expandable, {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}),
    "pending_free": (pending_free, {}),
    "metadata": (metadata, {}),
    "all_stacks": (all_stacks, {}),
    "oom": (oom, {}),
    "training": (training, {}),
    "profiled": (profiled, {}),
    "compiled": (compiled, {}),
}


def child(name, path):
    import torch
    refused = SCENARIOS[name][0]()
    if name == "training":
        import pickle
        with open(path, "wb") as f:
            pickle.dump(torch.cuda.memory._snapshot(), f, protocol=5)
    else:
        torch.cuda.memory._dump_snapshot(path)
    torch.cuda.memory._record_memory_history(enabled=None)
    with open(path, "rb") as f:
        head = f.read(2)
    print(json.dumps({"refused": refused, "bytes": os.path.getsize(path),
                      "protocol": head[1] if head[:1] == b"\x80" else None, "torch": torch.__version__}))


def main(args):
    if args[:1] == ["--child"]:
        child(args[1], args[2])
        return 0
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, names = args[0], args[1:] or list(SCENARIOS)
    os.makedirs(os.path.join(out, "reference"), exist_ok=True)
    sys.path.insert(0, HERE)
    import reference_figures
    report = {}
    for name in names:
        path = os.path.join(out, f"{name}.pickle")
        env = {**os.environ, **SCENARIOS[name][1]}
        run = subprocess.run([sys.executable, __file__, "--child", name, path], env=env,
                             capture_output=True, text=True, timeout=100)
        if run.returncode != 0 or not os.path.exists(path):
            report[name] = {"failed": (run.stderr or run.stdout).strip().splitlines()[-12:]}
        else:
            report[name] = json.loads(run.stdout.strip().splitlines()[-1])
            if report[name]["bytes"] > MAX_BYTES:
                report[name]["too_big"] = True
            try:
                figures = {"file": f"{name}.pickle", "devices": reference_figures.figures(reference_figures.load(path))}
                with open(os.path.join(out, "reference", f"{name}.pickle.json"), "w") as f:
                    json.dump(figures, f, indent=1)
                    f.write("\n")
            except Exception:  # noqa: BLE001 - reported, the other scenarios go on
                report[name]["reference_failed"] = traceback.format_exc().splitlines()[-6:]
        print(name, json.dumps(report[name]), flush=True)
    with open(os.path.join(out, "recorded.json"), "w") as f:
        json.dump(report, f, indent=1)
    return 0 if all("failed" not in r and "reference_failed" not in r for r in report.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
