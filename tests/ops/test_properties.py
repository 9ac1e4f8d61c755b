"""Property-based tests (hypothesis): broadcasting, and random chains of views.

A chain of views is checked with an *index map*: the same chain applied to
``np.arange(n)`` in NumPy says, for each element of the view, which element of
the base it reads. Values, gradients (scatter-added through the map) and writes
through the view (assigned through the map) all follow from it.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import zero

SETTINGS = settings(max_examples=60, deadline=None)


def _numpy_sum_to_shape(grad: np.ndarray, shape: tuple) -> np.ndarray:
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True).reshape(shape)


@st.composite
def broadcastable_shapes(draw):
    """A result shape and two operand shapes that broadcast to it."""
    result = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))

    def operand():
        drop = draw(st.integers(0, len(result)))
        return tuple(1 if draw(st.booleans()) else n for n in result[drop:])

    return tuple(result), operand(), operand()


OPS = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "maximum": (lambda a, b: a.maximum(b), np.maximum),
    "where": (lambda a, b: zero.where(a > b, a, b * 2.0), lambda a, b: np.where(a > b, a, b * 2.0)),
}


@SETTINGS
@given(shapes=broadcastable_shapes(), op=st.sampled_from(sorted(OPS)), seed=st.integers(0, 2**16))
def test_broadcasting_matches_numpy_forward_and_backward(shapes, op, seed):
    _, shape_a, shape_b = shapes
    zero_fn, numpy_fn = OPS[op]
    rng = np.random.default_rng(seed)
    a_values, b_values = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    a = zero.tensor(a_values, requires_grad=True)
    b = zero.tensor(b_values, requires_grad=True)
    out = zero_fn(a, b)
    expected = numpy_fn(a_values, b_values)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy() if not out.requires_grad else out.detach().numpy(), expected)
    weights = rng.standard_normal(expected.shape)
    (out * zero.tensor(weights)).sum().backward()
    assert a.grad.shape == shape_a and b.grad.shape == shape_b
    if op in ("add", "sub", "mul"):
        local_a = {"add": 1.0, "sub": 1.0, "mul": np.broadcast_to(b_values, expected.shape)}[op]
        local_b = {"add": 1.0, "sub": -1.0, "mul": np.broadcast_to(a_values, expected.shape)}[op]
        np.testing.assert_allclose(a.grad.numpy(), _numpy_sum_to_shape(weights * local_a, shape_a), rtol=1e-12)
        np.testing.assert_allclose(b.grad.numpy(), _numpy_sum_to_shape(weights * local_b, shape_b), rtol=1e-12)


@SETTINGS
@given(shapes=broadcastable_shapes())
def test_broadcast_shapes_agree_with_numpy(shapes):
    result, shape_a, shape_b = shapes
    got = (zero.zeros(*shape_a) + zero.zeros(*shape_b)).shape
    assert got == np.broadcast_shapes(shape_a, shape_b)
    assert zero.zeros(*shape_a).expand(*got).shape == got
    expanded = zero.zeros(*shape_a).broadcast_to(got)
    lead = len(got) - len(shape_a)
    for d, (size, stride) in enumerate(zip(expanded.shape, expanded.stride())):
        if d < lead or (shape_a[d - lead] == 1 and size > 1):
            assert stride == 0  # a new or stretched dimension reads one element over and over


# -- chains of views ---------------------------------------------------------------------------


@st.composite
def view_chains(draw, allow_expand=True):
    """A base shape and a list of view steps, each valid for the shape it meets."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    base = shape
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        ndim = len(shape)
        kinds = ["slice", "unsqueeze", "reshape"] if ndim else ["unsqueeze", "reshape"]
        if ndim >= 2:
            kinds += ["transpose", "permute", "index"]
        if 1 in shape:
            kinds.append("squeeze")
            if allow_expand:
                kinds.append("expand")
        kind = draw(st.sampled_from(kinds))
        if kind == "transpose":
            d0, d1 = draw(st.integers(-ndim, ndim - 1)), draw(st.integers(-ndim, ndim - 1))
            step = (kind, d0, d1)
            order = list(range(ndim))
            order[d0], order[d1] = order[d1], order[d0]
            shape = tuple(shape[d] for d in order)
        elif kind == "permute":
            order = tuple(draw(st.permutations(range(ndim))))
            step = (kind, order)
            shape = tuple(shape[d] for d in order)
        elif kind == "index":
            d = draw(st.integers(0, ndim - 1))
            i = draw(st.integers(-shape[d], shape[d] - 1))
            step = (kind, d, i)
            shape = shape[:d] + shape[d + 1:]
        elif kind == "slice":
            d = draw(st.integers(0, ndim - 1))
            start = draw(st.integers(0, shape[d] - 1))
            stop = draw(st.integers(start + 1, shape[d]))
            stride = draw(st.integers(1, 3))
            step = (kind, d, start, stop, stride)
            shape = shape[:d] + (len(range(start, stop, stride)),) + shape[d + 1:]
        elif kind == "unsqueeze":
            d = draw(st.integers(-ndim - 1, ndim))
            step = (kind, d)
            d = d % (ndim + 1)
            shape = shape[:d] + (1,) + shape[d:]
        elif kind == "squeeze":
            d = draw(st.sampled_from([i for i, n in enumerate(shape) if n == 1]))
            step = (kind, d)
            shape = shape[:d] + shape[d + 1:]
        elif kind == "expand":
            d = draw(st.sampled_from([i for i, n in enumerate(shape) if n == 1]))
            shape = shape[:d] + (draw(st.integers(2, 3)),) + shape[d + 1:]
            step = (kind, shape)
        else:  # reshape: flatten, or merge two neighbours, or split one dimension
            choice = draw(st.sampled_from(["flatten", "merge", "split"]))
            if choice == "merge" and ndim >= 2:
                d = draw(st.integers(0, ndim - 2))
                shape = shape[:d] + (shape[d] * shape[d + 1],) + shape[d + 2:]
            elif choice == "split" and any(n % 2 == 0 for n in shape):
                d = draw(st.sampled_from([i for i, n in enumerate(shape) if n % 2 == 0]))
                shape = shape[:d] + (2, shape[d] // 2) + shape[d + 1:]
            else:
                shape = (int(np.prod(shape)),)
            step = ("reshape", shape)
        steps.append(step)
    return base, steps


def _apply(x, steps, lib):
    """Apply the chain to a zero tensor (lib='zero') or a NumPy array (lib='numpy')."""
    for step in steps:
        kind = step[0]
        if kind == "transpose":
            x = x.transpose(step[1], step[2]) if lib == "zero" else np.swapaxes(x, step[1], step[2])
        elif kind == "permute":
            x = x.permute(*step[1]) if lib == "zero" else np.transpose(x, step[1])
        elif kind == "index":
            x = x[(slice(None),) * step[1] + (step[2],)]
        elif kind == "slice":
            x = x[(slice(None),) * step[1] + (slice(step[2], step[3], step[4]),)]
        elif kind == "unsqueeze":
            x = x.unsqueeze(step[1]) if lib == "zero" else np.expand_dims(x, step[1])
        elif kind == "squeeze":
            x = x.squeeze(step[1]) if lib == "zero" else np.squeeze(x, step[1])
        elif kind == "expand":
            x = x.expand(*step[1]) if lib == "zero" else np.broadcast_to(x, step[1])
        else:
            x = x.reshape(step[1])
    return x


@SETTINGS
@given(chain=view_chains(), seed=st.integers(0, 2**16))
def test_view_chains_read_like_numpy_and_send_gradients_back(chain, seed):
    base_shape, steps = chain
    n = int(np.prod(base_shape))
    index_map = _apply(np.arange(n).reshape(base_shape), steps, "numpy")  # base element of each view element
    values = np.random.default_rng(seed).standard_normal(base_shape)
    leaf = zero.tensor(values, dtype=zero.float64, requires_grad=True)
    view = _apply(leaf, steps, "zero")
    assert view.shape == index_map.shape
    np.testing.assert_array_equal(view.detach().numpy(), values.reshape(-1)[index_map])
    weights = np.random.default_rng(seed + 1).standard_normal(view.shape)
    (view * zero.tensor(weights)).sum().backward()
    expected = np.zeros(n)
    np.add.at(expected, index_map.reshape(-1), weights.reshape(-1))  # expanded elements accumulate
    assert leaf.grad.shape == base_shape and leaf.grad.is_contiguous()
    np.testing.assert_allclose(leaf.grad.numpy(), expected.reshape(base_shape), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(chain=view_chains(allow_expand=False), seed=st.integers(0, 2**16))
def test_writing_through_a_chain_of_views(chain, seed):
    base_shape, steps = chain
    n = int(np.prod(base_shape))
    index_map = _apply(np.arange(n).reshape(base_shape), steps, "numpy")
    base = zero.arange(n, dtype=zero.float64).view(base_shape)
    view = _apply(base, steps, "zero")
    new_values = np.random.default_rng(seed).standard_normal(view.shape)
    shares = view.untyped_storage() is base.untyped_storage()
    view.copy_(zero.tensor(new_values))
    expected = np.arange(n, dtype=np.float64)
    if shares:  # a view: the write lands in the base, at the mapped places
        expected[index_map.reshape(-1)] = new_values.reshape(-1)
    else:  # reshape had to copy: the base is untouched
        assert any(step[0] == "reshape" for step in steps)
    np.testing.assert_array_equal(base.numpy(), expected.reshape(base_shape))
    np.testing.assert_array_equal(view.numpy(), new_values)
