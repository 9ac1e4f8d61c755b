"""F.interpolate and the Upsample modules against PyTorch: every mode with size and
scale_factor, align_corners both ways, recompute_scale_factor, float32 and float64, values
and gradients; antialias=True (bilinear, bicubic, lanczos) the same way and in the op harness
(every layout, on ZERO_TEST_DEVICE); the reprs and the errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from torch_compare import compare

import zero
import zero.nn as nn
import zero.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent.parent / "ops"))
from op_harness import check_op

RNG = np.random.default_rng(0)
INPUTS = {1: RNG.standard_normal((2, 3, 5)), 2: RNG.standard_normal((2, 3, 5, 7)),
          3: RNG.standard_normal((1, 2, 3, 4, 5))}
SIZES = [dict(size=(9, 4, 11)), dict(size=(5, 7, 5)), dict(size=1), dict(scale_factor=2), dict(scale_factor=3.3),
         dict(scale_factor=(1.7, 0.6, 2.5)), dict(scale_factor=(1.7, 0.6, 2.5), recompute_scale_factor=True)]
KEPT = dict(scale_factor=(1.1, 1.5, 0.9))   # the first dim keeps its size (5 * 1.1 -> 5; 3 * 1.1 -> 3)


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
@pytest.mark.parametrize("sizes", [*SIZES, KEPT], ids=str)
@pytest.mark.parametrize("mode, dims", [("linear", 1), ("bilinear", 2), ("bicubic", 2), ("trilinear", 3)])
def test_interpolating_modes_match_pytorch(mode, dims, sizes, align_corners, dtype):
    kwargs = dict(for_dims(sizes, dims), mode=mode, align_corners=align_corners)
    compare(lambda lib, x: lib.nn.functional.interpolate(x, **kwargs), [INPUTS[dims]], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode, dims", [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 2),
                                        ("nearest-exact", 3)])
def test_nearest_with_a_kept_size_matches_pytorchs_forward(mode, dims, dtype):
    """2-D nearest leaves a kept dimension alone, 1-D / 3-D nearest and nearest-exact resample it
    at 1 / scale_factor. PyTorch's backward of 1-D / 3-D nearest leaves it alone, which is not the
    gradient of its forward: Zero's gradient is checked by finite differences instead."""
    torch = pytest.importorskip("torch")
    kwargs = dict(for_dims(dict(scale_factor=(1.1, 1.1, 1.5)), dims), mode=mode)
    x = INPUTS[dims].astype(dtype)
    got = F.interpolate(zero.tensor(x), **kwargs).numpy()
    np.testing.assert_array_equal(got, torch.nn.functional.interpolate(torch.tensor(x), **kwargs).numpy())
    assert zero.autograd.gradcheck(lambda t: F.interpolate(t, **kwargs),
                                   [zero.tensor(INPUTS[dims][:1, :1], requires_grad=True)])


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


# -- antialias=True ----------------------------------------------------------------------

AA_INPUT = RNG.standard_normal((2, 3, 11, 13))
AA_SIZES = [dict(size=(5, 6)), dict(size=(4, 29)), dict(size=1), dict(size=(23, 30)), dict(scale_factor=0.3),
            dict(scale_factor=(0.45, 1.7)), dict(scale_factor=(0.31, 0.77), recompute_scale_factor=True),
            dict(scale_factor=0.15)]
AA_MODES = [("bilinear", False), ("bilinear", True), ("bicubic", False), ("bicubic", True), ("lanczos", None)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sizes", AA_SIZES, ids=str)
@pytest.mark.parametrize("mode, align_corners", AA_MODES)
def test_antialias_matches_pytorch(mode, align_corners, sizes, dtype):
    kwargs = dict(sizes, mode=mode, align_corners=align_corners, antialias=True)
    compare(lambda lib, x: lib.nn.functional.interpolate(x, **kwargs), [AA_INPUT], dtype=dtype)


def test_antialias_differs_from_plain_resampling_when_downsampling():
    x = zero.tensor(AA_INPUT)
    for mode in ("bilinear", "bicubic"):
        smooth, plain = (F.interpolate(x, size=(3, 4), mode=mode, antialias=a).numpy() for a in (True, False))
        assert np.abs(smooth - plain).max() > 0.1


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_leaves_a_kept_dimension_and_its_gradient_alone(mode):
    """scale_factor 1.05 keeps 11 rows: PyTorch's forward leaves them as they are, its backward
    resamples them at scale 1 / 1.05 (gradcheck fails on PyTorch there). Zero's gradient is its
    forward's: PyTorch's with scale_factor 1 for that dimension."""
    torch = pytest.importorskip("torch")
    x = zero.tensor(AA_INPUT, requires_grad=True)
    got = F.interpolate(x, scale_factor=(1.05, 0.6), mode=mode, antialias=True)
    want = torch.nn.functional.interpolate(torch.tensor(AA_INPUT), scale_factor=(1.05, 0.6), mode=mode,
                                           antialias=True)
    np.testing.assert_allclose(got.detach().numpy(), want.numpy(), rtol=0, atol=1e-12)
    compare(lambda lib, t: lib.nn.functional.interpolate(t, scale_factor=(1.0, 0.6), mode=mode, antialias=True),
            [AA_INPUT])
    assert zero.autograd.gradcheck(
        lambda t: F.interpolate(t, scale_factor=(1.05, 0.6), mode=mode, antialias=True),
        [zero.tensor(AA_INPUT[:1, :1], requires_grad=True)])


def test_antialias_keeping_every_size_copies():
    x = zero.tensor(AA_INPUT, requires_grad=True)
    y = F.interpolate(x, size=(11, 13), mode="bilinear", antialias=True)
    assert y is not x and y.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(y.detach().numpy(), AA_INPUT)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(AA_INPUT))


@pytest.mark.parametrize("mode, kwargs", [("bilinear", dict(size=(3, 10))), ("bicubic", dict(scale_factor=0.4)),
                                          ("lanczos", dict(size=(4, 3)))])
def test_antialias_in_the_op_harness(mode, kwargs):
    """Every layout (transposed, sliced, expanded input), float32 and float64, gradients by
    finite differences; on ZERO_TEST_DEVICE. PyTorch is the reference."""
    torch = pytest.importorskip("torch")

    def reference(x):
        return torch.nn.functional.interpolate(torch.tensor(x), mode=mode, antialias=True, **kwargs).numpy()

    assert check_op(lambda x: F.interpolate(x, mode=mode, antialias=True, **kwargs), reference, [(2, 2, 7, 9)],
                    broadcast=False) > 0


@pytest.mark.parametrize("kwargs, words", [
    (dict(size=2, antialias=True), "Anti-alias option is restricted"),
    (dict(size=2, mode="area", antialias=True), "Anti-alias option is restricted"),
    (dict(size=2, mode="bilinear", antialias=True, drop=True), "requires a 4-D tensor"),
    (dict(size=2, mode="linear", antialias=True, drop=True), "Anti-alias option is restricted"),
    (dict(size=2, mode="lanczos"), "Lanczos mode requires antialias=True"),
    (dict(size=2, mode="lanczos", align_corners=True, antialias=True), "does not support align_corners=True"),
], ids=str)
def test_antialias_errors_match_pytorch(kwargs, words):
    """ValueError as PyTorch (``drop``: a 3-D input)."""
    torch = pytest.importorskip("torch")
    kwargs = dict(kwargs)
    drop = kwargs.pop("drop", False)
    for lib in (zero, torch):
        x = lib.ones(1, 1, 3, 3)
        with pytest.raises(ValueError, match=words):
            lib.nn.functional.interpolate(x[0] if drop else x, **kwargs)
