"""PyTorch's other losses, and the distances they use.

Two are ops of their own, because composing them from basic ops would be unstable:

    binary_cross_entropy(p, y)       -(y log p + (1 - y) log(1 - p)), each log clamped at -100
                                     (PyTorch's rule), so p = 0 or 1 gives a finite loss; backward
                                     grad (p - y) / max(p (1 - p), 1e-12), not the composition's 0 * inf
    binary_cross_entropy_with_logits (1 - y) x + (1 + (pos_weight - 1) y) softplus(-x), softplus(-x)
                                     = max(-x, 0) + log1p(exp(-|x|)): finite for any logit

The others are compositions of elementwise ops and reductions, each PyTorch's formula:

    l1_loss            |x - y|
    smooth_l1_loss     0.5 d^2 / beta where d = |x - y| < beta, else d - 0.5 beta
    huber_loss         0.5 d^2 where d < delta, else delta (d - 0.5 delta)
    kl_div             y (log y - x) (0 where y = 0), or exp(y) (y - x) with log_target
    soft_margin_loss   log1p(exp(-y x))
    multilabel_soft_margin_loss   -(y logsigmoid(x) + (1 - y) logsigmoid(-x)), mean over classes
    poisson_nll_loss   exp(x) - y x (log_input), or x - y log(x + eps); full: + Stirling's term
    gaussian_nll_loss  0.5 (log var + (x - y)^2 / var) (+ 0.5 log 2 pi with full)
    margin_ranking_loss     max(0, -y (x1 - x2) + margin)
    hinge_embedding_loss    x where y = 1, max(0, margin - x) where y = -1
    cosine_embedding_loss   1 - cos where y = 1, max(0, cos - margin) where y = -1
    triplet_margin_loss     max(d(a, p) - d(a, n) + margin, 0), d = pairwise_distance
    multi_margin_loss       sum over i != y of w[y] max(0, margin - x[y] + x[i])^p, over C

``reduction`` is "mean", "sum" or "none" (and "batchmean" for kl_div); the deprecated
``size_average`` and ``reduce`` arguments map to it as in PyTorch (``legacy_reduction``).
"""
from __future__ import annotations

import math
import warnings

from ...autograd.op import Grads, Op
from ...errors import DTypeError, ShapeValueError, describe
from ...grad_mode import no_grad
from ...tensors.creation import arange
from ...tensors.tensor import Tensor
from ..elementwise import maximum, minimum, where
from ..joining import gather
from ..extra.binary_math import xlogy
from ..loss import check_reduction, legacy_reduction
from .activations import logsigmoid, softplus
from .norms import vector_norm
from ...autograd import autocast_hook


def reduction_of(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce)
    return reduction


def _reduce(op: str, loss: Tensor, reduction: str) -> Tensor:
    check_reduction(op, reduction)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _check_tensors(op: str, **tensors: object) -> None:
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a tensor, got {type(t).__name__}")


def _warn_broadcast(op: str, input: Tensor, target: Tensor) -> None:
    if input.shape != target.shape:
        warnings.warn(f"{op}: using a target size ({list(target.shape)}) that is different to the input size "
                      f"({list(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


# -- the two ops ------------------------------------------------------------------------------------


class ElementLoss(Op):
    """A loss of (input, target) per element, weighted and reduced; backward scales the
    per-element derivatives by the upstream gradient (divided by the count for "mean")."""

    reduction = "mean"    # (set by forward)
    count = 0

    def scaled(self, grad: Tensor, count: int) -> Tensor:
        if self.reduction == "mean":
            return grad / count
        return grad

    def finish(self, loss: Tensor, weight: Tensor | None) -> Tensor:
        if weight is not None:
            loss = loss * weight
        self.count = loss.numel()
        return _reduce(self.op_name, loss, self.reduction)


BCE_EPSILON = 9.999999960041972e-13   # 1e-12 rounded to float32: PyTorch's floor of p (1 - p), in every dtype


class BinaryCrossEntropy(ElementLoss):
    def forward(self, p: Tensor, y: Tensor, weight: Tensor | None, reduction: str) -> Tensor:
        check_reduction("binary_cross_entropy", reduction)
        _check_tensors("binary_cross_entropy", input=p, target=y)
        if p.shape != y.shape:
            raise ShapeValueError(f"binary_cross_entropy: using a target size ({list(y.shape)}) that is different to "
                                  f"the input size ({list(p.shape)}) is not supported; please ensure they have the "
                                  "same size")
        if not p.dtype.is_floating_point:
            raise DTypeError(f"binary_cross_entropy: input must be floating point, got {describe(p)}")
        self.reduction = reduction
        with no_grad():
            p, y = p.detach(), y.detach().to(p.dtype)
            if p.numel() and bool(((p < 0) | (p > 1)).any()):
                raise RuntimeError(f"binary_cross_entropy: all elements of input should be between 0 and 1, "
                                   f"got {describe(p)}")
            log_p = p.log().clamp_min(-100.0)
            log_q = (1 - p).log().clamp_min(-100.0)
            loss = -(y * log_p + (1 - y) * log_q)
            out = self.finish(loss, None if weight is None else weight.detach())
        self.save_for_backward(p, y, weight)
        return out

    def backward(self, grad: Tensor) -> Grads:
        p, y, weight = self.saved_tensors
        grad = self.scaled(grad, self.count)
        if weight is not None:
            grad = grad * weight
        need_p, need_y = self.needs_input_grad[:2]
        grad_p = grad * (p - y) / (p * (1 - p)).clamp_min(BCE_EPSILON) if need_p else None
        grad_y = grad * ((1 - p).log() - p.log()) if need_y else None
        return grad_p, grad_y, None, None


class BinaryCrossEntropyWithLogits(ElementLoss):
    def forward(self, x: Tensor, y: Tensor, weight: Tensor | None, pos_weight: Tensor | None,
                reduction: str) -> Tensor:
        check_reduction("binary_cross_entropy_with_logits", reduction)
        _check_tensors("binary_cross_entropy_with_logits", input=x, target=y)
        if x.shape != y.shape:
            raise ShapeValueError(f"binary_cross_entropy_with_logits: target size ({list(y.shape)}) must be the same "
                                  f"as input size ({list(x.shape)})")
        if not x.dtype.is_floating_point:
            raise DTypeError(f"binary_cross_entropy_with_logits: input must be floating point, got {describe(x)}")
        self.reduction = reduction
        with no_grad():
            x, y = x.detach(), y.detach().to(x.dtype)
            softplus_neg = (-x).clamp_min(0) + (-x.abs()).exp().log1p()        # softplus(-x), stable
            if pos_weight is not None:
                log_weight = 1 + (pos_weight.detach() - 1) * y
                loss = (1 - y) * x + log_weight * softplus_neg
            else:
                loss = (1 - y) * x + softplus_neg
            out = self.finish(loss, None if weight is None else weight.detach())
        self.save_for_backward(x, y, weight, pos_weight)
        return out

    def backward(self, grad: Tensor) -> Grads:
        x, y, weight, pos_weight = self.saved_tensors
        grad = self.scaled(grad, self.count)
        if weight is not None:
            grad = grad * weight
        need_x, need_y = self.needs_input_grad[:2]
        grad_x = grad_y = None
        if pos_weight is None:
            if need_x:
                grad_x = grad * (x.sigmoid() - y)
            if need_y:
                grad_y = -grad * x
        else:
            if need_x:
                grad_x = grad * (x.sigmoid() * (pos_weight * y + 1 - y) - pos_weight * y)
            if need_y:
                softplus_neg = (-x).clamp_min(0) + (-x.abs()).exp().log1p()
                grad_y = grad * ((pos_weight - 1) * softplus_neg - x)
        return grad_x, grad_y, None, None, None


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    if autocast_hook.state.active:
        input, target, weight = autocast_hook.cast("binary_cross_entropy", input, target, weight)
    reduction = reduction_of(size_average, reduce, reduction)
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    if autocast_hook.state.active:
        input, target, weight, pos_weight = autocast_hook.cast("binary_cross_entropy_with_logits", input, target,
                                                               weight, pos_weight)
    reduction = reduction_of(size_average, reduce, reduction)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


# -- compositions ------------------------------------------------------------------------------------


def _weighted(loss: Tensor, weight: Tensor | None) -> Tensor:
    return loss if weight is None else loss * weight


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    if autocast_hook.state.active:
        input, target = autocast_hook.cast("l1_loss", input, target)
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("l1_loss", reduction)
    _check_tensors("l1_loss", input=input, target=target)
    _warn_broadcast("l1_loss", input, target)
    return _reduce("l1_loss", _weighted((input - target).abs(), weight), reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    if autocast_hook.state.active:
        input, target = autocast_hook.cast("smooth_l1_loss", input, target)
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("smooth_l1_loss", reduction)
    _check_tensors("smooth_l1_loss", input=input, target=target)
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta, got {beta}")
    _warn_broadcast("smooth_l1_loss", input, target)
    distance = (input - target).abs()
    if beta == 0:
        return _reduce("smooth_l1_loss", distance, reduction)
    loss = where(distance < beta, distance * distance * (0.5 / beta), distance - 0.5 * beta)
    return _reduce("smooth_l1_loss", loss, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    if autocast_hook.state.active:
        input, target = autocast_hook.cast("huber_loss", input, target)
    check_reduction("huber_loss", reduction)
    _check_tensors("huber_loss", input=input, target=target)
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta, got {delta}")
    _warn_broadcast("huber_loss", input, target)
    distance = (input - target).abs()
    loss = where(distance < delta, distance * distance * 0.5, (distance - 0.5 * delta) * delta)
    return _reduce("huber_loss", _weighted(loss, weight), reduction)


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """target * (log target - input) pointwise (input: log-probabilities); "batchmean" divides
    the sum by the batch size (the KL divergence), "mean" by the number of elements."""
    if autocast_hook.state.active:
        input, target = autocast_hook.cast("kl_div", input, target)
    reduction = reduction_of(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"kl_div: {reduction} is not a valid value for reduction (expected 'mean', 'batchmean', "
                         "'sum' or 'none')")
    _check_tensors("kl_div", input=input, target=target)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    loss = target.exp() * (target - input) if log_target else xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce("kl_div", loss, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    if autocast_hook.state.active:
        input, target = autocast_hook.cast("soft_margin_loss", input, target)
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("soft_margin_loss", reduction)
    _check_tensors("soft_margin_loss", input=input, target=target)
    # log1p(exp(-y x)), PyTorch's formula (softplus without its linear branch: no threshold)
    return _reduce("soft_margin_loss", softplus(-(input * target), 1.0, math.inf), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("multilabel_soft_margin_loss", reduction)
    _check_tensors("multilabel_soft_margin_loss", input=input, target=target)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    loss = _weighted(loss, weight)
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]                 # (N,)
    return _reduce("multilabel_soft_margin_loss", loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    if autocast_hook.state.active:
        input, target = autocast_hook.cast("poisson_nll_loss", input, target)
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("poisson_nll_loss", reduction)
    _check_tensors("poisson_nll_loss", input=input, target=target)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0.0)
    return _reduce("poisson_nll_loss", loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 (log var + (input - target)^2 / var), var clamped at eps (without changing its
    gradient, as PyTorch clamps it outside autograd)."""
    check_reduction("gaussian_nll_loss", reduction)
    _check_tensors("gaussian_nll_loss", input=input, target=target)
    if not isinstance(var, Tensor):
        var = input.new_full((), float(var))
        if float(var.item()) < 0:
            raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    elif var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)                                  # homoscedastic per sample
        elif not (input.shape[:-1] == var.shape[:-1] and var.ndim and var.shape[-1] == 1):
            raise ValueError(f"gaussian_nll_loss: var is of incorrect size ({list(var.shape)} for input "
                             f"{list(input.shape)})")
    if var.numel() and bool((var < 0).any()):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    with no_grad():
        lift = var.clamp_min(eps) - var                              # 0 where var >= eps
    var = var + lift
    difference = input - target
    loss = 0.5 * (var.log() + difference * difference / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce("gaussian_nll_loss", loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    if autocast_hook.state.active:
        input1, input2, target = autocast_hook.cast("margin_ranking_loss", input1, input2, target)
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("margin_ranking_loss", reduction)
    _check_tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss: all input tensors should have same dimension but got sizes: "
                           f"input1: {list(input1.shape)}, input2: {list(input2.shape)}, "
                           f"target: {list(target.shape)}")
    return _reduce("margin_ranking_loss", (-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    if autocast_hook.state.active:
        input, target = autocast_hook.cast("hinge_embedding_loss", input, target)
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("hinge_embedding_loss", reduction)
    _check_tensors("hinge_embedding_loss", input=input, target=target)
    zero = input.new_zeros(())
    outside_margin = where(target != 1, (margin - input).clamp_min(0), zero)
    itself = where(target != -1, input, zero)
    return _reduce("hinge_embedding_loss", outside_margin + itself, reduction)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps)) along dim (x1 and x2 broadcast)."""
    if autocast_hook.state.active:
        x1, x2 = autocast_hook.cast("cosine_similarity", x1, x2)
    _check_tensors("cosine_similarity", x1=x1, x2=x2)
    norm1 = vector_norm(x1, 2, dim, keepdim=True).clamp_min(eps)
    norm2 = vector_norm(x2, 2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dimension."""
    _check_tensors("pairwise_distance", x1=x1, x2=x2)
    innermost = max(x1.ndim, x2.ndim) - 1
    if innermost < 0:
        raise RuntimeError("pairwise_distance: expected inputs of at least one dimension, got 0-d tensors")
    return vector_norm(x1 - x2 + eps, p, innermost, keepdim=keepdim)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(0, cos - margin) where it is -1; cos with
    PyTorch's 1e-12 added to each squared magnitude."""
    if autocast_hook.state.active:
        input1, input2, target = autocast_hook.cast("cosine_embedding_loss", input1, input2, target)
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("cosine_embedding_loss", reduction)
    _check_tensors("cosine_embedding_loss", input1=input1, input2=input2, target=target)
    if input1.ndim not in (1, 2) or input1.shape != input2.shape or target.ndim != input1.ndim - 1:
        raise RuntimeError(f"cosine_embedding_loss: expected input1 and input2 of one shape (N, D) or (D,) and "
                           f"a target (N,) or (), got {describe(input1)}, {describe(input2)}, {describe(target)}")
    dim = input1.ndim - 1
    products = (input1 * input2).sum(dim)
    magnitudes = ((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)
    cos = products / magnitudes.sqrt()
    zero = cos.new_zeros(())
    loss = where(target == 1, 1 - cos, zero) + where(target == -1, (cos - margin).clamp_min(0), zero)
    return _reduce("cosine_embedding_loss", loss, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    if autocast_hook.state.active:
        anchor, positive, negative = autocast_hook.cast("triplet_margin_loss", anchor, positive, negative)
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("triplet_margin_loss", reduction)
    _check_tensors("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    if not anchor.ndim == positive.ndim == negative.ndim or anchor.ndim not in (1, 2):
        raise RuntimeError(f"triplet_margin_loss: the anchor, positive and negative tensors are expected to have "
                           f"the same number of dimensions, 1 or 2, got {describe(anchor)}, {describe(positive)}, "
                           f"{describe(negative)}")
    to_positive = pairwise_distance(anchor, positive, p, eps)
    to_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        to_negative = minimum(to_negative, pairwise_distance(positive, negative, p, eps))
    loss = maximum(margin + to_positive - to_negative, to_positive.new_zeros(()))
    return _reduce("triplet_margin_loss", loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """Per sample: the sum over the classes i other than the target y of
    w[y] * max(0, margin - x[y] + x[i]) ** p, divided by the number of classes C."""
    if autocast_hook.state.active:
        input, target, weight = autocast_hook.cast("multi_margin_loss", input, target, weight)
    reduction = reduction_of(size_average, reduce, reduction)
    check_reduction("multi_margin_loss", reduction)
    _check_tensors("multi_margin_loss", input=input, target=target)
    if p not in (1, 2):
        raise ValueError("multi_margin_loss: only p == 1 and p == 2 supported")
    if input.ndim not in (1, 2) or target.shape != input.shape[:-1]:
        raise RuntimeError(f"multi_margin_loss: expected an input (N, C) or (C,) and a target (N,) or (), got "
                           f"{describe(input)} and {describe(target)}")
    rows = input.reshape(-1, input.shape[-1])                        # (N, C)
    targets = target.reshape(-1, 1)                                  # (N, 1)
    classes = rows.shape[1]
    margins = (margin - gather(rows, 1, targets) + rows).clamp_min(0)
    if p == 2:
        margins = margins * margins
    if weight is not None:
        margins = margins * weight[targets]                          # (N, 1) weights of the targets
    own_class = targets == arange(classes, device=rows.device)      # (N, C): i == y
    loss = margins.masked_fill(own_class, 0.0).sum(1) / classes      # (N,)
    return _reduce("multi_margin_loss", loss.reshape(target.shape), reduction)
