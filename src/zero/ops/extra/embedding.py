"""Embedding lookups with PyTorch's options, and bags of them (``F.embedding``,
``F.embedding_bag``).

    embedding(ids (*), weight (V, D)) -> (*, D)    weight[ids]
        padding_idx          that row's gradient is always zero
        scale_grad_by_freq   each row's gradient divided by how often the row was looked up
        max_norm             looked-up rows whose norm_type-norm exceeds max_norm are scaled
                             down to it, in place in weight, outside the graph (as PyTorch)

    embedding_bag(ids, weight, offsets) -> (B, D)  one row per bag, reduced by mode:
        ids (B, L), no offsets:   each row of ids a bag of L
        ids (n,), offsets (B,):   bag b = ids[offsets[b] : offsets[b + 1]] (the last to the end;
                                  with include_last_offset, offsets has B + 1 entries)
        "sum" (weighted by per_sample_weights when given), "mean", "max"; an empty bag gives
        zeros, entries equal to padding_idx are left out (of the count too).

The lookup is one op: index_select's kernel forward, index_add_along's backward with the
padding row cleared. Bags are compositions: the looked-up rows summed per bag with index_add
(sum, mean), or laid out as (B, longest bag, D) and reduced with amax (max).
"""
from __future__ import annotations

from ... import dtypes
from ...autograd.op import Grads, Op
from ...errors import DTypeError, ShapeError, describe
from ...grad_mode import no_grad
from ...tensors.creation import arange, ones, zeros
from ...tensors.tensor import Tensor
from ..elementwise import where
from ..joining import _check_index, _check_range, cat
from .norms import vector_norm
from .scatter import index_add
from .searching import bincount, searchsorted, unique


class EmbeddingLookup(Op):
    """weight[ids] with the padding row's gradient cleared and, with scale_grad_by_freq,
    each row's gradient divided by its count among ids."""

    def forward(self, weight: Tensor, ids: Tensor, padding_idx: int | None, scale_grad_by_freq: bool) -> Tensor:
        _check_index("embedding", ids)
        _check_range("embedding", ids, weight.shape[0])
        out = Tensor._empty(ids.shape + weight.shape[1:], weight.dtype, weight.device)   # (*, D)
        weight.device.kernels.index_select(weight._array, 0, ids._array, out._array)
        self.save_for_backward(ids)
        self.weight_shape, self.padding_idx, self.scale_grad_by_freq = weight.shape, padding_idx, scale_grad_by_freq
        return out

    def backward(self, grad: Tensor) -> Grads:
        (ids,) = self.saved_tensors
        grad_weight = zeros(self.weight_shape, dtype=grad.dtype, device=grad.device)      # (V, D)
        kernels = grad.device.kernels
        kernels.index_add_along(grad_weight._array, 0, ids._array, grad.contiguous()._array)
        if self.scale_grad_by_freq:
            rows = ids.reshape(-1) % self.weight_shape[0]
            counts = bincount(rows, minlength=self.weight_shape[0]).clamp_min(1)          # (V,)
            grad_weight = grad_weight / counts.to(grad.dtype).unsqueeze(1)
        if self.padding_idx is not None:
            kernels.fill(grad_weight._array[self.padding_idx], 0)
        return (grad_weight, None, None, None)


def _padding_index(padding_idx: int | None, rows: int) -> int | None:
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise ValueError(f"embedding: padding_idx must be within num_embeddings [{-rows}, {rows - 1}], "
                         f"got {padding_idx}")
    return padding_idx % rows


def renorm_rows_(weight: Tensor, ids: Tensor, max_norm: float, norm_type: float = 2.0) -> None:
    """Scale, in place and outside the graph, the rows of weight picked by ids whose norm exceeds
    max_norm down to max_norm (PyTorch's embedding_renorm_: scale max_norm / (norm + 1e-7))."""
    with no_grad():
        picked = unique(ids.reshape(-1))                                                  # (k,)
        rows = weight.index_select(0, picked)                                             # (k, D)
        norms = vector_norm(rows, norm_type, 1, keepdim=True)                             # (k, 1)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_copy_(0, picked, rows * scale)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ShapeError(f"embedding: weight must be a 2-D tensor [num_embeddings, dim], got {describe(weight)}")
    if sparse:
        raise NotImplementedError("embedding: sparse=True needs sparse gradients, which Zero does not have; "
                                  "use sparse=False (a dense gradient)")
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    if max_norm is not None:
        _check_index("embedding", input)
        renorm_rows_(weight, input, max_norm, norm_type)
    return EmbeddingLookup.apply(weight, input, padding_idx, scale_grad_by_freq)


def _bags_of(op: str, input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple[Tensor, Tensor, int]:
    """(ids (n,), the bag of each id (n,) with bag_count for ids past the last bag, bag_count)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{op}: offsets must be None when input is 2-D (B, L) (each row a bag), got "
                             f"{describe(offsets)}")
        count, length = input.shape
        bag = arange(count, device=input.device).unsqueeze(1).expand(count, length).reshape(-1)
        return input.reshape(-1), bag, count
    if input.ndim != 1:
        raise ShapeError(f"{op}: input must be 1-D (with offsets) or 2-D (B, L), got {describe(input)}")
    if offsets is None:
        raise ValueError(f"{op}: offsets must be given when input is 1-D")
    if not isinstance(offsets, Tensor) or offsets.ndim != 1 or offsets.dtype not in (dtypes.int64, dtypes.int32):
        raise ShapeError(f"{op}: offsets must be a 1-D int64 tensor, got {describe(offsets)}")
    if offsets.shape[0] and int(offsets[0].item()) != 0:
        raise ValueError(f"{op}: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                         f"from position 0. However, got {int(offsets[0].item())}")
    count = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    positions = arange(input.shape[0], device=input.device)
    bag = searchsorted(offsets.long(), positions, right=True) - 1                          # (n,)
    return input, bag.clamp_max(count), max(count, 0)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    op = "embedding_bag"
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ShapeError(f"{op}: weight must be a 2-D tensor [num_embeddings, dim], got {describe(weight)}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{op}: mode has to be one of sum, mean or max, got {mode!r}")
    if sparse:
        raise NotImplementedError(f"{op}: sparse=True needs sparse gradients, which Zero does not have; "
                                  "use sparse=False (a dense gradient)")
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a tensor of indices, got {describe(input)}")
    _check_index(op, input)
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"{op}: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode={mode!r}). Please open a feature "
                                      "request on GitHub.")
        if not isinstance(per_sample_weights, Tensor) or per_sample_weights.shape != input.shape:
            raise ShapeError(f"{op}: per_sample_weights {describe(per_sample_weights)} must have the input's "
                             f"shape {list(input.shape)}")
        if per_sample_weights.dtype is not weight.dtype:
            raise DTypeError(f"{op}: per_sample_weights {describe(per_sample_weights)} must have weight's dtype "
                             f"({weight.dtype})")
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    ids, bag, count = _bags_of(op, input, offsets, include_last_offset)
    if max_norm is not None:
        renorm_rows_(weight, ids, max_norm, norm_type)
    dim = weight.shape[1]
    rows = EmbeddingLookup.apply(weight, ids, None, scale_grad_by_freq)                     # (n, D)
    keep = None if padding_idx is None else (ids != padding_idx)                           # (n,)
    if mode == "max":
        return _bag_max(rows, bag, count, keep, dim)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    if keep is not None:
        rows = rows * keep.to(rows.dtype).unsqueeze(1)
    sums = index_add(zeros(count + 1, dim, dtype=weight.dtype, device=weight.device), 0, bag, rows)[:count]
    if mode == "sum":
        return sums                                                                         # (B, D)
    members = keep.long() if keep is not None else ones(ids.shape, dtype=dtypes.int64, device=ids.device)
    sizes = index_add(zeros(count + 1, dtype=dtypes.int64, device=weight.device), 0, bag, members)[:count]
    return sums / sizes.clamp_min(1).to(weight.dtype).unsqueeze(1)                         # (B, D)


def _bag_max(rows: Tensor, bag: Tensor, count: int, keep: Tensor | None, dim: int) -> Tensor:
    """Each bag's elementwise maximum (zeros for an empty bag): rows laid out as
    (B, longest bag, D) with -inf in the gaps, then amax over the bag."""
    member = bag < count if keep is None else (bag < count) & keep                       # (n,)
    sizes = bincount(bag.masked_select(member), minlength=count + 1)[:count]                # (B,)
    longest = int(sizes.max().item()) if count else 0
    if longest == 0:
        return zeros(count, dim, dtype=rows.dtype, device=rows.device) + rows.sum() * 0
    # each kept entry's place within its bag: its position minus its bag's first kept position
    order = member.long().cumsum(0) - 1                                                     # (n,)
    starts = cat([zeros(1, dtype=dtypes.int64, device=rows.device), sizes.cumsum(0)])       # (B + 1,)
    within = order - starts.index_select(0, bag)                                            # (n,)
    slot = where(member, bag.clamp_max(count - 1) * longest + within, count * longest)     # (n,)
    laid = zeros(count * longest + 1, dim, dtype=rows.dtype, device=rows.device) + float("-inf")
    laid = laid.index_copy(0, slot, where(member.unsqueeze(1), rows, float("-inf")))
    best = laid[:count * longest].reshape(count, longest, dim).amax(1)                       # (B, D)
    return where(sizes.unsqueeze(1) > 0, best, 0.0)
