"""The loss functions PyTorch has at the top level (``torch.cosine_embedding_loss`` ...):
its ATen forms, whose signature differs from ``F.*``'s -- no size_average/reduce, and
``reduction`` an int (0 'none', 1 'mean', 2 'sum'), with no reduction by default (as
PyTorch 2.13's bindings behave; a string is refused with TypeError, as there).

    binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0)
    cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0)
    hinge_embedding_loss(input, target, margin=1.0, reduction=0)
    margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0)
    poisson_nll_loss(input, target, log_input, full, eps, reduction)      (all required)
    triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=0)
"""
from __future__ import annotations

from ...tensors.tensor import Tensor
from . import losses as F

REDUCTIONS = ("none", "mean", "sum")


def _reduction(name: str, reduction: int) -> str:
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"{name}(): argument 'reduction' must be int (0 none, 1 mean, 2 sum), "
                        f"not {type(reduction).__name__}")
    return REDUCTIONS[reduction] if 0 <= reduction < 3 else "none"   # (PyTorch reduces nothing for any other)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight, pos_weight=pos_weight,
                                              reduction=_reduction("binary_cross_entropy_with_logits", reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction("hinge_embedding_loss", reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction))
