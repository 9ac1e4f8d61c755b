"""The aliasing rule's other half: a result that PyTorch makes in new memory is new memory in
Zero too, also in an op's no-op cases (``roll(x, 0)``, ``x.repeat(1, 1)``, ``flip(x, ())``),
where a composition of views would otherwise hand back ``x`` or a view of it and writing into
the result would change ``x`` (tests/ops/test_aliasing.py checks every public op against
PyTorch)."""
from __future__ import annotations

from ..tensors.tensor import Tensor
from .conversion import clone


def new_memory(result: Tensor, *inputs: Tensor) -> Tensor:
    """``result``, or a copy of it (in the graph) where it shares storage with one of ``inputs``."""
    if any(result._storage is x._storage for x in inputs):
        return clone(result)
    return result
