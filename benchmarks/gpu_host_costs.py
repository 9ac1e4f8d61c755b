"""What one call costs the host on a GPU: the pieces a training step is made of, each
called many times in a row without waiting for the GPU (only at the end), so the time is
the host's, not the kernels' (the shapes are small enough for the GPU to keep up).

    PYTHONPATH=src python benchmarks/gpu_host_costs.py [--calls 2000]

The GPU runs found Zero's GPT step bound by the host (benchmarks/RESULTS.md, "GPU"): a step
is ~200 Triton launches, 75 cuBLAS products and ~100 CuPy calls, and cProfile put 61 us of
host time on each cuBLAS product. This splits such a figure into its parts -- Zero's
launch path against Triton's own, Zero's matmul against the bare cuBLAS call, a CuPy
ufunc, an event -- and PyTorch's small op for scale.

A second table times the GPT's own modules the same way, both frameworks, at a shape
small enough for the GPU to keep up (batch 2, block 16, 384 wide, 6 heads, 6 layers): a
layer norm, the attention, the feed-forward, a block, the whole model forward and
backward, and AdamW's step, so a step's host time splits into its parts without a
profiler's own cost. The tables go to stdout and, when ``$OUT`` is set, to
``$OUT/gpu_host_costs.md``. ``--device cpu`` checks the script (the figures then mean
nothing).
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
        ("linalg._run of a made plan",
         lambda: linalg._run(cp, plan, 0.0, b.data.ptr, a.data.ptr, out.data.ptr, out.dtype)),
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


SMALL_GPT = dict(vocab_size=65, block_size=16, n_layer=6, n_head=6, n_embd=384, dropout=0.2)


def module_cases(framework: str, device: str) -> tuple[list, Callable[[], None]]:
    """(label, forward, forward and backward) for the GPT's modules in ``framework``, and its
    synchronize."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpu_gpt

    rng = np.random.default_rng(0)
    x_host = rng.standard_normal((2, SMALL_GPT["block_size"], SMALL_GPT["n_embd"])).astype(np.float32)
    ids = rng.integers(0, SMALL_GPT["vocab_size"], (2, 2, SMALL_GPT["block_size"]))
    if framework == "zero":
        import zero

        model = gpu_gpt.zero_model(SMALL_GPT).to(device)
        optimizer = zero.optim.AdamW(model.parameters(), lr=1e-3)
        x = zero.tensor(x_host, device=device, requires_grad=True)
        idx, targets = (zero.tensor(a, device=device) for a in ids)
        synchronize = zero.cuda.synchronize if device == "cuda" else (lambda: None)
    else:
        import torch

        model = gpu_gpt.torch_model(SMALL_GPT).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.tensor(x_host, device=device, requires_grad=True)
        idx, targets = (torch.tensor(a, device=device) for a in ids)
        synchronize = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    block = model.blocks[0]

    def both(module):
        out = module(x)
        grad = out.detach() * 0 + 1   # a ready gradient of out's shape, on the device
        return (lambda: module(x)), (lambda: module(x).backward(grad))

    def step():
        model(idx, targets).backward()

    step()   # gradients exist: the optimizer's step has work
    cases = [("layer norm", *both(block.ln1)), ("attention (qkv, attention, projection, dropout)", *both(block.attn)),
             ("feed-forward (fc1, GELU, fc2, dropout)", *both(block.ffn)), ("block", *both(block)),
             ("whole model: forward, then forward and backward", lambda: model(idx, targets), step),
             ("AdamW step (76 parameters)", optimizer.step, None)]
    return cases, synchronize


def module_table(calls: int, device: str) -> list[str]:
    lines = ["", f"The GPT's modules at batch 2, block 16 (the GPU keeps up), host time per call, {calls} calls "
             "in a row, median of 5 rounds:", "",
             "| module | Zero forward us | Zero fwd+bwd us | PyTorch forward us | PyTorch fwd+bwd us | "
             "fwd+bwd Zero/PyTorch |", "|---|---:|---:|---:|---:|---:|"]
    measured: dict = {}
    for framework in ("zero", "torch"):
        try:
            cases, synchronize = module_cases(framework, device)
            for label, forward, forward_backward in cases:
                measured[(framework, label)] = (
                    host_us(forward, calls, synchronize),
                    None if forward_backward is None else host_us(forward_backward, calls, synchronize))
        except Exception:
            print(f"!! {framework} modules failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
    labels = list(dict.fromkeys(label for _, label in measured))

    def cell(value):
        return "-" if value is None else f"{value:.1f}"

    for label in labels:
        zf, zb = measured.get(("zero", label), (None, None))
        tf, tb = measured.get(("torch", label), (None, None))
        ratio = "-" if not (zb or zf) or not (tb or tf) else f"{(zb or zf) / (tb or tf):.2f}"
        lines.append(f"| {label} | {cell(zf)} | {cell(zb)} | {cell(tf)} | {cell(tb)} | {ratio} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--module-calls", type=int, default=100)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    lines = [f"Host time per call on the GPU, {args.calls} calls in a row, median of 5 rounds", "",
             "| call | host us/call |", "|---|---:|"]
    for name, cases, sync in (("zero", zero_cases, "zero"), ("torch", torch_cases, "torch")):
        if args.device != "cuda":
            break
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
    print("\n".join(lines), flush=True)   # (before the modules' table, which a time limit may stop)
    modules = module_table(args.module_calls, args.device)
    print("\n".join(modules), flush=True)
    text = "\n".join(lines + modules)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "gpu_host_costs.md"), "w") as file:
            file.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
