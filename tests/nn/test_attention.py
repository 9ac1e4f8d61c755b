"""nn.MultiheadAttention against PyTorch's (same weights): outputs, attention weights and
gradients, with PyTorch's mask conventions."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero import nn

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def test_shapes_weights_and_masks_without_pytorch():
    zero.manual_seed(0)
    attention = nn.MultiheadAttention(8, 2, batch_first=True)
    x = zero.randn(3, 5, 8, requires_grad=True)
    padding = zero.tensor([[False] * 4 + [True]] * 3)
    out, weights = attention(x, x, x, key_padding_mask=padding, is_causal=True)
    assert out.shape == (3, 5, 8) and weights.shape == (3, 5, 5)
    w = weights.detach().numpy()
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)
    assert np.all(w[:, :, 4] == 0) and np.all(np.triu(w[0], 1) == 0)   # padding and the future get nothing
    out.sum().backward()
    assert x.grad.shape == x.shape and attention.in_proj_weight.grad is not None
    fast, none = attention(x, x, x, need_weights=False, is_causal=True)
    slow, _ = attention(x, x, x, is_causal=True)
    assert none is None
    np.testing.assert_allclose(fast.detach().numpy(), slow.detach().numpy(), rtol=1e-5, atol=1e-6)


def _pair(embed, heads, batch_first, kdim=None, vdim=None):
    ours = nn.MultiheadAttention(embed, heads, batch_first=batch_first, kdim=kdim, vdim=vdim, dtype=zero.float64)
    theirs = torch.nn.MultiheadAttention(embed, heads, batch_first=batch_first, kdim=kdim, vdim=vdim,
                                         dtype=torch.float64)
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            p.copy_(torch.tensor(np.random.default_rng(len(name)).standard_normal(p.shape) * 0.3))
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


CASES = {
    "self, seq-first": dict(batch_first=False),
    "batch_first": dict(batch_first=True),
    "kdim/vdim": dict(batch_first=True, kdim=3, vdim=5),
    "bool attn_mask": dict(batch_first=True, attn_mask="bool"),
    "float attn_mask + key padding": dict(batch_first=True, attn_mask="float", key_padding_mask=True),
    "3-D attn_mask, per-head weights": dict(batch_first=True, attn_mask="3d", average_attn_weights=False),
    "need_weights=False": dict(batch_first=True, need_weights=False, attn_mask="bool"),
}


@needs_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_pytorch(case):
    options = dict(CASES[case])
    batch_first = options.pop("batch_first")
    kdim, vdim = options.pop("kdim", None), options.pop("vdim", None)
    ours, theirs = _pair(8, 2, batch_first, kdim, vdim)
    rng = np.random.default_rng(0)
    n, length, source = 2, 4, 3
    shape = (lambda t, e: (n, t, e)) if batch_first else (lambda t, e: (t, n, e))
    arrays = [rng.standard_normal(shape(length, 8)), rng.standard_normal(shape(source, kdim or 8)),
              rng.standard_normal(shape(source, vdim or 8))]
    kwargs = {"need_weights": options.pop("need_weights", True),
              "average_attn_weights": options.pop("average_attn_weights", True)}
    mask_kind = options.pop("attn_mask", None)
    masks = {}
    if mask_kind == "bool":
        masks["attn_mask"] = np.triu(np.ones((length, source), bool), 1)
    elif mask_kind == "float":
        masks["attn_mask"] = rng.standard_normal((length, source))
    elif mask_kind == "3d":
        masks["attn_mask"] = rng.standard_normal((n * 2, length, source))
    if options.pop("key_padding_mask", False):
        masks["key_padding_mask"] = np.array([[False, False, True], [False, True, False]])
    results = []
    for lib, module in ((zero, ours), (torch, theirs)):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out, weights = module(*inputs, **{k: lib.tensor(v) for k, v in masks.items()}, **kwargs)
        out.sum().backward()
        grads = [np.asarray(t.grad) for t in inputs] + [np.asarray(module.out_proj.weight.grad)]
        results.append((np.asarray(out.detach()), None if weights is None else np.asarray(weights.detach()), grads))
    (o1, w1, g1), (o2, w2, g2) = results
    np.testing.assert_allclose(o1, o2, rtol=1e-10, atol=1e-12)
    assert (w1 is None) == (w2 is None)
    if w1 is not None:
        np.testing.assert_allclose(w1, w2, rtol=1e-10, atol=1e-12)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_parameters_are_named_as_pytorch_names_them():
    assert [n for n, _ in nn.MultiheadAttention(8, 2).named_parameters()] == [
        "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert [n for n, _ in nn.MultiheadAttention(8, 2, kdim=3, vdim=5).named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
