"""``launch``'s fast path without a GPU: a fake kernel stands for Triton's. The first launch
of each argument class goes through ``kernel[grid](...)``; later ones of the same class call
the compiled kernel's launcher directly, with raw addresses, the keyword values after them.
Whatever Triton specializes on (alignment, an integer's being 1 or divisible by 16, dtypes,
constexpr values, keyword values) starts a new class. On a GPU the Triton-kernel tests then
run every kernel through both paths (tests/backends/cuda/test_triton_kernels.py)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("triton")

from zero.backends.cuda.kernels import _launch


class FakeArray:
    """What launch sees of a CuPy array: an address and a dtype."""

    def __init__(self, address: int, dtype=np.float32):
        self.data = SimpleNamespace(ptr=address)
        self.dtype = np.dtype(dtype)


class FakeKernel:
    """kernel(x_ptr, y_ptr, n, WIDTH: constexpr, BLOCK: constexpr = 64, EVEN: constexpr = False)."""

    def __init__(self):
        names = [("x_ptr", False), ("y_ptr", False), ("n", False), ("WIDTH", True), ("BLOCK", True), ("EVEN", True)]
        defaults = {"BLOCK": 64, "EVEN": False}
        self.params = [SimpleNamespace(num=i, name=name, is_constexpr=constexpr, default=defaults.get(name))
                       for i, (name, constexpr) in enumerate(names)]
        self.through_triton = []
        self.direct = []

    def __getitem__(self, grid):
        def run_through_triton(*args, **meta):
            self.through_triton.append((grid, args, meta))
            return SimpleNamespace(run=lambda *a: self.direct.append(a), function="function",
                                   packed_metadata="metadata")
        return run_through_triton


@pytest.fixture
def kernel(monkeypatch):
    monkeypatch.setattr(_launch, "_launchers", {})
    monkeypatch.setattr(_launch, "_constexpr_positions", {})
    monkeypatch.setattr(_launch, "interpreting", lambda: False)
    monkeypatch.setattr(_launch.triton_driver, "launch_stream", lambda: 77)
    monkeypatch.setattr(_launch, "_cupy_ndarray", FakeArray)   # the device arrays' type
    return FakeKernel()


def test_the_second_launch_of_a_class_calls_the_launcher_directly(kernel):
    _launch.launch(kernel, (8,), FakeArray(4096), FakeArray(8192), 1000, 384, num_warps=4, BLOCK=128)
    assert len(kernel.through_triton) == 1 and not kernel.direct
    grid, args, meta = kernel.through_triton[0]
    assert [a.data_ptr() for a in args[:2]] == [4096, 8192] and args[2:] == (1000, 384)
    assert meta == {"num_warps": 4, "BLOCK": 128}

    _launch.launch(kernel, (3, 2), FakeArray(1 << 20), FakeArray(2 << 20), np.int64(2024), 384, num_warps=4,
                   BLOCK=128)
    assert len(kernel.through_triton) == 1
    assert kernel.direct == [(3, 2, 1, 77, "function", "metadata", None, None, None,
                              1 << 20, 2 << 20, 2024, 384, 128, False)]   # BLOCK from the call, EVEN its default


@pytest.mark.parametrize("change, why", [
    (dict(x=4100), "an address not 16-byte aligned"),
    (dict(dtype=np.float64), "another dtype"),
    (dict(n=1), "n == 1 (Triton compiles it in)"),
    (dict(n=1008), "n divisible by 16"),
    (dict(n=1 << 40), "n past 32 bits"),
    (dict(width=512), "another constexpr value, passed by position"),
    (dict(block=256), "another keyword value"),
])
def test_whatever_triton_specializes_on_starts_a_new_class(kernel, change, why):
    def go(x=4096, dtype=np.float32, n=1000, width=384, block=128):
        _launch.launch(kernel, (8,), FakeArray(x, dtype), FakeArray(8192, dtype), n, width, BLOCK=block)

    go()
    go(**change)
    assert len(kernel.through_triton) == 2, why
    go(**change)
    assert len(kernel.through_triton) == 2 and len(kernel.direct) == 1, why


def test_triton_s_own_path_when_something_hooks_its_launches_or_the_stream_is_unknown(kernel, monkeypatch):
    for _ in range(2):
        _launch.launch(kernel, (8,), FakeArray(4096), FakeArray(8192), 1000, 384)
    assert len(kernel.through_triton) == 1 and len(kernel.direct) == 1
    monkeypatch.setattr(_launch, "_no_launch_hooks", lambda: False)   # a profiler's launch hooks
    _launch.launch(kernel, (8,), FakeArray(4096), FakeArray(8192), 1000, 384)
    monkeypatch.undo()
    monkeypatch.setattr(_launch, "interpreting", lambda: False)
    monkeypatch.setattr(_launch.triton_driver, "launch_stream", lambda: None)   # Triton's own driver
    _launch.launch(kernel, (8,), FakeArray(4096), FakeArray(8192), 1000, 384)
    assert len(kernel.through_triton) == 3 and len(kernel.direct) == 1


def test_triton_3_6_s_empty_hook_chains_count_as_no_hooks():
    assert _launch._no_launch_hooks()


class FakeLauncher:
    """Triton 3.6's CudaLauncher as far as launch uses it: its C function, scratch sizes."""

    def __init__(self, scratch: int):
        self.global_scratch_size, self.profile_scratch_size = scratch, 0
        self.launch_cooperative_grid, self.launch_pdl = False, True
        self.through_call, self.through_c = [], []

    def __call__(self, *args):
        self.through_call.append(args)

    def launch(self, *args):
        self.through_c.append(args)


class KernelWithLauncher(FakeKernel):
    """A fake kernel whose compiled form carries ``launcher``."""

    def __init__(self, launcher):
        super().__init__()
        self.compiled = SimpleNamespace(run=launcher, function="function", packed_metadata="metadata")

    def __getitem__(self, grid):
        return lambda *args, **meta: self.compiled


@pytest.mark.parametrize("scratch", [0, 256])
def test_a_kernel_without_scratch_memory_goes_to_the_c_launcher_itself(kernel, scratch):
    """Triton's launcher object only allocates scratch memory before calling its C function:
    without scratch, launch calls that function with the same arguments the object would.
    (``kernel``: the fixture's set-up, a stream and a fresh cache.)"""
    launcher = FakeLauncher(scratch)
    with_launcher = KernelWithLauncher(launcher)
    for _ in range(2):
        _launch.launch(with_launcher, (8, 2), FakeArray(4096), FakeArray(8192), 1000, 384)
    values = (4096, 8192, 1000, 384, 64, False)   # BLOCK and EVEN: their defaults
    if scratch:
        assert launcher.through_call == [(8, 2, 1, 77, "function", "metadata", None, None, None, *values)]
        assert not launcher.through_c
    else:
        assert launcher.through_c == [(8, 2, 1, 77, "function", False, True, None, None, "metadata", None, None,
                                       None, *values)]
        assert not launcher.through_call
