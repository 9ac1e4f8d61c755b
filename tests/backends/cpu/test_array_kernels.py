"""The shared array kernels on NumPy, where they replace hand-written CPU ones: same values
as the NumPy routine each stands for, including the casts into the output's dtype."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import zero
from zero.backends.array_kernels import arithmetic, indexing, reduction, unary


class _OnNumPy:
    """The shared kernels bound to NumPy, by name: ``KERNELS["clamp"](x, low, high, out)``."""

    def __getitem__(self, name: str):
        module = next(m for m in (arithmetic, unary, reduction, indexing) if hasattr(m, name))
        return functools.partial(getattr(module, name), np)


KERNELS = _OnNumPy()
BOUNDS = st.one_of(st.none(), st.floats(-4, 4, allow_nan=False), st.integers(-4, 4))


@given(x=arrays(st.sampled_from([np.int64, np.int32, np.float32, np.float64]), st.integers(0, 12),
                elements=st.integers(-6, 6)),
       low=BOUNDS, high=BOUNDS, out_dtype=st.sampled_from([np.int64, np.float32, np.float64]))
def test_clamp_is_numpy_clip_cast_unsafely_into_out(x, low, high, out_dtype):
    if low is None and high is None:
        return
    want = np.empty(x.shape, out_dtype)
    np.clip(x, low, high, out=want, casting="unsafe")
    got = np.empty(x.shape, out_dtype)
    KERNELS["clamp"](x, low, high, got)
    np.testing.assert_array_equal(got, want)


def test_clamp_of_integers_in_place_rounds_toward_zero():
    x = np.arange(4)
    KERNELS["clamp"](x, 0.5, 2.5, x)
    assert x.tolist() == [0, 1, 2, 2]


def test_clamp_keeps_nan():
    out = np.empty(3)
    KERNELS["clamp"](np.array([np.nan, -5.0, 5.0]), -1.0, 1.0, out)
    assert np.isnan(out[0]) and out[1:].tolist() == [-1.0, 1.0]


@pytest.mark.parametrize("axes", [(), (0,), (1,), (0, 1)])
def test_reductions_over_no_axes_copy_and_over_some_reduce(axes):
    x = np.arange(12.0).reshape(3, 4) - 5
    shape = tuple(n for d, n in enumerate(x.shape) if d not in axes)
    for name, reference in (("sum", np.sum), ("amax", np.amax), ("amin", np.amin)):
        out = np.empty(shape)
        KERNELS[name](x, axes, out)
        np.testing.assert_array_equal(out, reference(x, axis=axes))
    for name, reference in (("all", np.all), ("any", np.any)):
        out = np.empty(shape, bool)
        KERNELS[name](x, axes, out)
        np.testing.assert_array_equal(out, reference(x, axis=axes))


def test_sum_of_booleans_counts_into_an_integer_out():
    out = np.empty((), np.int64)
    KERNELS["sum"](np.array([True, False, True]), (0,), out)
    assert out == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("other", ["number", "nan", "array", "strided array"])
def test_cpu_where_select_loop_equals_numpy_where(dtype, other):
    import zero.backends.cpu.kernels as cpu

    rng = np.random.default_rng(0)
    a = (rng.standard_normal((64, 33)) * 10).astype(dtype)
    condition = rng.standard_normal(a.shape) > 0
    b = {"number": 0.5 if dtype != np.int64 else 3, "nan": np.nan if dtype != np.int64 else 7,
         "array": (rng.standard_normal(a.shape) * 10).astype(dtype),
         "strided array": (rng.standard_normal((33, 64)) * 10).astype(dtype).T}[other]
    out = np.empty_like(a)
    cpu.where(condition, a, b, out)
    want = np.where(condition, a, b).astype(dtype)
    np.testing.assert_array_equal(out, want)
    cpu.where(condition[:1], a, b, out)           # a broadcast condition: NumPy's path
    np.testing.assert_array_equal(out, np.where(condition[:1], a, b).astype(dtype))


@settings(deadline=None)   # the first call per dtype compiles the loop (or loads it from the cache)
@given(arrays(st.sampled_from([np.int64, np.int32, np.int16, np.uint8]), st.integers(1, 200)),
       st.sampled_from(["flat", "strided", "2-D"]))
def test_cpu_index_extremes_are_numpy_min_and_max(values, layout):
    """The CPU's one-pass extremes of an index array (any integer dtype, any layout) equal
    NumPy's min and max, as Python ints; so does the shared kernel."""
    import zero.backends.cpu.kernels as cpu

    index = {"flat": values, "strided": values[::2], "2-D": values[:values.size // 2 * 2].reshape(2, -1).T}[layout]
    if index.size == 0:
        return
    want = (int(index.min()), int(index.max()))
    for extremes in (cpu.index_extremes, KERNELS["index_extremes"]):
        got = extremes(index)
        assert got == want and all(type(v) is int for v in got)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("row_shape", [(33,), (7, 33)])
def test_cpu_add_of_a_row_equals_numpy_bit_for_bit(dtype, row_shape):
    """The CPU's add loop by rows (an array plus an array of its trailing shape) gives NumPy's
    sums exactly, either way round and in place; whatever it does not take (another dtype, a
    strided operand, a row that overlaps the output) goes to NumPy."""
    import zero.backends.cpu.kernels as cpu
    from zero.backends.cpu.kernels import elementwise as cpu_elementwise

    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 7, 33)) * 10).astype(dtype)
    row = (rng.standard_normal(row_shape) * 10).astype(dtype)
    want = x + row
    for a, b in ((x, row), (row, x)):
        out = np.zeros_like(x)
        cpu.add(a, b, out)
        np.testing.assert_array_equal(out, want)
    in_place = x.copy()
    cpu.add(in_place, row, in_place)
    np.testing.assert_array_equal(in_place, want)
    strided = np.zeros_like(x)
    cpu.add(x, np.repeat(row, 2, axis=-1)[..., ::2], strided)
    np.testing.assert_array_equal(strided, want)
    overlapping = x.copy()
    cpu.add(overlapping, overlapping[0, 0], overlapping)      # the row is the output's first row
    np.testing.assert_array_equal(overlapping, x + x[0, 0])
    if dtype != np.int64:
        bias_added = x.reshape(-1, 33).copy()
        cpu_elementwise.add_row_in_place(bias_added, row.reshape(-1)[:33])
        np.testing.assert_array_equal(bias_added, x.reshape(-1, 33) + row.reshape(-1)[:33])


@pytest.mark.parametrize("shape,row", [((5, 0), (0,)), ((0, 3), (3,)), ((2, 0, 4), (0, 4))])
def test_cpu_add_of_an_empty_row_or_no_rows(shape, row):
    """Empty operands of the add by rows: the empty sum of NumPy's shape, no error."""
    import zero.backends.cpu.kernels as cpu
    from zero.backends.cpu.kernels import elementwise as cpu_elementwise

    x, r = np.ones(shape, np.float32), np.ones(row, np.float32)
    out = np.empty(shape, np.float32)
    cpu.add(x, r, out)
    cpu.add(x, r, x)
    if x.ndim == 2:
        cpu_elementwise.add_row_in_place(x, r)
    assert (zero.ones(*shape) + zero.ones(*row)).shape == shape


def test_squared_norms_and_scale_in_place():
    rng = np.random.default_rng(1)
    arrays_ = [rng.standard_normal((5, 7)).astype(np.float32), rng.standard_normal(11),
               rng.standard_normal((6, 4)).astype(np.float16).T, np.zeros((0, 3), np.float32)]
    out = np.empty(len(arrays_), np.float32)
    KERNELS["squared_norms"](arrays_, out)
    want = [np.sum(a.astype(np.float64) ** 2) for a in arrays_]
    np.testing.assert_allclose(out, want, rtol=1e-3)
    before = [a.copy() for a in arrays_]
    KERNELS["scale_in_place"](arrays_, np.array(0.25, np.float32))
    for a, b in zip(arrays_, before):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b * 0.25, rtol=1e-3)


@pytest.mark.parametrize("total", [0.0, 1e-7, 0.37, 1.0, 1.0 + 1e-6, 3.5, 1e30, np.inf, np.nan])
@pytest.mark.parametrize("max_norm", [1.0, 0.25, 5, 1e-3])
def test_clip_factor_is_the_three_ops_it_replaces(total, max_norm):
    """clip_grad_norm_'s factor min(max_norm / (total + eps), 1), bit for bit what the ops
    (total + eps), max_norm / that and clamp(max=1) gave, inf and nan included."""
    norm = zero.tensor(total, dtype=zero.float32)
    with zero.no_grad():
        want = (max_norm / (norm + 1e-6)).clamp(max=1.0).numpy()
    got = np.empty((), np.float32)
    KERNELS["clip_factor"](norm.numpy(), max_norm, 1e-6, got)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
