"""Damaged inputs and failed writes as the jobs meet them: a vocabulary cut inside a
character or listing one twice, MNIST files with no images, a disk that fills. Each ends
the job with one line naming the file and the problem (and what was kept), exit status 2,
never a traceback and never a run that "succeeds" on nothing."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

import numpy as np
import pytest
from cli_helpers import TINY_GPT, child_environment, mnist

from zero.data import MNIST, write_idx
from zero.data.text import CharTokenizer
from zero.errors import DataError


def _zero(*argv, preamble: str = "") -> tuple[int, str, str]:
    """``zero ARGV`` in a child process (after ``preamble``): status, stdout, stderr."""
    program = f"import sys\n{preamble}\nfrom zero.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    run = subprocess.run([sys.executable, "-c", program, *map(str, argv)], env=child_environment(),
                         capture_output=True, text=True, timeout=300)
    return run.returncode, run.stdout, run.stderr


# -- vocab.txt ---------------------------------------------------------------------------------


def _without_fingerprints(prepared) -> None:
    """meta.json as a directory prepared before it held each file's SHA-256: with them, any
    change to vocab.txt is "not the file meta.json describes"; without, the reader's own
    checks speak."""
    meta = json.loads((prepared / "meta.json").read_text())
    del meta["files"]
    (prepared / "meta.json").write_text(json.dumps(meta))


def test_a_vocabulary_cut_inside_a_character(prepared, tmp_path):
    vocab = prepared / "vocab.txt"
    raw = vocab.read_bytes()
    assert raw.endswith("🌙\"\n".encode())  # the last character takes 4 bytes: cut after 2 of them
    vocab.write_bytes(raw[:-4])
    lines = raw.count(b"\n")
    code, out, err = _zero("gpt", "train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 2)
    assert code == 2 and out == "" and f"{vocab}: not the file meta.json describes" in err
    _without_fingerprints(prepared)
    code, out, err = _zero("gpt", "train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 2)
    assert code == 2 and out == ""
    assert err == (f"zero gpt train: error: {vocab}, line {lines}: not valid UTF-8 at byte offset {len(raw) - 6} "
                   "(the file ends inside a character: truncated?)\n")


def test_a_vocabulary_listing_a_character_twice(prepared, tmp_path):
    vocab = prepared / "vocab.txt"
    lines = vocab.read_text(encoding="utf-8").split("\n")[:-1]
    where = lines.index(json.dumps("q"))
    vocab.write_text("\n".join(lines + [json.dumps("q")]) + "\n", encoding="utf-8")
    _without_fingerprints(prepared)
    code, out, err = _zero("gpt", "train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 2)
    assert code == 2 and out == ""
    assert err == (f"zero gpt train: error: {vocab}, line {len(lines) + 1}: the character 'q' (U+0071) is listed "
                   f"again (first on line {where + 1}); a vocabulary lists each character once\n")


def test_vocabulary_errors_in_the_reader(tmp_path):
    with pytest.raises(DataError, match=r"^the vocabulary: the character 'a' \(U\+0061\) is listed twice, as ids 0 "
                                        r"and 2$"):
        CharTokenizer("aba")
    with pytest.raises(DataError, match=r"^run/checkpoint\.safetensors: entry 1 is 'ab', not one character$"):
        CharTokenizer(["a", "ab"], source="run/checkpoint.safetensors")
    # Characters str.splitlines would split at (U+2028, U+0085, U+001C) round-trip
    tokenizer = CharTokenizer(["\n", "\u2028", "\x85", "\x1c", "a"])
    tokenizer.save(tmp_path / "vocab.txt")
    assert CharTokenizer.load(tmp_path / "vocab.txt").chars == tokenizer.chars


# -- MNIST with no images ----------------------------------------------------------------------


@pytest.mark.parametrize("split", ["train", "t10k"])
def test_mnist_files_with_no_images(tiny_mnist, split):
    for path in tiny_mnist.glob(f"{split}-*"):
        path.unlink()
    write_idx(tiny_mnist / f"{split}-images-idx3-ubyte", np.zeros((0, 28, 28), np.uint8))
    write_idx(tiny_mnist / f"{split}-labels-idx1-ubyte", np.zeros(0, np.uint8))
    images = tiny_mnist / f"{split}-images-idx3-ubyte"
    which = "training" if split == "train" else "test"
    with pytest.raises(DataError, match=rf"^{images}: holds 0 images \(shape \[0, 28, 28\]\); the MNIST {which} set"):
        MNIST(tiny_mnist, train=split == "train")
    code, out, err = _zero("mnist", "--data", tiny_mnist, "--epochs", 1, "--hidden", 8)
    assert code == 2 and "test loss" not in out
    assert err == f"zero mnist: error: {images}: holds 0 images (shape [0, 28, 28]); the MNIST {which} set needs at " \
                  "least one\n"


# -- a disk that fills -------------------------------------------------------------------------

# A file-size limit stands in for a full disk; SIGXFSZ ignored, so a write fails with EFBIG.
_FULL_DISK = ("import resource, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
              "resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))")


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="RLIMIT_FSIZE is POSIX's")
def test_a_full_disk_names_the_checkpoint_and_keeps_the_previous_one(tiny_mnist, tmp_path, capsys):
    checkpoint = tmp_path / "m" / "mlp.safetensors"
    assert mnist("--data", tiny_mnist, "--hidden", 64, "--epochs", 1, "--save", checkpoint) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in checkpoint.parent.iterdir()}
    code, out, err = _zero("mnist", "--data", tiny_mnist, "--hidden", 64, "--epochs", 2, "--save", checkpoint,
                           "--resume", checkpoint, preamble=_FULL_DISK)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("zero mnist: error: ")
    assert "safetensors: not written (File too large, after " in err and ".tmp" not in err
    assert "; nothing was created at this path; " in err or "at this path is intact; " in err
    assert err.endswith(f"the last good checkpoint is {checkpoint} (step 4)\n")
    assert {p.name: p.read_bytes() for p in checkpoint.parent.iterdir()} == before  # every checkpoint as it was



# -- a checkpoint whose fields are of the wrong type (its checksum recomputed, as by hand) -------


@pytest.mark.parametrize("key,value,problem", [
    ("config", [1], "corrupt checkpoint: its 'config' is of type list, not dict"),
    ("rng", 5, "corrupt checkpoint: its 'rng' is of type int, not dict"),
    ("positions", 7, "corrupt checkpoint: its 'positions' is of type int, not list"),
    ("rng", {"default": 5}, "cannot restore this checkpoint (KeyError: 'seed')"),
    ("model", {}, "cannot restore this checkpoint (error loading state dict into MLP: missing keys: "),
])
def test_a_checkpoint_with_fields_of_the_wrong_type(tiny_mnist, tmp_path, capsys, key, value, problem):
    import zero

    checkpoint = tmp_path / "mlp.safetensors"
    assert mnist("--data", tiny_mnist, "--hidden", 8, "--epochs", 1, "--save", checkpoint) == 0
    edited = tmp_path / "edited.safetensors"
    zero.save({**zero.load(checkpoint), key: value}, edited)
    capsys.readouterr()
    assert mnist("--data", tiny_mnist, "--hidden", 8, "--epochs", 2, "--resume", edited) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"zero mnist: error: --resume: {edited}: {problem}") and err.count("\n") == 1


def test_a_full_disk_while_writing_metrics_keeps_the_records_before(tmp_path, monkeypatch):
    import errno
    import os

    from zero.cli.common import MetricsFile
    from zero.errors import FileWriteError

    path = tmp_path / "metrics.jsonl"
    metrics = MetricsFile(str(path))
    metrics.write({"step": 1})
    real_write, calls = os.write, []

    def fills_up(fd, data):  # half the line fits, then the disk is full
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", fills_up)
    with pytest.raises(FileWriteError) as e:
        metrics.write({"step": 2, "train_loss": 1.5})
    monkeypatch.undo()
    assert str(e.value) == f"{path}: a record not written (No space left on device); the records before it are kept"
    assert e.value.errno == errno.ENOSPC and path.read_text() == '{"step": 1}\n'  # the torn half line cut off
    metrics.write({"step": 2})
    metrics.close()
    assert path.read_text() == '{"step": 1}\n{"step": 2}\n'
