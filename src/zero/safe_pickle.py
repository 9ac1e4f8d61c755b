"""Whole objects in a checkpoint (``zero.save(model)``): pickled, as PyTorch saves them, and
unpickled only when the caller says so.

``zero.save`` stores what JSON cannot say -- a whole ``nn.Module``, any other picklable
object -- as a pickle, kept in the safetensors file as one ``uint8`` array under the tag
``{"__pickle__": key}``. The tensors inside it are not pickled: each is stored as a
safetensors tensor of its own (covered by the checksums like every other) and the pickle
refers to it by key (pickle's ``persistent_id``), so tied weights stay tied.

Loading follows PyTorch >= 2.6:

* ``weights_only=True`` (the default) unpickles with a restricted unpickler: the pickle
  may name only the globals allowlisted with ``add_safe_globals`` / ``safe_globals``
  (and a few harmless builtins: ``OrderedDict``, ``set``, ``frozenset``, ``complex``).
  The allowlisted object itself is handed over -- no module is imported by name from
  the file -- and the first other global stops the load with ``pickle.UnpicklingError``
  ("Weights only load failed ... Unsupported global: GLOBAL __main__.Net ..."), before
  anything it names is called.
* ``weights_only=False`` unpickles freely -- which runs whatever code the file names:
  only for files from a trusted source.

A checkpoint without a pickle (state dicts, optimizer states: every file Zero wrote
before) never reaches this module.
"""
from __future__ import annotations

import collections
import io
import pickle
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

PICKLE_TAG = "__pickle__"
_TENSOR_ID = "zero.tensor"

_builtin_safe: dict[str, Any] = {
    "collections.OrderedDict": collections.OrderedDict, "builtins.set": set, "builtins.frozenset": frozenset,
    "builtins.complex": complex,
}
_user_safe: dict[str, Any] = {}  # "module.qualname" -> the object (add_safe_globals)


def _entry(item: Any) -> tuple[str, Any]:
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
        return item[1], item[0]
    if callable(item) and hasattr(item, "__module__") and hasattr(item, "__qualname__"):
        return f"{item.__module__}.{item.__qualname__}", item
    raise TypeError(f"safe globals are classes or functions, or (object, 'module.name') pairs; got {item!r}")


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow these classes/functions in pickles loaded with ``weights_only=True`` (for good)."""
    for item in list(safe_globals):
        name, obj = _entry(item)
        _user_safe[name] = obj


def get_safe_globals() -> list[Any]:
    """What ``add_safe_globals`` has allowed (as PyTorch's list)."""
    return list(_user_safe.values())


def clear_safe_globals() -> None:
    """Forget every global ``add_safe_globals`` allowed."""
    _user_safe.clear()


class safe_globals:  # (PyTorch's name: a class used as a context manager)
    """``with zero.serialization.safe_globals([Net, nn.Linear]): zero.load(path)``: allow
    these globals under ``weights_only=True`` inside the block only."""

    def __init__(self, safe_globals: list[Any]) -> None:
        self.entries = [_entry(item) for item in safe_globals]
        self.before: dict[str, Any] | None = None

    def __enter__(self) -> safe_globals:
        self.before = dict(_user_safe)
        _user_safe.update(self.entries)
        return self

    def __exit__(self, *exc: object) -> None:
        _user_safe.clear()
        _user_safe.update(self.before or {})


# -- save -------------------------------------------------------------------------------------


def dumps(obj: Any, store_tensor: Callable[[Any, int], str]) -> bytes:
    """``obj`` pickled, its tensors replaced by keys that ``store_tensor(tensor, n)`` returns.
    Raises TypeError when pickle cannot store it (a lambda, a local class, an open file)."""
    from .nn.parameter import Parameter
    from .tensors.tensor import Tensor

    seen: dict[int, tuple] = {}
    keep: list[Any] = []  # the tensors, alive until the end (their ids stay unique)

    class Pickler(pickle.Pickler):
        def persistent_id(self, value: Any) -> Any:
            if not isinstance(value, Tensor):
                return None
            pid = seen.get(id(value))
            if pid is None:
                key = store_tensor(value, len(seen))
                pid = (_TENSOR_ID, key, type(value) is Parameter, bool(value.requires_grad))
                seen[id(value)] = pid
                keep.append(value)
            return pid

    buffer = io.BytesIO()
    try:
        Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise TypeError(str(e)) from None
    return buffer.getvalue()


# -- load -------------------------------------------------------------------------------------


def _refusal(path: str, what: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        f"Weights only load failed: {path} holds a pickled object, and the pickle names {what}, which is not an "
        f"allowed global. WeightsUnpickler error: Unsupported global: GLOBAL {what}. If you trust the file's "
        f"source, load it with zero.load(..., weights_only=False) (which can run arbitrary code), or allowlist "
        f"the classes with zero.serialization.add_safe_globals([{what}]) or the "
        f"zero.serialization.safe_globals([{what}]) context manager")


def loads(path: str, data: np.ndarray, tensor: Callable[[str, bool], Any], weights_only: bool) -> Any:
    """Unpickle ``data`` (the stored bytes); ``tensor(key, requires_grad)`` gives a stored tensor."""
    from .nn.parameter import Parameter
    from .errors import DataError

    loaded: dict[str, Any] = {}

    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if not weights_only:
                return super().find_class(module, name)
            key = f"{module}.{name}"
            if key in _user_safe:
                return _user_safe[key]
            if key in _builtin_safe:
                return _builtin_safe[key]
            raise _refusal(path, key)

        def persistent_load(self, pid: Any) -> Any:
            if not (isinstance(pid, tuple) and len(pid) == 4 and pid[0] == _TENSOR_ID and isinstance(pid[1], str)
                    and isinstance(pid[2], bool) and isinstance(pid[3], bool)):
                raise DataError(f"{path}: corrupt pickle: a persistent id {pid!r} is not one of Zero's tensors")
            _, key, is_parameter, requires_grad = pid
            if key not in loaded:
                t = tensor(key, requires_grad and not is_parameter)
                loaded[key] = Parameter(t, requires_grad) if is_parameter else t
            return loaded[key]

    return Unpickler(io.BytesIO(data.tobytes())).load()
