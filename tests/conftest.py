"""Fixtures shared by the whole suite, and the GPU run's dry run.

``ZERO_TEST_DEVICE=cuda ZERO_TEST_PLAY_CUDA=1 pytest tests`` runs the suite as
scripts/gpu-check.sh runs it on a GPU (every op-harness input on "cuda"), on a machine
without one: "cuda" is played by the CPU backend for the whole session, so a test that
mixes devices (a mask made on the CPU for an input on the GPU) fails here as it would
there. tests/backends/cuda, which needs the real device in that mode, is left out.
"""
from __future__ import annotations

import os

import pytest

import zero
from zero.backends import cpu as cpu_backend
from zero.backends.device import Device

PLAYED_CUDA = os.environ.get("ZERO_TEST_PLAY_CUDA") == "1"
if PLAYED_CUDA:
    if not os.environ.get("ZERO_TEST_DEVICE", "").startswith("cuda"):
        raise RuntimeError("ZERO_TEST_PLAY_CUDA=1 is a dry run of ZERO_TEST_DEVICE=cuda: set both")
    _played = Device("cuda")
    _played._backend, _played._kernels = cpu_backend, cpu_backend.kernels
    collect_ignore = ["backends/cuda"]


@pytest.fixture
def second_device(request):
    """A device other than the CPU, for the paths that cross devices (copy_, to(), loading a
    CPU checkpoint into a model elsewhere). On a GPU machine (ZERO_TEST_DEVICE=cuda) it is
    the GPU; elsewhere it is ``cpu_played_cuda``."""
    if os.environ.get("ZERO_TEST_DEVICE", "cpu").startswith("cuda") and zero.cuda.is_available():
        yield Device("cuda")
    else:
        yield request.getfixturevalue("cpu_played_cuda")


@pytest.fixture
def cpu_played_cuda():
    """"cuda" played by the CPU backend, on any machine: tensors on it are CUDA tensors to
    every op (device checks, transfers, numpy() refusing), computed by the CPU kernels in
    host memory -- for fakes that read and write that memory (the fake NCCL's memmove)."""
    cuda = Device("cuda")
    saved = cuda._backend, cuda._kernels
    cuda._backend, cuda._kernels = cpu_backend, cpu_backend.kernels
    try:
        yield cuda
    finally:
        cuda._backend, cuda._kernels = saved
        cuda._deferred_checks.clear()  # a test that expected an error may leave its check behind
