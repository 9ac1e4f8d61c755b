"""Text data for the GPT job (the book's ``prepare_stone.py``), by character or BPE token.

The tokenizers are in ``tokenizers.py``: the book's, whose vocabulary is the sorted
set of Unicode characters in the text (a character's id is its position), and a
byte-level BPE. ``prepare_text`` writes, into one directory:

    vocab.txt   (characters) one JSON string per line, line i = the character with
                id i, so a newline, a tab, a space, CJK and emoji all round-trip exactly
    tokenizer.json  (BPE) the tokenizers library's own file
    train.bin   the ids of the first 90% of the text, in the smallest integer type
                that holds the vocabulary (meta.json names it; older ones: int32)
    val.bin     the last 10%
    meta.json   where the text came from, the sizes, and each file's size and SHA-256

meta.json is written last and removed first: a directory whose preparation did not
finish (a full disk, a kill) has none, and one where a second preparation stopped
half-way cannot pair one text's vocabulary with another's ids unnoticed --
``check_prepared`` (which ``zero gpt train`` runs) compares each file with meta.json.

``TokenData`` memory-maps a .bin file and draws training batches: B random
offsets, each giving T ids as input and the same T shifted by one as target.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..files import atomic_write
from .tokenizers import TOKEN_DTYPE, BPETokenizer, CharTokenizer, Tokenizer  # (CharTokenizer: also imported from here)

VOCAB_FILE, TRAIN_FILE, VAL_FILE, META_FILE = "vocab.txt", "train.bin", "val.bin", "meta.json"
BPE_FILE = "tokenizer.json"


def read_text(path) -> str:
    """The file's text, or a DataError naming the file (and the byte offset of bad UTF-8)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, not a text file") from None
    except OSError as e:
        raise DataError(f"{path}: cannot be read ({e.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not valid UTF-8 at byte offset {e.start} "
                        f"(bytes {raw[e.start:e.start + 4]!r}: {e.reason})") from None
    if not text:
        raise DataError(f"{path}: the file is empty")
    return text


def token_dtype(vocab_size: int) -> np.dtype:
    """The smallest little-endian integer type that holds every id of the vocabulary."""
    return np.dtype("u1" if vocab_size <= 1 << 8 else "<u2" if vocab_size <= 1 << 16 else "<i4")


def tokenizer_file(kind: str) -> str:
    return BPE_FILE if kind == "bpe" else VOCAB_FILE


def prepare_text(text: str, out_dir, source: str = "", split: float = 0.9, tokenizer: str = "char",
                 vocab_size: int | None = None) -> dict:
    """Split ``text`` into its first 90% (train) and the rest (val) by character, tokenise
    both -- by character (the vocabulary: the text's distinct characters) or with a
    byte-level BPE of ``vocab_size`` tokens learnt from the train part -- and write the
    tokenizer's file, train.bin, val.bin (the smallest integer type for the vocabulary)
    and meta.json."""
    if len(text) < 2:
        raise DataError(f"{source or 'the text'}: needs at least 2 characters to split into train and val")
    cut = min(max(1, int(len(text) * split)), len(text) - 1)
    parts = {TRAIN_FILE: text[:cut], VAL_FILE: text[cut:]}
    if tokenizer == "bpe":
        if vocab_size is None:
            raise DataError("--tokenizer bpe needs --vocab-size N")
        chosen: CharTokenizer | BPETokenizer = BPETokenizer.train(_chunks(parts[TRAIN_FILE]), vocab_size)
    elif tokenizer == "char":
        chosen = CharTokenizer.from_text(text)
    else:
        raise DataError(f"unknown tokenizer {tokenizer!r} (char or bpe)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dtype = token_dtype(len(chosen))
    ids = {name: chosen.encode(part) for name, part in parts.items()}
    (out / META_FILE).unlink(missing_ok=True)       # from here until the new one: "not prepared"
    for kind in ("char", "bpe"):                    # another preparation's tokenizer goes with it
        if kind != tokenizer:
            (out / tokenizer_file(kind)).unlink(missing_ok=True)
    chosen.save(out / tokenizer_file(tokenizer))
    for name, part_ids in ids.items():
        with atomic_write(out / name) as f:
            f.write(part_ids.astype(dtype).tobytes())
    meta = {"source": str(source), "tokenizer": tokenizer, "characters": len(text), "vocab_size": len(chosen),
            **({"requested_vocab_size": vocab_size} if tokenizer == "bpe" else {}),
            "token_dtype": dtype.str, "train_tokens": len(ids[TRAIN_FILE]), "val_tokens": len(ids[VAL_FILE]),
            "train_characters": cut, "val_characters": len(text) - cut,
            "files": {name: _fingerprint(out / name) for name in (tokenizer_file(tokenizer), TRAIN_FILE, VAL_FILE)}}
    with atomic_write(out / META_FILE) as f:
        f.write((json.dumps(meta, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return meta


def _chunks(text: str, size: int = 1 << 16):
    """The text in pieces cut after a newline (what the BPE trainer counts words in)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def _fingerprint(path: Path) -> dict:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def check_prepared(data_dir) -> dict:
    """DataError unless ``data_dir`` holds one whole preparation: meta.json, and the three
    files it describes (the tokenizer's, train.bin, val.bin), each of its size and SHA-256
    (a directory prepared by an older Zero, whose meta.json lists no files, is checked by its
    token counts only). Returns meta.json's contents."""
    directory = Path(data_dir)
    again = f"prepare it again: zero gpt prepare TEXT --out {directory}"
    if not any((directory / name).exists() for name in (META_FILE, VOCAB_FILE, BPE_FILE, TRAIN_FILE, VAL_FILE)):
        raise DataError(f"{directory}: no vocabulary file and no token files (run `zero gpt prepare TEXT --out "
                        f"{directory}` first)")
    try:
        meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{directory}: no {META_FILE}, so its preparation did not finish (or it was never "
                        f"prepared); {again}") from None
    except (OSError, ValueError) as e:
        raise DataError(f"{directory / META_FILE}: unreadable ({e}); {again}") from None
    if not isinstance(meta, dict):
        raise DataError(f"{directory / META_FILE}: not a JSON object; {again}")
    kind = meta.get("tokenizer", "char")
    if kind not in ("char", "bpe"):
        raise DataError(f"{directory / META_FILE}: names the tokenizer {kind!r}, not char or bpe; {again}")
    files = meta.get("files")
    if files is None:
        expected = {TRAIN_FILE: meta.get("train_tokens"), VAL_FILE: meta.get("val_tokens")}
        itemsize = recorded_dtype(meta, directory).itemsize
        for name, tokens in expected.items():
            path = directory / name
            if isinstance(tokens, int) and path.is_file() and path.stat().st_size != tokens * itemsize:
                raise DataError(f"{path}: {path.stat().st_size} bytes, but {META_FILE} counts {tokens} tokens: "
                                f"the files are of different preparations; {again}")
        return meta
    for name in (tokenizer_file(kind), TRAIN_FILE, VAL_FILE):
        path, recorded = directory / name, files.get(name) if isinstance(files, dict) else None
        if not path.is_file():
            raise DataError(f"{path}: missing, though {META_FILE} lists it; {again}")
        if not isinstance(recorded, dict) or _fingerprint(path) != recorded:
            raise DataError(f"{path}: not the file {META_FILE} describes (another preparation's, or changed "
                            f"since); {again}")
    return meta


def recorded_dtype(meta: dict, directory: Path) -> np.dtype:
    """The ids' type meta.json records (int32: an older preparation's, which records none)."""
    try:
        return np.dtype(meta.get("token_dtype", TOKEN_DTYPE))
    except TypeError:
        raise DataError(f"{directory / META_FILE}: names the token type {meta['token_dtype']!r}; prepare it again: "
                        f"zero gpt prepare TEXT --out {directory}") from None


def prepare_file(text_path, out_dir, tokenizer: str = "char", vocab_size: int | None = None) -> dict:
    return prepare_text(read_text(text_path), out_dir, source=str(text_path), tokenizer=tokenizer,
                        vocab_size=vocab_size)


class TokenData:
    """The ids of one split, memory-mapped, and random (input, target) windows from them.
    ``characters``: how many characters of text they encode (bits per character)."""

    def __init__(self, path, vocab_size: int | None = None, dtype=TOKEN_DTYPE, characters: int | None = None):
        path = Path(path)
        dtype = np.dtype(dtype)
        if not path.is_file():
            raise DataError(f"{path}: no such token file (run `zero gpt prepare TEXT --out DIR` first)")
        size = path.stat().st_size
        if size % dtype.itemsize:
            raise DataError(f"{path}: {size} bytes is not a whole number of {dtype.name} tokens (truncated?)")
        self.path = path
        self.ids = np.memmap(path, dtype=dtype, mode="r") if size else np.zeros(0, dtype)
        self.characters = characters
        if vocab_size is not None and len(self.ids):
            low, high = int(self.ids.min()), int(self.ids.max())
            if low < 0 or high >= vocab_size:
                raise DataError(f"{path}: token ids span [{low}, {high}], outside a vocabulary of {vocab_size}")

    def bits_per_character(self, loss: float) -> float:
        """A mean loss in nats per token of this split as bits per character of its text:
        loss x tokens / characters / ln 2 (with one token a character, loss / ln 2)."""
        characters = self.characters or len(self.ids)
        return loss * len(self.ids) / max(characters, 1) / math.log(2)

    def __len__(self) -> int:
        return len(self.ids)

    def batch(self, batch_size: int, block_size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(inputs, targets), each [batch_size, block_size] int64; targets are inputs shifted by one."""
        if len(self.ids) <= block_size:
            raise DataError(f"{self.path}: {len(self.ids)} tokens cannot fill a window of block size "
                            f"{block_size} plus one target; use a smaller --block-size or more text")
        starts = rng.integers(0, len(self.ids) - block_size, size=batch_size)
        windows = np.stack([self.ids[s:s + block_size + 1] for s in starts]).astype(np.int64)
        return windows[:, :-1], windows[:, 1:]


def open_prepared(data_dir) -> tuple[Tokenizer, TokenData, TokenData]:
    """A prepared directory's tokenizer (of the kind its meta.json records; older
    preparations, which record none, are by character) and its train and val ids, each
    file checked against meta.json first."""
    directory = Path(data_dir)
    meta = check_prepared(directory)
    tokenizer: Tokenizer
    if meta.get("tokenizer", "char") == "bpe":
        tokenizer = BPETokenizer.load(directory / BPE_FILE)
    else:
        tokenizer = CharTokenizer.load(directory / VOCAB_FILE)
    dtype = recorded_dtype(meta, directory)  # (older preparations name none: int32)
    splits = [TokenData(directory / name, len(tokenizer), dtype, meta.get(characters))
              for name, characters in ((TRAIN_FILE, "train_characters"), (VAL_FILE, "val_characters"))]
    return tokenizer, splits[0], splits[1]
