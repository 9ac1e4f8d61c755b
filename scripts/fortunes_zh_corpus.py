"""Build a ~1 MB Chinese corpus from Debian's fortunes-zh (poems, proverbs, classics).

    sudo apt-get install fortunes-zh
    python scripts/fortunes_zh_corpus.py corpus.txt
    zero gpt prepare corpus.txt --out data/fortunes-zh

The package's ``chinese`` file holds some 5,000 fortunes separated by lines of
"%": Debian tables drawn with box characters, then classical texts, poems and
proverbs, in that order. Taking the fortunes that are mostly CJK text (no
tables), adding the Tang and Song poems, stripping the terminal colour codes
and shuffling them with a fixed seed gives a corpus whose last 10% (the
validation split) reads like the rest.
"""
from __future__ import annotations

import random
import re
import sys
from pathlib import Path

FORTUNES = Path(__import__("os").environ.get("FORTUNES_DIR", "/usr/share/games/fortunes"))
COLOUR_CODES = re.compile("\x1b\\[[0-9;]*m")
TABLE_CHARACTERS = set("─│┼├┤┌┐└┘┬┴")


def fortunes(name: str) -> list[str]:
    text = COLOUR_CODES.sub("", (FORTUNES / name).read_text(encoding="utf-8"))
    return [f.strip("\n") for f in text.split("\n%\n") if f.strip()]


def mostly_chinese(fortune: str) -> bool:
    cjk = sum("\u4e00" <= c <= "\u9fff" for c in fortune)
    return cjk > len(fortune) / 2 and not TABLE_CHARACTERS & set(fortune)


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(f"usage: python {sys.argv[0]} OUTPUT.txt")
    if not FORTUNES.is_dir():
        raise SystemExit(f"{FORTUNES} is missing: install Debian's fortunes-zh package")
    chosen = [f for f in fortunes("chinese") if mostly_chinese(f)] + fortunes("tang300") + fortunes("song100")
    random.Random(0).shuffle(chosen)
    text = "\n\n".join(chosen) + "\n"
    Path(sys.argv[1]).write_text(text, encoding="utf-8")
    print(f"{len(chosen)} fortunes, {len(text):,} characters, {len(text.encode()):,} bytes, "
          f"{len(set(text)):,} distinct characters -> {sys.argv[1]}")


if __name__ == "__main__":
    main()
