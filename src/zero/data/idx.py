"""IDX files: the format MNIST and Fashion-MNIST are distributed in.

    bytes 0-1   0x00 0x00
    byte  2     type code: 0x08 ubyte, 0x09 byte, 0x0B short, 0x0C int, 0x0D float, 0x0E double
    byte  3     number of dimensions, D
    4 * D       each dimension's size, big-endian uint32
    the rest    the values, big-endian, row-major; exactly prod(sizes) * item size bytes

So MNIST's training images start 00 00 08 03 | 60000 | 28 | 28. Files may be
gzip-compressed (recognised by gzip's magic bytes, whatever the name).
``read_idx`` converts the big-endian values to the host's byte order, as the
book's data loader does, and raises zero.errors.DataError naming the file and
what is wrong with it.
"""
from __future__ import annotations

import gzip
import math
import os
import struct
import zlib

import numpy as np

from ..errors import DataError
from ..files import atomic_write

# type code -> big-endian NumPy dtype
IDX_TYPES: dict[int, np.dtype] = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_TYPE_NAMES = {0x08: "ubyte", 0x09: "byte", 0x0B: "short", 0x0C: "int", 0x0D: "float", 0x0E: "double"}
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK_BYTES = 16 << 20


def _describe_types() -> str:
    return ", ".join(f"0x{code:02X} {name}" for code, name in _TYPE_NAMES.items())


def _read_exactly(stream, n: int) -> bytearray:
    """Up to ``n`` bytes (fewer only at the end of the stream), read in chunks so that a
    corrupt header claiming huge sizes cannot allocate more than the file holds."""
    buffer = bytearray()
    while len(buffer) < n:
        chunk = stream.read(min(_CHUNK_BYTES, n - len(buffer)))
        if not chunk:
            break
        buffer += chunk
    return buffer


def _count_rest(stream) -> int:
    count = 0
    while chunk := stream.read(_CHUNK_BYTES):
        count += len(chunk)
    return count


def read_idx(path) -> np.ndarray:
    """The array stored in the IDX file ``path`` (raw or gzip-compressed), in native byte order."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as raw:
            compressed = raw.read(2) == _GZIP_MAGIC
    except FileNotFoundError:
        raise DataError(f"{path}: no such IDX file") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, not an IDX file") from None
    opener = gzip.open if compressed else open
    try:
        with opener(path, "rb") as stream:
            return _parse(path, stream, "decompressed " if compressed else "")
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        reason = "truncated" if isinstance(e, EOFError) else "corrupt"
        raise DataError(f"{path}: {reason} gzip stream ({e})") from None


def _parse(path: str, stream, what: str) -> np.ndarray:
    head = _read_exactly(stream, 4)
    if len(head) < 4:
        raise DataError(f"{path}: truncated: an IDX file starts with a 4-byte magic number, the {what}file "
                        f"has {len(head)} bytes")
    zero_bytes, type_code, ndim = head[:2], head[2], head[3]
    if zero_bytes != b"\x00\x00":
        raise DataError(f"{path}: not an IDX file: it starts with bytes {head.hex(' ')}, but an IDX file "
                        "starts with two zero bytes, a type code and the number of dimensions "
                        "(e.g. 00 00 08 03 for MNIST images)")
    if type_code not in IDX_TYPES:
        raise DataError(f"{path}: corrupt IDX header: unknown type code 0x{type_code:02X} in magic number "
                        f"0x{head.hex()} (valid codes: {_describe_types()})")
    sizes_bytes = _read_exactly(stream, 4 * ndim)
    if len(sizes_bytes) < 4 * ndim:
        raise DataError(f"{path}: truncated IDX header: {ndim} dimensions need {4 * ndim} bytes of sizes, "
                        f"found {len(sizes_bytes)}")
    shape = struct.unpack(f">{ndim}I", sizes_bytes)
    dtype = IDX_TYPES[type_code]
    expected = math.prod(shape) * dtype.itemsize
    data = _read_exactly(stream, expected)
    if len(data) < expected:
        raise DataError(f"{path}: truncated: expected {expected} bytes of data (shape {list(shape)} of "
                        f"{_TYPE_NAMES[type_code]}), found {len(data)}")
    trailing = _count_rest(stream)
    if trailing:
        raise DataError(f"{path}: corrupt: {trailing} trailing bytes after the expected {expected} bytes "
                        f"of data (shape {list(shape)} of {_TYPE_NAMES[type_code]})")
    array = np.frombuffer(data, dtype=dtype).reshape(shape)  # writable: it views a bytearray
    if dtype.itemsize > 1:
        array = array.astype(dtype.newbyteorder("="))
    else:
        array = array.view(dtype.newbyteorder("="))
    return array


def _type_code(dtype: np.dtype) -> int:
    for code, idx_dtype in IDX_TYPES.items():
        if idx_dtype.newbyteorder("=") == dtype.newbyteorder("="):
            return code
    raise TypeError(f"write_idx: IDX has no type for {dtype}; use one of uint8, int8, int16, int32, "
                    "float32, float64")


def encode_idx(array) -> bytes:
    """The bytes of an IDX file holding ``array`` (uncompressed)."""
    array = np.asarray(array)
    code = _type_code(array.dtype)
    if array.ndim > 255 or any(n >= 1 << 32 for n in array.shape):
        raise ValueError(f"write_idx: shape {list(array.shape)} does not fit an IDX header")
    header = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + np.ascontiguousarray(array, dtype=IDX_TYPES[code]).tobytes()


def write_idx(path, array, compress: bool | None = None) -> None:
    """Write ``array`` as an IDX file, gzip-compressed when ``compress`` (default: the
    name ends in ``.gz``). The write is atomic. The gzip header carries no timestamp,
    so equal arrays give equal bytes (and equal checksums)."""

    path = os.fspath(path)
    data = encode_idx(array)
    if compress if compress is not None else path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with atomic_write(path) as f:
        f.write(data)
