"""F.interpolate and the Upsample modules against PyTorch: every mode with size and
scale_factor, align_corners both ways, recompute_scale_factor, float32 and float64, values
and gradients; the reprs and the errors."""
from __future__ import annotations

import numpy as np
import pytest
from torch_compare import compare

import zero
import zero.nn as nn
import zero.nn.functional as F

RNG = np.random.default_rng(0)
INPUTS = {1: RNG.standard_normal((2, 3, 5)), 2: RNG.standard_normal((2, 3, 5, 7)),
          3: RNG.standard_normal((1, 2, 3, 4, 5))}
SIZES = [dict(size=(9, 4, 11)), dict(size=(5, 7, 5)), dict(size=1), dict(scale_factor=2), dict(scale_factor=3.3),
         dict(scale_factor=(1.7, 0.6, 2.5)), dict(scale_factor=(1.7, 0.6, 2.5), recompute_scale_factor=True)]


def for_dims(kwargs, dims):
    """The keyword arguments with tuples cut to ``dims`` entries."""
    return {k: v[:dims] if isinstance(v, tuple) else v for k, v in kwargs.items()}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sizes", SIZES, ids=str)
@pytest.mark.parametrize("mode, dims", [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 2),
                                        ("area", 2)])
def test_nearest_and_area_match_pytorch(mode, dims, sizes, dtype):
    kwargs = dict(for_dims(sizes, dims), mode=mode)
    compare(lambda lib, x: lib.nn.functional.interpolate(x, **kwargs), [INPUTS[dims]], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("sizes", SIZES, ids=str)
@pytest.mark.parametrize("mode, dims", [("linear", 1), ("bilinear", 2), ("bicubic", 2), ("trilinear", 3)])
def test_interpolating_modes_match_pytorch(mode, dims, sizes, align_corners, dtype):
    kwargs = dict(for_dims(sizes, dims), mode=mode, align_corners=align_corners)
    compare(lambda lib, x: lib.nn.functional.interpolate(x, **kwargs), [INPUTS[dims]], dtype=dtype)


def test_nearest_keeps_an_integer_dtype():
    torch = pytest.importorskip("torch")
    x = RNG.integers(0, 255, (1, 2, 3, 4)).astype(np.uint8)
    got = F.interpolate(zero.tensor(x), scale_factor=2)
    want = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=2)
    assert got.dtype is zero.uint8
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name, kwargs", [
    ("Upsample", dict(scale_factor=2)), ("Upsample", dict(size=(3, 4), mode="bilinear")),
    ("Upsample", dict(scale_factor=(2, 3), mode="bicubic", align_corners=True)),
    ("UpsamplingNearest2d", dict(scale_factor=2)), ("UpsamplingBilinear2d", dict(size=5)),
])
def test_modules_match_pytorch_output_and_repr(name, kwargs):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(ours) == repr(theirs)
    compare(lambda lib, x: (ours if lib is zero else theirs)(x), [INPUTS[2]])


@pytest.mark.parametrize("call, error, words", [
    (lambda x: F.interpolate(x, size=4, scale_factor=2), ValueError, "only one of size or scale_factor"),
    (lambda x: F.interpolate(x), ValueError, "either size or scale_factor"),
    (lambda x: F.interpolate(x, size=4, align_corners=True), ValueError, "align_corners option"),
    (lambda x: F.interpolate(x, size=4, mode="linear"), NotImplementedError, "needs 3D input"),
    (lambda x: F.interpolate(x, size=(4, 4, 4)), ValueError, "same number of spatial dimensions"),
    (lambda x: F.interpolate(x, size=4, mode="cubic"), NotImplementedError, "mode must be one of"),
])
def test_errors(call, error, words):
    with pytest.raises(error, match=words):
        call(zero.ones(1, 1, 3, 3))
