"""Forward + backward time of core ops at GPT-like shapes: Zero beside NumPy doing the
same work by hand, and PyTorch (CPU) when it is installed; plus the fixed cost of one
tiny op.

    python benchmarks/ops.py [--batch 64] [--repeats 7]

The implementations are timed interleaved (one of each, repeated), and the table shows
medians and ratios, so a noisy shared machine affects all columns alike.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import zero
from zero.nn import functional as F

try:
    import torch
except ImportError:  # the benchmark runs without PyTorch; its column is then empty
    torch = None


def cases(batch: int, rng):
    """name -> {implementation: callable running forward and backward once}."""
    rows, width, classes = batch * 256, 384, 65
    x = rng.standard_normal((rows, width), dtype=np.float32)
    w = rng.standard_normal((width, width), dtype=np.float32) * 0.05
    b = rng.standard_normal(width, dtype=np.float32)
    g = rng.standard_normal((rows, width), dtype=np.float32)
    logits = rng.standard_normal((rows, classes), dtype=np.float32)
    labels = rng.integers(0, classes, rows)

    zx, zw, zb = (zero.tensor(a, requires_grad=True) for a in (x, w, b))
    zg, zlogits, zlabels = zero.tensor(g), zero.tensor(logits, requires_grad=True), zero.tensor(labels)
    result = {}

    # -- matmul: y = x Wᵀ ---------------------------------------------------------------------
    def zero_matmul():
        (zx @ zw.T).backward(zg)

    def numpy_matmul():
        x @ w.T
        g @ w, g.T @ x

    result["matmul [B*256,384]x[384,384]ᵀ"] = {"zero": zero_matmul, "numpy": numpy_matmul}

    # -- elementwise with broadcast: (x + b) * x ----------------------------------------------
    def zero_elementwise():
        ((zx + zb) * zx).backward(zg)

    def numpy_elementwise():
        s = x + b
        s * x
        gs = g * x
        gs.sum(axis=0), gs + g * s

    result["(x + b) * x, b broadcast"] = {"zero": zero_elementwise, "numpy": numpy_elementwise}

    # -- softmax + cross-entropy ---------------------------------------------------------------
    def zero_cross_entropy():
        F.cross_entropy(zlogits, zlabels).backward()

    def numpy_cross_entropy():
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        loss = (np.log(total[:, 0]) - shifted[np.arange(rows), labels]).mean()
        grad = exp / total
        grad[np.arange(rows), labels] -= 1
        grad /= rows
        return loss, grad

    result[f"cross-entropy [B*256,{classes}]"] = {"zero": zero_cross_entropy, "numpy": numpy_cross_entropy}

    # -- layer norm ---------------------------------------------------------------------------
    gamma = np.ones(width, np.float32)
    zgamma, zbeta = zero.ones(width, requires_grad=True), zero.zeros(width, requires_grad=True)

    def zero_layer_norm():
        F.layer_norm(zx, (width,), zgamma, zbeta).backward(zg)

    def numpy_layer_norm():
        mean = x.mean(axis=1, keepdims=True)
        centred = x - mean
        rstd = 1 / np.sqrt((centred * centred).mean(axis=1, keepdims=True) + 1e-5)
        normed = centred * rstd
        normed * gamma
        gn = g * gamma
        (g * normed).sum(0), g.sum(0)
        rstd * (gn - gn.mean(1, keepdims=True) - normed * (gn * normed).mean(1, keepdims=True))

    result[f"layer norm [B*256,{width}]"] = {"zero": zero_layer_norm, "numpy": numpy_layer_norm}

    if torch is not None:
        tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
        tg, tlogits = torch.tensor(g), torch.tensor(logits, requires_grad=True)
        tlabels, tgamma = torch.tensor(labels), torch.ones(width, requires_grad=True)
        tbeta = torch.zeros(width, requires_grad=True)
        tf = torch.nn.functional
        result["matmul [B*256,384]x[384,384]ᵀ"]["torch"] = lambda: (tx @ tw.T).backward(tg)
        result["(x + b) * x, b broadcast"]["torch"] = lambda: ((tx + tb) * tx).backward(tg)
        result[f"cross-entropy [B*256,{classes}]"]["torch"] = lambda: tf.cross_entropy(tlogits, tlabels).backward()
        result[f"layer norm [B*256,{width}]"]["torch"] = \
            lambda: tf.layer_norm(tx, (width,), tgamma, tbeta).backward(tg)
    return result


def tiny_op_cases():
    """The fixed cost of one small op: what every op pays before any arithmetic."""
    a, b = zero.randn(4, 4), zero.randn(4, 4)
    ag = zero.randn(4, 4, requires_grad=True)
    na, nb = a.numpy(), b.numpy()
    result = {"tiny a + b (4x4)": {"zero": lambda: a + b, "numpy": lambda: na + nb},
              "tiny a + b, a requires grad": {"zero": lambda: ag + b}}
    if torch is not None:
        ta, tb, tag = torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4, requires_grad=True)
        result["tiny a + b (4x4)"]["torch"] = lambda: ta + tb
        result["tiny a + b, a requires grad"]["torch"] = lambda: tag + tb
    return result


def measure(table: dict, repeats: int, inner: int = 1) -> dict:
    """Median seconds per call for every (case, implementation), timed interleaved."""
    samples = {(case, impl): [] for case, impls in table.items() for impl in impls}
    for impls in table.values():  # warm up (Numba compiles, allocator fills)
        for fn in impls.values():
            fn()
    for _ in range(repeats):
        for case, impls in table.items():
            for impl, fn in impls.items():
                start = time.perf_counter()
                for _ in range(inner):
                    fn()
                samples[(case, impl)].append((time.perf_counter() - start) / inner)
    return {key: statistics.median(values) for key, values in samples.items()}


def print_table(title: str, table: dict, medians: dict, unit: str, scale: float) -> None:
    print(f"\n{title}")
    print(f"{'case':<34}{'zero ' + unit:>12}{'numpy ' + unit:>13}{'torch ' + unit:>13}"
          f"{'zero/numpy':>12}{'zero/torch':>12}")
    def cell(v):
        return f"{v * scale:>12.2f}" if v is not None else f"{'-':>12}"

    for case in table:
        z = medians[(case, "zero")]
        n = medians.get((case, "numpy"))
        t = medians.get((case, "torch"))
        ratios = "".join(f"{z / v:>12.2f}" if v else f"{'-':>12}" for v in (n, t))
        print(f"{case:<34}{cell(z)}{cell(n)} {cell(t)}{ratios}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=64, help="sequences of 256 tokens (the book's batch is 64)")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    if torch is not None:
        torch.set_num_threads(zero_threads())
    big = cases(args.batch, rng)
    print(f"forward + backward, batch {args.batch} x 256 tokens, float32, median of {args.repeats} "
          f"interleaved runs (PyTorch {torch.__version__ if torch else 'not installed'})")
    print_table("GPT-like shapes", big, measure(big, args.repeats), "ms", 1e3)
    tiny = tiny_op_cases()
    print_table("fixed cost of one op", tiny, measure(tiny, args.repeats, inner=2000), "us", 1e6)


def zero_threads() -> int:
    import numba

    return numba.config.NUMBA_NUM_THREADS


if __name__ == "__main__":
    main()
