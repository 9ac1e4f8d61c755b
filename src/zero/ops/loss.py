"""Losses: cross-entropy (log-softmax + NLL fused in one op), NLL and mean squared error.
(Cross-entropy against class probabilities -- a float target of the input's shape -- is a
composition, ``soft_target_cross_entropy``; PyTorch's other losses are in ``extra/losses.py``.)

Shapes follow PyTorch. Classes are dimension 1 of the input (dimension 0 of a
1-D input); the target holds one class index per remaining position:

    input (N, C)             target (N,)             loss "none": (N,)
    input (C,)               target ()               loss "none": ()
    input (N, C, d1, ...)    target (N, d1, ...)     loss "none": (N, d1, ...)

The op moves the class dimension last and works on rows (rows, C), one row per
target. Per-row loss of cross-entropy, with class weights w (all 1 without
``weight``), label smoothing s and C classes:

    (1 - s) * w[t] * (logsumexp(x) - x[t]) + s / C * sum_c w[c] * (logsumexp(x) - x[c])

Rows whose target equals ``ignore_index`` contribute 0; "mean" divides the sum by
the number of the other rows (by the sum of their w[t] when weighted). Forward
keeps only each row's logsumexp for backward, not the [N, C] probabilities;
backward recomputes them: d loss / d x_c = p_c * ((1 - s) * w[t] + s/C * sum(w))
- (1 - s) * w[t] * [c == t] - s/C * w[c], times the row's upstream gradient.
"""
from __future__ import annotations

import warnings

from .. import dtypes
from ..autograd.op import Grads, Op
from ..errors import DTypeError, ShapeError, ShapeValueError, ValueRangeError, describe
from ..tensors.tensor import Tensor
from .arguments import array_or_none, flat_of, laid_out, rows_of
from .index_checks import check_index_range
from .softmax import log_softmax
from ..autograd import autocast_hook

REDUCTIONS = ("mean", "sum", "none")


def check_reduction(op: str, reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def _classes_last(x: Tensor) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(N, C, d1, ..., dk) -> the permutation to (N, d1, ..., dk, C) and its inverse."""
    order = (0,) + tuple(range(2, x.ndim)) + (1,)
    return order, tuple(sorted(range(x.ndim), key=order.__getitem__))


class ClassLoss(Op):
    """Shared shape rule, checks and reduction of the losses over class-index targets."""

    name_in_errors = ""

    def prepare(self, x: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
                reduction: str) -> tuple[Tensor, Tensor, Tensor | None]:
        """Check the operands; return (rows (R, C), target rows (R,), weight or None), all
        contiguous and without graph, and remember how to undo the layout in backward."""
        op = self.name_in_errors
        check_reduction(op, reduction)
        if not isinstance(x, Tensor) or not isinstance(target, Tensor):
            raise TypeError(f"{op}: input and target must be tensors, got {type(x).__name__} and "
                            f"{type(target).__name__}")
        if not x.dtype.is_floating_point:
            raise DTypeError(f"{op}: input must be floating point, got {describe(x)}")
        if target.dtype is dtypes.uint8:   # (PyTorch takes Byte targets: MNIST's labels as read)
            target = target.detach().to(dtypes.int64)
        if target.dtype not in (dtypes.int64, dtypes.int32):
            raise DTypeError(f"{op}: target must hold class indices as an int64, int32 or uint8 tensor, got "
                             f"{describe(target)} (input {describe(x)}); class-probability targets "
                             "(cross_entropy) are a float tensor of the input's shape; convert indices with .long()")
        if x.ndim == 0:
            raise ShapeError(f"{op}: input must have a class dimension, got {describe(x)}")
        expected = () if x.ndim == 1 else (x.shape[0],) + x.shape[2:]
        if target.shape != expected:
            # another batch size: PyTorch's ValueError; other sizes: its RuntimeError
            batch_differs = x.ndim > 1 and (target.ndim == 0 or target.shape[0] != x.shape[0])
            error = ShapeValueError if batch_differs else ShapeError
            raise error(f"{op}: target {describe(target)} does not match input {describe(x)}: "
                        f"expected a target of shape {list(expected)} (the input's shape without "
                        "its class dimension 1)")
        classes = x.shape[0] if x.ndim == 1 else x.shape[1]
        if weight is not None:
            if not isinstance(weight, Tensor) or weight.shape != (classes,) or weight.dtype is not x.dtype:
                got = describe(weight)
                raise ShapeError(f"{op}: weight must be a {x.dtype.name}[{classes}] tensor (one per class "
                                 f"of input {describe(x)}), got {got}")
            weight = laid_out(weight, (classes,))
        self.in_shape, self.target_shape = x.shape, target.shape
        self.order: tuple[int, ...] | None = None
        self.inverse: tuple[int, ...] | None = None
        if x.ndim > 2:
            self.order, self.inverse = _classes_last(x)
            x = x.detach().permute(self.order)                         # (N, d1, ..., C)
        rows = rows_of(x, classes)                                     # (N*d1*..., C)
        target_rows = flat_of(target)                                  # (N*d1*...,)
        check_targets(op, target_rows, classes, ignore_index)
        self.reduction, self.ignore_index = reduction, ignore_index
        return rows, target_rows, weight

    def reduce(self, loss_rows: Tensor, target_rows: Tensor, weight: Tensor | None) -> tuple[Tensor, Tensor | None]:
        """Per-row losses -> the requested reduction, and the divisor of "mean" (or None).
        Kernel calls on the arrays rather than tensor ops: nothing here is recorded, and the
        ops would cost more than the NLL kernel itself."""
        if self.reduction == "none":
            return loss_rows.reshape(self.target_shape), None
        dtype, device = loss_rows._meta.dtype, loss_rows._meta.device
        total = Tensor._empty((), dtype, device)
        if self.reduction == "sum":
            device.kernels.sum(loss_rows._array, (0,), total._array)
            return total, None
        divisor = Tensor._empty((), dtype, device)
        device.kernels.class_loss_mean(loss_rows._array, target_rows._array, array_or_none(weight),
                                       self.ignore_index, total._array, divisor._array)
        return total, divisor

    def row_gradients(self, grad: Tensor, divisor: Tensor | None, rows: int) -> Tensor:
        """The upstream gradient of each row's loss, contiguous (rows,); ``divisor``: the one
        of "mean" (``reduce``), None for the other reductions."""
        if self.reduction == "none":
            return laid_out(grad, (rows,))
        row_grads = Tensor._empty((rows,), grad._meta.dtype, grad._meta.device)
        kernels = grad._meta.device.kernels
        if divisor is not None:   # "mean": the 0-d gradient over the 0-d divisor, broadcast
            kernels.div(grad._array, divisor._array, row_grads._array)
        else:
            kernels.copy(grad._array, row_grads._array)
        return row_grads

    def restore(self, grad_rows: Tensor) -> Tensor:
        """(rows, C) -> the input's layout (a permuted view for K-dimensional inputs)."""
        if self.order is None or self.inverse is None:
            return grad_rows.reshape(self.in_shape)
        moved = tuple(self.in_shape[d] for d in self.order)   # (N, d1, ..., C)
        return grad_rows.reshape(moved).permute(self.inverse)


def check_targets(op: str, target: Tensor, classes: int, ignore_index: int) -> None:
    """Every class index in [0, classes) or equal to ignore_index (ops/index_checks.py: on a
    GPU the check runs at the next read from the device, not here)."""
    def problem(smallest: int, largest: int) -> str | None:
        if smallest >= 0 and largest < classes:
            return None
        value = smallest if smallest < 0 else largest
        return (f"target {value} is out of bounds for {classes} classes (expected values in "
                f"[0, {classes - 1}] or ignore_index={ignore_index})")

    check_index_range(op, target, problem, ignore=ignore_index, valid=0)


class CrossEntropy(ClassLoss):
    """cross_entropy(logits, target): log-softmax and negative log-likelihood in one op."""

    name_in_errors = "cross_entropy"

    def forward(self, x: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100,
                reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueRangeError(f"cross_entropy: label_smoothing must lie in [0, 1], got {label_smoothing}")
        rows, target_rows, weight = self.prepare(x, target, weight, ignore_index, reduction)
        count = rows.shape[0]
        loss_rows = Tensor._empty((count,), rows.dtype, rows.device)     # (R,)
        logsumexp = Tensor._empty((count,), dtypes.float64, rows.device)  # (R,), float64 (kernel contract)
        rows.device.kernels.cross_entropy_forward(
            rows._array, target_rows._array, array_or_none(weight), ignore_index,
            float(label_smoothing), loss_rows._array, logsumexp._array)
        out, divisor = self.reduce(loss_rows, target_rows, weight)
        self.save_for_backward(rows, target_rows, logsumexp, weight, divisor)
        self.label_smoothing = float(label_smoothing)
        return out

    def backward(self, grad: Tensor) -> Grads:
        rows, target_rows, logsumexp, weight, divisor = self.saved_tensors
        grad_rows = Tensor._empty(rows.shape, rows.dtype, rows.device)   # (R, C)
        row_grads = self.row_gradients(grad, divisor, rows.shape[0])     # (R,)
        grad.device.kernels.cross_entropy_backward(
            row_grads._array, rows._array, target_rows._array,
            array_or_none(weight), logsumexp._array, self.ignore_index,
            self.label_smoothing, grad_rows._array)
        return self.restore(grad_rows), None, None, None, None, None


class NLLLoss(ClassLoss):
    """nll_loss(log_probs, target): -log_probs[target] per row (weighted), then reduced."""

    name_in_errors = "nll_loss"

    def forward(self, x: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100,
                reduction: str = "mean") -> Tensor:
        rows, target_rows, weight = self.prepare(x, target, weight, ignore_index, reduction)
        loss_rows = Tensor._empty((rows.shape[0],), rows.dtype, rows.device)  # (R,)
        rows.device.kernels.nll_loss_forward(rows._array, target_rows._array,
                                             array_or_none(weight), ignore_index,
                                             loss_rows._array)
        out, divisor = self.reduce(loss_rows, target_rows, weight)
        self.save_for_backward(target_rows, weight, divisor)
        self.rows_shape, self.dtype = rows.shape, rows.dtype
        return out

    def backward(self, grad: Tensor) -> Grads:
        target_rows, weight, divisor = self.saved_tensors
        grad_rows = Tensor._empty(self.rows_shape, self.dtype, grad.device)  # (R, C)
        row_grads = self.row_gradients(grad, divisor, self.rows_shape[0])    # (R,), held (see above)
        grad.device.kernels.nll_loss_backward(
            row_grads._array, target_rows._array,
            array_or_none(weight), self.ignore_index, grad_rows._array)
        return self.restore(grad_rows), None, None, None, None


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Class indices as the target (the fused op), or class probabilities: a float target
    of the input's shape (a composition, ``soft_target_cross_entropy``)."""
    if autocast_hook.state.active:
        input, target, weight = autocast_hook.cast("cross_entropy", input, target, weight)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if isinstance(target, Tensor) and target.dtype.is_floating_point and isinstance(input, Tensor) \
            and target.shape == input.shape:
        check_reduction("cross_entropy", reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueRangeError(f"cross_entropy: label_smoothing must lie in [0, 1], got {label_smoothing}")
        return soft_target_cross_entropy(input, target, weight, reduction, label_smoothing)
    return CrossEntropy.apply(input, target, weight, ignore_index, reduction, label_smoothing)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    if autocast_hook.state.active:
        input, target, weight = autocast_hook.cast("nll_loss", input, target, weight)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    return NLLLoss.apply(input, target, weight, ignore_index, reduction)


def legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """The reduction that PyTorch's deprecated ``size_average`` and ``reduce`` stand for
    (each None counts as True): mean, sum, or none when reduce is False."""
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='mean' (or 'sum', "
                  "'none') instead.", stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def soft_target_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                              label_smoothing: float) -> Tensor:
    """cross_entropy with class probabilities as the target (a float tensor of the input's
    shape): -sum_c w_c y_c log_softmax(x)_c per row, y smoothed to y (1 - s) + s / C; "mean"
    divides by the number of rows (not by the weights)."""
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    log_probabilities = log_softmax(input, class_dim)
    if weight is not None:
        if weight.shape != (classes,):
            raise ShapeError(f"cross_entropy: weight must hold one value per class ({classes}), got {describe(weight)}")
        log_probabilities = log_probabilities * weight.reshape((classes,) + (1,) * (input.ndim - class_dim - 1))
    loss = -(log_probabilities * target).sum(class_dim)
    if reduction == "none":
        return loss
    total = loss.sum()
    return total if reduction == "sum" else total / (input.numel() // classes if classes else 0)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """mean((input - target) ** 2), a composition of elementwise ops and a reduction.
    Shapes broadcast, with a warning when they differ (as in PyTorch)."""
    if autocast_hook.state.active:
        input, target = autocast_hook.cast("mse_loss", input, target)
    check_reduction("mse_loss", reduction)
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"mse_loss: input and target must be tensors, got {type(input).__name__} and "
                        f"{type(target).__name__}")
    if input.shape != target.shape:
        warnings.warn(f"mse_loss: target {describe(target)} and input {describe(input)} have different "
                      "shapes and will be broadcast; this is rarely what is meant", stacklevel=2)
    difference = input - target
    squared = difference * difference
    if reduction == "none":
        return squared
    return squared.sum() if reduction == "sum" else squared.mean()
