"""NumPy's floating-point warnings, silenced where PyTorch gives inf and nan silently (the
package docstring says which kernels and why)."""
from __future__ import annotations

import contextlib
import warnings
from contextlib import AbstractContextManager
from types import ModuleType

import numpy as np

# NumPy's floating-point warnings from the package's own calls, once for every NumPy kernel;
# appended, so that a user's own filters (-W error, say) still come first. The pattern is the
# package's name, which matches the start of each of its modules' names.
PACKAGE = __name__.rpartition(".")[0]
warnings.filterwarnings("ignore", r".* encountered in ", RuntimeWarning, PACKAGE.replace(".", r"\."), append=True)

_NOTHING = contextlib.nullcontext()


def quiet(xp: ModuleType) -> AbstractContextManager[object]:
    """A context without NumPy's floating-point warnings (nothing to silence on CuPy)."""
    return np.errstate(all="ignore") if xp is np else _NOTHING
