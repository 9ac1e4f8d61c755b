"""scripts/gpu-check.sh: its stage limits are the ones its header states and end the run
well inside 9 minutes; without a GPU it says so in seconds and exits 2."""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ON_GPU  # (tests/backends/cuda/conftest.py)

SCRIPT = Path(__file__).parents[3] / "scripts" / "gpu-check.sh"
NINE_MINUTES = 540


def _number(pattern: str, text: str) -> int:
    found = re.search(pattern, text, re.MULTILINE)
    assert found is not None, f"gpu-check.sh has no line matching {pattern!r}"
    return int(found[1])


def _stated_and_used_limits() -> tuple[dict, dict, dict, int, int]:
    """The header's limits of the default mode's stages and of bench mode's own, the limits
    the script uses, its kill allowance and the total it states."""
    text = SCRIPT.read_text()
    stated = {m[1]: int(m[2]) for m in re.finditer(r"^#   (\w+)\s+(\d+)   ", text, re.MULTILINE)}
    bench = {m[1]: int(m[2]) for m in re.finditer(r"^#   bench: (\w+)\s+(\d+)   ", text, re.MULTILINE)}
    used = {m[1]: int(m[2]) for m in re.finditer(r"^\s*(?:pytest_)?stage (\w+) (\d+) ", text, re.MULTILINE)}
    return stated, bench, used, _number(r"^KILL_AFTER=(\d+)", text), _number(r"sum to (\d+) s", text)


def test_the_stage_limits_are_the_header_s_and_end_well_inside_nine_minutes():
    """The default mode runs the header's stages; bench mode the probe, smoke and its own."""
    stated, bench, used, kill_after, total = _stated_and_used_limits()
    assert {**stated, **bench} == used, f"header {stated} + bench {bench} != script {used}"
    assert sum(stated.values()) + kill_after * len(stated) == total
    assert total <= NINE_MINUTES - 60, f"{total} s leaves too little of the 9 minutes"
    short = ("probe", "smoke")
    assert sum(bench.values()) + sum(stated[s] for s in short) + kill_after * (len(bench) + 2) <= total


@pytest.mark.skipif(ON_GPU, reason="checks the refusal on a machine without a GPU")
def test_without_a_gpu_the_script_says_so_in_seconds_and_exits_2(tmp_path):
    env = {**os.environ, "OUT": str(tmp_path)}
    start = time.perf_counter()
    result = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert result.returncode == 2, result.stdout + result.stderr
    assert time.perf_counter() - start < 20
    assert "no GPU" in result.stdout and "nothing was run" in result.stdout
    assert (tmp_path / "summary.txt").read_text().startswith("probe: FAILED")
