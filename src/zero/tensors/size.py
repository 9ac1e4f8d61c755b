"""``zero.Size``: PyTorch's ``torch.Size``, the tuple subclass that ``x.shape`` and ``x.size()``
give. It is a tuple in every way (compares equal to one, unpacks, hashes alike); it adds
``numel()`` and keeps its type through slicing and ``+``."""
from __future__ import annotations

import math
from typing import SupportsIndex, overload


class Size(tuple):
    """A tensor's shape: ``zero.Size([2, 3])``."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for s in sizes:
            if not isinstance(s, int) and not hasattr(s, "__index__"):
                raise TypeError(f"Size: expected a sequence of ints, got an element of type {type(s).__name__}")
        return super().__new__(cls, (s if type(s) is int else s.__index__() for s in sizes))

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        return math.prod(self)

    @overload
    def __getitem__(self, index: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> Size: ...

    def __getitem__(self, index):
        item = super().__getitem__(index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other: tuple) -> Size:
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: tuple) -> Size:
        return Size(tuple(other) + tuple(self))

    def __mul__(self, times: SupportsIndex) -> Size:
        return Size(tuple(self) * times)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"zero.Size({list(self)})"

    def __reduce__(self):
        return (Size, (tuple(self),))
