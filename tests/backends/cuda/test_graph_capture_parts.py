"""The parts of the CUDA capture that a machine without a GPU can check: Triton compiling
refused inside a capture (it would break it), and Triton's cache kept beside Zero's code so a
second run's first step loads what the first compiled. (The capture itself runs in
tests/cuda_graphs on the GPU, and as the CPU's tape here.)"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from zero.backends.cuda import graphs, triton_driver
from zero.errors import CaptureError


def test_a_triton_compile_inside_a_capture_is_refused_naming_the_kernel():
    from triton import knobs

    before = knobs.runtime.jit_cache_hook
    previous = graphs._triton_hook(graphs._refuse_compiling)
    try:
        assert previous is before
        assert knobs.runtime.jit_cache_hook is graphs._refuse_compiling

        class Info:
            name = "dropout_kernel"

        with pytest.raises(CaptureError, match="dropout_kernel would be compiled inside a CUDA graph capture"):
            knobs.runtime.jit_cache_hook(key=None, repr="", fn=Info(), compile={}, is_manual_warmup=False,
                                         already_compiled=False)
    finally:
        graphs._triton_hook(previous)
    assert knobs.runtime.jit_cache_hook is before


def _cache_directory(environment: dict) -> str:
    """The directory Triton caches in, in a fresh process, after Zero's set-up."""
    code = "from zero.backends.cuda import triton_driver; print(triton_driver.keep_cache_with_zero())"
    done = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def test_triton_caches_beside_zero_unless_told_otherwise(tmp_path):
    environment = {k: v for k, v in os.environ.items() if k != "TRITON_CACHE_DIR"}
    assert _cache_directory(environment) == triton_driver.TRITON_CACHE
    assert os.path.isdir(triton_driver.TRITON_CACHE)
    chosen = str(tmp_path / "chosen")
    assert _cache_directory({**environment, "TRITON_CACHE_DIR": chosen}) == chosen
