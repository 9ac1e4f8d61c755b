"""dtypes and PyTorch's type promotion."""
from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest

import zero
from zero import dtypes

ALL = [zero.float32, zero.float64, zero.float16, zero.int32, zero.int64, zero.uint8, zero.bool]


def _make(dtype, ndim):
    return zero.ones(*([2] * ndim), dtype=dtype) if ndim else zero.ones((), dtype=dtype)


def test_the_rules_the_issue_names():
    i32 = zero.tensor([1, 2], dtype=zero.int32)
    assert (i32 + 1).dtype is zero.int32
    assert (1 + i32).dtype is zero.int32
    assert (i32 + 1.5).dtype is zero.float32
    assert (i32 * True).dtype is zero.int32
    f32 = zero.ones(2)
    assert (f32 + zero.tensor(1.0, dtype=zero.float64)).dtype is zero.float32  # 0-d does not widen
    assert (f32 + zero.ones(2, dtype=zero.float64)).dtype is zero.float64
    assert (zero.tensor(1.0) + zero.tensor(1.0, dtype=zero.float64)).dtype is zero.float64  # both 0-d
    assert (zero.tensor(1, dtype=zero.int32) + zero.tensor(1.5, dtype=zero.float64)).dtype is zero.float64
    # A 0-d tensor of a higher category decides the type, with its own size (torch gives float64 too).
    assert (i32 + zero.tensor(2.5, dtype=zero.float64)).dtype is zero.float64
    b = zero.tensor([True, False])
    assert (b + b).dtype is zero.bool and (b + b).tolist() == [True, False]
    assert (b * b).dtype is zero.bool
    assert (b + 1).dtype is zero.int64
    assert (i32 / i32).dtype is zero.float32 and (i32 / 2).tolist() == [0.5, 1.0]
    assert (zero.tensor([3]) / zero.tensor([2])).tolist() == [1.5]
    assert (i32 ** 2).dtype is zero.int32 and (i32 ** 2).tolist() == [1, 4]
    assert (i32 + zero.ones(2, dtype=zero.int64)).dtype is zero.int64
    assert (zero.ones(2, dtype=zero.uint8) + zero.ones(2, dtype=zero.int32)).dtype is zero.int32


def test_unary_float_functions_promote_integers():
    assert zero.tensor([1, 2]).exp().dtype is zero.float32
    assert zero.tensor([4], dtype=zero.int32).sqrt().tolist() == [2.0]
    assert zero.tensor([-1, 2]).abs().dtype is zero.int64
    assert zero.tensor([-1, 2]).relu().tolist() == [0, 2]
    assert (-zero.tensor([1], dtype=zero.int32)).dtype is zero.int32
    with pytest.raises(zero.errors.DTypeError, match="neg.*bool.*logical_not"):
        -zero.tensor([True])


def test_bool_subtraction_is_refused():
    b = zero.tensor([True, False])
    with pytest.raises(zero.errors.DTypeError, match=r"sub: .*bool\[2\].*logical_xor"):
        b - b


@pytest.mark.parametrize("a,b", list(itertools.product(ALL, repeat=2)))
def test_result_type_matches_torch(a, b):
    torch = pytest.importorskip("torch")
    names = {zero.float32: torch.float32, zero.float64: torch.float64, zero.float16: torch.float16,
             zero.int32: torch.int32, zero.int64: torch.int64, zero.uint8: torch.uint8, zero.bool: torch.bool}

    def torch_make(dtype, ndim):
        return torch.ones(*([2] * ndim), dtype=names[dtype]) if ndim else torch.ones((), dtype=names[dtype])

    for na, nb in [(1, 1), (1, 0), (0, 1), (0, 0)]:
        expected = torch.result_type(torch_make(a, na), torch_make(b, nb))
        assert names[zero.result_type(_make(a, na), _make(b, nb))] == expected, (a, na, b, nb)
    for scalar in (True, 3, 2.5):
        for n in (0, 1):
            assert names[zero.result_type(_make(a, n), scalar)] == torch.result_type(torch_make(a, n), scalar)


def test_binary_ops_produce_the_promoted_dtype_and_values():
    for a, b in itertools.product([zero.float32, zero.float64, zero.int32, zero.int64], repeat=2):
        x = zero.tensor([1, 2, 3], dtype=a)
        y = zero.tensor([4, 5, 6], dtype=b)
        out = x * y
        assert out.dtype is zero.promote_types(a, b)
        assert out.tolist() == [4, 10, 18]


def test_promote_types():
    assert zero.promote_types(zero.int32, zero.float16) is zero.float16
    assert zero.promote_types(zero.bool, zero.uint8) is zero.uint8
    assert zero.promote_types(zero.int64, zero.int32) is zero.int64
    assert zero.promote_types(zero.float32, zero.float64) is zero.float64


def test_dtype_names_and_conversions():
    assert dtypes.to_dtype("float") is zero.float32 and dtypes.to_dtype("long") is zero.int64
    assert dtypes.to_dtype(np.float64) is zero.float64 and dtypes.to_dtype(float) is zero.float32
    assert dtypes.to_dtype(int) is zero.int64 and dtypes.to_dtype(bool) is zero.bool
    assert zero.float is zero.float32 and zero.double is zero.float64 and zero.long is zero.int64
    assert repr(zero.float32) == "zero.float32" and zero.float32.itemsize == 4
    assert zero.float64.is_floating_point and not zero.int32.is_floating_point
    assert pickle.loads(pickle.dumps(zero.int32)) is zero.int32
    with pytest.raises(zero.errors.DTypeError, match="unknown dtype name 'complex'"):
        dtypes.to_dtype("complex")
    with pytest.raises(zero.errors.DTypeError, match="complex128 is not supported"):
        zero.from_numpy(np.zeros(2, dtype=np.complex128))


def test_default_dtype():
    assert zero.get_default_dtype() is zero.float32
    zero.set_default_dtype(zero.float64)
    try:
        assert zero.tensor([1.5]).dtype is zero.float64
        assert zero.ones(2).dtype is zero.float64
        assert (zero.tensor([1]) / 2).dtype is zero.float64
    finally:
        zero.set_default_dtype(zero.float32)
    assert zero.ones(2).dtype is zero.float32
    with pytest.raises(zero.errors.DTypeError, match="floating"):
        zero.set_default_dtype(zero.int32)


def test_the_16_bit_floats_store_cast_and_promote():
    x = zero.tensor([1.5, 2.25, 3.0], dtype=zero.bfloat16)
    assert x.dtype is zero.bfloat16 and x.element_size() == 2 and str(x.numpy().dtype) == "bfloat16"
    assert x.float().tolist() == [1.5, 2.25, 3.0] and x.to("float16").dtype is zero.float16
    assert (x * 2).dtype is zero.bfloat16 and (x * 2).tolist() == [3.0, 4.5, 6.0]
    assert zero.promote_types(zero.bfloat16, zero.float16) is zero.float32   # as PyTorch
    assert (x + zero.ones(3)).dtype is zero.float32 and (x + 1.0).dtype is zero.bfloat16
    y = zero.ones(3, requires_grad=True)
    (y.bfloat16() * 3).float().sum().backward()
    assert y.grad.dtype is zero.float32 and y.grad.tolist() == [3.0, 3.0, 3.0]
    assert zero.tensor([1.0]).bfloat16().dtype is zero.bfloat16
    assert zero.zeros(2, dtype="bfloat16").dtype is zero.bfloat16
