"""Character-level text data for the GPT job (the book's ``prepare_stone.py``).

The vocabulary is the sorted set of Unicode characters in the text; a
character's id is its position. ``prepare`` writes, into one directory:

    vocab.txt   one JSON string per line, line i = the character with id i, so a
                newline, a tab, a space, CJK and emoji all round-trip exactly
    train.bin   the first 90% of the ids, little-endian int32
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

TOKEN_DTYPE = np.dtype("<i4")    # the ids' type in preparations whose meta.json names none
VOCAB_FILE, TRAIN_FILE, VAL_FILE, META_FILE = "vocab.txt", "train.bin", "val.bin", "meta.json"
BPE_FILE = "tokenizer.json"


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
        from .tokenizers import BPETokenizer

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
