"""View ops, indexing and copies through the harness."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import CONTIGUOUS, check_op

import zero

SHAPE = (3, 4)
SHAPE3 = (2, 3, 4)

VIEWS = {
    "view_split": (lambda a: a.view(3, 2, 2), lambda a: a.reshape(3, 2, 2), SHAPE),
    "view_infer": (lambda a: a.view(3, -1, 2), lambda a: a.reshape(3, -1, 2), SHAPE),
    "view_tuple": (lambda a: a.view((2, 3, 2, 2)), lambda a: a.reshape(2, 3, 2, 2), SHAPE3),
    "reshape_merge": (lambda a: a.reshape(-1), lambda a: a.reshape(-1), SHAPE),
    "reshape_3d": (lambda a: a.reshape(4, 6), lambda a: a.reshape(4, 6), SHAPE3),
    "reshape_same": (lambda a: a.reshape(3, 4) * 1.0, lambda a: a, SHAPE),
    "transpose": (lambda a: a.transpose(0, 1), lambda a: a.T, SHAPE),
    "transpose_neg": (lambda a: a.transpose(-1, 0), lambda a: np.swapaxes(a, -1, 0), SHAPE3),
    "zero_transpose": (lambda a: zero.transpose(a, 1, 2), lambda a: np.swapaxes(a, 1, 2), SHAPE3),
    "T": (lambda a: a.T, lambda a: a.T, SHAPE3),
    "t": (lambda a: a.t(), lambda a: a.T, SHAPE),
    "mT": (lambda a: a.mT, lambda a: np.swapaxes(a, -1, -2), SHAPE3),
    "permute": (lambda a: a.permute(2, 0, 1), lambda a: np.transpose(a, (2, 0, 1)), SHAPE3),
    "permute_tuple": (lambda a: a.permute((1, -1, 0)), lambda a: np.transpose(a, (1, 2, 0)), SHAPE3),
    "expand": (lambda a: a[:, :1].expand(3, 5), lambda a: np.broadcast_to(a[:, :1], (3, 5)), SHAPE),
    "expand_new_dims": (lambda a: a.expand(2, 3, 4), lambda a: np.broadcast_to(a, (2, 3, 4)), SHAPE),
    "expand_minus_one": (lambda a: a[:1].expand(5, -1),
                         lambda a: np.broadcast_to(a[:1], (5, 4)), SHAPE),
    "broadcast_to": (lambda a: a.broadcast_to((2, 3, 4)), lambda a: np.broadcast_to(a, (2, 3, 4)), SHAPE),
    "zero_broadcast_to": (lambda a: zero.broadcast_to(a[None], (2, 3, 4)),
                          lambda a: np.broadcast_to(a, (2, 3, 4)), SHAPE),
    "unsqueeze_0": (lambda a: a.unsqueeze(0), lambda a: a[None], SHAPE),
    "unsqueeze_last": (lambda a: a.unsqueeze(-1), lambda a: a[..., None], SHAPE),
    "unsqueeze_mid": (lambda a: a.unsqueeze(1), lambda a: a[:, None], SHAPE),
    "squeeze_all": (lambda a: a[:, None, :1].squeeze(), lambda a: a[:, 0], SHAPE),
    "squeeze_dim": (lambda a: a[:, None].squeeze(1), lambda a: a, SHAPE),
    "squeeze_noop": (lambda a: a.squeeze(0) * 1.0, lambda a: a, SHAPE),
    "flatten": (lambda a: a.flatten(), lambda a: a.reshape(-1), SHAPE3),
    "flatten_range": (lambda a: a.flatten(1), lambda a: a.reshape(2, 12), SHAPE3),
    "flatten_mid": (lambda a: a.flatten(0, 1), lambda a: a.reshape(6, 4), SHAPE3),
    "view_as": (lambda a: a.reshape_as(zero.empty(4, 3)), lambda a: a.reshape(4, 3), SHAPE),
    "index_slices": (lambda a: a[1:3, ::2], lambda a: a[1:3, ::2], SHAPE),
    "index_ellipsis": (lambda a: a[..., 0], lambda a: a[..., 0], SHAPE3),
    "index_last": (lambda a: a[-1], lambda a: a[-1], SHAPE3),
    "index_none": (lambda a: a[None], lambda a: a[None], SHAPE),
    "index_mixed": (lambda a: a[1, None, :, -2], lambda a: a[1, None, :, -2], SHAPE3),
    "index_scalar": (lambda a: a[1, 2], lambda a: a[1, 2], SHAPE),
    "index_empty_slice": (lambda a: a[2:1], lambda a: a[2:1], SHAPE),
    "index_step_3": (lambda a: a[:, ::3], lambda a: a[:, ::3], SHAPE),
    "index_int_tensor": (lambda a: a[zero.tensor([2, 0, 2])], lambda a: a[[2, 0, 2]], SHAPE),
    "index_int_tensor_dim1": (lambda a: a[:, zero.tensor([3, 3, 1])], lambda a: a[:, [3, 3, 1]], SHAPE),
    "index_int_list": (lambda a: a[[0, 2], [1, 3]], lambda a: a[[0, 2], [1, 3]], SHAPE),
    "index_negative": (lambda a: a[zero.tensor([-1, 0])], lambda a: a[[-1, 0]], SHAPE),
    "index_int32": (lambda a: a[zero.tensor([1, 1], dtype=zero.int32)], lambda a: a[[1, 1]], SHAPE),
    "index_2d_int_tensor": (lambda a: a[zero.tensor([[0, 1], [2, 2]])], lambda a: a[[[0, 1], [2, 2]]], SHAPE),
    "index_bool_computed": (lambda a: a[a > 0], lambda a: a[a > 0], SHAPE),
    "index_bool_rows": (lambda a: a[zero.tensor([True, False, True])], lambda a: a[[True, False, True]], SHAPE),
    "contiguous": (lambda a: a.contiguous(), lambda a: a, SHAPE),
    "clone": (lambda a: a.clone(), lambda a: a, SHAPE),
    "zero_clone": (lambda a: zero.clone(a), lambda a: a, SHAPE),
    "to_same_dtype": (lambda a: a.to(a.dtype) * 1.0, lambda a: a, SHAPE),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_op(name):
    fn, ref, shape = VIEWS[name]
    check_op(fn, ref, [shape])


def test_view_where_only_contiguous_layouts_allow_it():
    check_op(lambda a: a.view(12), lambda a: a.reshape(12), [SHAPE], layouts=(CONTIGUOUS,))


def test_view_of_a_transposed_tensor_is_refused_and_points_to_reshape():
    x = zero.arange(6.0).view(2, 3).T
    with pytest.raises(zero.errors.ViewError, match=r"view.*\[3, 2\].*reshape"):
        x.view(6)
    assert x.reshape(6).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def test_views_share_storage_and_reshape_copies_only_when_it_must():
    x = zero.arange(12.0).view(3, 4)
    for view in (x.view(4, 3), x.T, x[1:, ::2], x.unsqueeze(0), x[:, :1].expand(3, 5), x.reshape(2, 6),
                 x.flatten(), x.mT, x.permute(1, 0), x[..., 0], x[None]):
        assert view.untyped_storage() is x.untyped_storage()
    copied = x.T.reshape(12)
    assert copied.untyped_storage() is not x.untyped_storage()
    assert x.T.contiguous().is_contiguous() and x.contiguous() is x
    assert x.clone().untyped_storage() is not x.untyped_storage()


def test_strides_and_offsets_of_views():
    x = zero.zeros(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.stride(-1) == 1
    assert x.transpose(0, 2).stride() == (1, 4, 12)
    assert x[:, 1:, ::2].stride() == (12, 4, 2)
    assert x[:, 1:, ::2].storage_offset() == 4
    assert x[1].storage_offset() == 12
    assert x[0, :1].expand(5, 4).stride() == (0, 1)
    assert x[1, 2, 3].data_ptr() == x.data_ptr() + (12 + 8 + 3) * 4
    assert not x.transpose(0, 1).is_contiguous() and x[1].is_contiguous()


def test_to_dtype_casts_forward_and_backward():
    x = zero.tensor([1.5, -2.25], requires_grad=True)
    y = x.to(zero.float64)
    assert y.dtype is zero.float64 and y.tolist() == [1.5, -2.25]
    (y * y).sum().backward()
    assert x.grad.dtype is zero.float32 and x.grad.tolist() == [3.0, -4.5]
    assert x.to(zero.int64).tolist() == [1, -2] and x.double().dtype is zero.float64
    assert x.to("float64").dtype is zero.float64 and x.to(zero.float32) is x


def test_integer_casts_are_not_differentiable():
    x = zero.tensor([1.7, 2.2], requires_grad=True)
    y = x.long()
    assert y.dtype is zero.int64 and not y.requires_grad


def test_advanced_index_gradients_accumulate_repeated_indices():
    x = zero.zeros(4, 2, requires_grad=True)
    x[zero.tensor([1, 3, 1, 1])].sum().backward()
    assert x.grad.tolist() == [[0, 0], [3, 3], [0, 0], [1, 1]]


def test_index_errors_name_the_problem():
    x = zero.zeros(3, 4)
    with pytest.raises(zero.errors.ZeroIndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[3]
    with pytest.raises(zero.errors.ZeroIndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(zero.errors.ZeroIndexError, match=r"out of range.*float32\[3, 4\]"):
        x[zero.tensor([0, 5])]
    with pytest.raises(zero.errors.DTypeError, match="integer or bool.*float32"):
        x[zero.tensor([0.0, 1.0])]
    with pytest.raises(ValueError, match="step must be positive"):
        x[::-1]
    with pytest.raises(zero.errors.ZeroIndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(zero.errors.ZeroIndexError, match=r"unsqueeze: dim 3.*float32\[3, 4\]"):
        x.unsqueeze(3)
    with pytest.raises(zero.errors.ShapeError, match=r"expand.*float32\[3, 4\].*\[3, 5\]"):
        x.expand(3, 5)
    with pytest.raises(zero.errors.ShapeError, match=r"permute.*\[0, 0\]"):
        x.permute(0, 0)
    with pytest.raises(zero.errors.ShapeError, match=r"reshape.*\(5, -1\).*12 elements"):
        x.reshape(5, -1)
    with pytest.raises(zero.errors.ZeroIndexError, match=r"transpose: dim 2 is out of range.*2 dimension"):
        x.transpose(0, 2)


def test_an_index_tensor_dropped_before_backward_still_gives_the_right_gradient():
    # The op keeps the index's array; the allocator must not hand that memory to new tensors.
    x = zero.zeros(5, requires_grad=True)
    y = x[zero.tensor([4, 4, 1])]
    z = x[zero.tensor([True, False, True, False, True])]
    overwrite = [zero.full((n,), 0, dtype=dtype) for n in (3, 5) for dtype in (zero.int64, zero.bool)
                 for _ in range(4)]
    (y.sum() + z.sum() * 10.0).backward()
    assert x.grad.tolist() == [10.0, 1.0, 10.0, 0.0, 12.0]
    assert len(overwrite) == 16


def test_a_cpu_index_tensor_indexes_a_tensor_on_another_device(second_device):
    # PyTorch's rule: indices on the CPU may index (and assign into) a tensor anywhere;
    # an index on another device than the tensor's may not (tests/test_errors.py).
    values = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    x = zero.tensor(values, device=second_device, requires_grad=True)
    rows, mask = zero.tensor([2, 0, 2]), zero.tensor([True, False, True])
    picked = x[rows]
    assert picked.device == second_device
    np.testing.assert_array_equal(picked.detach().cpu().numpy(), values[[2, 0, 2]])
    np.testing.assert_array_equal(x[mask].detach().cpu().numpy(), values[[True, False, True]])
    picked.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), np.array([[1.0] * 4, [0.0] * 4, [2.0] * 4]))
    y = zero.zeros(3, 4, device=second_device)
    y[zero.tensor([1])] = 5.0
    assert y.cpu().numpy()[1].tolist() == [5.0] * 4 and y.cpu().numpy()[[0, 2]].sum() == 0
