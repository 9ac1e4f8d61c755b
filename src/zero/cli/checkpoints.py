"""A run's checkpoints: the latest, the last few, and the best, rotated atomically.

For a latest checkpoint ``DIR/NAME.safetensors`` (``RUN_DIR/checkpoint.safetensors``
for ``zero gpt train``, the ``--save`` path for ``zero mnist``):

    DIR/NAME.safetensors           the latest: what --resume and `zero gpt sample` read
    DIR/NAME-000040.safetensors    one per checkpoint, named by optimizer step; the newest
                                   --keep-checkpoints are kept, older ones deleted
    DIR/NAME-best.safetensors      the one with the lowest validation loss so far
    DIR/.NAME.safetensors.lock     held while a trainer runs (see run_control.TrainerLock)

Each save writes the numbered file (atomically: ``zero.files.atomic_write``),
then makes NAME and, when it is the best, NAME-best second names of that file
(``zero.files.atomic_link``: a hard link swapped in by ``os.replace``; a copy
where the file system has no hard links), then deletes numbered files beyond
the newest ``keep``. At every moment each name is a whole checkpoint: a crash
between two of these steps leaves the previous latest (or best) in place, and
an extra numbered file at worst (and where the first save was cut there, --resume
reads that numbered file: ``resumable``).
"""
from __future__ import annotations

import re
from pathlib import Path

from ..files import atomic_link
from ..serialization import save

SUFFIX = ".safetensors"


class CheckpointSet:
    def __init__(self, latest, keep: int = 3):
        self.latest = Path(latest)
        self.keep = keep
        name = self.latest.name
        self.stem = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else name
        self.best = self.latest.with_name(f"{self.stem}-best{SUFFIX}")
        self.lock = self.latest.with_name(f".{name}.lock")
        self._numbered = re.compile(re.escape(self.stem) + r"-(\d+)" + re.escape(SUFFIX))

    def numbered(self, step: int) -> Path:
        return self.latest.with_name(f"{self.stem}-{step:06d}{SUFFIX}")

    def numbered_files(self) -> list[tuple[int, Path]]:
        """(step, path) of the numbered checkpoints on disk, oldest first."""
        directory = self.latest.parent
        if not directory.is_dir():
            return []
        found = []
        for path in directory.iterdir():
            match = self._numbered.fullmatch(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return sorted(found)

    def resumable(self) -> Path | None:
        """What --resume reads: the latest, or -- where a save was killed between writing the
        first numbered file and naming it the latest -- the newest numbered one."""
        if self.latest.is_file():
            return self.latest
        numbered = self.numbered_files()
        return numbered[-1][1] if numbered else None

    def existing(self) -> list[Path]:
        """Every checkpoint of this set on disk: the latest, the best, the numbered ones."""
        return [p for p in (self.latest, self.best) if p.is_file()] + [p for _, p in self.numbered_files()]

    def remove_all(self) -> None:
        for path in self.existing():
            path.unlink(missing_ok=True)

    def save(self, state: dict, step: int, is_best: bool = False) -> Path:
        """Write ``state`` as the checkpoint of ``step``; make it the latest (and the best)."""
        self.latest.parent.mkdir(parents=True, exist_ok=True)
        path = self.numbered(step)
        save(state, path)
        atomic_link(path, self.latest)
        if is_best:
            atomic_link(path, self.best)
        for _, old in self.numbered_files()[:-self.keep]:
            old.unlink(missing_ok=True)
        return self.latest
