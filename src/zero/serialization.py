"""Checkpoints: ``zero.save(obj, path)`` and ``zero.load(path)`` (or a file object).

``obj`` is a tensor, or nested dicts / lists / tuples of tensors, NumPy arrays
and JSON values (int, float, str, bool, None) -- a model's ``state_dict()``, an
optimizer's (whose ``state`` is keyed by ints), RNG states with 128-bit ints,
step counters, hyper-parameters.

The file is one safetensors file:

    8 bytes      little-endian length of the header
    header       JSON: for each tensor its dtype, shape and byte range; and
                 "__metadata__": {"format": "zero", "zero.checkpoint": "2",
                                  "zero.structure": "<JSON of obj>",
                                  "zero.crc32": "<JSON {key: CRC-32 of its bytes}>",
                                  "zero.sha256": "<64 hex digits>"}
                 padded with spaces to a multiple of 8 bytes
    data         the tensors' bytes, back to back

Tensors are stored under readable dotted keys ("model.fc1.weight"), so
``safetensors.numpy.load_file(path)`` (or PyTorch's safetensors) reads the
weights without Zero. The structure -- everything that is not a tensor, plus
where each tensor sits -- is JSON kept in the safetensors metadata. One file
rather than a sibling ``.json``: a single ``os.replace`` swaps both at once, so
weights and step counter can never come from two different saves.

The whole file is covered by ``zero.sha256``: the SHA-256 of every byte of the
file as written with those 64 hex digits replaced by "0"s. So a change
anywhere -- a tensor's bytes, a byte range, the structure ("step": 50 edited to
90), the length prefix, the padding -- is caught, and the message says whether
a tensor (named, by its CRC-32) or the header was damaged. (Integrity, not
authenticity: a checksum catches accidents and naive edits, not tampering by
someone who recomputes it.)

Loading parses JSON and raw bytes only: nothing in the file is ever executed --
except the pickle of an object JSON cannot hold (``zero.save(model)``), which is
unpickled only under ``weights_only=False`` or, under ``weights_only=True`` (the
default), by a restricted unpickler that admits only the globals the caller allowed
with ``safe_globals``/``add_safe_globals`` (see the end of this file), and only after the
checks below. It checks that the file is whole (the header's byte ranges match
the file's length), then the checksum, then each tensor's CRC-32, so a
truncated or damaged file is named, never half-loaded. Format "1" files
(written before the whole-file checksum, their tensors covered by CRC-32s only)
still load, with a warning: refusing them would strand every run trained
before; their header is simply unchecked. Any other format is refused. A plain
safetensors file without Zero's metadata loads as a flat ``{key: tensor}``
dict.

The structure JSON tags what JSON cannot say itself:

    tensor                       {"__tensor__": "model.fc1.weight"}
    NumPy array                  {"__ndarray__": "key"}
    tuple                        {"__tuple__": [...]}
    dict with non-str keys       {"__dict__": [[key, value], ...]}  (int keys stay ints)
    any other object             {"__pickle__": "key"}  (a whole nn.Module: see the end of this file)

Tensors are copied to the host to be saved (whatever their device and
layout: views and non-contiguous tensors are fine). Two tensors that share
storage are saved as independent copies and load as independent tensors.

Writes are atomic (``zero.files.atomic_write``): a crash at any moment leaves
either the old file or the new one, never a half-written one.
"""
from __future__ import annotations

import collections
import errno
import hashlib
import io
import json
import os
import pickle
import re
import struct
import warnings
import zlib
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .backends.device import Device, to_device
from .dtypes import dtype_from_name
from .errors import DataError
from .files import atomic_write
from .tensors.creation import from_numpy, tensor
from .tensors.tensor import Tensor


def _safetensors():
    """The safetensors reader, imported at the first load (not by ``import zero``)."""
    import safetensors.numpy

    return safetensors.numpy

PICKLE_TAG = "__pickle__"
FORMAT_VERSION = "2"
_LEGACY_VERSIONS = ("1",)  # no whole-file checksum: loaded with a warning
_CHECKSUM_KEY = "zero.sha256"
_CHECKSUM_PLACEHOLDER = "0" * 64
_SAFETENSORS_DTYPES = {"b": {1: "BOOL"}, "u": {1: "U8", 2: "U16", 4: "U32", 8: "U64"},
                       "i": {1: "I8", 2: "I16", 4: "I32", 8: "I64"}, "f": {2: "F16", 4: "F32", 8: "F64"}}
_TAGS = ("__tensor__", "__ndarray__", "__tuple__", "__dict__", PICKLE_TAG)
__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]
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
        return self._pickle(obj, names, where)

    def _pickle(self, obj, names: list, where: str):
        """An object JSON cannot hold (a whole module): pickled, its tensors stored as tensors."""
        prefix = names + [PICKLE_TAG]
        try:
            blob = _pickle_dumps(obj, lambda t, n: self._array(t.detach()._host_array(), prefix + [n], where))
        except TypeError as e:
            kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
            raise TypeError(f"save: cannot store {where} of type {kind}: it cannot be pickled ({e})") from None
        return {PICKLE_TAG: self._array(np.frombuffer(blob, dtype=np.uint8), prefix, where)}

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


def save(obj, f) -> None:
    """Write ``obj`` (a tensor, or nested dicts/lists/tuples of tensors and JSON
    values; any other object -- a whole module -- is pickled, see the end of this file) as a
    safetensors file: to the path ``f`` atomically, or into ``f``
    when it is a binary file object (``io.BytesIO``, an open file: written from
    its current position, as PyTorch does; atomic only as the object makes it).

    Raises TypeError naming the place (``obj['state'][0]['buf']``) of anything
    that cannot be stored (what pickle refuses too: a lambda, an open file).
    """
    encoder = _Encoder()
    structure = encoder.encode(obj, [], "obj")
    arrays = encoder.arrays
    structure_text = json.dumps(structure, separators=(",", ":"))
    if _nesting_depth(structure_text) > MAX_DEPTH:  # load would refuse it
        raise ValueError(f"save: obj nests containers deeper than the {MAX_DEPTH} levels a checkpoint may hold")
    metadata = {"format": "zero", "zero.checkpoint": FORMAT_VERSION,
                "zero.structure": structure_text,
                "zero.crc32": json.dumps({key: zlib.crc32(_raw_bytes(a)) for key, a in arrays.items()},
                                         separators=(",", ":")),
                _CHECKSUM_KEY: _CHECKSUM_PLACEHOLDER}
    header: dict = {"__metadata__": metadata}
    offset = 0
    for key, array in arrays.items():
        header[key] = {"dtype": _SAFETENSORS_DTYPES[array.dtype.kind][array.itemsize], "shape": list(array.shape),
                       "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # safetensors pads the header to 8-byte alignment
    prefix = struct.pack("<Q", len(text))
    digest = hashlib.sha256(prefix)
    digest.update(text)
    for array in arrays.values():
        digest.update(_raw_bytes(array))
    signed = _with_checksum(text, _CHECKSUM_PLACEHOLDER, digest.hexdigest())
    assert signed is not None  # the placeholder is ours, written once
    if hasattr(f, "write"):
        if isinstance(f, io.TextIOBase):
            raise TypeError(f"zero.save: {getattr(f, 'name', type(f).__name__)} is a text file object; "
                            "open it in binary mode ('wb') or pass a path")
        _write_checkpoint(f, prefix, signed, arrays)
        return
    with atomic_write(f) as out:
        _write_checkpoint(out, prefix, signed, arrays)


def _write_checkpoint(out, prefix: bytes, header: bytes, arrays: dict) -> None:
    out.write(prefix)
    out.write(header)
    for array in arrays.values():
        out.write(_raw_bytes(array))


def _raw_bytes(array: np.ndarray) -> memoryview:
    """A C-contiguous array's bytes, any shape (0-d and empty too)."""
    return memoryview(array.reshape(-1).view(np.uint8))  # type: ignore[arg-type]


def _checksum_field(value: str) -> bytes:
    return f'"{_CHECKSUM_KEY}":"{value}"'.encode("ascii")


def _with_checksum(header: bytes, old: str, new: str) -> bytes | None:
    """The raw header with the checksum's value ``old`` replaced by ``new`` (None unless the
    field appears exactly once)."""
    field = _checksum_field(old)
    if header.count(field) != 1:
        return None
    return header.replace(field, _checksum_field(new))


# -- load -------------------------------------------------------------------------------------


def _check_header_length(path: str, prefix: bytes, file_size: int) -> int:
    """The header length the first 8 bytes give, checked against the file's size before
    anything else is read (so a large file that is not a checkpoint is refused at once)."""
    if file_size < 8:
        raise DataError(f"{path}: not a checkpoint: the file has {file_size} bytes, fewer than the "
                        "8-byte header length a safetensors file starts with")
    (length,) = struct.unpack("<Q", prefix[:8])
    if length > _MAX_HEADER_BYTES or length < 2:
        raise DataError(f"{path}: not a safetensors checkpoint: its first 8 bytes give a header of "
                        f"{length} bytes, which no safetensors file has")
    if 8 + length > file_size:
        raise DataError(f"{path}: truncated: the header needs {length} bytes after the first 8, "
                        f"but the file has only {file_size - 8}")
    return length


def _read_header(path: str, data: bytes, file_size: int) -> dict:
    """The safetensors JSON header, after checking that the file is whole: ``data`` holds at
    least the first 8 bytes and the header, ``file_size`` is the whole file's length."""
    length = _check_header_length(path, data, file_size)
    try:
        text = bytes(data[8:8 + length]).decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not a safetensors checkpoint: the header is not UTF-8 ({e.reason} at "
                        f"byte {8 + e.start})") from None
    header = _parse_json(path, text, "the header")
    if not isinstance(header, dict):
        raise DataError(f"{path}: not a safetensors checkpoint: the header is not a JSON object")
    available = file_size - 8 - length
    needed = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            _begin, end = info["data_offsets"]
            needed = max(needed, int(end))
        except (TypeError, KeyError, ValueError, OverflowError):
            raise DataError(f"{path}: corrupt header: tensor {name!r} has no valid data_offsets") from None
    if needed > available:
        raise DataError(f"{path}: truncated: the tensors need {needed} bytes of data, the file has "
                        f"{available}")
    if needed < available:
        raise DataError(f"{path}: corrupt: {available - needed} bytes after the last tensor's data")
    return header


MAX_DEPTH = 64
"""How deeply a checkpoint's JSON may nest: a state dict needs about 6 levels; deeper is damage
(or a file made to exhaust the parser's stack)."""


def _parse_json(path: str, text, what: str):
    """``text`` parsed as JSON, refused in one line naming the file when it is not a string,
    not JSON, or nested deeper than MAX_DEPTH."""
    if text is None:
        raise DataError(f"{path}: corrupt header: {what} is missing")
    if not isinstance(text, str):
        raise DataError(f"{path}: corrupt header: {what} is of type {type(text).__name__}, not a JSON string")
    if _nesting_depth(text) > MAX_DEPTH:
        raise DataError(f"{path}: corrupt header: {what} nests deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise DataError(f"{path}: corrupt header: {what} is not valid JSON ({e})") from None


def _nesting_depth(text: str) -> int:
    """How deeply the JSON ``text`` nests arrays and objects, brackets inside strings not
    counted (one pass over the text, no recursion, so any depth is measured safely)."""
    depth = deepest = 0
    if "[" not in text and "{" not in text:
        return 0
    for token in _JSON_BRACKETS.findall(text):  # strings come out whole, so their brackets are skipped
        if token == "[" or token == "{":
            depth += 1
            deepest = max(deepest, depth)
        elif token == "]" or token == "}":
            depth -= 1
    return deepest


_JSON_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class _Decoder:
    """Turns the structure JSON back into objects, taking tensors from ``arrays``."""

    def __init__(self, path: str, arrays: dict, device, remap=None, weights_only: bool = True):
        self.path, self.arrays, self.device, self.remap = path, arrays, device, remap
        self.weights_only = weights_only

    def array(self, key) -> np.ndarray:
        if not isinstance(key, str) or key not in self.arrays:
            raise DataError(f"{self.path}: corrupt: the structure refers to tensor {key!r}, which the "
                            "file lacks")
        return self.arrays[key]

    def tensor(self, key, requires_grad: bool = False):
        array = self.array(key)
        # safetensors hands out fresh writable arrays: share them on the CPU, copy to a device
        t = from_numpy(array) if self.device is None else tensor(array, device=self.device)
        if self.remap is not None:
            t = self.remap(t)
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
        if PICKLE_TAG in node:
            data = self.array(node[PICKLE_TAG])
            if data.dtype != np.uint8 or data.ndim != 1:
                raise DataError(f"{self.path}: corrupt structure: a pickle is stored as "
                                f"{data.dtype}{list(data.shape)}, not as 1-d uint8 bytes")
            return _pickle_loads(self.path, data, self.tensor, self.weights_only)
        if "__tuple__" in node:
            items = node["__tuple__"]
            if not isinstance(items, list):
                raise DataError(f"{self.path}: corrupt structure: a __tuple__ holds a value of type "
                                f"{type(items).__name__}, not a list of its items")
            return tuple(self.decode(v) for v in items)
        if "__dict__" in node:
            pairs = node["__dict__"]
            if not isinstance(pairs, list) or not all(_is_key_value_pair(pair) for pair in pairs):
                raise DataError(f"{self.path}: corrupt structure: a __dict__ entry is not a [key, value] "
                                "pair with a str, int, float, bool or null key")
            return {k: self.decode(v) for k, v in pairs}
        return {k: self.decode(v) for k, v in node.items()}


def _is_key_value_pair(pair) -> bool:
    return (isinstance(pair, list) and len(pair) == 2
            and (pair[0] is None or isinstance(pair[0], (str, int, float))))


def load(f, map_location=None, weights_only=None, mmap=None):
    """Read what ``save`` wrote, from a path or a binary file object (read from its
    current position to the end). Tensors come back on the CPU, or on
    ``map_location``: a device ("cuda", "cpu", a ``zero.device``); a dict from
    device names to device names (tensors are stored from the host, so the entry for
    "cpu" applies, if any); or a function ``(tensor, "cpu") -> tensor`` called on each
    loaded tensor (``lambda storage, loc: storage`` keeps it on the CPU).

    ``weights_only`` (default True, as in PyTorch >= 2.6) matters only for a file that
    holds a pickled object (``zero.save(model)``): with True it is refused with
    ``pickle.UnpicklingError`` unless every class it names was allowed with
    ``zero.serialization.add_safe_globals`` / ``safe_globals``; with False it is
    unpickled (which can run code: trusted files only). Everything else in a Zero
    checkpoint is JSON and raw bytes, so loading it never runs code from the file.
    ``mmap`` is accepted for PyTorch's sake and changes nothing (the bytes are read
    into memory).

    A plain safetensors file (no Zero metadata) loads as ``{key: tensor}``.
    Raises FileNotFoundError for a missing file and zero.errors.DataError,
    naming the file, for one that is not a checkpoint, truncated or corrupt.
    """
    path, data = _read_source(f)
    device, remap = _placement(map_location)
    header = _read_header(path, data, len(data))
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict):
        raise DataError(f"{path}: corrupt header: __metadata__ is not a JSON object")
    if _is_zero_checkpoint(metadata):
        _check_version_and_checksum(path, data, metadata)
    try:
        arrays = _safetensors().load(data)
    except Exception as e:  # the library's SafetensorError and friends
        raise DataError(f"{path}: corrupt safetensors data: {e}") from None
    del data

    if weights_only is not None and not isinstance(weights_only, bool):
        raise TypeError(f"zero.load: weights_only must be a bool or None, got {weights_only!r}")
    decoder = _Decoder(path, arrays, device, remap, weights_only is not False)
    if not _is_zero_checkpoint(metadata):  # someone else's safetensors file: a flat dict of tensors
        return {key: decoder.tensor(key) for key in header if key != "__metadata__"}
    structure = _parse_json(path, metadata.get("zero.structure"), "the checkpoint's structure (zero.structure)")
    checksums = _parse_json(path, metadata.get("zero.crc32", "{}"), "the tensors' checksums (zero.crc32)")
    _check_crc(path, arrays, checksums)
    return decoder.decode(structure)


def _read_source(f) -> tuple[str, bytes]:
    """(the name errors give, every byte) of a path or a binary file object."""
    if hasattr(f, "read"):
        name = getattr(f, "name", None)
        data = f.read()
        label = name if isinstance(name, str) else f"<{type(f).__name__}>"
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"zero.load: {label} is a text file object; open the checkpoint in binary mode ('rb')")
        return label, bytes(data)
    path = os.fspath(f)
    try:
        with open(path, "rb") as file:
            # The first 8 bytes and the header say how long the file must be: check them
            # before reading the rest, so that a large file that is no checkpoint is refused
            # at once instead of read whole (and blamed on memory).
            size = os.fstat(file.fileno()).st_size
            prefix = file.read(8)
            length = _check_header_length(path, prefix, size)
            _read_header(path, prefix + file.read(length), size)
            file.seek(0)
            return path, file.read()
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "checkpoint not found", path) from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, not a checkpoint file") from None


def _placement(map_location):
    """map_location -> (the device tensors are made on or None for the CPU, a function
    applied to each loaded tensor or None)."""
    if map_location is None:
        return None, None
    if callable(map_location) and not isinstance(map_location, (str, dict)):
        return None, lambda t: map_location(t, "cpu")
    if isinstance(map_location, dict):
        target = map_location.get("cpu")
        return (None, None) if target is None else (to_device(target), None)
    return to_device(map_location), None


def _is_zero_checkpoint(metadata: dict) -> bool:
    """Any mark of Zero's: one damaged key must not make a checkpoint pass for a foreign file."""
    return metadata.get("format") == "zero" or any(str(key).startswith("zero.") for key in metadata)


def _check_version_and_checksum(path: str, data: bytes, metadata: dict) -> None:
    version = metadata.get("zero.checkpoint")
    stored = metadata.get(_CHECKSUM_KEY)
    if version not in (FORMAT_VERSION, *_LEGACY_VERSIONS):
        raise DataError(f"{path}: Zero checkpoint format {version!r}; this version of Zero reads formats "
                        f"{', '.join(repr(v) for v in (FORMAT_VERSION, *_LEGACY_VERSIONS))} (a newer Zero "
                        "wrote it, or the header is damaged)")
    if stored is None and version in _LEGACY_VERSIONS:
        warnings.warn(f"{path}: a format {version} checkpoint: its tensors are checked, its header is not "
                      "(save it again to add the whole-file checksum)", stacklevel=3)
        return
    if stored is None:
        raise DataError(f"{path}: corrupt header: a format {version} checkpoint without its {_CHECKSUM_KEY} "
                        "checksum")
    (length,) = struct.unpack("<Q", data[:8])
    blank = _with_checksum(data[8:8 + length], str(stored), _CHECKSUM_PLACEHOLDER)
    digest = hashlib.sha256(data[:8])
    digest.update(b"" if blank is None else blank)
    digest.update(memoryview(data)[8 + length:])
    if blank is None or digest.hexdigest() != stored:
        raise DataError(f"{path}: corrupt: the file fails its SHA-256 checksum ({_damage(data, length)}); "
                        "it was damaged or edited after it was written")


def _damage(data: bytes, length: int) -> str:
    """Where a file that fails its checksum was changed: a tensor whose CRC-32 fails, else the header."""
    try:
        arrays = _safetensors().load(data)
        problem = _crc_problem(arrays, json.loads(json.loads(data[8:8 + length])["__metadata__"]["zero.crc32"]))
    except Exception:  # the header no longer describes the data
        return "its header is damaged"
    return problem or "its header was changed; every tensor's bytes match their CRC-32"


def _crc_problem(arrays: dict, checksums) -> str | None:
    """What is wrong with the tensors' bytes by their CRC-32s, or None."""
    if not isinstance(checksums, dict):
        return "zero.crc32 in the header is not a JSON object"
    for key, expected in checksums.items():
        if key not in arrays:
            return f"the header lists tensor {key!r}, which the file lacks"
        actual = zlib.crc32(_raw_bytes(arrays[key]))
        if actual != expected:
            return f"the bytes of tensor {key!r} fail their CRC-32 check (stored {expected}, computed {actual})"
    return None


def _check_crc(path: str, arrays: dict, checksums) -> None:
    problem = _crc_problem(arrays, checksums)
    if problem is not None:
        raise DataError(f"{path}: corrupt: {problem}")


# -- whole objects: pickled (zero.save(model)), unpickled only when allowed ---------------------
#
# Whole objects in a checkpoint (``zero.save(model)``): pickled, as PyTorch saves them, and
# unpickled only when the caller says so.
#
# ``zero.save`` stores what JSON cannot say -- a whole ``nn.Module``, any other picklable
# object -- as a pickle, kept in the safetensors file as one ``uint8`` array under the tag
# ``{"__pickle__": key}``. The tensors inside it are not pickled: each is stored as a
# safetensors tensor of its own (covered by the checksums like every other) and the pickle
# refers to it by key (pickle's ``persistent_id``), so tied weights stay tied.
#
# Loading follows PyTorch >= 2.6:
#
# * ``weights_only=True`` (the default) unpickles with a restricted unpickler: the pickle
#   may name only the globals allowlisted with ``add_safe_globals`` / ``safe_globals``
#   (and a few harmless builtins: ``OrderedDict``, ``set``, ``frozenset``, ``complex``,
#   Zero's dtypes and devices).
#   The allowlisted object itself is handed over -- no module is imported by name from
#   the file -- and the first other global stops the load with ``pickle.UnpicklingError``
#   ("Weights only load failed ... Unsupported global: GLOBAL __main__.Net ..."), before
#   anything it names is called.
# * ``weights_only=False`` unpickles freely -- which runs whatever code the file names:
#   only for files from a trusted source.
#
# A checkpoint without a pickle (state dicts, optimizer states: every file Zero wrote
# before) never reaches this code.

_TENSOR_ID = "zero.tensor"

_builtin_safe: dict[str, Any] = {
    "collections.OrderedDict": collections.OrderedDict, "builtins.set": set, "builtins.frozenset": frozenset,
    "builtins.complex": complex,
    "zero.dtypes.dtype_from_name": dtype_from_name, "zero.backends.device.Device": Device,  # zero.float32, a device
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


# -- pickling -------------------------------------------------------------------------------------


def _pickle_dumps(obj: Any, store_tensor: Callable[[Any, int], str]) -> bytes:
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


# -- unpickling -------------------------------------------------------------------------------------


def _refusal(path: str, what: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        f"Weights only load failed: {path} holds a pickled object, and the pickle names {what}, which is not an "
        f"allowed global. WeightsUnpickler error: Unsupported global: GLOBAL {what}. If you trust the file's "
        f"source, load it with zero.load(..., weights_only=False) (which can run arbitrary code), or allowlist "
        f"the classes with zero.serialization.add_safe_globals([{what}]) or the "
        f"zero.serialization.safe_globals([{what}]) context manager")


def _pickle_loads(path: str, data: np.ndarray, tensor: Callable[[str, bool], Any], weights_only: bool) -> Any:
    """Unpickle ``data`` (the stored bytes); ``tensor(key, requires_grad)`` gives a stored tensor."""
    from .nn.parameter import Parameter

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
