"""zero/compat holds PyTorch's addresses for what Zero keeps elsewhere; each answers to
PyTorch's name as an import, a from-import and an attribute, as one module object."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import zero
from zero.compat import ALIASES


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_each_alias_is_the_compat_module_under_pytorchs_name(alias):
    module = importlib.import_module(alias)
    assert module is importlib.import_module(ALIASES[alias])
    assert sys.modules[alias] is module
    parent, _, name = alias.rpartition(".")
    assert getattr(importlib.import_module(parent), name) is module
    assert module.__name__ == ALIASES[alias] and module.__spec__.name == ALIASES[alias]


def test_pytorchs_spellings_work():
    from zero.cuda.amp import GradScaler
    from zero.utils.data import DataLoader, TensorDataset

    assert issubclass(GradScaler, zero.amp.GradScaler)
    assert DataLoader is zero.data.DataLoader and TensorDataset is zero.data.TensorDataset
    assert zero.backends.mps.is_available() is False
    assert zero.backends.cudnn.is_available() is False
    assert zero.accelerator.is_available() == zero.cuda.is_available()


def test_zero_utils_waits_for_its_first_use():
    """zero.utils imports zero.data (multiprocessing, sockets): not at ``import zero``."""
    program = ("import sys, zero\n"
               "assert 'zero.utils' not in sys.modules and 'zero.data' not in sys.modules\n"
               "loader = zero.utils.data.DataLoader\n"
               "assert zero.utils.data is sys.modules['zero.compat.utils.data']\n"
               "import zero.utils.hooks\n"
               "print('ok')\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ok", result.stderr
