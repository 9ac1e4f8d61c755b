#!/usr/bin/env bash
# The one command to run on a machine with an NVIDIA GPU (written for an H200: CUDA 13,
# Python 3.12, cupy-cuda13x 14.2, triton 3.6, torch, numba, numpy, pytest; no network).
#
#   scripts/gpu-check.sh          environment, smoke checks, the test suite on cuda, the GPT benchmark
#   scripts/gpu-check.sh tests    environment, smoke checks and the tests only
#   scripts/gpu-check.sh bench    environment, smoke checks and the benchmark only
#
# It installs nothing and runs from the source tree (PYTHONPATH=src). The tests run with
# ZERO_TEST_DEVICE=cuda: tests/backends/cuda's kernel tests run compiled on the GPU instead of
# interpreted, its GPU-only tests run, and the op harness (tests/ops) makes its tensors on
# cuda. Then benchmarks/gpu_gpt.py times a GPT training step at the book's configuration in
# Zero and in PyTorch. Each stage has a time limit so that the whole run ends well inside
# 10 minutes; a failing stage is reported and the next one still runs. When $OUT is set,
# the log, the test report (JUnit XML) and the benchmark table are written there.
# Exit status: 0 when every stage passed.
set -uo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-all}
PYTHON=${PYTHON:-python3}
TEST_SECONDS=${TEST_SECONDS:-330}     # the whole test stage
BENCH_SECONDS=${BENCH_SECONDS:-200}   # the benchmark stage
WORKERS=${WORKERS:-8}                 # pytest-xdist processes (each has its own CUDA context)
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
unset TRITON_INTERPRET ZERO_FAST_MATMUL

if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    exec > >(tee "$OUT/gpu-check.log") 2>&1
fi

failed=()
section() { printf '\n=== %s ===\n' "$*"; }
stage() {  # stage NAME SECONDS COMMAND...: run with a time limit, remember a failure
    local name=$1 seconds=$2; shift 2
    local start=$SECONDS
    timeout --kill-after=10 "$seconds" "$@"
    local status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "!! $name: stopped after its ${seconds}s limit"
        failed+=("$name (time limit)")
    elif [ "$status" -ne 0 ]; then
        echo "!! $name: failed (exit $status)"
        failed+=("$name")
    fi
    echo "-- $name took $((SECONDS - start))s"
}

section "environment"
"$PYTHON" - <<'EOF'
import platform, sys
print("python", sys.version.split()[0], platform.machine())
for name in ("numpy", "numba", "cupy", "triton", "torch", "pytest", "xdist", "safetensors"):
    try:
        module = __import__(name)
        print(f"  {name} {getattr(module, '__version__', '?')}")
    except Exception as e:  # noqa: BLE001
        print(f"  {name}: MISSING ({type(e).__name__}: {e})")
try:
    import cupy
    runtime = cupy.cuda.runtime
    p = runtime.getDeviceProperties(0)
    name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
    print(f"GPUs: {runtime.getDeviceCount()}; 0: {name}, sm_{p['major']}{p['minor']}, "
          f"{p['totalGlobalMem'] / 2**30:.0f} GiB; driver {runtime.driverGetVersion()}, "
          f"runtime {runtime.runtimeGetVersion()}")
except Exception as e:  # noqa: BLE001
    print(f"CuPy sees no GPU: {type(e).__name__}: {e}")
EOF
nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"

section "smoke: one call through each layer"
stage smoke 240 "$PYTHON" - <<'EOF'
import sys, time, traceback
import numpy as np

failures = 0

def check(name, fn):
    global failures
    start = time.perf_counter()
    try:
        detail = fn()
        print(f"ok   {name} ({time.perf_counter() - start:.2f}s){': ' + str(detail) if detail else ''}")
    except Exception:  # noqa: BLE001
        failures += 1
        print(f"FAIL {name}\n{traceback.format_exc()}")

import zero
import zero.cuda

check("zero.cuda.is_available", lambda: (zero.cuda.is_available(), zero.cuda.device_count()))
check("backend set-up (allocator into CuPy, Triton on CuPy's stream)",
      lambda: zero.zeros(3, device="cuda").device)
def triton_driver():
    from triton.runtime import driver
    return type(driver.active).__name__
check("Triton driver", triton_driver)
check("CuPy elementwise (NVRTC)", lambda: (zero.ones(5, device="cuda") * 2 + 1).sum().item())
check("cuBLAS matmul", lambda: float((zero.ones(64, 32, device="cuda") @ zero.ones(32, 16, device="cuda"))[0, 0]))
check("Triton layer norm", lambda: zero.nn.functional.layer_norm(zero.randn(8, 384, device="cuda"), (384,))
      .pow(2).mean().item())
check("Triton flash attention", lambda: zero.nn.functional.scaled_dot_product_attention(
      *[zero.randn(2, 6, 256, 64, device="cuda") for _ in range(3)], is_causal=True).abs().mean().item())
check("memory statistics", lambda: {k: v for k, v in zero.cuda.memory_stats().items()})
def no_torch():
    assert "torch" not in sys.modules, "torch was imported (Triton fell back to its PyTorch driver?)"
check("Zero ran without importing torch", no_torch)
sys.exit(1 if failures else 0)
EOF

if [ "$MODE" = "all" ] || [ "$MODE" = "tests" ]; then
    section "tests with ZERO_TEST_DEVICE=cuda"
    parallel=()
    if "$PYTHON" -c "import xdist" 2>/dev/null; then parallel=(-n "$WORKERS"); fi
    junit=()
    if [ -n "${OUT:-}" ]; then junit=(--junitxml "$OUT/tests.xml"); fi
    export ZERO_TEST_DEVICE=cuda
    stage tests "$TEST_SECONDS" "$PYTHON" -m pytest -q -p no:cacheprovider --tb=short -rfE \
        "${parallel[@]}" "${junit[@]}" ${PYTEST_ARGS:-tests}
    unset ZERO_TEST_DEVICE
fi

if [ "$MODE" = "all" ] || [ "$MODE" = "bench" ]; then
    section "benchmark: GPT training step, Zero against PyTorch"
    stage benchmark "$BENCH_SECONDS" "$PYTHON" benchmarks/gpu_gpt.py ${BENCH_ARGS:-}
fi

section "summary"
if [ ${#failed[@]} -eq 0 ]; then
    echo "gpu-check: every stage passed"
    exit 0
fi
printf 'gpu-check: FAILED: %s\n' "${failed[@]}"
exit 1
