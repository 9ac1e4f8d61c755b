"""``torch.utils.data.datapipes.iter``: the built-in iterable-style DataPipes (``zero.data.datapipes``)."""
from __future__ import annotations

from ....data.datapipes import (Batcher, Collator, Concater, Demultiplexer, FileLister, FileOpener, Filter, Forker,
                                Grouper, IterableWrapper, Mapper, Multiplexer, Sampler, ShardingFilter, Shuffler,
                                StreamReader, UnBatcher, Zipper)

__all__ = ["Batcher", "Collator", "Concater", "Demultiplexer", "FileLister", "FileOpener", "Filter", "Forker",
           "Grouper", "IterableWrapper", "Mapper", "Multiplexer", "Sampler", "ShardingFilter", "Shuffler",
           "StreamReader", "UnBatcher", "Zipper"]
