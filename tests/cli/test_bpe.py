"""`zero gpt prepare --tokenizer bpe`: a byte-level BPE (Hugging Face's tokenizers) for the
GPT job, run as a user runs it (the CLI in a child process), and the validation loss in
bits per character, which makes the two tokenizers comparable."""
import json
import math
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tests.cli.cli_helpers import TINY_GPT, child_environment, gpt

tokenizers = pytest.importorskip("tokenizers")

TEXT = ("To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer.\n" * 30
        + "Café, naïve, façade; 床前明月光，疑是地上霜。🌙 ☃\n" * 15)


def zero(*argv, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "zero", *map(str, argv)], env=child_environment(),
                            capture_output=True, text=True, encoding="utf-8", timeout=300)
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def bpe_data(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bpe")
    (directory / "input.txt").write_text(TEXT, encoding="utf-8")
    result = zero("gpt", "prepare", directory / "input.txt", "--out", directory / "data", "--tokenizer", "bpe",
                  "--vocab-size", 300)
    assert "byte-level BPE tokens" in result.stdout
    return directory / "data"


@pytest.fixture(scope="module")
def bpe_run(bpe_data, tmp_path_factory):
    run = tmp_path_factory.mktemp("bpe-run") / "run"
    result = zero("gpt", "train", "--data", bpe_data, "--out", run, "--steps", 4, "--eval-interval", 2, *TINY_GPT)
    assert "bits/char)" in result.stdout
    return run


def test_prepare_writes_a_tokenizer_json_the_library_reads(bpe_data):
    meta = json.loads((bpe_data / "meta.json").read_text(encoding="utf-8"))
    assert meta["tokenizer"] == "bpe" and meta["requested_vocab_size"] == 300
    assert 256 < meta["vocab_size"] <= 300 and meta["token_dtype"] == "<u2"   # > 256 ids: two bytes each
    assert not (bpe_data / "vocab.txt").exists()
    library = tokenizers.Tokenizer.from_file(str(bpe_data / "tokenizer.json"))
    assert library.get_vocab_size() == meta["vocab_size"]
    ids = [np.fromfile(bpe_data / name, dtype=meta["token_dtype"]) for name in ("train.bin", "val.bin")]
    assert [len(part) for part in ids] == [meta["train_tokens"], meta["val_tokens"]]
    assert meta["train_characters"] + meta["val_characters"] == len(TEXT) == meta["characters"]
    # the library decodes each split back to its text: train is the first 90% of the characters
    cut = meta["train_characters"]
    assert library.decode(ids[0].tolist()) == TEXT[:cut] and library.decode(ids[1].tolist()) == TEXT[cut:]
    assert meta["train_tokens"] < 0.8 * cut   # merges: fewer tokens than characters


def test_prepare_refuses_bad_vocabulary_sizes(tmp_path):
    (tmp_path / "t.txt").write_text(TEXT, encoding="utf-8")
    small = zero("gpt", "prepare", tmp_path / "t.txt", "--out", tmp_path / "d", "--tokenizer", "bpe",
                 "--vocab-size", 100, check=False)
    assert small.returncode == 2 and "--vocab-size must be between 256" in small.stderr
    char = zero("gpt", "prepare", tmp_path / "t.txt", "--out", tmp_path / "d", "--tokenizer", "char",
                "--vocab-size", 300, check=False)
    assert char.returncode == 2 and "--vocab-size applies to --tokenizer bpe only" in char.stderr
    assert len(small.stderr.splitlines()) == len(char.stderr.splitlines()) == 1
    assert not (tmp_path / "d").exists()


def test_train_then_sample_decodes_through_the_checkpoints_tokenizer(bpe_data, bpe_run):
    from zero.serialization import load

    checkpoint = load(bpe_run / "checkpoint.safetensors")
    assert checkpoint["config"]["model"]["vocab_size"] == json.loads((bpe_data / "meta.json").read_text())[
        "vocab_size"]
    assert checkpoint["tokenizer"]["json"] == (bpe_data / "tokenizer.json").read_text(encoding="utf-8")
    prompt = "Café ☃ 床前 🌙"  # non-ASCII, and characters the BPE never merged: still bytes it knows
    plain = zero("gpt", "sample", "--run", bpe_run, "--prompt", prompt, "--tokens", 40, "--seed", 3)
    assert plain.stdout.startswith(prompt) and len(plain.stdout) > len(prompt) + 5
    streamed = zero("gpt", "sample", "--run", bpe_run, "--prompt", prompt, "--tokens", 40, "--seed", 3, "--stream")
    assert streamed.stdout == plain.stdout   # (the stream printed whole characters: the same UTF-8 text)


def test_a_run_directory_alone_samples(bpe_data, bpe_run, tmp_path):
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "checkpoint.safetensors").write_bytes((bpe_run / "checkpoint.safetensors").read_bytes())
    assert zero("gpt", "sample", "--run", moved, "--tokens", 10).stdout


def test_the_stream_holds_back_a_character_cut_between_tokens():
    from zero.data.tokenizers import BPETokenizer

    tokenizer = BPETokenizer.train(["ab" * 50], 258)   # no merge touches the snowman's three bytes
    ids = tokenizer.encode("a☃b")
    assert len(ids) == 5
    stream = tokenizer.stream_decoder()
    pieces = [stream([i]) for i in ids]
    assert pieces == ["a", "", "", "☃", "b"]
    assert tokenizer.decode(ids[:2]) == "a\ufffd"      # decode: a cut at the end shows as U+FFFD
    assert tokenizer.decode(ids) == tokenizers.Tokenizer.from_str(tokenizer.json).decode(ids.tolist()) == "a☃b"


def test_resume_continues_with_the_same_tokenizer(bpe_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(bpe_run, run)   # (the module's run stays at step 4 for the other tests)
    result = zero("gpt", "train", "--out", run, "--resume", "--steps", 6, "--metrics", tmp_path / "m.jsonl")
    assert "resumed from" in result.stdout and "after step 4" in result.stdout


def test_a_prepared_directory_of_another_tokenizer_is_refused_on_resume(tmp_path):
    (tmp_path / "t.txt").write_text(TEXT, encoding="utf-8")
    zero("gpt", "prepare", tmp_path / "t.txt", "--out", tmp_path / "d", "--tokenizer", "char")
    assert gpt("train", "--data", tmp_path / "d", "--out", tmp_path / "run", "--steps", 2, "--eval-interval", 2,
               *TINY_GPT) == 0
    again = zero("gpt", "prepare", tmp_path / "t.txt", "--out", tmp_path / "d", "--tokenizer", "bpe",
                 "--vocab-size", 280)
    assert f"{tmp_path / 'd'}: held data prepared with --tokenizer char; replaced by --tokenizer bpe" in again.stdout
    assert not (tmp_path / "d" / "vocab.txt").exists()
    refused = zero("gpt", "train", "--out", tmp_path / "run", "--resume", "--steps", 4, check=False)
    assert refused.returncode == 2
    assert "was trained on data with another tokenizer or vocabulary" in refused.stderr
    assert "a byte-level BPE of" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def _evaluations(metrics):
    return [r for r in map(json.loads, metrics.read_text().splitlines()) if "val_loss" in r]


def test_bits_per_character_of_the_char_tokenizer_is_the_loss_over_ln2(prepared, tmp_path, capsys):
    assert gpt("train", "--data", prepared, "--out", tmp_path / "run", "--steps", 2, "--eval-interval", 2,
               *TINY_GPT) == 0
    (record,) = _evaluations(tmp_path / "run" / "metrics.jsonl")
    assert record["val_bpc"] == pytest.approx(record["val_loss"] / math.log(2), abs=1e-5)
    assert f"({record['val_bpc']:.3f} bits/char)" in capsys.readouterr().out


def test_bits_per_character_of_bpe_counts_the_characters_its_tokens_cover(bpe_data, bpe_run):
    meta = json.loads((bpe_data / "meta.json").read_text())
    records = _evaluations(bpe_run / "metrics.jsonl")
    assert len(records) == 2
    ratio = meta["val_tokens"] / meta["val_characters"]
    assert ratio > 1.5   # the val split is the CJK and emoji lines: up to 4 bytes, so tokens, a character
    for record in records:
        assert record["val_bpc"] == pytest.approx(record["val_loss"] * ratio / math.log(2), abs=1e-4)


def test_a_preparation_of_an_older_zero_still_reads_as_int32_characters(tmp_path):
    from zero.data.text import prepare_text
    from zero.data.text import open_prepared

    meta = prepare_text(TEXT, tmp_path)
    assert meta["token_dtype"] == "|u1"
    ids = {name: np.fromfile(tmp_path / name, dtype="u1") for name in ("train.bin", "val.bin")}
    for name, part in ids.items():   # as an older Zero wrote them: int32, and a meta.json without the new keys
        part.astype("<i4").tofile(tmp_path / name)
    old = {k: meta[k] for k in ("source", "characters", "vocab_size", "train_tokens", "val_tokens")}
    (tmp_path / "meta.json").write_text(json.dumps(old))
    tokenizer, train, val = open_prepared(tmp_path)
    assert tokenizer.kind == "char" and tokenizer.decode(train.ids) + tokenizer.decode(val.ids) == TEXT
    assert val.bits_per_character(1.0) == pytest.approx(1 / math.log(2))


def test_the_plot_has_a_bits_per_character_panel(bpe_run):
    pytest.importorskip("matplotlib")
    from zero.cli.plot import figure, read_metrics

    panels = [ax.get_ylabel() for ax in figure([("run", read_metrics(bpe_run / "metrics.jsonl"))]).axes]
    assert panels == ["loss", "bits per char", "learning rate"], panels
    assert (bpe_run / "metrics.png").is_file()


def test_the_default_tokenizer_is_a_512_token_bpe(tmp_path):
    """`zero gpt prepare` without --tokenizer learns a byte-level BPE of 512 tokens (the
    README's comparison: fewer bits per character than char at the same wall time)."""
    (tmp_path / "t.txt").write_text(TEXT * 4, encoding="utf-8")
    result = zero("gpt", "prepare", tmp_path / "t.txt", "--out", tmp_path / "d")
    meta = json.loads((tmp_path / "d" / "meta.json").read_text(encoding="utf-8"))
    assert "byte-level BPE tokens" in result.stdout
    assert meta["tokenizer"] == "bpe" and meta["requested_vocab_size"] == 512
    assert (tmp_path / "d" / "tokenizer.json").is_file() and not (tmp_path / "d" / "vocab.txt").exists()
