"""Issue 37, the last parity edges against PyTorch: softmax of a row all -inf (NaN, and
attention's zeros), error classes for a survey of bad inputs, and the smaller gaps."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import DEVICE

import zero
import zero.nn.functional as ZF

torch = pytest.importorskip("torch")
TF = torch.nn.functional
INF = float("inf")


def F(m):
    return ZF if m is zero else TF


def _array(r):
    return tuple(_array(x) for x in r) if isinstance(r, tuple) else r.detach().cpu().numpy()


def _same(fn, dtype_too=True):
    """fn(zero) and fn(torch) agree in shape, dtype and values (NaN where the other has NaN)."""
    z, t = _array(fn(zero)), _array(fn(torch))
    zs, ts = (z, t) if isinstance(z, tuple) else ((z,), (t,))
    for a, b in zip(zs, ts, strict=True):
        assert a.shape == b.shape
        if dtype_too:
            assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)


def _on(m, value, **kwargs):
    return m.tensor(value, device=DEVICE, **kwargs) if m is zero else m.tensor(value, **kwargs)


# -- item 1: softmax of a row all -inf --------------------------------------------------------

ROWS = [[-INF, -INF, -INF, -INF], [0.0, -INF, 1.0, 2.0], [-INF, 3.0, -INF, -INF]]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_of_a_row_all_minus_inf_is_nan_forward_and_backward(name, dim, dtype):
    upstream = np.random.default_rng(0).standard_normal((3, 4))

    def run(m):
        x = _on(m, ROWS, dtype=getattr(m, dtype), requires_grad=True)
        y = getattr(F(m), name)(x, dim)
        (y * _on(m, upstream, dtype=getattr(m, dtype))).nan_to_num(0.0, 0.0, 0.0).sum().backward()
        return y, x.grad
    _same(run)


def test_softmax_of_a_wide_row_all_minus_inf_is_nan():
    """A row wider than one block of the kernels (CUDA reads 4096 columns per step)."""
    rows = np.full((2, 5000), -INF, np.float32)
    rows[1, 4999] = 1.0
    _same(lambda m: m.softmax(_on(m, rows), -1))
    _same(lambda m: m.log_softmax(_on(m, rows), -1))
    _same(lambda m: _on(m, rows).softmax(0))


def test_softmax_module_and_method_give_nan_too():
    _same(lambda m: m.nn.Softmax(dim=1)(_on(m, ROWS)))
    _same(lambda m: m.nn.LogSoftmax(dim=1)(_on(m, ROWS)))
    _same(lambda m: _on(m, ROWS).softmax(-1))
    _same(lambda m: m.nn.Softmin(dim=1)(-_on(m, ROWS)))


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_attention_with_a_fully_masked_row_gives_zeros_and_zero_gradients(kind):
    """PyTorch's CPU attention (its math path included) gives zeros for a query row whose
    keys are all masked, and a zero gradient there; plain softmax gives NaN."""
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 3, 4, 5)) for _ in range(3))
    keep = rng.random((4, 4)) > 0.3
    keep[:, 0] = True
    keep[2] = False                                     # query row 2 sees no key

    def run(m):
        leaves = [_on(m, a, dtype=m.float32, requires_grad=True) for a in (q, k, v)]
        mask = _on(m, keep) if kind == "bool" else _on(m, np.where(keep, 0.0, -INF), dtype=m.float32)
        out = F(m).scaled_dot_product_attention(*leaves, attn_mask=mask)
        (out * out).sum().backward()
        return (out,) + tuple(t.grad for t in leaves)
    _same(run)
    out = run(zero)[0]
    assert not out[:, :, 2].detach().cpu().numpy().any()


def test_multihead_attention_with_a_fully_padded_sequence_as_pytorch():
    """need_weights=True goes through softmax (NaN in PyTorch), False through attention (0)."""
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    pad = np.zeros((2, 3), bool)
    pad[1] = True
    for need_weights in (True, False):
        def run(m, need_weights=need_weights):
            m.manual_seed(0)
            layer = m.nn.MultiheadAttention(4, 2, batch_first=True)
            if m is zero:
                layer = layer.to(DEVICE)
            with m.no_grad():
                layer.in_proj_weight.copy_(_on(m, np.linspace(-1, 1, 48).reshape(12, 4), dtype=m.float32))
                layer.out_proj.weight.copy_(_on(m, np.linspace(-1, 1, 16).reshape(4, 4), dtype=m.float32))
            xs = _on(m, x, dtype=m.float32)
            out, weights = layer(xs, xs, xs, key_padding_mask=_on(m, pad), need_weights=need_weights)
            return out if weights is None else (out, weights)
        _same(run)
