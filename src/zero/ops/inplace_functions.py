"""PyTorch's ``torch.<name>_`` functions: ``zero.exp_(x)`` is ``x.exp_()``.

PyTorch exposes most of Tensor's in-place methods at the top level as well. Each one here
is built by one rule from the method in ``tensor_methods``'s table (``function_of``), so the
two cannot differ: same arguments, same result (the input itself, changed), same refusals
(a leaf that requires grad, an integer tensor given a float result). Also here: the Tensor
in-place methods whose out-of-place forms exist but whose in-place twins were missing
(``x.eq_(y)``, ``x.pow_(2)``, ``x.tril_()`` ...) are ``in_place`` entries in that table, and
the in-place view changes (``x.t_()`` ...) are in ``inplace_twins``. Also here: ``zero.fill``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensors.creation import full_like
from ..tensors.tensor import Tensor
from .arguments import Number, fill_value
from .inplace import Overwrite
from .tensor_methods import TensorMethods


def function_of(method_name: str) -> Callable[..., Any]:
    """``zero.<method_name>(input, *args)``: Tensor's method of that name, called on ``input``."""
    method = vars(TensorMethods).get(method_name) or getattr(Tensor, method_name)

    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(f"{method_name}(): argument 'input' must be a Tensor, not {type(input).__name__}")
        return method(input, *args, **kwargs)

    function.__name__ = function.__qualname__ = method_name
    function.__doc__ = f"``input.{method_name}(...)`` as a function (PyTorch's ``torch.{method_name}``)."
    return function


# -- the top-level in-place forms (each the Tensor method of the same name) ---------------------
abs_ = function_of("abs_")
acos_ = function_of("acos_")
arccos_ = function_of("arccos_")
acosh_ = function_of("acosh_")
arccosh_ = function_of("arccosh_")
asin_ = function_of("asin_")
arcsin_ = function_of("arcsin_")
asinh_ = function_of("asinh_")
arcsinh_ = function_of("arcsinh_")
atan_ = function_of("atan_")
arctan_ = function_of("arctan_")
atanh_ = function_of("atanh_")
arctanh_ = function_of("arctanh_")
ceil_ = function_of("ceil_")
clamp_ = function_of("clamp_")
clamp_min_ = function_of("clamp_min_")
clamp_max_ = function_of("clamp_max_")
clip_ = function_of("clip_")
cos_ = function_of("cos_")
cosh_ = function_of("cosh_")
erf_ = function_of("erf_")
erfc_ = function_of("erfc_")
exp_ = function_of("exp_")
exp2_ = function_of("exp2_")
expm1_ = function_of("expm1_")
fix_ = function_of("fix_")
floor_ = function_of("floor_")
frac_ = function_of("frac_")
log_ = function_of("log_")
log10_ = function_of("log10_")
log1p_ = function_of("log1p_")
log2_ = function_of("log2_")
nan_to_num_ = function_of("nan_to_num_")
neg_ = function_of("neg_")
negative_ = function_of("negative_")
reciprocal_ = function_of("reciprocal_")
round_ = function_of("round_")
rsqrt_ = function_of("rsqrt_")
sigmoid_ = function_of("sigmoid_")
sin_ = function_of("sin_")
sinh_ = function_of("sinh_")
sqrt_ = function_of("sqrt_")
square_ = function_of("square_")
tan_ = function_of("tan_")
tanh_ = function_of("tanh_")
trunc_ = function_of("trunc_")
xlogy_ = function_of("xlogy_")
zero_ = function_of("zero_")
deg2rad_ = function_of("deg2rad_")
rad2deg_ = function_of("rad2deg_")
sinc_ = function_of("sinc_")
logit_ = function_of("logit_")
i0_ = function_of("i0_")
ldexp_ = function_of("ldexp_")
gcd_ = function_of("gcd_")
lcm_ = function_of("lcm_")
fill_ = function_of("fill_")
detach_ = function_of("detach_")
index_put_ = function_of("index_put_")
detach = function_of("detach")

TOP_LEVEL_IN_PLACE = tuple(name for name in dir() if name.endswith("_") and not name.startswith("_"))


def fill(input: Tensor, value: Number | Tensor) -> Tensor:
    """A new tensor of ``input``'s shape and dtype, every element ``value`` (a number or a 0-d
    tensor). The gradient goes to ``value`` (when a tensor); ``input`` gets zeros, as in PyTorch."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        new = value.to(input.dtype).expand(input.shape).contiguous()
        if new._storage is value._storage:  # (a 0-d input of the same dtype: still new memory)
            new = new.clone()
    else:
        new = full_like(input, fill_value("fill", value, input.dtype))
    return Overwrite.apply(input, new)
