"""The GPT job's tokenizers: characters (the book's) or a byte-level BPE.

``zero gpt prepare --tokenizer char`` gives each distinct character of the text an id
(``CharTokenizer``, vocab.txt: the book's); ``--tokenizer bpe --vocab-size N`` (the
default, 512) trains a byte-level BPE on the training part of the text with Hugging
Face's ``tokenizers`` library (``BPETokenizer``, tokenizer.json -- the library's own
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
import json
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from ..errors import DataError, UsageError
from ..files import atomic_write

TOKEN_DTYPE = np.dtype("<i4")    # the ids' type in preparations whose meta.json names none

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


class CharTokenizer:
    """Characters <-> ids over a fixed vocabulary."""

    def __init__(self, chars, source: str = "the vocabulary"):
        """``source`` names where ``chars`` came from in errors (a file, a checkpoint)."""
        self.chars = list(chars)
        self.index: dict[str, int] = {}
        for i, char in enumerate(self.chars):
            if not isinstance(char, str) or len(char) != 1:
                raise DataError(f"{source}: entry {i} is {char!r}, not one character")
            if char in self.index:
                raise DataError(f"{source}: the character {_show(char)} is listed twice, as ids "
                                f"{self.index[char]} and {i}")
            self.index[char] = i

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        return cls(sorted(set(text)))

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        try:
            return np.fromiter((self.index[c] for c in text), dtype=TOKEN_DTYPE, count=len(text))
        except KeyError as e:
            char = e.args[0]
            raise DataError(f"the character {char!r} (U+{ord(char):04X}) at position {text.index(char)} of "
                            f"the text is not in the vocabulary of {len(self)} characters") from None

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)

    # -- what the GPT job asks of any tokenizer (data/tokenizers.py's BPETokenizer too) -----------
    kind = "char"

    def stream_decoder(self):
        """The text of the next ids, as they come (a character is never cut)."""
        return self.decode

    def default_prompt(self) -> str:
        return "\n" if "\n" in self.index else self.chars[0]

    def checkpoint_entries(self) -> dict:
        return {"vocab": list(self.chars)}

    def same_as(self, other) -> bool:
        return isinstance(other, CharTokenizer) and other.chars == self.chars

    def describe(self) -> str:
        return f"characters ({len(self):,})"

    def check_prompt(self, prompt: str) -> None:
        """Every character of the prompt the model cannot read, named at once."""
        unknown = [(position, char) for position, char in enumerate(prompt) if char not in self.index]
        if not unknown:
            return
        shown = [f"{char!r} (U+{ord(char):04X}) at position {position}" for position, char in unknown[:10]]
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        them = "it is" if len(unknown) == 1 else "they are"
        raise DataError(f"--prompt: {len(unknown)} character{'s' if len(unknown) > 1 else ''} not in the vocabulary "
                        f"of {len(self)} characters this model was trained on ({them} not in its training text): "
                        f"{', '.join(shown)}{more}")

    # -- vocab.txt ------------------------------------------------------------------------------
    def save(self, path) -> None:
        lines = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in self.chars)
        with atomic_write(path) as f:
            f.write(lines.encode("utf-8"))

    @classmethod
    def load(cls, path) -> CharTokenizer:
        """The vocabulary in ``path`` (as ``save`` writes it); a DataError naming the file and
        the line for anything else: bad UTF-8 (a file cut inside a character), a line that
        is not one character, a character listed twice."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise DataError(f"{path}: no vocabulary file (run `zero gpt prepare TEXT --out DIR` first)") from None
        except IsADirectoryError:
            raise DataError(f"{path}: is a directory, not a vocabulary file") from None
        except OSError as e:
            raise DataError(f"{path}: cannot be read ({e.strerror or e})") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            cut = " (the file ends inside a character: truncated?)" if e.end == len(raw) else ""
            raise DataError(f"{path}, line {line}: not valid UTF-8 at byte offset {e.start}{cut}") from None
        # Lines end at "\n" alone: the JSON strings may hold U+2028, U+0085 ... unescaped,
        # which str.splitlines would also split at.
        lines = text.split("\n")
        if lines and not lines[-1]:
            lines.pop()
        chars: list[str] = []
        first_line: dict[str, int] = {}
        for number, line in enumerate(lines, start=1):
            try:
                char = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                char = None
            if not isinstance(char, str) or len(char) != 1:
                raise DataError(f"{path}, line {number}: expected one character as a JSON string, got {line!r}")
            if char in first_line:
                raise DataError(f"{path}, line {number}: the character {_show(char)} is listed again (first on "
                                f"line {first_line[char]}); a vocabulary lists each character once")
            first_line[char] = number
            chars.append(char)
        if not chars:
            raise DataError(f"{path}: the vocabulary is empty")
        return cls(chars, source=str(path))


def _show(char: str) -> str:
    """A character as errors show it: its repr and its code point ('\\n' (U+000A))."""
    return f"{char!r} (U+{ord(char):04X})"


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
