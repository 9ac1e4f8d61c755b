"""Why Zero runs its CPU kernels on one pool of its own: the pools that compete with OpenBLAS's.

PyTorch runs every kernel on both cores of this machine. NumPy's GEMMs use both (OpenBLAS's
threads), a Numba loop one. Numba can spread a loop over the cores (``parallel=True``,
``prange``), but with its own pool of threads, which then takes turns with OpenBLAS's
pool on the same two cores; Zero's own pool (``zero.backends.cpu.threads``) instead runs
BLAS single-threaded and splits products and loops into row ranges itself. This
measures those choices on the
hot path of a GPT step: the FFN's chain GEMM (2048 x 128 -> 512) -> exact GELU over the
(2048, 512) hidden -> GEMM (512 -> 128), float32, as Zero's kernels compute it.

    PYTHONPATH=src python benchmarks/investigations/thread_pools.py [--rounds 3] [--reps 200]

Each variant runs in its own process (the environment variables must be set before
NumPy and Numba load), the variants taking turns (in reverse order on odd rounds),
``--rounds`` times; the table gives
the median over rounds of each process's median chain time, and of the GELU loop alone
(no GEMM before it, so no OpenBLAS threads awake), against the serial loop.

Variants: the serial loop (Zero today); its rows split over 2 threads with Numba's
default threading layer (OpenMP here, whose idle threads spin); OpenMP's threads waiting
passively (``OMP_WAIT_POLICY=passive``); that and OpenBLAS's idle threads sleeping at once
(``OPENBLAS_THREAD_TIMEOUT=4``, read when NumPy loads OpenBLAS); Numba's own ``workqueue``
layer (threads that sleep; not safe for kernels launched from two Python threads at once);
Zero's pool (what Zero does now: BLAS on one thread, each GEMM and the loop in 2 row ranges).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, whose modules this reuses
import turns  # the sibling module, whichever directory the script runs from

VARIANTS = [
    ("serial loop", "serial", {}),
    ("2 threads, Numba default layer", "parallel", {}),
    ("2 threads, OpenMP passive", "parallel", {"OMP_WAIT_POLICY": "passive"}),
    ("2 threads, OpenBLAS sleeps at once, OpenMP passive", "parallel",
     {"OPENBLAS_THREAD_TIMEOUT": "4", "OMP_WAIT_POLICY": "passive"}),
    ("2 threads, Numba workqueue layer", "parallel", {"NUMBA_THREADING_LAYER": "workqueue"}),
    ("Zero's pool: BLAS 1 thread, row ranges on 2", "pool", {}),
]


def worker(mode: str, reps: int) -> None:
    import numba
    import numpy as np

    from zero.backends.cpu.kernels import _fastmath, _jit

    _jit.compile_all()            # Zero's float32 GELU helper, compiled, as its own loops use it
    gelu = _fastmath.gelu

    @numba.njit(fastmath=True, parallel=True)
    def parallel_gelu(h):                    # rows over the threads
        for r in numba.prange(h.shape[0]):
            for j in range(h.shape[1]):
                h[r, j] = gelu(h[r, j], False)

    @numba.njit(fastmath=True)
    def serial_gelu(h):
        for r in range(h.shape[0]):
            for j in range(h.shape[1]):
                h[r, j] = gelu(h[r, j], False)

    product = np.matmul
    loop = parallel_gelu if mode == "parallel" else serial_gelu
    if mode == "pool":
        from zero.backends.cpu import parallel

        ranges_gelu = numba.njit(fastmath=True, nogil=True)(serial_gelu.py_func)

        def product(a, b, out):                 # split over Zero's pool
            parallel.product(a, b, out)

        def loop(h):                             # rows over Zero's pool
            parallel.parallel_for(h.shape[0], lambda lo, hi: ranges_gelu(h[lo:hi]),
                                  parallel.element_grain(h.shape[1], parallel.GELU_NS))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2048, 128)).astype(np.float32)
    w1 = (rng.standard_normal((128, 512)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((512, 128)) * 0.1).astype(np.float32)
    hidden, out = np.empty((2048, 512), np.float32), np.empty((2048, 128), np.float32)

    def chain():
        product(x, w1, out=hidden)
        loop(hidden)
        product(hidden, w2, out=out)

    chain_s = turns.median_seconds(chain, warmup=20, repeats=reps)
    np.matmul(x, w1, out=hidden)
    time.sleep(0.5)  # OpenBLAS's threads asleep before the loop is timed alone
    alone_s = turns.median_seconds(lambda: loop(hidden), warmup=20, repeats=reps)
    layer = {"parallel": numba.threading_layer, "pool": lambda: "Zero's"}.get(mode, lambda: "-")()
    print(json.dumps({"chain": chain_s, "alone": alone_s, "layer": layer}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "REPS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return 0
    results: dict[str, list[dict]] = {name: [] for name, _, _ in VARIANTS}
    for round_ in range(args.rounds):
        for name, mode, env in turns.order(VARIANTS, round_):  # reversed on odd rounds
            proc = subprocess.run([sys.executable, __file__, "--worker", mode, str(args.reps)],
                                  env={**os.environ, **env}, capture_output=True, text=True, check=True)
            results[name].append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
    serial = results["serial loop"]
    base_chain = statistics.median(r["chain"] for r in serial)
    base_alone = statistics.median(r["alone"] for r in serial)
    print(f"`python benchmarks/investigations/thread_pools.py --rounds {args.rounds} --reps {args.reps}`; "
          "GEMM (2048x128 @ 128x512) -> exact GELU (2048x512) -> GEMM (@ 512x128), float32\n")
    rows = []
    for name, _, _ in VARIANTS:
        chain = statistics.median(r["chain"] for r in results[name])
        alone = statistics.median(r["alone"] for r in results[name])
        rows.append([name, results[name][0]["layer"], f"{chain * 1e3:.2f}", f"{chain / base_chain:.2f}",
                     f"{alone * 1e3:.2f}", f"{alone / base_alone:.2f}"])
    print(turns.markdown(["variant", "threading layer", "chain ms (GEMM, loop, GEMM)", "vs serial",
                          "GELU loop alone ms", "vs serial"], rows, align="llrrrr"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
