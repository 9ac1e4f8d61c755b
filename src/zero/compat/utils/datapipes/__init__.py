"""``torch.utils.data.datapipes`` under Zero: the code is ``zero.data.datapipes``; ``.iter`` and ``.map``
list the built-in DataPipes under PyTorch's addresses."""
from __future__ import annotations

from ....data.datapipes import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe, functional_datapipe
from . import iter, map  # noqa: A004 (PyTorch's module names)

__all__ = ["DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "functional_datapipe", "iter", "map"]
