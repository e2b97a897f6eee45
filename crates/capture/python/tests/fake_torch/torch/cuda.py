import os

calls = []
lazy = []
stats = {"allocated_bytes.all.current": 10, "allocated_bytes.all.peak": 100, "reserved_bytes.all.current": 200,
         "reserved_bytes.all.peak": 300, "num_alloc_retries": 1, "num_ooms": 0}


def is_available():
    return os.environ.get("FAKE_TORCH_CUDA", "1") == "1"


def is_initialized():
    return True


def _lazy_call(fn):
    lazy.append(fn)


def current_device():
    return 0


class _Props:
    name = "Fake GPU"
    total_memory = 80 << 30


def get_device_properties(device):
    return _Props()


def memory_stats():
    return dict(stats)


def memory_allocated():
    return 4096


def reset_peak_memory_stats():
    calls.append("reset_peak")


class memory:
    @staticmethod
    def _record_memory_history(**kwargs):
        calls.append(("record", kwargs))

    @staticmethod
    def _snapshot():
        return {"segments": [], "device_traces": [[]]}


def device_count():
    return int(os.environ.get("FAKE_TORCH_DEVICES", "1"))


def get_device_name(device=0):
    return "Fake GPU"
