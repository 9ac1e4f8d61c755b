"""zero.finfo and zero.iinfo: PyTorch's limits of each dtype."""
from __future__ import annotations

import numpy as np
import pytest

import zero


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_finfo_matches_torch(name):
    torch = pytest.importorskip("torch")
    got, want = zero.finfo(getattr(zero, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(got, field) == getattr(want, field), field


@pytest.mark.parametrize("name", ["int32", "int64", "uint8"])
def test_iinfo_matches_torch(name):
    torch = pytest.importorskip("torch")
    got, want = zero.iinfo(getattr(zero, name)), torch.iinfo(getattr(torch, name))
    assert (got.bits, got.max, got.min, got.dtype) == (want.bits, want.max, want.min, want.dtype)


def test_limits_by_hand_and_defaults():
    assert zero.finfo().dtype == "float32" and zero.finfo().eps == float(np.finfo(np.float32).eps)
    assert zero.finfo(zero.float16).max == 65504.0 and zero.finfo("double").bits == 64
    assert zero.iinfo(zero.uint8).max == 255 and zero.iinfo(zero.int64).min == -2 ** 63
    assert zero.finfo(zero.float32) == zero.finfo(zero.float) and "dtype=float32" in repr(zero.finfo())
    assert repr(zero.iinfo(zero.int32)) == "iinfo(min=-2147483648, max=2147483647, dtype=int32)"


def test_wrong_kind_of_dtype_is_refused():
    with pytest.raises(TypeError, match="finfo: needs a floating-point dtype, got zero.int32; use zero.iinfo"):
        zero.finfo(zero.int32)
    with pytest.raises(TypeError, match="iinfo: needs an integer dtype, got zero.float32; use zero.finfo"):
        zero.iinfo(zero.float32)
    with pytest.raises(TypeError, match="iinfo: needs an integer dtype, got zero.bool"):
        zero.iinfo(zero.bool)
