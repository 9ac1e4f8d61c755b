"""The fused CUDA kernels (linear, GELU FFN, linear + cross-entropy, flash attention)
against the CPU kernels of the same names.

Without a GPU the Triton parts run under the interpreter and NumPy does the GEMMs; on a
GPU (ZERO_TEST_DEVICE=cuda) the same tests run Triton compiled and cuBLAS. Shapes are
small and deliberately ragged: 70 query rows for 64-row tiles, head sizes 12 and 15 for
16-wide tiles, chunks of 10 rows over 33, keys and queries of different lengths.
"""
from __future__ import annotations

import numpy as np
import pytest

import zero.backends.cpu.kernels as cpu
import zero.backends.cuda.kernels as cuda
import zero.backends.cuda.kernels.fused as fused_kernels

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FLOATS = (np.float32, np.float64)
TOLERANCE: dict = {np.float32: {"rtol": 2e-4, "atol": 2e-5}, np.float64: {"rtol": 1e-6, "atol": 1e-9}}


def random(rng, shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def compare(arrays, dtype, name, inputs, outputs: dict, float64_outputs=(), **kwargs):
    """Run ``name`` on the CPU and the device; outputs maps a name to a shape, or to None for
    an output that is not wanted (passed as None to both). Outputs are of ``dtype`` except
    those named in ``float64_outputs`` (a saved logsumexp is float64 whatever the dtype)."""
    def empty(k, shape):
        return None if shape is None else np.zeros(shape, np.float64 if k in float64_outputs else dtype)

    host = {k: empty(k, shape) for k, shape in outputs.items()}
    device = {k: None if a is None else arrays.put(a.copy()) for k, a in host.items()}
    getattr(cpu, name)(*inputs, *host.values(), **kwargs)
    getattr(cuda, name)(*[arrays.put(a) for a in inputs], *device.values(),
                        **{k: arrays.put(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()})
    for k, want in host.items():
        if want is not None:
            np.testing.assert_allclose(arrays.get(device[k]), want, err_msg=f"{name}: {k}", **TOLERANCE[dtype])
    return host


@pytest.fixture(params=FLOATS, ids=["float32", "float64"])
def dtype(request):
    return request.param


@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_forward_and_backward(arrays, dtype, with_bias):
    rng = np.random.default_rng(1)
    x, weight = random(rng, (33, 20), dtype), random(rng, (17, 20), dtype)
    bias = random(rng, (17,), dtype) if with_bias else None
    compare(arrays, dtype, "linear_forward", [x, weight, bias], {"out": (33, 17)})
    grad = random(rng, (33, 17), dtype)
    compare(arrays, dtype, "linear_backward", [grad, x, weight],
            {"grad_x": (33, 20), "grad_weight": (17, 20), "grad_bias": (17,) if with_bias else None})


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("with_bias", [True, False])
def test_ffn_forward_and_backward(arrays, dtype, approximate, with_bias):
    rng = np.random.default_rng(2)
    rows, width, hidden = 33, 20, 50
    x, w1, w2 = random(rng, (rows, width), dtype), random(rng, (hidden, width), dtype, 0.3), \
        random(rng, (width, hidden), dtype, 0.3)
    b1, b2 = (random(rng, (hidden,), dtype), random(rng, (width,), dtype)) if with_bias else (None, None)
    compare(arrays, dtype, "ffn_forward", [x, w1, b1, w2, b2, approximate], {"out": (rows, width)})
    grad = random(rng, (rows, width), dtype)
    compare(arrays, dtype, "ffn_backward", [grad, x, w1, b1, w2, approximate],
            {"grad_x": (rows, width), "grad_w1": (hidden, width), "grad_b1": (hidden,) if with_bias else None,
             "grad_w2": (width, hidden), "grad_b2": (width,) if with_bias else None})


def test_ffn_with_the_hidden_kept_from_forward(arrays, dtype):
    rng = np.random.default_rng(4)
    rows, width, hidden = 17, 12, 40
    x, w1, w2 = random(rng, (rows, width), dtype), random(rng, (hidden, width), dtype, 0.3), \
        random(rng, (width, hidden), dtype, 0.3)
    b1, b2 = random(rng, (hidden,), dtype), random(rng, (width,), dtype)
    host = compare(arrays, dtype, "ffn_forward", [x, w1, b1, w2, b2, "none"], {"out": (rows, width),
                                                                             "kept": (rows, hidden)})
    np.testing.assert_allclose(host["kept"], x @ w1.T, **TOLERANCE[dtype])
    grad = random(rng, (rows, width), dtype)
    kept = host["kept"]
    before = kept.copy()
    wanted = {"grad_x": (rows, width), "grad_w1": (hidden, width), "grad_b1": (hidden,), "grad_w2": (width, hidden),
              "grad_b2": (width,)}
    recomputed = compare(arrays, dtype, "ffn_backward", [grad, x, w1, b1, w2, "none"], wanted)
    from_kept = compare(arrays, dtype, "ffn_backward", [grad, x, w1, b1, w2, "none"], wanted, kept=kept)
    for name in wanted:
        np.testing.assert_allclose(from_kept[name], recomputed[name], **TOLERANCE[dtype])
    np.testing.assert_array_equal(kept, before)        # read, not changed: backward may run again


def test_ffn_backward_with_only_second_layer_gradients(arrays):
    rng = np.random.default_rng(3)
    x, w1, w2 = random(rng, (9, 8), np.float32), random(rng, (16, 8), np.float32), random(rng, (8, 16), np.float32)
    compare(arrays, np.float32, "ffn_backward", [random(rng, (9, 8), np.float32), x, w1, None, w2, "none"],
            {"grad_x": None, "grad_w1": None, "grad_b1": None, "grad_w2": (8, 16), "grad_b2": None})


@pytest.mark.parametrize("chunk", [10, 1000])
def test_linear_cross_entropy_forward_and_backward(arrays, dtype, chunk):
    rng = np.random.default_rng(4)
    rows, width, vocab = 33, 20, 65
    x, weight = random(rng, (rows, width), dtype), random(rng, (vocab, width), dtype)
    target = rng.integers(0, vocab, rows)
    target[[3, 20]] = -100
    host = compare(arrays, dtype, "linear_cross_entropy_forward", [x, weight, target, -100, chunk],
                   {"loss": (rows,), "lse": (rows,)}, float64_outputs=("lse",))
    assert host["loss"][3] == 0 and host["loss"][20] == 0
    grad_loss = random(rng, (rows,), dtype)
    compare(arrays, dtype, "linear_cross_entropy_backward", [grad_loss, x, weight, target, host["lse"], -100, chunk],
            {"grad_x": (rows, width), "grad_weight": (vocab, width)})
    compare(arrays, dtype, "linear_cross_entropy_backward", [grad_loss, x, weight, target, host["lse"], -100, chunk],
            {"grad_x": None, "grad_weight": (vocab, width)})


@pytest.mark.parametrize("chunk", [10, 1000])
def test_linear_cross_entropy_with_kept_logits(arrays, dtype, chunk):
    """Forward leaves the logits in ``kept`` (one chunk, whatever chunk_size); backward starts
    from them, unchanged, and gives what recomputing them gives."""
    rng = np.random.default_rng(5)
    rows, width, vocab = 33, 20, 65
    x, weight = random(rng, (rows, width), dtype), random(rng, (vocab, width), dtype)
    target = rng.integers(0, vocab, rows)
    target[7] = -100
    host = compare(arrays, dtype, "linear_cross_entropy_forward", [x, weight, target, -100, chunk],
                   {"loss": (rows,), "lse": (rows,), "kept": (rows, vocab)}, float64_outputs=("lse",))
    np.testing.assert_allclose(host["kept"], x @ weight.T, **TOLERANCE[dtype])
    kept = host["kept"].copy()
    grad_loss = random(rng, (rows,), dtype)
    from_kept = compare(arrays, dtype, "linear_cross_entropy_backward",
                        [grad_loss, x, weight, target, host["lse"], -100, chunk],
                        {"grad_x": (rows, width), "grad_weight": (vocab, width)}, kept=kept)
    np.testing.assert_array_equal(kept, host["kept"])
    recomputed = {"grad_x": np.zeros((rows, width), dtype), "grad_weight": np.zeros((vocab, width), dtype)}
    cpu.linear_cross_entropy_backward(grad_loss, x, weight, target, host["lse"], -100, chunk, *recomputed.values())
    for k, want in recomputed.items():
        np.testing.assert_allclose(from_kept[k], want, **TOLERANCE[dtype])


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("length,source,width,value_width", [(70, 70, 12, 15), (5, 9, 16, 16), (9, 5, 8, 8),
                                                             (130, 64, 32, 32)])
def test_flash_attention_forward_and_backward(arrays, dtype, causal, length, source, width, value_width):
    rng = np.random.default_rng(length + source)
    groups = 3
    q, k = random(rng, (groups, length, width), dtype), random(rng, (groups, source, width), dtype)
    v = random(rng, (groups, source, value_width), dtype)
    scale = width ** -0.5
    host = compare(arrays, dtype, "flash_attention_forward", [q, k, v, scale, causal],
                   {"out": (groups, length, value_width), "lse": (groups, length)})
    grad = random(rng, (groups, length, value_width), dtype)
    compare(arrays, dtype, "flash_attention_backward", [grad, q, k, v, host["out"], host["lse"], scale, causal],
            {"grad_q": q.shape, "grad_k": k.shape, "grad_v": v.shape})
    compare(arrays, dtype, "flash_attention_backward", [grad, q, k, v, host["out"], host["lse"], scale, causal],
            {"grad_q": None, "grad_k": None, "grad_v": v.shape})


@pytest.mark.parametrize("causal", [True, False])
def test_self_attention_forward_and_backward(arrays, dtype, causal):
    """The heads packed in qkv (B, T, 3C): 70 rows for 64-row tiles, heads of 12."""
    rng = np.random.default_rng(8)
    batch, length, heads, size = 2, 70, 3, 12
    qkv = random(rng, (batch, length, 3 * heads * size), dtype)
    scale = size ** -0.5
    host = compare(arrays, dtype, "self_attention_forward", [qkv, heads, scale, causal],
                   {"out": (batch, length, heads * size), "lse": (batch * heads, length)})
    grad = random(rng, (batch, length, heads * size), dtype)
    compare(arrays, dtype, "self_attention_backward", [grad, qkv, host["out"], host["lse"], heads, scale, causal],
            {"grad_qkv": qkv.shape})


@pytest.mark.parametrize("layout", ["strided views", "4-d heads", "features apart (copied)"])
def test_flash_attention_reads_and_writes_arrays_where_they_lie(arrays, monkeypatch, layout):
    """Views of larger arrays in, views out: (G, L, E) views whose rows are further apart
    than their width, (B, H, L, E) heads of a (B, L, H·E) array (as self-attention's), and
    features two apart (copied for the kernels, and the results copied back). Launches of
    at most two groups each, so later launches start at a later group."""
    monkeypatch.setattr(fused_kernels, "MAX_GROUPS_PER_LAUNCH", 2)
    rng = np.random.default_rng(4)
    batch, heads, length, width = 2, 3, 37, 8
    groups = batch * heads

    def views(array):   # (G, L, E) or (B, H, L, E) views of a larger array, NumPy or CuPy alike
        if layout == "strided views":
            return array[:, :length, :width]                  # from (G, L + 5, E + 4)
        if layout == "4-d heads":
            return array.reshape(batch, length, heads, width).transpose(0, 2, 1, 3)
        return array[:, :, ::2]                               # from (G, L, 2E)

    def big():
        if layout == "strided views":
            return random(rng, (groups, length + 5, width + 4), np.float64)
        if layout == "4-d heads":
            return random(rng, (batch, length, heads * width), np.float64)
        return random(rng, (groups, length, 2 * width), np.float64)

    q, k, v, grad = big(), big(), big(), big()
    flat = [np.ascontiguousarray(views(a)).reshape(groups, length, width) for a in (q, k, v, grad)]
    want_out, want_lse = np.zeros((groups, length, width)), np.zeros((groups, length))
    cpu.flash_attention_forward(*flat[:3], 0.3, True, want_out, want_lse)
    wants = [np.zeros((groups, length, width)) for _ in range(3)]
    cpu.flash_attention_backward(flat[3], *flat[:3], want_out, want_lse, 0.3, True, *wants)

    device_q, device_k, device_v, device_grad = (arrays.put(a) for a in (q, k, v, grad))
    out_storage, grad_storage = arrays.put(np.zeros_like(q)), [arrays.put(np.zeros_like(q)) for _ in range(3)]
    lse = arrays.put(np.zeros((groups, length)))
    cuda.flash_attention_forward(views(device_q), views(device_k), views(device_v), 0.3, True,
                                 views(out_storage), lse)
    got_out = np.ascontiguousarray(views(arrays.get(out_storage))).reshape(groups, length, width)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(arrays.get(lse), want_lse, rtol=1e-9, atol=1e-12)
    cuda.flash_attention_backward(views(device_grad), views(device_q), views(device_k), views(device_v),
                                  views(out_storage), lse, 0.3, True, *(views(g) for g in grad_storage))
    for name, storage, want in zip(("q", "k", "v"), grad_storage, wants):
        got = arrays.get(storage)
        np.testing.assert_allclose(np.ascontiguousarray(views(got)).reshape(groups, length, width), want,
                                   rtol=1e-8, atol=1e-10, err_msg=f"grad_{name}")
        untouched = got.copy()
        views(untouched)[...] = 0
        assert not untouched.any(), f"grad_{name}: written outside its view"


def test_flash_attention_matches_the_plain_formula(arrays):
    """Independent of the CPU kernel: softmax(scale q kᵀ, causal) v in float64 NumPy."""
    rng = np.random.default_rng(7)
    q, k, v = (random(rng, (2, 67, 16), np.float64) for _ in range(3))
    scores = 0.25 * q @ k.transpose(0, 2, 1)
    scores[:, np.triu_indices(67, 1)[0], np.triu_indices(67, 1)[1]] = -np.inf
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out, lse = arrays.put(np.zeros((2, 67, 16))), arrays.put(np.zeros((2, 67)))
    cuda.flash_attention_forward(arrays.put(q), arrays.put(k), arrays.put(v), 0.25, True, out, lse)
    np.testing.assert_allclose(arrays.get(out), probs @ v, rtol=1e-10, atol=1e-12)
