"""Fixtures shared by the whole suite."""
from __future__ import annotations

import os

import pytest

import zero
from zero.backends import cpu as cpu_backend
from zero.backends.device import Device


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
