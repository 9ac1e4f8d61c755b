"""Character-level data preparation and token batches for the GPT job."""
import json

import numpy as np
import pytest

from zero.data.text import CharTokenizer, TokenData, prepare_file, read_text
from zero.errors import DataError

TRICKY = "第一行：春眠不觉晓\n\tTabbed line with spaces  and emoji 🚀🌏\r\nback\\slash \"quotes\" 处处闻啼鸟\n"


def test_prepare_round_trips_cjk_emoji_and_whitespace(tmp_path):
    source = tmp_path / "poem.txt"
    source.write_text(TRICKY * 20, encoding="utf-8")
    meta = prepare_file(source, tmp_path / "data")
    tokenizer = CharTokenizer.load(tmp_path / "data" / "vocab.txt")
    assert tokenizer.chars == sorted(set(TRICKY))
    assert meta["vocab_size"] == len(tokenizer)
    assert meta["token_dtype"] == "|u1"   # the smallest type that holds the vocabulary
    train = np.fromfile(tmp_path / "data" / "train.bin", dtype=meta["token_dtype"])
    val = np.fromfile(tmp_path / "data" / "val.bin", dtype=meta["token_dtype"])
    assert len(train) == int(len(TRICKY * 20) * 0.9) and len(train) + len(val) == len(TRICKY * 20)
    assert tokenizer.decode(np.concatenate([train, val])) == TRICKY * 20
    lines = (tmp_path / "data" / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == tokenizer.chars  # one JSON string per line


def test_many_distinct_characters(tmp_path):
    text = "".join(chr(0x4E00 + i) for i in range(5000)) * 2
    source = tmp_path / "cjk.txt"
    source.write_text(text, encoding="utf-8")
    meta = prepare_file(source, tmp_path / "out")
    assert meta["vocab_size"] == 5000 and meta["token_dtype"] == "<u2"
    ids = np.fromfile(tmp_path / "out" / "train.bin", dtype="<u2")
    assert CharTokenizer.load(tmp_path / "out" / "vocab.txt").decode(ids) == text[:len(ids)]


@pytest.mark.parametrize("content, message", [
    (b"", "empty"),
    (b"good text \xff\xfe bad", r"not valid UTF-8 at byte offset 10"),
])
def test_bad_input_names_the_file(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message) as info:
        read_text(path)
    assert str(path) in str(info.value)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_text(tmp_path / "nope.txt")
    with pytest.raises(DataError, match="directory"):
        read_text(tmp_path)


def test_token_batches_are_shifted_windows(tmp_path):
    ids = np.arange(1000, dtype="<i4") % 50
    ids.tofile(tmp_path / "train.bin")
    data = TokenData(tmp_path / "train.bin", vocab_size=50)
    x, y = data.batch(8, 16, np.random.default_rng(0))
    assert x.shape == y.shape == (8, 16) and x.dtype == np.int64
    np.testing.assert_array_equal(y[:, :-1], x[:, 1:])
    np.testing.assert_array_equal((x + 1) % 50, y)
    with pytest.raises(DataError, match="block size"):
        data.batch(2, 1000, np.random.default_rng(0))
    with pytest.raises(DataError, match="outside a vocabulary"):
        TokenData(tmp_path / "train.bin", vocab_size=10)
    (tmp_path / "odd.bin").write_bytes(b"\x00" * 7)
    with pytest.raises(DataError, match="whole number"):
        TokenData(tmp_path / "odd.bin")


def test_unknown_character_is_named():
    tokenizer = CharTokenizer("abc")
    with pytest.raises(DataError, match=r"'z' \(U\+007A\)"):
        tokenizer.encode("abz")
