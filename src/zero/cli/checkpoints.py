"""A run's checkpoints: the latest, the last few, and the best, rotated atomically.

For a latest checkpoint ``DIR/NAME.safetensors`` (``RUN_DIR/checkpoint.safetensors``
for ``zero gpt train``, the ``--save`` path for ``zero mnist``):

    DIR/NAME.safetensors           the latest: what --resume and `zero gpt sample` read
    DIR/NAME-000040.safetensors    one per checkpoint, named by optimizer step; the newest
                                   --keep-checkpoints are kept, older ones deleted
    DIR/NAME-best.safetensors      the one with the lowest validation loss so far
    DIR/.NAME.safetensors.manifest what this run wrote (below)
    DIR/.NAME.safetensors.lock     held while a trainer runs (see run_control.TrainerLock)

**The manifest says which files are the run's.** A file is the run's because the run
wrote it, never because its name fits a pattern: ``mlp-1.safetensors`` beside ``--save
mlp.safetensors`` is someone else's (another run's, a user's copy), and rotation and
--overwrite leave it alone. The manifest lists the numbered checkpoints in the order
they were written (rotation drops the oldest written, so a run resumed from an older
step replaces the steps it went back over) and whether the run wrote the best.

**Each name is a whole checkpoint at every moment, and a copy of its own.** A save
first lists the numbered file in the manifest, writes it (atomically:
``zero.files.atomic_write``), then copies it to NAME and, when it is the best, to
NAME-best (``zero.files.atomic_copy``), then deletes the numbered files beyond the
newest ``keep``. A crash between two of these steps leaves the previous latest (or
best) in place, and an extra numbered file at worst (and where the first save was cut
there, --resume reads that numbered file: ``resumable``). The latest, the best and the
numbered files are separate files, not second names of one: a damaged byte in one
leaves the others whole (``zero gpt train --resume STEP`` or ``--resume best``).
"""
from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

from ..errors import UsageError
from ..files import atomic_copy, atomic_write
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
        self.manifest = self.latest.with_name(f".{name}.manifest")

    def numbered(self, step: int) -> Path:
        return self.latest.with_name(f"{self.stem}-{step:06d}{SUFFIX}")

    # -- the manifest -------------------------------------------------------------------------
    def _read_manifest(self) -> dict:
        """{"numbered": [steps, in the order written], "best": bool}; empty where no run wrote one
        (a run of an older Zero: its latest is still found, its numbered files are left alone)."""
        try:
            manifest = json.loads(self.manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"numbered": [], "best": False}
        except (OSError, ValueError) as e:
            raise UsageError(f"{self.manifest}: unreadable ({e}); it lists the run's checkpoints -- move it "
                             "away to treat the directory as holding none of this run's numbered files") from None
        steps = manifest.get("numbered") if isinstance(manifest, dict) else None
        if not isinstance(steps, list) or not all(isinstance(s, int) and s >= 0 for s in steps):
            raise UsageError(f"{self.manifest}: not a checkpoint manifest (no list of steps); move it away to "
                             "treat the directory as holding none of this run's numbered files")
        return {"numbered": steps, "best": manifest.get("best") is True}

    def _write_manifest(self, manifest: dict) -> None:
        with atomic_write(self.manifest) as f:
            f.write((json.dumps(manifest) + "\n").encode("utf-8"))

    # -- what is on disk ----------------------------------------------------------------------
    def numbered_files(self) -> list[tuple[int, Path]]:
        """(step, path) of this run's numbered checkpoints on disk, in the order written."""
        return [(step, self.numbered(step)) for step in self._read_manifest()["numbered"]
                if self.numbered(step).is_file()]

    def resumable(self) -> Path | None:
        """What --resume reads: the latest, or -- where a save was killed between writing the
        first numbered file and copying it to the latest -- the newest numbered one."""
        if self.latest.is_file():
            return self.latest
        numbered = self.numbered_files()
        return numbered[-1][1] if numbered else None

    def existing(self) -> list[Path]:
        """Every checkpoint of this run on disk: the latest, the best, the numbered ones."""
        best = [self.best] if self._read_manifest()["best"] and self.best.is_file() else []
        return [p for p in (self.latest,) if p.is_file()] + best + [p for _, p in self.numbered_files()]

    def strangers(self) -> list[Path]:
        """Files at names this run would write (its best, its numbered checkpoints) that it did
        not write: someone else's, which a save would replace."""
        manifest = self._read_manifest()
        ours = {self.numbered(step).name for step in manifest["numbered"]}
        pattern = re.compile(re.escape(self.stem) + r"-\d{6}" + re.escape(SUFFIX))
        found = [self.best] if self.best.is_file() and not manifest["best"] else []
        if self.latest.parent.is_dir():
            found += sorted(p for p in self.latest.parent.iterdir() if pattern.fullmatch(p.name) and p.name not in ours)
        return found

    def require_no_strangers(self, where: str) -> None:
        strangers = self.strangers()
        if strangers:
            names = ", ".join(p.name for p in strangers[:3]) + (" ..." if len(strangers) > 3 else "")
            raise UsageError(f"{where}: {names} sit(s) where this run writes its checkpoints, and this run did not "
                             "write them (its manifest does not list them); move them away, or save elsewhere")

    def choose(self, which: str) -> Path:
        """The checkpoint ``which`` names: "latest", "best", a step number, or a path."""
        if which == "latest":
            path = self.resumable() or self.latest
        elif which == "best":
            path = self.best
        elif which.isdigit():
            path = self.numbered(int(which))
        else:
            path = Path(which)
        if not path.is_file():
            there = ", ".join(self.describe(p) for p in self.existing()) or "none"
            raise UsageError(f"no checkpoint {path.name} in {path.parent} (this run's checkpoints there: {there})")
        return path

    def describe(self, path: Path) -> str:
        """How to name ``path`` to ``choose``: "latest", "best" or its step."""
        if path == self.latest:
            return "latest"
        if path == self.best:
            return "best"
        return path.name[len(self.stem) + 1:-len(SUFFIX)].lstrip("0") or "0"

    # -- writing ------------------------------------------------------------------------------
    def remove_all(self) -> None:
        """--overwrite: delete this run's checkpoints (and nothing the manifest does not list)."""
        for path in self.existing():
            path.unlink(missing_ok=True)
        self.manifest.unlink(missing_ok=True)

    def save(self, state: dict, step: int, is_best: bool = False) -> Path:
        """Write ``state`` as the checkpoint of ``step``; make it the latest (and the best)."""
        self.latest.parent.mkdir(parents=True, exist_ok=True)
        manifest = self._read_manifest()
        written = [s for s in manifest["numbered"] if s != step] + [step]
        self._write_manifest({"numbered": written, "best": manifest["best"]})   # listed before it exists
        path = self.numbered(step)
        try:
            save(state, path)
            atomic_copy(path, self.latest)
            if is_best:
                atomic_copy(path, self.best)
        except BaseException:      # (a full disk): the manifest as it was, where the disk allows
            with contextlib.suppress(OSError):
                self._write_manifest(manifest)
            raise
        dropped, kept = written[:-self.keep], written[-self.keep:]
        for old in dropped:
            self.numbered(old).unlink(missing_ok=True)
        self._write_manifest({"numbered": kept, "best": manifest["best"] or is_best})
        return self.latest
