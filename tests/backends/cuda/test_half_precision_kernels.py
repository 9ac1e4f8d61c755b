"""The Triton-backed CUDA kernels on float16 and bfloat16 arrays compute in float32.

Each kernel runs on 16-bit inputs (NumPy float16, ``ml_dtypes.bfloat16``) and is compared
with the CPU kernel run in float32 on the same (rounded) inputs, its results rounded once to
the 16-bit type: the device's must be within two units in the last place of that type
(``close``). Rows are 384 wide (the book's width) or more, so a kernel that summed or
accumulated in 16 bits would be visibly off -- under the interpreter a bfloat16 sum is not
even a sum (it adds bit patterns), and a float16 one loses digits step by step. Without a
GPU these run under TRITON_INTERPRET=1 (see conftest); on a GPU on the compiled kernels, with
CuPy's float16 and bfloat16 arrays (CuPy 14 takes ml_dtypes' bfloat16).
"""
from __future__ import annotations

import numpy as np
import pytest

import zero.backends.cpu.kernels as cpu
import zero.backends.cuda.kernels as cuda
from zero.backends.cuda.kernels.reduction import column_sums

ml_dtypes = pytest.importorskip("ml_dtypes")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
HALVES = (np.dtype(np.float16), BFLOAT16)
EPS = {np.dtype(np.float16): 2.0 ** -10, BFLOAT16: 2.0 ** -7}   # the spacing of the type's numbers at 1
GUARD = 1536.0   # exact in both types
WIDTH = 384


def close(got, want32, dtype, floor=0.05, ulps=2.0, err_msg=""):
    """got (16-bit) within ``ulps`` units in the last place of want32 rounded to ``dtype``;
    below ``floor`` in size, within as many of ``floor`` (results of cancellation)."""
    want = np.asarray(want32, np.float32).astype(dtype).astype(np.float32)
    bound = ulps * EPS[dtype]
    np.testing.assert_allclose(np.asarray(got).astype(np.float32), want, rtol=bound, atol=bound * floor,
                               err_msg=err_msg)


class HalfCase:
    """One kernel on the CPU in float32 and on the device in a 16-bit type, same inputs."""

    def __init__(self, arrays, dtype):
        self.arrays = arrays
        self.dtype = dtype

    def random(self, rng, shape, low=-2.0, high=2.0):
        """Random numbers of the 16-bit type."""
        return rng.uniform(low, high, size=shape).astype(self.dtype)

    def run(self, name, inputs: list, outputs: dict, floor=0.05, ulps=2.0, **kwargs):
        """outputs: name -> (shape, dtype or None for the 16-bit type); compares each
        16-bit output (and float32/float64 ones as close to the float32 result); returns
        the device's outputs and the CPU's (float32)."""
        def widened(a):
            return a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype in HALVES else a

        host = {k: np.zeros(shape, np.float32 if dtype is None else dtype) for k, (shape, dtype) in outputs.items()}
        getattr(cpu, name)(*[widened(a) for a in inputs], *host.values(), **kwargs)
        storages, device = {}, {}
        for k, (shape, dtype) in outputs.items():
            n = int(np.prod(shape))
            storages[k] = self.arrays.put(np.full(n + 1, GUARD, self.dtype if dtype is None else dtype))
            device[k] = storages[k][:n].reshape(shape)
        getattr(cuda, name)(*[self.arrays.put(a) for a in inputs], *device.values(), **kwargs)
        got = {}
        for k, (shape, dtype) in outputs.items():
            storage = self.arrays.get(storages[k])
            assert float(storage[-1]) == GUARD, f"{name}: wrote past the end of {k}"
            got[k] = storage[:-1].reshape(shape)
            if dtype is None:
                close(got[k], host[k], self.dtype, floor, ulps, f"{name}: {k}")
            elif np.dtype(dtype).kind == "f":
                np.testing.assert_allclose(got[k], host[k], rtol=1e-5, atol=1e-5, err_msg=f"{name}: {k}")
            else:
                np.testing.assert_array_equal(got[k], host[k], err_msg=f"{name}: {k}")
        return got, host


@pytest.fixture(params=HALVES, ids=["float16", "bfloat16"])
def case(request, arrays):
    return HalfCase(arrays, request.param)


# -- elementwise ------------------------------------------------------------------------------


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_forward_and_backward(case, approximate):
    rng = np.random.default_rng(1)
    x = case.random(rng, (1025,), -6, 6)
    case.run("gelu", [x], {"out": ((1025,), None)}, approximate=approximate)
    case.run("gelu_backward", [case.random(rng, (1025,)), x], {"out": ((1025,), None)}, approximate=approximate)


def test_dropout_scales_in_float64_and_rounds_once(case):
    rng = np.random.default_rng(2)
    x = case.random(rng, (1025,), 0.5, 2.0)
    got, want = case.run("dropout_forward", [x, 0.3, 12345], {"out": ((1025,), None)}, ulps=0.5)
    assert np.array_equal(got["out"] == 0, want["out"] == 0)


# -- softmax, cross-entropy, NLL ------------------------------------------------------------------


@pytest.mark.parametrize("width", [WIDTH, 4100])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_and_backward(case, width, log):
    rng = np.random.default_rng(width)
    x = case.random(rng, (3, width), -5, 5)
    x[0, :3] = -np.inf
    name = "log_softmax" if log else "softmax"
    got, _ = case.run(f"{name}_forward", [x], {"out": ((3, width), None)}, floor=1e-3 if not log else 0.05)
    case.run(f"{name}_backward", [case.random(rng, (3, width)), got["out"]], {"grad_in": ((3, width), None)},
             floor=1e-3 if not log else 0.05)


def test_masked_softmax(case):
    x = case.random(np.random.default_rng(3), (2, WIDTH), -5, 5)
    x[0] = -np.inf
    got, _ = case.run("masked_softmax_forward", [x], {"out": ((2, WIDTH), None)}, floor=1e-3)
    assert not got["out"][0].astype(np.float32).any()


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_forward_and_backward(case, weighted, smoothing):
    rng = np.random.default_rng(4)
    rows, classes = 5, WIDTH
    logits = case.random(rng, (rows, classes), -4, 4)
    target = rng.integers(0, classes, rows)
    target[2] = -100
    weight = case.random(rng, (classes,), 0.1, 2.0) if weighted else None
    _, want = case.run("cross_entropy_forward", [logits, target, weight, -100, smoothing],
                       {"loss": ((rows,), None), "logsumexp": ((rows,), np.float64)})
    case.run("cross_entropy_backward", [case.random(rng, (rows,)), logits, target, weight, want["logsumexp"], -100,
                                        smoothing], {"grad_logits": ((rows, classes), None)}, floor=1e-3)


@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_and_the_mean_over_kept_rows(case, weighted):
    rng = np.random.default_rng(5)
    rows, classes = 300, 70
    log_probs = case.random(rng, (rows, classes), -6, 0)
    target = rng.integers(0, classes, rows)
    target[1] = -100
    weight = case.random(rng, (classes,), 0.1, 2.0) if weighted else None
    got, _ = case.run("nll_loss_forward", [log_probs, target, weight, -100], {"loss": ((rows,), None)})
    case.run("nll_loss_backward", [case.random(rng, (rows,)), target, weight, -100],
             {"grad_input": ((rows, classes), None)})
    case.run("class_loss_mean", [got["loss"], target, weight, -100], {"mean": ((), None), "divisor": ((), None)},
             ulps=1.0)


# -- layer norm, column sums ------------------------------------------------------------------


@pytest.mark.parametrize("stats", [None, np.float32], ids=["16-bit statistics", "float32 statistics"])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_forward_and_backward(case, stats, affine):
    rng = np.random.default_rng(6)
    rows = 40   # two programs of the backward's 32 rows: their partial sums added in float32
    x = (case.random(rng, (rows, WIDTH)).astype(np.float32) * 3 + 1).astype(case.dtype)
    weight, bias = (case.random(rng, (WIDTH,)) if affine else None for _ in range(2))
    got, _ = case.run("layer_norm_forward", [x, weight, bias, 1e-5],
                      {"out": ((rows, WIDTH), None), "mean": ((rows,), stats), "rstd": ((rows,), stats)})
    grad = case.random(rng, (rows, WIDTH))
    params = {"grad_weight": ((WIDTH,), None), "grad_bias": ((WIDTH,), None)} if affine else {}
    if affine:
        case.run("layer_norm_backward", [grad, x, weight, got["mean"], got["rstd"]],
                 {"grad_x": ((rows, WIDTH), None), **params}, floor=0.5)
    else:   # the CPU kernel takes None for both parameter gradients: compare grad_x alone
        want = np.zeros((rows, WIDTH), np.float32)
        wide = [a.astype(np.float32) for a in (grad, x, got["mean"], got["rstd"])]
        cpu.layer_norm_backward(*wide[:2], None, *wide[2:], want, None, None)
        device = case.arrays.put(np.zeros((rows, WIDTH), case.dtype))
        cuda.layer_norm_backward(*(case.arrays.put(a) for a in (grad, x)), None,
                                 *(case.arrays.put(a) for a in (got["mean"], got["rstd"])), device, None, None)
        close(case.arrays.get(device), want, case.dtype, floor=0.5)


@pytest.mark.parametrize("rows", [40, 4100])
def test_column_sums_add_in_float32(case, rows):
    """4100 rows: several bands, whose float32 sums are added by a second launch."""
    x = case.random(np.random.default_rng(rows), (rows, WIDTH))
    split = 100
    out = case.arrays.put(np.full(split, GUARD, case.dtype))
    second = case.arrays.put(np.full(WIDTH - split, GUARD, case.dtype))
    column_sums(case.arrays.put(x), out, second)
    want = x.astype(np.float64).sum(axis=0)
    close(case.arrays.get(out), want[:split], case.dtype, floor=1.0)
    close(case.arrays.get(second), want[split:], case.dtype, floor=1.0)


# -- optimizers: float64 arithmetic, rounded once -------------------------------------------------


def test_adamw_and_sgd_steps(case):
    rng = np.random.default_rng(7)
    n = 1025
    param, grad, m = (case.random(rng, (n,)) for _ in range(3))
    v = case.random(rng, (n,), 0.0, 1.0)
    host = [a.astype(np.float32) for a in (param, grad, m, v)]
    device = [case.arrays.put(a) for a in (param, grad, m, v)]
    scalars = (1e-3, 0.9, 0.95, 0.0, 1e-8, 0.1, 1e-3 * 0.7)
    cpu.adamw_step(*host, *scalars)
    cuda.adamw_step(*device, *scalars)
    for name, want, got in zip(("param", "grad", "exp_avg", "exp_avg_sq"), host, device):
        close(case.arrays.get(got), want, case.dtype, ulps=1.0, err_msg=name)
    buffer = case.random(rng, (n,))
    host, device = [a.astype(np.float32) for a in (param, grad, buffer)], [case.arrays.put(a) for a in (param, grad,
                                                                                                        buffer)]
    cpu.sgd_step(*host, 0.1, 0.9, 0.1, 0.01, True, False)
    cuda.sgd_step(*device, 0.1, 0.9, 0.1, 0.01, True, False)
    for want, got in zip(host, device):
        close(case.arrays.get(got), want, case.dtype, ulps=1.0)


# -- attention --------------------------------------------------------------------------------


@pytest.mark.parametrize("lse", [np.float32, None], ids=["float32 lse", "16-bit lse"])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_forward_and_backward(case, causal, lse):
    """Heads of 64 (the book's), 70 query rows (two tiles of 64, the second partly empty).
    The products take 16-bit tiles (the probabilities and dS rounded to the 16-bit type for
    theirs, as on tensor cores), so the gradients are allowed a little more. The saved
    log-sum-exp in float32, or in the 16-bit type (as the attention ops allocate it now)."""
    rng = np.random.default_rng(8)
    groups, length, head = 2, 70, 64
    q, k, v, grad_out = (case.random(rng, (groups, length, head), -1, 1) for _ in range(4))
    scale = head ** -0.5
    got, _ = case.run("flash_attention_forward", [q, k, v, scale, causal],
                      {"out": ((groups, length, head), None), "lse": ((groups, length), lse)}, floor=0.1)
    shape = ((groups, length, head), None)
    case.run("flash_attention_backward", [grad_out, q, k, v, got["out"], got["lse"], scale, causal],
             {"grad_q": shape, "grad_k": shape, "grad_v": shape}, floor=0.2, ulps=4.0)


# -- convolution and pooling --------------------------------------------------------------------


def test_col2im_sums_in_float32(case):
    """col2im adds up to kH kW = 9 column elements into each input element."""
    rng = np.random.default_rng(9)
    cols = case.random(rng, (2, 3, 3, 3, 8, 8))
    case.run("col2im", [cols, (1, 1), (1, 1), (1, 1)], {"out": ((2, 3, 8, 8), None)})
    x = case.random(rng, (2, 3, 8, 8))
    case.run("im2col", [x, (1, 1), (1, 1), (1, 1)], {"cols": ((2, 3, 3, 3, 8, 8), None)}, ulps=0.0)


def test_pooling_forward_and_backward(case):
    rng = np.random.default_rng(10)
    x = case.random(rng, (2, 3, 12, 12))
    got, _ = case.run("max_pool2d_forward", [x, (3, 3), (2, 2), (1, 1), (1, 1)],
                      {"out": ((2, 3, 6, 6), None), "indices": ((2, 3, 6, 6), np.int64)}, ulps=0.0)
    grad = case.random(rng, (2, 3, 6, 6))
    case.run("max_pool2d_backward", [grad, got["indices"], (3, 3), (2, 2), (1, 1), (1, 1)],
             {"grad_x": ((2, 3, 12, 12), None)})
    case.run("avg_pool2d_forward", [x, (3, 3), (2, 2), (1, 1), False, None], {"out": ((2, 3, 6, 6), None)})
    case.run("avg_pool2d_backward", [grad, (3, 3), (2, 2), (1, 1), True, None], {"grad_x": ((2, 3, 12, 12), None)})
