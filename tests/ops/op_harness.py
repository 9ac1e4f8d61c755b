"""The op harness: one helper that checks an op forward and backward on every layout.

    check_op(zero_fn, numpy_fn, shapes)

``shapes`` lists the op's tensor inputs: a tuple is the shape of a random float
input; a NumPy array is a fixed input (indices, masks) passed unchanged. For each
*layout* the float inputs are made as contiguous float64 leaves and turned, inside
the checked function, into a tensor of the requested shape:

    contiguous       the leaf itself
    transposed       a leaf of the reversed shape, permuted back (strides reversed)
    sliced           a leaf twice as wide in the last dim, read as [..., 1::2] (step 2, offset 1)
    expanded         a leaf with size 1 in its first dimension of size > 1, expanded (stride 0)
    broadcast        inputs of smaller shapes that broadcast against each other
    broadcast_rank   later inputs lose their leading dimension (rank broadcasting)

The forward is compared with ``numpy_fn`` (evaluated in float64 on the same values)
in float32 and float64; the backward with ``zero.autograd.gradcheck`` in float64.

``ZERO_TEST_DEVICE=cuda`` (scripts/gpu-check.sh on a GPU machine) makes every tensor on
that device instead: the forward is compared with NumPy as above, and the float64
gradients with the CPU's analytic ones (which the CPU run checks with gradcheck).
"""
from __future__ import annotations

import os

import numpy as np

import zero
from zero.autograd import gradcheck

DEVICE = os.environ.get("ZERO_TEST_DEVICE", "cpu")

FLOAT_DTYPES = (zero.float32, zero.float64)
TOLERANCE = {zero.float32: dict(rtol=2e-5, atol=2e-5), zero.float64: dict(rtol=1e-9, atol=1e-10)}


# -- layouts: how a leaf of one shape becomes an input of the requested shape ---------------


class Layout:
    name = ""

    def leaf_shape(self, shape: tuple):
        """The leaf's shape, or None when the layout does not apply to ``shape``."""
        raise NotImplementedError

    def to_zero(self, leaf, shape):
        raise NotImplementedError

    def to_numpy(self, leaf, shape):
        raise NotImplementedError


class Contiguous(Layout):
    name = "contiguous"

    def leaf_shape(self, shape):
        return shape

    def to_zero(self, leaf, shape):
        return leaf

    def to_numpy(self, leaf, shape):
        return leaf


class Transposed(Layout):
    """Reversed shape, permuted back: every stride is reversed (not contiguous for ndim >= 2)."""

    name = "transposed"

    def leaf_shape(self, shape):
        return tuple(reversed(shape)) if sum(s > 1 for s in shape) >= 2 else None

    def to_zero(self, leaf, shape):
        return leaf.permute(*reversed(range(len(shape))))

    def to_numpy(self, leaf, shape):
        return np.transpose(leaf)


class Sliced(Layout):
    name = "sliced"

    def leaf_shape(self, shape):
        return shape[:-1] + (2 * shape[-1] + 1,) if shape else None

    def to_zero(self, leaf, shape):
        return leaf[..., 1::2]

    def to_numpy(self, leaf, shape):
        return leaf[..., 1::2]


class Expanded(Layout):
    name = "expanded"

    def _dim(self, shape):
        return next((d for d, s in enumerate(shape) if s > 1), None)

    def leaf_shape(self, shape):
        d = self._dim(shape)
        return None if d is None else shape[:d] + (1,) + shape[d + 1:]

    def to_zero(self, leaf, shape):
        return leaf.expand(*shape)

    def to_numpy(self, leaf, shape):
        return np.broadcast_to(leaf, shape)


CONTIGUOUS, TRANSPOSED, SLICED, EXPANDED = Contiguous(), Transposed(), Sliced(), Expanded()
STRIDED_LAYOUTS = (CONTIGUOUS, TRANSPOSED, SLICED, EXPANDED)


def broadcast_variants(shapes: list) -> dict:
    """Smaller shapes for the same op that broadcast back to the full result.

    broadcast:      input i keeps dimension d only when (i + d) is odd, else size 1:
                    (3, 4), (3, 4) -> (1, 4), (3, 1)
    broadcast_rank: every input after the first loses its leading dimension:
                    (3, 4), (3, 4) -> (3, 4), (4,)
    """
    variants = {}
    float_positions = [i for i, s in enumerate(shapes) if isinstance(s, tuple)]
    if len(float_positions) < 2 or any(not shapes[i] for i in float_positions):
        return variants
    mutual = list(shapes)
    for k, i in enumerate(float_positions):
        mutual[i] = tuple(1 if (k + d) % 2 == 0 else n for d, n in enumerate(shapes[i]))
    variants["broadcast"] = mutual
    rank = list(shapes)
    for i in float_positions[1:]:
        rank[i] = shapes[i][1:]
    variants["broadcast_rank"] = rank
    return variants


# -- the helper -------------------------------------------------------------------------------


def _random_values(rng, shape, low, high):
    return rng.uniform(low, high, size=shape)


def _to_numpy_outputs(result):
    if isinstance(result, (tuple, list)):
        return [np.asarray(r) for r in result]
    return [np.asarray(result)]


def _zero_outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _expected_dtype(ref: np.ndarray, dtype):
    if ref.dtype == np.bool_:
        return zero.bool
    if ref.dtype.kind in "iu":
        return zero.int64
    return dtype


def check_op(zero_fn, numpy_fn, shapes, *, low=-2.0, high=2.0, grad=True, layouts=STRIDED_LAYOUTS,
             broadcast=True, dtypes=FLOAT_DTYPES, rtol=None, atol=None, grad_atol=1e-5, grad_rtol=1e-3,
             seed=0, out_dtype=None):
    """Check ``zero_fn`` against ``numpy_fn`` on every layout (see the module docstring).

    ``low``/``high``: range of the random inputs. ``grad=False``: the op is not
    differentiable -- its output must not require grad. ``broadcast``: also run the
    broadcast layouts (elementwise ops with several tensor inputs). ``out_dtype``: the
    expected result dtype when it is not the input's (bool and int results are inferred).
    Returns the number of (layout, dtype) cases checked, so a caller can assert it ran.
    """
    rng = np.random.default_rng(seed)
    cases = [(layout.name, [layout if isinstance(s, tuple) else None for s in shapes], list(shapes))
             for layout in layouts]
    if broadcast:
        for name, variant in broadcast_variants(list(shapes)).items():
            cases.append((name, [CONTIGUOUS if isinstance(s, tuple) else None for s in variant], variant))
    checked = 0
    for name, case_layouts, case_shapes in cases:
        leaf_shapes = [lay.leaf_shape(s) if lay is not None else None
                       for lay, s in zip(case_layouts, case_shapes)]
        if any(lay is not None and ls is None for lay, ls in zip(case_layouts, leaf_shapes)):
            continue  # the layout does not apply (e.g. transposing a vector)
        leaves = [_random_values(rng, ls, low, high) if lay is not None else s
                  for lay, ls, s in zip(case_layouts, leaf_shapes, case_shapes)]

        def numpy_inputs(values):
            return [lay.to_numpy(v, s) if lay is not None else v
                    for lay, v, s in zip(case_layouts, values, case_shapes)]

        def zero_function(*tensors):
            inputs = [lay.to_zero(t, s) if lay is not None else t
                      for lay, t, s in zip(case_layouts, tensors, case_shapes)]
            return zero_fn(*inputs)

        for dtype in dtypes:
            cast = [v.astype(dtype.numpy) if lay is not None else v for lay, v in zip(case_layouts, leaves)]
            expected = _to_numpy_outputs(numpy_fn(*[np.asarray(v, dtype=np.float64) if lay is not None else v
                                                    for lay, v in zip(case_layouts, numpy_inputs(cast))]))
            tensors = [zero.tensor(v, device=DEVICE) if isinstance(v, np.ndarray) else v for v in cast]
            got = _zero_outputs(zero_function(*tensors))
            assert len(got) == len(expected), f"[{name}, {dtype}] {len(got)} outputs, expected {len(expected)}"
            tolerance = dict(TOLERANCE[dtype])
            tolerance.update({k: v for k, v in (("rtol", rtol), ("atol", atol)) if v is not None})
            for k, (g, e) in enumerate(zip(got, expected)):
                context = f"[{name}, {dtype}, output {k}]"
                assert isinstance(g, zero.Tensor), f"{context} expected a tensor, got {type(g).__name__}"
                assert g.shape == e.shape, f"{context} shape {g.shape}, expected {e.shape}"
                want_dtype = out_dtype if out_dtype is not None else _expected_dtype(e, dtype)
                assert g.dtype is want_dtype, f"{context} dtype {g.dtype}, expected {want_dtype}"
                if e.dtype.kind in "biu":
                    np.testing.assert_array_equal(g.cpu().numpy(), e, err_msg=context)
                else:
                    np.testing.assert_allclose(g.cpu().numpy().astype(np.float64), e, err_msg=context, **tolerance)
            checked += 1

        leaves64 = [zero.tensor(v, dtype=zero.float64, requires_grad=True, device=DEVICE) if lay is not None
                    else (zero.tensor(v, device=DEVICE) if isinstance(v, np.ndarray) else v)
                    for lay, v in zip(case_layouts, leaves)]
        if grad and DEVICE == "cpu":
            gradcheck(zero_function, leaves64, atol=grad_atol, rtol=grad_rtol)
        elif grad:
            _check_grads_match_cpu(zero_function, leaves64, f"[{name}]")
        else:
            for out in _zero_outputs(zero_function(*leaves64)):
                assert not out.requires_grad and out.grad_fn is None, \
                    f"[{name}] a non-differentiable op recorded a graph"
    assert checked, "no layout applied: the harness checked nothing"
    return checked


def on_device_of(x, values) -> zero.Tensor:
    """A test's fixed values (a mask, indices, targets) as a tensor on ``x``'s device: with
    ``ZERO_TEST_DEVICE=cuda`` the harness puts the inputs on the GPU."""
    return zero.tensor(values, device=x.device)


def _check_grads_match_cpu(fn, leaves, context: str) -> None:
    """On another device: the float64 gradients equal the CPU's for the same cotangents."""
    copies = [t.detach().cpu().requires_grad_(t.requires_grad) if isinstance(t, zero.Tensor) else t for t in leaves]
    grads = []
    for inputs in (leaves, copies):
        outputs = [o for o in _zero_outputs(fn(*inputs)) if o.requires_grad]
        rng = np.random.default_rng(1)
        total = sum((o * zero.tensor(rng.standard_normal(o.shape), device=o.device)).sum() for o in outputs)
        total.backward()
        grads.append([None if t.grad is None else t.grad.cpu().numpy()
                      for t in inputs if isinstance(t, zero.Tensor) and t.requires_grad])
    for k, (got, want) in enumerate(zip(*grads)):
        if got is None or want is None:  # an input with no path to the outputs (where's condition)
            assert got is None and want is None, f"{context} input {k}: a gradient on one device only"
        else:
            np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9, err_msg=f"{context} gradient of input {k}")
