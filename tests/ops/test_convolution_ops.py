"""conv1d and conv2d: the op harness (layouts, float32/64, gradcheck) against a NumPy reference
written another way (shift and accumulate, no im2col), PyTorch as an oracle on a grid of
stride / padding / dilation / groups cases where it is installed, and the errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from op_harness import DEVICE, check_op

import zero
import zero.nn.functional as F
from zero.errors import DeviceError, DTypeError, ShapeError

# PyTorch warns that "same" padding of an even kernel makes it copy the input (a note, not an error).
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")


def reference_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Float64 convolution by definition: for each kernel offset, the strided slice of the
    zero-padded input it meets, contracted with that offset's weights, group by group.
    ``padding``: an int, ints, "valid", "same", or ((before, after), ...) per dimension."""
    dims = x.ndim - 2
    kernel = w.shape[2:]
    stride = (stride,) * dims if isinstance(stride, int) else tuple(stride)
    dilation = (dilation,) * dims if isinstance(dilation, int) else tuple(dilation)
    if padding == "valid":
        padding = 0
    if padding == "same":
        pads = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation)]
    elif isinstance(padding, int):
        pads = [(padding, padding)] * dims
    else:
        pads = [(p, p) if isinstance(p, int) else tuple(p) for p in padding]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    out_size = [(n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(xp.shape[2:], kernel, stride, dilation)]
    out = np.zeros((x.shape[0], w.shape[0], *out_size))
    per_in, per_out = x.shape[1] // groups, w.shape[0] // groups
    for offset in itertools.product(*(range(k) for k in kernel)):
        window = (slice(None), slice(None)) + tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                                                    for o, d, s, m in zip(offset, dilation, stride, out_size))
        seen = xp[window]                                                 # (N, C, *out)
        for g in range(groups):
            part = seen[:, g * per_in:(g + 1) * per_in]
            taps = w[(slice(g * per_out, (g + 1) * per_out), slice(None)) + offset]   # (O/g, C/g)
            out[:, g * per_out:(g + 1) * per_out] += np.einsum("nc...,oc->no...", part, taps)
    if b is not None:
        out += b.reshape((1, -1) + (1,) * dims)
    return out


# -- the harness: every layout, float32 and float64, gradcheck -------------------------------

CONV2D_CASES = [  # (x shape, weight shape, keyword arguments)
    ((2, 3, 6, 5), (4, 3, 3, 3), {}),
    ((2, 4, 7, 6), (6, 2, 3, 2), dict(stride=(2, 1), padding=1, dilation=(1, 2), groups=2)),
    ((1, 2, 5, 5), (3, 2, 2, 2), dict(padding="same")),
    ((2, 3, 5, 4), (2, 3, 1, 1), dict(stride=2)),
    ((2, 4, 6, 7), (4, 2, 2, 3), dict(padding="same", dilation=(2, 1), groups=2)),   # odd total padding
    ((1, 3, 5, 5), (6, 1, 3, 3), dict(padding=1, groups=3)),                          # depthwise, multiplier 2
    ((2, 2, 6, 6), (3, 2, 3, 3), dict(padding="valid", stride=(2, 3))),
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONV2D_CASES)
def test_conv2d_in_the_harness(x_shape, w_shape, kwargs):
    assert check_op(lambda x, w, b: F.conv2d(x, w, b, **kwargs), lambda x, w, b: reference_conv(x, w, b, **kwargs),
                    [x_shape, w_shape, (w_shape[0],)], broadcast=False)


def test_conv2d_an_image_at_a_time_in_the_harness(monkeypatch):
    """The kernels take the batch in passes of a few images (COLUMN_BYTES of columns each):
    one image per pass gives the same results."""
    from zero.backends.cpu.kernels import conv

    monkeypatch.setattr(conv, "COLUMN_BYTES", 1)
    kwargs = dict(stride=(1, 2), padding=1, groups=2)
    assert check_op(lambda x, w, b: F.conv2d(x, w, b, **kwargs), lambda x, w, b: reference_conv(x, w, b, **kwargs),
                    [(3, 4, 5, 5), (4, 2, 3, 3), (4,)], broadcast=False)


def test_conv2d_without_bias_in_the_harness():
    assert check_op(lambda x, w: F.conv2d(x, w, padding=(0, 1)), lambda x, w: reference_conv(x, w, padding=(0, 1)),
                    [(2, 2, 5, 4), (3, 2, 2, 3)], broadcast=False)


@pytest.mark.parametrize("kwargs", [{}, dict(stride=2, padding=2, dilation=2, groups=3), dict(padding="same")])
def test_conv1d_in_the_harness(kwargs):
    assert check_op(lambda x, w, b: F.conv1d(x, w, b, **kwargs), lambda x, w, b: reference_conv(x, w, b, **kwargs),
                    [(2, 3, 9), (6, 3 // kwargs.get("groups", 1), 4), (6,)], broadcast=False)


def test_unbatched_inputs_give_unbatched_outputs():
    assert check_op(lambda x, w: F.conv2d(x, w, padding=1),
                    lambda x, w: reference_conv(x[None], w, padding=1)[0], [(2, 4, 4), (3, 2, 3, 3)],
                    broadcast=False)
    x, w = zero.randn(3, 10), zero.randn(4, 3, 3)
    assert F.conv1d(x, w).shape == (4, 8)


# -- PyTorch as an oracle -------------------------------------------------------------------

GRID_2D = [dict(stride=s, padding=p, dilation=d, groups=g)
           for s, p, d, g in itertools.product([1, 2, (1, 3)], [0, 1, (2, 0), "same", "valid"], [1, (2, 1)], [1, 2])
           if not (p == "same" and s != 1)]


@pytest.mark.skipif(DEVICE != "cpu", reason="PyTorch (CPU) is the oracle of the CPU run")
@pytest.mark.parametrize("kwargs", GRID_2D, ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_matches_pytorch(kwargs, bias):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    groups = kwargs["groups"]
    x, w, b = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((6, 4 // groups, 3, 2)), rng.standard_normal(6)
    compare_with_pytorch(torch, F.conv2d, torch.nn.functional.conv2d, x, w, b if bias else None, kwargs)


@pytest.mark.skipif(DEVICE != "cpu", reason="PyTorch (CPU) is the oracle of the CPU run")
@pytest.mark.parametrize("kwargs", [dict(stride=s, padding=p, dilation=d, groups=g) for s, p, d, g in
                                    itertools.product([1, 3], [0, 2, "same"], [1, 2], [1, 4]) if p != "same" or s == 1],
                         ids=str)
def test_conv1d_matches_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 4, 17)), rng.standard_normal((8, 4 // kwargs["groups"], 4))
    b = rng.standard_normal(8)
    compare_with_pytorch(torch, F.conv1d, torch.nn.functional.conv1d, x, w, b, kwargs)


def compare_with_pytorch(torch, zero_conv, torch_conv, x, w, b, kwargs, dtype=np.float64, tolerance=1e-10):
    """Zero in ``dtype`` against PyTorch in float64: values and the three gradients, each within
    ``tolerance`` times the largest magnitude of what it is compared with."""
    arrays = [a for a in (x, w, b) if a is not None]
    ours = [zero.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out = zero_conv(*ours[:2], ours[2] if b is not None else None, **kwargs)
    expected = torch_conv(*theirs[:2], theirs[2] if b is not None else None, **kwargs)

    def close(got, want, what):
        want = want.detach().numpy()
        np.testing.assert_allclose(got, want, rtol=0, atol=tolerance * max(1.0, np.abs(want).max()), err_msg=what)

    close(out.detach().numpy(), expected, "output")
    cotangent = np.random.default_rng(2).standard_normal(out.shape)
    out.backward(zero.tensor(cotangent.astype(dtype)))
    expected.backward(torch.tensor(cotangent))
    for name, a, t in zip(("input", "weight", "bias"), ours, theirs):
        close(a.grad.numpy(), t.grad, f"grad of {name}")


@pytest.mark.skipif(DEVICE != "cpu", reason="PyTorch (CPU) is the oracle of the CPU run")
@pytest.mark.parametrize("shape, weight, kwargs", [
    ((64, 1, 28, 28), (32, 1, 3, 3), {}),                          # LeNet's first layer
    ((4, 16, 16, 16), (32, 16, 3, 3), dict(stride=2, padding=1)),  # a ResNet downsampling layer
    ((4, 32, 8, 8), (32, 1, 3, 3), dict(padding=1, groups=32)),    # depthwise
])
def test_float32_at_network_shapes_matches_pytorch(shape, weight, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    compare_with_pytorch(torch, F.conv2d, torch.nn.functional.conv2d, rng.standard_normal(shape),
                         rng.standard_normal(weight) * 0.1, rng.standard_normal(weight[0]), kwargs,
                         dtype=np.float32, tolerance=1e-5)


# -- autograd details -----------------------------------------------------------------------


def test_a_first_layer_input_gets_no_gradient_but_the_weights_do():
    x = zero.randn(2, 1, 6, 6)
    w, b = zero.randn(3, 1, 3, 3, requires_grad=True), zero.randn(3, requires_grad=True)
    out = F.conv2d(x, w, b)
    assert out.grad_fn.name == "ConvolutionBackward"
    out.sum().backward()
    assert x.grad is None and w.grad.shape == (3, 1, 3, 3)
    np.testing.assert_allclose(b.grad.numpy(), np.full(3, 32.0))   # 4 x 4 outputs in each of 2 images


def test_no_graph_under_no_grad():
    w = zero.randn(3, 2, 3, requires_grad=True)
    with zero.no_grad():
        out = F.conv1d(zero.randn(1, 2, 5), w)
    assert out.grad_fn is None and not out.requires_grad


# -- errors: name the op, the shapes, and what would be valid -------------------------------


@pytest.mark.parametrize("call, error, words", [
    (lambda: F.conv2d(zero.randn(8, 8), zero.randn(4, 3, 3, 3)), ShapeError, "3-D (unbatched) or 4-D"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8), zero.randn(4, 2, 3, 3)), ShapeError, "has 3 channels"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8), zero.randn(4, 3, 3)), ShapeError, "weight must be 4-D"),
    (lambda: F.conv2d(zero.randn(2, 4, 8, 8), zero.randn(3, 2, 3, 3), groups=2), ShapeError, "must divide"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8), zero.randn(4, 3, 3, 3), zero.randn(5)), ShapeError,
     "bias must have shape [4]"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8), zero.randn(4, 3, 9, 9)), ShapeError, "larger than the padded input"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8), zero.randn(4, 3, 3, 3), stride=2, padding="same"), ShapeError,
     "strided"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8), zero.randn(4, 3, 3, 3), padding=-1), ShapeError, "at least 0"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8), zero.randn(4, 3, 3, 3), stride=0), ShapeError, "at least 1"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8), zero.randn(4, 3, 3, 3), stride=(1, 1, 1)), ShapeError, "2 ints"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8), zero.randn(4, 3, 3, 3), padding="full"), ShapeError, "'same'"),
    (lambda: F.conv2d(zero.randn(2, 3, 8, 8, dtype=zero.float64), zero.randn(4, 3, 3, 3)), DTypeError,
     "must have the dtype of input"),
    (lambda: F.conv1d(zero.ones(2, 3, 8, dtype=zero.int64), zero.randn(4, 3, 3)), DTypeError, "floating point"),
    (lambda: F.conv1d([1.0, 2.0], zero.randn(4, 3, 3)), TypeError, "must be a tensor"),
    (lambda: F.conv1d(zero.randn(2, 3, 8), zero.randn(4, 3, 3), zero.randn(4, dtype=zero.float64)), DTypeError,
     "bias"),
    (lambda: F.conv1d(zero.randn(2, 3, 8), zero.ones(4, 3, 3, dtype=zero.int64)), DTypeError, "weight"),
    (lambda: F.conv1d(zero.randn(2, 3, 8), zero.randn(4, 3, 3), groups=0), ShapeError, "positive int"),
    (lambda: F.conv1d(zero.randn(2, 6, 8), zero.randn(4, 2, 3), groups=3), ShapeError,
     "groups=3 must divide the 4 output channels"),
    (lambda: F.conv1d(zero.randn(2, 3, 4, 8), zero.randn(4, 3, 3)), ShapeError, "2-D (unbatched) or 3-D"),
])
def test_errors_name_the_op_and_the_shapes(call, error, words):
    with pytest.raises(error) as caught:
        call()
    message = str(caught.value)
    assert message.startswith(("conv1d", "conv2d")) and words in message and "\n" not in message, message


def test_operands_on_two_devices_are_refused_in_one_line(second_device):
    x, w = zero.randn(1, 2, 5, 5), zero.randn(3, 2, 3, 3)
    for args in ((x, w.to(second_device)), (x, w, zero.randn(3, device=second_device))):
        with pytest.raises(DeviceError, match="all tensors must be on one device") as caught:
            F.conv2d(*args)
        assert "\n" not in str(caught.value)
    assert F.conv2d(x.to(second_device), w.to(second_device)).device == second_device
