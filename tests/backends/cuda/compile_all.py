"""Compile every Triton kernel ahead of time for a GPU this machine need not have.

Run as a script (``python tests/backends/cuda/compile_all.py [--arch 90] [--jobs N]``), in a
process without TRITON_INTERPRET. It calls each CUDA kernel function on NumPy arrays shaped
like one step of the book's GPT (smaller batch, same widths), and flash attention also at
head sizes 128 and 256 -- in float32, float64, float16 and bfloat16 (``ml_dtypes.bfloat16``
arrays, whose pointers Triton types ``*bf16``) -- with the launcher's ``recorder`` set: instead of launching, each
call hands over the kernel, its arguments and its constexprs. Every distinct (kernel,
signature, constexprs, options) is then compiled with ``triton.compile(ASTSource(...),
target=GPUTarget("cuda", arch, 32))``, which needs no GPU, ``--jobs`` at a time (one per
core by default: a large attention tile takes ptxas half a minute), and one JSON line per
compilation is printed:

    {"kernel": ..., "signature": {...}, "constexprs": {...}, "ok": true, "seconds": 0.4, "bytes": ...,
     "shared": 82432, "i32_tile_offsets": 0}

``shared`` is the shared memory a block of the kernel needs; ``i32_tile_offsets`` counts
pointer offsets into 2-D tiles computed in int32 (in Triton's IR, ``tt.addptr`` with a
``tensor<AxBxi32>`` offset), which overflow once an array passes 2**31 elements. So compile
errors (types, shapes, unsupported operations), shared memory a GPU does not have, and
int32 offsets show up in CI, for exactly the specialisations a training step launches.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import ml_dtypes
import numpy as np

if os.environ.get("TRITON_INTERPRET") == "1":
    sys.exit("compile_all.py compiles real kernels: run it without TRITON_INTERPRET=1")

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.runtime.jit import mangle_type

import zero.backends.cuda.kernels as cuda_kernels
from zero.backends.cuda.kernels import _launch
from zero.backends.cuda import matmul as matmul_flags


class _Pointer:
    """What mangle_type needs of an array argument."""

    def __init__(self, array):
        self.dtype = array.dtype

    def data_ptr(self):
        return 0


def _type_of(kernel, name, value) -> str:
    param = next(p for p in kernel.params if p.name == name)
    if param.annotation_type:
        return param.annotation_type
    if isinstance(value, np.ndarray):
        return mangle_type(_Pointer(value))
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        value = value.item()
    return mangle_type(value)


def record_attention(q, k, v, o, lse, scale, causal_only=False):
    for causal in (True,) if causal_only else (True, False):
        cuda_kernels.flash_attention_forward(q, k, v, scale, causal, o, lse)
        cuda_kernels.flash_attention_backward(o, q, k, v, o, lse, scale, causal, q, k, v)


ATTENTION_HEADS = (128, 256)  # beyond GPT's 64: the tile and stage choice changes with the head size


def record_attention_heads(dtype) -> None:
    """Flash attention at larger heads, causal only (the tiles, hence shared memory, are the same)."""
    rng = np.random.default_rng(1)
    for head in ATTENTION_HEADS:
        q, k, v, o = (rng.standard_normal((2, 80, head)).astype(dtype) for _ in range(4))
        record_attention(q, k, v, o, rng.standard_normal((2, 80)).astype(dtype), head ** -0.5, causal_only=True)


def record_step(dtype=np.float32):
    """Call every Triton-backed kernel function once, the way a GPT step would."""
    rng = np.random.default_rng(0)
    batch, block, width, heads, vocab = 4, 256, 384, 6, 65
    rows, hidden, head = batch * block, 4 * width, width // heads

    def r(*shape):
        return rng.standard_normal(shape).astype(dtype)

    k = cuda_kernels
    x, w, b = r(rows, width), r(width), r(width)
    mean, rstd, out = r(rows), np.abs(r(rows)) + 1, r(rows, width)
    k.layer_norm_forward(x, w, b, 1e-5, out, mean, rstd)
    k.layer_norm_forward(x, None, None, 1e-5, out, mean, rstd)
    k.layer_norm_backward(out, x, w, mean, rstd, out, r(width), r(width))
    k.layer_norm_backward(out, x, None, mean, rstd, out, None, None)
    k.layer_norm_backward(out, x, w, mean, rstd, out, r(width), None)   # one parameter gradient alone
    flat = r(rows * width)
    k.gelu(flat, flat)
    k.gelu(flat, flat, approximate="tanh")
    k.gelu_backward(flat, flat, flat)
    k.gelu_backward(flat, flat, flat, approximate="tanh")
    k.dropout_forward(flat, 0.2, (1 << 62) + 5, flat)
    k.dropout_forward_seeded(flat, 0.2, np.array([(1 << 62) + 5], np.int64), flat)   # a CUDA graph's seed slot
    scores = r(batch * heads * 8, block)
    for forward, backward in ((k.softmax_forward, k.softmax_backward),
                              (k.log_softmax_forward, k.log_softmax_backward)):
        forward(scores, scores)
        backward(scores, scores, scores)
    logits, target = r(rows, vocab), rng.integers(0, vocab, rows)
    loss, lse = r(rows), r(rows).astype(np.float64)  # the saved logsumexp is float64
    for weight, smoothing in ((None, 0.0), (np.abs(r(vocab)), 0.1)):
        k.cross_entropy_forward(logits, target, weight, -100, smoothing, loss, lse)
        k.cross_entropy_backward(np.broadcast_to(loss[:1], (rows,)), logits, target, weight, lse, -100, smoothing,
                                 logits)
        k.nll_loss_forward(logits, target, weight, -100, loss)
        k.nll_loss_backward(loss, target, weight, -100, logits)
        k.class_loss_mean(loss, target, weight, -100, loss[0:1].reshape(()), loss[1:2].reshape(()))
    for ignore in (None, -100):   # the range checks of gathers and of class targets
        k.index_extremes_parts(target, ignore, 0)
        k.index_extremes_parts(target.astype(np.int32), ignore, 0)
    params = [r(1000) for _ in range(4)]
    k.adamw_step(*params, 1e-3, 0.9, 0.99, 0.0, 1e-8, 0.1, 1e-3)
    k.adamw_step_many(*[[p, p[:10]] for p in params], 1e-3, 0.9, 0.99, 0.0, 1e-8, 0.1, 1e-3)
    k.squared_norms(params, np.zeros(len(params), np.float32))   # clip_grad_norm_'s passes
    k.scale_in_place(params, np.array(0.5, np.float32))
    k.sgd_step(params[0], params[1], params[2], 0.1, 0.9, 0.0, 0.0, True, False)
    k.sgd_step(params[0], params[1], None, 0.1, 0.0, 0.0, 0.0, False, True)
    # AdamW's capturable step (issue 38): a float lr with PyTorch's ε, a 0-d lr with the book's, a 16-bit parameter
    counts, lr = [np.zeros((), np.float32) for _ in range(2)], np.array(1e-3, np.float32)
    k.adamw_step_many_capturable(*[[p, p[:10]] for p in params], counts, 1e-3, 0.9, 0.99, 1e-8, False, 0.1)
    k.adamw_step_many_capturable(*[[p, p[:10]] for p in params], counts, lr, 0.9, 0.99, 1e-8, True, 0.1)
    k.adamw_step_many_capturable(*[[p.astype(np.float16)] for p in params], counts[:1], lr, 0.9, 0.99, 1e-8, True,
                                 0.1)
    k.ffn_forward(x[:64], r(hidden, width), r(hidden), r(width, hidden), r(width), "none", x[:64])
    k.ffn_backward(x[:64], x[:64], r(hidden, width), r(hidden), r(width, hidden), "none", x[:64],
                   r(hidden, width), r(hidden), r(width, hidden), r(width))
    groups = batch * heads
    q, kk, v = r(groups, block, head), r(groups, block, head), r(groups, block, head)
    o, lse_a = r(groups, block, head), r(groups, block)
    qkv, y = r(batch, block, 3 * heads * head), r(batch, block, heads * head)   # the GPT's packed heads
    for fast in (False, True) if dtype == np.float32 else (False,):  # and TF32 products, as allow_tf32 runs them
        matmul_flags.allow_tf32 = fast
        record_attention(q, kk, v, o, lse_a, head ** -0.5)
        k.self_attention_forward(qkv, heads, head ** -0.5, True, y, lse_a)
        k.self_attention_backward(y, qkv, y, lse_a, heads, head ** -0.5, True, qkv)
    matmul_flags.allow_tf32 = False


def record_vision(dtype) -> None:
    """Convolution and pooling as a small CNN step launches them (kernel sizes 1, 3, 5, 7; pools 2 and 3)."""
    rng = np.random.default_rng(2)
    k = cuda_kernels
    x = rng.standard_normal((2, 4, 12, 12)).astype(dtype)
    for size, pad in ((1, 0), (3, 1), (5, 2), (7, 3)):
        w, b, out = (rng.standard_normal(shape).astype(dtype) for shape in ((8, 4, size, size), (8,), (2, 8, 12, 12)))
        k.conv2d_forward(x, w, b, (1, 1), (pad, pad), (1, 1), 1, out)
        k.conv2d_backward(out, x, w, (1, 1), (pad, pad), (1, 1), 1, x, w, b)
    for size in (2, 3):
        out, indices = np.empty((2, 4, 6, 6), dtype), np.zeros((2, 4, 6, 6), np.int64)
        k.max_pool2d_forward(x, (size, size), (2, 2), (0, 0), (1, 1), out, indices)
        k.max_pool2d_backward(out, indices, (size, size), (2, 2), (0, 0), (1, 1), x)
        for include_pad in (True, False):
            k.avg_pool2d_forward(x, (size, size), (2, 2), (0, 0), include_pad, None, out)
            k.avg_pool2d_backward(out, (size, size), (2, 2), (0, 0), include_pad, None, x)


# Every kernel in the step's float types; the 16-bit ones compute in float32 (triton_kernels.precision).
DTYPES = (np.float32, np.float64, np.float16, ml_dtypes.bfloat16)

I32_TILE_OFFSET = re.compile(r"tt\.addptr .*: tensor<\d+x\d+x!tt\.ptr<[^>]+>>, tensor<\d+x\d+xi32>")


def compile_one(task: dict) -> dict:
    """Compile one specialisation (in a worker process) and describe the result."""
    kernel = getattr(importlib.import_module(task["module"]), task["kernel"])
    record = {"kernel": task["kernel"], "signature": task["signature"],
              "constexprs": {k: str(v) for k, v in task["constexprs"].items()}, "options": task["options"]}
    start = time.perf_counter()
    try:
        compiled = triton.compile(ASTSource(fn=kernel, signature=task["signature"], constexprs=task["constexprs"]),
                                  target=GPUTarget("cuda", task["arch"], 32), options=task["options"])
        record.update(ok=True, bytes=len(compiled.asm["cubin"]), shared=compiled.metadata.shared,
                      i32_tile_offsets=len(I32_TILE_OFFSET.findall(compiled.asm["ttir"])))
    except Exception as e:
        record.update(ok=False, error=f"{type(e).__name__}: {e}"[:2000])
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def tasks(launches, arch: int) -> list:
    """One compilation per distinct (kernel, signature, constexprs, options) launched."""
    found: dict = {}
    for kernel, call_args, meta in launches:
        names = [p.name for p in kernel.params]
        options = {key: meta[key] for key in ("num_warps", "num_stages") if key in meta}
        constexprs = {key: value for key, value in meta.items() if key not in options}
        signature = {name: "constexpr" if name in constexprs else _type_of(kernel, name, value)
                     for name, value in zip(names, list(call_args) + [None] * len(names))
                     if name in constexprs or names.index(name) < len(call_args)}
        key = (kernel.fn.__name__, json.dumps(signature, sort_keys=True), repr(sorted(constexprs.items())),
               repr(sorted(options.items())))
        found.setdefault(key, {"module": kernel.fn.__module__, "kernel": kernel.fn.__name__, "signature": signature,
                               "constexprs": constexprs, "options": options, "arch": arch})
    return list(found.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", type=int, default=90, help="compute capability, 90 = sm_90 (H100/H200)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="compilations at a time")
    args = parser.parse_args()
    launches = []
    _launch.recorder = lambda kernel, grid, call_args, meta: launches.append((kernel, call_args, meta))
    for dtype in DTYPES:
        record_step(dtype)
        record_attention_heads(dtype)
        record_vision(dtype)
    _launch.recorder = None
    work = sorted(tasks(launches, args.arch), key=lambda task: -task["constexprs"].get("BLOCK_E", 0))  # slow first
    failures = 0
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for record in pool.map(compile_one, work):
            failures += not record["ok"]
            print(json.dumps(record), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
