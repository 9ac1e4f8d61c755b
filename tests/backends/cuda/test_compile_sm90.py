"""Every Triton kernel compiles ahead of time for sm_90 (H100/H200), on a machine with no GPU.

``compile_all.py`` (beside this file) records the launches of one GPT-shaped step (float32,
float32 with TF32 products, float64) and compiles each distinct specialisation with
``triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))``. It runs in a
subprocess because this process interprets Triton kernels (TRITON_INTERPRET=1), and
ahead-of-time compilation needs the real ``triton.jit`` functions.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

HERE = Path(__file__).parent


def _kernel_names() -> set:
    names = set()
    for path in (HERE.parents[2] / "src" / "zero" / "backends" / "cuda" / "triton_kernels").glob("*.py"):
        for line in path.read_text().splitlines():
            if line.startswith("def ") and line.split("(")[0].endswith("_kernel"):
                names.add(line[4:].split("(")[0])
    return names


def test_every_triton_kernel_compiles_for_sm90(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "ZERO_FAST_MATMUL")}
    env["TRITON_CACHE_DIR"] = str(tmp_path)  # compile for real, not from an earlier run's cache
    result = subprocess.run([sys.executable, str(HERE / "compile_all.py"), "--arch", "90"], capture_output=True,
                            text=True, env=env, timeout=900)
    records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    failed = [f"{r['kernel']} {r['signature']} {r['constexprs']}: {r['error']}" for r in records if not r["ok"]]
    assert not failed, "\n\n".join(failed)
    assert result.returncode == 0, result.stderr[-3000:]
    compiled = {r["kernel"] for r in records}
    assert _kernel_names() <= compiled, f"kernels never compiled: {sorted(_kernel_names() - compiled)}"
    assert any(r["constexprs"].get("PRECISION") == "tf32" for r in records)
