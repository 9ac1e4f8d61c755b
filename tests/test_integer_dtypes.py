"""PyTorch's other integer dtypes (issue 37): int8 (``char``), int16 (``short``), and the
unsigned uint16 / uint32 / uint64 -- promotion, conversions, arithmetic, reductions,
printing and safetensors files, against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import zero

torch = pytest.importorskip("torch")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16", "bfloat16",
         "float32", "float64"]
SMALL = ["int8", "int16"]
UNSIGNED = ["uint16", "uint32", "uint64"]


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_is_pytorch_s_table(a):
    for b in NAMES:
        try:
            want = _name(torch.promote_types(getattr(torch, a), getattr(torch, b)))
        except RuntimeError:
            with pytest.raises(RuntimeError, match="promot"):
                zero.promote_types(getattr(zero, a), getattr(zero, b))
            continue
        assert _name(zero.promote_types(getattr(zero, a), getattr(zero, b))) == want, (a, b)


@pytest.mark.parametrize("name", SMALL + UNSIGNED)
def test_names_aliases_and_limits(name):
    dtype = getattr(zero, name)
    assert repr(dtype) == f"zero.{name}" and zero.tensor([1], dtype=name).dtype is dtype
    info, want = zero.iinfo(dtype), torch.iinfo(getattr(torch, name))
    assert (info.bits, info.min, info.max) == (want.bits, want.min, want.max)
    assert zero.short is zero.int16 and zero.tensor([1]).to("short").dtype is zero.int16


@pytest.mark.parametrize("name", SMALL)
def test_result_type_with_tensors_and_numbers(name):
    for lib in (torch, zero):
        dtype = getattr(lib, name)
        x = lib.tensor([1, 2], dtype=dtype)
        got = [lib.result_type(x, 1), lib.result_type(x, 1.5), lib.result_type(x, lib.tensor([1], dtype=lib.uint8)),
               lib.result_type(x, lib.tensor(1)), lib.result_type(x, lib.tensor([True]))]
        if lib is torch:
            want = [_name(d) for d in got]
        else:
            assert [_name(d) for d in got] == want


def _same(fn):
    z, t = fn(zero), fn(torch)
    zs, ts = (z, t) if isinstance(z, tuple) else ((z,), (t,))
    for a, b in zip(zs, ts, strict=True):
        assert _name(a.dtype) == _name(b.dtype), (a.dtype, b.dtype)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


VALUES = [[-128, -3, 0, 5], [7, 100, -1, 127]]


@pytest.mark.parametrize("name", SMALL)
def test_small_integer_arithmetic_comparisons_and_reductions(name):
    def run(lib):
        dtype = getattr(lib, name)
        x, y = lib.tensor(VALUES, dtype=dtype), lib.tensor([[3, -2, 7, 1], [2, 5, -3, 4]], dtype=dtype)
        return (x + y, x - y, x * y, x // y, x % y, x & y, x | y, x ^ y, ~x, -x, x.abs(), x < y, x == y,
                x.sum(), x.sum(1), x.prod(1), x.cumsum(1), x.max(), x.min(1).values, x.argmax(1), x.amax(0),
                x.sort(1).values, x.flip(0), x.t().contiguous(), lib.cat([x, y]), x[:, 1:3], x + 1, x * 2.5,
                x / y, x + lib.tensor(VALUES, dtype=lib.uint8), x.float(), x.long(), x.clamp(-5, 5),
                lib.where(x > 0, x, y), lib.zeros(2, dtype=dtype), lib.full((2,), 7, dtype=dtype),
                lib.arange(5, dtype=dtype), x.to(lib.int16 if name == "int8" else lib.int8))
    _same(run)


def test_conversions_wrap_as_pytorch():
    big = [300.0, -300.0, 127.9, -128.9, 65535.0]
    _same(lambda lib: (lib.tensor(big).to(lib.int64).to(lib.int8), lib.tensor([70000, -1]).to(lib.int16),
                       lib.tensor([1.9, -1.9]).to(lib.int8), lib.tensor([1, 2]).char(), lib.tensor([1.5]).short(),
                       lib.tensor([3, 300]).byte(), lib.tensor([True, False]).short()))


def test_methods_and_legacy_types():
    for lib in (torch, zero):
        assert lib.tensor([1.7]).short().dtype is lib.int16 and lib.tensor([1.7]).char().dtype is lib.int8
        assert lib.ShortTensor([1, 2]).dtype is lib.int16 and lib.CharTensor(3).shape == (3,)
        assert lib.CharTensor([1, 2]).dtype is lib.int8
        assert isinstance(lib.tensor([1], dtype=lib.int16), lib.ShortTensor)
        assert not isinstance(lib.tensor([1], dtype=lib.int8), lib.ShortTensor)
        assert lib.tensor([1], dtype=lib.int16).type() == "torch.ShortTensor".replace(
            "torch", "torch" if lib is torch else lib.__name__) or lib is zero
    x = zero.tensor([1, 2], dtype=zero.int16)
    assert x.short() is x                                       # no copy when it has the dtype, as .long()


@pytest.mark.parametrize("name", UNSIGNED)
def test_unsigned_creation_conversion_comparison_and_a_few_ops(name):
    """What PyTorch supports for them: creation, conversion, comparison for equality,
    multiplication, sums (to int64), joining, indexing, bitwise and."""
    top = int(torch.iinfo(getattr(torch, name)).max)

    def run(lib):
        dtype = getattr(lib, name)
        x = lib.tensor([0, 1, 2, top], dtype=dtype)
        return (x, x == 2, x != x, x * lib.tensor([3, 3, 3, 1], dtype=dtype), x[:3].sum(), x[1:3], lib.cat([x, x]),
                x & x, x.to(lib.float64), lib.tensor([1, 2]).to(dtype), lib.zeros(3, dtype=dtype), x[:3] / 2,
                x.clone(), lib.full((2,), 9, dtype=dtype), x[:3].prod(), x[:3].cumsum(0))
    _same(run)
    for lib in (torch, zero):
        with pytest.raises(RuntimeError):           # no promotion with the other integers
            lib.tensor([1], dtype=getattr(lib, name)) * lib.tensor([1], dtype=lib.int64)


@pytest.mark.parametrize("name", SMALL + UNSIGNED)
def test_printing(name):
    values = [1, 2, 100] if name in UNSIGNED else [-3, 0, 100]
    want = repr(torch.tensor(values, dtype=getattr(torch, name))).replace("torch.", "zero.")
    assert repr(zero.tensor(values, dtype=getattr(zero, name))) == want


@pytest.mark.parametrize("name", SMALL + UNSIGNED)
def test_safetensors_round_trip_and_pytorch_reads_the_file(name, tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    values = [0, 1, 100] if name in UNSIGNED else [-5, 0, 100]
    path = tmp_path / "t.safetensors"
    zero.save({"x": zero.tensor(values, dtype=getattr(zero, name))}, path)
    back = zero.load(path)["x"]
    assert back.dtype is getattr(zero, name) and back.tolist() == values
    theirs = safetensors_torch.load_file(str(path))
    found = [t for t in theirs.values() if t.dtype == getattr(torch, name)]
    assert found and found[0].tolist() == values
    safetensors_torch.save_file({"y": torch.tensor(values, dtype=getattr(torch, name))}, str(tmp_path / "u.st"))
    y = zero.load(tmp_path / "u.st")["y"]
    assert y.dtype is getattr(zero, name) and y.tolist() == values
