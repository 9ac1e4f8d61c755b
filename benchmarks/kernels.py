"""Every kernel of a training step, forward and backward, at the shapes of four GPT
configurations: Zero's time, how close it runs to the machine's limit, and PyTorch's time.

    PYTHONPATH=src python benchmarks/kernels.py [--configs tiny,small,medium,book] [--cases gelu,softmax]
        [--rounds 5] [--target 0.3] [--out FILE] [--json FILE] [--no-torch] [--list] [--device cuda]

Configurations (layers x heads x width, batch, block; character vocabulary V = 65):
tiny 2x4x128 B16 T64 · small 4x4x128 B32 T64 · medium 4x4x256 B32 T128 · book 6x6x384 B64 T256.
In the shapes, N = B*T token rows, C the width, D = C / heads, R = B*heads*T attention rows.
Every case (``--list`` prints them with their formulas) runs on the operands a training
step gives it, float32, inputs that need a gradient requiring one, contiguous.

What is timed. One iteration: the leaves' ``.grad`` is dropped (untimed), the forward is
timed, then the backward (``out.backward(grad_out)``, or ``backward()`` for a scalar
loss). A worker first warms each case up (Numba compiles or loads its cache, the
allocator fills: at least 5 iterations and 0.5 s), picks an iteration count so one round
takes about ``--target`` seconds from the second half of the warm-up, runs that count once
more untimed (PyTorch's first rounds otherwise page-fault: glibc's malloc hands big blocks
back to the system until its thresholds adapt), and reports the median iteration of each
round. AdamW,
clip-grad-norm and the column sums have no backward: the step / the reduction is the
forward. The fixed cost of one op (``a + b`` on 4x4, with and without an input that
requires grad; cases ``small_add*``) is timed over 1000 calls per iteration.

Processes (see ``turns.py``): one worker process for Zero, one for PyTorch, one for NumPy's
limits, started afresh per configuration; each on ``--threads`` threads (default 2, the
project machine's cores: ``set_num_threads`` in both frameworks, BLAS's threads for the limits).
``--threads 1`` compares the kernels themselves, one core each, without either framework's
way of splitting a loop over threads. Round r runs every case once in each framework, Zero
first in even rounds and PyTorch first in odd ones, then the limit worker. The table quotes
the median over rounds of each framework's time and the median of the per-round ratios Zero
/ PyTorch, with their range. A case whose per-round times spread by more than
``--retry-spread`` (max-min over median) in either framework gets ``--extra-rounds`` more
rounds: on a shared machine a disturbed round shows up as such a spread. A case that fails
in a framework is marked so in the table, with the worker's error below it, and the run
goes on without it.

Work counted. Memory-bound cases: the minimal bytes read + written, float32 (4 bytes),
int64 targets and ids (8 bytes): each operand read once and each result written once per
direction; a result that a smarter kernel need not store (softmax's probabilities in
cross-entropy's backward, dropout's mask, which can be regenerated from the seed) is not
counted. GEMM-bound cases: 2*m*k*n per product, the products the math needs (a backward
that recomputes the forward's hidden layer, as Zero's FFN does, does more than counted;
causal attention counts the lower triangle only). Achieved = work / median time.

Limits, measured in the same run by a NumPy worker, each round, best of several: memory-bound
cases against the copy bandwidth of a 64 MiB float32 array (``np.copyto``, read + write
counted, 2 * 64 MiB per copy; arrays that fit in cache can beat it, so more than 100 % is
possible for small shapes); GEMM-bound cases against NumPy's (OpenBLAS) GFLOP/s doing that
case's products at their shapes and transpositions (full squares for attention). The
table quotes the median over rounds of these bests.

On a GPU (``--device cuda``, what scripts/gpu-check.sh runs): every operand on the GPU,
each timed section ended by a synchronisation (the times are what a step waits for,
launches and Python included); PyTorch with its defaults (float32 products without
TF32, as Zero's); the limits from CuPy: a 256 MiB device-to-device copy (larger than
the L2) and cuBLAS at each case's products.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import platform
import statistics
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import turns  # the sibling module, whichever directory the script runs from

F32, I64 = 4, 8
SMALL_OP_CALLS = 1000


@dataclass(frozen=True)
class GPTShape:
    name: str
    layers: int
    heads: int
    width: int
    batch: int
    block: int
    vocab: int = 65

    @property
    def tokens(self) -> int:  # N
        return self.batch * self.block

    @property
    def head_dim(self) -> int:  # D
        return self.width // self.heads

    @property
    def label(self) -> str:
        return f"{self.layers}x{self.heads}x{self.width} B{self.batch} T{self.block}"

    def parameter_shapes(self) -> list[tuple[int, ...]]:
        """The parameters of ``zero.models.GPT`` in its order (the worker checks this)."""
        C, V, T = self.width, self.vocab, self.block
        shapes: list[tuple[int, ...]] = [(V, C), (T, C)]
        for _ in range(self.layers):
            shapes += [(C,), (C,), (3 * C, C), (3 * C,), (C, C), (C,),
                       (C,), (C,), (4 * C, C), (4 * C,), (C, 4 * C), (C,)]
        return shapes + [(C,), (C,)]


CONFIGS = {s.name: s for s in (GPTShape("tiny", 2, 4, 128, 16, 64), GPTShape("small", 4, 4, 128, 32, 64),
                               GPTShape("medium", 4, 4, 256, 32, 128), GPTShape("book", 6, 6, 384, 64, 256))}


# -- the frameworks, behind one interface ------------------------------------------------------


class Lib:
    """Zero or PyTorch on one device: tensor creation, the wait for the device, and the few
    calls whose names differ."""

    def __init__(self, name: str, device: str = "cpu", threads: int = 2):
        self.name, self.device = name, device
        if name == "zero":
            import zero
            from zero.nn import functional
            from zero.nn.utils import clip_grad_norm_

            zero.set_num_threads(threads)
            self.module, self.F, self.clip = zero, functional, clip_grad_norm_
        else:
            import torch

            torch.set_num_threads(threads)
            self.module, self.F, self.clip = torch, torch.nn.functional, torch.nn.utils.clip_grad_norm_
        self.no_grad = self.module.no_grad
        self.synchronize = self.module.cuda.synchronize if device == "cuda" else (lambda: None)

    def tensor(self, array: np.ndarray, grad: bool = False):
        if self.name == "zero":
            return self.module.tensor(array, requires_grad=grad, device=self.device)
        return self.module.from_numpy(np.array(array)).to(self.device).requires_grad_(grad)

    def ffn(self, x, w1, b1, w2, b2):
        if self.name == "zero":
            return self.F.ffn(x, w1, b1, w2, b2)
        return self.F.linear(self.F.gelu(self.F.linear(x, w1, b1)), w2, b2)  # PyTorch keeps the hidden

    def linear_cross_entropy(self, x, weight, target):
        if self.name == "zero":
            return self.F.linear_cross_entropy(x, weight, target)
        return self.F.cross_entropy(self.F.linear(x, weight), target)

    def adamw(self, params):
        return self.module.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)


class Pool:
    """Operands by name, made once per worker from a seed derived from the name, so both
    frameworks get the same values and cases that share a shape share the arrays."""

    def __init__(self, lib: Lib):
        self.lib = lib
        self.tensors: dict = {}

    @staticmethod
    def rng(key: str, shape) -> np.random.Generator:
        return np.random.default_rng(zlib.crc32(f"{key}{tuple(shape)}".encode()))

    def normal(self, key: str, shape, scale: float = 1.0, grad: bool = False):
        k = (key, tuple(shape), grad)
        if k not in self.tensors:
            array = self.rng(key, shape).standard_normal(shape, dtype=np.float32) * np.float32(scale)
            self.tensors[k] = self.lib.tensor(array, grad)
        return self.tensors[k]

    def integers(self, key: str, high: int, shape):
        k = (key, tuple(shape), high)
        if k not in self.tensors:
            self.tensors[k] = self.lib.tensor(self.rng(key, shape).integers(0, high, shape, dtype=np.int64))
        return self.tensors[k]


@dataclass
class Runner:
    forward: Callable
    backward: Callable | None = None
    leaves: list = field(default_factory=list)


@dataclass
class Case:
    name: str
    shape: str
    unit: str          # "GB/s" (memory-bound), "GFLOP/s" (GEMM-bound) or "us" (fixed cost of one op)
    forward: float     # bytes or flops of the forward (the step, for AdamW / clip)
    backward: float    # of the backward; 0 when there is none
    formula: str
    build: Callable[[Lib, Pool], Runner]
    gemms: tuple = ()  # ((batch, m, k, n, transpose_a, transpose_b), ...): the products, for the limit
    calls: int = 1     # calls per timed iteration


def elementwise(s: GPTShape) -> list[Case]:
    N, C = s.tokens, s.width
    n1, n4 = N * C, N * 4 * C
    m = 4 * C

    def unary(op):
        def build(lib, pool):
            x = pool.normal("h", (N, m), grad=True)
            g = pool.normal("g_h", (N, m))
            return Runner(lambda: op(lib, x), lambda y: y.backward(g), [x])
        return build

    def add(lib, pool):
        a, b = pool.normal("x", (N, C), grad=True), pool.normal("y", (N, C), grad=True)
        g = pool.normal("g_x", (N, C))
        return Runner(lambda: a + b, lambda y: y.backward(g), [a, b])

    def add_bias(lib, pool):
        x, b = pool.normal("h", (N, m), grad=True), pool.normal("b_h", (m,), grad=True)
        g = pool.normal("g_h", (N, m))
        return Runner(lambda: x + b, lambda y: y.backward(g), [x, b])

    def mul(lib, pool):
        a, b = pool.normal("x", (N, C), grad=True), pool.normal("y", (N, C), grad=True)
        g = pool.normal("g_x", (N, C))
        return Runner(lambda: a * b, lambda y: y.backward(g), [a, b])

    gelu_bytes = "fwd 4*(n + n) read x, write y; bwd 4*(3n) read grad, x, write grad_x; n = N*4C"
    return [
        Case("relu", f"({N}, {m})", "GB/s", F32 * 2 * n4, F32 * 3 * n4, gelu_bytes,
             unary(lambda lib, x: lib.F.relu(x))),
        Case("add (residual)", f"({N}, {C}) + ({N}, {C})", "GB/s", F32 * 3 * n1, F32 * 3 * n1,
             "fwd 4*3n read a, b, write y; bwd 4*3n read grad, write grad_a, grad_b; n = N*C", add),
        Case("add (x + bias)", f"({N}, {m}) + ({m},)", "GB/s", F32 * (2 * n4 + m), F32 * (2 * n4 + m),
             "fwd 4*(2n + 4C) read x, b, write y; bwd 4*(2n + 4C) read grad once, write grad_x and the "
             "column sums grad_b; n = N*4C", add_bias),
        Case("mul", f"({N}, {C}) * ({N}, {C})", "GB/s", F32 * 3 * n1, F32 * 5 * n1,
             "fwd 4*3n read a, b, write y; bwd 4*5n read grad, a, b, write grad_a, grad_b; n = N*C", mul),
        Case("gelu (exact)", f"({N}, {m})", "GB/s", F32 * 2 * n4, F32 * 3 * n4, gelu_bytes,
             unary(lambda lib, x: lib.F.gelu(x))),
        Case("gelu (tanh)", f"({N}, {m})", "GB/s", F32 * 2 * n4, F32 * 3 * n4, gelu_bytes,
             unary(lambda lib, x: lib.F.gelu(x, approximate="tanh"))),
    ]


def rows(s: GPTShape) -> list[Case]:
    """Row-wise kernels: softmax at attention shapes, losses, layer norm, dropout, embedding."""
    N, C, V, T = s.tokens, s.width, s.vocab, s.block
    R = s.batch * s.heads * T
    nr, nv, n1 = R * T, N * V, N * C

    def softmax(log):
        def build(lib, pool):
            x, g = pool.normal("scores", (R, T), grad=True), pool.normal("g_scores", (R, T))
            fn = lib.F.log_softmax if log else lib.F.softmax
            return Runner(lambda: fn(x, -1), lambda y: y.backward(g), [x])
        return build

    def cross_entropy(lib, pool):
        x, t = pool.normal("logits", (N, V), grad=True), pool.integers("targets", V, (N,))
        return Runner(lambda: lib.F.cross_entropy(x, t), lambda y: y.backward(), [x])

    def nll(lib, pool):
        x, t = pool.normal("logits", (N, V), grad=True), pool.integers("targets", V, (N,))
        return Runner(lambda: lib.F.nll_loss(x, t), lambda y: y.backward(), [x])

    def layer_norm(lib, pool):
        x, g = pool.normal("x", (N, C), grad=True), pool.normal("g_x", (N, C))
        w, b = pool.normal("ln_w", (C,), grad=True), pool.normal("ln_b", (C,), 0.1, grad=True)
        return Runner(lambda: lib.F.layer_norm(x, (C,), w, b), lambda y: y.backward(g), [x, w, b])

    def dropout(lib, pool):
        x, g = pool.normal("x", (N, C), grad=True), pool.normal("g_x", (N, C))
        return Runner(lambda: lib.F.dropout(x, 0.2, training=True), lambda y: y.backward(g), [x])

    def embedding(lib, pool):
        w, ids = pool.normal("wte", (V, C), 0.02, grad=True), pool.integers("ids", V, (s.batch, T))
        g = pool.normal("g_emb", (s.batch, T, C))
        return Runner(lambda: lib.F.embedding(ids, w), lambda y: y.backward(g), [w])

    softmax_bytes = "fwd 4*2n read x, write y; bwd 4*3n read grad, y, write grad_x; n = R*T"
    return [
        Case("softmax", f"({R}, {T})", "GB/s", F32 * 2 * nr, F32 * 3 * nr, softmax_bytes, softmax(False)),
        Case("log_softmax", f"({R}, {T})", "GB/s", F32 * 2 * nr, F32 * 3 * nr, softmax_bytes, softmax(True)),
        Case("cross_entropy", f"({N}, {V})", "GB/s", F32 * nv + I64 * N, 2 * F32 * nv + I64 * N,
             "fwd 4n + 8N read logits, targets; bwd 4*2n + 8N read logits, targets, write grad; n = N*V",
             cross_entropy),
        Case("nll_loss", f"({N}, {V})", "GB/s", (F32 + I64) * N, F32 * nv + I64 * N,
             "fwd 12N read the picked log-probabilities and targets; bwd 4n + 8N write the (mostly zero) "
             "grad, read targets; n = N*V", nll),
        Case("layer_norm", f"({N}, {C})", "GB/s", F32 * (2 * n1 + 2 * N), F32 * (3 * n1 + 2 * N),
             "fwd 4*(2n + 2N) read x, write y, mean, rstd; bwd 4*(3n + 2N) read grad, x, mean, rstd, write "
             "grad_x (weight, bias, their grads: 4C each, left out); n = N*C", layer_norm),
        Case("dropout p=0.2", f"({N}, {C})", "GB/s", F32 * 2 * n1, F32 * 2 * n1,
             "fwd 4*2n read x, write y; bwd 4*2n read grad, write grad_x (the mask is not counted: it can be "
             "regenerated from the seed; PyTorch stores one byte per element); n = N*C", dropout),
        Case("embedding", f"ids ({s.batch}, {T}), table ({V}, {C})", "GB/s", F32 * (n1 + V * C) + I64 * N,
             F32 * (n1 + V * C) + I64 * N,
             "fwd 4*(N*C + V*C) + 8N read ids, table, write rows; bwd (scatter-add) the same: read grad, "
             "ids, write grad_table", embedding),
    ]


def products(s: GPTShape) -> list[Case]:
    """GEMM-bound cases: attention and the fused linear layers."""
    N, C, V, T, H, D = s.tokens, s.width, s.vocab, s.block, s.heads, s.head_dim
    BH = s.batch * H

    def attention(lib, pool):
        q, k, v = (pool.normal(name, (s.batch, H, T, D), grad=True) for name in ("q", "k", "v"))
        g = pool.normal("g_attn", (s.batch, H, T, D))
        return Runner(lambda: lib.F.scaled_dot_product_attention(q, k, v, is_causal=True),
                      lambda y: y.backward(g), [q, k, v])

    def linear(lib, pool):
        x, g = pool.normal("x", (N, C), grad=True), pool.normal("g_qkv", (N, 3 * C))
        w, b = pool.normal("w_qkv", (3 * C, C), 0.02, grad=True), pool.normal("b_qkv", (3 * C,), 0.02, grad=True)
        return Runner(lambda: lib.F.linear(x, w, b), lambda y: y.backward(g), [x, w, b])

    def ffn(lib, pool):
        x, g = pool.normal("x", (N, C), grad=True), pool.normal("g_x", (N, C))
        w1, b1 = pool.normal("w1", (4 * C, C), 0.02, grad=True), pool.normal("b1", (4 * C,), 0.02, grad=True)
        w2, b2 = pool.normal("w2", (C, 4 * C), 0.02, grad=True), pool.normal("b2", (C,), 0.02, grad=True)
        return Runner(lambda: lib.ffn(x, w1, b1, w2, b2), lambda y: y.backward(g), [x, w1, b1, w2, b2])

    def linear_cross_entropy(lib, pool):
        x, t = pool.normal("x", (N, C), grad=True), pool.integers("targets", V, (N,))
        w = pool.normal("wte", (V, C), 0.02, grad=True)
        return Runner(lambda: lib.linear_cross_entropy(x, w, t), lambda y: y.backward(), [x, w])

    return [
        Case("attention (causal)", f"({s.batch}, {H}, {T}, {D})", "GFLOP/s", 2 * BH * T * T * D,
             4 * BH * T * T * D,
             "fwd 2*BH*T^2*D (S = QK^T and O = PV, lower triangle); bwd 4*BH*T^2*D (dV, dP, dQ, dK); limit: "
             "the six full (T, D)x(D, T) / (T, T)x(T, D) products batched over B*H",
             attention, ((BH, T, D, T, False, True), (BH, T, T, D, False, False), (BH, T, T, D, True, False),
                         (BH, T, D, T, False, True), (BH, T, T, D, False, False), (BH, T, T, D, True, False))),
        Case("linear (qkv)", f"({N}, {C}) -> {3 * C}", "GFLOP/s", 2 * N * C * 3 * C, 4 * N * C * 3 * C,
             "fwd 2*N*C*3C (x W^T); bwd 2 * 2*N*C*3C (grad W, grad x); bias add and column sums not counted",
             linear, ((1, N, C, 3 * C, False, True), (1, N, 3 * C, C, False, False), (1, 3 * C, N, C, True, False))),
        Case("ffn", f"({N}, {C}) -> {4 * C} -> {C}", "GFLOP/s", 16 * N * C * C, 32 * N * C * C,
             "fwd 2 * 2*N*C*4C; bwd 4 * 2*N*C*4C (Zero's recompute of the hidden, 2*N*C*4C more, not "
             "counted); PyTorch: linear -> gelu -> linear, keeping the hidden",
             ffn, ((1, N, C, 4 * C, False, True), (1, N, 4 * C, C, False, True), (1, N, C, 4 * C, False, False),
                   (1, C, N, 4 * C, True, False), (1, N, 4 * C, C, False, False), (1, 4 * C, N, C, True, False))),
        Case("linear_cross_entropy", f"({N}, {C}) x ({V}, {C})", "GFLOP/s", 2 * N * C * V, 4 * N * C * V,
             "fwd 2*N*C*V (logits); bwd 2 * 2*N*C*V (grad x, grad weight); PyTorch: linear -> cross_entropy",
             linear_cross_entropy, ((1, N, C, V, False, True), (1, N, V, C, False, False),
                                    (1, V, N, C, True, False))),
    ]


def whole_model(s: GPTShape) -> list[Case]:
    """Cases over every parameter of the configuration's GPT, and the bias gradients' reduction."""
    shapes = s.parameter_shapes()
    P = sum(math.prod(shape) for shape in shapes)
    N, m = s.tokens, 4 * s.width

    def parameters(lib, pool, prefix):
        params = [pool.normal(f"{prefix}{i}", shape, 0.02, grad=True) for i, shape in enumerate(shapes)]
        for i, p in enumerate(params):
            if p.grad is None:
                p.grad = pool.normal(f"{prefix}grad{i}", p.shape, 1e-3)
        return params

    def adamw(lib, pool):
        if lib.name == "zero":
            check_parameter_shapes(s)
        optimizer = lib.adamw(parameters(lib, pool, "adamw"))
        return Runner(optimizer.step)

    def clip(lib, pool):
        params = parameters(lib, pool, "clip")
        return Runner(lambda: lib.clip(params, 1e-3))

    def column_sums(lib, pool):
        g = pool.normal("g_h", (N, m))

        def forward():
            with lib.no_grad():
                return g.sum(0)
        return Runner(forward)

    return [
        Case("AdamW step", f"{len(shapes)} tensors, {P:,} parameters", "GB/s", F32 * 7 * P, 0,
             "4*7P: read p, grad, m, v; write p, m, v (lr 1e-3, betas 0.9, 0.99, weight decay 0.1; "
             "PyTorch's default implementation)", adamw),
        Case("clip_grad_norm_", f"{len(shapes)} tensors, {P:,} parameters", "GB/s", F32 * 3 * P, 0,
             "4*3P: read every grad for the norm, read + write it to scale (max_norm 1e-3, so every call "
             "scales)", clip),
        Case("column sums", f"({N}, {m}) -> ({m},)", "GB/s", F32 * (N * m + m), 0,
             "4*(n + 4C) read the rows, write the sums; x.sum(0) without grad (what a bias gradient "
             "needs); n = N*4C", column_sums),
    ]


def small_ops() -> list[Case]:
    def add(grad):
        def build(lib, pool):
            a, b = pool.normal("a4", (4, 4), grad=grad), pool.normal("b4", (4, 4))

            def forward():
                for _ in range(SMALL_OP_CALLS):
                    a + b
            return Runner(forward)
        return build

    return [Case("small_add", "(4, 4) + (4, 4)", "us", 0, 0, "time per call, no input requires grad", add(False),
                 calls=SMALL_OP_CALLS),
            Case("small_add_grad", "(4, 4) + (4, 4), a requires grad", "us", 0, 0,
                 "time per call, the graph recorded", add(True), calls=SMALL_OP_CALLS)]


def all_cases(s: GPTShape | None) -> list[Case]:
    if s is None:
        return small_ops()
    return elementwise(s) + rows(s) + products(s) + whole_model(s)


def check_parameter_shapes(s: GPTShape) -> None:
    from zero.models import GPT, GPTConfig

    model = GPT(GPTConfig(vocab_size=s.vocab, block_size=s.block, n_layer=s.layers, n_head=s.heads,
                          n_embd=s.width, dropout=0.0))
    actual = [tuple(p.shape) for p in model.parameters()]
    if actual != s.parameter_shapes():
        raise AssertionError(f"GPTShape.parameter_shapes() no longer matches zero.models.GPT: {actual}")


# -- workers -----------------------------------------------------------------------------------


def time_iterations(runner: Runner, count: int, synchronize: Callable) -> tuple[list[float], list[float]]:
    forward, backward = [], []
    for _ in range(count):
        for leaf in runner.leaves:
            leaf.grad = None
        synchronize()
        start = time.perf_counter()
        out = runner.forward()
        synchronize()
        middle = time.perf_counter()
        if runner.backward is not None:
            runner.backward(out)
        synchronize()
        end = time.perf_counter()
        del out
        forward.append(middle - start)
        backward.append(end - middle)
    return forward, backward


def framework_worker(framework: str, config: str | None, device: str, threads: int) -> None:
    lib = Lib(framework, device, threads)
    shape = CONFIGS[config] if config else None
    cases = {c.name: c for c in all_cases(shape)}
    pool, runners, counts = Pool(lib), {}, {}

    def handle(request: dict) -> dict:
        if request["cmd"] == "ready":
            return {"version": lib.module.__version__}
        case = cases[request["case"]]
        if case.name not in runners:
            runners[case.name] = runner = case.build(lib, pool)
            start, warm = time.perf_counter(), []
            while len(warm) < 5 or (time.perf_counter() - start < 0.5 and len(warm) < 200):
                f, b = time_iterations(runner, 1, lib.synchronize)
                warm.append(f[0] + b[0])
            each = statistics.median(warm[len(warm) // 2:])
            counts[case.name] = max(1, min(1000, round(request["target"] / max(each, 1e-9))))
            time_iterations(runner, counts[case.name], lib.synchronize)  # once more untimed: the allocators settle
        forward, backward = time_iterations(runners[case.name], counts[case.name], lib.synchronize)
        for leaf in runners[case.name].leaves:
            leaf.grad = None
        totals = [f + b for f, b in zip(forward, backward)]
        return {"fwd": statistics.median(forward) / case.calls, "bwd": statistics.median(backward) / case.calls,
                "total": statistics.median(totals) / case.calls, "count": counts[case.name]}

    turns.serve(handle)


def best_seconds(fn, repeats: int, synchronize: Callable = lambda: None) -> float:
    fn()
    synchronize()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        synchronize()
        best = min(best, time.perf_counter() - start)
    return best


COPY_MIB = {"cpu": 64, "cuda": 256}  # the copy that measures the memory's bandwidth: larger than the caches


def limit_worker(config: str | None, device: str, threads: int) -> None:
    """The machine's limits: copy bandwidth (GB/s, read + write) and GEMM GFLOP/s at a case's
    products, with NumPy (OpenBLAS, on ``threads`` threads) on the CPU or CuPy (cuBLAS) on
    the GPU."""
    if device == "cpu":
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads, user_api="blas")
    shape = CONFIGS[config] if config else None
    cases = {c.name: c for c in all_cases(shape)}
    if device == "cuda":
        import cupy as xp

        synchronize = xp.cuda.Device().synchronize
        gpu = xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)["name"]
        ready = {"name": "cupy", "device": gpu.decode() if isinstance(gpu, bytes) else gpu}
    else:
        xp, synchronize, ready = np, (lambda: None), {"name": "numpy"}
    source = xp.ones(COPY_MIB[device] << 18, xp.float32)
    target = xp.empty_like(source)
    products_of: dict = {}

    def gemm_operands(spec):
        batch, m, k, n, transpose_a, transpose_b = spec
        rng = np.random.default_rng(0)
        lead = (batch,) if batch > 1 else ()
        a = xp.asarray(rng.standard_normal(lead + ((k, m) if transpose_a else (m, k)), dtype=np.float32))
        b = xp.asarray(rng.standard_normal(lead + ((n, k) if transpose_b else (k, n)), dtype=np.float32))
        a, b = (a.swapaxes(-1, -2) if transpose_a else a), (b.swapaxes(-1, -2) if transpose_b else b)
        return a, b, xp.empty(lead + (m, n), xp.float32)

    def handle(request: dict) -> dict:
        if request["cmd"] == "ready":
            return {"version": xp.__version__, **ready}
        if request["cmd"] == "copy":
            seconds = best_seconds(lambda: xp.copyto(target, source), 7, synchronize)
            return {"rate": 2 * source.nbytes / seconds / 1e9}
        case = cases[request["case"]]
        if case.name not in products_of:
            products_of.clear()  # one case's operands at a time
            products_of[case.name] = [gemm_operands(spec) for spec in case.gemms]
        operands = products_of[case.name]
        flops = sum(2 * b * m * k * n for b, m, k, n, _, _ in case.gemms)

        def run():
            for a, b, out in operands:
                xp.matmul(a, b, out=out)
        return {"rate": flops / best_seconds(run, 3, synchronize) / 1e9}

    turns.serve(handle)


# -- the main process --------------------------------------------------------------------------


def attempt(label: str, call: Callable[[], dict]) -> tuple[dict | None, str | None]:
    """(``call()``'s reply, None), or (None, the last line of the worker's error) when it
    fails, printed: the run goes on, so that one broken case (on a GPU run, say) costs its
    row and not the table."""
    try:
        return call(), None
    except turns.WorkerError as error:
        message = str(error).strip().splitlines()[-1]
        print(f"  {label} failed: {message}", file=sys.stderr, flush=True)
        return None, message


def measure_config(config: str | None, cases: list[Case], args, frameworks: list[str]) -> dict:
    """{case name: {"rounds": [{framework: reply}, ...], "limit": [rates], "failed": {framework:
    error}}, "copy": [rates], "versions": {...}}"""
    script = str(Path(__file__).resolve())
    extra = (["--config", config] if config else []) + ["--device", args.device, "--threads", str(args.threads)]
    workers = {name: turns.Worker(name, turns.worker_command(script, name, *extra)) for name in frameworks}
    limits = turns.Worker("limits", turns.worker_command(script, "numpy", *extra))
    patience = turns.Patience(args.patience, args.quiet)
    try:
        versions = {name: (attempt(name, lambda w=w: w.call(cmd="ready"))[0] or {}).get("version", "failed")
                    for name, w in workers.items()}
        limit_library = (attempt("limits", lambda: limits.call(cmd="ready"))[0]
                         or {"name": "limits", "version": "failed"})
        versions[limit_library["name"]] = limit_library["version"]
        if "device" in limit_library:
            versions["GPU"] = limit_library["device"]
        results: dict = {c.name: {"rounds": [], "limit": [], "failed": {}} for c in cases}
        results.update(copy=[], versions=versions)

        def one_round(case: Case, r: int) -> None:
            record = {"probe": patience.wait(10.0)}
            failed = results[case.name]["failed"]
            for name in turns.order(frameworks, r):
                if name in failed:
                    continue
                request = dict(cmd="run", case=case.name, target=args.target)
                reply, error = attempt(f"{case.name}: {name}", lambda name=name, request=request: turns.measured(
                    workers[name], request, args.attempts, patience))
                if error is None:
                    record[name] = reply
                else:
                    failed[name] = error
            results[case.name]["rounds"].append(record)
            if case.gemms:
                reply, _ = attempt(f"{case.name}: limit", lambda: limits.call(cmd="gemm", case=case.name))
                results[case.name]["limit"].append(reply and reply["rate"])

        for r in range(args.rounds):
            patience.wait(args.round_wait)
            reply, _ = attempt("copy bandwidth", lambda: limits.call(cmd="copy"))
            results["copy"].append(reply and reply["rate"])
            for case in cases:
                one_round(case, r)
            print(f"  {config or 'small ops'}: round {r + 1}/{args.rounds} done, {patience.left:.0f} s of "
                  "patience left", file=sys.stderr, flush=True)
        for case in cases:
            used = turns.quiet_rounds(results[case.name]["rounds"], args.quiet)
            spreads = [turns.spread([record[name]["total"] for record in used if name in record]) or 0.0
                       for name in frameworks]
            if max(spreads) > args.retry_spread:
                print(f"  {case.name}: per-round spread {max(spreads):.0%}, {args.extra_rounds} more rounds",
                      file=sys.stderr, flush=True)
                for r in range(args.rounds, args.rounds + args.extra_rounds):
                    one_round(case, r)
        return results
    finally:
        for w in [*workers.values(), limits]:
            w.close()


def fmt(value, digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if value < 100 else f"{value:,.0f}"


def summarise(case: Case, data: dict, copy_rate: float | None, threshold: float) -> dict:
    used = turns.quiet_rounds(data["rounds"], threshold)
    z = [record.get("zero") for record in used]   # None: that framework failed this case
    t = [record.get("torch") for record in used]
    quiet = sum(turns.is_quiet(record, threshold) for record in data["rounds"])
    row = {"case": case.name, "shape": case.shape, "unit": case.unit, "rounds": len(data["rounds"]),
           "quiet_rounds": quiet, "failed": data.get("failed", {}), "has_backward": bool(case.backward)}

    def values(replies: list, key: str) -> list:
        return [reply[key] if reply else None for reply in replies]

    for key in ("fwd", "bwd", "total"):
        row[f"zero_{key}"] = turns.median(values(z, key))
        row[f"torch_{key}"] = turns.median(values(t, key))
        per_round = turns.ratios(values(z, key), values(t, key))
        row[f"ratio_{key}"] = turns.median(per_round)
        if key == "total":
            row["ratio_range"] = (min(per_round), max(per_round)) if per_round else None
    row["zero_spread"] = turns.spread(values(z, "total"))
    row["torch_spread"] = turns.spread(values(t, "total"))
    if case.unit != "us":
        row["limit"] = turns.median(data["limit"]) if case.gemms else copy_rate

        def rate(work: float, seconds: float | None) -> float | None:
            return work / seconds / 1e9 if work and seconds else None
        row["achieved"] = rate(case.forward + case.backward, row["zero_total"])
        row["achieved_fwd"] = rate(case.forward, row["zero_fwd"])
        row["achieved_bwd"] = rate(case.backward, row["zero_bwd"])
        row["torch_achieved"] = rate(case.forward + case.backward, row["torch_total"])
    return row


def kernel_table(rows_by_config: dict) -> str:
    header = ["config", "case", "shape", "Zero fwd ms", "Zero bwd ms", "PyTorch fwd ms", "PyTorch bwd ms",
              "Zero/PyTorch f+b (range)", "fwd", "bwd", "Zero achieved f+b", "limit", "% of limit f+b (fwd / bwd)",
              "PyTorch % of limit", "quiet rounds"]
    body = []
    for config, rows_ in rows_by_config.items():
        for row in rows_:
            if row["unit"] == "us":
                continue
            ms = {k: None if row[k] is None else row[k] * 1e3 for k in
                  ("zero_fwd", "zero_bwd", "torch_fwd", "torch_bwd")}
            has_bwd = row["has_backward"]
            limit = row["limit"]
            ratio = ratio_cell(row)

            def pct(v, limit=limit):
                return "-" if v is None or not limit else f"{100 * v / limit:.0f}"
            body.append([config, row["case"], row["shape"], fmt(ms["zero_fwd"], 3),
                         fmt(ms["zero_bwd"], 3) if has_bwd else "-", fmt(ms["torch_fwd"], 3),
                         fmt(ms["torch_bwd"], 3) if has_bwd else "-", ratio, fmt(row["ratio_fwd"]),
                         fmt(row["ratio_bwd"]) if has_bwd else "-", f"{fmt(row['achieved'], 1)} {row['unit']}",
                         fmt(limit, 1), f"{pct(row['achieved'])} ({pct(row['achieved_fwd'])} / "
                         f"{pct(row['achieved_bwd'])})" if has_bwd else pct(row["achieved"]),
                         pct(row["torch_achieved"]), rounds_cell(row)])
    return turns.markdown(header, body, "lll" + "r" * (len(header) - 3))


FRAMEWORK_NAMES = {"zero": "Zero", "torch": "PyTorch"}


def ratio_cell(row: dict) -> str:
    """The median of the per-round ratios Zero / PyTorch and their range, or who failed."""
    if row["failed"]:
        return "failed: " + ", ".join(FRAMEWORK_NAMES.get(name, name) for name in sorted(row["failed"]))
    ratio = fmt(row["ratio_total"])
    if row["ratio_range"]:
        ratio += f" ({row['ratio_range'][0]:.2f}–{row['ratio_range'][1]:.2f})"
    return ratio


def failure_lines(rows_by_config: dict) -> list[str]:
    """A line per case and framework that failed, with the last line of its error."""
    return [f"- {config}, {row['case']}: {FRAMEWORK_NAMES.get(name, name)}: {error}"
            for config, rows_ in rows_by_config.items() for row in rows_ for name, error in row["failed"].items()]


def rounds_cell(row: dict) -> str:
    """quiet / all rounds; a star where fewer than two were quiet (then every round is used)."""
    return f"{row['quiet_rounds']}/{row['rounds']}" + ("*" if row["quiet_rounds"] < 2 else "")


def small_op_table(rows_: list) -> str:
    body = []
    for row in rows_:
        body.append([row["case"], row["shape"], fmt(row["zero_total"] and row["zero_total"] * 1e6),
                     fmt(row["torch_total"] and row["torch_total"] * 1e6), ratio_cell(row), rounds_cell(row)])
    return turns.markdown(["case", "shape", "Zero µs/call", "PyTorch µs/call", "Zero/PyTorch (range)",
                           "quiet rounds"], body, "llrrrr")


def load_summary(raw: dict, threshold: float) -> str:
    """How often other processes (or the hypervisor) took the machine, and how much."""
    records = [record for results in raw.values() for data in results.values() if isinstance(data, dict)
               for record in data.get("rounds", [])]
    measurements = [reply for record in records for reply in turns.replies(record)]
    if not measurements:
        return ""
    foreign = [reply.get("foreign", 0.0) for reply in measurements]
    probes = [record["probe"] for record in records if "probe" in record]
    repeated = sum(reply.get("attempts", 1) > 1 for reply in measurements)
    disturbed = sum(f > threshold for f in foreign)
    return (f"Other processes during the {len(measurements)} measurements kept busy a median "
            f"{statistics.median(foreign):.2f} cores (largest {max(foreign):.2f}); {repeated} measurements were "
            f"repeated for it, {disturbed} stayed above {threshold} cores. Probes before each case and round: "
            f"median {statistics.median(probes):.2f} cores lost, largest {max(probes):.2f}, "
            f"{sum(p >= threshold for p in probes)} of {len(probes)} at or above {threshold}. The table uses the "
            "rounds free of both (its last column), where at least two are.")


def environment(versions: dict) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    parts = [datetime.date.today().isoformat(), f"{cpu}, {os.cpu_count()} cores", f"Python {platform.python_version()}"]
    parts += [f"{name} {version}" for name, version in versions.items()]
    return ", ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="tiny,small,medium,book",
                        help=f"comma-separated, of {', '.join(CONFIGS)}; 'none' for the small-op cases only")
    parser.add_argument("--cases", default="", help="comma-separated case names or name prefixes (default: all)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--target", type=float, default=0.3, help="seconds per case, framework and round")
    parser.add_argument("--retry-spread", type=float, default=0.5,
                        help="rerun a case whose per-round times spread by more than this (max-min over median)")
    parser.add_argument("--extra-rounds", type=int, default=2)
    parser.add_argument("--quiet", type=float, default=0.15,
                        help="a measurement is disturbed when other processes kept more cores busy than this "
                             "(or a probe just before lost as much)")
    parser.add_argument("--attempts", type=int, default=3, help="tries of a disturbed measurement")
    parser.add_argument("--patience", type=float, default=180.0,
                        help="seconds per configuration to spend waiting for quiet and repeating")
    parser.add_argument("--round-wait", type=float, default=30.0,
                        help="seconds to wait at most for a quiet machine before each round (out of --patience)")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--threads", type=int, default=2,
                        help="CPU threads for every framework (Zero, PyTorch, NumPy's BLAS for the limits); "
                             "1 compares the kernels on one core, without either framework's splitting")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where the kernels run (cuda: what scripts/gpu-check.sh measures)")
    parser.add_argument("--out", help="also write the tables (markdown) to this file")
    parser.add_argument("--json", help="write every per-round figure to this file")
    parser.add_argument("--list", action="store_true", help="print the cases and their formulas, and stop")
    parser.add_argument("--worker", choices=("zero", "torch", "numpy"), help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker == "numpy":
        limit_worker(args.config, args.device, args.threads)
        return 0
    if args.worker:
        framework_worker(args.worker, args.config, args.device, args.threads)
        return 0

    configs = [c for c in args.configs.split(",") if c and c != "none"]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error(f"unknown configurations {unknown}; choose from {list(CONFIGS)}")
    wanted = [w.strip() for w in args.cases.split(",") if w.strip()]

    def selected(cases: list[Case]) -> list[Case]:
        return [c for c in cases if not wanted or any(c.name == w or c.name.startswith(w) for w in wanted)]

    if args.list:
        for case in all_cases(CONFIGS[configs[0] if configs else "tiny"]) + small_ops():
            print(f"{case.name:<22} {case.shape:<34} {case.unit:<8} {case.formula}")
        return 0

    frameworks = ["zero"] + ([] if args.no_torch or importlib.util.find_spec("torch") is None else ["torch"])
    raw: dict = {}
    rows_by_config: dict = {}
    copy_rates: list = []
    versions: dict = {}
    plan = [(c, selected(all_cases(CONFIGS[c]))) for c in configs] + [(None, selected(small_ops()))]
    started = time.perf_counter()
    for config, cases in plan:
        if not cases:
            continue
        label = CONFIGS[config].label if config else "none"
        print(f"{label}: {len(cases)} cases, {args.rounds} rounds", file=sys.stderr, flush=True)
        results = measure_config(config, cases, args, frameworks)
        versions.update(results.pop("versions"))
        copy_rates += [rate for rate in results["copy"] if rate is not None]
        raw[label] = results
        copy_rate = turns.median(results["copy"])
        rows_by_config[label] = [summarise(c, results[c.name], copy_rate, args.quiet) for c in cases]

    big = {k: v for k, v in rows_by_config.items() if k != "none"}
    spreads = [s for rows_ in rows_by_config.values() for row in rows_ for s in (row["zero_spread"],
                                                                                row["torch_spread"]) if s is not None]
    peer = (f"Zero and PyTorch on {args.threads} thread{'s' * (args.threads != 1)}" if args.device == "cpu"
            else "on the GPU, each timed section synchronised")
    lines = [f"Kernels, forward + backward, float32, {args.device} — {environment(versions)}",
             f"`{' '.join(['python', *sys.argv])}`: {args.rounds} rounds (more for disturbed cases), ~{args.target} s "
             f"per case, framework and round; {peer}; {time.perf_counter() - started:.0f} s in all.",
             f"Copy bandwidth ({COPY_MIB[args.device]} MiB, read + write): median "
             f"{fmt(turns.median(copy_rates), 1)} GB/s, "
             f"rounds {fmt(min(copy_rates, default=None), 1)}–{fmt(max(copy_rates, default=None), 1)}."
             if copy_rates else "",
             f"Spread of per-round times (max-min over median, rounds used), over every case and framework: "
             f"median {statistics.median(spreads):.0%}, largest {max(spreads):.0%}." if spreads else "",
             load_summary(raw, args.quiet), ""]
    if big:
        lines += [kernel_table(big), ""]
    if "none" in rows_by_config:
        lines += ["Fixed cost of one op:", "", small_op_table(rows_by_config["none"]), ""]
    failures = failure_lines(rows_by_config)
    if failures:
        lines += ["Failed (the worker's error, last line):", "", *failures, ""]
    text = "\n".join(lines)
    print(text, flush=True)
    if args.out:
        Path(args.out).write_text(text + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": raw,
                                               "rows": rows_by_config}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
