"""The Tensor methods of the scatters, picks, reshapes, splits and searches in ``scatter``,
``shaping`` and ``searching`` (``x.scatter_(1, index, src)``, ``x.narrow(0, 1, 2)``,
``x.unique()`` ...). Mixed into ``TensorMethods``."""
from __future__ import annotations

from . import inplace, scatter, searching, shaping


class IndexingMethods:
    """Mixed into ``Tensor`` through ``TensorMethods``; never instantiated on its own."""

    __slots__ = ()

    # -- scatters along a dim, out of place and in place --------------------------------------
    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        return scatter.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim, index, src):
        return scatter.scatter_add(self, dim, index, src)

    def index_add(self, dim, index, source, *, alpha=1):
        return scatter.index_add(self, dim, index, source, alpha=alpha)

    def index_copy(self, dim, index, source):
        return scatter.index_copy(self, dim, index, source)

    def index_fill(self, dim, index, value):
        return scatter.index_fill(self, dim, index, value)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return inplace.apply_(self, "scatter_", lambda old: scatter.scatter(old, dim, index, src, value=value,
                                                                            reduce=reduce), (src,))

    def scatter_add_(self, dim, index, src):
        return inplace.apply_(self, "scatter_add_", lambda old: scatter.scatter_add(old, dim, index, src), (src,))

    def index_add_(self, dim, index, source, *, alpha=1):
        return inplace.apply_(self, "index_add_", lambda old: scatter.index_add(old, dim, index, source, alpha=alpha),
                              (source,))

    def index_copy_(self, dim, index, source):
        return inplace.apply_(self, "index_copy_", lambda old: scatter.index_copy(old, dim, index, source), (source,))

    def index_fill_(self, dim, index, value):
        return inplace.apply_(self, "index_fill_", lambda old: scatter.index_fill(old, dim, index, value))

    # -- picks ---------------------------------------------------------------------------------
    def take(self, index):
        return scatter.take(self, index)

    def take_along_dim(self, indices, dim=None):
        return scatter.take_along_dim(self, indices, dim)

    def masked_select(self, mask):
        return scatter.masked_select(self, mask)

    def nonzero(self, *, as_tuple=False):
        return scatter.nonzero(self, as_tuple=as_tuple)

    def argwhere(self):
        return scatter.argwhere(self)

    # -- views and reshapes --------------------------------------------------------------------
    def narrow(self, dim, start, length):
        return shaping.narrow(self, dim, start, length)

    def tile(self, *dims):
        return shaping.tile(self, dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims)

    def movedim(self, source, destination):
        return shaping.movedim(self, source, destination)

    def swapaxes(self, axis0, axis1):
        return shaping.swapaxes(self, axis0, axis1)

    def unflatten(self, dim, sizes):
        return shaping.unflatten(self, dim, sizes)

    moveaxis, swapdims = movedim, swapaxes

    # -- splits, turns and flips ---------------------------------------------------------------
    def tensor_split(self, indices_or_sections, dim=0):
        return shaping.tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections):
        return shaping.hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections):
        return shaping.vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections):
        return shaping.dsplit(self, indices_or_sections)

    def rot90(self, k=1, dims=(0, 1)):
        return shaping.rot90(self, k, dims)

    def fliplr(self):
        return shaping.fliplr(self)

    def flipud(self):
        return shaping.flipud(self)

    # -- searches and counts -------------------------------------------------------------------
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
        return searching.unique(self, sorted, return_inverse, return_counts, dim)

    def bincount(self, weights=None, minlength=0):
        return searching.bincount(self, weights, minlength)

    def histc(self, bins=100, min=0, max=0):  # noqa: A002
        return searching.histc(self, bins, min, max)
