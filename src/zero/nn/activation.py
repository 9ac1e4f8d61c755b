"""The activation modules (PyTorch's ``torch.nn.modules.activation``): each holds its
numbers, calls its functional form and prints itself as PyTorch does. PReLU is the one with
a parameter (``weight``, one slope per channel or one for all)."""
from __future__ import annotations

import warnings

from ..ops.extra import activations as A
from ..tensors.creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _inplace_repr(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class ReLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return A.relu(x, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class GELU(Module):
    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return A.silu(x, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)


class Sigmoid(Module):
    def forward(self, x):
        return F.sigmoid(x)


class _Softmaxes(Module):
    """Softmax, LogSoftmax, Softmin: a ``dim`` (None: PyTorch's implicit choice, with its warning)."""

    name = "softmax"

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def _dim(self, x) -> int:
        return self.dim if self.dim is not None else A.implicit_dim(self.name, x.ndim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_Softmaxes):
    def forward(self, x):
        return F.softmax(x, self._dim(x))


class LogSoftmax(_Softmaxes):
    name = "log_softmax"

    def forward(self, x):
        return F.log_softmax(x, self._dim(x))


class Softmin(_Softmaxes):
    name = "softmin"

    def forward(self, x):
        return A.softmin(x, self._dim(x))


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W)."""

    def forward(self, x):
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected a 3-D or 4-D input (C, H, W) or (N, C, H, W), got {x.ndim}-D")
        return F.softmax(x, -3)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x):
        return A.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return A.elu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, x):
        return A.celu(x, self.alpha, self.inplace)


class SELU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return A.selu(x, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class GLU(Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return A.glu(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        return A.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    def forward(self, x):
        return A.softsign(x)


class Tanhshrink(Module):
    def forward(self, x):
        return A.tanhshrink(x)


class LogSigmoid(Module):
    def forward(self, x):
        return A.logsigmoid(x)


class Mish(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return A.mish(x, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardswish(Module):
    """(PyTorch prints no ``inplace`` for Hardswish and Hardsigmoid.)"""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return A.hardswish(x, self.inplace)


class Hardsigmoid(Hardswish):
    def forward(self, x):
        return A.hardsigmoid(x, self.inplace)


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None):
        super().__init__()
        if min_value is not None or max_value is not None:
            warnings.warn("keyword argument `min_value` and `max_value` are deprecated, use `min_val` and "
                          "`max_val` instead", DeprecationWarning, stacklevel=2)
            min_val = min_value if min_value is not None else min_val
            max_val = max_value if max_value is not None else max_val
        if not max_val > min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, x):
        return A.hardtanh(x, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, x):
        return A.threshold(x, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class Softshrink(Module):
    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, x):
        return A.softshrink(x, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    def forward(self, x):
        return A.hardshrink(x, self.lambd)


class PReLU(Module):
    """leaky_relu with a learnt slope: ``weight`` (num_parameters,), all ``init`` at first;
    num_parameters is 1 or the number of channels (dimension 1 of the input)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        # PyTorch's attribute; on a PReLU it hides Zero's Module.num_parameters() method
        self.num_parameters = num_parameters  # type: ignore[method-assign, assignment]
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init_.constant_(self.weight, self.init)

    def forward(self, x):
        return A.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


init_ = init   # (PReLU's argument ``init`` hides the module's name inside __init__)


class RReLU(Module):
    """Random leaky ReLU: slopes drawn from [lower, upper] per element in training, their
    mean (lower + upper) / 2 in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, x):
        return A.rrelu(x, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")
