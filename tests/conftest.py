"""Fixtures shared by the whole suite, PyTorch as the oracle, and the GPU run's dry run.

PyTorch (CPU) is the oracle of every test that compares with it (``pytest.importorskip("torch")``
where it is used). Without it those tests skip locally, saying so; with CI=true a missing
PyTorch stops the run at once, and a test skipped for want of it fails, so CI can never pass
an oracle test by skipping it (``.ci/run`` installs it, as a test-only dependency).

``ZERO_TEST_DEVICE=cuda ZERO_TEST_PLAY_CUDA=1 pytest tests`` runs the suite as
scripts/gpu-check.sh runs it on a GPU (every op-harness input on "cuda"), on a machine
without one: "cuda" is played by the CPU backend for the whole session, so a test that
mixes devices (a mask made on the CPU for an input on the GPU) fails here as it would
there. tests/backends/cuda, which needs the real device in that mode, is left out.
"""
from __future__ import annotations

import importlib.util
import os

import pytest

import zero
from zero.backends import cpu as cpu_backend
from zero.backends.device import Device

IN_CI = os.environ.get("CI") == "true"
if IN_CI and importlib.util.find_spec("torch") is None:
    raise RuntimeError("tests: CI must install PyTorch, the tests' oracle (pip install torch==2.13.0; see .ci/run)")


def _skipped_for_pytorch(report) -> bool:
    """Whether a skip's reason is a missing PyTorch (importorskip's or a skipif's words)."""
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return False
    reason = str(report.longrepr[2]).lower()
    return "torch" in reason and ("import" in reason or "not installed" in reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI, a test skipped because PyTorch is missing fails instead."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and _skipped_for_pytorch(report):
        report.outcome = "failed"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """In CI, a module skipped whole because PyTorch is missing fails instead."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and _skipped_for_pytorch(report):
        report.outcome = "failed"


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
