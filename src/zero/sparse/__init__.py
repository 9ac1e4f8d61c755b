"""``zero.sparse``: sparse COO tensors (PyTorch's ``torch.sparse`` and its sparse Tensor methods).

    s = zero.sparse_coo_tensor(indices, values, (n, n))     indices int64 (2, nnz), values (nnz,)
    s @ x, zero.sparse.mm(s, x), zero.spmm(s, x)            dense (n, p); gradients for x and values
    s.to_dense(), x.to_sparse(), s.coalesce()               conversions (differentiable)
    zero.sparse.sum / softmax / log_softmax / addmm / spdiags / as_sparse_gradcheck

The tensor (``tensor.py``): a ``Tensor`` of layout ``zero.sparse_coo`` made of an indices and a
values tensor, which refuses every dense op. The functions (``functions.py``): compositions of
dense ops on those parts (``ops/extra/sparse_products.py``). Dense tensors gain the methods
that meet sparse ones here (``layout``, ``is_sparse``, ``to_sparse``, ``to_dense``, ``sparse_dim``,
``dense_dim``, ``sparse_mask``), attached as ``zero.ops`` attaches the others.
"""
from __future__ import annotations

from typing import Any

from ..tensors.tensor import Tensor
from .functions import (addmm, hspmm, log_softmax, matmul, softmax, sparse_coo_tensor, sparse_mask, sparse_mm,
                        smm, spdiags, sum, to_dense, to_sparse)
from .functions import mm as spmm
from .gradcheck import as_sparse_gradcheck
from .legacy import (BFloat16Tensor, ByteTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
                     LongTensor)
from .tensor import Layout, SparseTensor, sparse_coo, strided

__all__ = ["addmm", "as_sparse_gradcheck", "log_softmax", "mm", "softmax", "spdiags", "sum"]

mm = sparse_mm


def _to_sparse_coo(self: Tensor) -> SparseTensor:
    return to_sparse(self)


def _sparse_dim(self: Tensor) -> int:
    return 0


def _dense_dim(self: Tensor) -> int:
    return self.ndim


def _sparse_only(name: str, layouts: str = "sparse coordinate tensor") -> property:
    """A sparse tensor's method on a strided one: PyTorch's refusal."""
    def refuse(self: Tensor) -> Any:
        def method(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(f"{name} expected {layouts} layout but got Strided")
        return method
    return property(refuse)


# What a strided tensor answers about layouts (SparseTensor overrides each one), and the sparse
# tensor's methods that are zero.sparse's functions.
_DENSE_TENSOR_METHODS = {
    "layout": property(lambda self: strided), "is_sparse": property(lambda self: False),
    "to_sparse": to_sparse, "to_sparse_coo": _to_sparse_coo, "to_dense": to_dense, "sparse_mask": sparse_mask,
    "sparse_dim": _sparse_dim, "dense_dim": _dense_dim,
    "coalesce": _sparse_only("coalesce"), "is_coalesced": _sparse_only("is_coalesced"),
    "indices": _sparse_only("indices"), "values": _sparse_only("values", "sparse tensor"),
    "smm": smm,
}
for _name, _value in _DENSE_TENSOR_METHODS.items():
    setattr(Tensor, _name, _value)
for _name, _value in {"sum": sum, "hspmm": hspmm, "smm": smm}.items():
    setattr(SparseTensor, _name, _value)
