"""PyTorch's other activations over ``xp`` (``numpy`` or ``cupy``), forward and backward.

Each forward ``name(xp, x, *parameters, out)`` writes f(x) into out, and each backward
``name_backward(xp, grad, x, *parameters, grad_in)`` writes grad * f'(x) into grad_in, with
PyTorch's choices where f is not differentiable (which side of a kink counts) and its
stable forms (softplus above ``threshold`` is x; logsigmoid is min(x, 0) - log1p(e^-|x|)).
Every kernel computes its whole result before it writes out, so ``out`` may be ``x`` itself
(the in-place activations: ``F.elu_``, ``x.relu_()``...). The result is cast into out.
"""
from __future__ import annotations

from types import ModuleType

from ..kernel_contract import Array, Operand
from ._quiet import quiet


def _write(xp: ModuleType, out: Array, value: Array) -> None:
    xp.copyto(out, value, casting="unsafe")


def _leaky(xp: ModuleType, x: Array, slope: Operand) -> Array:
    with quiet(xp):                                   # (inf * 0 is NaN silently, as in PyTorch)
        return x * slope


def _zero(xp: ModuleType, like: Array) -> Array:
    return xp.zeros((), like.dtype)


# -- piecewise linear ---------------------------------------------------------------------------


def leaky_relu(xp: ModuleType, x: Array, slope: Operand, out: Array) -> None:
    """x where x > 0, else slope * x; ``slope``: a number, or an array broadcasting to x
    (PReLU's weight per channel, RReLU's random slopes)."""
    _write(xp, out, xp.where(x > 0, x, _leaky(xp, x, slope)))


def leaky_relu_backward(xp: ModuleType, grad: Array, x: Array, slope: Operand, grad_in: Array) -> None:
    _write(xp, grad_in, xp.where(x > 0, grad, _leaky(xp, grad, slope)))


def hardtanh(xp: ModuleType, x: Array, min_val: float, max_val: float, out: Array) -> None:
    """x clamped to [min_val, max_val] (NaN stays NaN); relu6 is hardtanh(x, 0, 6)."""
    _write(xp, out, xp.minimum(xp.maximum(x, min_val), max_val))


def hardtanh_backward(xp: ModuleType, grad: Array, x: Array, min_val: float, max_val: float,
                      grad_in: Array) -> None:
    """grad strictly inside (min_val, max_val), 0 at and beyond the corners."""
    _write(xp, grad_in, xp.where((x <= min_val) | (x >= max_val), _zero(xp, grad), grad))


def threshold(xp: ModuleType, x: Array, threshold: float, value: float, out: Array) -> None:
    """value where x <= threshold, else x."""
    _write(xp, out, xp.where(x <= threshold, xp.asarray(value, dtype=out.dtype), x))


def threshold_backward(xp: ModuleType, grad: Array, x: Array, threshold: float, value: float,
                       grad_in: Array) -> None:
    _write(xp, grad_in, xp.where(x <= threshold, _zero(xp, grad), grad))


def softshrink(xp: ModuleType, x: Array, lambd: float, out: Array) -> None:
    """x - lambd above lambd, x + lambd below -lambd, 0 between (x * 0: NaN stays NaN)."""
    with quiet(xp):
        _write(xp, out, xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, x * 0)))


def softshrink_backward(xp: ModuleType, grad: Array, x: Array, lambd: float, grad_in: Array) -> None:
    _write(xp, grad_in, xp.where((x >= -lambd) & (x <= lambd), _zero(xp, grad), grad))


def hardshrink(xp: ModuleType, x: Array, lambd: float, out: Array) -> None:
    """0 in [-lambd, lambd], else x."""
    _write(xp, out, xp.where((x >= -lambd) & (x <= lambd), _zero(xp, x), x))


def hardshrink_backward(xp: ModuleType, grad: Array, x: Array, lambd: float, grad_in: Array) -> None:
    _write(xp, grad_in, xp.where((x >= -lambd) & (x <= lambd), _zero(xp, grad), grad))


def hardsigmoid(xp: ModuleType, x: Array, out: Array) -> None:
    """relu6(x + 3) / 6."""
    _write(xp, out, xp.minimum(xp.maximum(x + 3, 0), 6) / 6)


ONE_SIXTH_IN_FLOAT32 = 0.1666666716337204    # float32(1/6): PyTorch's slope, in every dtype


def hardsigmoid_backward(xp: ModuleType, grad: Array, x: Array, grad_in: Array) -> None:
    """grad / 6 strictly between -3 and 3 (times 1/6 rounded to float32, as PyTorch does), else 0."""
    _write(xp, grad_in, xp.where((x > -3) & (x < 3), grad * ONE_SIXTH_IN_FLOAT32, _zero(xp, grad)))


def hardswish(xp: ModuleType, x: Array, out: Array) -> None:
    """x * relu6(x + 3) / 6."""
    with quiet(xp):
        _write(xp, out, x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6)


def hardswish_backward(xp: ModuleType, grad: Array, x: Array, grad_in: Array) -> None:
    """0 up to -3, grad * (x / 3 + 1/2) strictly between -3 and 3, grad from 3 on."""
    with quiet(xp):
        _write(xp, grad_in, xp.where(x <= -3, _zero(xp, grad), xp.where(x < 3, grad * (x / 3 + 0.5), grad)))


# -- exponential ----------------------------------------------------------------------------------


def elu(xp: ModuleType, x: Array, alpha: float, scale: float, input_scale: float, out: Array) -> None:
    """scale * x where x > 0, else scale * alpha * (exp(input_scale * x) - 1): ELU (1, 1),
    SELU (its two constants, 1) and CELU (1, 1 / alpha)."""
    with quiet(xp):
        negative = xp.expm1(x * input_scale) * (alpha * scale)
        _write(xp, out, xp.where(x > 0, x * scale, negative))


def elu_backward(xp: ModuleType, grad: Array, x: Array, alpha: float, scale: float, input_scale: float,
                 grad_in: Array) -> None:
    with quiet(xp):
        negative = grad * xp.exp(x * input_scale) * (input_scale * scale * alpha)
        _write(xp, grad_in, xp.where(x > 0, grad * scale, negative))


def softplus(xp: ModuleType, x: Array, beta: float, threshold: float, out: Array) -> None:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    with quiet(xp):
        scaled = x * beta
        _write(xp, out, xp.where(scaled > threshold, x, xp.log1p(xp.exp(scaled)) / beta))


def softplus_backward(xp: ModuleType, grad: Array, x: Array, beta: float, threshold: float,
                      grad_in: Array) -> None:
    """grad * sigmoid(beta x), grad itself where beta x > threshold."""
    with quiet(xp):
        scaled = x * beta
        z = xp.exp(scaled)
        _write(xp, grad_in, xp.where(scaled > threshold, grad, grad * z / (z + 1)))


def logsigmoid(xp: ModuleType, x: Array, out: Array) -> None:
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable at both ends."""
    with quiet(xp):
        _write(xp, out, xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))))


def logsigmoid_backward(xp: ModuleType, grad: Array, x: Array, grad_in: Array) -> None:
    """grad * sigmoid(-x), from z = exp(-|x|): 1 / (1 + z) below 0, z / (1 + z) above."""
    with quiet(xp):
        z = xp.exp(-xp.abs(x))
        _write(xp, grad_in, grad * xp.where(x < 0, 1, z) / (1 + z))


def mish(xp: ModuleType, x: Array, out: Array) -> None:
    """x * tanh(softplus(x))."""
    with quiet(xp):
        _write(xp, out, x * xp.tanh(xp.log1p(xp.exp(x))))


def mish_backward(xp: ModuleType, grad: Array, x: Array, grad_in: Array) -> None:
    """grad * (tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)), sp = softplus(x)."""
    with quiet(xp):
        t = xp.tanh(xp.log1p(xp.exp(x)))
        sigmoid = 1 / (1 + xp.exp(-x))
        _write(xp, grad_in, grad * (t + x * sigmoid * (1 - t * t)))


# -- rational and hyperbolic ------------------------------------------------------------------------


def softsign(xp: ModuleType, x: Array, out: Array) -> None:
    """x / (1 + |x|)."""
    with quiet(xp):
        _write(xp, out, x / (1 + xp.abs(x)))


def softsign_backward(xp: ModuleType, grad: Array, x: Array, grad_in: Array) -> None:
    with quiet(xp):
        denominator = 1 + xp.abs(x)
        _write(xp, grad_in, grad / (denominator * denominator))


def tanhshrink(xp: ModuleType, x: Array, out: Array) -> None:
    """x - tanh(x)."""
    with quiet(xp):
        _write(xp, out, x - xp.tanh(x))


def tanhshrink_backward(xp: ModuleType, grad: Array, x: Array, grad_in: Array) -> None:
    t = xp.tanh(x)
    _write(xp, grad_in, grad * t * t)
