"""Fetching the four MNIST files (``zero mnist --download``).

    download_mnist(default_cache_dir())

Each file is fetched from the first mirror that answers with the right bytes:
a failure (connection refused, HTTP error, timeout, short read, wrong SHA-256)
moves on to the next mirror at once; when every mirror has failed, the whole
list is tried again after a pause that doubles each round (``backoff``,
``2 * backoff``, ...), ``retries`` rounds in all. A file is streamed into a
temporary file beside its target, hashed on the way, and renamed into place
only when its SHA-256 matches, so the destination never holds a partial or
wrong file. Files already present with the right checksum are not fetched
again. Only the standard library's urllib is used.
"""
from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import DataError
from ..files import atomic_write

# Base URLs of public MNIST mirrors; a file's URL is base + file name.
MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)

# SHA-256 of the original gzip-compressed files (the same bytes on every mirror above).
MNIST_SHA256 = {
    "train-images-idx3-ubyte.gz": "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    "train-labels-idx1-ubyte.gz": "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    "t10k-images-idx3-ubyte.gz": "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "t10k-labels-idx1-ubyte.gz": "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
}

_CHUNK_BYTES = 1 << 16
_USER_AGENT = "zero-dl (MNIST downloader; Python urllib)"


class ChecksumError(DataError):
    """Downloaded bytes whose SHA-256 is not the expected one."""


def sha256_of(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch(url: str, target: Path, expected: str, timeout: float) -> int:
    import urllib.request  # here, not at the top: half of `import zero` would be the network stack
    """Download ``url`` to ``target`` atomically, checking its SHA-256; returns its size."""

    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    with urllib.request.urlopen(request, timeout=timeout) as response, atomic_write(target) as out:
        length = response.headers.get("Content-Length")
        digest = hashlib.sha256()
        received = 0
        while chunk := response.read(_CHUNK_BYTES):
            digest.update(chunk)
            out.write(chunk)
            received += len(chunk)
        if length is not None and length.isdigit() and received != int(length):
            raise DataError(f"incomplete: received {received} of {length} bytes")
        actual = digest.hexdigest()
        if actual != expected.lower():
            raise ChecksumError(f"SHA-256 mismatch for {target.name}: expected {expected}, got {actual}")
    return received


def _reason(error: BaseException) -> str:
    import urllib.error
    """A short account of why one attempt failed."""
    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError):
        reason = error.reason
        if isinstance(reason, ConnectionRefusedError):
            return "connection refused"
        return f"cannot connect: {reason}"
    if isinstance(error, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(error, DataError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def download_mnist(dest_dir, mirrors=None, retries: int = 3, checksums: dict | None = None,
                   timeout: float = 60.0, backoff: float = 1.0,
                   log: Callable[[str], None] | None = None) -> Path:
    """Fetch the files named in ``checksums`` (default: the four MNIST files and their
    SHA-256 in ``MNIST_SHA256``) from ``mirrors`` (default ``MIRRORS``) into ``dest_dir``.

    ``retries`` is the number of rounds over the mirror list; between rounds the
    pause is ``backoff * 2**round`` seconds. ``log`` (e.g. ``print``) is told what is
    fetched from where. Returns ``dest_dir``. Raises DataError listing every URL
    tried and why it failed when a file cannot be had from any mirror.
    """
    dest = Path(dest_dir).expanduser()
    mirrors = tuple(MIRRORS if mirrors is None else mirrors)
    checksums = dict(MNIST_SHA256 if checksums is None else checksums)
    if not mirrors:
        raise ValueError("download_mnist: no mirrors given")
    if retries < 1:
        raise ValueError(f"download_mnist: retries must be at least 1, got {retries}")
    dest.mkdir(parents=True, exist_ok=True)
    say = log or (lambda message: None)

    for name, expected in checksums.items():
        target = dest / name
        if target.is_file() and sha256_of(target) == expected.lower():
            say(f"{name}: already present, checksum verified")
            continue
        _download_one(name, expected, target, mirrors, retries, timeout, backoff, say)
    return dest


def _download_one(name, expected, target, mirrors, retries, timeout, backoff, say) -> None:
    import http.client
    failures = []
    for attempt in range(retries):
        if attempt:
            pause = backoff * 2 ** (attempt - 1)
            say(f"{name}: every mirror failed; trying again in {pause:g} s")
            time.sleep(pause)
        for base in mirrors:
            url = base if base.endswith("/") else base + "/"
            url += name
            say(f"{name}: fetching {url}")
            try:
                size = _fetch(url, target, expected, timeout)
            except (OSError, http.client.HTTPException, DataError) as e:  # URLError is an OSError
                failures.append(f"  round {attempt + 1}: {url}: {_reason(e)}")
                say(f"{name}: {url}: {_reason(e)}")
                continue
            say(f"{name}: {size} bytes, SHA-256 verified")
            return
    raise DataError(f"could not download {name} (expected SHA-256 {expected}) into {target.parent}; "
                    f"tried {len(failures)} times:\n" + "\n".join(failures))
