"""What one call costs the host on a GPU: the pieces a training step is made of, each
called many times in a row without waiting for the GPU (only at the end), so the time is
the host's, not the kernels' (the shapes are small enough for the GPU to keep up).

    PYTHONPATH=src python benchmarks/investigations/gpu_host_costs.py [--calls 2000]

The GPU runs found Zero's GPT step bound by the host (benchmarks/RESULTS.md, "GPT training step on a GPU"): a step
is ~200 Triton launches, 75 cuBLAS products and ~100 CuPy calls, and cProfile put 61 us of
host time on each cuBLAS product. This splits such a figure into its parts -- Zero's
launch path against Triton's own, Zero's matmul against the bare cuBLAS call, a CuPy
ufunc, an event -- and PyTorch's small op for scale.

A second table times the GPT's own modules the same way, both frameworks, at a shape
small enough for the GPU to keep up (batch 2, block 16, 384 wide, 6 heads, 6 layers): a
layer norm, the attention, the feed-forward, a block, the whole model forward and
backward, and AdamW's step, so a step's host time splits into its parts without a
profiler's own cost. Each framework runs in a process of its own, Zero's first (in one
process their thread pools would compete for the host's cores). The tables go to stdout
and, when ``$OUT`` is set, to
``$OUT/gpu_host_costs.md``. ``--device cpu`` checks the script (the figures then mean
nothing).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/
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


def measure(framework: str, args) -> dict:
    """This process's figures for one framework: the single calls' host us, and per module
    (forward, forward and backward) host us; a failure as its message."""
    calls: dict = {}
    modules: dict = {}
    if args.device == "cuda":
        try:
            made = zero_cases() if framework == "zero" else torch_cases()
            if framework == "zero":
                import zero
                synchronize = zero.cuda.synchronize
            else:
                import torch
                synchronize = torch.cuda.synchronize
            for label, call in made:
                try:
                    calls[label] = host_us(call, args.calls, synchronize)
                except Exception as error:
                    calls[label] = f"failed: {type(error).__name__}: {str(error)[:80]}"
        except Exception:
            print(f"!! {framework} cases failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
    try:
        cases, synchronize = module_cases(framework, args.device)
        for label, forward, forward_backward in cases:
            modules[label] = (host_us(forward, args.module_calls, synchronize),
                              None if forward_backward is None else
                              host_us(forward_backward, args.module_calls, synchronize))
    except Exception:
        print(f"!! {framework} modules failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
    return {"calls": calls, "modules": modules}


def in_own_process(framework: str, args) -> dict:
    """``measure`` in a fresh interpreter: the two frameworks never share a process (their
    thread pools would compete for the host's cores)."""
    command = [sys.executable, os.path.abspath(__file__), "--framework", framework, "--calls", str(args.calls),
               "--module-calls", str(args.module_calls), "--device", args.device]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    sys.stderr.write(result.stderr)
    lines = result.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        print(f"!! {framework}: no figures (exit {result.returncode})", file=sys.stderr, flush=True)
        return {"calls": {}, "modules": {}}


def tables(args, measured: dict) -> tuple[list[str], list[str]]:
    calls = [f"Host time per call on the GPU, {args.calls} calls in a row, median of 5 rounds; each framework "
             "in its own process", "", "| call | host us/call |", "|---|---:|"]
    for framework in ("zero", "torch"):
        for label, value in measured[framework]["calls"].items():
            calls.append(f"| {label} | {value if isinstance(value, str) else format(value, '.2f')} |")
    modules = ["", f"The GPT's modules at batch 2, block 16 (the GPU keeps up), host time per call, "
               f"{args.module_calls} calls in a row, median of 5 rounds; each framework in its own process:", "",
               "| module | Zero forward us | Zero fwd+bwd us | PyTorch forward us | PyTorch fwd+bwd us | "
               "fwd+bwd Zero/PyTorch |", "|---|---:|---:|---:|---:|---:|"]

    def cell(value):
        return "-" if value is None else f"{value:.1f}"

    zero_modules, torch_modules = measured["zero"]["modules"], measured["torch"]["modules"]
    for label in dict.fromkeys([*zero_modules, *torch_modules]):
        zf, zb = zero_modules.get(label, (None, None))
        tf, tb = torch_modules.get(label, (None, None))
        ratio = "-" if not (zb or zf) or not (tb or tf) else f"{(zb or zf) / (tb or tf):.2f}"
        modules.append(f"| {label} | {cell(zf)} | {cell(zb)} | {cell(tf)} | {cell(tb)} | {ratio} |")
    return calls, modules


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--module-calls", type=int, default=100)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--framework", choices=("zero", "torch"), help=argparse.SUPPRESS)  # (a worker process)
    args = parser.parse_args()
    if args.framework:
        print(json.dumps(measure(args.framework, args)), flush=True)
        return 0
    measured = {framework: in_own_process(framework, args) for framework in ("zero", "torch")}
    calls, modules = tables(args, measured)
    text = "\n".join(calls + modules)
    print(text, flush=True)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "gpu_host_costs.md"), "w") as file:
            file.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
