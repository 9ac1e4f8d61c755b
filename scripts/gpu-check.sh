#!/usr/bin/env bash
# The one command to run on a machine with an NVIDIA GPU (written for an H200: CUDA 13,
# Python 3.12, cupy-cuda13x 14.2, triton 3.6, torch, numba, numpy, pytest, pytest-xdist;
# no network). It installs nothing and runs from the source tree (PYTHONPATH=src).
#
#   scripts/gpu-check.sh          every stage below
#   scripts/gpu-check.sh tests    every stage but the benchmark
#   scripts/gpu-check.sh bench    the probe, the smoke stage and the three earlier benchmarks
#
# Stages, most informative first, each with a time limit (seconds). At its limit a stage
# gets SIGINT -- pytest then stops, reports and writes its JUnit XML -- and SIGKILL 5 s
# later if it is still running; the next stage runs either way. The limits and the kill
# allowances sum to 480 s, so a run ends within 8 minutes in all cases, well inside the
# 9 minutes it may take (and the device machine's 10-minute limit on one command):
#
#   probe      15   is there a GPU? (none: exit 2 at once, nothing else runs)
#   smoke      15   the basics, in seconds: a tensor on the GPU, a cuBLAS matmul, a Triton
#                   kernel, a backward pass, no torch imported: a broken environment shows here
#   graphs     45   CUDA graphs on the real stream (issue 38): tests/cuda_graphs, the GPT
#                   trainer's graphed step against its op-by-op run, capturable optimizers
#   gpu        70   tests/backends/cuda/test_gpu.py: ops and a GPT step on cuda against the CPU
#   graph_bench 140   benchmarks/gpu_graph_step.py: the GPT step at three sizes, Zero eager and
#                   graphed against PyTorch eager and torch.compile, each in its own process
#   kernels    60   every Triton kernel compiled for this GPU, against the CPU kernels
#   suite     100   the rest of the test suite with ZERO_TEST_DEVICE=cuda (the op harness on
#                   cuda, the CUDA backend's own tests; the sm_90 compile check is skipped)
#   (7 x 5 s of kill allowance)
#
# ``bench`` mode runs the earlier benchmarks instead, after the probe and smoke stages:
#   bench: benchmark  40   benchmarks/gpu_gpt.py --profile: a GPT training step, Zero against
#                   PyTorch, then where Zero's time goes (host and GPU per op)
#   bench: host_costs 20   benchmarks/investigations/gpu_host_costs.py: the host's time per launch,
#                   per product and per GPT module, Zero against PyTorch (in the log only)
#   bench: kernel_bench 75   benchmarks/kernels.py --device cuda: every kernel of a step at the
#                   book's shapes, Zero against PyTorch and the GPU's copy and cuBLAS rates
#
# The first GPU run (2026-12-04, an H200, benchmarks/RESULTS.md) took 327 s with cold
# caches; its two serial test stages ran out of time, hence the workers below. The second
# took 357 s: the kernel stage 35 s, the kernel benchmark 60 s a round (hence one round).
# The third took 329 s (smoke 6 s, gpu 64, kernels 32, benchmark 22, kernel_bench 72,
# suite 124); its session then added kernels and tests, and the kernel stage alone took 67 s.
#
# Reports go to $OUT (a new directory under /tmp when OUT is unset): gpu-check.log (all
# output), <stage>.xml (JUnit, one per test stage), gpu_graph_step.md and .jsonl (the graphed
# step; bench mode: gpu_gpt.md/.json and kernels.md), summary.txt (a line per stage, written
# as each stage ends, so it survives a run that is itself stopped).
#
# Exit status: 0 every stage passed; 1 a stage failed or was stopped at its limit;
# 2 no GPU is visible (nothing was run); 3 unknown mode.
set -uo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-all}
case "$MODE" in all|tests|bench) ;; *) echo "usage: scripts/gpu-check.sh [all|tests|bench]" >&2; exit 3 ;; esac
PYTHON=${PYTHON:-python3}
WORKERS=${WORKERS:-8}                 # pytest-xdist processes for the suite (each has its own CUDA context)
KILL_AFTER=5
OUT=${OUT:-$(mktemp -d /tmp/gpu-check.XXXXXX)}
mkdir -p "$OUT"
export OUT  # benchmarks/gpu_gpt.py writes its table there too
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
unset TRITON_INTERPRET ZERO_FAST_MATMUL
exec > >(tee "$OUT/gpu-check.log") 2>&1
: > "$OUT/summary.txt"

failed=()
section() { printf '\n=== %s ===\n' "$*"; }
stage() {  # stage NAME SECONDS COMMAND...: run with a time limit, record the outcome
    local name=$1 seconds=$2; shift 2
    local start=$SECONDS outcome
    timeout --signal=INT --kill-after="$KILL_AFTER" "$seconds" "$@"
    local status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        outcome="STOPPED at its ${seconds}s limit"
        failed+=("$name (time limit)")
    elif [ "$status" -ne 0 ]; then
        outcome="FAILED (exit $status)"
        failed+=("$name")
    else
        outcome="passed"
    fi
    echo "-- $name: $outcome in $((SECONDS - start))s"
    echo "$name: $outcome in $((SECONDS - start))s" >> "$OUT/summary.txt"
}
pytest_stage() {  # pytest_stage NAME SECONDS PYTEST-ARGS...: a test stage with its own JUnit report
    local name=$1 seconds=$2; shift 2
    stage "$name" "$seconds" "$PYTHON" -m pytest -q -p no:cacheprovider --tb=short -rfE --durations=10 \
        --junitxml "$OUT/$name.xml" "$@"
}

section "probe: is there a GPU?"
stage probe 15 "$PYTHON" - <<'EOF'
import sys
try:
    import cupy
    count = cupy.cuda.runtime.getDeviceCount()
except Exception as e:  # no CuPy, no driver, no device
    sys.exit(f"no GPU: {type(e).__name__}: {e}")
if count == 0:
    sys.exit("no GPU: CUDA sees 0 devices")
p = cupy.cuda.runtime.getDeviceProperties(0)
name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
print(f"GPUs: {count}; 0: {name}, sm_{p['major']}{p['minor']}, {p['totalGlobalMem'] / 2**30:.0f} GiB; "
      f"driver {cupy.cuda.runtime.driverGetVersion()}, runtime {cupy.cuda.runtime.runtimeGetVersion()}")
import platform
print("python", sys.version.split()[0], platform.machine())
for module in ("numpy", "numba", "cupy", "triton", "torch", "pytest", "xdist", "hypothesis"):
    try:
        print(f"  {module} {getattr(__import__(module), '__version__', '?')}")
    except Exception as e:  # noqa: BLE001
        print(f"  {module}: MISSING ({type(e).__name__}: {e})")
EOF
if [ ${#failed[@]} -ne 0 ]; then
    echo "gpu-check: no GPU visible here; nothing was run (exit 2). Reports: $OUT"
    exit 2
fi

section "smoke: a tensor on the GPU, a matmul, a Triton kernel, a backward"
stage smoke 15 "$PYTHON" - <<'EOF'
import sys, time, traceback

torch_at_start = "torch" in sys.modules  # an interpreter's start-up (site-packages' .pth files) may load it
torch_importer = []

class WhoImportsTorch:
    """Records the stack of the first `import torch` after this point (and finds nothing itself)."""
    def find_spec(self, name, path=None, target=None):
        if name == "torch" and not torch_importer:
            torch_importer.append("".join(traceback.format_stack(limit=12)[:-1]))
        return None

sys.meta_path.insert(0, WhoImportsTorch())
failures = 0

def check(name, fn):
    global failures
    start = time.perf_counter()
    try:
        detail = fn()
        print(f"ok   {name} ({time.perf_counter() - start:.2f}s){': ' + str(detail) if detail is not None else ''}")
    except Exception:  # noqa: BLE001
        failures += 1
        print(f"FAIL {name}\n{traceback.format_exc()}")

import zero
import zero.cuda

check("a tensor on the GPU (set-up: Zero's pool in CuPy, Triton on CuPy's stream)",
      lambda: zero.arange(6.0, device="cuda").sum().item())
check("cuBLAS matmul", lambda: float((zero.ones(64, 32, device="cuda") @ zero.ones(32, 16, device="cuda"))[0, 0]))
check("a Triton kernel (layer norm)", lambda: zero.nn.functional.layer_norm(
      zero.randn(8, 384, device="cuda"), (384,)).pow(2).mean().item())
def backward():
    x = zero.randn(16, 32, device="cuda", requires_grad=True)
    zero.nn.functional.gelu(x @ zero.randn(32, 8, device="cuda")).sum().backward()
    return x.grad.abs().sum().item()
check("a backward pass", backward)
def triton_driver():
    from triton.runtime import driver
    return type(driver.active).__name__
check("Triton's driver", triton_driver)
check("memory statistics", lambda: zero.cuda.memory_stats())
def no_torch():
    if torch_at_start:
        return "torch was already loaded when the interpreter started; Zero imported nothing more"
    assert "torch" not in sys.modules, "torch was imported, from:\n" + (torch_importer[0] if torch_importer else "?")
check("Zero ran without importing torch", no_torch)
sys.exit(1 if failures else 0)
EOF
if [[ " ${failed[*]} " == *" smoke"* ]]; then
    echo "gpu-check: the basics fail (above); the stages below show it in more detail"
fi

parallel=()
if "$PYTHON" -c "import xdist" 2>/dev/null; then parallel=(-n "$WORKERS"); fi

# Each test stage's first calls compile (NVRTC for CuPy, Triton, Numba for the CPU side of
# each comparison): one process took 90 s for a third of test_gpu.py on a cold H200, so
# every stage spreads its tests over the workers, which share the compile caches on disk.
GRAPH_TESTS=(tests/cuda_graphs tests/cli/test_gpt_cuda_graph.py tests/optim/test_capturable.py)
graph_tests() {
    export ZERO_TEST_DEVICE=cuda
    section "tests: CUDA graphs captured on the GPU's stream, replayed against eager steps"
    pytest_stage graphs 45 "${parallel[@]}" "${GRAPH_TESTS[@]}"
    section "tests: ops and a GPT step on cuda against the CPU"
    pytest_stage gpu 70 "${parallel[@]}" tests/backends/cuda/test_gpu.py
    unset ZERO_TEST_DEVICE
}
kernel_tests() {
    export ZERO_TEST_DEVICE=cuda
    section "tests: the Triton kernels compiled for this GPU, against the CPU kernels"
    pytest_stage kernels 60 "${parallel[@]}" tests/backends/cuda/test_triton_kernels.py \
        tests/backends/cuda/test_fused_kernels.py tests/backends/cuda/test_kernel_tables.py
    unset ZERO_TEST_DEVICE
}
graph_benchmark() {
    section "benchmark: the GPT step graphed, Zero against PyTorch eager and torch.compile"
    stage graph_bench 140 "$PYTHON" benchmarks/gpu_graph_step.py ${GRAPH_BENCH_ARGS:---rounds 2}
}
benchmarks() {
    section "benchmark: GPT training step, Zero against PyTorch"
    stage benchmark 40 "$PYTHON" benchmarks/gpu_gpt.py ${BENCH_ARGS:---profile}
    section "benchmark: the host's time per launch, per product and per GPT module"
    stage host_costs 20 env OUT= "$PYTHON" benchmarks/investigations/gpu_host_costs.py --calls 500 --module-calls 20
    section "benchmark: every kernel of a step, Zero against PyTorch and the GPU's limits"
    stage kernel_bench 75 "$PYTHON" benchmarks/kernels.py --device cuda --configs book --rounds 1 --target 0.03 \
        --round-wait 0 --patience 5 --extra-rounds 0 --quiet 2 --out "$OUT/kernels.md"
}
rest_of_suite() {
    export ZERO_TEST_DEVICE=cuda
    section "tests: the rest of the suite on cuda"
    local ignored=()
    for path in "${GRAPH_TESTS[@]}"; do ignored+=("--ignore=$path"); done
    pytest_stage suite 100 "${parallel[@]}" tests --ignore=tests/backends/cuda/test_gpu.py \
        --ignore=tests/backends/cuda/test_triton_kernels.py --ignore=tests/backends/cuda/test_fused_kernels.py \
        --ignore=tests/backends/cuda/test_kernel_tables.py "${ignored[@]}"
    unset ZERO_TEST_DEVICE
}

case "$MODE" in
    all) graph_tests; graph_benchmark; kernel_tests; rest_of_suite ;;
    tests) graph_tests; kernel_tests; rest_of_suite ;;
    bench) benchmarks ;;
esac

section "summary"
cat "$OUT/summary.txt"
echo "reports: $OUT"
if [ ${#failed[@]} -eq 0 ]; then
    echo "gpu-check: every stage passed"
    exit 0
fi
printf 'gpu-check: FAILED: %s\n' "${failed[@]}"
exit 1
