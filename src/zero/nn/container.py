"""Containers: Sequential, ModuleList, ModuleDict.

They register their members under their positions ("0", "1", ...) or keys, so
names come out as ``layers.0.weight`` and the optimizer sees every parameter.
"""
from __future__ import annotations

from collections import OrderedDict

from .module import Module


class Sequential(Module):
    """Calls its modules in order, each on the previous one's output."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], (dict, OrderedDict)):
            for name, module in modules[0].items():
                self.register_module(name, module)
        else:
            for i, module in enumerate(modules):
                self.register_module(str(i), module)

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x

    def append(self, module: Module) -> Sequential:
        self.register_module(str(len(self._modules)), module)
        return self

    def __getitem__(self, index):
        items = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(*items[index])
        return items[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class ModuleList(Module):
    """A list of modules that registers each one (a plain Python list would hide them)."""

    def __init__(self, modules=None):
        super().__init__()
        for module in modules or ():
            self.append(module)

    def append(self, module: Module) -> ModuleList:
        self.register_module(str(len(self._modules)), module)
        return self

    def extend(self, modules) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def __getitem__(self, index):
        items = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(items[index])
        return items[index]

    def __setitem__(self, index: int, module: Module) -> None:
        key = list(self._modules)[index]
        self.register_module(key, module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class ModuleDict(Module):
    """A dict of modules that registers each one under its key."""

    def __init__(self, modules=None):
        super().__init__()
        for name, module in (modules or {}).items():
            self.register_module(name, module)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.register_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()
