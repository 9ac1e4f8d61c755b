"""Errors are part of the API: the right class, and a message naming the op and the operands."""
from __future__ import annotations

import pytest

import zero
from zero import errors
from zero.ops.elementwise import Gelu
from zero.tensors.meta import TensorMeta


def _pretend_on(device: str, t):
    """The same memory described as living on another device: enough to test the checks
    that run before any kernel (nothing here may touch the data)."""
    fake = t.detach()
    fake._meta = TensorMeta(t.shape, t.stride(), t.storage_offset(), t.dtype, zero.Device(device))
    return fake


def test_error_classes_subclass_the_builtins_users_catch():
    assert issubclass(errors.ShapeError, RuntimeError)
    assert issubclass(errors.DTypeError, TypeError)
    assert issubclass(errors.DeviceError, RuntimeError)
    assert issubclass(errors.ViewError, RuntimeError)
    assert issubclass(errors.AutogradError, RuntimeError)
    assert issubclass(errors.InPlaceError, RuntimeError)
    assert issubclass(errors.ZeroIndexError, IndexError)
    assert issubclass(errors.DistributedError, RuntimeError)
    for cls in (errors.ShapeError, errors.DTypeError, errors.DeviceError, errors.ZeroIndexError,
                errors.DistributedError):
        assert issubclass(cls, errors.ZeroError)
    assert errors.describe(zero.ones(2, 3, dtype=zero.int32)) == "int32[2, 3] on cpu"


SHAPE_ERRORS = [
    (lambda: zero.ones(2, 3) + zero.ones(4), r"add: shapes \[2, 3\] and \[4\] cannot be broadcast.*3 vs 4"),
    (lambda: zero.ones(2, 3) * zero.ones(3, 2), r"mul: shapes \[2, 3\] and \[3, 2\]"),
    (lambda: zero.ones(2) == zero.ones(3), r"eq: shapes \[2\] and \[3\]"),
    (lambda: zero.where(zero.ones(2) > 0, zero.ones(3), 0.0), r"where: shapes \[2\] and \[3\]"),
    (lambda: zero.ones(2, 3).masked_fill(zero.ones(3, 2) > 0, 1.0), r"masked_fill: shapes \[2, 3\] and \[3, 2\]"),
    (lambda: zero.ones(2, 3).masked_fill_(zero.ones(4, 2, 3) > 0, 1.0),
     r"masked_fill_: mask \[4, 2, 3\] must broadcast to float32\[2, 3\]"),
    (lambda: zero.ones(2, 3) @ zero.ones(2, 3),
     r"matmul: inner dimensions differ: float32\[2, 3\] on cpu @ float32\[2, 3\] on cpu \(3 != 2\)"),
    (lambda: zero.ones(2, 3).view(4), r"view: shape \(4,\) is invalid for a tensor of 6 elements"),
    (lambda: zero.ones(2, 3).reshape(-1, -1), r"reshape: only one dimension can be -1"),
    (lambda: zero.ones(2, 3).expand(4, 3), r"expand: cannot expand float32\[2, 3\] on cpu to \[4, 3\]"),
    (lambda: zero.ones(2, 3).expand(3), r"expand: target \[3\] has fewer dimensions than float32\[2, 3\]"),
    (lambda: zero.ones(2, 3).sum((0, -2)), r"sum: dim \(0, -2\) names a dimension twice"),
    (lambda: zero.ones(2, 3).flatten(1, 0), r"flatten: start_dim 1 comes after end_dim 0"),
    (lambda: zero.cat([zero.ones(2, 3), zero.ones(2, 3, 1)]), r"cat: sizes must match.*float32\[2, 3, 1\]"),
    (lambda: zero.tensor([[1.0, 2.0], [3.0]]),
     r"tensor\(\): nested sequences must be regular.*data\[1\] has shape \[1\]"),
    (lambda: zero.zeros(2, -1), r"sizes must be non-negative integers, got \(2, -1\)"),
    (lambda: zero.ones(0).amax(), r"amax: cannot reduce over an empty dimension of float32\[0\]"),
]


@pytest.mark.parametrize("fn,message", SHAPE_ERRORS)
def test_shape_errors(fn, message):
    with pytest.raises(errors.ShapeError, match=message):
        fn()


DTYPE_ERRORS = [
    (lambda: zero.where(zero.ones(2), zero.ones(2), 0.0), r"where: condition must be a bool tensor, got float32\[2\]"),
    (lambda: zero.ones(2).masked_fill(zero.ones(2), 0.0), r"masked_fill: mask must be a bool tensor"),
    (lambda: zero.ones(2).gather(0, zero.ones(2)), r"gather: index must be an int64 or int32 tensor, got float32\[2\]"),
    (lambda: zero.ones(2).index_select(0, zero.tensor([True])), r"index_select: index must be.*bool\[1\]"),
    (lambda: zero.tensor([1, 2]).var(), r"var: needs a floating-point input, got int64\[2\]"),
    (lambda: zero.tensor([1, 2], dtype=zero.int32).mean(), r"mean: needs a floating-point input.*int32\[2\]"),
    (lambda: zero.tensor([1, 2], requires_grad=True), r"only floating-point tensors can require gradients.*int64"),
    (lambda: -zero.tensor([True]), r"neg: negation of a bool tensor"),
    (lambda: zero.tensor([1, 2]).add_(1.5), r"add_: .*1\.5.*int64\[2\]"),
    (lambda: zero.ones(2)[zero.ones(1)], r"tensors used as indices must be integer or bool, got float32\[1\]"),
    (lambda: zero.ones(2, dtype="complex64"), r"unknown dtype name 'complex64'"),
]


@pytest.mark.parametrize("fn,message", DTYPE_ERRORS)
def test_dtype_errors(fn, message):
    with pytest.raises(errors.DTypeError, match=message):
        fn()


def test_non_tensor_operands_raise_type_errors():
    with pytest.raises(TypeError, match="add: operands must be tensors or Python numbers, got str"):
        zero.ones(2) + "a"
    with pytest.raises(TypeError, match="matmul: both operands must be tensors"):
        zero.ones(2) @ [1.0, 2.0]
    with pytest.raises(TypeError, match=r"Tensor\(\): expected data .* or sizes"):
        zero.Tensor(2, -1)
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh'"):
        Gelu.apply(zero.ones(2), approximate="fast")


INDEX_ERRORS = [
    (lambda: zero.ones(2, 3)[2], r"index 2 is out of bounds for dimension 0 with size 2"),
    (lambda: zero.ones(2, 3)[:, -4], r"index -4 is out of bounds for dimension 1 with size 3"),
    (lambda: zero.ones(2, 3)[0, 0, 0], r"too many indices for a tensor of dimension 2 \(3 given\)"),
    (lambda: zero.ones(2, 3)[zero.tensor([5])], r"index out of range for float32\[2, 3\]"),
    (lambda: zero.ones(2, 3)[zero.tensor([True, False, True])], r"index out of range for float32\[2, 3\]"),
    (lambda: zero.ones(2, 3).sum(2), r"sum: dim 2 is out of range for a tensor with 2 dimension\(s\).*\[-2, 1\]"),
    (lambda: zero.ones(2, 3).max(-3), r"dim -3 is out of range"),
    (lambda: zero.ones(2, 3).permute(0, 2), r"permute: dim 2 is out of range"),
    (lambda: zero.ones(2, 3).size(5), r"size: dim 5 is out of range"),
    (lambda: zero.ones(2, 3).unsqueeze(-4), r"unsqueeze: dim -4 is out of range for float32\[2, 3\]"),
    (lambda: zero.stack([zero.ones(2)], dim=3), r"stack: dim 3 out of range for 2 dimensions"),
    (lambda: zero.ones(3, 2).index_select(0, zero.tensor([0, 3])), r"index_select: index out of range.*\[0, 3\]"),
]


@pytest.mark.parametrize("fn,message", INDEX_ERRORS)
def test_index_errors(fn, message):
    with pytest.raises(errors.ZeroIndexError, match=message):
        fn()


def test_mixing_devices_is_refused_before_any_kernel_runs():
    a = zero.ones(2, 3)
    elsewhere = _pretend_on("cuda:1", zero.ones(2, 3))
    live = zero.cpu.memory_stats()["live_bytes"]
    with pytest.raises(errors.DeviceError,
                       match=r"Add: all tensors must be on one device, got float32\[2, 3\] on cpu, "
                             r"float32\[2, 3\] on cuda:1; move them with \.to\(device\)"):
        a + elsewhere
    assert zero.cpu.memory_stats()["live_bytes"] == live  # no output was allocated
    with pytest.raises(errors.DeviceError, match=r"MatMul:.*float32\[3, 2\] on cuda:1"):
        a @ _pretend_on("cuda:1", zero.ones(3, 2))
    with pytest.raises(errors.DeviceError, match=r"Cat:.*on cpu.*on cuda:1"):
        zero.cat([a, elsewhere])
    with pytest.raises(errors.DeviceError, match=r"Gather:.*int64\[2, 3\] on cuda:0"):
        a.gather(1, _pretend_on("cuda:0", zero.zeros(2, 3, dtype=zero.int64)))
    with pytest.raises(errors.DeviceError, match=r"Where:.*on cuda:1"):
        zero.where(a > 0, a, elsewhere)
    with pytest.raises(errors.DeviceError, match=r"add_: operand on cuda:1 for a tensor on cpu"):
        a.add_(elsewhere)
    with pytest.raises(errors.DeviceError, match=r"index: index tensor int64\[1\] on cuda:1"):
        a[_pretend_on("cuda:1", zero.tensor([0]))]
    with pytest.raises(errors.DeviceError, match=r"setitem: value float32\[3\] on cuda:1"):
        a[0] = _pretend_on("cuda:1", zero.ones(3))


def test_view_errors():
    with pytest.raises(errors.ViewError, match=r"view: cannot view float32\[3, 2\] on cpu with strides \[1, 3\] "
                                               r"as \[6\] without copying; use \.reshape"):
        zero.ones(2, 3).T.view(6)


def test_autograd_misuse_errors():
    x = zero.ones(2, requires_grad=True)
    with pytest.raises(errors.AutogradError, match=r"backward: grad can be created implicitly only for a scalar "
                                                   r"output, got float32\[2\]"):
        (x * 2).backward()
    with pytest.raises(errors.AutogradError, match="does not require grad and has no grad_fn"):
        zero.ones(2).sum().backward()
    with pytest.raises(errors.AutogradError, match=r"numpy\(\) of a tensor that requires grad.*detach"):
        x.numpy()
