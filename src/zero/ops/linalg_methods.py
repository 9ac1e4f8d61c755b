"""The Tensor methods of the linear algebra in ``linalg`` (``a.mm(b)``, ``x.diagonal()`` ...),
with the in-place forms of addmm, addmv and baddbmm. Mixed into ``TensorMethods``."""
from __future__ import annotations

from . import inplace, linalg


class LinalgMethods:
    """Mixed into ``Tensor`` through ``TensorMethods``; never instantiated on its own."""

    __slots__ = ()

    def mm(self, mat2):
        return linalg.mm(self, mat2)

    def bmm(self, batch2):
        return linalg.bmm(self, batch2)

    def mv(self, vec):
        return linalg.mv(self, vec)

    def dot(self, other):
        return linalg.dot(self, other)

    def vdot(self, other):
        return linalg.vdot(self, other)

    def outer(self, vec2):
        return linalg.outer(self, vec2)

    ger = outer

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return linalg.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        return linalg.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return linalg.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        return inplace.apply_(self, "addmm_", lambda old: linalg.addmm(old, mat1, mat2, beta=beta, alpha=alpha),
                              (mat1, mat2))

    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        return inplace.apply_(self, "addmv_", lambda old: linalg.addmv(old, mat, vec, beta=beta, alpha=alpha),
                              (mat, vec))

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return inplace.apply_(self, "baddbmm_",
                              lambda old: linalg.baddbmm(old, batch1, batch2, beta=beta, alpha=alpha), (batch1, batch2))

    def diag(self, diagonal=0):
        return linalg.diag(self, diagonal)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return linalg.diagonal(self, offset, dim1, dim2)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        return linalg.diag_embed(self, offset, dim1, dim2)

    def trace(self):
        return linalg.trace(self)

    def kron(self, other):
        return linalg.kron(self, other)
