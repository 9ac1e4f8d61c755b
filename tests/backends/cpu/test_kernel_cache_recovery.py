"""A damaged Numba cache (empty or cut files, as a power cut leaves them: Numba renames
without fsync) is discarded and compiled again, silently, instead of an EOFError at every
later run until the folder is deleted by hand."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[3] / "src")

# One Numba loop (where's select loop), checked by its result; then whether Numba loaded it
# from the cache or compiled it.
PROGRAM = """
import zero
from zero.backends.cpu.kernels import elementwise
x = zero.tensor([[-1.0, 2.0], [3.0, -4.0]])
print(zero.where(x > 0, x, zero.zeros(2, 2)).tolist())
stats = elementwise._select_loop.stats
print("loaded" if sum(stats.cache_hits.values()) else "compiled")
"""
RESULT = "[[0.0, 2.0], [3.0, 0.0]]\n"


def _run(cache_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "NUMBA_CACHE_DIR": str(cache_dir)}
    return subprocess.run([sys.executable, "-W", "error", "-c", PROGRAM], env=env, capture_output=True, text=True,
                          timeout=300)


def _cache_files(cache_dir: Path) -> list[Path]:
    return sorted(p for p in cache_dir.rglob("*") if p.is_file() and p.suffix in (".nbi", ".nbc"))


def test_a_damaged_cache_is_compiled_again(tmp_path):
    cache_dir = tmp_path / "numba-cache"
    first = _run(cache_dir)
    assert first.returncode == 0, first.stderr
    assert first.stdout == RESULT + "compiled\n"
    files = _cache_files(cache_dir)
    assert any(p.suffix == ".nbi" for p in files) and any(p.suffix == ".nbc" for p in files)
    assert _run(cache_dir).stdout == RESULT + "loaded\n"

    for damage in ("empty", "cut in half"):
        for path in _cache_files(cache_dir):
            with open(path, "r+b") as f:
                f.truncate(0 if damage == "empty" else path.stat().st_size // 2)
        run = _run(cache_dir)
        assert run.returncode == 0 and run.stderr == "", f"{damage}: {run.stderr[-2000:]}"
        assert run.stdout == RESULT + "compiled\n", damage
        # The damaged entries were replaced by sound ones, which the next run loads.
        assert [p.name for p in _cache_files(cache_dir)] == [p.name for p in files], damage
        assert all(p.stat().st_size > 0 for p in _cache_files(cache_dir)), damage
        again = _run(cache_dir)
        assert again.returncode == 0 and again.stderr == "" and again.stdout == RESULT + "loaded\n", damage
