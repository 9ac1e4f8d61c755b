"""PyTorch's addresses for what Zero keeps elsewhere or has not at all. Programs written for
PyTorch import them; the book's concepts do not need them.

    accelerator    torch.accelerator: which accelerator this machine has (CUDA, or none)
    cuda_amp       torch.cuda.amp.GradScaler, autocast: the older names of zero.amp's ("cuda")
    cpu_amp        torch.cpu.amp.autocast: the older name of zero.amp.autocast("cpu")
    cudnn          torch.backends.cudnn: the flags scripts set (Zero has no cuDNN)
    mps            torch.backends.mps: Apple's backend, which Zero does not have
    utils          torch.utils.data (zero.data's classes), torch.utils.hooks, torch.utils.checkpoint

(Elsewhere, the optimizers take PyTorch's ``foreach``, ``fused`` and ``capturable`` and
change nothing for them: ``zero.optim.optimizer.execution_options`` says so once.)

Each module is reachable under PyTorch's name (``zero.accelerator``, ``zero.cuda.amp``,
``zero.backends.cudnn``, ``zero.utils.data`` ...): ``ALIASES`` maps those names to the
modules here and ``install`` (run by ``import zero``) registers them. The small ones are
imported then; ``zero.utils`` and its submodules when a program first imports or touches
them, through a finder on Python's import path, as ``zero.data`` is imported on first use.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Loader
else:
    Loader = object  # (what mypy checks the loader against; importlib.abc is not imported)

# PyTorch's name -> the module that answers to it
ALIASES = {
    "zero.accelerator": "zero.compat.accelerator",
    "zero.cuda.amp": "zero.compat.cuda_amp",
    "zero.cpu.amp": "zero.compat.cpu_amp",
    "zero.backends.cudnn": "zero.compat.cudnn",
    "zero.backends.mps": "zero.compat.mps",
    "zero.utils": "zero.compat.utils",              # (on first use: it imports zero.data)
    "zero.utils.data": "zero.compat.utils.data",
    "zero.utils.hooks": "zero.compat.utils.hooks",
    "zero.utils.checkpoint": "zero.compat.utils.checkpoint",
    "zero.utils.data.datapipes": "zero.compat.utils.datapipes",
    "zero.utils.data.datapipes.iter": "zero.compat.utils.datapipes.iter",
    "zero.utils.data.datapipes.map": "zero.compat.utils.datapipes.map",
}
ON_FIRST_USE = {"zero.utils", "zero.utils.data", "zero.utils.hooks", "zero.utils.checkpoint"}
ON_FIRST_USE |= {"zero.utils.data.datapipes", "zero.utils.data.datapipes.iter", "zero.utils.data.datapipes.map"}


class _AliasLoader(Loader):
    """Loads an alias as the module it names: one module object under two names (a loader
    in the import system's sense; importlib.abc is not imported, as it costs ``import zero``
    pathlib and more)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.target_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.target_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing runs (the module ran when it was imported); the import system set the
        alias's spec on it, and it gets its own back."""
        module.__spec__ = self.target_spec


class _AliasFinder:
    """Finds ``ALIASES``' names, first on ``sys.meta_path`` (so that ``zero.utils.data`` is
    never loaded a second time from the file under another name)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        module = ALIASES.get(fullname)
        if module is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module))


def install(package: ModuleType) -> None:
    """Register ``ALIASES`` for ``package`` (``zero``): the finder, and the small modules at
    once, as attributes of their parents (``zero.backends.cudnn``)."""
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
    for alias, target in ALIASES.items():
        if alias in ON_FIRST_USE:
            continue
        module = importlib.import_module(target)
        sys.modules[alias] = module
        parent, _, name = alias.rpartition(".")
        setattr(sys.modules[parent], name, module)
