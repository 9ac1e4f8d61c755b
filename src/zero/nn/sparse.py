"""Embedding and EmbeddingBag (PyTorch's ``torch.nn.modules.sparse``); the lookups are in
``zero.ops.extra.embedding``.

Both initialise their table as PyTorch's, N(0, 1), with the padding row (if any) zeroed.
``sparse=True`` is refused: Zero has no sparse gradients.
"""
from __future__ import annotations

from ..errors import ShapeError, describe
from ..grad_mode import no_grad
from ..ops.extra.embedding import embedding, embedding_bag
from ..tensors.creation import empty
from ..tensors.tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter


def _checked_padding_idx(padding_idx: int | None, num_embeddings: int) -> int | None:
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError(f"Padding_idx must be within num_embeddings: got {padding_idx} for "
                             f"{num_embeddings} embeddings")
    return padding_idx % num_embeddings


def _refuse_sparse(name: str, sparse: bool) -> None:
    if sparse:
        raise NotImplementedError(f"{name}: sparse=True needs sparse gradients, which Zero does not have; "
                                  "use sparse=False (a dense gradient)")


def _table(num_embeddings: int, embedding_dim: int, _weight: Tensor | None, device, dtype) -> Parameter:
    if _weight is None:
        return Parameter(empty(num_embeddings, embedding_dim, device=device, dtype=dtype))
    if tuple(_weight.shape) != (num_embeddings, embedding_dim):
        raise AssertionError(f"Shape of weight does not match num_embeddings and embedding_dim: "
                             f"{describe(_weight)} vs [{num_embeddings}, {embedding_dim}]")
    return Parameter(_weight.detach())


def _norm_options_repr(table) -> str:
    """The max_norm, norm_type and scale_grad_by_freq parts of a repr, where not the defaults."""
    s = "" if table.max_norm is None else f", max_norm={table.max_norm}"
    s += "" if table.norm_type == 2 else f", norm_type={table.norm_type}"
    return s + (f", scale_grad_by_freq={table.scale_grad_by_freq}" if table.scale_grad_by_freq else "")


class Embedding(Module):
    """A table of ``num_embeddings`` vectors; ``forward(ids)`` picks rows: (*) -> (*, dim).
    (The book's GPT initialises it N(0, 0.02²) instead: ``zero.models.GPT`` applies it.)"""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None):
        super().__init__()
        _refuse_sparse("Embedding", sparse)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _checked_padding_idx(padding_idx, num_embeddings)
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.sparse = sparse
        self.weight = _table(num_embeddings, embedding_dim, _weight, device, dtype)
        if _weight is None:
            self.reset_parameters()
        self.weight.requires_grad_(not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight, 0.0, 1.0)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0.0)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        s += _norm_options_repr(self)
        if self.sparse:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose table is (a copy of the storage of) ``embeddings`` (V, D), frozen
        unless ``freeze=False``; the padding row is kept as given."""
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            raise ShapeError(f"Embedding.from_pretrained: embeddings must be a 2-D tensor, got "
                             f"{describe(embeddings)}")
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings, without materialising the (n, D) lookups
    as a module output: (B, L) ids or (n,) ids with offsets -> (B, D)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None):
        super().__init__()
        _refuse_sparse("EmbeddingBag", sparse)
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.padding_idx = _checked_padding_idx(padding_idx, num_embeddings)
        self.weight = _table(num_embeddings, embedding_dim, _weight, device, dtype)
        if _weight is None:
            self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight, 0.0, 1.0)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0.0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,  # noqa: A002
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                             self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                             self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        s += _norm_options_repr(self)
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            raise ShapeError(f"EmbeddingBag.from_pretrained: embeddings must be a 2-D tensor, got "
                             f"{describe(embeddings)}")
        rows, dim = embeddings.shape
        bag = cls(rows, dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag
