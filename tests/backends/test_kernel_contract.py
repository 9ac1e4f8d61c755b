"""The kernel contract (zero.backends.kernel_contract) and the CPU's table: every name once,
with the contract's parameters. (CUDA's table: tests/backends/cuda/test_shared_kernels.py.)"""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np

import zero
import zero.backends.cpu.kernels as cpu
from zero.backends import kernel_contract
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


def test_the_contract_types_device_kernels():
    assert inspect.signature(zero.backends.device.Device.kernels.fget).return_annotation in ("Kernels", Kernels)
    assert zero.device("cpu").kernels is cpu
    assert kernel_contract.Array is np.ndarray
