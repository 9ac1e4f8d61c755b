"""The GPT job's tokenizers: characters (the book's) or a byte-level BPE.

``zero gpt prepare --tokenizer char`` (the default) gives each distinct character of
the text an id (``CharTokenizer``, vocab.txt); ``--tokenizer bpe --vocab-size N``
trains a byte-level BPE on the training part of the text with Hugging Face's
``tokenizers`` library (``BPETokenizer``, tokenizer.json -- the library's own
format, which ``tokenizers.Tokenizer.from_file`` and anything built on it read).

A byte-level BPE's alphabet is the 256 bytes, so every text encodes (no unknown
characters), and a token can end inside a multi-byte UTF-8 character: ``decode``
replaces an incomplete character at the very end with U+FFFD, and
``stream_decoder`` holds such bytes back until the character is whole.

Both share what the job uses: ``kind``, ``len``, ``encode`` (an int64 array),
``decode``, ``stream_decoder``, ``default_prompt``, ``check_prompt``,
``checkpoint_entries`` (what a checkpoint carries, so that a run directory alone
can sample: the characters, or tokenizer.json's text), ``same_as`` and ``describe``.
"""
from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from ..errors import DataError, UsageError
from ..files import atomic_write
from .text import (BPE_FILE, TRAIN_FILE, VAL_FILE, VOCAB_FILE, CharTokenizer, TokenData, check_prepared,
                   recorded_dtype)

KINDS = ("char", "bpe")
MIN_BPE_VOCAB = 256     # the byte alphabet
MAX_BPE_VOCAB = 1 << 20


def _bytes_to_symbols() -> dict[int, str]:
    """The byte-level alphabet: each byte as the printable character a byte-level BPE's
    vocabulary writes it with (GPT-2's convention, which the library follows): the
    printable Latin-1 bytes stand for themselves, the other 68 take U+0100 onwards."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


SYMBOL_BYTES = {symbol: byte for byte, symbol in _bytes_to_symbols().items()}


def _library():
    try:
        import tokenizers
    except ImportError:
        raise UsageError("--tokenizer bpe needs Hugging Face's tokenizers library: pip install tokenizers") from None
    return tokenizers


class BPETokenizer:
    """A byte-level BPE (Hugging Face ``tokenizers``) over the text's bytes."""

    kind = "bpe"

    def __init__(self, json_text: str, source: str = "the tokenizer"):
        tokenizers = _library()
        try:
            self.library_tokenizer = tokenizers.Tokenizer.from_str(json_text)
        except Exception as e:  # the library raises its own Exception for any bad JSON
            raise DataError(f"{source}: not a tokenizer the tokenizers library reads ({e})") from None
        self.json = json_text
        size = self.library_tokenizer.get_vocab_size(with_added_tokens=True)
        self.token_bytes: list[bytes] = []
        for i in range(size):
            token = self.library_tokenizer.id_to_token(i)
            if token is None or any(symbol not in SYMBOL_BYTES for symbol in token):
                raise DataError(f"{source}: token {i} ({token!r}) is not a byte-level token; "
                                "prepare the data again: zero gpt prepare TEXT --tokenizer bpe --out DIR")
            self.token_bytes.append(bytes(SYMBOL_BYTES[symbol] for symbol in token))

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int) -> BPETokenizer:
        """A byte-level BPE of ``vocab_size`` tokens at most (fewer when the text runs out of
        pairs to merge) learnt from ``texts``."""
        if not MIN_BPE_VOCAB <= vocab_size <= MAX_BPE_VOCAB:
            raise UsageError(f"--vocab-size must be between {MIN_BPE_VOCAB} (the 256 bytes) and {MAX_BPE_VOCAB:,} "
                             f"for --tokenizer bpe, got {vocab_size}")
        tokenizers = _library()
        tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
        tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = tokenizers.decoders.ByteLevel()
        trainer = tokenizers.trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, special_tokens=[],
                                                 initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
        tokenizer.train_from_iterator(texts, trainer=trainer)
        return cls(tokenizer.to_str())

    def __len__(self) -> int:
        return len(self.token_bytes)

    def encode(self, text: str) -> np.ndarray:
        return np.asarray(self.library_tokenizer.encode(text).ids, dtype=np.int64)

    def decode(self, ids) -> str:
        return b"".join(self.token_bytes[int(i)] for i in ids).decode("utf-8", errors="replace")

    def stream_decoder(self) -> Callable[[Iterable[int]], str]:
        """A function of the next ids giving the text they complete: the bytes of a character
        cut between tokens wait for the rest (the whole characters only, ever)."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        return lambda ids: decoder.decode(b"".join(self.token_bytes[int(i)] for i in ids))

    def default_prompt(self) -> str:
        return "\n"

    def check_prompt(self, prompt: str) -> None:
        """Nothing to check: every text is bytes, and every byte is a token."""

    def checkpoint_entries(self) -> dict:
        return {"vocab": [], "tokenizer": {"kind": self.kind, "json": self.json}}

    def same_as(self, other) -> bool:
        return isinstance(other, BPETokenizer) and other.json == self.json

    def describe(self) -> str:
        return f"a byte-level BPE of {len(self):,} tokens"

    def save(self, path) -> None:
        with atomic_write(path) as f:
            f.write(self.json.encode("utf-8"))

    @classmethod
    def load(cls, path) -> BPETokenizer:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise DataError(f"{path}: no tokenizer file (run `zero gpt prepare TEXT --tokenizer bpe --out DIR` "
                            "first)") from None
        except (OSError, UnicodeDecodeError) as e:
            raise DataError(f"{path}: cannot be read ({e})") from None
        return cls(text, source=str(path))


Tokenizer = CharTokenizer | BPETokenizer


def from_checkpoint(checkpoint: dict, source: str) -> Tokenizer:
    """The tokenizer a ``zero gpt train`` checkpoint carries (older ones: the characters)."""
    entry = checkpoint.get("tokenizer")
    if entry is None:
        return CharTokenizer(checkpoint["vocab"], source=source)
    if not isinstance(entry, dict) or entry.get("kind") != "bpe" or not isinstance(entry.get("json"), str):
        raise DataError(f"{source}: its tokenizer entry is not one this version of Zero reads")
    return BPETokenizer(entry["json"], source=source)


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
