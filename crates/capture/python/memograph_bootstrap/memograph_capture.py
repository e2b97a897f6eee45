"""Records PyTorch CUDA memory snapshots from an unmodified program (installed by sitecustomize).

When the program imports torch, memory history recording is queued to start at CUDA's lazy
initialisation (before the first allocation), and snapshots are written, pickle protocol 4, to
MEMOGRAPH_CAPTURE_OUT as rank{R}_{reason}_{step}.pickle on: process exit, CUDA OOM, SIGUSR1, every N
optimizer steps, and the step with the highest peak so far. Per-step allocator counters go to
rank{R}_steps.jsonl and a run manifest to rank{R}_run.json.
"""
import atexit
import importlib.abc
import importlib.machinery
import json
import os
import pickle
import signal
import sys
import time

ENV_PREFIX = "MEMOGRAPH_CAPTURE_"


def rank_from_env(env=None):
    """The process's rank: RANK, else LOCAL_RANK, else 0."""
    env = os.environ if env is None else env
    for key in ("RANK", "LOCAL_RANK"):
        value = env.get(key, "").strip()
        if value.lstrip("-").isdigit():
            return int(value)
    return 0


def snapshot_name(rank, reason, step):
    return f"rank{rank}_{reason}_{step}.pickle"


class Config:
    """What memograph-capture passed down in the environment."""

    def __init__(self, env=None):
        env = os.environ if env is None else env
        get = lambda k, d: env.get(ENV_PREFIX + k, d)
        self.out = get("OUT", "memograph_snapshots")
        self.max_entries = int(get("MAX_ENTRIES", "100000"))
        self.stacks = get("STACKS", "python")
        self.context = get("CONTEXT", "all")
        self.every_steps = int(get("EVERY_STEPS", "0"))
        self.on_peak = get("ON_PEAK", "0") == "1"
        self.on_exit = get("ON_EXIT", "1") == "1"
        self.command = json.loads(get("COMMAND", "[]"))
        self.rank = rank_from_env(env)
        if self.stacks not in ("python", "all"):
            raise ValueError(f"stacks must be python or all, not {self.stacks!r}")
        if self.context not in ("none", "alloc", "state", "all"):
            raise ValueError(f"context must be none, alloc, state or all, not {self.context!r}")


def counters(stats):
    """The allocator counters a step record keeps, from torch.cuda.memory_stats()."""
    pick = {
        "allocated_bytes": "allocated_bytes.all.current",
        "allocated_peak_bytes": "allocated_bytes.all.peak",
        "active_bytes": "active_bytes.all.current",
        "active_peak_bytes": "active_bytes.all.peak",
        "reserved_bytes": "reserved_bytes.all.current",
        "reserved_peak_bytes": "reserved_bytes.all.peak",
        "alloc_retries": "num_alloc_retries",
        "ooms": "num_ooms",
    }
    return {name: int(stats.get(key, 0)) for name, key in pick.items()}


def peak_paths(nested, path=()):
    """The key path of every "peak" counter in torch.cuda's nested stats (about 40 of 122 counters)."""
    paths = []
    for key, value in nested.items():
        if isinstance(value, dict):
            paths.extend(peak_paths(value, path + (key,)))
        elif key == "peak":
            paths.append(path + (key,))
    return paths


def at_path(nested, path):
    """The counter at `path` in the nested stats, or None."""
    for key in path:
        if not isinstance(nested, dict):
            return None
        nested = nested.get(key)
    return nested


class FlatView:
    """torch.cuda.memory_stats's flat keys read from the nested dict, without flattening all of it."""

    def __init__(self, nested):
        self.nested = nested

    def get(self, key, default=None):
        value = at_path(self.nested, key.split("."))
        return default if value is None or isinstance(value, dict) else value


class PeakShield:
    """Step records need each step's own peak, so capture resets the allocator's peak counters after
    every optimizer step; the program must not notice. Its torch.cuda peak readings (memory_stats,
    max_memory_allocated, max_memory_reserved, memory_summary: all read memory_stats_as_nested_dict by
    module global) report the highest value since its own last reset_peak_memory_stats, as without capture.
    """

    def __init__(self, torch):
        memory = torch.cuda.memory
        self.real_nested = memory.memory_stats_as_nested_dict
        self.real_reset = memory.reset_peak_memory_stats
        self.device_index = getattr(getattr(torch.cuda, "_utils", None), "_get_device_index", None)
        self.current_device = torch.cuda.current_device
        self.held = {}  # device -> {key path of a peak: the program's peak before capture's resets}
        self.paths, self.shape = None, None  # the peaks' key paths, found again if the stats change shape
        shield = self

        def memory_stats_as_nested_dict(device=None):
            stats = shield.real_nested(device=device)
            held = shield.held.get(shield.index(device))
            if held:
                shield.merge(stats, held)
            return stats

        def reset_peak_memory_stats(device=None):
            shield.held.pop(shield.index(device), None)
            return shield.real_reset(device=device)

        for module in (memory, torch.cuda):
            if hasattr(module, "memory_stats_as_nested_dict"):
                module.memory_stats_as_nested_dict = memory_stats_as_nested_dict
            if hasattr(module, "reset_peak_memory_stats"):
                module.reset_peak_memory_stats = reset_peak_memory_stats

    def index(self, device):
        if device is None:
            return self.current_device()
        try:
            return self.device_index(device, optional=True) if self.device_index else int(device)
        except Exception:  # noqa: BLE001 - an odd device argument: torch itself will say what is wrong
            return device

    @staticmethod
    def merge(stats, held):
        """Raises each peak in `stats` to the program's own, held across capture's resets."""
        for (*parent, key), peak in held.items():
            counters = at_path(stats, parent)
            if isinstance(counters, dict) and isinstance(counters.get(key), int):
                counters[key] = max(counters[key], peak)

    def step_stats(self, device=None):
        """This step's counters (peaks since the last step, as a FlatView), then the peaks reset for the
        next step, the program's own peaks kept. It touches only the peaks (flattening all 122 counters
        cost about 0.1 ms a step on an H200); the whole step hook took 51-99 us a call there since, most
        of it torch's own memory_stats_as_nested_dict."""
        nested = self.real_nested(device=device)
        if self.shape != len(nested):
            self.paths, self.shape = peak_paths(nested), len(nested)
        held = self.held.setdefault(self.index(device), {})
        for path in self.paths:
            value = at_path(nested, path)
            if isinstance(value, int):
                held[path] = max(held.get(path, value), value)
        self.real_reset(device=device)
        return FlatView(nested)


class PeakTracker:
    """Decides when a step's peak is the highest so far (and so worth a snapshot)."""

    def __init__(self):
        self.best = -1

    def is_new_peak(self, peak_bytes):
        if peak_bytes > self.best:
            self.best = peak_bytes
            return True
        return False


def tensor_bytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        if t is None or not hasattr(t, "untyped_storage"):
            continue
        key = t.untyped_storage().data_ptr()
        if key in seen:
            continue
        seen.add(key)
        total += t.untyped_storage().nbytes()
    return total


def optimizer_bytes(optimizer):
    """Bytes of parameters, gradients and optimizer state of one optimizer."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    state = [v for s in optimizer.state.values() for v in s.values() if hasattr(v, "untyped_storage")]
    return {
        "parameter_bytes": tensor_bytes(params),
        "gradient_bytes": tensor_bytes(p.grad for p in params),
        "optimizer_state_bytes": tensor_bytes(state),
    }


class Capture:
    def __init__(self, torch, config):
        self.torch = torch
        self.config = config
        self.step = 0
        self.peaks = PeakTracker()
        self.peak_file = None
        self.manifest = {}
        self.dumped_reasons = set()
        self.steps_file = None
        os.makedirs(config.out, exist_ok=True)

    # ---- files ----
    def path(self, name):
        return os.path.join(self.config.out, name)

    def write_manifest(self):
        tmp = self.path(f"rank{self.config.rank}_run.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.manifest, f, indent=1, default=str)
        os.replace(tmp, self.path(f"rank{self.config.rank}_run.json"))

    def dump(self, reason):
        """Writes a snapshot now; returns its path (None when there was nothing to write)."""
        cuda = self.torch.cuda
        if not cuda.is_initialized():
            return None
        snapshot = cuda.memory._snapshot()
        path = self.path(snapshot_name(self.config.rank, reason, self.step))
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(snapshot, f, protocol=4)
        os.replace(tmp, path)
        print(f"memograph-capture: wrote {path}", file=sys.stderr)
        return path

    # ---- hooks ----
    def start_recording(self):
        self.torch.cuda.memory._record_memory_history(
            enabled="all", context=None if self.config.context == "none" else self.config.context,
            stacks=self.config.stacks,
            max_entries=self.config.max_entries)
        device = self.torch.cuda.current_device()
        props = self.torch.cuda.get_device_properties(device)
        self.manifest.update({
            "command": self.config.command,
            "rank": self.config.rank,
            "pid": os.getpid(),
            "started": time.time(),
            "torch": self.torch.__version__,
            "cuda": self.torch.version.cuda,
            "device": {"index": device, "name": props.name, "total_memory_bytes": props.total_memory},
            "allocator_settings": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
            "recording": {"max_entries": self.config.max_entries, "stacks": self.config.stacks,
                          "context": self.config.context},
        })
        self.write_manifest()

    def on_first_forward(self, *_):
        if "static_memory_bytes" not in self.manifest and self.torch.cuda.is_initialized():
            self.manifest["static_memory_bytes"] = self.torch.cuda.memory_allocated()
            self.write_manifest()
        if self._forward_hook is not None:
            self._forward_hook.remove()
            self._forward_hook = None

    def on_optimizer_step(self, optimizer, *_):
        self.step += 1
        if self.step == 1:
            self.manifest["first_step"] = optimizer_bytes(optimizer)
            self.write_manifest()
        # A program that never used CUDA keeps it so: reading or resetting counters would start it.
        cuda_on = self.torch.cuda.is_initialized()
        stats = counters(self.shield.step_stats() if cuda_on else {})
        record = {"step": self.step, "time": time.time(), "rank": self.config.rank, **stats}
        if self.steps_file is None:
            # Kept open, a line each step, flushed by line: a killed run keeps every step it finished.
            self.steps_file = open(self.path(f"rank{self.config.rank}_steps.jsonl"), "a", buffering=1)
        self.steps_file.write(json.dumps(record) + "\n")
        if self.config.every_steps and self.step % self.config.every_steps == 0:
            self.dump("step")
        if self.config.on_peak and self.peaks.is_new_peak(stats["allocated_peak_bytes"]):
            new = self.dump("peak")
            if self.peak_file and new and self.peak_file != new and os.path.exists(self.peak_file):
                os.remove(self.peak_file)
            self.peak_file = new or self.peak_file

    def on_oom(self, device, alloc, device_allocated, device_free):
        self.manifest.setdefault("ooms", []).append(
            {"step": self.step, "device": device, "requested_bytes": alloc, "device_free_bytes": device_free})
        self.write_manifest()
        self.dump("oom")

    def on_signal(self, signum, frame):
        self.dump("signal")

    def on_exit(self):
        if self.config.on_exit:
            self.dump("exit")

    def install(self):
        torch = self.torch
        self.shield = PeakShield(torch)
        torch.cuda._lazy_call(self.start_recording)
        # A function of torch.optim.optimizer, whose name torch.optim deletes from itself: imported by path.
        importlib.import_module("torch.optim.optimizer").register_optimizer_step_post_hook(self.on_optimizer_step)
        self._forward_hook = torch.nn.modules.module.register_module_forward_pre_hook(self.on_first_forward)
        torch._C._cuda_attach_out_of_memory_observer(self.on_oom)
        if hasattr(signal, "SIGUSR1"):
            signal.signal(signal.SIGUSR1, self.on_signal)
        atexit.register(self.on_exit)


class _TorchImportHook(importlib.abc.MetaPathFinder):
    """Calls `then(torch)` right after the program imports torch (never imports it itself)."""

    def __init__(self, then):
        self.then = then
        self.done = False

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch" or self.done:
            return None
        self.done = True
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader, then = spec.loader, self.then

        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                try:
                    then(module)
                except Exception as e:  # never break the user's program
                    print(f"memograph-capture: not recording: {e}", file=sys.stderr)

        spec.loader = Loader()
        return spec


def install_from_env(env=None):
    """Reads the configuration and waits for torch."""
    config = Config(env)

    def then(torch):
        if not torch.cuda.is_available():
            print("memograph-capture: torch sees no CUDA device; not recording", file=sys.stderr)
            return
        global CAPTURE
        CAPTURE = Capture(torch, config)
        CAPTURE.install()

    if "torch" in sys.modules:
        then(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _TorchImportHook(then))


CAPTURE = None
