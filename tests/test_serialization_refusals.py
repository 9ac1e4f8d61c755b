"""Checkpoint files that are not what they claim, and writes that fail: each refused in one
line naming the file given and the problem, before anything large is read, and a failed
write says what was kept at the path."""
from __future__ import annotations

import errno
import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import zero
from zero import serialization
from zero.errors import DataError, FileWriteError
from zero.serialization import load, save

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _raw_file(path: Path, header: bytes, data: bytes = b"") -> Path:
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
    return path


# -- a huge file that is not a checkpoint ---------------------------------------------------

# Under an address-space limit of what the interpreter maps plus 512 MiB, so that reading
# a 64 GiB file whole would fail at once: each file must be refused from its first bytes.
_LOAD_UNDER_A_LIMIT = textwrap.dedent("""
    import resource, sys
    import zero
    from zero.cli.main import main

    with open("/proc/self/status") as status:
        mapped = next(int(line.split()[1]) for line in status if line.startswith("VmSize:")) << 10
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (512 << 20), mapped + (512 << 20)))
    for path in sys.argv[1:]:
        try:
            zero.load(path)
        except Exception as e:
            print(type(e).__name__, e)
    sys.exit(main(["mnist", "--resume", sys.argv[1]]))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/status are Linux's")
def test_a_64_gib_file_is_refused_by_its_first_bytes(tmp_path):
    zeros = tmp_path / "zeros.safetensors"
    with open(zeros, "wb") as f:
        f.truncate(64 << 30)  # sparse: 64 GiB of zeros that take no disk
    header = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    header += b" " * (-len(header) % 8)
    claims = _raw_file(tmp_path / "claims.safetensors", header)
    with open(claims, "r+b") as f:
        f.truncate(64 << 30)
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "2", "MALLOC_ARENA_MAX": "2"}
    run = subprocess.run([sys.executable, "-c", _LOAD_UNDER_A_LIMIT, str(zeros), str(claims)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.stdout.splitlines() == [
        f"DataError {zeros}: not a safetensors checkpoint: its first 8 bytes give a header of 0 bytes, which no "
        "safetensors file has",
        f"DataError {claims}: corrupt: {(64 << 30) - 8 - len(header) - 4} bytes after the last tensor's data"]
    assert run.returncode == 2
    assert run.stderr == (f"zero mnist: error: {zeros}: not a safetensors checkpoint: its first 8 bytes give a "
                          "header of 0 bytes, which no safetensors file has\n")


# -- headers nested too deeply, tags of the wrong type -----------------------------------------


def test_a_deeply_nested_header_is_refused(tmp_path):
    deep = _raw_file(tmp_path / "deep.safetensors", b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    with pytest.raises(DataError, match=rf"^{deep}: corrupt header: the header nests deeper than 64 levels$"):
        load(deep)
    quoted = _raw_file(tmp_path / "quoted.safetensors", json.dumps({"__metadata__": {"x": "[" * 1000}}).encode())
    assert load(quoted) == {}  # brackets inside strings do not count


def test_a_deeply_nested_structure_is_refused(tmp_path, monkeypatch):
    deep: list = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="nests containers deeper than the 64 levels"):
        save(deep, tmp_path / "x.safetensors")
    monkeypatch.setattr(serialization, "MAX_DEPTH", 1000)  # as another writer might have
    save(deep, tmp_path / "x.safetensors")
    monkeypatch.undo()
    with pytest.raises(DataError, match=r"x\.safetensors: corrupt header: the checkpoint's structure "
                                        r"\(zero\.structure\) nests deeper than 64 levels"):
        load(tmp_path / "x.safetensors")
    shallow: list = []
    for _ in range(60):
        shallow = [shallow]
    save(shallow, tmp_path / "ok.safetensors")
    assert load(tmp_path / "ok.safetensors") == shallow


@pytest.mark.parametrize("structure,problem", [
    ({"__tuple__": 5}, "a __tuple__ holds a value of type int, not a list of its items"),
    ({"__tuple__": {"a": 1}}, "a __tuple__ holds a value of type dict"),
    ({"__dict__": 5}, "a __dict__ entry is not a [key, value] pair"),
    ({"__dict__": [[[1], 2]]}, "a __dict__ entry is not a [key, value] pair"),
    ({"__dict__": [[1, 2, 3]]}, "a __dict__ entry is not a [key, value] pair"),
    ({"__tensor__": 5}, "the structure refers to tensor 5"),
])
def test_tags_of_the_wrong_type_are_refused_naming_the_file(tmp_path, monkeypatch, structure, problem):
    """Files with a valid checksum (as one could write by hand) whose structure is not Zero's."""
    monkeypatch.setattr(serialization._Encoder, "encode", lambda self, obj, names, where: structure)
    path = tmp_path / "odd.safetensors"
    save({}, path)
    monkeypatch.undo()
    with pytest.raises(DataError) as e:
        load(path)
    assert str(e.value).startswith(f"{path}: corrupt") and problem in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("header,problem", [
    (b'{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,1e400]}}', "tensor 'w' has no valid data_offsets"),
    (b'{"w":{"dtype":"F32","shape":[1],"data_offsets":5}}', "tensor 'w' has no valid data_offsets"),
    (b'{"w":"\xff\xfe"}   ', "the header is not UTF-8"),
    (b'{"__metadata__":{"format":"zero","zero.checkpoint":"2","zero.structure":5}}', "not a safetensors"),
])
def test_header_values_of_the_wrong_type_are_refused(tmp_path, header, problem):
    path = _raw_file(tmp_path / "h.safetensors", header)
    with pytest.raises(DataError) as e:
        load(path)
    assert str(e.value).startswith(f"{path}: ") and "\n" not in str(e.value)
    if problem != "not a safetensors":
        assert problem in str(e.value)


# -- failed writes ------------------------------------------------------------------------------


def test_a_missing_directory_names_the_path_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileWriteError) as e:
        zero.save({}, "nodir/x.safetensors")
    assert str(e.value) == "nodir/x.safetensors: not written (no directory nodir); nothing was created at this path"
    assert e.value.filename == "nodir/x.safetensors" and e.value.errno == errno.ENOENT
    assert isinstance(e.value, OSError) and isinstance(e.value, RuntimeError)  # Zero's, PyTorch's habits


# A file-size limit stands in for a full disk (SIGXFSZ ignored: the write fails with EFBIG).
_WRITE_UNDER_A_LIMIT = textwrap.dedent("""
    import resource, signal, sys
    import zero

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    for path in sys.argv[1:]:
        try:
            zero.save({"w": zero.zeros(1 << 19)}, path)  # 2 MiB of data
        except OSError as e:
            print(type(e).__name__, e.errno, e)
""")


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGXFSZ"), reason="RLIMIT_FSIZE is POSIX's")
def test_a_full_disk_names_the_file_and_keeps_the_previous_one(tmp_path):
    previous = tmp_path / "model.safetensors"
    save({"w": zero.arange(4.0)}, previous)
    before = previous.read_bytes()
    env = {**os.environ, "PYTHONPATH": SRC}
    run = subprocess.run([sys.executable, "-c", _WRITE_UNDER_A_LIMIT, str(previous), str(tmp_path / "new.safetensors")],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [
        f"FileWriteError {errno.EFBIG} {previous}: not written (File too large, after 1.0 MiB); the previous file "
        "at this path is intact",
        f"FileWriteError {errno.EFBIG} {tmp_path / 'new.safetensors'}: not written (File too large, after 1.0 MiB); "
        "nothing was created at this path"]
    assert previous.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["model.safetensors"]
    assert load(previous)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
