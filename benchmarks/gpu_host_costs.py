"""What one call costs the host on a GPU: the pieces a training step is made of, each
called many times in a row without waiting for the GPU (only at the end), so the time is
the host's, not the kernels' (the shapes are small enough for the GPU to keep up).

    PYTHONPATH=src python benchmarks/gpu_host_costs.py [--calls 2000]

The GPU runs found Zero's GPT step bound by the host (benchmarks/RESULTS.md, "GPU"): a step
is ~200 Triton launches, 75 cuBLAS products and ~100 CuPy calls, and cProfile put 61 us of
host time on each cuBLAS product. This splits such a figure into its parts -- Zero's
launch path against Triton's own, Zero's matmul against the bare cuBLAS call, a CuPy
ufunc, an event -- and PyTorch's small op for scale. The table goes to stdout and, when
``$OUT`` is set, to ``$OUT/gpu_host_costs.md``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import traceback
from collections.abc import Callable

import numpy as np


def host_us(call: Callable[[], object], calls: int, synchronize: Callable[[], None], rounds: int = 5) -> float:
    """The median over ``rounds`` of the host's microseconds per call, ``calls`` in a row."""
    call()
    synchronize()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        samples.append((time.perf_counter() - start) / calls * 1e6)
        synchronize()
    return statistics.median(samples)


def zero_cases() -> list[tuple[str, Callable[[], object]]]:
    os.environ.setdefault("ZERO_FAST_MATMUL", "1")
    import cupy as cp
    from cupy_backends.cuda.libs import cublas

    import zero
    from zero.backends.cuda import kernels
    from zero.backends.cuda.kernels import linalg
    from zero.backends.cuda.kernels._launch import DevicePointer
    from zero.backends.cuda.triton_kernels.elementwise import gelu_forward_kernel

    small = zero.randn(64, 64, device="cuda")
    other = zero.randn(64, 64, device="cuda")
    a, b, out = small._array, other._array, zero.empty(64, 64, device="cuda")._array
    flat, flat_out = a.reshape(-1), out.reshape(-1)
    handle = cp.cuda.device.get_cublas_handle()
    alpha, beta = np.ones((), np.float32), np.zeros((), np.float32)
    event = zero.cuda.Event()
    plan = linalg.plan_matmul(a, b, out)
    n = flat.size
    x_pointer, out_pointer = DevicePointer(flat), DevicePointer(flat_out)   # what Triton takes as pointers

    def raw_gemm():
        cublas.gemmEx(handle, 0, 0, 64, 64, 64, alpha.ctypes.data, b.data.ptr, linalg.CUDA_R_32F, 64, a.data.ptr,
                      linalg.CUDA_R_32F, 64, beta.ctypes.data, out.data.ptr, linalg.CUDA_R_32F, 64,
                      linalg.COMPUTE_32F_FAST_TF32, linalg.GEMM_DEFAULT)

    return [
        ("Zero op: a + b, (64, 64)", lambda: small + other),
        ("Zero kernel: gelu (Zero's launch path)", lambda: kernels.gelu(flat, flat_out)),
        ("Triton's own launch: gelu_forward_kernel[grid](...)",
         lambda: gelu_forward_kernel[(4,)](x_pointer, x_pointer, out_pointer, n, 1, HAS_BIAS=False, TANH=False,
                                           BLOCK=1024, num_warps=4)),
        ("Zero kernel: matmul (64, 64) @ (64, 64)", lambda: kernels.matmul(a, b, out)),
        ("plan_matmul alone", lambda: linalg.plan_matmul(a, b, out)),
        ("linalg._run of a made plan", lambda: linalg._run(cp, plan)),
        ("bare cublas.gemmEx (64, 64), TF32", raw_gemm),
        ("cublas.getStream", lambda: cublas.getStream(handle)),
        ("CuPy ufunc: cp.add(a, b, out=c)", lambda: cp.add(a, b, out=out)),
        ("CuPy reshape", lambda: a.reshape(-1)),
        ("CuPy empty (64, 64)", lambda: cp.empty((64, 64), np.float32)),
        ("zero.cuda.Event().record()", lambda: event.record()),
    ]


def torch_cases() -> list[tuple[str, Callable[[], object]]]:
    import torch

    a, b = torch.randn(64, 64, device="cuda"), torch.randn(64, 64, device="cuda")
    out = torch.empty(64, 64, device="cuda")
    return [("PyTorch op: a + b, (64, 64)", lambda: a + b),
            ("PyTorch matmul (64, 64), out=", lambda: torch.matmul(a, b, out=out))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    lines = [f"Host time per call on the GPU, {args.calls} calls in a row, median of 5 rounds", "",
             "| call | host us/call |", "|---|---:|"]
    for name, cases, sync in (("zero", zero_cases, "zero"), ("torch", torch_cases, "torch")):
        try:
            made = cases()
            if sync == "zero":
                import zero
                synchronize = zero.cuda.synchronize
            else:
                import torch
                synchronize = torch.cuda.synchronize
        except Exception:
            print(f"!! {name} cases failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
            continue
        for label, call in made:
            try:
                lines.append(f"| {label} | {host_us(call, args.calls, synchronize):.2f} |")
            except Exception as error:
                lines.append(f"| {label} | failed: {type(error).__name__}: {str(error)[:80]} |")
    text = "\n".join(lines)
    print(text)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "gpu_host_costs.md"), "w") as file:
            file.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
