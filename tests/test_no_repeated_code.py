"""No block of code is written twice in the package.

Every run of six significant lines in ``src/zero`` (blank lines, comments, imports,
docstring-only lines and lone brackets left out, white space folded) must stand in
one place only. The one allowed exception is a CPU kernel and the CUDA kernel that
mirrors it (a Numba loop and a Triton kernel spelling the same arithmetic).
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import zero

PACKAGE = Path(zero.__file__).parent
RUN = 6
MIRRORED = ("backends/cpu/", "backends/cuda/")
_TRIVIAL = re.compile(r"""^[\s)\]}:,]*$|^(from \S+ )?import |^#|^(\"\"\"|''')$""")


def significant_lines(path: Path) -> list[tuple[int, str]]:
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = " ".join(line.split())
        if text and not _TRIVIAL.match(text):
            lines.append((number, text))
    return lines


def repeated_runs(files: list[Path]) -> list[str]:
    places = defaultdict(list)  # run of lines -> [(file, first line number)]
    for path in files:
        lines = significant_lines(path)
        for i in range(len(lines) - RUN + 1):
            run = "\n".join(text for _, text in lines[i:i + RUN])
            places[run].append((path.relative_to(PACKAGE).as_posix(), lines[i][0]))
    found = []
    for run, where in places.items():
        files_there = {name for name, _ in where}
        if len(where) < 2:
            continue
        if len(files_there) == 2 and all(any(name.startswith(m) for name in files_there) for m in MIRRORED):
            continue  # a CPU kernel and its CUDA twin
        found.append(" ~ ".join(f"{name}:{line}" for name, line in where) + "\n    " + run.replace("\n", "\n    "))
    return found


def test_no_run_of_six_lines_stands_in_two_places():
    found = repeated_runs(sorted(PACKAGE.rglob("*.py")))
    assert not found, f"{len(found)} runs of {RUN} lines written more than once:\n" + "\n".join(found[:20])


def test_the_check_finds_a_copy(tmp_path):
    body = "".join(f"    value_{i} = compute({i})\n" for i in range(7))
    (tmp_path / "a.py").write_text("def f():\n" + body)
    (tmp_path / "b.py").write_text("# a comment\ndef f():\n" + body)
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path
    try:
        assert repeated_runs([tmp_path / "a.py", tmp_path / "b.py"])
    finally:
        PACKAGE = saved
