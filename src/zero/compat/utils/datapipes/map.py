"""``torch.utils.data.datapipes.map``: the built-in map-style DataPipes (``zero.data.datapipes``)."""
from __future__ import annotations

from ....data.datapipes import MapBatcher as Batcher
from ....data.datapipes import MapConcater as Concater
from ....data.datapipes import MapMapper as Mapper
from ....data.datapipes import MapShuffler as Shuffler
from ....data.datapipes import MapZipper as Zipper
from ....data.datapipes import SequenceWrapper

__all__ = ["Batcher", "Concater", "Mapper", "SequenceWrapper", "Shuffler", "Zipper"]
