"""Checkpoints: ``zero.save(obj, path)`` and ``zero.load(path)``.

``obj`` is a tensor, or nested dicts / lists / tuples of tensors, NumPy arrays
and JSON values (int, float, str, bool, None) -- a model's ``state_dict()``, an
optimizer's (whose ``state`` is keyed by ints), RNG states with 128-bit ints,
step counters, hyper-parameters.

The file is one safetensors file:

    8 bytes      little-endian length of the header
    header       JSON: for each tensor its dtype, shape and byte range; and
                 "__metadata__": {"format": "zero", "zero.checkpoint": "1",
                                  "zero.structure": "<JSON of obj>",
                                  "zero.crc32": "<JSON {key: CRC-32 of its bytes}>"}
    data         the tensors' bytes, back to back

Tensors are stored under readable dotted keys ("model.fc1.weight"), so
``safetensors.numpy.load_file(path)`` (or PyTorch's safetensors) reads the
weights without Zero. The structure -- everything that is not a tensor, plus
where each tensor sits -- is JSON kept in the safetensors metadata. One file
rather than a sibling ``.json``: a single ``os.replace`` swaps both at once, so
weights and step counter can never come from two different saves.

Loading parses JSON and raw bytes only: nothing in the file is ever executed
(no pickle). It checks that the file is whole (the header's byte ranges match
the file's length) and that each tensor's bytes match their CRC-32, so a
truncated or damaged file is named, never half-loaded. (Integrity, not
authenticity: a CRC catches accidents, not tampering.) A plain safetensors
file without Zero's metadata loads as a flat ``{key: tensor}`` dict.

The structure JSON tags what JSON cannot say itself:

    tensor                       {"__tensor__": "model.fc1.weight"}
    NumPy array                  {"__ndarray__": "key"}
    tuple                        {"__tuple__": [...]}
    dict with non-str keys       {"__dict__": [[key, value], ...]}  (int keys stay ints)

Tensors are copied to the host to be saved (whatever their device and
layout: views and non-contiguous tensors are fine). Two tensors that share
storage are saved as independent copies and load as independent tensors.

Writes are atomic (``zero.files.atomic_write``): a crash at any moment leaves
either the old file or the new one, never a half-written one.
"""
from __future__ import annotations

import errno
import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np
import safetensors.numpy

from .backends.device import to_device
from .errors import DataError
from .files import atomic_write
from .tensors.creation import from_numpy, tensor
from .tensors.tensor import Tensor

FORMAT_VERSION = "1"
_TAGS = ("__tensor__", "__ndarray__", "__tuple__", "__dict__")
_MAX_HEADER_BYTES = 100 << 20  # safetensors' own limit on the JSON header


# -- save -------------------------------------------------------------------------------------


def _subscript(where: str, key) -> str:
    return f"{where}[{key!r}]"


class _Encoder:
    """Turns ``obj`` into (JSON-able structure, {key: NumPy array})."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def _key(self, names: list) -> str:
        key = ".".join(str(n) for n in names) or "tensor"
        unique, n = key, 1
        while unique in self.arrays:  # {"a.b": x, "a": {"b": y}} both want "a.b"
            n += 1
            unique = f"{key}~{n}"
        return unique

    def _array(self, array: np.ndarray, names: list, where: str) -> str:
        if array.dtype.kind not in "biuf":
            raise TypeError(f"save: cannot store the array at {where}: dtype {array.dtype} "
                            "(supported: bool, integer and floating-point types)")
        key = self._key(names)
        self.arrays[key] = np.asarray(array, dtype=array.dtype.newbyteorder("="), order="C")  # keeps 0-d
        return key

    def encode(self, obj, names: list, where: str):
        if obj is None or isinstance(obj, (bool, int, str)):
            return obj
        if isinstance(obj, float):
            return obj
        if isinstance(obj, Tensor):
            entry: dict = {"__tensor__": self._array(obj.detach()._host_array(), names, where)}
            if obj.requires_grad:
                entry["requires_grad"] = True
            return entry
        if isinstance(obj, np.ndarray):
            return {"__ndarray__": self._array(obj, names, where)}
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            return obj.item()
        if isinstance(obj, list):
            return [self.encode(v, names + [i], _subscript(where, i)) for i, v in enumerate(obj)]
        if isinstance(obj, tuple):
            items = [self.encode(v, names + [i], _subscript(where, i)) for i, v in enumerate(obj)]
            return {"__tuple__": items}
        if isinstance(obj, dict):
            return self._dict(obj, names, where)
        kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
        raise TypeError(f"save: cannot store {where} of type {kind}; "
                        "a checkpoint holds tensors, NumPy arrays, dicts, lists, tuples, str, int, float, "
                        "bool and None")

    def _dict(self, obj: dict, names: list, where: str):
        for key in obj:
            if not (key is None or isinstance(key, (str, int, float))):  # bool is an int
                raise TypeError(f"save: cannot store the dict key {key!r} of type {type(key).__name__} "
                                f"in {where} (keys may be str, int, float, bool or None)")
        values = {key: self.encode(v, names + [key], _subscript(where, key)) for key, v in obj.items()}
        plain = all(isinstance(k, str) and k not in _TAGS for k in obj)
        if plain:
            return values
        return {"__dict__": [[k, v] for k, v in values.items()]}


def save(obj, path) -> None:
    """Write ``obj`` (a tensor, or nested dicts/lists/tuples of tensors and JSON
    values) to ``path`` as a safetensors file, atomically.

    Raises TypeError naming the place (``obj['state'][0]['buf']``) of anything
    that cannot be stored.
    """
    encoder = _Encoder()
    structure = encoder.encode(obj, [], "obj")
    checksums = {key: zlib.crc32(array.data) for key, array in encoder.arrays.items()}
    metadata = {"format": "zero", "zero.checkpoint": FORMAT_VERSION,
                "zero.structure": json.dumps(structure, separators=(",", ":")),
                "zero.crc32": json.dumps(checksums, separators=(",", ":"))}
    data = safetensors.numpy.save(encoder.arrays, metadata=metadata)
    with atomic_write(path) as f:
        f.write(data)


# -- load -------------------------------------------------------------------------------------


def _read_header(path: str, data: bytes) -> dict:
    """The safetensors JSON header, after checking that the file is whole."""
    if len(data) < 8:
        raise DataError(f"{path}: not a checkpoint: the file has {len(data)} bytes, fewer than the "
                        "8-byte header length a safetensors file starts with")
    (length,) = struct.unpack("<Q", data[:8])
    if length > _MAX_HEADER_BYTES or length < 2:
        raise DataError(f"{path}: not a safetensors checkpoint: its first 8 bytes give a header of "
                        f"{length} bytes, which no safetensors file has")
    if 8 + length > len(data):
        raise DataError(f"{path}: truncated: the header needs {length} bytes after the first 8, "
                        f"but the file has only {len(data) - 8}")
    try:
        header = json.loads(data[8:8 + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise DataError(f"{path}: not a safetensors checkpoint: the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise DataError(f"{path}: not a safetensors checkpoint: the header is not a JSON object")
    available = len(data) - 8 - length
    needed = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            _begin, end = info["data_offsets"]
            needed = max(needed, int(end))
        except (TypeError, KeyError, ValueError):
            raise DataError(f"{path}: corrupt header: tensor {name!r} has no valid data_offsets") from None
    if needed > available:
        raise DataError(f"{path}: truncated: the tensors need {needed} bytes of data, the file has "
                        f"{available}")
    if needed < available:
        raise DataError(f"{path}: corrupt: {available - needed} bytes after the last tensor's data")
    return header


class _Decoder:
    """Turns the structure JSON back into objects, taking tensors from ``arrays``."""

    def __init__(self, path: str, arrays: dict, device):
        self.path, self.arrays, self.device = path, arrays, device

    def array(self, key) -> np.ndarray:
        if not isinstance(key, str) or key not in self.arrays:
            raise DataError(f"{self.path}: corrupt: the structure refers to tensor {key!r}, which the "
                            "file lacks")
        return self.arrays[key]

    def tensor(self, key, requires_grad: bool = False):
        array = self.array(key)
        # safetensors hands out fresh writable arrays: share them on the CPU, copy to a device
        t = from_numpy(array) if self.device is None else tensor(array, device=self.device)
        if requires_grad and t.dtype.is_floating_point:
            t.requires_grad_(True)
        return t

    def decode(self, node):
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "__tensor__" in node:
            return self.tensor(node["__tensor__"], bool(node.get("requires_grad")))
        if "__ndarray__" in node:
            return self.array(node["__ndarray__"])
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in node["__tuple__"])
        if "__dict__" in node:
            try:
                return {k: self.decode(v) for k, v in node["__dict__"]}
            except (TypeError, ValueError):
                raise DataError(f"{self.path}: corrupt structure: a __dict__ entry is not a [key, value] "
                                "pair") from None
        return {k: self.decode(v) for k, v in node.items()}


def load(path, map_location=None):
    """Read what ``save`` wrote. Tensors come back on the CPU, or on
    ``map_location`` ("cuda", a ``zero.device``) when given.

    A plain safetensors file (no Zero metadata) loads as ``{key: tensor}``.
    Raises FileNotFoundError for a missing file and zero.errors.DataError,
    naming the file, for one that is not a checkpoint, truncated or corrupt.
    """
    path = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "checkpoint not found", path) from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, not a checkpoint file") from None
    header = _read_header(path, data)
    try:
        arrays = safetensors.numpy.load(data)
    except Exception as e:  # the library's SafetensorError and friends
        raise DataError(f"{path}: corrupt safetensors data: {e}") from None
    del data

    decoder = _Decoder(path, arrays, None if map_location is None else to_device(map_location))
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict):
        raise DataError(f"{path}: corrupt header: __metadata__ is not a JSON object")
    if "zero.structure" not in metadata:  # someone else's safetensors file: a flat dict of tensors
        return {key: decoder.tensor(key) for key in header if key != "__metadata__"}
    if metadata.get("zero.checkpoint") != FORMAT_VERSION:
        raise DataError(f"{path}: Zero checkpoint format {metadata.get('zero.checkpoint')!r}; this "
                        f"version of Zero reads format {FORMAT_VERSION!r}")
    try:
        structure = json.loads(metadata["zero.structure"])
        checksums = json.loads(metadata.get("zero.crc32", "{}"))
    except (TypeError, ValueError) as e:
        raise DataError(f"{path}: corrupt checkpoint structure (not valid JSON: {e})") from None
    _check_crc(path, arrays, checksums)
    return decoder.decode(structure)


def _check_crc(path: str, arrays: dict, checksums) -> None:
    if not isinstance(checksums, dict):
        raise DataError(f"{path}: corrupt header: zero.crc32 is not a JSON object")
    for key, expected in checksums.items():
        if key not in arrays:
            raise DataError(f"{path}: corrupt: the header lists tensor {key!r}, which the file lacks")
        actual = zlib.crc32(arrays[key])
        if actual != expected:
            raise DataError(f"{path}: corrupt: the bytes of tensor {key!r} fail their CRC-32 check "
                            f"(stored {expected}, computed {actual})")
