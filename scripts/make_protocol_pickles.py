#!/usr/bin/env python3
"""Writes the same small synthetic snapshot with every pickle protocol (0-5) CPython has, into
crates/snapshot/tests/data/synthetic.protoN.pickle. The files are committed; rerun this only to change them.

The snapshot exercises what real snapshots may hold beyond the shared fixtures: FX frame fields, unknown
keys and actions, a line of 2**64-1, huge ints (LONG4), floats, None, unicode, shared frame lists,
user_defined and legacy free actions, segment_free/segment_unmap, and more than 1000 entries (batched
APPENDS)."""
import pickle, pathlib

frame_a = {"filename": "train.py", "line": 42, "name": "forward"}
frame_b = {"filename": "??", "line": 2**64 - 1, "name": "at::native::empty_cuda"}
frame_fx = {"filename": "model.py", "line": 7, "name": "attn", "fx_node_op": "call_function",
            "fx_node_name": "matmul", "fx_node_target": "aten.mm", "fx_original_trace": "x @ w"}
stack = [frame_b, frame_a, frame_a]
trace = []
base = 0x7f0000000000
trace.append({"action": "segment_alloc", "addr": base, "size": 1 << 21, "stream": 0, "time_us": 1, "frames": stack})
for i in range(1200):
    addr = base + (i % 4) * 512
    trace.append({"action": "alloc", "addr": addr, "size": 512, "stream": 0, "time_us": 10 + i, "frames": stack,
                  "unknown_key": [1, 2, {"x": None}]})
    trace.append({"action": "free_requested", "addr": addr, "size": 512, "stream": 0, "time_us": 10 + i, "frames": stack})
    trace.append({"action": "free_completed", "addr": addr, "size": 512, "stream": 0, "time_us": 10 + i, "frames": [frame_fx]})
trace.append({"action": "alloc", "addr": base + 4096, "size": 1024, "stream": 0, "time_us": 5000, "frames": stack})
trace.append({"action": "free", "addr": base + 4096, "size": 1024, "stream": 0, "time_us": 5001, "frames": []})
trace.append({"action": "user_defined", "addr": 0, "size": 0, "stream": 0, "time_us": 5002, "frames": []})
trace.append({"action": "brand_new_action", "addr": 0, "size": 0, "stream": 0, "time_us": 5003, "frames": []})
trace.append({"action": "alloc", "addr": base + 8192, "size": 2048, "stream": 0, "time_us": 5004, "frames": stack})
trace.append({"action": "segment_map", "addr": base + (1 << 21), "size": 1 << 21, "stream": 0, "time_us": 5005, "frames": []})
trace.append({"action": "segment_unmap", "addr": base + (1 << 21), "size": 1 << 21, "stream": 0, "time_us": 5006, "frames": []})
segments = [{
    "device": 0, "address": base, "total_size": 1 << 21, "allocated_size": 2048, "active_size": 2048,
    "requested_size": 2000, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
    "is_expandable": False, "frames": stack, "extra": 3.5,
    "blocks": [
        {"address": base, "size": 8192, "requested_size": 8192, "state": "inactive", "frames": []},
        {"address": base + 8192, "size": 2048, "requested_size": 2000, "state": "active_allocated", "frames": stack},
        {"address": base + 10240, "size": (1 << 21) - 10240, "requested_size": 0, "state": "inactive", "frames": []},
    ],
}]
snapshot = {
    "segments": segments,
    "device_traces": [trace, []],
    "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False,é", "max_split_size": -1,
                           "garbage_collection_threshold": 0.5, "big": 2**200, "flag": None, "t": (1, 2, 3, 4)},
    "external_annotations": [{"stage": "START", "name": "step", "device": 0, "time_us": 100},
                             {"stage": "END", "name": "step", "device": 0, "time_us": 4000}],
}
out = pathlib.Path(__file__).resolve().parent.parent / "crates/snapshot/tests/data"
out.mkdir(parents=True, exist_ok=True)
for proto in range(0, pickle.HIGHEST_PROTOCOL + 1):
    (out / f"synthetic.proto{proto}.pickle").write_bytes(pickle.dumps(snapshot, protocol=proto))
print("wrote", out)
