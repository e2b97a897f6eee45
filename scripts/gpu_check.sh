#!/usr/bin/env bash
# memograph-capture on a real GPU (issue #15), as one prepared run: a session lent a CUDA machine has
# 15 minutes of it, so everything is built here and the device runs this script once.
#
#   scripts/gpu_check.sh prepare   # here: release binaries and the capture tests' binary into .gpu/
#   scripts/gpu_check.sh run       # there, from the repo root, with $OUT set (by the device tool):
#       carry: [".gpu", "target/release/memograph", "target/release/memograph-capture"]
#       command: bash scripts/gpu_check.sh run        timeout_s: 580 (6–9 minutes expected)
#
# `run` never stops at a failed check: each ends in one PASS/FAIL line in $OUT/results.txt, the whole
# log is $OUT/log.txt, and the demo's peak table, `memograph compare` of the demo files, the capture
# overhead, the large snapshot's figures and timings, and the fresh fixtures (fixtures.tar.gz: the
# pickles, reference/*.json and recorded.json, from scripts/record_fixtures.py) are files of their own.
# Kept with `tar xzf fixtures.tar.gz -C tests`, they are tested as tests/fixtures: their figures by the
# engine's fixture tests, their peaks on the page by the end-to-end tests.
# Where torch or a GPU is missing, every check fails with its one-line reason (try it here: OUT
# defaults to .gpu/out).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD

if [ "${1:-}" = prepare ]; then
  set -e
  export PATH="$HOME/.cargo/bin:$PATH"
  cargo build --release -p memograph -p memograph-capture
  # The tests' binary, built with this checkout's paths compiled in (`run` links them to the copy).
  exe=$(cargo test --release -p memograph-capture --test launcher --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "launcher":
        print(m["executable"])')
  mkdir -p .gpu
  cp "$exe" .gpu/capture_tests
  echo "$ROOT" > .gpu/prefix
  du -ch .gpu/capture_tests target/release/memograph target/release/memograph-capture | tail -1
  echo 'ready: run `bash scripts/gpu_check.sh run` on the device, carrying .gpu and the two binaries'
  exit 0
fi
[ "${1:-}" = run ] || { echo "usage: $0 prepare|run" >&2; exit 2; }

OUT=${OUT:-$ROOT/.gpu/out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/memograph-gpu.XXXX)
MG=$ROOT/target/release/memograph
CAP=$ROOT/target/release/memograph-capture
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
: > "$OUT/results.txt"
result() { echo "$1 $2${3:+: $3}" | tee -a "$OUT/results.txt"; }
# The device call's limit is near 10 minutes: every check fits in what is left of BUDGET seconds (from
# the start), and one that cannot start any more is reported as SKIP, so results.txt is always whole.
DEADLINE=$((SECONDS + ${BUDGET:-550}))
# check NAME SECONDS COMMAND...: runs it with a limit; PASS when it exits 0.
check() {
  local name=$1 limit=$2 left=$((DEADLINE - SECONDS)); shift 2
  echo "=== $name"
  if [ "$left" -lt 15 ]; then result SKIP "$name" "no time left"; return; fi
  # SKIP='regex' leaves out the checks whose names match (a second run after some passed).
  if [ -n "${SKIP:-}" ] && [[ $name =~ $SKIP ]]; then result SKIP "$name" "left out (SKIP)"; return; fi
  [ "$limit" -gt "$left" ] && limit=$left
  local t0=$SECONDS
  if timeout "$limit" bash -c '"$@"' check "$@"; then result PASS "$name" "$((SECONDS - t0)) s"
  else result FAIL "$name" "exit $? after $((SECONDS - t0)) s"; fi
}

echo "=== machine"
nvidia-smi -L || true
$PY -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")' || true
command -v torchrun || true

# The tests' binary finds the capture binary and its Python files by this checkout's paths.
export W MG CAP PY OUT ROOT
prefix=$(cat .gpu/prefix 2>/dev/null || echo "$ROOT")
if [ ! -e "$prefix/crates/capture" ]; then mkdir -p "$(dirname "$prefix")" && ln -sfn "$ROOT" "$prefix"; fi

# First what stays: the fresh fixtures, one small snapshot per feature, their reference figures
# (pickle.load), and whether `memograph summary` agrees with them; the files come back packed, to be
# kept under tests/fixtures/.
fixtures() {
  timeout 170 $PY "$ROOT/scripts/record_fixtures.py" "$W/fixtures"
  local recorded=$?
  (cd "$W" && tar czf "$OUT/fixtures.tar.gz" fixtures)
  ls "$W"/fixtures/*.pickle > /dev/null || return 1
  "$MG" summary --json "$W"/fixtures/*.pickle > "$W/fixtures_summary.json"
  # As text too: the steps the profiler marks (training, profiled, compiled) are said there.
  "$MG" summary "$W"/fixtures/*.pickle > "$OUT/fixtures_summary.txt" 2>&1
  $PY - "$W/fixtures_summary.json" "$W/fixtures/reference" <<'PY'
import json, os, sys
bad = 0
for line in open(sys.argv[1]):
    got = json.loads(line)
    name = os.path.basename(got["file"])
    ref = os.path.join(sys.argv[2], name + ".json")
    want = json.load(open(ref))["devices"] if os.path.exists(ref) else None
    same = want == got["devices"]
    bad += not same
    print("agrees" if same else "DIFFERS", name)
    if not same:
        print("  memograph", json.dumps(got["devices"], sort_keys=True))
        print("  reference", json.dumps(want, sort_keys=True))
sys.exit(1 if bad else 0)
PY
  [ $? = 0 ] && [ $recorded = 0 ]
}
export -f fixtures
check "fresh fixtures recorded; memograph summary equals their pickle.load reference" 200 fixtures

demo() {
  "$CAP" --out "$W/demo" demo --context 128,256,512 --precision fp32,bf16 --mode forward,train | tee "$OUT/demo_table.txt"
  ls "$W"/demo/*.pickle > /dev/null &&
    "$MG" compare --gpu-memory 80GiB "$W"/demo/*.pickle > "$OUT/compare.txt" &&
    "$MG" summary --json "$W"/demo/*.pickle > "$W/demo_summary.json" &&
    $PY - "$W/demo_summary.json" "$OUT/demo_table.txt" <<'EOF'
import json, re, sys
peak = {}
for line in open(sys.argv[1]):  # one JSON object per file
    r = json.loads(line)
    m = re.search(r"demo_tiny_(\w+?)_(fp32|bf16)_ctx(\d+)", r["file"])
    if m:
        peak[(m[1], m[2], int(m[3]))] = max(d["timeline_peak_bytes"] for d in r["devices"].values())
print({"_".join(map(str, k)): v for k, v in sorted(peak.items())})
ok = all(peak[(mode, "fp32", 128)] < peak[(mode, "fp32", 256)] < peak[(mode, "fp32", 512)] for mode in ("forward", "train"))
ok = ok and peak[("train", "bf16", 512)] < peak[("train", "fp32", 512)]
# The table the demo printed: mode, precision, context, live peak (requested bytes, what the trace
# records), allocated peak (torch.cuda.max_memory_allocated), file. The live peak is memograph's, to the
# table's 0.1 MiB; the allocated peak grows with the context too under capture (its per-step peak resets
# must not show in the program's own readings: PeakShield) and is never below the live peak.
table = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 6 and f[0] in ("forward", "train") and f[2].isdigit():
        table[(f[0], f[1], int(f[2]))] = (float(f[3]), float(f[4]))
print("table", table)
for k, (live, allocated) in sorted(table.items()):
    same = abs(peak[k] / 2**20 - live) <= 0.05 + 1e-9
    print("agrees" if same else "DIFFERS", k, "memograph", round(peak[k] / 2**20, 3), "table", live, allocated)
    ok = ok and same and allocated >= live
ok = ok and len(table) == 12
ok = ok and all(table[("train", p, 128)][1] < table[("train", p, 256)][1] < table[("train", p, 512)][1] for p in ("fp32", "bf16"))
sys.exit(0 if ok else 1)
EOF
}
export -f demo
check "demo: 12 snapshots, peaks grow with context, bf16 training below fp32, its live peaks are memograph's, compare reads them" 100 demo

oom() {
  "$CAP" --out "$W/oom" -- $PY -c '
import sys, torch
x = torch.empty(1 << 20, device="cuda")
try:
    torch.empty(1 << 50, device="cuda")
except torch.OutOfMemoryError:
    sys.exit(7)'
  local code=$?
  echo "exit status $code (7 expected)"
  [ "$code" = 7 ] && ls "$W"/oom/rank0_oom_*.pickle && "$MG" summary "$W"/oom/rank0_oom_*.pickle &&
    "$MG" trace "$W"/oom/rank0_oom_*.pickle | grep -w oom
}
export -f oom
check "induced OOM: rank0_oom_*.pickle with the oom event, the child's exit status passed on" 90 oom

# Six optimizer steps; step 3 holds a large temporary: --on-peak keeps the snapshot of step 3 alone.
cat > "$W/steps.py" <<'EOF'
import os, time, torch
m = torch.nn.Linear(1024, 1024).cuda()
o = torch.optim.AdamW(m.parameters())
rank = int(os.environ.get("RANK", "0"))
for step in range(1, int(os.environ.get("STEPS", "6")) + 1):
    extra = torch.empty(256 << 20, dtype=torch.uint8, device="cuda") if step == 3 else None
    m(torch.randn(64, 1024, device="cuda")).sum().backward()
    o.step()
    o.zero_grad()
    del extra
    if os.environ.get("STOP_FILE"):  # for SIGUSR1: keep going until told to stop
        open(os.environ["READY_FILE"], "w").write(str(os.getpid()))
        while not os.path.exists(os.environ["STOP_FILE"]):
            time.sleep(0.05)
        break
EOF
on_peak() {
  "$CAP" --out "$W/peak" --on-peak -- $PY "$W/steps.py" && ls "$W/peak" &&
    [ "$(ls "$W"/peak/rank0_peak_*.pickle | wc -l)" = 1 ] && [ -e "$W/peak/rank0_peak_3.pickle" ] &&
    "$MG" summary "$W/peak/rank0_peak_3.pickle"
}
export -f on_peak
check "--on-peak: one snapshot, of step 3 (the highest peak)" 90 on_peak

usr1() {
  rm -f "$W/ready" "$W/stop"
  READY_FILE=$W/ready STOP_FILE=$W/stop STEPS=1 "$CAP" --out "$W/usr1" -- $PY "$W/steps.py" &
  local launcher=$! i
  # Waits while the job runs (a launcher that stopped, say without torch, ends the wait).
  for i in $(seq 600); do [ -s "$W/ready" ] || ! kill -0 "$launcher" 2> /dev/null && break; sleep 0.1; done
  [ -s "$W/ready" ] && kill -USR1 "$(cat "$W/ready")"
  for i in $(seq 300); do ls "$W"/usr1/rank0_signal_*.pickle > /dev/null 2>&1 || ! kill -0 "$launcher" 2> /dev/null && break; sleep 0.1; done
  sleep 1; touch "$W/stop"; wait "$launcher"
  ls "$W"/usr1/rank0_signal_*.pickle && "$MG" summary "$W"/usr1/rank0_signal_*.pickle
}
export -f usr1
check "SIGUSR1 to the training process writes rank0_signal_*.pickle" 120 usr1

ranks() {
  STEPS=4 "$CAP" --out "$W/ranks" --every-steps 2 -- torchrun --standalone --nproc_per_node 2 "$W/steps.py" &&
    ls "$W/ranks" && for r in 0 1; do
      [ -e "$W/ranks/rank${r}_step_2.pickle" ] && [ -e "$W/ranks/rank${r}_step_4.pickle" ] &&
        [ "$(wc -l < "$W/ranks/rank${r}_steps.jsonl")" = 4 ] || return 1
    done && "$MG" compare "$W"/ranks/rank*_step_4.pickle
}
export -f ranks
check "torchrun, 2 processes on one GPU: rank0_ and rank1_ snapshots and step records" 120 ranks

# Steps per second of one small training loop (2.5-3 ms, 73 allocations a step): plain, with PyTorch's
# history recording alone (capture's defaults: context all, Python stacks), under capture, and under
# capture with --context none (history without stacks), three rounds (one process's speed varies by
# 10-20 % on its own); then what capture's optimizer-step hook and a shielded max_memory_allocated()
# cost, timed inside a captured process.
cat > "$W/speed.py" <<'EOF'
import sys, time, torch
mode = sys.argv[1]
torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.GELU()) for _ in range(8)]).cuda()
o = torch.optim.AdamW(m.parameters())
if mode == "recorded":
    torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python", max_entries=100000)
def step():
    m(torch.randn(256, 2048, device="cuda")).square().mean().backward()
    o.step()
    o.zero_grad()
for _ in range(20):
    step()
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(200):
    step()
torch.cuda.synchronize()
print(f"{mode}: {200 / (time.perf_counter() - t):.1f} steps/s")
if mode.startswith("captured"):
    capture = sys.modules["memograph_capture"].CAPTURE
    for name, f in (("capture's step hook", lambda: capture.on_optimizer_step(o)),
                    ("max_memory_allocated() under capture", torch.cuda.max_memory_allocated)):
        t = time.perf_counter()
        for _ in range(1000):
            f()
        print(f"{name}: {(time.perf_counter() - t) * 1e3:.0f} us a call")
EOF
speed() {
  set -o pipefail
  local r
  for r in $(seq "${SPEED_ROUNDS:-3}"); do
    $PY "$W/speed.py" plain && $PY "$W/speed.py" recorded &&
      "$CAP" --out "$W/speed" --no-exit-snapshot -- $PY "$W/speed.py" captured &&
      "$CAP" --out "$W/speed" --no-exit-snapshot --context none -- $PY "$W/speed.py" captured-no-stacks || return 1
  done 2>&1 | grep --line-buffered -v '^memograph-capture:' | tee "$OUT/overhead.txt" && [ "$(grep -c steps/s "$OUT/overhead.txt")" = $((4 * ${SPEED_ROUNDS:-3})) ]
}
export -f speed


# One large snapshot (max_entries 1 000 000) of a real model's training steps: memograph summary and the
# reference script on it, timed; only the figures come back.
cat > "$W/large.py" <<'PY'
import sys, time, torch
import torch.nn.functional as F
sys.path.insert(0, sys.argv[1])
from demo import LM, MODELS
cfg = dict(MODELS["small"]); batch = cfg.pop("batch")
model = LM(context=256, **cfg).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
idx = torch.randint(0, cfg["vocab"], (batch, 256), device="cuda")
t = time.time()
for step in range(400):
    F.cross_entropy(model(idx).view(-1, cfg["vocab"]), idx.view(-1)).backward()
    opt.step(); opt.zero_grad(set_to_none=True)
    if time.time() - t > float(sys.argv[2]):
        break
print("steps", step + 1)
PY
large() {
  set -o pipefail
  "$CAP" --out "$W/large" --max-entries 1000000 -- $PY "$W/large.py" "$ROOT/crates/capture/python" "${LARGE_SECONDS:-40}" &&
    ls -la "$W"/large/ && f=$(ls "$W"/large/rank0_exit_*.pickle | head -1) &&
    { /usr/bin/time -f "memograph summary: %e s, %M KB" "$MG" summary --json "$f" &&
      /usr/bin/time -f "reference (pickle.load): %e s, %M KB" $PY "$ROOT/scripts/reference_figures.py" "$f"; } 2>&1 |
    tee "$OUT/large.txt"
}
export -f large
check "large snapshot (1 M entries): memograph summary and the reference, timed" 170 large
check "capture overhead (steps/s: plain, PyTorch's recording alone, captured, captured --context none; SPEED_ROUNDS rounds, 3 unless set)" $((60 * ${SPEED_ROUNDS:-3} + 20)) speed

# Last, the launcher's own opt-in tests (they repeat the demo, OOM and every-steps checks above).
check "capture tests (MEMOGRAPH_CUDA_TESTS=1)" 150 env MEMOGRAPH_CUDA_TESTS=1 .gpu/capture_tests --test-threads 1

echo "=== results"
cat "$OUT/results.txt"
ls -la "$OUT"
sleep 1 # the log's tee writes its last lines
