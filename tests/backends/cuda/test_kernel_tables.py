"""CUDA's kernel table offers the contract (zero.backends.kernel_contract) exactly, as the
CPU's does; a kernel shared by the two tables is one function, bound to CuPy here and to
NumPy there; and the float-only CUDA kernels of CUDA's own take integer inputs as the CPU
does."""
from __future__ import annotations

import functools

import cupy
import numpy as np
import pytest

import zero.backends.cpu.kernels as cpu
import zero.backends.cuda.kernels as cuda
from zero.backends import array_kernels
from zero.backends.cuda.kernels import elementwise as cuda_elementwise
from zero.backends.kernel_contract import differences, kernel_names, table_of


def test_the_cuda_table_offers_the_contract_exactly():
    assert differences(cuda) == []


def _bound(entry):
    """(the function an entry runs, the array modules bound to it on the way)."""
    modules = []
    while True:
        if isinstance(entry, functools.partial):
            modules += [a for a in entry.args if a in (np, cupy)]
            entry = entry.func
        elif hasattr(entry, "__wrapped__"):
            entry = entry.__wrapped__
        else:
            return entry, modules


@pytest.mark.parametrize("name", kernel_names())
def test_each_cuda_entry_runs_the_kernel_of_its_name(name):
    function, modules = _bound(table_of(cuda)[name])
    assert function.__name__ == name
    if function.__module__.startswith(array_kernels.__name__):
        assert modules == [cupy], f"{name}: a shared kernel bound to {modules}"
    else:
        assert function.__module__.startswith("zero.backends.cuda.kernels."), function.__module__
        assert modules == []


def test_a_kernel_shared_by_both_tables_is_one_function():
    """Where both tables take the shared kernel, it is the same code on NumPy and on CuPy;
    and some kernels are shared on both (most of the contract), some a device's own."""
    shared_on_both = 0
    for name in kernel_names():
        (on_cpu, cpu_modules), (on_cuda, cuda_modules) = _bound(table_of(cpu)[name]), _bound(table_of(cuda)[name])
        from_arrays = [f.__module__.startswith(array_kernels.__name__) for f in (on_cpu, on_cuda)]
        if all(from_arrays):
            assert on_cpu is on_cuda and cpu_modules == [np] and cuda_modules == [cupy]
            shared_on_both += 1
    assert shared_on_both > 80


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
