"""Inputs and comparisons shared by the tests of the ``torch`` names issue 37 (torchnames) adds:
the same NumPy arrays for both libraries, and ``compare`` -- values, dtypes, and the gradients of
every float input -- of ``fn(zero, ...)`` against ``fn(torch, ...)``."""
from __future__ import annotations

import numpy as np
import pytest

import zero

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
UNIT = RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)      # every unary function's domain
OTHER = RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
INTS = np.array([[1, 6, 3], [4, 5, 2]], dtype=np.int64)
F32 = np.float32
SIG, IMG, VOL = (RNG.uniform(-1, 1, s).astype(F32) for s in ((2, 3, 7), (2, 3, 5, 5), (1, 3, 4, 4, 4)))
W1, W2, W3 = (RNG.uniform(-0.5, 0.5, s).astype(F32) for s in ((4, 3, 3), (4, 3, 3, 3), (4, 3, 2, 2, 2)))
WT1, WT2, WT3 = (RNG.uniform(-0.5, 0.5, s).astype(F32) for s in ((3, 2, 3), (3, 2, 3, 3), (3, 2, 2, 2, 2)))
BIAS4, BIAS2, CH3 = (RNG.uniform(-0.5, 0.5, s).astype(F32) for s in ((4,), (2,), (3,)))
B3 = RNG.uniform(-1, 1, (2, 3, 4)).astype(F32)


def lib_tensor(lib, array, requires_grad=False):
    return lib.tensor(array.copy(), requires_grad=requires_grad)


def close(got, want, rtol=2e-6):
    want = want.detach() if hasattr(want, "detach") else want
    got = got.detach() if hasattr(got, "detach") else got
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    np.testing.assert_allclose(np.asarray(got.numpy(), np.float64), want.numpy().astype(np.float64),
                               rtol=rtol, atol=rtol, equal_nan=True)


def pair(array, requires_grad=True):
    return (zero.tensor(array.copy(), requires_grad=requires_grad),
            torch.tensor(array.copy(), requires_grad=requires_grad))


def compare(fn, arrays, grad=True, rtol=1e-5):
    """fn(lib, *tensors) in both libraries: values, and the gradients of every float input."""
    z_in, t_in = zip(*(pair(a, grad and a.dtype.kind == "f") for a in arrays))
    z_out, t_out = fn(zero, *z_in), fn(torch, *t_in)
    z_list = list(z_out) if isinstance(z_out, tuple) else [z_out]
    t_list = list(t_out) if isinstance(t_out, tuple) else [t_out]
    assert len(z_list) == len(t_list)
    for z, t in zip(z_list, t_list):
        close(z, t, rtol)
    if grad and any(t.requires_grad for t in t_list):
        weights = [RNG.uniform(-1, 1, tuple(t.shape)).astype(np.float32) for t in t_list]
        sum(((z * zero.tensor(w)).sum() for z, w in zip(z_list, weights) if z.dtype.is_floating_point)).backward()
        sum(((t * torch.tensor(w)).sum() for t, w in zip(t_list, weights) if t.is_floating_point())).backward()
        for z, t in zip(z_in, t_in):
            if t.grad is None:
                assert z.grad is None
            else:
                close(z.grad, t.grad, rtol)
