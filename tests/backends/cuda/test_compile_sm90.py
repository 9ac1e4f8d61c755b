"""Every Triton kernel compiles ahead of time for sm_90 (H100/H200), on a machine with no GPU,
within an H200's shared memory and with int64 tile offsets.

``compile_all.py`` (beside this file) records the launches of one GPT-shaped step (float32,
float32 with TF32 products, float64, float16, bfloat16), and flash attention at head sizes 64, 128 and 256,
and compiles each distinct specialisation with ``triton.compile(ASTSource(...),
target=GPUTarget("cuda", 90, 32))``. It runs in a subprocess because this process
interprets Triton kernels (TRITON_INTERPRET=1), and ahead-of-time compilation needs the real
``triton.jit`` functions. On a GPU machine (ZERO_TEST_DEVICE=cuda) this is skipped: there the
kernel tests compile and run every kernel for the GPU at hand.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

from conftest import ON_GPU  # (tests/backends/cuda/conftest.py)

pytestmark = pytest.mark.skipif(ON_GPU, reason="a GPU compiles its own kernels; this check is for CI without one")

HERE = Path(__file__).parent
# The most shared memory one block may use on sm_90 (cudaDevAttrMaxSharedMemoryPerBlockOptin).
SM90_SHARED_BYTES = 232_448


def _kernel_names() -> set:
    names = set()
    for path in (HERE.parents[2] / "src" / "zero" / "backends" / "cuda" / "triton_kernels").glob("*.py"):
        for line in path.read_text().splitlines():
            if line.startswith("def ") and line.split("(")[0].endswith("_kernel"):
                names.add(line[4:].split("(")[0])
    return names


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> list:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "ZERO_FAST_MATMUL")}
    env["TRITON_CACHE_DIR"] = str(tmp_path_factory.mktemp("triton"))  # compile for real, not from a cache
    result = subprocess.run([sys.executable, str(HERE / "compile_all.py"), "--arch", "90"], capture_output=True,
                            text=True, env=env, timeout=900, check=False)
    found = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    failed = [f"{r['kernel']} {r['signature']} {r['constexprs']}: {r['error']}" for r in found if not r["ok"]]
    assert not failed, "\n\n".join(failed)
    assert result.returncode == 0, result.stderr[-3000:]
    return found


def test_every_triton_kernel_compiles_for_sm90(records):
    compiled = {r["kernel"] for r in records}
    assert _kernel_names() <= compiled, f"kernels never compiled: {sorted(_kernel_names() - compiled)}"
    assert any(r["constexprs"].get("PRECISION") == "tf32" for r in records)


def test_every_kernel_fits_in_an_h200_block_s_shared_memory(records):
    too_big = [f"{r['kernel']} {r['constexprs']} {r['options']}: {r['shared']} bytes" for r in records
               if r["shared"] > SM90_SHARED_BYTES]
    assert not too_big, "\n".join(too_big)


@pytest.mark.parametrize("dtype", ["fp32", "fp64", "fp16", "bf16"])
def test_attention_is_compiled_at_head_sizes_64_128_and_256(records, dtype):
    for kernel in ("attention_forward_kernel", "attention_backward_kv_kernel", "attention_backward_q_kernel"):
        heads = {int(r["constexprs"]["BLOCK_E"]) for r in records
                 if r["kernel"] == kernel and r["signature"]["q_ptr"] == f"*{dtype}"}
        assert {64, 128, 256} <= heads, f"{kernel} {dtype}: head sizes compiled {sorted(heads)}"


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_every_kernel_with_floating_arrays_is_compiled_for_16_bit_arrays(records, dtype):
    """The 16-bit launches (issue 38): each kernel that takes float arrays, but the optimizers'
    many-tensor ones (tables of float32 or float64 addresses: 16-bit parameters take the
    one-tensor kernels), on 16-bit pointers."""
    table_only = {"adamw_many_kernel", "adamw_capturable_many_kernel", "squared_norm_parts_kernel",
                  "squared_norms_kernel", "scale_many_kernel", "step_count_kernel", "index_extremes_kernel"}
    on_16_bit = {r["kernel"] for r in records if f"*{dtype}" in r["signature"].values()}
    missing = _kernel_names() - table_only - on_16_bit
    assert not missing, f"never compiled on *{dtype} pointers: {sorted(missing)}"


def test_tile_offsets_are_int64(records):
    """A (G * L, E) attention array passes 2**31 elements at 8 GiB of float32 (an H200 holds
    141 GB): offsets into 2-D tiles must be int64."""
    narrow = [f"{r['kernel']} {r['constexprs']}: {r['i32_tile_offsets']}" for r in records if r["i32_tile_offsets"]]
    assert not narrow, "int32 tile offsets:\n" + "\n".join(narrow)
