"""The Tensor's operator methods: ``a + b``, ``x.sum(1)``, ``w.T``, ``loss.backward()`` ...

Each method is one line that applies an op. They are written here, beside the
ops, and ``attach_to`` copies them onto ``Tensor`` when ``zero.ops`` loads (as
DeZero's ``setup_variable`` does): the ops import ``Tensor``, so ``Tensor`` cannot
import them, and imports run one way, from here down to the tensor.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..autograd import engine
from ..autograd.op import register_post_accumulate_hook, register_tensor_hook
from ..hooks import RemovableHandle
from ..tensors import creation
from . import (comparison, conversion, elementwise, indexing, inplace, joining, rearrange, reduction, sampling, softmax,
               sorting, views)
from . import matmul as matmul_ops
from .indexing_methods import IndexingMethods
from .linalg_methods import LinalgMethods
from .math_methods import MathMethods
from .reduction_methods import ReductionMethods

if TYPE_CHECKING:
    from ..tensors.tensor import Tensor


def _dim(dim, axis):
    """``dim``, or NumPy's name for it, ``axis`` (not both)."""
    if axis is None:
        return dim
    if dim is not None:
        raise TypeError("pass dim or axis (its NumPy name), not both")
    return axis


def _sizes(args) -> tuple:
    """Accept both x.view(2, 3) and x.view((2, 3))."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


class TensorMethods(MathMethods, ReductionMethods, LinalgMethods, IndexingMethods):
    """Mixed into ``Tensor`` by ``attach_to``; never instantiated on its own. (The mixins it
    inherits hold more methods, by topic: math_methods, reduction_methods, linalg_methods,
    indexing_methods)"""

    __slots__ = ()

    # -- autograd -------------------------------------------------------------------------------
    def backward(self, gradient: Tensor | None = None, retain_graph: bool = False) -> None:
        """Back-propagate from this tensor into the ``.grad`` of the leaves it depends on."""
        engine.backward([self], None if gradient is None else [gradient], retain_graph=retain_graph)

    def register_hook(self, hook) -> RemovableHandle:
        """Call ``hook(grad)`` each time this tensor's gradient is computed; a tensor it
        returns replaces it. Returns a handle whose ``remove()`` takes the hook off."""
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
        """Call ``hook(self)`` on a leaf after each backward has added into its ``.grad``."""
        return register_post_accumulate_hook(self, hook)

    # -- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other):
        return elementwise.Add.apply(self, other)

    def __radd__(self, other):
        return elementwise.Add.apply(other, self)

    def __sub__(self, other):
        return elementwise.Sub.apply(self, other)

    def __rsub__(self, other):
        return elementwise.Sub.apply(other, self)

    def __mul__(self, other):
        return elementwise.Mul.apply(self, other)

    def __rmul__(self, other):
        return elementwise.Mul.apply(other, self)

    def __truediv__(self, other):
        return elementwise.Div.apply(self, other)

    def __rtruediv__(self, other):
        return elementwise.Div.apply(other, self)

    def __pow__(self, other):
        return elementwise.Pow.apply(self, other)

    def __rpow__(self, other):
        return elementwise.Pow.apply(other, self)

    def __neg__(self):
        return elementwise.Neg.apply(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return elementwise.Abs.apply(self)

    def __matmul__(self, other):
        return matmul_ops.matmul(self, other)

    def __rmatmul__(self, other):
        return matmul_ops.matmul(other, self)

    add = __add__
    sub = __sub__
    mul = __mul__
    pow = __pow__
    neg = __neg__
    abs = __abs__
    matmul = __matmul__

    # -- comparisons and logic (bool results, no gradient) -------------------------------------
    def __eq__(self, other):
        return elementwise.Eq.apply(self, other)

    def __ne__(self, other):
        return elementwise.Ne.apply(self, other)

    def __lt__(self, other):
        return elementwise.Lt.apply(self, other)

    def __le__(self, other):
        return elementwise.Le.apply(self, other)

    def __gt__(self, other):
        return elementwise.Gt.apply(self, other)

    def __ge__(self, other):
        return elementwise.Ge.apply(self, other)

    # &, |, ^, ~ are bitwise, as in PyTorch: on bools that is the logic, on integers the bits
    def __and__(self, other):
        return elementwise.BitwiseAnd.apply(self, other)

    def __rand__(self, other):
        return elementwise.BitwiseAnd.apply(other, self)

    def __or__(self, other):
        return elementwise.BitwiseOr.apply(self, other)

    def __ror__(self, other):
        return elementwise.BitwiseOr.apply(other, self)

    def __xor__(self, other):
        return elementwise.BitwiseXor.apply(self, other)

    def __rxor__(self, other):
        return elementwise.BitwiseXor.apply(other, self)

    def __invert__(self):
        return elementwise.BitwiseNot.apply(self)

    def logical_and(self, other):
        return elementwise.LogicalAnd.apply(self, other)

    def logical_or(self, other):
        return elementwise.LogicalOr.apply(self, other)

    def logical_xor(self, other):
        return elementwise.LogicalXor.apply(self, other)

    def logical_not(self):
        return elementwise.LogicalNot.apply(self)

    eq = __eq__
    ne = __ne__
    lt = __lt__
    le = __le__
    gt = __gt__
    ge = __ge__
    bitwise_and = __and__
    bitwise_or = __or__
    bitwise_xor = __xor__
    bitwise_not = __invert__

    # -- elementwise functions ------------------------------------------------------------------
    def exp(self):
        return elementwise.Exp.apply(self)

    def log(self):
        return elementwise.Log.apply(self)

    def sqrt(self):
        return elementwise.Sqrt.apply(self)

    def rsqrt(self):
        return elementwise.Rsqrt.apply(self)

    def sin(self):
        return elementwise.Sin.apply(self)

    def cos(self):
        return elementwise.Cos.apply(self)

    def tanh(self):
        return elementwise.Tanh.apply(self)

    def sigmoid(self):
        return elementwise.Sigmoid.apply(self)

    def relu(self):
        return elementwise.Relu.apply(self)

    def sign(self):
        return elementwise.Sign.apply(self)

    def square(self):
        return elementwise.Mul.apply(self, self)

    def maximum(self, other):
        return elementwise.Maximum.apply(self, other)

    def minimum(self, other):
        return elementwise.Minimum.apply(self, other)

    def clamp(self, min=None, max=None):  # noqa: A002  (PyTorch's names)
        return elementwise.clamp(self, min, max)

    clip = clamp

    def masked_fill(self, mask, value):
        return elementwise.MaskedFill.apply(self, mask, value)

    def where(self, condition, other):
        return elementwise.Where.apply(condition, self, other)

    # -- reductions -----------------------------------------------------------------------------
    # (``axis=`` is accepted for ``dim=``, as PyTorch does for NumPy's habit.)
    def sum(self, dim=None, keepdim=False, dtype=None, *, axis=None):
        return reduction.Sum.apply(self, _dim(dim, axis), keepdim, dtype)

    def mean(self, dim=None, keepdim=False, dtype=None, *, axis=None):
        return reduction.mean(self, _dim(dim, axis), keepdim, dtype)

    def var(self, dim=None, correction=1, keepdim=False, unbiased=None, *, axis=None):
        if unbiased is not None:
            correction = int(unbiased)
        return reduction.Var.apply(self, _dim(dim, axis), correction, keepdim)

    def std(self, dim=None, correction=1, keepdim=False, unbiased=None, *, axis=None):
        if unbiased is not None:
            correction = int(unbiased)
        return reduction.std(self, _dim(dim, axis), correction, keepdim)

    def max(self, dim=None, keepdim=False, *, axis=None):
        return reduction.reduce_max(self, _dim(dim, axis), keepdim)

    def min(self, dim=None, keepdim=False, *, axis=None):
        return reduction.reduce_min(self, _dim(dim, axis), keepdim)

    def amax(self, dim=None, keepdim=False, *, axis=None):
        return reduction.Amax.apply(self, _dim(dim, axis), keepdim)

    def amin(self, dim=None, keepdim=False, *, axis=None):
        return reduction.Amin.apply(self, _dim(dim, axis), keepdim)

    def argmax(self, dim=None, keepdim=False, *, axis=None):
        return reduction.argmax(self, _dim(dim, axis), keepdim)

    def argmin(self, dim=None, keepdim=False, *, axis=None):
        return reduction.argmin(self, _dim(dim, axis), keepdim)

    def logsumexp(self, dim=None, keepdim=False, *, axis=None):
        return reduction.LogSumExp.apply(self, _dim(dim, axis), keepdim)

    def all(self, dim=None, keepdim=False, *, axis=None):
        return reduction.all_true(self, _dim(dim, axis), keepdim)

    def any(self, dim=None, keepdim=False, *, axis=None):
        return reduction.any_true(self, _dim(dim, axis), keepdim)

    def nelement(self):
        return self.numel()

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return comparison.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return comparison.allclose(self, other, rtol, atol, equal_nan)

    def softmax(self, dim, dtype=None):
        return softmax.softmax(self, dim, dtype)

    def log_softmax(self, dim, dtype=None):
        return softmax.log_softmax(self, dim, dtype)

    # -- views ----------------------------------------------------------------------------------
    def view(self, *shape):
        return views.View.apply(self, _sizes(shape))

    def reshape(self, *shape):
        return views.reshape(self, _sizes(shape))

    def view_as(self, other):
        return views.View.apply(self, other.shape)

    def reshape_as(self, other):
        return views.reshape(self, other.shape)

    def transpose(self, dim0, dim1):
        return views.transpose(self, dim0, dim1)

    def permute(self, *dims):
        return views.Permute.apply(self, _sizes(dims))

    @property
    def T(self):
        return views.Permute.apply(self, tuple(reversed(range(self.ndim))))

    @property
    def mT(self):
        return views.transpose(self, -2, -1)

    def t(self):
        if self.ndim > 2:
            raise ValueError(f"t() expects a tensor with at most 2 dimensions, got {self.ndim}; use transpose()")
        return self.T

    def expand(self, *shape):
        return views.Expand.apply(self, _sizes(shape))

    def expand_as(self, other):
        return views.Expand.apply(self, other.shape)

    def broadcast_to(self, shape):
        return views.Expand.apply(self, tuple(shape))

    def squeeze(self, dim=None):
        return views.squeeze(self, dim)

    def unsqueeze(self, dim):
        return views.unsqueeze(self, dim)

    def flatten(self, start_dim=0, end_dim=-1):
        return views.flatten(self, start_dim, end_dim)

    def sort(self, dim=-1, descending=False, stable=False):
        return sorting.sort(self, dim, descending, stable)

    def argsort(self, dim=-1, descending=False, stable=False):
        return sorting.argsort(self, dim, descending, stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002
        return sorting.topk(self, k, dim, largest, sorted)

    def cumsum(self, dim, dtype=None):
        return sorting.cumsum(self, dim, dtype)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return sampling.multinomial(self, num_samples, replacement, generator)

    # -- rearranging (copies) ---------------------------------------------------------------------
    def flip(self, *dims):
        return rearrange.flip(self, _sizes(dims))

    def roll(self, shifts, dims=None):
        return rearrange.roll(self, shifts, dims)

    def repeat(self, *sizes):
        return rearrange.repeat(self, _sizes(sizes))

    def __getitem__(self, key):
        return indexing.getitem(self, key)

    def __setitem__(self, key, value):
        indexing.setitem(self, key, value)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    # -- copies and conversions -----------------------------------------------------------------
    def contiguous(self):
        return self if self.is_contiguous() else conversion.Copy.apply(self)

    def clone(self):
        return conversion.Copy.apply(self)

    def to(self, *args, **kwargs):
        return conversion.to(self, *args, **kwargs)

    def cpu(self):
        return conversion.to(self, "cpu")

    def cuda(self, device=None):
        return conversion.to(self, "cuda" if device is None else device)

    def float(self):
        return conversion.to_dtype(self, "float32")

    def double(self):
        return conversion.to_dtype(self, "float64")

    def half(self):
        return conversion.to_dtype(self, "float16")

    def bfloat16(self):
        return conversion.to_dtype(self, "bfloat16")

    def long(self):
        return conversion.to_dtype(self, "int64")

    def int(self):
        return conversion.to_dtype(self, "int32")

    def bool(self):
        return conversion.to_dtype(self, "bool")

    def type_as(self, other):
        return conversion.to_dtype(self, other.dtype)

    def new_zeros(self, shape):
        return creation.zeros(shape, dtype=self.dtype, device=self.device)

    def new_ones(self, shape):
        return creation.ones(shape, dtype=self.dtype, device=self.device)

    def new_full(self, shape, fill_value):
        return creation.full(shape, fill_value, dtype=self.dtype, device=self.device)

    def new_empty(self, shape):
        return creation.empty(shape, dtype=self.dtype, device=self.device)

    def new_tensor(self, data):
        return creation.tensor(data, dtype=self.dtype, device=self.device)

    # -- joining, splitting, gathering ----------------------------------------------------------
    def split(self, split_size_or_sections, dim=0):
        return joining.split(self, split_size_or_sections, dim)

    def chunk(self, chunks, dim=0):
        return joining.chunk(self, chunks, dim)

    def unbind(self, dim=0):
        return joining.unbind(self, dim)

    def gather(self, dim, index):
        return joining.gather(self, dim, index)

    def index_select(self, dim, index):
        return joining.index_select(self, dim, index)

    def tril(self, diagonal=0):
        return joining.tril(self, diagonal)

    def triu(self, diagonal=0):
        return joining.triu(self, diagonal)

    # -- in-place updates (recorded in the graph when something requires grad) -----------------
    def add_(self, other, alpha=1):
        return inplace.add_(self, other, alpha)

    def sub_(self, other, alpha=1):
        return inplace.add_(self, other, -alpha)

    def mul_(self, other):
        return inplace.mul_(self, other)

    def copy_(self, src):
        return inplace.copy_(self, src)

    def zero_(self):
        return inplace.fill_(self, 0)

    def fill_(self, value):
        return inplace.fill_(self, value)

    def clamp_(self, min=None, max=None):  # noqa: A002
        return inplace.clamp_(self, min, max)

    def normal_(self, mean=0.0, std=1.0, generator=None):
        return inplace.normal_(self, mean, std, generator)

    def uniform_(self, a=0.0, b=1.0, generator=None):
        return inplace.uniform_(self, a, b, generator)

    def masked_fill_(self, mask, value):
        return inplace.masked_fill_(self, mask, value)

    def relu_(self):
        return inplace.relu_(self)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = MathMethods.div_  # (div_ with rounding_mode= is in math_methods)


def attach_to(tensor_class: type) -> None:
    """Give ``tensor_class`` (``Tensor``) every method and property defined above."""
    class_attributes = {"__module__", "__qualname__", "__doc__", "__slots__", "__hash__", "__annotations__"}
    for mixin in reversed(TensorMethods.__mro__[:-1]):  # the mixins first, so that TensorMethods wins
        for name, value in vars(mixin).items():
            if name not in class_attributes:  # (__hash__ is None here, as __eq__ is defined: keep Tensor's)
                setattr(tensor_class, name, value)
