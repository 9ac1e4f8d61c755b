"""The Tensor methods of the reductions ``tensor_methods`` does not hold: products,
statistics (median, aminmax, nansum ...) and norms (``x.norm()``, ``x.dist(y)``). Mixed into
``TensorMethods`` as ``math_methods`` is."""
from __future__ import annotations

from . import inplace, norms, products, statistics


class ReductionMethods:
    """Mixed into ``Tensor`` through ``TensorMethods``; never instantiated on its own."""

    __slots__ = ()

    def prod(self, dim=None, keepdim=False, dtype=None):
        return products.prod(self, dim, keepdim, dtype)

    def cumprod(self, dim, dtype=None):
        return products.cumprod(self, dim, dtype)

    def cumprod_(self, dim, dtype=None):
        return inplace.apply_(self, "cumprod_", lambda old: products.cumprod(old, dim, dtype))

    def count_nonzero(self, dim=None):
        return statistics.count_nonzero(self, dim)

    def nansum(self, dim=None, keepdim=False, dtype=None):
        return statistics.nansum(self, dim, keepdim, dtype)

    def nanmean(self, dim=None, keepdim=False, dtype=None):
        return statistics.nanmean(self, dim, keepdim, dtype)

    def median(self, dim=None, keepdim=False):
        return statistics.median(self, dim, keepdim)

    def aminmax(self, *, dim=None, keepdim=False):
        return statistics.aminmax(self, dim=dim, keepdim=keepdim)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        return norms.norm(self, p, dim, keepdim, dtype)

    def dist(self, other, p=2):
        return norms.dist(self, other, p)
