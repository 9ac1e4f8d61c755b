"""PyTorch's other activations: leaky_relu, elu/selu/celu, softplus, softsign, mish, hardswish,
hardsigmoid, hardtanh/relu6, logsigmoid, threshold, tanhshrink, softshrink, hardshrink,
prelu, rrelu, glu, softmin -- and their in-place forms (``F.elu_``, ``F.relu(x, inplace=True)``).

Each activation is one op: forward is one kernel, backward one kernel, both named after it
(``kernels.elu``, ``kernels.elu_backward``; ``backends/array_kernels/activation.py`` has
the formulas, PyTorch's stable forms and its choices at the kinks). ``Activation`` saves the
input and hands the kernels the op's numbers (slopes, bounds); the subclasses only name
their kernels. Families share one kernel pair with different numbers:

    leaky_relu(x, slope)                 LeakyReLU; PReLU (slope: the weight per channel);
                                         RReLU (slope: random per element in training)
    elu(x, alpha, scale, input_scale)    ELU (alpha, 1, 1), SELU (its constants), CELU (alpha, 1, 1/alpha)
    hardtanh(x, min_val, max_val)        Hardtanh, ReLU6 (0, 6)

An in-place form runs the forward kernel into the tensor itself when no graph is recorded,
and otherwise records the op on a snapshot of the old value (``inplace.modify``), so the
gradient is the op's. GLU and softmin are compositions (halves and a sigmoid; softmax of -x).
The functional forms, with PyTorch's signatures, are at the end of the file.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ... import dtypes
from ...autograd.op import Grads, Op
from ...errors import DTypeError, describe
from ...grad_mode import no_grad
from ...random import Generator
from ...tensors.meta import normalize_dim
from ...tensors.tensor import Tensor
from ..elementwise import Relu, Silu
from ..inplace import modify
from ..inplace import relu_ as _relu_in_place
from ..softmax import softmax
from ...autograd import autocast_hook

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _check_float(op: str, x: Tensor) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(x).__name__}")
    if not x._meta.dtype.is_floating_point:
        raise DTypeError(f"{op}: not implemented for {describe(x)} (as in PyTorch); convert it with .float()")


class Activation(Op):
    """f(x; numbers) elementwise: one forward kernel, one backward kernel, the input saved.
    The numbers (``parameters``) are passed to both kernels after x, as the contract lists them."""

    kernel: Callable[[Any], Callable[..., None]] = staticmethod(lambda kernels: kernels.leaky_relu)
    backward_kernel: Callable[[Any], Callable[..., None]] = staticmethod(lambda kernels: kernels.leaky_relu_backward)

    def forward(self, x: Tensor, *parameters: Any) -> Tensor:
        _check_float(self.op_name, x)
        out = Tensor._empty(x._meta.shape, x._meta.dtype, x._meta.device)
        self.kernel(x._meta.device.kernels)(x._array, *parameters, out._array)
        self.parameters = parameters
        self.save_for_backward(x)
        return out

    def backward(self, grad: Tensor) -> Grads:
        (x,) = self.saved_tensors
        grad_in = Tensor._empty(x._meta.shape, x._meta.dtype, x._meta.device)
        self.backward_kernel(x._meta.device.kernels)(grad._array, x._array, *self.parameters, grad_in._array)
        return (grad_in,) + (None,) * len(self.parameters)

    @classmethod
    def in_place(cls, x: Tensor, *parameters: Any) -> Tensor:
        """The activation written into x itself (``F.elu_(x)``), with the op's gradient."""
        _check_float(cls.op_name + "_", x)
        kernels = x._meta.device.kernels
        return modify(x, cls.op_name + "_", (), lambda: cls.kernel(kernels)(x._array, *parameters, x._array),
                      lambda old: cls.apply(old, *parameters))


class LeakyRelu(Activation):
    kernel = staticmethod(lambda kernels: kernels.leaky_relu)
    backward_kernel = staticmethod(lambda kernels: kernels.leaky_relu_backward)


class Hardtanh(Activation):
    kernel = staticmethod(lambda kernels: kernels.hardtanh)
    backward_kernel = staticmethod(lambda kernels: kernels.hardtanh_backward)


class Threshold(Activation):
    kernel = staticmethod(lambda kernels: kernels.threshold)
    backward_kernel = staticmethod(lambda kernels: kernels.threshold_backward)


class Softshrink(Activation):
    kernel = staticmethod(lambda kernels: kernels.softshrink)
    backward_kernel = staticmethod(lambda kernels: kernels.softshrink_backward)


class Hardshrink(Activation):
    kernel = staticmethod(lambda kernels: kernels.hardshrink)
    backward_kernel = staticmethod(lambda kernels: kernels.hardshrink_backward)


class Hardsigmoid(Activation):
    kernel = staticmethod(lambda kernels: kernels.hardsigmoid)
    backward_kernel = staticmethod(lambda kernels: kernels.hardsigmoid_backward)


class Hardswish(Activation):
    kernel = staticmethod(lambda kernels: kernels.hardswish)
    backward_kernel = staticmethod(lambda kernels: kernels.hardswish_backward)


class Elu(Activation):
    kernel = staticmethod(lambda kernels: kernels.elu)
    backward_kernel = staticmethod(lambda kernels: kernels.elu_backward)


class Softplus(Activation):
    kernel = staticmethod(lambda kernels: kernels.softplus)
    backward_kernel = staticmethod(lambda kernels: kernels.softplus_backward)


class Logsigmoid(Activation):
    kernel = staticmethod(lambda kernels: kernels.logsigmoid)
    backward_kernel = staticmethod(lambda kernels: kernels.logsigmoid_backward)


class Mish(Activation):
    kernel = staticmethod(lambda kernels: kernels.mish)
    backward_kernel = staticmethod(lambda kernels: kernels.mish_backward)


class Softsign(Activation):
    kernel = staticmethod(lambda kernels: kernels.softsign)
    backward_kernel = staticmethod(lambda kernels: kernels.softsign_backward)


class Tanhshrink(Activation):
    kernel = staticmethod(lambda kernels: kernels.tanhshrink)
    backward_kernel = staticmethod(lambda kernels: kernels.tanhshrink_backward)


class Prelu(Op):
    """x where x > 0, else weight * x, one weight per channel (dimension 1) or one for all.
    Backward: grad_x = the leaky_relu backward kernel with the weight as slope; grad_weight =
    the sum of grad * x where x <= 0, over every dimension but the channel's."""

    def forward(self, x: Tensor, weight: Tensor) -> Tensor:
        _check_float("prelu", x)
        if not isinstance(weight, Tensor):
            raise TypeError(f"prelu: weight must be a tensor, got {type(weight).__name__}")
        count = weight.numel()
        channels = x.shape[1] if x.ndim >= 2 else 1
        if count != 1 and count != channels:
            raise RuntimeError(f"prelu: mismatch of parameter numbers and input channel size: found parameter "
                               f"numbers = {count} and channel size = {channels} (input {describe(x)})")
        shape = (1, count) + (1,) * (x.ndim - 2) if count != 1 and x.ndim >= 2 else ()
        slope = weight.detach().reshape(shape).to(x.dtype)           # (1, C, 1, ...) or ()
        out = Tensor._empty(x._meta.shape, x._meta.dtype, x._meta.device)
        x._meta.device.kernels.leaky_relu(x._array, slope._array, out._array)
        self.weight_shape, self.weight_dtype = weight.shape, weight.dtype
        self.save_for_backward(x, slope)
        return out

    def backward(self, grad: Tensor) -> Grads:
        x, slope = self.saved_tensors
        grad_x = None
        if self.needs_input_grad[0]:
            grad_x = Tensor._empty(x._meta.shape, x._meta.dtype, x._meta.device)
            x._meta.device.kernels.leaky_relu_backward(grad._array, x._array, slope._array, grad_x._array)
        grad_weight = None
        if self.needs_input_grad[1]:
            negative = (grad * x).masked_fill(x > 0, 0.0)
            dims = tuple(d for d in range(x.ndim) if not (slope.ndim and d == 1))
            grad_weight = negative.sum(dims).reshape(self.weight_shape).to(self.weight_dtype)
        return grad_x, grad_weight


# -- the functional forms (F.leaky_relu ..., and zero.selu, x.hardshrink ...) ------------------------


def _maybe_in_place(op: type[Activation], input: Tensor, inplace: bool, *parameters: Any) -> Tensor:
    return op.in_place(input, *parameters) if inplace else op.apply(input, *parameters)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _relu_in_place(input) if inplace else Relu.apply(input)


def relu_(input: Tensor) -> Tensor:
    return _relu_in_place(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x); in place: computed, then written into the input."""
    if not inplace:
        return Silu.apply(input)
    return modify(input, "silu_", (), lambda: _write_into(input, Silu.apply(input)), lambda old: Silu.apply(old))


def _write_into(target: Tensor, value: Tensor) -> None:
    target._meta.device.kernels.copy(value._array, target._array)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _maybe_in_place(LeakyRelu, input, inplace, float(negative_slope))


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return LeakyRelu.in_place(input, float(negative_slope))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_in_place(Elu, input, inplace, float(alpha), 1.0, 1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return Elu.in_place(input, float(alpha), 1.0, 1.0)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_in_place(Elu, input, inplace, SELU_ALPHA, SELU_SCALE, 1.0)


def selu_(input: Tensor) -> Tensor:
    return Elu.in_place(input, SELU_ALPHA, SELU_SCALE, 1.0)


def _celu_parameters(alpha: float) -> tuple[float, float, float]:
    if alpha == 0:
        raise RuntimeError("celu: ZeroDivisionError: alpha must not be 0 (the input is scaled by 1 / alpha)")
    return float(alpha), 1.0, 1.0 / alpha


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_in_place(Elu, input, inplace, *_celu_parameters(alpha))


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return Elu.in_place(input, *_celu_parameters(alpha))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    if autocast_hook.state.active:
        input, = autocast_hook.cast("softplus", input)
    return Softplus.apply(input, float(beta), float(threshold))


def softsign(input: Tensor) -> Tensor:
    return Softsign.apply(_as_float(input))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_in_place(Mish, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_in_place(Hardswish, input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_in_place(Hardsigmoid, input, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if isinstance(input, Tensor) and not input.dtype.is_floating_point:   # integers: a clamp, as in PyTorch
        with no_grad():
            result = input.clamp(min_val, max_val).to(input.dtype)
        return input.copy_(result) if inplace else result
    return _maybe_in_place(Hardtanh, input, inplace, float(min_val), float(max_val))


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    return Logsigmoid.apply(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    if isinstance(input, Tensor) and not input.dtype.is_floating_point:
        with no_grad():
            result = input.masked_fill(input <= threshold, value)
        return input.copy_(result) if inplace else result
    return _maybe_in_place(Threshold, input, inplace, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, inplace=True)


_threshold = threshold  # (the parameter of threshold_ hides the function's name)


def tanhshrink(input: Tensor) -> Tensor:
    return Tanhshrink.apply(_as_float(input))


def _check_lambd(op: str, lambd: float) -> float:
    if op == "softshrink" and lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}")
    return float(lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return Softshrink.apply(input, _check_lambd("softshrink", lambd))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return Hardshrink.apply(input, _check_lambd("hardshrink", lambd))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    if autocast_hook.state.active:
        input, weight = autocast_hook.cast("prelu", input, weight)
    return Prelu.apply(input, weight)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False, generator: Generator | None = None) -> Tensor:
    """In training, x * a where x <= 0 with a drawn uniformly from [lower, upper] per element
    (the gradient uses the same a); otherwise leaky_relu with the mean slope (lower + upper) / 2."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    _check_float("rrelu", input)
    with no_grad():
        slopes = Tensor._empty(input._meta.shape, input._meta.dtype, input._meta.device)
        slopes.uniform_(lower, upper, generator=generator)
    return _maybe_in_place(LeakyRelu, input, inplace, slopes._array)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator: Generator | None = None) -> Tensor:
    return rrelu(input, lower, upper, training, True, generator)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of input along dim."""
    if not isinstance(input, Tensor) or input.ndim == 0:
        raise RuntimeError(f"glu: does not support scalars (0-d tensors), got {describe(input)}")
    dim = normalize_dim(dim, input.ndim, "glu")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dimension {dim} is size {size} "
                           f"({describe(input)})")
    half = size // 2
    return input.narrow(dim, 0, half) * input.narrow(dim, half, half).sigmoid()


def implicit_dim(op: str, ndim: int) -> int:
    """PyTorch's choice when softmax-like functions get dim=None (deprecated there too)."""
    warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """softmax(-input, dim)."""
    if autocast_hook.state.active and dtype is None:
        input, = autocast_hook.cast("softmin", input)
    if dim is None:
        dim = implicit_dim("softmin", input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return softmax(-input, dim)


def _as_float(x: Tensor) -> Tensor:
    """Integers compute in the default float dtype (softsign, tanhshrink: compositions in PyTorch)."""
    if isinstance(x, Tensor) and not x.dtype.is_floating_point:
        return x.to(dtypes.get_default_dtype())
    return x
