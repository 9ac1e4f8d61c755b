"""Check analytic gradients against central finite differences (in float64).

For a random cotangent v of each output, backward gives vᵀJ (one pass); the
numeric side perturbs each input element by ±eps and measures the change of
Σ v·f. The two must agree within ``atol + rtol * |numeric|``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import AutogradError
from ..grad_mode import no_grad
from ..tensors.creation import from_numpy
from ..tensors.tensor import Tensor
from .engine import backward


class GradcheckError(AutogradError):
    pass


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def gradcheck(fn: Callable[..., Any], inputs: Tensor | Sequence[Any], eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, seed: int = 0, raise_exception: bool = True) -> bool:
    inputs = _as_tuple(inputs)
    checked = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise GradcheckError("gradcheck: no input requires grad")
    for x in checked:
        if x.dtype.name != "float64":
            raise GradcheckError(f"gradcheck: inputs must be float64 for finite differences to be "
                                 f"meaningful, got {x.dtype}")
        if any(st == 0 and n > 1 for st, n in zip(x.stride(), x.shape)):
            raise GradcheckError("gradcheck: an input with stride 0 (expanded) shares elements; pass a "
                                 "contiguous leaf and expand inside fn")

    outputs = [o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor) and o.requires_grad]
    if not outputs:
        raise GradcheckError("gradcheck: fn's outputs do not depend on the inputs that require grad")
    rng = np.random.default_rng(seed)
    cotangents = [rng.standard_normal(o.shape) for o in outputs]
    seeds = [from_numpy(v.astype(o.dtype.numpy)).to(o.device) for v, o in zip(cotangents, outputs)]
    analytic = backward(outputs, seeds, inputs=checked)

    def projected() -> float:
        with no_grad():
            values = [o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor) and o.dtype.is_floating_point]
        return sum(float(np.sum(v * o._host_array())) for v, o in zip(cotangents, values[:len(outputs)]))

    for x, analytic_grad in zip(checked, analytic):
        array = x._array
        numeric = np.zeros(x.shape)
        for index in np.ndindex(*x.shape):
            original = array[index]
            array[index] = original + eps
            plus = projected()
            array[index] = original - eps
            minus = projected()
            array[index] = original
            numeric[index] = (plus - minus) / (2 * eps)
        got = np.zeros(x.shape) if analytic_grad is None else analytic_grad._host_array()
        bad = ~(np.abs(got - numeric) <= atol + rtol * np.abs(numeric))  # NaN counts as a mismatch
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            position = next(i for i, t in enumerate(inputs) if t is x)  # `is`: == on tensors is elementwise
            message = (f"gradcheck: gradient of input {position} "
                       f"({x.dtype.name}{list(x.shape)}) differs at index {list(where)}: analytic "
                       f"{got[where]:.6g}, numeric {numeric[where]:.6g} ({int(bad.sum())} of "
                       f"{bad.size} elements differ)")
            if raise_exception:
                raise GradcheckError(message)
            return False
    return True
