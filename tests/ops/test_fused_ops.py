"""Fused ops against the compositions of basic ops they replace.

Each fused op (linear, ffn, linear_cross_entropy, flash attention, layer norm) must give
the composition's output and gradients: in float64 to ~1e-12, in float32 within ~1e-5
of the float64 result, and gradcheck agrees on small shapes. Sizes that are not
multiples of the kernels' chunk and block sizes are the point of several cases. The
memory tests check what the graph keeps after forward, with the allocator's counters.
"""
from __future__ import annotations

import gc
import sys
import math

import numpy as np
import pytest
from op_harness import check_op, on_device_of

import zero
import zero.nn.functional as F
from zero.autograd import gradcheck
from zero.backends.cpu import parallel
from zero.backends.cpu.kernels import _fused_attention, _fused_linear
from zero.backends.cpu.kernels import elementwise as elementwise_kernels
from zero.backends.cpu.kernels._fastmath import fast_exp, fast_tanh, normal_cdf, normal_cdf_pdf, row_peak
from zero.errors import DTypeError, ShapeError, ZeroIndexError
from zero.ops import attention as composed_attention
from zero.ops import fused
from zero.ops.arguments import laid_out

rng = np.random.default_rng(0)


def leaf(shape, dtype=zero.float64, grad=True, scale=1.0):
    return zero.tensor(rng.standard_normal(shape) * scale, dtype=dtype, requires_grad=grad)


def run(fn, inputs, cotangent=None):
    """(output as float64 NumPy, [grad of each input that requires grad, or None]) after
    backward with ``cotangent`` (ones for a scalar output)."""
    for t in inputs:
        if isinstance(t, zero.Tensor):
            t.grad = None
    out = fn(*inputs)
    out.backward(None if cotangent is None else zero.tensor(cotangent, dtype=out.dtype))
    grads = [None if not isinstance(t, zero.Tensor) or t.grad is None else t.grad.numpy().astype(np.float64)
             for t in inputs]
    for t in inputs:
        if isinstance(t, zero.Tensor):
            t.grad = None
    return out.detach().numpy().astype(np.float64), grads


def assert_same(fused_fn, composed_fn, inputs, rtol=1e-10, atol=1e-12, cotangent=True):
    """Outputs and input gradients of the two functions agree."""
    with zero.no_grad():
        shape = fused_fn(*inputs).shape
    seed = rng.standard_normal(shape) if cotangent and shape else None
    got, got_grads = run(fused_fn, inputs, seed)
    want, want_grads = run(composed_fn, inputs, seed)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg="output")
    for i, (g, w) in enumerate(zip(got_grads, want_grads)):
        assert (g is None) == (w is None), f"gradient {i}: one side has none"
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")


def assert_float32_close(fn, arrays, rtol=1e-5, atol=1e-6, leaves=None):
    """fn in float32 stays within ~1e-5 of fn in float64 on the same values, forward (each
    output element) and backward (the gradients of the outputs' sum), relative to the
    largest magnitude of each result. (The sum itself is no measure: where its terms cancel,
    float32 rounding in them is large against it.)"""
    results, outputs = {}, {}
    for dtype in (zero.float32, zero.float64):
        inputs = [zero.tensor(a, dtype=dtype, requires_grad=leaves is None or i in leaves)
                  if isinstance(a, np.ndarray) and a.dtype.kind == "f" else
                  (zero.tensor(a) if isinstance(a, np.ndarray) else a) for i, a in enumerate(arrays)]
        with zero.no_grad():
            outputs[dtype] = fn(*inputs).numpy().astype(np.float64)
        results[dtype] = run(lambda *xs: fn(*xs).sum(), inputs)
    grads32, grads64 = results[zero.float32][1], results[zero.float64][1]
    pairs = [(outputs[zero.float32], outputs[zero.float64])]
    pairs += [(g, w) for g, w in zip(grads32, grads64) if w is not None]
    for got, want in pairs:
        scale = max(float(np.abs(want).max()), 1e-30)
        np.testing.assert_allclose(got / scale, want / scale, rtol=rtol, atol=max(atol, rtol))


@pytest.fixture(autouse=True)
def empty_pool():
    """The memory bounds below hold for a fresh pool: a block cached by an earlier file's
    tests, up to 25 % larger than a request, may otherwise serve it and raise the peak."""
    zero.cpu.empty_cache()


def live_bytes() -> int:
    gc.collect()
    return zero.cpu.memory_stats()["live_bytes"]


# -- linear -------------------------------------------------------------------------------------


def composed_linear(x, w, b=None):
    out = x @ w.T
    return out if b is None else out + b


@pytest.mark.parametrize("x_shape", [(7, 5), (2, 3, 5), (5,), (0, 5)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_matches_composition(x_shape, with_bias):
    x, w = leaf(x_shape), leaf((4, 5))
    inputs = [x, w] + ([leaf((4,))] if with_bias else [])
    assert_same(fused.linear, composed_linear, inputs)
    assert F.linear(*inputs).grad_fn.name == "LinearBiasBackward"


def test_linear_strided_inputs_and_partial_gradients():
    def strided(fn):                           # x (6, 5) sliced, w (3, 5) a transposed view
        return lambda base_x, base_w, b: fn(base_x[:, 1::2], base_w.T, b)
    assert_same(strided(F.linear), strided(composed_linear), [leaf((6, 10)), leaf((5, 3)), leaf((3,), grad=False)])
    frozen = leaf((3, 5), grad=False)          # only the input needs a gradient
    out = F.linear(leaf((4, 5)), frozen)
    assert out.grad_fn.saved_tensors[0] is None  # x is not kept when W needs no gradient


def test_linear_gradcheck():
    assert gradcheck(fused.linear, (leaf((2, 3, 4)), leaf((5, 4)), leaf((5,))))


def test_linear_float32_close_to_float64():
    arrays = [rng.standard_normal((300, 64)), rng.standard_normal((96, 64)) * 0.1, rng.standard_normal(96)]
    assert_float32_close(fused.linear, arrays)


def test_linear_errors():
    with pytest.raises(ShapeError, match=r"linear: input .* in_features=4"):
        fused.linear(leaf((3, 5)), leaf((2, 4)))
    with pytest.raises(ShapeError, match=r"linear: bias must have shape \[2\]"):
        fused.linear(leaf((3, 4)), leaf((2, 4)), leaf((3,)))
    with pytest.raises(DTypeError, match="linear: weight float32.*input"):
        fused.linear(leaf((3, 4)), leaf((2, 4), zero.float32))
    with pytest.raises(TypeError, match="linear"):
        fused.linear(np.ones((3, 4)), leaf((2, 4)))


# -- feed-forward -------------------------------------------------------------------------------


def composed_ffn(approximate):
    def fn(x, w1, b1, w2, b2):
        hidden = x @ w1.T
        if b1 is not None:
            hidden = hidden + b1
        out = F.gelu(hidden, approximate=approximate) @ w2.T
        return out if b2 is None else out + b2
    return fn


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("x_shape", [(2, 5, 8), (1, 8)])
def test_ffn_matches_composition(approximate, with_bias, x_shape):
    x, w1, w2 = leaf(x_shape, scale=1.5), leaf((32, 8)), leaf((6, 32))
    b1, b2 = (leaf((32,)), leaf((6,))) if with_bias else (None, None)

    def fused_fn(*args):
        return F.ffn(*args, approximate=approximate)
    assert_same(fused_fn, composed_ffn(approximate), [x, w1, b1, w2, b2])


def test_ffn_gradcheck_and_partial_gradients():
    x, w1, b1, w2, b2 = leaf((3, 4)), leaf((8, 4)), leaf((8,)), leaf((5, 8)), leaf((5,))
    assert gradcheck(lambda *a: fused.ffn(*a), (x, w1, b1, w2, b2))
    assert gradcheck(lambda *a: fused.ffn(*a, approximate="tanh"), (x, w1, b1, w2, b2))
    frozen = [leaf(t.shape, grad=False) for t in (w1, b1, w2)]
    assert_same(fused.ffn, composed_ffn("none"), [x, frozen[0], frozen[1], frozen[2], b2])

    def strided(fn):                   # transposed weights and a sliced input
        return lambda x2, w1t, b, w2t, c: fn(x2[:, ::2], w1t.T, b, w2t.T, c)
    assert_same(strided(fused.ffn), strided(composed_ffn("none")),
                [leaf((3, 8)), leaf((4, 8)), b1, leaf((8, 5)), b2])


def test_ffn_float32_close_to_float64():
    arrays = [rng.standard_normal((200, 32)), rng.standard_normal((128, 32)) * 0.2, rng.standard_normal(128) * 0.1,
              rng.standard_normal((32, 128)) * 0.1, rng.standard_normal(32) * 0.1]
    for approximate in ("none", "tanh"):
        assert_float32_close(lambda *a: fused.ffn(*a, approximate=approximate), arrays)


def test_ffn_keeps_a_small_hidden_layer_and_recomputes_a_large_one(monkeypatch):
    ffn_module = sys.modules["zero.ops.fused.ffn"]  # (zero.ops.fused.ffn is also the function)
    x, w1, b1, w2, b2 = leaf((6, 8)), leaf((16, 8)), leaf((16,)), leaf((5, 16)), leaf((5,))
    results = []
    for budget in (1 << 30, 0):                      # kept, recomputed
        monkeypatch.setattr(ffn_module, "KEEP_HIDDEN_BYTES", budget)
        out = fused.ffn(x, w1, b1, w2, b2)
        assert out.grad_fn.name == "FFNBackward"     # a 2-D input: no reshape after the op
        kept = out.grad_fn._saved[-1]
        assert (kept is not None) == (budget > 0)
        grads = zero.autograd.grad(out.sum(), [x, w1, b1, w2, b2], retain_graph=True)
        again = zero.autograd.grad(out.sum(), [x, w1, b1, w2, b2])  # the kept hidden survives a backward
        results.append([g.numpy() for g in grads])
        for g, h in zip(grads, again):
            np.testing.assert_array_equal(g.numpy(), h.numpy())
    for kept_grad, recomputed_grad in zip(*results):
        np.testing.assert_allclose(kept_grad, recomputed_grad, rtol=1e-12, atol=1e-12)
    with zero.no_grad():                             # nothing recorded: nothing kept
        assert fused.ffn(x, w1, b1, w2, b2).grad_fn is None


def test_fused_ops_alias_contiguous_inputs_and_copy_strided_ones():
    """laid_out: a contiguous input (offset included) is read in place, without graph; a
    strided one is copied. The fused ops give the same on a strided input and its copy."""
    x = zero.randn(2, 3, 4, requires_grad=True)
    rows = laid_out(x, (6, 4))
    assert rows.untyped_storage() is x.untyped_storage() and rows.data_ptr() == x.data_ptr()
    assert rows.grad_fn is None and not rows.requires_grad and rows.shape == (6, 4)
    second = laid_out(x[1], (12,))                                   # contiguous at an offset
    assert second.data_ptr() == x[1].data_ptr()
    np.testing.assert_array_equal(second.numpy(), x.detach().numpy()[1].reshape(12))
    strided = x[:, 1:]                                               # (2, 2, 4), rows 4 apart
    copied = laid_out(strided, (4, 4))
    assert copied.untyped_storage() is not x.untyped_storage()
    np.testing.assert_array_equal(copied.numpy(), strided.detach().numpy().reshape(4, 4))
    w, b = zero.randn(5, 4), zero.randn(5)
    w1, b1, w2, b2 = zero.randn(8, 4), zero.randn(8), zero.randn(4, 8), zero.randn(4)
    for fn in (lambda t: F.linear(t, w, b), lambda t: F.layer_norm(t, (4,)),
               lambda t: F.ffn(t, w1, b1, w2, b2)):
        np.testing.assert_array_equal(fn(strided).detach().numpy(), fn(strided.contiguous()).detach().numpy())


@pytest.mark.parametrize("recompute", [True, False])
def test_ffn_recompute_overrides_the_budget(monkeypatch, recompute):
    ffn_module = sys.modules["zero.ops.fused.ffn"]
    monkeypatch.setattr(ffn_module, "KEEP_HIDDEN_BYTES", 1 << 30 if recompute else 0)  # by size: the opposite
    x, w1, b1, w2, b2 = leaf((6, 8)), leaf((16, 8)), leaf((16,)), leaf((5, 16)), leaf((5,))
    out = F.ffn(x, w1, b1, w2, b2, recompute=recompute)
    assert (out.grad_fn._saved[-1] is None) == recompute            # nothing kept when told to recompute
    with pytest.raises(ValueError, match="recompute must be None"):
        F.ffn(x, w1, b1, w2, b2, recompute="yes")


def test_ffn_graph_keeps_no_hidden_activation(monkeypatch):
    ffn_module = sys.modules["zero.ops.fused.ffn"]  # (zero.ops.fused.ffn is also the function)
    monkeypatch.setattr(ffn_module, "KEEP_HIDDEN_BYTES", 0)   # above the budget: recompute
    rows, width, hidden = 256, 16, 64
    x, w1, b1, w2, b2 = (leaf(s, zero.float32) for s in ((rows, width), (hidden, width), (hidden,),
                                                          (width, hidden), (width,)))
    before = live_bytes()
    out = fused.ffn(x, w1, b1, w2, b2)
    held = live_bytes() - before
    assert held == out.untyped_storage().handle.base.nbytes   # the output and nothing else
    composed = composed_ffn("none")(x, w1, b1, w2, b2)
    assert live_bytes() - before - held >= 2 * rows * hidden * 4   # the composition keeps h, gelu(h)
    del out, composed


def test_ffn_errors():
    x, w1, w2 = leaf((3, 4)), leaf((8, 4)), leaf((5, 8))
    with pytest.raises(ShapeError, match="ffn: w1 must be .*same hidden"):
        fused.ffn(x, w1, None, leaf((5, 7)), None)
    with pytest.raises(ShapeError, match=r"ffn: b1 must have shape \[8\]"):
        fused.ffn(x, w1, leaf((4,)), w2, None)
    with pytest.raises(ValueError, match="approximate"):
        fused.ffn(x, w1, None, w2, None, approximate="sigmoid")
    with pytest.raises(ShapeError, match=r"ffn: input float64\[3, 5\]"):
        fused.ffn(leaf((3, 5)), w1, None, w2, None)


# -- linear + cross-entropy ---------------------------------------------------------------------


def composed_lce(reduction, ignore_index=-100):
    def fn(x, w, target):
        return F.cross_entropy((x @ w.T).reshape(-1, w.shape[0]), target.reshape(-1), ignore_index=ignore_index,
                               reduction=reduction).reshape(target.shape if reduction == "none" else ())
    return fn


def targets(shape, vocab, ignore_index=-100, dtype=np.int64):
    t = rng.integers(0, vocab, size=shape)
    t.reshape(-1)[::5] = ignore_index          # every fifth row ignored
    return zero.tensor(t.astype(dtype))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk_size", [1, 8, None, 1000])
def test_linear_cross_entropy_matches_composition(reduction, chunk_size):
    x, w, t = leaf((37, 12), scale=2.0), leaf((50, 12)), targets((37,), 50)

    def fused_fn(a, b, c):
        return F.linear_cross_entropy(a, b, c, reduction=reduction, chunk_size=chunk_size)
    assert_same(fused_fn, composed_lce(reduction), [x, w, t])


def test_linear_cross_entropy_leading_dims_ignore_index_and_int32():
    x, w, t = leaf((3, 7, 6)), leaf((11, 6)), targets((3, 7), 11, ignore_index=4, dtype=np.int32)
    for reduction in ("mean", "none"):
        assert_same(lambda a, b, c: fused.linear_cross_entropy(a, b, c, ignore_index=4, reduction=reduction,
                                                               chunk_size=5),
                    composed_lce(reduction, ignore_index=4), [x, w, t])
    loss = fused.linear_cross_entropy(x, w, t, ignore_index=4, reduction="none")
    assert loss.shape == (3, 7) and np.all(loss.detach().numpy()[np.asarray(t) == 4] == 0)


def test_linear_cross_entropy_all_ignored_and_only_weight_grad():
    x, w = leaf((4, 3)), leaf((5, 3))
    t = zero.tensor([-100] * 4)
    assert math.isnan(fused.linear_cross_entropy(x, w, t).item())      # 0 / 0, as PyTorch
    assert fused.linear_cross_entropy(x, w, t, reduction="sum").item() == 0
    frozen = leaf((4, 3), grad=False)
    for chunk_size in (3, None):                    # logits recomputed; kept (one chunk)
        assert_same(lambda a, b, c: fused.linear_cross_entropy(a, b, c, chunk_size=chunk_size), composed_lce("mean"),
                    [frozen, w, targets((4,), 5)])


def test_linear_cross_entropy_gradcheck():
    x, w, t = leaf((7, 4)), leaf((6, 4)), targets((7,), 6)
    for reduction in ("mean", "none"):
        assert gradcheck(lambda a, b: fused.linear_cross_entropy(a, b, t, reduction=reduction, chunk_size=3), (x, w))


def test_linear_cross_entropy_float32_close_to_float64():
    t = targets((300,), 1000)
    arrays = [rng.standard_normal((300, 64)), rng.standard_normal((1000, 64)) * 0.3, np.asarray(t)]
    assert_float32_close(lambda a, b, c: fused.linear_cross_entropy(a, b, c, chunk_size=64), arrays, leaves={0, 1})


def test_linear_cross_entropy_keeps_at_most_a_chunk_of_logits():
    rows, width, vocab = 512, 32, 5000
    x, w = leaf((rows, width), zero.float32), leaf((vocab, width), zero.float32, scale=0.1)
    t = targets((rows,), vocab)
    logits_bytes = rows * vocab * 4
    grads_bytes = (rows + 2 * vocab) * width * 4                  # grad_x, grad_weight and its partial
    for chunk_size, scratch_bytes in ((64, 64 * vocab * 4), (None, 8 << 20)):
        before = live_bytes()
        zero.cpu.reset_peak_memory_stats()
        loss = fused.linear_cross_entropy(x, w, t, chunk_size=chunk_size)
        assert live_bytes() - before < logits_bytes / 100          # per-row logsumexp, a scalar
        loss.backward()
        peak = zero.cpu.memory_stats()["peak_bytes"] - before
        assert peak < scratch_bytes + grads_bytes + 64 * 1024      # one chunk of logits at a time
        del loss
        x.grad = w.grad = None
    assert 64 * vocab * 4 + grads_bytes < logits_bytes / 3         # so the bound above means something
    before = live_bytes()
    composed = composed_lce("mean")(x, w, t)
    assert live_bytes() - before > logits_bytes                    # what the fused op saves
    del composed


def test_linear_cross_entropy_keeps_the_logits_for_backward_when_they_make_one_chunk():
    rows, width, vocab = 64, 16, 65
    x, w = leaf((rows, width), zero.float32), leaf((vocab, width), zero.float32, scale=0.1)
    t = targets((rows,), vocab)
    logits_bytes = rows * vocab * 4
    grads = {}
    for chunk_size in (None, rows, rows - 1):          # one chunk (kept) twice, then two (recomputed)
        before = live_bytes()
        loss = fused.linear_cross_entropy(x, w, t, chunk_size=chunk_size)
        kept = live_bytes() - before
        assert (kept >= logits_bytes) if chunk_size != rows - 1 else (kept < logits_bytes / 8)
        loss.backward(retain_graph=True)
        loss.backward()                                 # kept logits are read, not overwritten
        grads[chunk_size] = [t.grad.numpy() / 2 for t in (x, w)]
        x.grad = w.grad = None
        del loss
    for chunk_size in (rows, rows - 1):
        for got, want in zip(grads[chunk_size], grads[None]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    before = live_bytes()
    with zero.no_grad():
        loss = fused.linear_cross_entropy(x, w, t)      # nothing recorded: nothing kept
    assert live_bytes() - before < logits_bytes / 8 and loss.ndim == 0


def test_linear_cross_entropy_errors():
    x, w = leaf((4, 3)), leaf((5, 3))
    with pytest.raises(ZeroIndexError, match="linear_cross_entropy: target 5 is out of bounds for 5"):
        fused.linear_cross_entropy(x, w, zero.tensor([0, 1, 5, 2]))
    with pytest.raises(ShapeError, match=r"target int64\[3\] on cpu must have the input's shape"):
        fused.linear_cross_entropy(x, w, zero.tensor([0, 1, 2]))
    with pytest.raises(DTypeError, match="target must be an int64 or int32"):
        fused.linear_cross_entropy(x, w, zero.tensor([0.0, 1.0, 2.0, 3.0]))
    with pytest.raises(ShapeError, match="embedding size of weight"):
        fused.linear_cross_entropy(x, leaf((5, 4)), zero.tensor([0, 1, 2, 3]))
    with pytest.raises(ValueError, match="chunk_size"):
        fused.linear_cross_entropy(x, w, zero.tensor([0, 1, 2, 3]), chunk_size=0)
    with pytest.raises(ValueError, match="reduction"):
        fused.linear_cross_entropy(x, w, zero.tensor([0, 1, 2, 3]), reduction="avg")


def test_default_chunk_size_keeps_a_chunk_of_logits_near_8_mib():
    assert fused.default_chunk_size(4000, 4) * 4000 * 4 <= 8 << 20
    assert fused.default_chunk_size(4000, 4) >= 500
    assert fused.default_chunk_size(10 ** 6, 8) == 16          # never fewer rows than that


# -- flash attention ----------------------------------------------------------------------------


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 16 rows/columns, so that short sequences span several blocks."""
    monkeypatch.setattr(_fused_attention, "BLOCK", 16)


def composed_sdpa(causal, scale=None):
    return lambda q, k, v: composed_attention.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 37, 16), (1, 2, 33, 64), (3, 20, 8), (9, 4), (2, 1, 1, 8)])
def test_flash_attention_matches_composition(small_blocks, causal, shape):
    q, k, v = (leaf(shape) for _ in range(3))
    assert_same(lambda a, b, c: fused.flash_attention(a, b, c, is_causal=causal), composed_sdpa(causal), [q, k, v])


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("length", [150, 64])    # 150: two blocks of 64 and a partial one; 64: causal halves
def test_flash_attention_default_blocks_long_sequence(causal, length):
    q, k, v = (leaf((1, 2, length, 64)) for _ in range(3))
    assert_same(lambda a, b, c: fused.flash_attention(a, b, c, is_causal=causal), composed_sdpa(causal), [q, k, v])


def test_flash_attention_other_shapes_and_scale(small_blocks):
    q, k, v = leaf((2, 20, 8)), leaf((2, 35, 8)), leaf((2, 35, 5))          # L != S, Ev != E
    for causal in (False, True):                                            # top-left causal as PyTorch
        assert_same(lambda a, b, c: fused.flash_attention(a, b, c, scale=0.3, is_causal=causal),
                    composed_sdpa(causal, 0.3), [q, k, v])
    q, k, v = leaf((2, 40, 8)), leaf((2, 19, 8)), leaf((2, 19, 8))          # causal, S < L
    assert_same(lambda a, b, c: fused.flash_attention(a, b, c, is_causal=True), composed_sdpa(True), [q, k, v])
    q, k, v = leaf((2, 3, 8)), leaf((2, 35, 8)), leaf((2, 35, 8))           # L << S: keys not copied
    for causal in (False, True):
        assert_same(lambda a, b, c: fused.flash_attention(a, b, c, is_causal=causal), composed_sdpa(causal),
                    [q, k, v])
    q, k, v = leaf((1, 3, 8), scale=30.0), leaf((1, 3, 8), scale=30.0), leaf((1, 3, 8))  # peaked softmax
    assert_same(fused.flash_attention, composed_sdpa(True), [q, k, v])


def test_flash_attention_partial_gradients_and_strided_inputs(small_blocks):
    def strided(fn):                # q (B, T, H, D) -> (B, H, T, D) view; v transposed
        return lambda q, k, v: fn(q.transpose(1, 2), k, v.mT)
    inputs = [leaf((2, 40, 3, 16)), leaf((2, 3, 40, 16), grad=False), leaf((2, 3, 16, 40))]
    assert_same(strided(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True)),
                strided(composed_sdpa(True)), inputs)


@pytest.mark.parametrize("block", [16, 64])
def test_causal_attention_ignores_masked_keys_whose_exp_overflows(monkeypatch, block):
    """The kernels run exp over whole rows and select 0 for masked keys: a future key with
    scores far beyond exp's range must change neither the outputs nor the gradients."""
    monkeypatch.setattr(_fused_attention, "BLOCK", block)
    for dtype in (zero.float32, zero.float64):
        q_data, k_data = np.abs(rng.standard_normal((2, 40, 8))), rng.standard_normal((2, 40, 8))
        k_data[:, -1] = 1e4      # masked for queries 0-38: scores of 1e4 and more, beyond exp's range
        q_data[:, -1] = 0        # the one query that sees it: scores 0, a uniform softmax
        q, k, v = (zero.tensor(a, dtype=dtype, requires_grad=True)
                   for a in (q_data, k_data, rng.standard_normal((2, 40, 8))))
        tolerance = dict(rtol=1e-4, atol=1e-5) if dtype is zero.float32 else dict(rtol=1e-9, atol=1e-9)
        assert_same(lambda a, b, c: fused.flash_attention(a, b, c, is_causal=True), composed_sdpa(True),
                    [q, k, v], **tolerance)


def test_flash_attention_gradcheck(monkeypatch):
    monkeypatch.setattr(_fused_attention, "BLOCK", 2)
    q, k, v = leaf((2, 5, 3)), leaf((2, 5, 3)), leaf((2, 5, 2))
    assert gradcheck(lambda a, b, c: fused.flash_attention(a, b, c, is_causal=True), (q, k, v))
    assert gradcheck(lambda a, b, c: fused.flash_attention(a, b, c, is_causal=False), (q, k, v))


def test_flash_attention_float32_close_to_float64():
    arrays = [rng.standard_normal((2, 3, 200, 64)) for _ in range(3)]
    assert_float32_close(lambda a, b, c: fused.flash_attention(a, b, c, is_causal=True), arrays)


def test_flash_attention_keeps_no_score_matrix(monkeypatch):
    monkeypatch.setattr(_fused_attention, "SCRATCH_BYTES", 256 * 1024)
    monkeypatch.setattr(_fused_attention, "BLOCK", 64)
    batch, heads, length, head = 2, 4, 512, 16
    groups = batch * heads
    q, k, v = (leaf((batch, heads, length, head), zero.float32) for _ in range(3))
    scores_bytes = groups * length * length * 4
    before = live_bytes()
    zero.cpu.reset_peak_memory_stats()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    held = live_bytes() - before
    assert held <= out.untyped_storage().handle.base.nbytes + groups * length * 4 + 64    # out + lse
    out.backward(zero.ones_like(out))
    peak = zero.cpu.memory_stats()["peak_bytes"] - before
    # backward: three scratch arrays of at most SCRATCH_BYTES (or one batch's block per
    # thread, where the threads are many: 16 cores take 8 parts here), delta, grad_out and
    # the gradients; the allocator may hand out blocks up to 25% larger than asked
    parts = len(parallel.attention_parts(groups, 1, length, length))
    scratch = max(_fused_attention.SCRATCH_BYTES, parts * _fused_attention.BLOCK * length * 4)
    bound = 3 * scratch + groups * length * (4 * head + 1) * 4
    assert peak <= 1.25 * bound and peak < scores_bytes / 1.5       # blocks, never [T, T]
    composed = composed_sdpa(True)(q, k, v)
    assert live_bytes() - before - held > scores_bytes          # the composition keeps the probabilities
    del out, composed


def test_sdpa_routes_causal_self_attention_to_the_fused_op():
    q = leaf((2, 2, 6, 4))
    assert F.scaled_dot_product_attention(q, q, q, is_causal=True).grad_fn.name == "FlashAttentionBackward"
    mask = zero.ones(6, 6, dtype=zero.bool).tril()
    others = [F.scaled_dot_product_attention(q, q, q, attn_mask=mask),
              F.scaled_dot_product_attention(q, q, q, is_causal=True, dropout_p=0.1),
              F.scaled_dot_product_attention(q, q, q),
              F.scaled_dot_product_attention(q[:, :, :3], q, q, is_causal=True),    # L != S
              F.scaled_dot_product_attention(q, q[:1], q[:1], is_causal=True)]      # broadcast batch
    assert all(o.grad_fn.name != "FlashAttentionBackward" for o in others)
    np.testing.assert_allclose(np.asarray(F.scaled_dot_product_attention(q, q, q, is_causal=True).detach()),
                               np.asarray(others[0].detach()), rtol=1e-12, atol=1e-12)


def test_flash_attention_errors():
    q = leaf((2, 5, 4))
    with pytest.raises(ShapeError, match="flash_attention: query .* same leading"):
        fused.flash_attention(q, leaf((3, 5, 4)), leaf((3, 5, 4)))
    with pytest.raises(ShapeError, match="same feature size"):
        fused.flash_attention(q, leaf((2, 5, 3)), leaf((2, 5, 4)))
    with pytest.raises(ShapeError, match="same length S"):
        fused.flash_attention(q, q, leaf((2, 4, 4)))
    with pytest.raises(DTypeError, match="flash_attention: key float32"):
        fused.flash_attention(q, leaf((2, 5, 4), zero.float32), q)
    with pytest.raises(ShapeError, match="at least 2 dimensions"):
        fused.flash_attention(leaf((4,)), leaf((4,)), leaf((4,)))


# -- every layout of the op harness (contiguous, transposed, sliced, expanded) -----------------


def np_gelu(h):
    return h * 0.5 * np.vectorize(math.erfc)(-h / math.sqrt(2))


def np_causal_attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    scores = np.where(np.tril(np.ones(scores.shape[-2:], bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True) @ v


def test_fused_ops_on_every_layout():
    assert check_op(fused.linear, lambda x, w, b: x @ w.T + b, [(3, 4), (5, 4), (5,)], broadcast=False)
    assert check_op(fused.ffn, lambda x, w1, b1, w2, b2: np_gelu(x @ w1.T + b1) @ w2.T + b2,
                    [(3, 4), (6, 4), (6,), (2, 6)] + [(2,)], broadcast=False)
    target = np.array([1, -100, 4, 0, 2])

    def np_cross_entropy(x, w):
        logits = x @ w.T
        lse = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
        kept = target != -100
        return (lse - logits[np.arange(5), np.where(kept, target, 0)])[kept].mean()
    assert check_op(lambda x, w: fused.linear_cross_entropy(x, w, on_device_of(x, target), chunk_size=2),
                    np_cross_entropy, [(5, 3), (6, 3)], broadcast=False)
    assert check_op(fused.flash_attention, np_causal_attention, [(2, 5, 3), (2, 5, 3), (2, 5, 4)], broadcast=False)


# -- layer norm (already one op) ----------------------------------------------------------------


def composed_layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    centred = x - mean
    variance = (centred * centred).mean(-1, keepdim=True)
    return centred * (variance + eps).rsqrt() * weight + bias


def test_layer_norm_matches_composition():
    x, w, b = leaf((3, 5, 24), scale=3.0), leaf((24,)), leaf((24,))
    assert_same(lambda a, c, d: F.layer_norm(a, (24,), c, d), composed_layer_norm, [x, w, b])
    arrays = [rng.standard_normal((256, 96)) * 2 + 1, rng.standard_normal(96), rng.standard_normal(96)]
    assert_float32_close(lambda a, c, d: F.layer_norm(a, (96,), c, d), arrays)


# -- the kernels' exp ---------------------------------------------------------------------------


def test_fast_exp_and_tanh_accuracy():
    x = np.concatenate([np.linspace(-745, 709, 20001), rng.uniform(-30, 30, 2000), [0.0, -0.0]])
    got = np.array([fast_exp(v) for v in x])
    want = np.exp(x)
    normal = x >= -708
    np.testing.assert_allclose(got[normal], want[normal], rtol=3e-14)
    small = np.abs(x) < 30
    np.testing.assert_allclose(got[small], want[small], rtol=2e-15)
    assert np.all(got[~normal] == 0) and fast_exp(-np.inf) == 0
    assert fast_exp(710.0) == fast_exp(np.inf) == np.inf
    assert math.isnan(fast_exp(np.nan))
    u = np.linspace(-30, 30, 6001)
    np.testing.assert_allclose([fast_tanh(v) for v in u], np.tanh(u), rtol=0, atol=1e-15)


def test_float32_exp_stays_float32_within_one_rounding():
    x = np.concatenate([np.linspace(-87, 88.3, 20001), rng.uniform(-20, 20, 2000)]).astype(np.float32)
    got = np.array([fast_exp(v) for v in x])
    # computed in float32, every value is a float32 number (a float64 exp almost never is)
    np.testing.assert_array_equal(got.astype(np.float32).astype(np.float64), got)
    want = np.exp(x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=3e-7)
    small = np.abs(x) < 20
    np.testing.assert_allclose(got[small], want[small], rtol=1.2e-7)
    assert fast_exp(np.float32(-87.5)) == 0 and fast_exp(np.float32(88.5)) == np.inf
    assert math.isnan(fast_exp(np.float32("nan")))


def test_float32_normal_cdf_and_pdf_against_float64():
    x = np.linspace(-13, 13, 26001).astype(np.float32)
    got = np.array([normal_cdf_pdf(v) for v in x])
    np.testing.assert_array_equal(got.astype(np.float32).astype(np.float64), got)   # float32 arithmetic
    wide = x.astype(np.float64)
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in wide])
    np.testing.assert_allclose(got[:, 0], cdf, rtol=0, atol=2e-7)
    tail = x < -1                      # far left the CDF is tiny: relative accuracy counts
    np.testing.assert_allclose(got[tail, 0], cdf[tail], rtol=2e-5)
    np.testing.assert_allclose(got[:, 1], np.exp(-wide * wide / 2) / math.sqrt(2 * math.pi), rtol=2e-5, atol=1e-30)
    alone = np.array([normal_cdf(v) for v in x])        # forward's Φ without φ: one exp
    np.testing.assert_allclose(alone, cdf, rtol=0, atol=2e-7)
    np.testing.assert_allclose(alone[tail], cdf[tail], rtol=2e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_peak_compares_floats_as_ordered_integers(dtype):
    for length in (1, 2, 7, 8, 65, 1000):
        for row in (rng.standard_normal(length), -np.abs(rng.standard_normal(length)) * 1e30,
                    np.full(length, -np.inf), rng.standard_normal(length) * 1e-40):
            row = row.astype(dtype)
            peak = row_peak(row)
            assert peak == row.max() and np.asarray(peak, dtype).dtype == dtype
            assert row_peak(row[::-2]) == row[::-2].max()        # a strided row
    mixed = np.array([-np.inf, -0.0, -1.0, -np.inf, 3.5, np.inf, 2.0], dtype)
    assert row_peak(mixed) == np.inf and row_peak(mixed[:5]) == 3.5 and row_peak(mixed[:3]) == 0.0
    with_nan = np.array([1.0, np.nan, 5.0], dtype)
    peak = row_peak(with_nan)
    assert math.isnan(peak) or peak == 5.0          # either way the row's exp-sum is NaN
    assert math.isnan(np.exp(with_nan - peak).sum())


def test_float32_tanh_stays_float32_within_float32_error():
    x = np.linspace(-20, 20, 40001).astype(np.float32)
    got = np.array([fast_tanh(v) for v in x])
    np.testing.assert_array_equal(got.astype(np.float32).astype(np.float64), got)   # float32 arithmetic
    np.testing.assert_allclose(got, np.tanh(x.astype(np.float64)), rtol=0, atol=2e-7)


def _tanh_gelu_and_slope(x):
    """float64 references of the tanh GELU and its derivative."""
    c = math.sqrt(2 / math.pi)
    t = np.tanh(c * (x + 0.044715 * x ** 3))
    return 0.5 * x * (1 + t), 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x)


@pytest.mark.parametrize("form", ["none", "tanh"])
def test_float32_gelu_loops_of_op_and_ffn_agree_with_float64(form):
    """F.gelu's loops and the FFN's bias + GELU pass, float32 throughout, at float32 accuracy."""
    x = np.linspace(-12, 12, 64 * 1001).astype(np.float32)
    wide = x.astype(np.float64)
    if form == "tanh":
        value, slope = _tanh_gelu_and_slope(wide)
    else:
        cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in wide])
        value, slope = wide * cdf, cdf + wide * np.exp(-wide * wide / 2) / math.sqrt(2 * math.pi)
    out, grad = np.empty_like(x), np.empty_like(x)
    elementwise_kernels.gelu(x, out, form)
    elementwise_kernels.gelu_backward(np.ones_like(x), x, grad, form)
    bias = np.linspace(-1, 1, 64).astype(np.float32)
    rows = (x.reshape(-1, 64) - bias).astype(np.float32)              # + bias gives back ~x
    in_place = np.empty((rows.shape[0], 0), np.float32)                # no source: h itself; no gradient
    fused_value, fused_grad = rows.copy(), np.ones_like(rows)
    _fused_linear._bias_gelu(in_place, bias, fused_value, fused_grad, form == "tanh", True)
    fused_forward = rows.copy()
    _fused_linear._bias_gelu(in_place, bias, fused_forward, in_place, form == "tanh", False)
    from_value, from_grad, from_forward = np.empty_like(rows), np.ones_like(rows), np.empty_like(rows)
    _fused_linear._bias_gelu(rows, bias, from_value, from_grad, form == "tanh", True)   # from the kept rows
    _fused_linear._bias_gelu(rows, bias, from_forward, in_place, form == "tanh", False)
    for a, b in ((from_value, fused_value), (from_grad, fused_grad), (from_forward, fused_forward)):
        np.testing.assert_array_equal(a, b)
    shifted = (rows.astype(np.float64) + bias).astype(np.float32).astype(np.float64).reshape(-1)
    if form == "tanh":
        fused_want, fused_slope = _tanh_gelu_and_slope(shifted)
    else:
        cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in shifted])
        fused_want, fused_slope = shifted * cdf, cdf + shifted * np.exp(-shifted ** 2 / 2) / math.sqrt(2 * math.pi)
    for got, want in ((out, value), (grad, slope), (fused_value.reshape(-1), fused_want),
                      (fused_grad.reshape(-1), fused_slope), (fused_forward.reshape(-1), fused_want)):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=5e-7)


def test_float32_gelu_kernels_at_float32_accuracy():
    x = np.linspace(-12, 12, 100001).astype(np.float32)
    out, slope = np.empty_like(x), np.empty_like(x)
    elementwise_kernels.gelu(x, out)
    elementwise_kernels.gelu_backward(np.ones_like(x), x, slope)
    wide = x.astype(np.float64)
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in wide])
    np.testing.assert_allclose(out, wide * cdf, rtol=2e-6, atol=5e-7)
    np.testing.assert_allclose(slope, cdf + wide * np.exp(-wide * wide / 2) / math.sqrt(2 * math.pi),
                               rtol=2e-6, atol=5e-7)


# -- self-attention from a packed projection ----------------------------------------------------


def composed_self_attention(qkv, n_head):
    B, T, C3 = qkv.shape
    C = C3 // 3
    q, k, v = qkv.split(C, dim=2)
    q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return y.transpose(1, 2).reshape(B, T, C)


@pytest.mark.parametrize("shape,heads", [((2, 5, 24), 2), ((3, 130, 48), 4), ((1, 1, 6), 1)])
def test_self_attention_equals_its_composition_bit_for_bit(shape, heads):
    """Same kernels on the same values: forward and the qkv gradient are identical."""
    data = rng.standard_normal(shape).astype(np.float32)
    grad = rng.standard_normal((shape[0], shape[1], shape[2] // 3)).astype(np.float32)
    results = []
    for fn in (lambda t: F.self_attention(t, heads), lambda t: composed_self_attention(t, heads)):
        qkv = zero.tensor(data, requires_grad=True)
        y = fn(qkv)
        y.backward(zero.tensor(grad))
        results.append((y.detach().numpy(), qkv.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_self_attention_gradients_match_float64_finite_differences():
    qkv = leaf((2, 6, 12), scale=0.5)
    assert gradcheck(lambda t: F.self_attention(t, 2), [qkv])


def test_self_attention_refuses_a_width_the_heads_do_not_divide():
    with pytest.raises(ShapeError, match=r"self_attention: qkv must be \(batch, length, 3 \* width\)"):
        F.self_attention(zero.zeros(2, 4, 30), 4)
    with pytest.raises(ShapeError, match="self_attention"):
        F.self_attention(zero.zeros(4, 30), 2)
