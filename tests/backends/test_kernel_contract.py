"""The kernel contract (zero.backends.kernel_contract) and the CPU's table: every name once,
with the contract's parameters, each entry the function its name says -- a shared kernel
bound to NumPy or one of the CPU's own -- and a small call reaching NumPy without the pool.
(CUDA's table: tests/backends/cuda/test_kernel_tables.py.)"""
from __future__ import annotations

import functools
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import zero
import zero.backends.cpu.kernels as cpu
from zero.backends import array_kernels, kernel_contract
from zero.backends.cpu import parallel, threads
from zero.backends.kernel_contract import Kernels, differences, kernel_names, table_of

SOURCE = Path(zero.__file__).parent


def test_the_cpu_table_offers_the_contract_exactly():
    assert differences(cpu) == []
    assert len(kernel_names()) > 150


def test_every_kernel_the_package_calls_is_in_the_contract():
    """Every ``kernels.<name>`` outside the backends (ops, nn, optim, random ...) names a
    kernel of the contract."""
    called = set()
    for path in SOURCE.rglob("*.py"):
        if "backends" not in path.relative_to(SOURCE).parts:
            called |= set(re.findall(r"\bkernels\.(\w+)", path.read_text(encoding="utf-8")))
    assert called and called <= set(kernel_names()), sorted(called - set(kernel_names()))


def test_differences_names_what_is_missing_extra_or_different():
    module = type(cpu)("fake_table")
    for name, kernel in table_of(cpu).items():
        setattr(module, name, kernel)
    del module.add
    module.mul = lambda a, b, result: None                  # a parameter renamed
    module.gelu = lambda x, out, approximate="tanh": None   # a default changed
    module.extra = lambda x: None
    found = differences(module)
    assert len(found) == 4, found
    assert "missing: add" in found and "not in the contract: extra" in found
    assert any(line.startswith("mul: parameters") and "'result'" in line for line in found)
    assert any(line.startswith("gelu: parameters") and "'tanh'" in line for line in found)


def test_each_contract_kernel_has_a_one_line_docstring():
    for name in kernel_names():
        doc = inspect.getdoc(getattr(Kernels, name))
        assert doc, f"{name}: no docstring in the contract"


def _function(entry):
    """What an entry of a table runs: through ``parallel``'s splits and ``partial``'s binding."""
    while True:
        if isinstance(entry, functools.partial):
            entry = entry.func
        elif hasattr(entry, "__wrapped__"):
            entry = entry.__wrapped__
        else:
            return entry


@pytest.mark.parametrize("name", kernel_names())
def test_each_cpu_entry_runs_the_kernel_of_its_name(name):
    """A shared kernel is bound to NumPy; any other is one of the CPU's own modules' (a reader
    of the table sees which); either way a function of the entry's name."""
    entry = table_of(cpu)[name]
    function = _function(entry)
    assert function.__name__ == name
    bound = [a for e in _chain(entry) if isinstance(e, functools.partial) for a in e.args]
    if function.__module__.startswith(array_kernels.__name__):
        assert bound == [np], f"{name}: a shared kernel bound to {bound}"
    else:
        assert function.__module__.startswith("zero.backends.cpu.kernels."), function.__module__


def _chain(entry):
    while True:
        yield entry
        if isinstance(entry, functools.partial):
            entry = entry.func
        elif hasattr(entry, "__wrapped__"):
            entry = entry.__wrapped__
        else:
            return


def test_the_contract_types_device_kernels():
    assert inspect.signature(zero.backends.device.Device.kernels.fget).return_annotation in ("Kernels", Kernels)
    assert zero.device("cpu").kernels is cpu
    assert kernel_contract.Array is np.ndarray


def test_a_small_op_reaches_numpy_without_the_pool(monkeypatch):
    """A 4x3 + (3,) add, a small GELU and a small softmax never reach the pool's machinery."""
    def refuse(*args, **kwargs):
        raise AssertionError("the pool was asked")

    for name in ("ranges", "run_all", "parallel_for"):
        monkeypatch.setattr(parallel, name, refuse)
        monkeypatch.setattr(threads, name, refuse)
    a, row, out = np.ones((4, 3), np.float32), np.arange(3, dtype=np.float32), np.empty((4, 3), np.float32)
    cpu.add(a, row, out)
    cpu.gelu(a, out)
    cpu.softmax_forward(a, out)
    cpu.sub(a, 1.0, out)
    np.testing.assert_array_equal(out, a - 1)


def test_a_split_kernel_keeps_the_contract_signature_and_name():
    assert cpu.gelu.__name__ == "gelu" and "approximate" in inspect.signature(cpu.gelu).parameters
    assert list(inspect.signature(cpu.dropout_forward).parameters) == ["x", "p", "seed", "out"]
