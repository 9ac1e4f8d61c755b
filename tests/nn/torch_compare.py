"""Shared by the tests of the transposed / 3-D convolutions, resampling, fold and pooling
extras: run one function in Zero and in PyTorch on the same arrays, compare the outputs and
the gradients of every float input (for one random cotangent per output)."""
from __future__ import annotations

import numpy as np
import pytest

import zero

TOLERANCE = {np.float64: 1e-10, np.float32: 2e-5}


def compare(fn, arrays, *, dtype=np.float64, tolerance=None, grad=True, seed=0):
    """``fn(lib, *tensors)`` with lib zero or torch; float arrays become ``dtype`` tensors that
    require grad. Values within ``tolerance`` times the largest magnitude compared; integer
    outputs (indices) equal. Returns Zero's outputs."""
    torch = pytest.importorskip("torch")
    tolerance = TOLERANCE[dtype] if tolerance is None else tolerance

    def inputs(make):
        return [make(a.astype(dtype), grad) if a.dtype.kind == "f" else make(a, False) for a in arrays]

    ours = inputs(lambda a, g: zero.tensor(a, requires_grad=g))
    theirs = inputs(lambda a, g: torch.tensor(a, requires_grad=g))
    got, want = fn(zero, *ours), fn(torch, *theirs)
    got, want = (list(got), list(want)) if isinstance(want, tuple) else ([got], [want])
    assert len(got) == len(want)
    rng = np.random.default_rng(seed)
    ours_out, theirs_out = [], []
    for g, w in zip(got, want):
        w_array = w.detach().numpy()
        assert g.shape == tuple(w.shape), f"shape {g.shape}, PyTorch {tuple(w.shape)}"
        assert g.dtype.name == str(w.dtype).replace("torch.", ""), f"dtype {g.dtype}, PyTorch {w.dtype}"
        close(g.detach().numpy(), w_array, tolerance, "output")
        if w.dtype.is_floating_point and w.requires_grad:
            cotangent = rng.standard_normal(w.shape).astype(dtype)
            ours_out.append((g * zero.tensor(cotangent)).sum())
            theirs_out.append((w * torch.tensor(cotangent)).sum())
    if grad and ours_out:
        sum(ours_out).backward()
        sum(theirs_out).backward()
        for k, (a, t) in enumerate(zip(ours, theirs)):
            if t.requires_grad:
                assert a.grad is not None, f"no gradient for input {k}"
                close(a.grad.numpy(), t.grad.numpy(), tolerance, f"gradient of input {k}")
    return got


def close(got, want, tolerance, what):
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=tolerance * scale, err_msg=what)
