"""The test double's torch.cuda: a package whose memory functions live in torch.cuda.memory, as in torch."""
import os

calls = []
lazy = []


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


def device_count():
    return int(os.environ.get("FAKE_TORCH_DEVICES", "1"))


def get_device_name(device=0):
    return "Fake GPU"


from . import memory  # noqa: E402
from .memory import (max_memory_allocated, memory_allocated, memory_stats,  # noqa: E402,F401
                     memory_stats_as_nested_dict, reset_peak_memory_stats)
