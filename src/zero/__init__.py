"""Zero: a small deep-learning training framework, readable next to its book.

    import zero
    x = zero.tensor([[1.0, 2.0]], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([[2., 4.]])
"""
from __future__ import annotations

from . import dtypes as _dtypes
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .device import Device
from .dtypes import (bool_ as bool, float16, float32, float64, get_default_dtype, int32, int64,  # noqa: A004
                     set_default_dtype, uint8, promote_types, result_type as _result_type)
from .tensor.tensor import Tensor
from . import ops as _ops  # binds the tensor methods  # noqa: E402
from .tensor.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                              linspace, ones, ones_like, rand, rand_like, randint, randn, randn_like,
                              randperm, tensor, zeros, zeros_like)
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .ops.joining import cat, chunk, gather, index_select, split, stack, tril, triu, unbind
from .ops.matmul import matmul
from .ops.reduction import argmax, argmin
from . import autograd, cpu, cuda, errors, profiler  # noqa: F401
from . import nn, optim  # noqa: F401,E402
from . import data  # noqa: F401,E402
from .serialization import load, save  # noqa: E402

__version__ = "0.1.0"

float = float32  # noqa: A001  (PyTorch's aliases)
double = float64
long = int64
half = float16
dtype = _dtypes.DType
device = Device


def result_type(*operands):
    return _result_type(*operands)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


# Functional forms of the tensor methods: zero.exp(x) == x.exp() ...
def _method(name):
    def function(x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)

    function.__name__ = name
    function.__doc__ = f"zero.{name}(x, ...) is x.{name}(...)."
    return function


for _name in ("add", "sub", "mul", "div", "pow", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos",
              "tanh", "sigmoid", "relu", "sign", "square", "maximum", "minimum", "clamp", "clip",
              "masked_fill", "sum", "mean", "var", "std", "max", "min", "amax", "amin", "logsumexp", "all",
              "any", "softmax", "log_softmax", "reshape", "transpose", "permute", "squeeze", "unsqueeze",
              "flatten", "broadcast_to", "clone", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
              "logical_or", "logical_xor", "logical_not", "numel", "t"):
    globals()[_name] = _method(_name)
del _name


def where(condition, input, other):  # noqa: A002  (PyTorch's names)
    from .ops.elementwise import Where

    return Where.apply(condition, input, other)
