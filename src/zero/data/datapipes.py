"""DataPipes: PyTorch's ``torch.utils.data.datapipes``, small datasets chained into a pipeline.

    dp = IterableWrapper(range(10)).map(lambda x: x * 2).filter(lambda x: x % 3 == 0).batch(2)
    list(dp)                                   # [[0, 6], [12, 18]] (DataChunks)
    loader = DataLoader(dp.sharding_filter(), batch_size=None, num_workers=2)

Two kinds, as datasets are: an ``IterDataPipe`` is an ``IterableDataset`` (a
stream), a ``MapDataPipe`` a map-style ``Dataset``. A DataPipe class decorated
with ``@functional_datapipe("name")`` becomes a method of every DataPipe of its
kind: ``dp.name(*args)`` is ``TheClass(dp, *args)``. The built-ins:

    iterable        IterableWrapper, map (Mapper), filter (Filter), batch (Batcher -> DataChunk),
                    unbatch (UnBatcher), shuffle (Shuffler), collate (Collator), concat (Concater),
                    zip (Zipper), mux (Multiplexer), fork (Forker), demux (Demultiplexer),
                    groupby (Grouper), sharding_filter (ShardingFilter), Sampler,
                    list_files (FileLister), open_files (FileOpener), read_from_stream (StreamReader)
    map-style       SequenceWrapper, map, batch, concat, zip, shuffle (-> an IterDataPipe)

**One iterator at a time, reset at its start** (PyTorch's rule). An iterator of a
DataPipe calls ``dp.reset()`` when it starts (at its first ``next``; a no-op
unless the DataPipe keeps state) and invalidates the DataPipe's earlier
iterators: using one of those raises ``RuntimeError`` (``fork()`` is the way to
read one DataPipe twice). An error raised inside a DataPipe's ``__iter__`` gets
"This exception is thrown by __iter__ of Name(args)" added to its message. A
``Shuffler`` draws its order in ``reset``: from the seed given by
``set_seed(seed)`` (used once), else from Zero's default generator, so
``zero.manual_seed`` makes a shuffle reproducible.

**With the DataLoader** (as PyTorch's): ``shuffle=`` turns every Shuffler in the
graph on or off; every ``iter(loader)`` draws one seed from the loader's
``generator`` and seeds every random DataPipe from it -- the same seeds in every
worker, so that each worker's ``sharding_filter`` keeps its share of one and the
same order; in worker ``i`` of ``n``, ``sharding_filter`` keeps items ``i, i+n, ...``.

**Type checks.** ``argument_validation`` checks that arguments hinted as a
DataPipe are one (``TypeError``), and, where both the hint and the DataPipe's
class name an element type (``IterDataPipe[int]``), that the types agree.
``runtime_validation`` checks every element an ``__iter__`` yields against its
class's element type (``RuntimeError``); ``runtime_validation_disabled()``
turns that off. (PyTorch 2.13's typing layer is switched off and these two
raise ``AttributeError`` on a DataPipe; Zero does what they document.)
"""
from __future__ import annotations

import copy as copy_module
import fnmatch
import functools
import inspect
import os
import random
import typing
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import Any, TypeVar, get_type_hints

from ..random import Generator, default_generator
from .collate import default_collate
from .dataset import Dataset, IterableDataset
from .sampler import SequentialSampler

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class DataChunk(list):
    """A batch from ``batch()``: a list, that also prints itself (``as_str``) and iterates raw."""

    def __init__(self, items: Iterable) -> None:
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(item) for item in iter(self)) + "]"

    def __iter__(self) -> Iterator:
        yield from super().__iter__()

    def raw_iterator(self) -> Iterator:
        yield from self.items


# ----------------------------------------------------------------------------------------------------------
# the two base classes and their functional forms


def _no_attribute(datapipe, name: str) -> AttributeError:
    return AttributeError(f"'{type(datapipe).__name__}' object has no attribute '{name}'")


class _FunctionalForms:
    """What both kinds share: ``functions`` (name -> the DataPipe it makes; one dict per kind, defined
    by the kind's base class), ``dp.name(...)``, repr."""

    functions: dict[str, Callable]

    def __getattr__(self, name: str):
        function = type(self).functions.get(name)
        if function is None or name.startswith("__"):
            raise _no_attribute(self, name)
        bound = functools.partial(function, self)
        functools.update_wrapper(bound, function, assigned=("__doc__",))
        return bound

    @classmethod
    def register_function(cls, function_name: str, function: Callable) -> None:
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name: str, cls_to_register, enable_df_api_tracing=False) -> None:
        registry = cls.functions
        if function_name in registry:
            raise RuntimeError(f"Unable to add DataPipe function name {function_name} as it is already taken")

        def make(source_dp, *args, **kwargs):
            return cls_to_register(source_dp, *args, **kwargs)

        make.__doc__ = cls_to_register.__doc__
        registry[function_name] = make

    def __repr__(self) -> str:
        return type(self).__qualname__

    def __str__(self) -> str:
        return type(self).__qualname__

    def __dir__(self):
        return list(super().__dir__()) + list(type(self).functions)


def _describe(datapipe) -> str:
    """``Name(arg=value, ...)``: a DataPipe and its constructor arguments, for error messages."""
    try:
        names = set(inspect.signature(type(datapipe)).parameters)
    except (TypeError, ValueError):
        names = set()
    values = vars(datapipe)
    shown = [f"{n}={values[n].__name__ if inspect.isfunction(values[n]) else values[n]!r}"
             for n in sorted(names) if n in values]
    return f"{type(datapipe).__name__}({', '.join(shown)})"


_ONE_ITERATOR = ("This iterator has been invalidated because another iterator has been created from the same "
                 "IterDataPipe: {}\nThis may be caused by multiple references to the same IterDataPipe. We "
                 "recommend using `.fork()` if that is necessary.")


def _new_iterator(datapipe) -> int:
    """Number a new iterator of ``datapipe`` (the only valid one from now on) and reset it."""
    number = datapipe._valid_iterator_id
    datapipe._valid_iterator_id = number = 0 if number is None else number + 1
    datapipe.reset()
    return number


def _check_valid(datapipe, number: int) -> None:
    if datapipe._valid_iterator_id != number:
        raise RuntimeError(_ONE_ITERATOR.format(_describe(datapipe)))


def _annotated(error: Exception, datapipe) -> None:
    """Add which DataPipe raised ``error`` to its message, as PyTorch does (once)."""
    where = f"thrown by __iter__ of {_describe(datapipe)}"
    if not error.args or not isinstance(error.args[0], str):
        error.args = (f"\nThis exception is {where}",)
    elif "thrown by __iter__ of" not in error.args[0] and "another iterator has been created" not in error.args[0]:
        error.args = (error.args[0] + f"\nThis exception is {where}",) + error.args[1:]


class _CheckedIterator:
    """The iterator of a DataPipe whose ``__iter__`` returns one: checked at each ``next``."""

    def __init__(self, iterator, datapipe, number: int) -> None:
        self.iterator, self.datapipe, self.number = iterator, datapipe, number

    def __iter__(self):
        return self

    def __next__(self):
        _check_valid(self.datapipe, self.number)
        return next(self.iterator)


def _one_iterator_at_a_time(iter_function: Callable) -> Callable:
    """Wrap an IterDataPipe's ``__iter__`` as PyTorch does: each iterator, when it starts, resets the
    DataPipe and invalidates the ones before it (using one of those raises ``RuntimeError``)."""
    if inspect.isgeneratorfunction(iter_function):
        @functools.wraps(iter_function)
        def __iter__(self):
            generator = iter_function(self)
            number = _new_iterator(self)   # (at the first next(), as PyTorch's)
            try:
                item = next(generator)
                while True:
                    yield item
                    _check_valid(self, number)
                    item = next(generator)
            except StopIteration:
                return
            except Exception as error:
                _annotated(error, self)
                raise
    else:
        @functools.wraps(iter_function)
        def __iter__(self):
            iterator = iter_function(self)
            return _CheckedIterator(iterator, self, _new_iterator(self))

    __iter__._zero_wrapped = True  # type: ignore[attr-defined]
    return __iter__


class IterDataPipe(_FunctionalForms, IterableDataset[T_co]):
    """An iterable-style DataPipe (an ``IterableDataset``); subclasses define ``__iter__``, may define ``reset``."""

    functions: dict[str, Callable] = {}
    _valid_iterator_id: int | None = None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__iter__")
        if own is not None and not getattr(own, "_zero_wrapped", False):
            cls.__iter__ = _one_iterator_at_a_time(own)  # type: ignore[method-assign]

    def __iter__(self) -> Iterator[T_co]:
        return self  # (PyTorch's default: a DataPipe that is its own iterator)

    def reset(self) -> None:
        """Called by ``iter()`` before iterating: clear buffers and state here (default: nothing)."""


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of data frames (PyTorch's marker class for them)."""

    def _is_dfpipe(self) -> bool:
        return True


class MapDataPipe(_FunctionalForms, Dataset[T_co]):
    """A map-style DataPipe (a ``Dataset``); subclasses define ``__getitem__`` and usually ``__len__``."""

    functions: dict[str, Callable] = {}


# ----------------------------------------------------------------------------------------------------------
# decorators


class functional_datapipe:
    """``@functional_datapipe("name")`` on a DataPipe class: ``dp.name(*args)`` makes ``Class(dp, *args)``."""

    def __init__(self, name: str, enable_df_api_tracing: bool = False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if isinstance(cls, non_deterministic) or (isinstance(cls, type) and issubclass(cls, IterDataPipe)):
            IterDataPipe.register_datapipe_as_function(self.name, cls, self.enable_df_api_tracing)
        elif isinstance(cls, type) and issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        elif not isinstance(cls, type):
            raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
        return cls


_determinism = False


class guaranteed_datapipes_determinism:
    """Inside ``with guaranteed_datapipes_determinism():``, making a ``non_deterministic`` DataPipe raises."""

    def __init__(self) -> None:
        global _determinism
        self.prev = _determinism
        _determinism = True

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        global _determinism
        _determinism = self.prev


class non_deterministic:
    """Marks an IterDataPipe class (or, given a function of its arguments -> bool, some of its uses) as
    non-deterministic: making one under ``guaranteed_datapipes_determinism`` raises ``TypeError``."""

    cls: type | None = None

    def __init__(self, arg) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`, but "
                                f"{arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _determinism:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                                "DataPipe if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        if not (args and isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            name = getattr(args[0], "__name__", repr(args[0])) if args else "nothing"
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {name} is found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        result = self.deterministic_fn(*args, **kwargs)
        if not isinstance(result, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to return a boolean "
                            f"value, but {type(result)} is found")
        if _determinism and result:
            assert self.cls is not None
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                            "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe "
                            "if that is acceptable for your application")
        assert self.cls is not None
        return self.cls(*args, **kwargs)


def _element_type(cls) -> Any:
    """The element type a DataPipe class declares (``class P(IterDataPipe[int])``: int); Any if none."""
    for klass in getattr(cls, "__mro__", (cls,)):
        for base in getattr(klass, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            if isinstance(origin, type) and issubclass(origin, (IterDataPipe, MapDataPipe)):
                arguments = typing.get_args(base)
                if arguments and not isinstance(arguments[0], TypeVar):
                    return arguments[0]
                return Any
    return Any


def _type_text(kind) -> str:
    return kind.__name__ if isinstance(kind, type) and typing.get_origin(kind) is None else repr(kind)


def _is_subtype(left, right) -> bool:
    """Whether every value of type ``left`` is one of ``right`` (plain classes, unions and generic aliases)."""
    if right is Any or left == right:
        return True
    if left is Any:
        return False
    right_origin = typing.get_origin(right)
    if right_origin is typing.Union or type(right).__name__ == "UnionType":
        return any(_is_subtype(left, option) for option in typing.get_args(right))
    left_origin = typing.get_origin(left)
    if left_origin is typing.Union or type(left).__name__ == "UnionType":
        return all(_is_subtype(option, right) for option in typing.get_args(left))
    left_class, right_class = left_origin or left, right_origin or right
    if not (isinstance(left_class, type) and isinstance(right_class, type) and issubclass(left_class, right_class)):
        return False
    right_arguments, left_arguments = typing.get_args(right), typing.get_args(left)
    if not right_arguments:
        return True
    if len(left_arguments) != len(right_arguments):
        return False
    return all(a is Ellipsis or _is_subtype(a, b) for a, b in zip(left_arguments, right_arguments))


def _is_instance(value, kind) -> bool:
    """Whether ``value`` is of type ``kind``, looking inside lists, tuples, sets and dicts for generic aliases."""
    if kind is Any or isinstance(kind, TypeVar):
        return True
    origin = typing.get_origin(kind)
    if origin is typing.Union or type(kind).__name__ == "UnionType":
        return any(_is_instance(value, option) for option in typing.get_args(kind))
    if origin is None:
        return isinstance(value, kind) if isinstance(kind, type) else True
    if not isinstance(value, origin):
        return False
    arguments = typing.get_args(kind)
    if not arguments:
        return True
    if isinstance(value, dict):
        return all(_is_instance(k, arguments[0]) and _is_instance(v, arguments[-1]) for k, v in value.items())
    if isinstance(value, tuple) and not (len(arguments) == 2 and arguments[1] is Ellipsis):
        return len(value) == len(arguments) and all(_is_instance(v, a) for v, a in zip(value, arguments))
    return all(_is_instance(v, arguments[0]) for v in value)


def argument_validation(f: Callable) -> Callable:
    """Check, at each call, the arguments of ``f`` hinted as DataPipes (``TypeError`` if one is not)."""
    signature = inspect.signature(f)
    hints = get_type_hints(f)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            hint = hints.get(name)
            kind = typing.get_origin(hint) or hint
            if not (isinstance(kind, type) and issubclass(kind, (IterDataPipe, MapDataPipe))):
                continue
            if not isinstance(value, IterDataPipe):
                raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found {type(value)}")
            wanted = _element_type(hint) if typing.get_origin(hint) is None else (typing.get_args(hint) or [Any])[0]
            found = _element_type(type(value))
            if wanted is not Any and found is not Any and not _is_subtype(found, wanted):  # (Any: unknown)
                raise TypeError(f"Expected type of argument '{name}' as a subtype of hint {_type_text(wanted)}, "
                                f"but found {_type_text(found)}")
        return f(*args, **kwargs)

    return wrapper


_runtime_validation_enabled = True


class runtime_validation_disabled:
    """Inside ``with runtime_validation_disabled():``, ``runtime_validation`` checks nothing."""

    def __init__(self) -> None:
        global _runtime_validation_enabled
        self.prev = _runtime_validation_enabled
        _runtime_validation_enabled = False

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        global _runtime_validation_enabled
        _runtime_validation_enabled = self.prev


def runtime_validation(f: Callable) -> Callable:
    """On a DataPipe's ``__iter__``: every element yielded must be of the class's element type."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def wrapper(self):
        if not _runtime_validation_enabled:
            yield from f(self)
            return
        kind = _element_type(type(self))
        for element in f(self):
            if not _is_instance(element, kind):
                raise RuntimeError(f"Expected an instance as subtype of {_type_text(kind)}, but found "
                                   f"{element}({type(element)})")
            yield element

    return wrapper


# ----------------------------------------------------------------------------------------------------------
# iterable-style built-ins


def _length(datapipe, of) -> int:
    if isinstance(of, Sized):
        return len(of)
    raise TypeError(f"{type(datapipe).__name__} instance doesn't have valid length")


def _maybe_deepcopy(data, what: str):
    try:
        return copy_module.deepcopy(data)
    except TypeError:
        warnings.warn(f"The input {what} can not be deepcopied, please be aware of in-place modification would "
                      "affect source data.", stacklevel=3)
        return data


class IterableWrapper(IterDataPipe):
    """An iterable as an IterDataPipe (deep-copied first, by default, so later edits of it do not show)."""

    def __init__(self, iterable: Iterable, deepcopy: bool = True) -> None:
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self):
        source = _maybe_deepcopy(self.iterable, "iterable") if self.deepcopy else self.iterable
        yield from source

    def __len__(self) -> int:
        return _length(self, self.iterable)


def _apply_columns(fn: Callable, data, input_col, output_col):
    """``fn`` of the whole item, or of its ``input_col`` column(s), written back as ``Mapper`` does."""
    if input_col is None:
        return fn(data)
    if isinstance(input_col, (list, tuple)):
        result = fn(*(data[column] for column in input_col))
    else:
        result = fn(data[input_col])
    was_tuple = isinstance(data, tuple)
    data = list(data) if was_tuple else data
    if output_col is None:
        if isinstance(input_col, (list, tuple)):
            data[input_col[0]] = result
            for column in sorted(input_col[1:], reverse=True):
                del data[column]
        else:
            data[input_col] = result
    elif output_col == -1:
        data.append(result)
    else:
        data[output_col] = result
    return tuple(data) if was_tuple else data


def _output_column(input_col, output_col):
    if input_col is None and output_col is not None:
        raise ValueError("`output_col` must be None when `input_col` is None.")
    if isinstance(output_col, (list, tuple)):
        if len(output_col) > 1:
            raise ValueError("`output_col` must be a single-element list or tuple")
        output_col = output_col[0]
    return output_col


@functional_datapipe("map")
class Mapper(IterDataPipe):
    """``fn`` of each item (or of its ``input_col`` columns, written to ``output_col``; -1 appends)."""

    def __init__(self, datapipe: IterDataPipe, fn: Callable, input_col=None, output_col=None) -> None:
        self.datapipe = datapipe
        self.fn = fn
        self.input_col = input_col
        self.output_col = _output_column(input_col, output_col)

    def __iter__(self):
        for data in self.datapipe:
            yield _apply_columns(self.fn, data, self.input_col, self.output_col)

    def __len__(self) -> int:
        return _length(self, self.datapipe)


@functional_datapipe("collate")
class Collator(Mapper):
    """Each item (a batch) through ``collate_fn``, else ``conversion`` (default: ``default_collate``)."""

    def __init__(self, datapipe: IterDataPipe, conversion: Callable | None = default_collate,
                 collate_fn: Callable | None = None) -> None:
        function = collate_fn if collate_fn is not None else conversion
        if not callable(function):
            raise TypeError("Collator: a dict of conversions is for data frames, which Zero does not support; "
                            "pass a collate function")
        super().__init__(datapipe, fn=function)


@functional_datapipe("filter")
class Filter(IterDataPipe):
    """The items for which ``filter_fn`` (of the item, or of its ``input_col`` columns) is True."""

    def __init__(self, datapipe: IterDataPipe, filter_fn: Callable, input_col=None) -> None:
        self.datapipe = datapipe
        self.filter_fn = filter_fn
        self.input_col = input_col

    def _keep(self, data) -> bool:
        column = self.input_col
        if column is None:
            keep = self.filter_fn(data)
        elif isinstance(column, (list, tuple)):
            keep = self.filter_fn(*(data[c] for c in column))
        else:
            keep = self.filter_fn(data[column])
        if not isinstance(keep, bool):   # (a 0-d bool tensor too, as PyTorch)
            raise ValueError("Boolean output is required for `filter_fn` of FilterIterDataPipe, got", type(keep))
        return keep

    def __iter__(self):
        for data in self.datapipe:
            if self._keep(data):
                yield data


class _Batching:
    """What the two ``batch`` DataPipes share: their arguments and length."""

    def __init__(self, datapipe, batch_size: int, drop_last: bool = False, wrapper_class: type = DataChunk) -> None:
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe = datapipe
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.wrapper_class = wrapper_class

    def __len__(self) -> int:
        n = _length(self, self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("batch")
class Batcher(_Batching, IterDataPipe):
    """Consecutive items in batches of ``batch_size`` (``wrapper_class``, a DataChunk); the last may be short."""

    def __iter__(self):
        batch: list = []
        for item in self.datapipe:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)


@functional_datapipe("unbatch")
class UnBatcher(IterDataPipe):
    """The items of each batch, ``unbatch_level`` levels down (-1: all the way to non-lists)."""

    def __init__(self, datapipe: IterDataPipe, unbatch_level: int = 1) -> None:
        self.datapipe = datapipe
        self.unbatch_level = unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, self.unbatch_level)

    def _dive(self, element, level: int):
        if level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if level == 0:
            yield element
        elif isinstance(element, list):
            for item in element:
                yield from self._dive(item, level - 1 if level > 0 else -1)
        elif level == -1:
            yield element
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the DataPipe")


@functional_datapipe("groupby")
class Grouper(IterDataPipe):
    """Items in DataChunks of one ``group_key_fn`` key each (``(key, chunk)`` with ``keep_key``).

    A group is yielded when it reaches ``group_size``; when ``buffer_size`` items wait, the largest
    group goes (dropped if smaller than ``guaranteed_group_size`` with ``drop_remaining``, else a
    RuntimeError); at the end the rest, in the order their keys first came. (PyTorch pairs a group
    evicted from a full buffer with the key of the item just read; Zero with the group's own.)
    """

    def __init__(self, datapipe: IterDataPipe, group_key_fn: Callable, *, keep_key: bool = False,
                 buffer_size: int = 10000, group_size: int | None = None, guaranteed_group_size: int | None = None,
                 drop_remaining: bool = False) -> None:
        self.datapipe = datapipe
        self.group_key_fn = group_key_fn
        self.keep_key = keep_key
        self.max_buffer_size = buffer_size
        self.group_size = group_size
        self.guaranteed_group_size = None
        if group_size is not None and buffer_size is not None:
            if not 0 < group_size <= buffer_size:
                raise AssertionError("group_size must be > 0 and <= buffer_size")
            self.guaranteed_group_size = group_size
        if guaranteed_group_size is not None:
            if group_size is None or not 0 < guaranteed_group_size <= group_size:
                raise AssertionError("guaranteed_group_size must be > 0 and <= group_size and group_size must be "
                                     "set")
            self.guaranteed_group_size = guaranteed_group_size
        self.drop_remaining = drop_remaining
        self.wrapper_class = DataChunk

    def _out(self, key, items):
        chunk = self.wrapper_class(items)
        return (key, chunk) if self.keep_key else chunk

    def __iter__(self):
        groups: dict = {}
        waiting = 0
        for item in self.datapipe:
            key = self.group_key_fn(item)
            groups.setdefault(key, []).append(item)
            waiting += 1
            if self.group_size is not None and len(groups[key]) == self.group_size:
                waiting -= self.group_size
                yield self._out(key, groups.pop(key))
            if waiting == self.max_buffer_size:
                biggest = max(groups, key=lambda k: len(groups[k]))   # (the first of the largest)
                items = groups.pop(biggest)
                waiting -= len(items)
                guaranteed = self.guaranteed_group_size
                if guaranteed is None or len(items) >= guaranteed:
                    yield self._out(biggest, items)
                elif not self.drop_remaining:
                    raise RuntimeError("Failed to group items", str(items))
        for key in list(groups):
            yield self._out(key, groups.pop(key))


@functional_datapipe("shuffle")
class Shuffler(IterDataPipe):
    """The items in a random order, through a buffer of ``buffer_size`` (a full shuffle when it holds them all).

    Seeded by ``set_seed(seed)`` (once, at the next ``iter()``), else from Zero's default generator;
    ``set_shuffle(False)`` passes the items through in order.
    """

    def __init__(self, datapipe: IterDataPipe, *, buffer_size: int = 10000, unbatch_level: int = 0) -> None:
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        self.datapipe = datapipe if unbatch_level == 0 else UnBatcher(datapipe, unbatch_level)
        self.buffer_size = buffer_size
        self._buffer: list = []
        self._enabled = True
        self._seed: int | None = None
        self._rng = random.Random()

    def set_shuffle(self, shuffle: bool = True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed: int):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        buffer = self._buffer
        for item in self.datapipe:
            if len(buffer) == self.buffer_size:
                i = self._rng.randint(0, len(buffer) - 1)
                item, buffer[i] = buffer[i], item
                yield item
            else:
                buffer.append(item)
        while buffer:
            yield buffer.pop(self._rng.randint(0, len(buffer) - 1))

    def __len__(self) -> int:
        return _length(self, self.datapipe)

    def reset(self) -> None:
        self._buffer = []
        if self._enabled:
            if self._seed is None:
                self._seed = default_generator().next_seed()
            self._rng.seed(self._seed)
            self._seed = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_rng"] = self._rng.getstate()
        return state

    def __setstate__(self, state) -> None:
        rng = random.Random()
        rng.setstate(state["_rng"])
        self.__dict__.update(state, _rng=rng)


def _check_iter_inputs(datapipes) -> None:
    if len(datapipes) == 0:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `IterDataPipe`")


@functional_datapipe("concat")
class Concater(IterDataPipe):
    """The items of each DataPipe in turn."""

    def __init__(self, *datapipes: IterDataPipe) -> None:
        _check_iter_inputs(datapipes)
        self.datapipes = datapipes

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp

    def __len__(self) -> int:
        if all(isinstance(dp, Sized) for dp in self.datapipes):
            return sum(len(dp) for dp in self.datapipes)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


@functional_datapipe("zip")
class Zipper(IterDataPipe):
    """Tuples of one item of each DataPipe, until the shortest ends."""

    def __init__(self, *datapipes: IterDataPipe) -> None:
        if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
            raise TypeError("All inputs are required to be `IterDataPipe` for `ZipIterDataPipe`.")
        self.datapipes = datapipes

    def __iter__(self):
        yield from zip(*self.datapipes)

    def __len__(self) -> int:
        if all(isinstance(dp, Sized) for dp in self.datapipes):
            return min(len(dp) for dp in self.datapipes)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


@functional_datapipe("mux")
class Multiplexer(IterDataPipe):
    """One item of each DataPipe in turn, until the shortest ends (an incomplete round is dropped)."""

    def __init__(self, *datapipes: IterDataPipe) -> None:
        self.datapipes = datapipes

    def __iter__(self):
        iterators = [iter(dp) for dp in self.datapipes]
        while iterators:
            try:
                round_ = [next(it) for it in iterators]
            except StopIteration:
                return
            yield from round_

    def __len__(self) -> int:
        if all(isinstance(dp, Sized) for dp in self.datapipes):
            return min(len(dp) for dp in self.datapipes) * len(self.datapipes)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


class _Branches:
    """The source shared by the children of ``fork``/``demux``: one iterator of it, and per-child queues."""

    def __init__(self, datapipe: IterDataPipe, num_instances: int, buffer_size: int, name: str) -> None:
        self.main_datapipe = datapipe
        self.num_instances = num_instances
        self.buffer_size = buffer_size
        self.name = name
        if buffer_size < 0:
            warnings.warn(f"Unlimited buffer size is set for `{name}`, please be aware of OOM at random places",
                          UserWarning, stacklevel=4)
        self._restart()

    def _restart(self) -> None:
        self.generation = getattr(self, "generation", -1) + 1   # (a child's iterator of an older one is stale)
        self.iterator: Iterator | None = None
        self.queues: list[deque] = [deque() for _ in range(self.num_instances)]
        self.started = [False] * self.num_instances
        self.finished = [False] * self.num_instances
        self.source_done = False

    def begin(self, instance_id: int) -> None:
        """Child ``instance_id`` starts iterating: a new pass over the source if it has begun this one."""
        if self.started[instance_id] or self.iterator is None and self.source_done:
            if any(s and not f for s, f in zip(self.started, self.finished)):
                warnings.warn("Some child DataPipes are not exhausted when __iter__ is called. We are resetting "
                              "the buffer and each child DataPipe will read from the start again.", UserWarning,
                              stacklevel=4)
            self._restart()
        if self.iterator is None and not self.source_done:
            self.iterator = iter(self.main_datapipe)
        self.started[instance_id] = True

    def next_for(self, instance_id: int):
        queue = self.queues[instance_id]
        while True:
            if queue:
                return queue.popleft()
            if self.source_done or self.iterator is None:
                self.finished[instance_id] = True
                raise StopIteration
            try:
                item = next(self.iterator)
            except StopIteration:
                self.source_done, self.iterator = True, None
                continue
            mine = self.route(instance_id, item)
            if mine is not _NOTHING:
                return mine

    def route(self, instance_id: int, item):
        raise NotImplementedError  # (fork and demux differ here)

    def __len__(self) -> int:
        return len(self.main_datapipe)


_NOTHING = object()


class _ForkBranches(_Branches):
    def __init__(self, datapipe, num_instances, buffer_size, copy) -> None:
        super().__init__(datapipe, num_instances, buffer_size, "fork")
        if copy is None:
            self.copy_fn: Callable = lambda x: x
        elif copy == "shallow":
            self.copy_fn = copy_module.copy
        elif copy == "deep":
            self.copy_fn = copy_module.deepcopy
        else:
            raise ValueError(f"Unknown copy method `{copy}` requested, choose one of None, `shallow` or `deep`.")

    def route(self, instance_id: int, item):
        for other, queue in enumerate(self.queues):
            if other != instance_id and not self.finished[other]:
                queue.append(item)
                if 0 <= self.buffer_size < len(queue):
                    raise BufferError(f"ForkerIterDataPipe buffer overflow,buffer size {self.buffer_size} is "
                                      "insufficient.")
        return item

    def next_for(self, instance_id: int):
        return self.copy_fn(super().next_for(instance_id))


class _DemuxBranches(_Branches):
    def __init__(self, datapipe, num_instances, classifier_fn, drop_none, buffer_size) -> None:
        super().__init__(datapipe, num_instances, buffer_size, "demux")
        self.classifier_fn = classifier_fn
        self.drop_none = drop_none

    def route(self, instance_id: int, item):
        kind = self.classifier_fn(item)
        if kind is None and self.drop_none:
            return _NOTHING
        if kind is None or not 0 <= kind < self.num_instances:
            raise ValueError(f"Output of the classification fn should be between 0 and {self.num_instances - 1}. "
                             f"{kind} is returned.")
        if kind == instance_id:
            return item
        self.queues[kind].append(item)
        if 0 <= self.buffer_size < sum(len(q) for q in self.queues):
            raise BufferError(f"DemultiplexerIterDataPipe buffer overflow, buffer size {self.buffer_size} is "
                              "insufficient.")
        return _NOTHING


class _Child(IterDataPipe):
    """One branch of ``fork``/``demux``."""

    def __init__(self, branches: _Branches, instance_id: int) -> None:
        self.main_datapipe = branches
        self.instance_id = instance_id

    def __iter__(self):
        branches, instance_id = self.main_datapipe, self.instance_id
        branches.begin(instance_id)
        generation = branches.generation
        while True:
            if branches.generation != generation:
                raise RuntimeError("This iterator has been invalidated, because a new iterator has been created "
                                   f"from one of the ChildDataPipes of {_describe(branches)}.")
            try:
                item = branches.next_for(instance_id)
            except StopIteration:
                return
            yield item

    def __len__(self) -> int:
        if isinstance(self.main_datapipe, _ForkBranches):
            return len(self.main_datapipe)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


@functional_datapipe("fork")
class Forker(IterDataPipe):
    """``num_instances`` copies of a DataPipe, read from one pass over it (at most ``buffer_size`` apart)."""

    def __new__(cls, datapipe: IterDataPipe, num_instances: int, buffer_size: int = 1000,
                copy: str | None = None):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instances` larger than 0, but {num_instances} is found")
        if num_instances == 1:
            return datapipe
        branches = _ForkBranches(datapipe, num_instances, buffer_size, copy)
        return [_Child(branches, i) for i in range(num_instances)]


@functional_datapipe("demux")
class Demultiplexer(IterDataPipe):
    """``num_instances`` DataPipes: item ``x`` goes to number ``classifier_fn(x)`` (None: dropped with
    ``drop_none``); at most ``buffer_size`` items wait for a slower child."""

    def __new__(cls, datapipe: IterDataPipe, num_instances: int, classifier_fn: Callable,
                drop_none: bool = False, buffer_size: int = 1000):
        if num_instances < 1:
            raise ValueError(f"Expected `num_instances` larger than 0, but {num_instances} is found")
        branches = _DemuxBranches(datapipe, num_instances, classifier_fn, drop_none, buffer_size)
        return [_Child(branches, i) for i in range(num_instances)]


@functional_datapipe("sharding_filter")
class ShardingFilter(IterDataPipe):
    """Every ``num_of_instances``-th item from ``instance_id`` (set by ``apply_sharding``; the DataLoader
    sets it to the worker's share)."""

    def __init__(self, source_datapipe: IterDataPipe, sharding_group_filter=None) -> None:
        self.source_datapipe = source_datapipe
        self.sharding_group_filter = sharding_group_filter
        self.groups: dict[int, tuple[int, int]] = {}
        self.num_of_instances = 1
        self.instance_id = 0

    def apply_sharding(self, num_of_instances: int, instance_id: int, sharding_group: int = 1) -> None:
        if instance_id >= num_of_instances:
            raise ValueError(f"instance_id({instance_id}) should be smaller than "
                             f"num_of_instances({num_of_instances})")
        self.groups[sharding_group] = (num_of_instances, instance_id)
        self.num_of_instances, self.instance_id = 1, 0
        chosen = [self.groups[k] for k in sorted(self.groups)
                  if self.sharding_group_filter is None or k == self.sharding_group_filter]
        for count, index in reversed(chosen):
            self.instance_id += self.num_of_instances * index
            self.num_of_instances *= count

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self) -> int:
        n = _length(self, self.source_datapipe)
        return n // self.num_of_instances + (1 if self.instance_id < n % self.num_of_instances else 0)


class Sampler(IterDataPipe):
    """The items of a sized DataPipe in the order of ``sampler`` (a Sampler class; default SequentialSampler)."""

    def __init__(self, datapipe: IterDataPipe, sampler: type = SequentialSampler, sampler_args: tuple | None = None,
                 sampler_kwargs: dict | None = None) -> None:
        if not isinstance(datapipe, Sized):
            raise AssertionError("Sampler class requires input datapipe implemented `__len__`")
        self.datapipe = datapipe
        self.sampler = sampler(*(sampler_args or ()), data_source=datapipe, **(sampler_kwargs or {}))

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self) -> int:
        return len(self.sampler)


# ----------------------------------------------------------------------------------------------------------
# files


class StreamWrapper:
    """An open file as the file DataPipes yield it: the file's methods, and closed when dropped."""

    def __init__(self, file_obj, parent_stream=None, name: str | None = None) -> None:
        self.file_obj = file_obj
        self.parent_stream = parent_stream
        self.name = name
        self.closed = False

    def __getattr__(self, name: str):
        if name == "file_obj" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.file_obj, name)

    def close(self, *args, **kwargs) -> None:
        if not self.closed:
            self.closed = True
            self.file_obj.close(*args, **kwargs)

    def __iter__(self):
        yield from self.file_obj

    def __next__(self):
        return next(self.file_obj)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "closed", True):
            self.close()

    def __repr__(self) -> str:
        return f"StreamWrapper<{self.name!r}>" if self.name is not None else f"StreamWrapper<{self.file_obj!r}>"


def _matches(name: str, masks) -> bool:
    if not masks:
        return True
    return any(fnmatch.fnmatch(name, mask) for mask in ([masks] if isinstance(masks, str) else masks))


@functional_datapipe("list_files")
class FileLister(IterDataPipe):
    """The paths of the files under each root (its files only, or all below with ``recursive``), whose
    names match ``masks`` (shell patterns; none: all), in sorted order unless ``non_deterministic``."""

    def __init__(self, root=".", masks="", *, recursive: bool = False, abspath: bool = False,
                 non_deterministic: bool = False, length: int = -1) -> None:
        if isinstance(root, str):
            root = [root]
        self.datapipe = root if isinstance(root, IterDataPipe) else IterableWrapper(root)
        self.masks = masks
        self.recursive = recursive
        self.abspath = abspath
        self.non_deterministic = non_deterministic
        self.length = length

    def _paths(self, root: str):
        if os.path.isfile(root):
            path = os.path.abspath(root) if self.abspath else root
            if _matches(os.path.basename(path), self.masks):
                yield path
            return
        for directory, subdirectories, files in os.walk(root, onerror=_raise_os_error):
            if self.abspath:
                directory = os.path.abspath(directory)
            if not self.non_deterministic:
                files.sort()
                subdirectories.sort()   # (in place: os.walk descends in this order)
            for name in files:
                if _matches(name, self.masks):
                    yield os.path.join(directory, name)
            if not self.recursive:
                return

    def __iter__(self):
        for root in self.datapipe:
            yield from self._paths(root)

    def __len__(self) -> int:
        if self.length == -1:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
        return self.length


def _raise_os_error(error: OSError):
    warnings.warn(f"{error.filename} : {error.strerror}", stacklevel=2)
    raise error


@functional_datapipe("open_files")
class FileOpener(IterDataPipe):
    """``(path, stream)`` for each path: the file opened in ``mode`` ("r", "rt", "t", "rb" or "b")."""

    def __init__(self, datapipe: Iterable[str], mode: str = "r", encoding: str | None = None,
                 length: int = -1) -> None:
        if mode not in ("b", "t", "rb", "rt", "r"):
            raise ValueError(f"Invalid mode {mode}")
        if "b" in mode and encoding is not None:
            raise ValueError("binary mode doesn't take an encoding argument")
        self.datapipe = datapipe
        self.mode = mode
        self.encoding = encoding
        self.length = length

    def __iter__(self):
        mode = "r" + self.mode if self.mode in ("b", "t") else self.mode
        for path in self.datapipe:
            if not isinstance(path, str):
                raise TypeError(f"Expected string type for pathname, but got {type(path)}")
            yield path, StreamWrapper(open(path, mode, encoding=self.encoding))  # (closed by its reader)

    def __len__(self) -> int:
        if self.length == -1:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
        return self.length


@functional_datapipe("read_from_stream")
class StreamReader(IterDataPipe):
    """``(path, data)``: each stream read whole, or in pieces of ``chunk``; closed at its end."""

    def __init__(self, datapipe: IterDataPipe, chunk: int | None = None) -> None:
        self.datapipe = datapipe
        self.chunk = chunk

    def __iter__(self):
        for path, stream in self.datapipe:
            while True:
                data = stream.read(self.chunk)
                if not data:
                    stream.close()
                    break
                yield path, data


# ----------------------------------------------------------------------------------------------------------
# map-style built-ins


class SequenceWrapper(MapDataPipe):
    """A sequence (or mapping) as a MapDataPipe (deep-copied first, by default)."""

    def __init__(self, sequence, deepcopy: bool = True) -> None:
        self.sequence = _maybe_deepcopy(sequence, "sequence") if deepcopy else sequence

    def __getitem__(self, index):
        return self.sequence[index]

    def __len__(self) -> int:
        return len(self.sequence)


@functional_datapipe("map")
class MapMapper(MapDataPipe):
    """``fn`` of the item at each index."""

    def __init__(self, datapipe: MapDataPipe, fn: Callable) -> None:
        self.datapipe = datapipe
        self.fn = fn

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])

    def __len__(self) -> int:
        return _length(self, self.datapipe)


@functional_datapipe("batch")
class MapBatcher(_Batching, MapDataPipe):
    """Batch ``i``: the items ``i * batch_size ..`` as a DataChunk (the last may be short)."""

    def __getitem__(self, index):
        batch: list = []
        try:
            for i in range(index * self.batch_size, (index + 1) * self.batch_size):
                batch.append(self.datapipe[i])
        except IndexError as error:
            if self.drop_last or not batch:
                raise IndexError(f"Index {index} is out of bound.") from error
        return self.wrapper_class(batch)


def _check_map_inputs(datapipes) -> None:
    if len(datapipes) == 0:
        raise ValueError("Expected at least one DataPipe, but got nothing")
    if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
        raise TypeError("Expected all inputs to be `MapDataPipe`")
    if not all(isinstance(dp, Sized) for dp in datapipes):
        raise TypeError("Expected all inputs to be `Sized`")


@functional_datapipe("concat")
class MapConcater(MapDataPipe):
    """The items of each DataPipe in turn: indices run through the first, then the second ..."""

    def __init__(self, *datapipes: MapDataPipe) -> None:
        _check_map_inputs(datapipes)
        self.datapipes = datapipes

    def __getitem__(self, index):
        offset = index
        for dp in self.datapipes:
            if offset < len(dp):
                return dp[offset]
            offset -= len(dp)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self) -> int:
        return sum(len(dp) for dp in self.datapipes)


@functional_datapipe("zip")
class MapZipper(MapDataPipe):
    """Item ``i``: the tuple of the DataPipes' items ``i`` (as long as the shortest)."""

    def __init__(self, *datapipes: MapDataPipe) -> None:
        _check_map_inputs(datapipes)
        self.datapipes = datapipes

    def __getitem__(self, index):
        items = []
        for dp in self.datapipes:
            try:
                items.append(dp[index])
            except IndexError as error:
                raise IndexError(f"Index {index} is out of range for one of the input MapDataPipes {dp}.") \
                    from error
        return tuple(items)

    def __len__(self) -> int:
        return min(len(dp) for dp in self.datapipes)


class MapShuffler(IterDataPipe):
    """``map_dp.shuffle()``: the items of a MapDataPipe, in a random order of its ``indices``, as an
    IterDataPipe (seeded as ``Shuffler`` is)."""

    def __init__(self, datapipe: MapDataPipe, *, indices: list | None = None) -> None:
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._enabled = True
        self._seed: int | None = None
        self._rng = random.Random()
        self._order: list = list(self.indices)

    set_shuffle = Shuffler.set_shuffle
    set_seed = Shuffler.set_seed
    __getstate__ = Shuffler.__getstate__
    __setstate__ = Shuffler.__setstate__

    def __iter__(self):
        if not self._enabled:
            for index in self.indices:
                yield self.datapipe[index]
            return
        while self._order:
            yield self.datapipe[self._order.pop()]

    def reset(self) -> None:
        if self._enabled and self._seed is None:
            self._seed = default_generator().next_seed()
        self._rng.seed(self._seed)
        self._seed = None
        self._order = self._rng.sample(self.indices, len(self.indices))

    def __len__(self) -> int:
        return len(self.datapipe)


MapDataPipe.register_datapipe_as_function("shuffle", MapShuffler)


# ----------------------------------------------------------------------------------------------------------
# the graph of a pipeline, for the DataLoader (PyTorch's torch.utils.data.graph_settings)


def _children(datapipe) -> list:
    found = []
    for value in getattr(datapipe, "__dict__", {}).values():
        for item in (value if isinstance(value, (list, tuple)) else (value,)):
            if isinstance(item, (IterDataPipe, MapDataPipe, _Branches)):
                found.append(item)
    return found


def all_datapipes(datapipe) -> list:
    """Every DataPipe of the graph that ends in ``datapipe`` (each once, the end first)."""
    seen: set[int] = set()
    order = []
    stack = [datapipe]
    while stack:
        dp = stack.pop()
        if id(dp) in seen:
            continue
        seen.add(id(dp))
        order.append(dp)
        stack.extend(reversed(_children(dp)))
    return [dp for dp in order if not isinstance(dp, _Branches)]


def apply_sharding(datapipe, num_of_instances: int, instance_id: int):
    """Shard the graph's ``sharding_filter`` (one per branch; a second on the same path raises)."""

    def visit(dp, applied, seen) -> None:
        if id(dp) in seen:
            return
        seen = seen | {id(dp)}
        if inspect.ismethod(getattr(dp, "apply_sharding", None)):
            if applied is not None:
                raise RuntimeError("Sharding twice on a single pipeline is likely unintended and will cause data "
                                   f"loss. Sharding already applied to {applied} while trying to apply to {dp}")
            dp.apply_sharding(num_of_instances, instance_id)
            applied = dp
        for child in _children(dp):
            visit(child, applied, seen)

    visit(datapipe, None, frozenset())
    return datapipe


def _is_shuffler(dp) -> bool:
    return inspect.ismethod(getattr(dp, "set_shuffle", None)) and inspect.ismethod(getattr(dp, "set_seed", None))


def apply_shuffle_settings(datapipe, shuffle: bool | None = None):
    """``DataLoader(shuffle=)`` on a pipeline: every Shuffler on or off (one added at the end if none)."""
    if shuffle is None:
        return datapipe
    shufflers = [dp for dp in all_datapipes(datapipe) if _is_shuffler(dp)]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. Adding one at the "
                      "end. Be aware that the default buffer size might not be sufficient for your task.",
                      stacklevel=3)
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for shuffler in shufflers:
        shuffler.set_shuffle(shuffle)
    return datapipe


def apply_random_seed(datapipe, rng):
    """Seed every random DataPipe of the graph (one with ``set_seed``) from ``rng`` (a Zero Generator)."""
    for dp in all_datapipes(datapipe):
        if inspect.ismethod(getattr(dp, "set_seed", None)):
            dp.set_seed(rng.next_seed())
    return datapipe


def seed_datapipes(dataset, generator) -> int | None:
    """At ``iter(loader)`` of a pipeline: one seed from the loader's generator seeds its random DataPipes
    (the same in every worker); returns it (None for a dataset that is not an IterDataPipe)."""
    if not isinstance(dataset, IterDataPipe):
        return None
    seed = (generator or default_generator()).next_seed()
    apply_random_seed(dataset, Generator(seed=seed))
    return seed
