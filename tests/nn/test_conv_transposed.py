"""Transposed convolutions (1-D, 2-D, 3-D) and conv3d against PyTorch with the same weights:
values and gradients over stride, padding, output padding, groups and dilation; the modules'
parameters, initialisation, reprs, output_size argument and state dicts; the errors; and the
2-D op in the op harness against a NumPy reference (scatter-add per kernel offset)."""
from __future__ import annotations

import itertools
import math
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

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")
ORACLE = pytest.mark.skipif(DEVICE != "cpu", reason="PyTorch (CPU) is the oracle of the CPU run")

GRID_2D = [dict(stride=s, padding=p, output_padding=o, groups=g, dilation=d)
           for s, p, o, g, d in itertools.product([1, 2, (2, 3)], [0, (1, 2)], [0, 1], [1, 2], [1, (2, 1)])
           if all(o < max(si, di) for si, di in zip(np.broadcast_to(s, 2), np.broadcast_to(d, 2)))]


@ORACLE
@pytest.mark.parametrize("kwargs", GRID_2D, ids=str)
def test_conv_transpose2d_matches_pytorch(kwargs):
    rng = np.random.default_rng(0)
    groups = kwargs["groups"]
    x, w, b = rng.standard_normal((2, 4, 5, 4)), rng.standard_normal((4, 6 // groups, 3, 2)), rng.standard_normal(6)
    compare(lambda lib, *t: lib.nn.functional.conv_transpose2d(*t, **kwargs), [x, w, b])


@ORACLE
@pytest.mark.parametrize("kwargs", [dict(stride=s, padding=p, output_padding=o, groups=g, dilation=d)
                                    for s, p, o, g, d in itertools.product([1, 3], [0, 2], [0, 1], [1, 4], [1, 2])
                                    if o < max(s, d)], ids=str)
def test_conv_transpose1d_matches_pytorch(kwargs):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 4, 7)), rng.standard_normal((4, 8 // kwargs["groups"], 4))
    compare(lambda lib, *t: lib.nn.functional.conv_transpose1d(*t, **kwargs), [x, w])


@ORACLE
@pytest.mark.parametrize("kwargs", [
    {}, dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 1, 3), padding=(1, 0, 2), output_padding=(1, 0, 2)),
    dict(groups=2, dilation=(2, 1, 2)), dict(stride=1, output_padding=(1, 0, 0), dilation=(2, 1, 1)),
], ids=str)
def test_conv_transpose3d_matches_pytorch(kwargs):
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((2, 4, 3, 4, 3)), rng.standard_normal((4, 3, 3, 2, 3)), rng.standard_normal(
        3 * kwargs.get("groups", 1))
    compare(lambda lib, *t: lib.nn.functional.conv_transpose3d(*t, **kwargs), [x, w, b])


@ORACLE
@pytest.mark.parametrize("kwargs", [
    {}, dict(stride=2, padding=1), dict(stride=(1, 2, 3), padding=(2, 0, 1), dilation=(2, 1, 1), groups=2),
    dict(padding="same", dilation=(1, 2, 1)), dict(padding="same"), dict(padding="valid", stride=(2, 1, 1)),
], ids=str)
def test_conv3d_matches_pytorch(kwargs):
    rng = np.random.default_rng(3)
    groups = kwargs.get("groups", 1)
    x, w = rng.standard_normal((2, 4, 5, 6, 5)), rng.standard_normal((6, 4 // groups, 2, 3, 2))
    b = rng.standard_normal(6)
    compare(lambda lib, *t: lib.nn.functional.conv3d(*t, **kwargs), [x, w, b])


@ORACLE
@pytest.mark.parametrize("fn, x_shape, w_shape", [
    ("conv_transpose1d", (4, 6), (4, 2, 3)), ("conv_transpose2d", (4, 5, 6), (4, 2, 3, 3)),
    ("conv_transpose3d", (4, 2, 3, 3), (4, 2, 2, 2, 2)), ("conv3d", (4, 4, 5, 5), (2, 4, 2, 2, 2)),
])
def test_unbatched_inputs(fn, x_shape, w_shape):
    rng = np.random.default_rng(4)
    kwargs = {} if fn == "conv3d" else dict(stride=2, output_padding=1)
    compare(lambda lib, *t: getattr(lib.nn.functional, fn)(*t, **kwargs),
            [rng.standard_normal(x_shape), rng.standard_normal(w_shape)])


@ORACLE
def test_float32_dcgan_layer_matches_pytorch():
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((4, 32, 8, 8)), rng.standard_normal((32, 16, 4, 4)) * 0.1
    compare(lambda lib, *t: lib.nn.functional.conv_transpose2d(*t, stride=2, padding=1), [x, w], dtype=np.float32)


def reference_transpose2d(x, w, stride=(1, 1), padding=(0, 0)):
    """Written another way: each kernel offset's product scattered into the output."""
    n, c, h, width = x.shape
    out_channels = w.shape[1]
    kh, kw = w.shape[2:]
    full = np.zeros((n, out_channels, (h - 1) * stride[0] + kh, (width - 1) * stride[1] + kw), x.dtype)
    for i in range(kh):
        for j in range(kw):
            full[:, :, i:i + (h - 1) * stride[0] + 1:stride[0], j:j + (width - 1) * stride[1] + 1:stride[1]] += \
                np.einsum("nchw,co->nohw", x, w[:, :, i, j])
    return full[:, :, padding[0]:full.shape[2] - padding[0], padding[1]:full.shape[3] - padding[1]]


@pytest.mark.parametrize("stride, padding", [((1, 1), (0, 0)), ((2, 3), (1, 0))])
def test_conv_transpose2d_in_the_harness(stride, padding):
    assert check_op(lambda x, w: F.conv_transpose2d(x, w, stride=stride, padding=padding),
                    lambda x, w: reference_transpose2d(x, w, stride, padding), [(2, 3, 4, 5), (3, 2, 3, 2)],
                    broadcast=False) > 0


# -- modules -------------------------------------------------------------------------------------


def test_parameters_have_pytorch_s_names_and_shapes():
    layer = nn.ConvTranspose2d(6, 8, (3, 5), groups=2)
    assert {k: v.shape for k, v in layer.state_dict().items()} == {"weight": (6, 4, 3, 5), "bias": (8,)}
    assert nn.ConvTranspose1d(4, 2, 3, bias=False).bias is None
    assert nn.ConvTranspose3d(2, 4, (1, 2, 3)).weight.shape == (2, 4, 1, 2, 3)
    assert nn.Conv3d(2, 4, 3, groups=2).weight.shape == (4, 1, 3, 3, 3)
    assert nn.ConvTranspose2d(2, 3, 2, dtype=zero.float64).weight.dtype is zero.float64


def test_initialisation_uses_fan_in_of_weight_dimension_1():
    """PyTorch's fan_in for a transposed weight (in, out/groups, *k) is out/groups · prod(k):
    here 256/2 · 3 · 3 = 1152, so both bounds are 1/√1152."""
    zero.manual_seed(0)
    layer = nn.ConvTranspose2d(16, 256, 3, groups=2)
    bound = 1 / math.sqrt(1152)
    weight, bias = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(bias).max() <= bound
    assert np.abs(weight).max() > 0.99 * bound and np.abs(bias).max() > 0.9 * bound


@pytest.mark.parametrize("module, text", [
    (nn.ConvTranspose2d(4, 6, 3, 2, 1, 1, 2, False, 2),
     "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
     "output_padding=(1, 1), groups=2, bias=False)"),
    (nn.ConvTranspose1d(2, 3, 3), "ConvTranspose1d(2, 3, kernel_size=(3,), stride=(1,))"),
    (nn.ConvTranspose3d(2, 4, (1, 2, 3), padding=1),
     "ConvTranspose3d(2, 4, kernel_size=(1, 2, 3), stride=(1, 1, 1), padding=(1, 1, 1))"),
    (nn.Conv3d(2, 4, 3, padding="same"), "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=same)"),
])
def test_reprs_are_pytorch_s(module, text):
    assert repr(module) == text


@ORACLE
@pytest.mark.parametrize("name, args, shape", [
    ("ConvTranspose1d", (4, 6, 3, 2, 1, 1, 2), (2, 4, 5)),
    ("ConvTranspose2d", (4, 6, (3, 2), 2, (1, 0), 1, 2, True, (1, 2)), (2, 4, 4, 3)),
    ("ConvTranspose3d", (4, 2, 2, 2), (1, 4, 2, 3, 2)),
    ("Conv3d", (4, 2, 2, 1, 1), (1, 4, 3, 3, 3)),
])
def test_a_pytorch_state_dict_loads_and_gives_pytorch_s_output(name, args, shape):
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.nn, name)(*args).double()
    ours = getattr(nn, name)(*args, dtype=zero.float64)
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(6).standard_normal(shape)
    np.testing.assert_allclose(ours(zero.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               atol=1e-12)
    back = torch.nn.Module.load_state_dict(theirs, {k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    assert not back.missing_keys and not back.unexpected_keys


@ORACLE
@pytest.mark.parametrize("output_size", [(9, 10), [10, 11], (2, 6, 10, 10)])
def test_output_size_picks_the_output_padding(output_size):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.ConvTranspose2d(4, 6, 3, stride=(2, 3), padding=1).double()
    ours = nn.ConvTranspose2d(4, 6, 3, stride=(2, 3), padding=1, dtype=zero.float64)
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(7).standard_normal((2, 4, 5, 4))
    got = ours(zero.tensor(x), output_size=output_size)
    want = theirs(torch.tensor(x), output_size=output_size)
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)


def test_output_size_out_of_range_is_refused():
    layer = nn.ConvTranspose2d(1, 1, 3, stride=2, padding=1)
    with pytest.raises(ValueError, match="valid sizes range from 9 to 10"):
        layer(zero.ones(1, 1, 5, 5), output_size=(11, 9))


def test_padding_modes_other_than_zeros_are_refused():
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


@pytest.mark.parametrize("call, words", [
    (lambda: F.conv_transpose2d(zero.ones(1, 2, 4, 4), zero.ones(2, 1, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation"),
    (lambda: F.conv_transpose2d(zero.ones(1, 3, 4, 4), zero.ones(2, 1, 3, 3)), "3 channels"),
    (lambda: F.conv_transpose2d(zero.ones(1, 3, 4, 4), zero.ones(3, 1, 3, 3), groups=2), "groups=2"),
    (lambda: F.conv_transpose2d(zero.ones(1, 2, 4, 4), zero.ones(2, 1, 3, 3), zero.ones(2)), "bias"),
    (lambda: F.conv_transpose2d(zero.ones(2, 4, 4), zero.ones(2, 1, 3)), "weight must be 4-D"),
    (lambda: F.conv_transpose1d(zero.ones(1, 2, 4), zero.ones(2, 1, 3), padding=4), "empty"),
    (lambda: F.conv3d(zero.ones(1, 2, 2, 4, 4), zero.ones(1, 2, 3, 3, 3)), "larger than the padded input"),
])
def test_errors_name_the_op(call, words):
    with pytest.raises(ShapeError, match=words):
        call()
