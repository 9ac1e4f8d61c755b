"""F.unfold / F.fold, pixel_shuffle / pixel_unshuffle, max_unpool and the padding layers
against PyTorch: values, gradients, the fold-of-unfold round trip, reprs and errors; unfold
and fold in the op harness against NumPy references."""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from torch_compare import compare

import zero
import zero.nn as nn
import zero.nn.functional as F
from zero.errors import ShapeError

sys.path.insert(0, str(Path(__file__).parent.parent / "ops"))
from op_harness import DEVICE, check_op

ORACLE = pytest.mark.skipif(DEVICE != "cpu", reason="PyTorch (CPU) is the oracle of the CPU run")
RNG = np.random.default_rng(0)
WINDOWS = [dict(kernel_size=k, dilation=d, padding=p, stride=s)
           for k, d, p, s in itertools.product([2, (3, 2)], [1, (1, 2)], [0, (1, 0)], [1, (2, 1)])]


@ORACLE
@pytest.mark.parametrize("kwargs", WINDOWS, ids=str)
def test_unfold_and_fold_match_pytorch(kwargs):
    x = RNG.standard_normal((2, 3, 7, 6))
    cols = compare(lambda lib, x: lib.nn.functional.unfold(x, **kwargs), [x])[0]
    compare(lambda lib, c: lib.nn.functional.fold(c, (7, 6), **kwargs), [RNG.standard_normal(cols.shape)])


@ORACLE
@pytest.mark.parametrize("kwargs", WINDOWS[:4], ids=str)
def test_fold_of_unfold_round_trip(kwargs):
    """fold(unfold(x)) = x times how many windows hold each element (as PyTorch's), and
    dividing by fold(unfold(ones)) gives x back."""
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((1, 2, 6, 5))
    ours = F.fold(F.unfold(zero.tensor(x), **kwargs), (6, 5), **kwargs)
    theirs = torch.nn.functional.fold(torch.nn.functional.unfold(torch.tensor(x), **kwargs), (6, 5), **kwargs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    counts = F.fold(F.unfold(zero.ones(1, 2, 6, 5, dtype=zero.float64), **kwargs), (6, 5), **kwargs)
    covered = counts.numpy() > 0
    np.testing.assert_allclose((ours / counts).numpy()[covered], x[covered], atol=1e-12)


@ORACLE
def test_unbatched_unfold_and_fold():
    compare(lambda lib, x: lib.nn.functional.unfold(x, 2, padding=1), [RNG.standard_normal((3, 4, 5))])
    compare(lambda lib, c: lib.nn.functional.fold(c, (4, 5), 2), [RNG.standard_normal((12, 12))])


def reference_unfold(x, k=2):
    n, c, h, w = x.shape
    out_h, out_w = h - k + 1, w - k + 1
    cols = np.stack([x[:, :, i:i + out_h, j:j + out_w] for i in range(k) for j in range(k)], axis=2)
    return cols.reshape(n, c * k * k, out_h * out_w)


def reference_fold(cols, size=(4, 5), k=2):
    n = cols.shape[0]
    out_h, out_w = size[0] - k + 1, size[1] - k + 1
    blocks = cols.reshape(n, -1, k, k, out_h, out_w)
    out = np.zeros((n, blocks.shape[1]) + size, cols.dtype)
    for i in range(k):
        for j in range(k):
            out[:, :, i:i + out_h, j:j + out_w] += blocks[:, :, i, j]
    return out


def test_unfold_and_fold_in_the_harness():
    assert check_op(lambda x: F.unfold(x, 2), reference_unfold, [(2, 3, 4, 5)], broadcast=False) > 0
    assert check_op(lambda c: F.fold(c, (4, 5), 2), reference_fold, [(2, 12, 12)], broadcast=False) > 0


@pytest.mark.parametrize("call, words", [
    (lambda: F.fold(zero.ones(1, 7, 12), (4, 5), 2), "divisible by the product of kernel_size"),
    (lambda: F.fold(zero.ones(1, 8, 11), (4, 5), 2), "calculated number of sliding blocks"),
    (lambda: F.unfold(zero.ones(1, 1, 2, 2), 3), "no sliding block fits"),
    (lambda: F.unfold(zero.ones(2, 2), 1), "3-D"),
])
def test_fold_errors(call, words):
    with pytest.raises(ShapeError, match=words):
        call()


# -- pixel shuffle --------------------------------------------------------------------------------


@ORACLE
@pytest.mark.parametrize("shape", [(2, 8, 3, 2), (12, 2, 3), (2, 1, 4, 3, 2)])
def test_pixel_shuffle_and_unshuffle_match_pytorch(shape):
    compare(lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2), [RNG.standard_normal(shape[:-3] + (shape[-3] * 4,)
                                                                                        + shape[-2:])])
    compare(lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2), [RNG.standard_normal(shape[:-2] + (4, 6))])
    x = zero.tensor(RNG.standard_normal((2, 3, 4, 6)))
    assert np.array_equal(F.pixel_shuffle(F.pixel_unshuffle(x, 2), 2).numpy(), x.numpy())


def test_pixel_shuffle_errors_and_reprs():
    with pytest.raises(ShapeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(zero.ones(1, 3, 2, 2), 2)
    with pytest.raises(ShapeError, match="divisible by downscale_factor"):
        F.pixel_unshuffle(zero.ones(1, 3, 3, 2), 2)
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"
    assert repr(nn.Unfold(2)) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=1)"
    assert repr(nn.Fold((4, 5), (2, 2), stride=2)) == ("Fold(output_size=(4, 5), kernel_size=(2, 2), dilation=1, "
                                                      "padding=0, stride=2)")


# -- max unpooling --------------------------------------------------------------------------------


@ORACLE
@pytest.mark.parametrize("dims, shape, kwargs, output_size", [
    (2, (2, 3, 4, 6), dict(kernel_size=2), None),
    (2, (2, 3, 5, 7), dict(kernel_size=2), (5, 7)),
    (2, (2, 3, 6, 7), dict(kernel_size=3, stride=2, padding=1), [2, 3, 6, 7]),
    (1, (2, 3, 7), dict(kernel_size=3, stride=2, padding=1), None),
    (1, (3, 8), dict(kernel_size=2), None),
])
def test_max_unpool_matches_pytorch(dims, shape, kwargs, output_size):
    torch = pytest.importorskip("torch")
    pool = getattr(torch.nn.functional, f"max_pool{dims}d")
    values, indices = pool(torch.tensor(RNG.standard_normal(shape)), return_indices=True, **kwargs)

    def unpool(lib, v, i):
        return getattr(lib.nn.functional, f"max_unpool{dims}d")(v, i, output_size=output_size, **kwargs)

    compare(unpool, [values.numpy(), indices.numpy()])
    ours = getattr(nn, f"MaxUnpool{dims}d")(**kwargs)
    assert repr(ours) == repr(getattr(torch.nn, f"MaxUnpool{dims}d")(**kwargs))
    assert ours(zero.tensor(values.numpy()), zero.tensor(indices.numpy()), output_size).shape == \
        tuple(unpool(torch, values, indices).shape)


def test_max_unpool_refuses_a_bad_output_size():
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(zero.ones(1, 1, 2, 2), zero.zeros(1, 1, 2, 2, dtype=zero.int64), 2, output_size=(7, 4))


# -- padding layers -------------------------------------------------------------------------------


@ORACLE
@pytest.mark.parametrize("name, padding, dims", [
    ("ZeroPad1d", 2, 1), ("ZeroPad2d", (1, 2, 0, 3), 2), ("ZeroPad3d", 1, 3), ("ConstantPad1d", (1, 2), 1),
    ("ConstantPad2d", 2, 2), ("ConstantPad3d", (1, 0, 2, 1, 0, 1), 3), ("ReflectionPad1d", (2, 1), 1),
    ("ReflectionPad2d", (1, 2, 2, 0), 2), ("ReflectionPad3d", 1, 3), ("ReplicationPad1d", 3, 1),
    ("ReplicationPad2d", (1, 2, 3, 0), 2), ("ReplicationPad3d", 1, 3), ("CircularPad1d", 2, 1),
    ("CircularPad2d", (1, 2, 2, 1), 2), ("CircularPad3d", 1, 3),
])
def test_padding_layers_match_pytorch(name, padding, dims):
    torch = pytest.importorskip("torch")
    args = (padding, 1.5) if name.startswith("Constant") else (padding,)
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    shape = (2, 3) + (4, 5, 3)[:dims]
    compare(lambda lib, x: (ours if lib is zero else theirs)(x), [RNG.standard_normal(shape)])
