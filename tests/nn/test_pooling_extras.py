"""max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool1d/2d and max pooling of
integer inputs against PyTorch: values, indices (ties included) and gradients; the modules'
reprs."""
from __future__ import annotations

import numpy as np
import pytest
from torch_compare import compare

import zero
import zero.nn as nn
import zero.nn.functional as F

RNG = np.random.default_rng(0)
X3 = RNG.standard_normal((2, 3, 6, 7, 5))
TIES3 = RNG.integers(0, 3, (2, 3, 6, 7, 5)).astype(np.float64)   # many equal maxima: the first must win


@pytest.mark.parametrize("x", [X3, TIES3, X3[0]], ids=["random", "ties", "unbatched"])
@pytest.mark.parametrize("args", [(2,), (3, 2, 1, 1, True), ((2, 3, 2), (1, 2, 2), (1, 0, 1), (2, 1, 1))], ids=str)
def test_max_pool3d_matches_pytorch(args, x):
    compare(lambda lib, t: lib.nn.functional.max_pool3d(t, *args, return_indices=True), [x])


@pytest.mark.parametrize("args", [(2,), (3, 2, 1, True, False), ((2, 3, 2), (1, 2, 2), (1, 1, 0), False, True, 5),
                                  (3, 2, 1, True, True, None)], ids=str)
def test_avg_pool3d_matches_pytorch(args):
    compare(lambda lib, t: lib.nn.functional.avg_pool3d(t, *args), [X3])


@pytest.mark.parametrize("size", [(4, 3, None), (3, 7, 5), 1, (6, 7, 5), (2, 5, 3)], ids=str)
def test_adaptive_avg_pool3d_matches_pytorch(size):
    compare(lambda lib, t: lib.nn.functional.adaptive_avg_pool3d(t, size), [X3])


@pytest.mark.parametrize("x", [X3[:, :, 0], TIES3[:, :, 0], X3[0, :, 0]], ids=["random", "ties", "unbatched"])
@pytest.mark.parametrize("size", [(4, 3), (5, 2), 3, (7, 5), (None, 2)], ids=str)
def test_adaptive_max_pool2d_matches_pytorch(size, x):
    compare(lambda lib, t: lib.nn.functional.adaptive_max_pool2d(t, size, return_indices=True), [x])


@pytest.mark.parametrize("x", [X3[:, :, 0, 0], TIES3[:, :, 0, 0]], ids=["random", "ties"])
@pytest.mark.parametrize("size", [3, 4, 1, 5])
def test_adaptive_max_pool1d_matches_pytorch(size, x):
    compare(lambda lib, t: lib.nn.functional.adaptive_max_pool1d(t, size, return_indices=True), [x])


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("dims", [1, 2])
def test_max_pool_of_integers_keeps_the_dtype(dims, dtype):
    x = RNG.integers(0, 100, (2, 3, 7, 6)[:dims + 2]).astype(dtype)
    compare(lambda lib, t: getattr(lib.nn.functional, f"max_pool{dims}d")(t, 3, 2, 1, 1, True, True), [x])


@pytest.mark.parametrize("name, args", [
    ("MaxPool3d", (2,)), ("MaxPool3d", (3, 2, 1, 2, True)), ("AvgPool3d", (2,)), ("AvgPool3d", (3, 2, 1, True, False)),
    ("AdaptiveAvgPool3d", ((2, None, 3),)), ("AdaptiveMaxPool1d", (3,)), ("AdaptiveMaxPool2d", ((2, 3),)),
])
def test_modules_match_pytorch_output_and_repr(name, args):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    x = {"1": X3[:, :, 0, 0], "2": X3[:, :, 0]}.get(name[-2], X3)
    compare(lambda lib, t: (ours if lib is zero else theirs)(t), [x])


def test_adaptive_max_pool_module_returns_indices():
    values, indices = nn.AdaptiveMaxPool2d(2, return_indices=True)(zero.tensor(X3[:, :, 0]))
    assert values.shape == indices.shape == (2, 3, 2, 2) and indices.dtype is zero.int64
    with pytest.raises(RuntimeError):
        F.adaptive_max_pool2d(zero.ones(1, 3, 3), (1, 2, 3))
