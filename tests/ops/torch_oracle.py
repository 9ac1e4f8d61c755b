"""PyTorch as an oracle: run the same function in Zero and in PyTorch on the same inputs and
compare what comes out -- the values (NaN where PyTorch has NaN), the result dtypes, the
errors (Zero must refuse what PyTorch refuses) and the gradients of the float inputs.

    check_against_torch(lambda lib, a, b: lib.atan2(a, b), [array_a, array_b])

The function receives the library (``zero`` or ``torch``) and the inputs converted for it:
NumPy arrays become tensors of their dtype, anything else is passed as it is. Tests that
use this skip when PyTorch is not installed (``pytest.importorskip("torch")``).
"""
from __future__ import annotations

import numpy as np
import pytest

import zero

TOLERANCE = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 2e-6, "float64": 1e-12}


def _zero_input(v, requires_grad):
    if isinstance(v, np.ndarray):
        return zero.tensor(v, requires_grad=requires_grad and v.dtype.kind == "f")
    return v


def _torch_input(torch, v, requires_grad):
    if isinstance(v, np.ndarray):
        return torch.tensor(v, requires_grad=requires_grad and v.dtype.kind == "f")
    return v


def _outputs(result):
    """The tensors of a result, nested tuples (namedtuples, as_tuple=True ...) flattened."""
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in _outputs(item)]
    return [result]


def _as_numpy(t):
    if hasattr(t, "detach"):
        t = t.detach()
    if type(t).__module__.startswith("torch"):
        return t.float().numpy() if str(t.dtype) == "torch.bfloat16" else t.numpy()
    return np.asarray(t.cpu()).astype(np.float32) if t.dtype is zero.bfloat16 else t.cpu().numpy()


def assert_same_values(got, want, dtype_name: str, context: str, rtol=None, atol=None) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{context}: shape {got.shape}, PyTorch {want.shape}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=context)
        return
    tolerance = TOLERANCE.get(dtype_name, 1e-6) if rtol is None else rtol
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tolerance,
                               atol=tolerance if atol is None else atol, equal_nan=True, err_msg=context)


def check_against_torch(fn, inputs, *, grad=True, rtol=None, atol=None, context="", seed=0, extends=False):
    """Compare ``fn(zero, *inputs)`` with ``fn(torch, *inputs)`` (see the module docstring).
    ``extends``: where PyTorch refuses the inputs, Zero may compute (a documented superset:
    hypot of integers, a Python number for atan2's other). Returns Zero's outputs, or a
    note when PyTorch refused them."""
    torch = pytest.importorskip("torch")
    try:
        want = _outputs(fn(torch, *[_torch_input(torch, v, False) for v in inputs]))
    except (RuntimeError, TypeError, ValueError, NotImplementedError, IndexError) as error:
        if extends:
            return f"PyTorch refused ({type(error).__name__})"
        with pytest.raises(Exception):  # noqa: B017  (PyTorch's error class is not Zero's)
            fn(zero, *[_zero_input(v, False) for v in inputs])
        return f"both refused ({type(error).__name__})"
    got = _outputs(fn(zero, *[_zero_input(v, False) for v in inputs]))
    assert len(got) == len(want), f"{context}: {len(got)} outputs, PyTorch {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        where = f"{context} output {k}"
        if not hasattr(w, "dtype"):  # a Python value (an int, a bool)
            assert g == w, f"{where}: {g!r}, PyTorch {w!r}"
            continue
        torch_dtype = str(w.dtype).replace("torch.", "")
        assert g.dtype.name == torch_dtype, f"{where}: dtype {g.dtype.name}, PyTorch {torch_dtype}"
        assert_same_values(_as_numpy(g), _as_numpy(w), torch_dtype, where, rtol, atol)
    floats = [i for i, v in enumerate(inputs) if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    if grad and floats:
        _check_gradients(torch, fn, inputs, floats, context, seed, rtol, atol)
    return got


def _check_gradients(torch, fn, inputs, floats, context, seed, rtol, atol):
    zero_inputs = [_zero_input(v, True) for v in inputs]
    torch_inputs = [_torch_input(torch, v, True) for v in inputs]
    zero_out = [o for o in _outputs(fn(zero, *zero_inputs)) if getattr(o, "requires_grad", False)]
    torch_out = [o for o in _outputs(fn(torch, *torch_inputs)) if getattr(o, "requires_grad", False)]
    assert len(zero_out) == len(torch_out), f"{context}: {len(zero_out)} differentiable outputs, " \
                                            f"PyTorch {len(torch_out)}"
    if not torch_out:
        return
    rng = np.random.default_rng(seed)
    cotangents = [rng.standard_normal(tuple(o.shape)) for o in torch_out]
    sum(((o * zero.tensor(c, dtype=o.dtype)).sum() for o, c in zip(zero_out, cotangents)),
        start=zero.tensor(0.0, dtype=zero_out[0].dtype)).backward()
    try:
        sum((o * torch.tensor(c, dtype=o.dtype)).sum() for o, c in zip(torch_out, cotangents)).backward()
    except (NotImplementedError, RuntimeError) as error:  # PyTorch has no derivative (acosh_, floor_divide)
        assert "derivative" in str(error), f"{context}: PyTorch's backward failed: {error}"
        return
    for i in floats:
        t, z = torch_inputs[i], zero_inputs[i]
        want = np.zeros(t.shape) if t.grad is None else t.grad.numpy(force=True)
        got = np.zeros(z.shape) if z.grad is None else z.grad.numpy()
        dtype_name = str(t.dtype).replace("torch.", "")
        assert_same_values(got, want, dtype_name, f"{context} gradient of input {i}", rtol, atol)
