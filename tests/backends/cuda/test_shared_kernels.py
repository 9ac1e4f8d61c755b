"""The kernels both devices share (``zero.backends.array_kernels``) are one implementation,
and the float-only CUDA kernels of CUDA's own take integer inputs as the CPU does."""
from __future__ import annotations

import numpy as np
import pytest

import zero.backends.cpu.kernels as cpu
import zero.backends.cuda.kernels as cuda
from zero.backends.array_kernels import array_kernels
from zero.backends.cuda.kernels import elementwise as cuda_elementwise


# Shared kernels the CPU replaces by a faster one of its own (falling back to the shared one):
# where, relu and its backward, as Numba select loops (NumPy's masked copy branches on every
# element; its maximum is 3x a copy), NLL as a loop over rows, sums over leading axes as a
# product with ones (BLAS's GEMV), index_select with NumPy's unbuffered take, add of an array and a
# row of its trailing shape as a loop by rows (NumPy's broadcasting add runs at half the speed),
# the extremes of an index array in one pass (NumPy's min and max are two), and the arithmetic
# that runs NumPy's call on both cores when large (sub, mul, div; add also).
CPU_OWN = {"where", "relu", "relu_backward", "nll_loss_forward", "nll_loss_backward", "sum", "index_select", "add",
           "index_extremes", "sub", "mul", "div"}
# And those CUDA replaces (falling back to the shared one for what its own do not take): the
# gradient clip's two passes, one Triton launch over every gradient rather than one CuPy call
# each, sums over leading axes, bias gradients as Triton column sums, and NLL, one launch each
# way rather than CuPy's gathers and masks.
CUDA_OWN = {"squared_norms", "scale_in_place", "sum", "nll_loss_forward", "nll_loss_backward"}


def test_the_shared_kernels_run_the_same_code_on_both_devices():
    home = array_kernels.__code__.co_filename
    shared = array_kernels(np)
    assert len(shared) > 40
    for name in shared:
        for device, kernels, own in (("cpu", cpu, CPU_OWN), ("cuda", cuda, CUDA_OWN)):
            if name in own:
                continue
            assert getattr(kernels, name).__code__.co_filename == home, f"{device} {name}: another implementation"
    for kernels, own in ((cpu, CPU_OWN), (cuda, CUDA_OWN)):
        for name in own:
            assert getattr(kernels, name).__code__.co_filename != home


class ElementwiseKernelTypes:
    """A CuPy ElementwiseKernel("T x", "T y", ...) as far as types go: one T for both
    arguments ("Type is mismatched" otherwise), then ``fn`` computed on the host."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x, y):
        if x.dtype != y.dtype:
            raise TypeError(f"Type is mismatched. x {x.dtype} y {y.dtype}")
        y[...] = self.fn(x)


@pytest.mark.parametrize("name,fn", [("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
                                     ("silu", lambda x: x / (1 + np.exp(-x)))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_and_silu_of_integers_compute_in_the_output_type(monkeypatch, name, fn, dtype):
    monkeypatch.setattr(cuda_elementwise, f"_{name}", ElementwiseKernelTypes(fn))
    x = np.arange(-4, 5, dtype=np.int64)
    want, got = np.zeros(9, dtype), np.zeros(9, dtype)
    getattr(cpu, name)(x, want)
    getattr(cuda, name)(x, got)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_of_integers_runs_the_float_kernel(arrays, approximate):
    """(Integers never need GELU's backward: they cannot require grad.)"""
    x = np.arange(-700, 700, dtype=np.int64) // 100
    want, got = np.zeros(x.size, np.float32), arrays.put(np.zeros(x.size, np.float32))
    cpu.gelu(x, want, approximate=approximate)
    cuda.gelu(arrays.put(x), got, approximate=approximate)
    np.testing.assert_allclose(arrays.get(got), want, rtol=1e-5, atol=1e-6)
