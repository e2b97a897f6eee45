"""The bootstrap's Python parts, against a test double of torch (run by `cargo test -p memograph-capture`)."""
import json
import os
import pickle
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BOOTSTRAP = os.path.join(os.path.dirname(HERE), "memograph_bootstrap")
FAKE_TORCH = os.path.join(HERE, "fake_torch")
sys.path.insert(0, BOOTSTRAP)

import memograph_capture as mc  # noqa: E402


class Naming(unittest.TestCase):
    def test_rank_comes_from_rank_then_local_rank_then_zero(self):
        self.assertEqual(mc.rank_from_env({"RANK": "3", "LOCAL_RANK": "1"}), 3)
        self.assertEqual(mc.rank_from_env({"LOCAL_RANK": "1"}), 1)
        self.assertEqual(mc.rank_from_env({}), 0)
        self.assertEqual(mc.rank_from_env({"RANK": "x"}), 0)

    def test_snapshot_names_say_rank_reason_and_step(self):
        self.assertEqual(mc.snapshot_name(2, "oom", 17), "rank2_oom_17.pickle")


class Configuration(unittest.TestCase):
    def test_defaults(self):
        c = mc.Config({})
        self.assertEqual((c.max_entries, c.stacks, c.context, c.every_steps, c.on_peak), (100000, "python", "all", 0, False))

    def test_values_from_the_environment(self):
        c = mc.Config({"MEMOGRAPH_CAPTURE_MAX_ENTRIES": "5", "MEMOGRAPH_CAPTURE_STACKS": "all",
                       "MEMOGRAPH_CAPTURE_EVERY_STEPS": "2", "MEMOGRAPH_CAPTURE_ON_PEAK": "1",
                       "MEMOGRAPH_CAPTURE_COMMAND": '["python", "train.py"]', "RANK": "1"})
        self.assertEqual((c.max_entries, c.stacks, c.every_steps, c.on_peak, c.command, c.rank),
                         (5, "all", 2, True, ["python", "train.py"], 1))

    def test_bad_values_are_refused(self):
        with self.assertRaises(ValueError):
            mc.Config({"MEMOGRAPH_CAPTURE_STACKS": "cpp"})


class Counters(unittest.TestCase):
    def test_step_records_keep_the_allocator_counters(self):
        c = mc.counters({"allocated_bytes.all.current": 1, "reserved_bytes.all.peak": 9, "num_ooms": 2})
        self.assertEqual(c["allocated_bytes"], 1)
        self.assertEqual(c["reserved_peak_bytes"], 9)
        self.assertEqual(c["ooms"], 2)
        self.assertEqual(c["alloc_retries"], 0)

    def test_a_peak_is_new_only_when_higher(self):
        p = mc.PeakTracker()
        self.assertEqual([p.is_new_peak(v) for v in (5, 3, 5, 8)], [True, False, False, True])

    def test_the_shield_holds_every_pools_peak_and_reads_flat_keys_from_the_nested_stats(self):
        # torch's nested stats: {stat: {pool: {current, peak, allocated, freed}}} and plain counters.
        import types
        live = {"allocated_bytes": {p: {"current": 10, "peak": 10, "allocated": 0, "freed": 0}
                                    for p in ("all", "small_pool", "large_pool")},
                "oversize_allocations": {"current": 0, "peak": 0, "allocated": 0, "freed": 0},
                "num_ooms": 2}

        def nested(device=None):
            return json.loads(json.dumps(live))

        def reset(device=None):
            for counters in [*live["allocated_bytes"].values(), live["oversize_allocations"]]:
                counters["peak"] = counters["current"]

        memory = types.SimpleNamespace(memory_stats_as_nested_dict=nested, reset_peak_memory_stats=reset)
        torch = types.SimpleNamespace(memory=memory, current_device=lambda: 0)
        torch.cuda = types.SimpleNamespace(memory=memory, current_device=lambda: 0)
        shield = mc.PeakShield(torch)
        live["allocated_bytes"]["large_pool"]["peak"] = 700
        live["oversize_allocations"]["peak"] = 3
        flat = shield.step_stats()
        self.assertEqual(mc.counters(flat)["ooms"], 2)
        self.assertEqual(flat.get("allocated_bytes.large_pool.peak"), 700)
        self.assertIsNone(flat.get("allocated_bytes.large_pool"))  # a group, not a counter
        self.assertEqual(live["allocated_bytes"]["large_pool"]["peak"], 10)  # reset for the next step
        seen = memory.memory_stats_as_nested_dict()
        self.assertEqual(seen["allocated_bytes"]["large_pool"]["peak"], 700)
        self.assertEqual(seen["oversize_allocations"]["peak"], 3)
        self.assertEqual(seen["allocated_bytes"]["all"]["peak"], 10)
        memory.reset_peak_memory_stats()  # the program's own reset
        self.assertEqual(memory.memory_stats_as_nested_dict()["allocated_bytes"]["large_pool"]["peak"], 10)


class WithFakeTorch(unittest.TestCase):
    """Capture wired to the torch test double: hooks installed, files written."""

    def setUp(self):
        sys.path.insert(0, FAKE_TORCH)
        for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
            del sys.modules[name]
        import torch

        self.torch = torch
        self.out = tempfile.mkdtemp()
        env = {"MEMOGRAPH_CAPTURE_OUT": self.out, "MEMOGRAPH_CAPTURE_EVERY_STEPS": "2",
               "MEMOGRAPH_CAPTURE_ON_PEAK": "1", "MEMOGRAPH_CAPTURE_ON_EXIT": "0"}
        self.capture = mc.Capture(torch, mc.Config(env))

    def tearDown(self):
        sys.path.remove(FAKE_TORCH)

    def test_recording_starts_at_cuda_initialisation_with_the_options(self):
        self.capture.install()
        self.assertEqual(self.torch.cuda.lazy[-1], self.capture.start_recording)
        # torch's global optimizer hooks are a function of torch.optim.optimizer (not Optimizer's method).
        self.assertIn(self.capture.on_optimizer_step, sys.modules["torch.optim.optimizer"]._global_optimizer_post_hooks)
        self.torch.cuda.lazy[-1]()
        _, kwargs = [c for c in self.torch.cuda.calls if c[0] == "record"][-1]
        self.assertEqual(kwargs, {"enabled": "all", "context": "all", "stacks": "python", "max_entries": 100000})
        manifest = json.loads(read(os.path.join(self.out, "rank0_run.json")))
        self.assertEqual(manifest["device"]["name"], "Fake GPU")
        self.assertEqual(manifest["torch"], "0.0+fake")

    def test_context_none_records_the_history_without_stacks(self):
        # On an H200, history without stacks ran as fast as no recording; Python stacks cost up to 21 %.
        capture = mc.Capture(self.torch, mc.Config({"MEMOGRAPH_CAPTURE_OUT": self.out, "MEMOGRAPH_CAPTURE_CONTEXT": "none"}))
        capture.start_recording()
        _, kwargs = [c for c in self.torch.cuda.calls if c[0] == "record"][-1]
        self.assertEqual(kwargs["context"], None)
        self.assertEqual(kwargs["enabled"], "all")

    def test_six_steps_every_two_write_three_step_snapshots_and_six_records(self):
        self.capture.install()
        opt = type("Opt", (), {"param_groups": [{"params": []}], "state": {}})()
        for _ in range(6):
            self.capture.on_optimizer_step(opt)
        names = sorted(os.listdir(self.out))
        self.assertEqual([n for n in names if "_step_" in n], ["rank0_step_2.pickle", "rank0_step_4.pickle", "rank0_step_6.pickle"])
        lines = read(os.path.join(self.out, "rank0_steps.jsonl")).splitlines()
        self.assertEqual([json.loads(l)["step"] for l in lines], [1, 2, 3, 4, 5, 6])
        with open(os.path.join(self.out, "rank0_step_2.pickle"), "rb") as f:
            self.assertEqual(f.read(2), b"\x80\x04")
        # The peak never rose after step 1: one peak snapshot, from step 1.
        self.assertEqual([n for n in names if "_peak_" in n], ["rank0_peak_1.pickle"])

    def test_step_records_have_each_steps_peak_and_the_programs_peaks_stay_its_own(self):
        # Seen on an H200: capture's per-step reset made the demo's max_memory_allocated() report the
        # last step's peak (178 MiB at every context length instead of 231, 450, 871 MiB).
        self.capture.install()
        cuda, memory = self.torch.cuda, self.torch.cuda.memory
        opt = type("Opt", (), {"param_groups": [{"params": []}], "state": {}})()
        cuda.reset_peak_memory_stats()  # the program's own reset: its peak is now 10
        memory.allocate(990)  # step 1 peaks at 1000
        memory.allocate(-990)
        self.capture.on_optimizer_step(opt)
        memory.allocate(40)  # step 2 peaks at 50
        memory.allocate(-40)
        self.capture.on_optimizer_step(opt)
        records = [json.loads(l) for l in read(os.path.join(self.out, "rank0_steps.jsonl")).splitlines()]
        self.assertEqual([r["allocated_peak_bytes"] for r in records], [1000, 50])
        self.assertEqual(cuda.max_memory_allocated(), 1000)
        self.assertEqual(cuda.memory_stats()["allocated_bytes.all.peak"], 1000)
        self.assertEqual(memory.max_memory_allocated(0), 1000)
        cuda.reset_peak_memory_stats()  # the program's reset still resets what it sees
        self.assertEqual(cuda.max_memory_allocated(), 10)
        memory.allocate(20)
        self.assertEqual(cuda.max_memory_allocated(), 30)

    def test_a_step_before_cuda_starts_leaves_cuda_alone(self):
        self.capture.install()
        self.torch.cuda.is_initialized = lambda: False
        opt = type("Opt", (), {"param_groups": [{"params": []}], "state": {}})()
        self.capture.on_optimizer_step(opt)
        self.assertNotIn("reset_peak", self.torch.cuda.calls)
        record = json.loads(read(os.path.join(self.out, "rank0_steps.jsonl")))
        self.assertEqual(record["allocated_peak_bytes"], 0)

    def test_an_oom_writes_an_oom_snapshot_and_notes_it(self):
        self.capture.on_oom(0, 1 << 30, 2 << 30, 1 << 20)
        self.assertIn("rank0_oom_0.pickle", os.listdir(self.out))
        manifest = json.loads(read(os.path.join(self.out, "rank0_run.json")))
        self.assertEqual(manifest["ooms"][0]["requested_bytes"], 1 << 30)


def read(path):
    with open(path) as f:
        return f.read()


def run_python(code, pythonpath, env=None):
    full = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath), **(env or {}))
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=60)


class Bootstrap(unittest.TestCase):
    def test_the_users_own_sitecustomize_still_runs(self):
        user = tempfile.mkdtemp()
        with open(os.path.join(user, "sitecustomize.py"), "w") as f:
            f.write("import builtins\nbuiltins.USER_SITE_RAN = True\n")
        r = run_python("import builtins, sys; print(getattr(builtins, 'USER_SITE_RAN', False), 'memograph_capture' in sys.modules)",
                       [BOOTSTRAP, user])
        self.assertEqual(r.stdout.split(), ["True", "True"], r.stderr)

    def test_torch_is_not_imported_until_the_program_imports_it(self):
        r = run_python("import sys; print('torch' in sys.modules)", [BOOTSTRAP, FAKE_TORCH])
        self.assertEqual(r.stdout.strip(), "False", r.stderr)

    def test_importing_torch_installs_the_capture(self):
        out = tempfile.mkdtemp()
        r = run_python("import torch, memograph_capture as m; print(m.CAPTURE is not None, len(torch.cuda.lazy))",
                       [BOOTSTRAP, FAKE_TORCH], {"MEMOGRAPH_CAPTURE_OUT": out, "MEMOGRAPH_CAPTURE_ON_EXIT": "0"})
        self.assertEqual(r.stdout.split(), ["True", "1"], r.stderr)

    def test_torch_without_cuda_records_nothing_and_says_so(self):
        r = run_python("import torch, memograph_capture as m; print(m.CAPTURE)", [BOOTSTRAP, FAKE_TORCH],
                       {"FAKE_TORCH_CUDA": "0"})
        self.assertEqual(r.stdout.strip(), "None")
        self.assertIn("torch sees no CUDA device", r.stderr)


if __name__ == "__main__":
    unittest.main()
