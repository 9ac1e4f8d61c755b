"""The kernel contract: every kernel an op may call on ``device.kernels``, with its signature.

Each device offers all of these names, with these parameters, through one explicit table:

    zero.backends.cpu.kernels     NumPy, Numba loops, the CPU pool's threads (``cpu/parallel.py``)
    zero.backends.cuda.kernels    CuPy, cuBLAS and Triton (built when the first CUDA tensor is made)

Many entries of both tables are the same function of ``zero.backends.array_kernels``, bound
to the device's array module (``numpy`` or ``cupy``); the others are a device's own.
``differences(table)`` (below) says where a table departs from the contract: each has
exactly these names, each with these parameter names, kinds and defaults
(``tests/backends/test_kernel_contract.py`` and ``tests/backends/cuda/test_kernel_tables.py``).

A kernel takes arrays (``Array``: NumPy arrays on the CPU, CuPy arrays on CUDA -- views of
tensor storage, any strides unless a line says otherwise) and Python numbers, writes its
result into the ``out`` array (or the arrays named like outputs) it is given, and returns
nothing, unless its line says what it returns (the searches and counts, whose size depends
on the values). It knows nothing of tensors or autograd; it casts into the output's dtype.
"Rows" are the product of the leading dimensions, the op having moved the reduced one last.
An optional array passed as ``None`` (a bias, a gradient not wanted) is not used or not
computed. On CUDA a kernel returns before the GPU has run it.
"""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Protocol, TypeAlias

import numpy as np

# A NumPy array, or on CUDA a CuPy array (CuPy has no type stubs: mypy sees one as Any, which
# fits wherever an Array is asked for).
Array: TypeAlias = np.ndarray
Scalar: TypeAlias = "bool | int | float | np.generic"
Operand: TypeAlias = "Array | bool | int | float | np.generic"   # an array, or a number broadcast
Axes: TypeAlias = "tuple[int, ...]"
Key: TypeAlias = Any       # an indexing key: a tuple of ints, slices, None, Ellipsis and index arrays


class Kernels(Protocol):
    """What ``device.kernels`` offers (the two tables: ``zero.backends.cpu.kernels``,
    ``zero.backends.cuda.kernels``)."""

    # -- fills, arithmetic, comparisons, logic (broadcasting; the result cast into out) ----------
    def fill(self, out: Array, value: Scalar) -> None:
        """out[...] = value."""
    def copy(self, src: Operand, out: Array) -> None:
        """out = src, broadcast and cast (the book's strided copy; CUDA uploads a host array)."""
    def add(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a + b."""
    def sub(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a - b."""
    def mul(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a * b."""
    def div(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a / b (true division; x / 0 is inf or nan, silently, as in PyTorch)."""
    def pow(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a ** b."""
    def maximum(self, a: Operand, b: Operand, out: Array) -> None:
        """out = the larger of a and b (NaN if either is)."""
    def minimum(self, a: Operand, b: Operand, out: Array) -> None:
        """out = the smaller of a and b (NaN if either is)."""
    def fmax(self, a: Operand, b: Operand, out: Array) -> None:
        """out = the larger of a and b, a NaN ignored when the other is not."""
    def fmin(self, a: Operand, b: Operand, out: Array) -> None:
        """out = the smaller of a and b, a NaN ignored when the other is not."""
    def eq(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a == b."""
    def ne(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a != b."""
    def lt(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a < b."""
    def le(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a <= b."""
    def gt(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a > b."""
    def ge(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a >= b."""
    def logical_and(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a and b, elementwise (nonzero is true)."""
    def logical_or(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a or b, elementwise."""
    def logical_xor(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a xor b, elementwise."""
    def bitwise_and(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a & b (integers bit by bit, booleans as logic)."""
    def bitwise_or(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a | b."""
    def bitwise_xor(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a ^ b."""
    def arctan2(self, a: Operand, b: Operand, out: Array) -> None:
        """out = the angle of the point (b, a)."""
    def hypot(self, a: Operand, b: Operand, out: Array) -> None:
        """out = sqrt(a² + b²) without overflow on the way."""
    def logaddexp(self, a: Operand, b: Operand, out: Array) -> None:
        """out = log(exp(a) + exp(b))."""
    def floor_divide(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a // b, Python's rounding (-7 // 2 == -4)."""
    def truncate_divide(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a / b rounded toward zero (integers exactly)."""
    def remainder(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a % b with the divisor's sign (-7 % 2 == 1)."""
    def fmod(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a % b with the dividend's sign (fmod(-7, 2) == -1)."""
    def xlogy(self, x: Operand, y: Operand, out: Array) -> None:
        """out = x * log(y), 0 where x == 0 unless y is NaN."""
    def lerp(self, start: Operand, end: Operand, weight: Operand, out: Array) -> None:
        """out = start + weight (end - start), exact at weight 1 (PyTorch's two-sided formula)."""
    def addcmul(self, x: Operand, tensor1: Operand, tensor2: Operand, value: Scalar, out: Array) -> None:
        """out = x + value * tensor1 * tensor2."""
    def addcdiv(self, x: Operand, tensor1: Operand, tensor2: Operand, value: Scalar, out: Array) -> None:
        """out = x + value * tensor1 / tensor2."""
    def any_zero(self, x: Array) -> bool:
        """Whether x holds a 0 (integer division checks its divisor; the host waits on CUDA)."""
    def where(self, condition: Array, a: Operand, b: Operand, out: Array) -> None:
        """out = a where condition else b."""
    def clamp(self, x: Array, low: Scalar | None, high: Scalar | None, out: Array) -> None:
        """out = min(max(x, low), high), either bound None: NumPy's clip cast into out."""

    # -- unary math (computed in out's dtype) ---------------------------------------------------
    def neg(self, x: Array, out: Array) -> None:
        """out = -x."""
    def abs(self, x: Array, out: Array) -> None:
        """out = |x|."""
    def sign(self, x: Array, out: Array) -> None:
        """out = -1, 0 or 1; 0 for NaN, as PyTorch gives it."""
    def bitwise_not(self, x: Array, out: Array) -> None:
        """out = ~x (integers), not x (booleans)."""
    def logical_not(self, x: Array, out: Array) -> None:
        """out = x == 0."""
    def exp(self, x: Array, out: Array) -> None:
        """out = e ** x."""
    def exp2(self, x: Array, out: Array) -> None:
        """out = 2 ** x."""
    def expm1(self, x: Array, out: Array) -> None:
        """out = e ** x - 1, accurate near 0."""
    def log(self, x: Array, out: Array) -> None:
        """out = ln x."""
    def log2(self, x: Array, out: Array) -> None:
        """out = log₂ x."""
    def log10(self, x: Array, out: Array) -> None:
        """out = log₁₀ x."""
    def log1p(self, x: Array, out: Array) -> None:
        """out = ln(1 + x), accurate near 0."""
    def sqrt(self, x: Array, out: Array) -> None:
        """out = √x."""
    def rsqrt(self, x: Array, out: Array) -> None:
        """out = 1 / √x."""
    def reciprocal(self, x: Array, out: Array) -> None:
        """out = 1 / x."""
    def sin(self, x: Array, out: Array) -> None:
        """out = sin x."""
    def cos(self, x: Array, out: Array) -> None:
        """out = cos x."""
    def tan(self, x: Array, out: Array) -> None:
        """out = tan x."""
    def arcsin(self, x: Array, out: Array) -> None:
        """out = asin x."""
    def arccos(self, x: Array, out: Array) -> None:
        """out = acos x."""
    def arctan(self, x: Array, out: Array) -> None:
        """out = atan x."""
    def sinh(self, x: Array, out: Array) -> None:
        """out = sinh x."""
    def cosh(self, x: Array, out: Array) -> None:
        """out = cosh x."""
    def tanh(self, x: Array, out: Array) -> None:
        """out = tanh x."""
    def arcsinh(self, x: Array, out: Array) -> None:
        """out = asinh x."""
    def arccosh(self, x: Array, out: Array) -> None:
        """out = acosh x."""
    def arctanh(self, x: Array, out: Array) -> None:
        """out = atanh x."""
    def erf(self, x: Array, out: Array) -> None:
        """out = erf x (computed in float64)."""
    def erfc(self, x: Array, out: Array) -> None:
        """out = 1 - erf x (computed in float64, without the cancellation)."""
    def erfinv(self, x: Array, out: Array) -> None:
        """out = the inverse of erf (computed in float64)."""
    def floor(self, x: Array, out: Array) -> None:
        """out = ⌊x⌋ (integers unchanged)."""
    def ceil(self, x: Array, out: Array) -> None:
        """out = ⌈x⌉."""
    def trunc(self, x: Array, out: Array) -> None:
        """out = x rounded toward zero."""
    def rint(self, x: Array, out: Array) -> None:
        """out = x rounded half to even (PyTorch's round())."""
    def round_decimals(self, x: Array, decimals: int, out: Array) -> None:
        """out = x rounded half to even at ``decimals`` digits (negative: left of the point)."""
    def frac(self, x: Array, out: Array) -> None:
        """out = x - trunc(x), with x's sign."""
    def signbit(self, x: Array, out: Array) -> None:
        """out = whether x's sign bit is set (-0.0 included); x < 0 for integers."""
    def isnan(self, x: Array, out: Array) -> None:
        """out = x is NaN."""
    def isinf(self, x: Array, out: Array) -> None:
        """out = x is ±inf."""
    def isfinite(self, x: Array, out: Array) -> None:
        """out = x is neither NaN nor ±inf."""
    def equals_value(self, x: Array, value: Scalar, out: Array) -> None:
        """out = x == value for one number (isposinf, isneginf), integers compared exactly."""
    def nan_to_num(self, x: Array, nan: Scalar, posinf: Scalar, neginf: Scalar, out: Array) -> None:
        """out = x with NaN, +inf and -inf replaced by the three numbers."""

    # -- activations (float arrays; the CPU runs them as Numba loops) ---------------------------
    def relu(self, x: Array, out: Array) -> None:
        """out = max(x, 0), NaN kept."""
    def relu_backward(self, grad: Array, out: Array, grad_in: Array) -> None:
        """grad_in = 0 where relu's output out <= 0, else grad (PyTorch's threshold backward)."""
    def sigmoid(self, x: Array, out: Array) -> None:
        """out = 1 / (1 + exp(-x)), in out's float dtype."""
    def silu(self, x: Array, out: Array) -> None:
        """out = x / (1 + exp(-x)), in out's float dtype."""
    def gelu(self, x: Array, out: Array, approximate: str = "none") -> None:
        """out = x Φ(x), or with approximate="tanh" ½x(1 + tanh(√(2/π)(x + 0.044715 x³)))."""
    def gelu_backward(self, grad: Array, x: Array, out: Array, approximate: str = "none") -> None:
        """out = grad * d gelu(x) / dx."""

    # -- reductions over ``axes`` into out shaped as x without them ------------------------------
    def sum(self, x: Array, axes: Axes, out: Array) -> None:
        """out = the sum over axes, in out's dtype (a copy over no axes)."""
    def prod(self, x: Array, axes: Axes, out: Array) -> None:
        """out = the product over axes (1 over none), in out's dtype."""
    def amax(self, x: Array, axes: Axes, out: Array) -> None:
        """out = the largest value over axes."""
    def amin(self, x: Array, axes: Axes, out: Array) -> None:
        """out = the smallest value over axes."""
    def all(self, x: Array, axes: Axes, out: Array) -> None:
        """out (bool) = every value over axes is nonzero."""
    def any(self, x: Array, axes: Axes, out: Array) -> None:
        """out (bool) = some value over axes is nonzero."""
    def var(self, x: Array, axes: Axes, correction: int, out: Array) -> None:
        """out = the variance over axes with ``correction`` (ddof), accumulated in float64."""
    def std(self, x: Array, axes: Axes, correction: int, out: Array) -> None:
        """out = √var, taken in float64 before rounding to out's dtype."""
    def logsumexp(self, x: Array, axes: Axes, out: Array) -> None:
        """out = log(sum(exp(x))) over axes, stable (rows of -inf give -inf)."""
    def argmax(self, x: Array, axis: int, out: Array) -> None:
        """out (int64) = the index of the first largest value along axis."""
    def argmin(self, x: Array, axis: int, out: Array) -> None:
        """out (int64) = the index of the first smallest value along axis."""
    def max_with_indices(self, x: Array, axis: int | None, values: Array, indices: Array) -> None:
        """values, indices = the largest value along axis and its first index (axis None: 0-d x)."""
    def min_with_indices(self, x: Array, axis: int | None, values: Array, indices: Array) -> None:
        """values, indices = the smallest value along axis and its first index."""
    def sort(self, x: Array, axis: int, descending: bool, values: Array, indices: Array) -> None:
        """values = x sorted along axis (stable, NaN largest), indices = where each came from."""
    def cumsum(self, x: Array, axis: int, out: Array) -> None:
        """out = running sums along axis, in out's dtype."""
    def cumprod(self, x: Array, axis: int, out: Array) -> None:
        """out = running products along axis, in out's dtype."""

    # -- indexing, gathers and scatters -----------------------------------------------------------
    def index_get(self, x: Array, key: Key) -> Array:
        """Returns a new array of x[key] (integer index arrays checked against x's bounds)."""
    def index_put(self, x: Array, key: Key, values: Operand) -> None:
        """x[key] = values (integer index arrays checked against x's bounds)."""
    def index_add(self, out: Array, key: Key, values: Operand) -> None:
        """out[key] += values, accumulating where an index repeats."""
    def index_select(self, x: Array, axis: int, index: Array, out: Array) -> None:
        """out = x taken along axis at index (any shape; every index in [-size, size))."""
    def index_add_along(self, out: Array, axis: int, index: Array, values: Array) -> None:
        """out[.., index[k], ..] += values[.., k, ..] along axis (index_select's backward)."""
    def index_extremes(self, index: Array) -> tuple[int, int]:
        """Returns (smallest, largest) of an integer array with an entry at least."""
    def index_extremes_parts(self, index: Array, ignore: int | None, replacement: int) -> Array:
        """Returns (chunks, 2) int64 extremes of chunks of index, entries == ignore counted as
        replacement (read later: a GPU's range check waits for the next read)."""
    def gather(self, x: Array, axis: int, index: Array, out: Array) -> None:
        """out = x picked along axis by index (index may be smaller than x in other dims)."""
    def scatter_add(self, out: Array, axis: int, index: Array, values: Array) -> None:
        """out[.., index[i, j], ..] += values[i, j] along axis (gather's backward)."""
    def scatter_along(self, out: Array, axis: int, indices: Array, values: Array) -> None:
        """out[.., indices[...], ..] = values along axis (indices and values of one shape)."""
    def scatter_window(self, out: Array, axis: int, index: Array, values: Array) -> None:
        """out[.., index[i, j], ..] = values[i, j] along axis, within the window index covers."""
    def triangle(self, x: Array, diagonal: int, upper: bool, out: Array) -> None:
        """out = the upper (triu) or lower (tril) triangle of the last two dims, 0 elsewhere."""
    def argwhere(self, x: Array) -> Array:
        """Returns (count, ndim) int64: the indices of x's nonzero elements, row-major."""
    def unique(self, x: Array, axis: int | None, return_inverse: bool,
               return_counts: bool) -> tuple[Array, Array | None, Array | None]:
        """Returns (sorted unique values, inverse or None, counts or None); each NaN its own."""
    def bincount(self, x: Array, weights: Array | None, minlength: int) -> Array:
        """Returns the count (or weight sum) of each value of a 1-D non-negative integer array."""
    def searchsorted(self, sequence: Array, values: Array, right: bool) -> Array:
        """Returns where each value goes into the sorted sequence (2-D: row r for values[r])."""
    def histogram(self, x: Array, bins: int, low: float, high: float) -> Array:
        """Returns counts of x in ``bins`` equal bins over [low, high], the last one closed."""

    # -- products, convolution, pooling (float arrays; outputs C-contiguous) ---------------------
    def matmul(self, a: Array, b: Array, out: Array) -> None:
        """out (..., M, N) = a (..., M, K) @ b (..., K, N), batch dims broadcast."""
    def conv2d_forward(self, x: Array, weight: Array, bias: Array | None, stride: Sequence[int],
                       padding: Sequence[int], dilation: Sequence[int], groups: int, out: Array) -> None:
        """out (N, O, Ho, Wo) = bias + the correlation of x (N, C, H, W) with weight (O, C/groups, kH, kW)."""
    def conv2d_backward(self, grad: Array, x: Array | None, weight: Array | None, stride: Sequence[int],
                        padding: Sequence[int], dilation: Sequence[int], groups: int, grad_x: Array | None,
                        grad_weight: Array | None, grad_bias: Array | None) -> None:
        """grad_x, grad_weight, grad_bias of conv2d_forward from grad (N, O, Ho, Wo)."""
    def max_pool2d_forward(self, x: Array, kernel_size: Sequence[int], stride: Sequence[int],
                           padding: Sequence[int], dilation: Sequence[int], out: Array, indices: Array) -> None:
        """out = each window's largest element (NaN wins), indices (int64) = its place h W + w."""
    def max_pool2d_backward(self, grad: Array, indices: Array, kernel_size: Sequence[int], stride: Sequence[int],
                            padding: Sequence[int], dilation: Sequence[int], grad_x: Array) -> None:
        """grad_x = the sum of grad over the windows that chose each element, 0 elsewhere."""
    def avg_pool2d_forward(self, x: Array, kernel_size: Sequence[int], stride: Sequence[int],
                           padding: Sequence[int], count_include_pad: bool, divisor_override: int | None,
                           out: Array) -> None:
        """out = each window's sum over its divisor (PyTorch's rules for padding and override)."""
    def avg_pool2d_backward(self, grad: Array, kernel_size: Sequence[int], stride: Sequence[int],
                            padding: Sequence[int], count_include_pad: bool, divisor_override: int | None,
                            grad_x: Array) -> None:
        """grad_x = for each element, grad / divisor summed over the windows holding it."""
    def im2col(self, x: Array, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
               cols: Array) -> None:
        """cols (N, C, kH, kW, Ho, Wo) = x (N, C, H, W) at each window's places (0 outside): F.unfold."""
    def col2im(self, cols: Array, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
               out: Array) -> None:
        """out (N, C, H, W) = the sum of cols (N, C, kH, kW, Ho, Wo) read from each place: F.fold."""

    # -- softmax, losses, layer norm, dropout (C-contiguous (rows, C) arrays) ---------------------
    def softmax_forward(self, x: Array, out: Array) -> None:
        """out = exp(x - max) / sum(exp(x - max)) per row; a row all -inf gives NaN."""
    def softmax_backward(self, grad: Array, out: Array, grad_in: Array) -> None:
        """grad_in = out * (grad - sum(grad * out)) per row."""
    def log_softmax_forward(self, x: Array, out: Array) -> None:
        """out = x - max - log(sum(exp(x - max))) per row."""
    def log_softmax_backward(self, grad: Array, out: Array, grad_in: Array) -> None:
        """grad_in = grad - exp(out) * sum(grad) per row."""
    def cross_entropy_forward(self, logits: Array, target: Array, weight: Array | None, ignore_index: int,
                              label_smoothing: float, loss: Array, logsumexp: Array) -> None:
        """loss (N,) of logits (N, C) against target (N,), 0 where ignored; logsumexp (N,) float64."""
    def cross_entropy_backward(self, grad_loss: Array, logits: Array, target: Array, weight: Array | None,
                               logsumexp: Array, ignore_index: int, label_smoothing: float,
                               grad_logits: Array) -> None:
        """grad_logits (N, C) from grad_loss (N,) and forward's logsumexp; 0 on ignored rows."""
    def nll_loss_forward(self, log_probs: Array, target: Array, weight: Array | None, ignore_index: int,
                         loss: Array) -> None:
        """loss (N,) = -w[t] * log_probs[t] per row, 0 where ignored."""
    def nll_loss_backward(self, grad_loss: Array, target: Array, weight: Array | None, ignore_index: int,
                          grad_input: Array) -> None:
        """grad_input (N, C) = -w[t] * grad_loss at each row's target, 0 elsewhere."""
    def class_loss_mean(self, loss: Array, target: Array, weight: Array | None, ignore_index: int, mean: Array,
                        divisor: Array) -> None:
        """divisor (0-d) = the kept rows' count (or weight sum), mean (0-d) = sum(loss) / divisor."""
    def layer_norm_forward(self, x: Array, weight: Array | None, bias: Array | None, eps: float, out: Array,
                           mean: Array, rstd: Array) -> None:
        """out (rows, D) = (x - mean) rstd weight + bias; mean, rstd (rows,), rstd = 1/√(var + eps)."""
    def layer_norm_backward(self, grad: Array, x: Array, weight: Array | None, mean: Array, rstd: Array,
                            grad_x: Array, grad_weight: Array | None, grad_bias: Array | None) -> None:
        """grad_x (rows, D), grad_weight and grad_bias (D,) of layer_norm_forward."""
    def dropout_forward(self, x: Array, p: float, seed: int, out: Array) -> None:
        """out = x / (1 - p) where uniform(seed, i) >= p, else 0 (``dropout_mask``; x, out flat)."""
    def dropout_backward(self, grad: Array, p: float, seed: int, grad_in: Array) -> None:
        """grad_in = forward's mask applied to grad (regenerated from the seed)."""
    def dropout_forward_seeded(self, x: Array, p: float, seed: Array, out: Array) -> None:
        """dropout_forward with the seed read on the device from ``seed``, a 1-element int64
        array (a CUDA graph's seed slot, rewritten before each replay): the same mask as
        dropout_forward given the value seed[0]."""
    def dropout_backward_seeded(self, grad: Array, p: float, seed: Array, grad_in: Array) -> None:
        """dropout_backward with the seed read on the device from ``seed`` (1 element, int64)."""

    # -- fused ops (the book's OpLinearBias, OpFFN, OpLinearCrossEntropy, OpFlashAttention) -------
    def linear_forward(self, x: Array, weight: Array, bias: Array | None, out: Array) -> None:
        """out (N, OUT) = x (N, IN) @ weight (OUT, IN)ᵀ + bias (OUT,)."""
    def linear_backward(self, grad_out: Array, x: Array | None, weight: Array | None, grad_x: Array | None,
                        grad_weight: Array | None, grad_bias: Array | None) -> None:
        """grad_x = grad_out @ weight, grad_weight = grad_outᵀ @ x, grad_bias = column sums of grad_out."""
    def ffn_forward(self, x: Array, w1: Array, b1: Array | None, w2: Array, b2: Array | None, approximate: str,
                    out: Array, kept: Array | None = None) -> None:
        """out (N, C2) = gelu(x @ w1ᵀ + b1) @ w2ᵀ + b2; x @ w1ᵀ (N, H) left in kept when given."""
    def ffn_backward(self, grad_out: Array, x: Array, w1: Array, b1: Array | None, w2: Array, approximate: str,
                     grad_x: Array | None, grad_w1: Array | None, grad_b1: Array | None, grad_w2: Array | None,
                     grad_b2: Array | None, kept: Array | None = None) -> None:
        """The gradients of ffn_forward, from forward's kept x @ w1ᵀ (read only) or recomputed."""
    def linear_cross_entropy_forward(self, x: Array, weight: Array, target: Array, ignore_index: int,
                                     chunk_size: int, loss: Array, lse: Array, kept: Array | None = None) -> None:
        """loss, lse (N,) of logits = x (N, C) @ weight (V, C)ᵀ, chunk_size rows of logits at a time."""
    def linear_cross_entropy_backward(self, grad_loss: Array, x: Array, weight: Array, target: Array, lse: Array,
                                      ignore_index: int, chunk_size: int, grad_x: Array | None,
                                      grad_weight: Array | None, kept: Array | None = None) -> None:
        """grad_x (N, C), grad_weight (V, C) from grad_loss (N,), logits recomputed or kept."""
    def flash_attention_forward(self, q: Array, k: Array, v: Array, scale: float, causal: bool, out: Array,
                                lse: Array) -> None:
        """out (G, L, Ev) = softmax(scale q kᵀ, causal: top-left) v, lse (G, L); no (G, L, S) array."""
    def flash_attention_backward(self, grad_out: Array, q: Array, k: Array, v: Array, out: Array, lse: Array,
                                 scale: float, causal: bool, grad_q: Array | None, grad_k: Array | None,
                                 grad_v: Array | None) -> None:
        """grad_q, grad_k, grad_v of flash_attention_forward (probabilities recomputed by blocks)."""
    def self_attention_forward(self, qkv: Array, n_head: int, scale: float, causal: bool, out: Array,
                               lse: Array) -> None:
        """out (B, T, C), lse (B·H, T): flash attention of the heads packed in qkv (B, T, 3C)."""
    def self_attention_backward(self, grad_out: Array, qkv: Array, out: Array, lse: Array, n_head: int,
                                scale: float, causal: bool, grad_qkv: Array) -> None:
        """grad_qkv (B, T, 3C) of self_attention_forward from grad_out (B, T, C)."""

    # -- optimizers and gradient clipping (1-D contiguous arrays of one length, updated in place) --
    def adamw_step(self, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, lr: float, beta1: float,
                   beta2: float, eps_inside: float, eps_outside: float, weight_decay: float,
                   step_size: float) -> None:
        """AdamW: m, v updated, p -= step_size m / (√(v + eps_inside) + eps_outside) + lr wd p."""
    def adamw_step_many(self, params: Sequence[Array], grads: Sequence[Array], exp_avgs: Sequence[Array],
                        exp_avg_sqs: Sequence[Array], lr: float, beta1: float, beta2: float, eps_inside: float,
                        eps_outside: float, weight_decay: float, step_size: float) -> None:
        """adamw_step on each (param, grad, exp_avg, exp_avg_sq) of the four lists."""
    def sgd_step(self, param: Array, grad: Array, momentum_buffer: Array | None, lr: float, momentum: float,
                 dampening: float, weight_decay: float, nesterov: bool, first_step: bool) -> None:
        """PyTorch's SGD with momentum, dampening, weight decay and Nesterov (buffer None: no momentum)."""
    def squared_norms(self, arrays: Sequence[Array], out: Array) -> None:
        """out[i] = the sum of the squares of arrays[i] (any shapes)."""
    def clip_factor(self, total: Array, max_norm: float, eps: float, factor: Array) -> None:
        """factor (0-d) = min(max_norm / (total + eps), 1), on the device."""
    def scale_in_place(self, arrays: Sequence[Array], factor: Array) -> None:
        """arrays[i] *= factor (0-d), each in its own dtype."""

    # -- PyTorch's other activations (float arrays; out may be x: the in-place forms) --------------
    # each forward writes f(x) into out, each backward grad * f'(x) into grad_in
    def leaky_relu(self, x: Array, slope: Operand, out: Array) -> None:
        """out = x where x > 0, else slope * x (slope: a number or an array broadcasting to x)."""
    def leaky_relu_backward(self, grad: Array, x: Array, slope: Operand, grad_in: Array) -> None:
        """grad_in = grad * d leaky_relu(x) / dx (PyTorch's side at each kink)."""
    def hardtanh(self, x: Array, min_val: float, max_val: float, out: Array) -> None:
        """out = x clamped to [min_val, max_val]; backward: grad strictly inside."""
    def hardtanh_backward(self, grad: Array, x: Array, min_val: float, max_val: float, grad_in: Array) -> None:
        """grad_in = grad * d hardtanh(x) / dx (PyTorch's side at each kink)."""
    def threshold(self, x: Array, threshold: float, value: float, out: Array) -> None:
        """out = value where x <= threshold, else x."""
    def threshold_backward(self, grad: Array, x: Array, threshold: float, value: float, grad_in: Array) -> None:
        """grad_in = grad * d threshold(x) / dx (PyTorch's side at each kink)."""
    def softshrink(self, x: Array, lambd: float, out: Array) -> None:
        """out = x - lambd above lambd, x + lambd below -lambd, else 0."""
    def softshrink_backward(self, grad: Array, x: Array, lambd: float, grad_in: Array) -> None:
        """grad_in = grad * d softshrink(x) / dx (PyTorch's side at each kink)."""
    def hardshrink(self, x: Array, lambd: float, out: Array) -> None:
        """out = 0 on [-lambd, lambd], else x."""
    def hardshrink_backward(self, grad: Array, x: Array, lambd: float, grad_in: Array) -> None:
        """grad_in = grad * d hardshrink(x) / dx (PyTorch's side at each kink)."""
    def hardsigmoid(self, x: Array, out: Array) -> None:
        """out = relu6(x + 3) / 6."""
    def hardsigmoid_backward(self, grad: Array, x: Array, grad_in: Array) -> None:
        """grad_in = grad * d hardsigmoid(x) / dx (PyTorch's side at each kink)."""
    def hardswish(self, x: Array, out: Array) -> None:
        """out = x * relu6(x + 3) / 6."""
    def hardswish_backward(self, grad: Array, x: Array, grad_in: Array) -> None:
        """grad_in = grad * d hardswish(x) / dx (PyTorch's side at each kink)."""
    def elu(self, x: Array, alpha: float, scale: float, input_scale: float, out: Array) -> None:
        """out = scale * x where x > 0, else scale * alpha * (exp(input_scale * x) - 1)."""
    def elu_backward(self, grad: Array, x: Array, alpha: float, scale: float, input_scale: float,
                     grad_in: Array) -> None:
        """grad_in = grad * d elu(x) / dx (PyTorch's side at each kink)."""
    def softplus(self, x: Array, beta: float, threshold: float, out: Array) -> None:
        """out = log(1 + exp(beta x)) / beta, x where beta x > threshold."""
    def softplus_backward(self, grad: Array, x: Array, beta: float, threshold: float, grad_in: Array) -> None:
        """grad_in = grad * d softplus(x) / dx (PyTorch's side at each kink)."""
    def logsigmoid(self, x: Array, out: Array) -> None:
        """out = log(sigmoid(x)), stable: min(x, 0) - log1p(exp(-|x|))."""
    def logsigmoid_backward(self, grad: Array, x: Array, grad_in: Array) -> None:
        """grad_in = grad * d logsigmoid(x) / dx (PyTorch's side at each kink)."""
    def mish(self, x: Array, out: Array) -> None:
        """out = x * tanh(softplus(x))."""
    def mish_backward(self, grad: Array, x: Array, grad_in: Array) -> None:
        """grad_in = grad * d mish(x) / dx (PyTorch's side at each kink)."""
    def softsign(self, x: Array, out: Array) -> None:
        """out = x / (1 + |x|)."""
    def softsign_backward(self, grad: Array, x: Array, grad_in: Array) -> None:
        """grad_in = grad * d softsign(x) / dx (PyTorch's side at each kink)."""
    def tanhshrink(self, x: Array, out: Array) -> None:
        """out = x - tanh(x)."""
    def tanhshrink_backward(self, grad: Array, x: Array, grad_in: Array) -> None:
        """grad_in = grad * d tanhshrink(x) / dx (PyTorch's side at each kink)."""
    # -- recurrent layers: one layer in one direction through time (array_kernels/recurrent.py) ---
    def recurrent_forward(self, mode: str, x: Array, w_ih: Array, w_hh: Array, b_ih: Array | None,
                          b_hh: Array | None, batch_sizes: Sequence[int] | None, reverse: bool, states: Array,
                          saved: Array | None) -> None:
        """mode RNN_TANH|RNN_RELU|LSTM|GRU over x (L, N, I): states (L+1, N, H), LSTM (2, L+1, N, H),
        by slot, the initial one given at slot 0 (reverse: L); saved (L, N, S·H) for backward or None."""
    def recurrent_backward(self, mode: str, grad_states: Array, x: Array, w_ih: Array, w_hh: Array,
                           batch_sizes: Sequence[int] | None, reverse: bool, states: Array, saved: Array | None,
                           grad_x: Array | None, grad_w_ih: Array | None, grad_w_hh: Array | None,
                           grad_b_ih: Array | None, grad_b_hh: Array | None, grad_h: Array | None,
                           grad_c: Array | None) -> None:
        """The gradients of recurrent_forward from grad_states (states' shape); C-contiguous outputs."""
    def recurrent_projected_forward(self, x: Array, w_ih: Array, w_hh: Array, w_hr: Array, b_ih: Array | None,
                                    b_hh: Array | None, batch_sizes: Sequence[int] | None, reverse: bool,
                                    states: Array, saved: Array | None) -> None:
        """An LSTM with projections (w_hr (P, H), w_hh (4H, P)) over x (L, N, I): states flat, the hidden
        (L+1, N, P) then the cell (L+1, N, H) states by slot, the initial ones given; saved (L, N, 5H) or None."""
    def recurrent_projected_backward(self, grad_states: Array, x: Array, w_ih: Array, w_hh: Array, w_hr: Array,
                                     batch_sizes: Sequence[int] | None, reverse: bool, states: Array,
                                     saved: Array, grad_x: Array | None, grad_w_ih: Array | None,
                                     grad_w_hh: Array | None, grad_w_hr: Array | None, grad_b_ih: Array | None,
                                     grad_b_hh: Array | None, grad_h: Array | None, grad_c: Array | None) -> None:
        """The gradients of recurrent_projected_forward from grad_states (flat, as states)."""

    # -- matrix decompositions, batched over leading dims (array_kernels/decompositions.py; NumPy's
    # linalg = LAPACK on the CPU, CuPy's = cuSOLVER on CUDA); a singular or not positive-definite
    # matrix raises zero.errors.LinAlgError ---------------------------------------------------------
    def det(self, a: Array, out: Array) -> None:
        """out (...) = det(a (..., n, n))."""
    def slogdet(self, a: Array, sign: Array, logabsdet: Array) -> None:
        """sign and log|det| (...) of a (..., n, n)."""
    def inv(self, a: Array, out: Array) -> None:
        """out = a^-1 (..., n, n)."""
    def solve(self, a: Array, b: Array, out: Array) -> None:
        """out = a^-1 b: a (..., n, n), b and out (..., n, k), one batch shape."""
    def cholesky(self, a: Array, out: Array) -> None:
        """out = L lower-triangular with a = L L^T (..., n, n)."""
    def qr(self, a: Array, q: Array | None, r: Array, complete: bool) -> None:
        """a (..., m, n) = q r, reduced or complete; q None: r only."""
    def svd(self, a: Array, u: Array | None, s: Array, vh: Array | None) -> None:
        """a (..., m, n) = u diag(s) vh, full or reduced as u's and vh's shapes say; None: s only."""
    def eigh(self, a: Array, upper: bool, w: Array, v: Array | None) -> None:
        """Ascending eigenvalues w (..., n) and eigenvectors v (columns) of a symmetric a read from
        its lower (upper) triangle; v None: w only."""
    # -- the gamma family and the bit shifts (array_kernels/more_math.py) -------------------------
    def lgamma(self, x: Array, out: Array) -> None:
        """out = log |Gamma(x)| (computed in float64)."""
    def digamma(self, x: Array, out: Array) -> None:
        """out = Gamma'(x) / Gamma(x) (computed in float64)."""
    def trigamma(self, x: Array, out: Array) -> None:
        """out = digamma'(x) (computed in float64)."""
    def left_shift(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a << b in out's integer type (0 where b is negative or past the width)."""
    def right_shift(self, a: Operand, b: Operand, out: Array) -> None:
        """out = a >> b, arithmetic (0 or -1 where b is negative or past the width)."""
    def scatter_reduce(self, out: Array, axis: int, index: Array, values: Array, reduce: str) -> None:
        """out[.., index[i, j], ..] = reduce(that, values[i, j]) along axis; sum|prod|amax|amin."""
    # -- issue 37 (math names): Householder QR (array_kernels/householder.py) ----------------------
    def geqrf(self, a: Array, h: Array, tau: Array) -> None:
        """LAPACK's geqrf of a (..., m, n): h R on and above the diagonal, the reflectors below;
        tau (..., min(m, n)) their scales."""
    # -- attention's softmax (parity2) ---------------------------------------------------------
    def masked_softmax_forward(self, x: Array, out: Array) -> None:
        """softmax_forward, but a row all -inf (a fully masked attention row) gives zeros."""
    # -- issue 38 (CUDA graphs): AdamW's capturable step (the counts and the lr read on the device) --
    def adamw_step_many_capturable(self, params: Sequence[Array], grads: Sequence[Array],
                                   exp_avgs: Sequence[Array], exp_avg_sqs: Sequence[Array], steps: Sequence[Array],
                                   lr: float | Array, beta1: float, beta2: float, eps: float, eps_inside_sqrt: bool,
                                   weight_decay: float) -> None:
        """adamw_step_many with no number that changes between steps given by the host: each
        parameter's count steps[i] (0-d, float32 or float64) += 1 first, the bias corrections
        worked out from it on the device, lr a number or a 0-d array read there."""


def given(*arrays: Array | None) -> Array:
    """The first of ``arrays`` that is not None: for a kernel's optional arrays, of which the
    contract says when one is there (x may be None only when grad_weight is, and so on)."""
    for array in arrays:
        if array is not None:
            return array
    raise ValueError("a kernel was given None for an array it needs")


def kernel_names() -> list[str]:
    """The contract's kernels, by name, in the order above."""
    return [name for name, value in vars(Kernels).items() if not name.startswith("_") and callable(value)]


def table_of(module: ModuleType) -> dict[str, Callable[..., Any]]:
    """A kernel table's entries: the module's public attributes that are functions (or
    callables made of them), not the modules and classes it imports."""
    return {name: value for name, value in vars(module).items()
            if not name.startswith("_") and callable(value) and not isinstance(value, (ModuleType, type))}


def _parameters(function: Callable[..., Any], drop_first: bool = False) -> list[tuple[str, Any, Any]]:
    parameters = list(inspect.signature(function).parameters.values())[1 if drop_first else 0:]
    return [(p.name, p.kind, p.default) for p in parameters]


def differences(module: ModuleType) -> list[str]:
    """Where the kernel table ``module`` departs from the contract: a name missing or extra,
    or a kernel whose parameters (names, kinds, defaults) differ; empty when it offers the
    contract exactly. (A shared kernel bound to its array module is compared without it.)"""
    table, names = table_of(module), kernel_names()
    found = [f"missing: {name}" for name in names if name not in table]
    found += [f"not in the contract: {name}" for name in table if name not in names]
    for name in names:
        if name in table:
            want, got = _parameters(getattr(Kernels, name), drop_first=True), _parameters(table[name])
            if want != got:
                found.append(f"{name}: parameters {got}, the contract's {want}")
    return found


# -- issue 38 (CUDA graphs): the scalars of adamw_step at a step count, for the host and the CPU ---


def adamw_scalars(lr: float, t: float, beta1: float, beta2: float, eps: float,
                  eps_inside_sqrt: bool) -> tuple[float, float, float]:
    """(eps_inside, eps_outside, step_size) of ``adamw_step`` at step ``t`` (counted from 1),
    in float64: step_size = lr √(1 - β2^t) / (1 - β1^t); ε inside the root, or ε √(1 - β2^t)
    outside it (PyTorch's ε outside the root of the bias-corrected v̂, rearranged)."""
    root_of_correction = math.sqrt(1.0 - beta2 ** t)
    step_size = lr * root_of_correction / (1.0 - beta1 ** t)
    if eps_inside_sqrt:
        return eps, 0.0, step_size
    return 0.0, eps * root_of_correction, step_size
