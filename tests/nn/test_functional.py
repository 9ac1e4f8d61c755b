"""zero.nn.functional: softmax, losses, layer norm, dropout, attention and friends.

Forward against NumPy references (float32 and float64), backward with gradcheck in
float64 on contiguous and non-contiguous inputs, options and error messages.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import zero
import zero.nn.functional as F
from zero.autograd import gradcheck
from zero.errors import DTypeError, ShapeError

FLOATS = (zero.float32, zero.float64)
TOL = {zero.float32: dict(rtol=2e-5, atol=2e-6), zero.float64: dict(rtol=1e-10, atol=1e-12)}
rng = np.random.default_rng(0)


def leaf(shape, dtype=zero.float64, grad=True, scale=1.0):
    return zero.tensor(rng.standard_normal(shape) * scale, dtype=dtype, requires_grad=grad)


def close(actual, expected, dtype=zero.float64):
    np.testing.assert_allclose(np.asarray(actual.detach()), expected, **TOL[dtype])


def np_log_softmax(x, axis):
    peak = x.max(axis, keepdims=True)
    return x - peak - np.log(np.exp(x - peak).sum(axis, keepdims=True))


def np_softmax(x, axis):
    return np.exp(np_log_softmax(x, axis))


# -- softmax and log-softmax ----------------------------------------------------------------

LAYOUTS = {  # name: (leaf shape, make the input from the leaf, the same in NumPy)
    "contiguous": ((3, 4, 5), lambda t: t, lambda a: a),
    "transposed": ((5, 4, 3), lambda t: t.permute(2, 1, 0), lambda a: a.transpose(2, 1, 0)),
    "sliced": ((3, 4, 10), lambda t: t[..., 1::2], lambda a: a[..., 1::2]),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_forward(name, dim, layout, dtype):
    shape, make, make_np = LAYOUTS[layout]
    x = leaf(shape, dtype, grad=False, scale=3.0)
    reference = {"softmax": np_softmax, "log_softmax": np_log_softmax}[name]
    out = getattr(F, name)(make(x), dim)
    assert out.shape == make(x).shape and out.is_contiguous() and out.dtype is dtype
    close(out, reference(make_np(np.asarray(x).astype(np.float64)), dim), dtype)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("fn", [lambda f, x: f(x, 1), lambda f, x: f(x, 0), lambda f, x: f(x.mT, 0),
                                lambda f, x: f(x[:, 1::2], 1), lambda f, x: f(x.reshape(2, 3, 2), 1)])
def test_softmax_gradcheck(name, fn):
    x = leaf((3, 4))
    assert gradcheck(lambda t: fn(getattr(F, name), t), (x,))


def test_softmax_masked_rows_and_special_values():
    inf = float("inf")
    x = zero.tensor([[-inf, -inf, -inf], [0.0, -inf, 0.0], [1.0, float("nan"), 0.0], [1000.0, 0.0, -1000.0]])
    out = F.softmax(x, -1).numpy()
    assert np.isnan(out[0]).all()                             # all -inf: NaN, as PyTorch
    np.testing.assert_allclose(out[1], [0.5, 0, 0.5])
    assert np.isnan(out[2]).all()                             # NaN spreads over its row
    np.testing.assert_allclose(out[3], [1, 0, 0])             # no overflow
    log = F.log_softmax(x, -1).numpy()
    assert np.isnan(log[0]).all() and log[1][1] == -inf and abs(log[3][0]) < 1e-6
    x = zero.tensor([[-inf, -inf], [1.0, 2.0]], requires_grad=True)
    F.softmax(x, 1).sum().backward()
    assert np.isnan(x.grad.numpy()[0]).all()                  # NaN gradient from a row all -inf (PyTorch)
    np.testing.assert_allclose(x.grad.numpy()[1], 0, atol=1e-7)


def test_softmax_methods_and_errors():
    x = leaf((2, 3), grad=False)
    close(x.softmax(-1), np_softmax(np.asarray(x), -1))
    close(F.softmax(zero.tensor(2.0), 0), 1.0)
    with pytest.raises(DTypeError, match="softmax"):
        F.softmax(zero.tensor([1, 2]), 0)
    with pytest.raises(IndexError):
        F.softmax(x, 2)


# -- cross-entropy and NLL ------------------------------------------------------------------


def np_cross_entropy(x, target, weight=None, ignore_index=-100, reduction="mean", smoothing=0.0,
                     log_probs=False):
    """The reference: classes moved last, per-row loss, then the reduction."""
    x, target = np.asarray(x, dtype=np.float64), np.asarray(target)
    target_shape = target.shape
    if x.ndim == 1:
        x, target = x[None], target[None]
    classes = x.shape[1]
    rows = np.moveaxis(x, 1, -1).reshape(-1, classes)
    logp = rows if log_probs else np_log_softmax(rows, -1)
    t = target.reshape(-1)
    w = np.ones(classes) if weight is None else np.asarray(weight, dtype=np.float64)
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    nll = -w[safe] * logp[np.arange(len(t)), safe]
    smooth = -(logp * w).sum(-1)
    per_row = np.where(valid, (1 - smoothing) * nll + smoothing / classes * smooth, 0.0)
    if reduction == "none":
        return per_row.reshape(target_shape)
    if reduction == "sum":
        return per_row.sum()
    return per_row.sum() / np.where(valid, w[safe], 0.0).sum()


CE_CASES = {  # name: (input shape, target shape)
    "2d": ((6, 5), (6,)),
    "1d": ((5,), ()),
    "kdim": ((2, 5, 3, 2), (2, 3, 2)),
}


def _targets(shape, classes, ignore=True):
    t = rng.integers(0, classes, size=shape)
    if ignore and t.size > 2:
        t.reshape(-1)[1] = -100
    return zero.tensor(t)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", CE_CASES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_forward(dtype, case, reduction, smoothing, weighted):
    in_shape, target_shape = CE_CASES[case]
    classes = in_shape[0] if len(in_shape) == 1 else in_shape[1]
    x = leaf(in_shape, dtype, grad=False, scale=2.0)
    t = _targets(target_shape, classes)
    w = zero.tensor(rng.uniform(0.5, 2.0, classes), dtype=dtype) if weighted else None
    out = F.cross_entropy(x, t, weight=w, reduction=reduction, label_smoothing=smoothing)
    expected = np_cross_entropy(x, t, None if w is None else np.asarray(w), reduction=reduction,
                                smoothing=smoothing)
    assert out.shape == np.shape(expected) and out.dtype is dtype
    close(out, expected, dtype)
    nll = F.nll_loss(F.log_softmax(x, 0 if x.ndim == 1 else 1), t, weight=w, reduction=reduction)
    close(nll, np_cross_entropy(x, t, None if w is None else np.asarray(w), reduction=reduction), dtype)


@pytest.mark.parametrize("case", CE_CASES)
@pytest.mark.parametrize("options", [dict(), dict(reduction="sum", label_smoothing=0.3),
                                     dict(reduction="none", label_smoothing=0.1), dict(weighted=True),
                                     dict(weighted=True, label_smoothing=0.2, reduction="none")])
def test_cross_entropy_gradcheck(case, options):
    options = dict(options)
    in_shape, target_shape = CE_CASES[case]
    classes = in_shape[0] if len(in_shape) == 1 else in_shape[1]
    t = _targets(target_shape, classes)
    if options.pop("weighted", False):
        options["weight"] = zero.tensor(rng.uniform(0.5, 2.0, classes))
    x = leaf(in_shape)
    assert gradcheck(lambda v: F.cross_entropy(v, t, **options), (x,))
    assert gradcheck(lambda v: F.nll_loss(F.log_softmax(v, 0 if v.ndim == 1 else 1), t,
                                          **{k: v for k, v in options.items() if k != "label_smoothing"}), (x,))


def test_cross_entropy_non_contiguous_and_int32():
    x = leaf((5, 4))   # used as its transpose (4, 5): 4 rows of 5 classes
    t = zero.tensor([0, 4, 2, 1], dtype=zero.int32)
    close(F.cross_entropy(x.mT, t), np_cross_entropy(np.asarray(x.detach()).T, [0, 4, 2, 1]))
    assert gradcheck(lambda v: F.cross_entropy(v.mT, t, label_smoothing=0.1), (x,))
    assert gradcheck(lambda v: F.cross_entropy(v[:, ::2], t[:3]), (leaf((3, 10)),))


def test_cross_entropy_ignore_index():
    x = leaf((4, 3))
    t = zero.tensor([2, 7, 7, 0])
    loss = F.cross_entropy(x, t, ignore_index=7)
    close(loss, np_cross_entropy(x, [2, 7, 7, 0], ignore_index=7))
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy()[1:3], 0)       # ignored rows get no gradient
    np.testing.assert_allclose(x.grad.numpy().sum(1), 0, atol=1e-12)
    every = F.cross_entropy(x.detach(), zero.tensor([-100] * 4))
    assert math.isnan(every.item())                               # 0 / 0, as in PyTorch


def test_loss_errors_name_op_and_shapes():
    x = zero.randn(4, 3)
    with pytest.raises(DTypeError, match=r"cross_entropy.*float32\[4\].*float32\[4, 3\]"):
        F.cross_entropy(x, zero.randn(4))
    with pytest.raises(ShapeError, match=r"cross_entropy.*int64\[3\].*float32\[4, 3\]"):
        F.cross_entropy(x, zero.tensor([0, 1, 2]))
    with pytest.raises(ShapeError, match=r"nll_loss.*int64\[4, 1\]"):
        F.nll_loss(x, zero.zeros(4, 1, dtype=zero.int64))
    with pytest.raises(IndexError, match="target 3 is out of bounds for 3 classes"):
        F.cross_entropy(x, zero.tensor([0, 1, 3, 0]))
    with pytest.raises(IndexError):
        F.cross_entropy(x, zero.tensor([0, -1, 2, 0]))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, zero.tensor([0, 1, 2, 0]), reduction="avg")
    with pytest.raises(ShapeError, match="weight"):
        F.cross_entropy(x, zero.tensor([0, 1, 2, 0]), weight=zero.ones(4))
    with pytest.raises(RuntimeError, match="label_smoothing"):
        F.cross_entropy(x, zero.tensor([0, 1, 2, 0]), label_smoothing=1.5)


def test_mse_loss():
    a, b = leaf((3, 4)), leaf((3, 4))
    diff = np.asarray(a.detach()) - np.asarray(b.detach())
    close(F.mse_loss(a, b), (diff ** 2).mean())
    close(F.mse_loss(a, b, reduction="sum"), (diff ** 2).sum())
    close(F.mse_loss(a, b, reduction="none"), diff ** 2)
    assert gradcheck(lambda u, v: F.mse_loss(u.mT, v.mT), (a, b))
    with pytest.warns(UserWarning, match="broadcast"):
        F.mse_loss(a, b[0])


# -- layer norm -----------------------------------------------------------------------------


def np_layer_norm(x, dims, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(-dims, 0))
    x = np.asarray(x, dtype=np.float64)
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    if weight is not None:
        y = y * np.asarray(weight, dtype=np.float64)
    return y if bias is None else y + np.asarray(bias, dtype=np.float64)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
@pytest.mark.parametrize("normalized", [(6,), (3, 6)])
def test_layer_norm_forward(dtype, affine, normalized):
    x = leaf((2, 3, 6), dtype, grad=False, scale=3.0) + 5.0
    w = leaf(normalized, dtype, grad=False) if affine != "none" else None
    b = leaf(normalized, dtype, grad=False) if affine == "both" else None
    out = F.layer_norm(x, normalized, w, b)
    assert out.shape == x.shape and out.dtype is dtype
    close(out, np_layer_norm(x, len(normalized), w, b), dtype)
    close(F.layer_norm(x.mT.contiguous().mT, normalized, w, b), np_layer_norm(x, len(normalized), w, b), dtype)


def test_layer_norm_float32_rows_far_from_zero():
    """float32 rows of 1e4 + N(0, 1): the statistics keep the digits of the spread (a float32
    mean near 1e4 alone would put every output off by ~1e-3; PyTorch's float32 is off by 2e-3)."""
    x = np.random.default_rng(3).standard_normal((37, 128)).astype(np.float32) + np.float32(1e4)
    out = F.layer_norm(zero.tensor(x), (128,))
    expected = np_layer_norm(x.astype(np.float64), 1)
    assert np.abs(out.numpy() - expected).max() < 1e-5


def test_layer_norm_gradcheck():
    x, w, b = leaf((3, 2, 5)), leaf((5,)), leaf((5,))
    assert gradcheck(lambda v, ww, bb: F.layer_norm(v, (5,), ww, bb), (x, w, b))
    assert gradcheck(lambda v, ww, bb: F.layer_norm(v.transpose(0, 2), (3,), ww[:3], bb[1:4]), (x, w, b))
    assert gradcheck(lambda v: F.layer_norm(v[:, :, ::2], (2, 3), eps=1e-3), (x,))
    assert gradcheck(lambda v, ww: F.layer_norm(v, 5, ww), (x, w))


def test_layer_norm_matches_composition():
    x, w, b = leaf((4, 7), scale=2.0), leaf((7,)), leaf((7,))
    fused = F.layer_norm(x, (7,), w, b, eps=1e-5)
    fused.backward(zero.ones(4, 7, dtype=zero.float64) * zero.arange(7, dtype=zero.float64))
    grads = [t.grad.numpy().copy() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    mean = x.mean(-1, keepdim=True)
    composed = (x - mean) * ((x - mean).square().mean(-1, keepdim=True) + 1e-5).rsqrt() * w + b
    composed.backward(zero.ones(4, 7, dtype=zero.float64) * zero.arange(7, dtype=zero.float64))
    close(fused, composed.detach().numpy())
    for expected, t in zip(grads, (x, w, b)):
        np.testing.assert_allclose(expected, t.grad.numpy(), rtol=1e-9, atol=1e-10)


def test_layer_norm_errors():
    x = zero.randn(2, 4)
    with pytest.raises(ShapeError, match=r"layer_norm.*\[3\].*float32\[2, 4\]"):
        F.layer_norm(x, (3,))
    with pytest.raises(ShapeError, match="weight"):
        F.layer_norm(x, (4,), zero.ones(3))
    with pytest.raises(DTypeError, match="bias"):
        F.layer_norm(x, (4,), None, zero.ones(4, dtype=zero.float64))


# -- dropout --------------------------------------------------------------------------------


def splitmix_uniform(seed: int, count: int) -> np.ndarray:
    """The documented recipe, in plain Python integers."""
    mask = (1 << 64) - 1
    values = []
    for i in range(count):
        z = (seed + (i + 1) * 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        values.append((z >> 11) * 2.0 ** -53)
    return np.array(values)


@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_mask_follows_the_documented_hash(dtype):
    x = leaf((4, 8), dtype, grad=False)
    seed = zero.Generator(seed=11).next_seed()
    out = F.dropout(x, 0.4, generator=zero.Generator(seed=11))
    keep = (splitmix_uniform(seed, 32) >= 0.4).reshape(4, 8)
    close(out, np.where(keep, np.asarray(x) / 0.6, 0.0), dtype)


def test_dropout_statistics_and_determinism():
    x = zero.ones(200, 500)
    zero.manual_seed(3)
    a = F.dropout(x, 0.3).numpy()
    zero.manual_seed(3)
    b = F.dropout(x, 0.3).numpy()
    np.testing.assert_array_equal(a, b)                        # same seed, same mask
    assert not np.array_equal(a, F.dropout(x, 0.3).numpy())    # next call, next seed
    assert abs((a == 0).mean() - 0.3) < 0.01                   # fraction dropped ~ p
    assert abs(a.mean() - 1.0) < 0.01                          # expectation preserved
    np.testing.assert_allclose(a[a != 0], 1 / 0.7, rtol=1e-6)  # kept values scaled


def test_dropout_backward_uses_the_same_mask():
    x = leaf((30, 40), dtype=zero.float32)
    out = F.dropout(x, 0.5)
    out.backward(zero.ones(30, 40))
    kept = out.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 2.0, 0.0))
    x64 = leaf((3, 4))
    assert gradcheck(lambda v: F.dropout(v.mT, 0.4, generator=zero.Generator(seed=5)), (x64,))


def test_dropout_identity_and_edges():
    x = leaf((3, 4))
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 0.7, training=False) is x
    out = F.dropout(x, 1.0)
    np.testing.assert_array_equal(out.detach().numpy(), 0)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0)
    with pytest.raises(ValueError, match="dropout"):
        F.dropout(x, 1.5)


# -- attention ------------------------------------------------------------------------------


def np_attention(q, k, v, mask=None, causal=False, scale=None):
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if causal:
        mask = np.tril(np.ones(scores.shape[-2:], bool))
    if mask is not None and np.asarray(mask).dtype == bool:
        scores = np.where(mask, scores, -np.inf)
    elif mask is not None:
        scores = scores + np.asarray(mask)
    peak = scores.max(-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isfinite(peak), peak, 0))
    total = weights.sum(-1, keepdims=True)
    return (np.where(total > 0, weights / np.where(total > 0, total, 1), 0)) @ v


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", ["plain", "causal", "bool", "float", "scale"])
def test_attention_forward(dtype, kind):
    q, k, v = leaf((2, 3, 4, 8), dtype, False), leaf((2, 3, 5, 8), dtype, False), leaf((2, 3, 5, 6), dtype, False)
    mask = None
    if kind == "bool":
        mask = zero.tensor(rng.random((4, 5)) > 0.4)
        mask[1] = False                                     # a fully masked query row -> zeros
    elif kind == "float":
        mask = leaf((3, 1, 5), dtype, False)                # broadcast over batch and queries
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=kind == "causal",
                                         scale=0.3 if kind == "scale" else None)
    assert out.shape == (2, 3, 4, 6) and out.dtype is dtype
    expected = np_attention(q, k, v, None if mask is None else np.asarray(mask), kind == "causal",
                            0.3 if kind == "scale" else None)
    close(out, expected, dtype)
    if kind == "bool":
        np.testing.assert_array_equal(out.numpy()[:, :, 1], 0)


def test_attention_gradcheck():
    q, k, v = leaf((2, 4, 3)), leaf((2, 4, 3)), leaf((2, 4, 2))
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), (q, k, v))
    mask = zero.tensor([[True, False, True, True]] * 4)
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a.mT.mT, b[:, :, :], c, attn_mask=mask),
                     (q, k, v))


def test_attention_dropout_and_errors():
    q = leaf((2, 4, 3), grad=False)
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5, generator=zero.Generator(seed=1))
    probs = F.softmax(q @ q.mT / math.sqrt(3), -1)
    expected = F.dropout(probs, 0.5, generator=zero.Generator(seed=1)) @ q
    close(out, expected.numpy())
    with pytest.raises(RuntimeError, match="attn_mask or is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=zero.ones(4, 4, dtype=zero.bool), is_causal=True)
    with pytest.raises(ShapeError, match=r"query.*key"):
        F.scaled_dot_product_attention(q, leaf((2, 4, 5), grad=False), q)


# -- the rest: activations, linear, embedding, one_hot --------------------------------------


def test_small_functions():
    x = leaf((3, 4), grad=False)
    a = np.asarray(x)
    close(F.relu(x), np.maximum(a, 0))
    close(F.sigmoid(x), 1 / (1 + np.exp(-a)))
    close(F.silu(x), a / (1 + np.exp(-a)))
    close(F.tanh(x), np.tanh(a))
    close(F.gelu(x, approximate="tanh"), 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3))))
    w, b = leaf((5, 4)), leaf((5,))
    close(F.linear(x, w, b), a @ np.asarray(w.detach()).T + np.asarray(b.detach()))
    assert gradcheck(lambda u, v: F.linear(x, u, v), (w, b))
    with pytest.raises(ShapeError, match="linear"):
        F.linear(x, leaf((5, 3)))
    ids = zero.tensor([[0, 2], [2, 4]])
    close(F.embedding(ids, w), np.asarray(w.detach())[[[0, 2], [2, 4]]])
    np.testing.assert_array_equal(F.one_hot(zero.tensor([0, 2, 1])).numpy(), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(zero.tensor([1]), 4).shape == (1, 4)
    with pytest.raises(IndexError):
        F.one_hot(zero.tensor([5]), 3)


# -- PyTorch as a second oracle (when installed) --------------------------------------------


def test_against_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = rng.standard_normal((6, 5, 3))
    t = rng.integers(0, 5, size=(6, 3))
    t[0, 0] = -100
    w = rng.uniform(0.5, 2, 5)
    for options in (dict(), dict(label_smoothing=0.2), dict(reduction="none"), dict(weight=w, label_smoothing=0.1)):
        ours = F.cross_entropy(zero.tensor(x), zero.tensor(t),
                               **{k: zero.tensor(v) if k == "weight" else v for k, v in options.items()})
        theirs = tf.cross_entropy(torch.tensor(x), torch.tensor(t),
                                  **{k: torch.tensor(v) if k == "weight" else v for k, v in options.items()})
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    y = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(F.layer_norm(zero.tensor(y), (4,)).numpy(),
                               tf.layer_norm(torch.tensor(y), (4,)).numpy(), rtol=1e-10, atol=1e-12)
    q, k, v = (rng.standard_normal((2, 4, 3)) for _ in range(3))
    mask = rng.random((4, 4)) > 0.5
    for options in (dict(is_causal=True), dict(attn_mask=mask)):
        ours = F.scaled_dot_product_attention(
            *(zero.tensor(a) for a in (q, k, v)),
            **{n: zero.tensor(o) if n == "attn_mask" else o for n, o in options.items()})
        theirs = tf.scaled_dot_product_attention(
            *(torch.tensor(a) for a in (q, k, v)),
            **{n: torch.tensor(o) if n == "attn_mask" else o for n, o in options.items()})
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)


def test_dropout2d_zeroes_whole_channels_and_scales_the_rest():
    zero.manual_seed(0)
    x = zero.ones(4, 8, 3, 3, requires_grad=True)
    y = zero.nn.Dropout2d(0.5)(x)
    per_channel = y.detach().numpy().reshape(32, 9)
    assert np.all(per_channel.std(axis=1) == 0)                      # a channel is kept or dropped whole
    assert set(np.unique(per_channel).tolist()) == {0.0, 2.0}
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # the gradient takes the same mask
    layer = zero.nn.Dropout2d(0.5).eval()
    assert layer(x) is x
    with pytest.raises(zero.errors.ShapeError, match="3-D .* or 4-D"):
        F.dropout2d(zero.ones(2, 3), 0.5)
