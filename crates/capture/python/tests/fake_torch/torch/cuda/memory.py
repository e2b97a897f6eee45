"""The test double's torch.cuda.memory: one simulated allocator whose counters have torch's shape
(memory_stats flattens memory_stats_as_nested_dict; the peak functions call it by module global, as
torch's do, so a replaced memory_stats_as_nested_dict is what they see)."""
import torch.cuda as _cuda

allocated = {"current": 10, "peak": 100}
reserved = {"current": 200, "peak": 300}


def allocate(nbytes):
    """The program allocates (or, negative, frees) `nbytes`."""
    allocated["current"] += nbytes
    allocated["peak"] = max(allocated["peak"], allocated["current"])


def memory_stats_as_nested_dict(device=None):
    return {"allocated_bytes": {"all": dict(allocated)}, "reserved_bytes": {"all": dict(reserved)},
            "num_alloc_retries": 1, "num_ooms": 0}


def memory_stats(device=None):
    flat = {}

    def add(prefix, obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                add(prefix + "." + k if prefix else k, v)
        else:
            flat[prefix] = obj

    add("", memory_stats_as_nested_dict(device=device))
    return flat


def max_memory_allocated(device=None):
    return memory_stats(device=device).get("allocated_bytes.all.peak", 0)


def memory_allocated(device=None):
    return 4096


def reset_peak_memory_stats(device=None):
    _cuda.calls.append("reset_peak")
    allocated["peak"] = allocated["current"]
    reserved["peak"] = reserved["current"]


def _record_memory_history(**kwargs):
    _cuda.calls.append(("record", kwargs))


def _snapshot():
    return {"segments": [], "device_traces": [[]]}
