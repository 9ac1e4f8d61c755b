"""PyTorch's ``torch.backends`` switches under Zero's names, with PyTorch's defaults."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import zero


@pytest.fixture
def matmul_flags():
    flags = zero.backends.cuda.matmul
    previous = flags.allow_tf32
    yield flags
    flags.allow_tf32 = previous


def test_the_switches_exist_with_pytorchs_defaults():
    assert zero.backends.cudnn.allow_tf32 is True and zero.backends.cudnn.benchmark is False
    assert zero.backends.cudnn.is_available() is False and zero.backends.mps.is_available() is False
    assert isinstance(zero.backends.cuda.is_built(), bool)
    code = "import zero; print(zero.backends.cuda.matmul.allow_tf32, zero.get_float32_matmul_precision())"
    env = {k: v for k, v in os.environ.items() if k != "ZERO_FAST_MATMUL"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["False", "highest"]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(env, ZERO_FAST_MATMUL="1"))   # the book's MX_FAST_MATMUL
    assert out.stdout.split() == ["True", "high"]


@pytest.mark.parametrize("precision,tf32", [("highest", False), ("high", True), ("medium", True)])
def test_set_float32_matmul_precision_is_the_tf32_switch(matmul_flags, precision, tf32):
    zero.set_float32_matmul_precision(precision)
    assert matmul_flags.allow_tf32 is tf32
    assert zero.get_float32_matmul_precision() == ("high" if tf32 else "highest")


def test_an_unknown_precision_is_refused_by_name():
    with pytest.raises(ValueError, match="highest, high, medium, got 'fast'"):
        zero.set_float32_matmul_precision("fast")


def test_the_cuda_kernels_read_the_switch_at_each_call(matmul_flags):
    pytest.importorskip("cupy")
    from zero.backends.cuda.kernels.linalg import fast_matmul

    matmul_flags.allow_tf32 = True
    assert fast_matmul()
    matmul_flags.allow_tf32 = False
    assert not fast_matmul()
