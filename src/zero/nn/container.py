"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict.

They register their members under their positions ("0", "1", ...) or keys, so
names come out as ``layers.0.weight`` and the optimizer sees every parameter.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from ..tensors.tensor import Tensor
from .module import Module
from .parameter import Parameter


class Sequential(Module):
    """Calls its modules in order, each on the previous one's output."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (dict, OrderedDict)):
            for name, module in args[0].items():
                self.register_module(name, module)
        else:
            for i, module in enumerate(args):
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

    def __repr__(self) -> str:
        return _repeated_blocks_repr(type(self).__name__, list(self))

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


def _repeated_blocks_repr(name: str, children: list) -> str:
    """PyTorch's ModuleList repr: runs of equal children printed once, as "(0-5): 6 x ..."."""
    if not children:
        return f"{name}()"
    runs: list[list] = []                                      # [first, last, repr]
    for i, child in enumerate(children):
        text = repr(child)
        if runs and runs[-1][2] == text:
            runs[-1][1] = i
        else:
            runs.append([i, i, text])
    lines = [(f"({first}): {text}" if first == last else f"({first}-{last}): {last - first + 1} x {text}")
             .replace("\n", "\n  ") for first, last, text in runs]
    return f"{name}(\n  " + "\n  ".join(lines) + "\n)"


# -- parameter containers ------------------------------------------------------------------------

_TENSOR_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                      "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                      "uint8": "ByteTensor", "bool": "BoolTensor", "int16": "ShortTensor", "int8": "CharTensor"}


def _as_parameter(value):
    """A tensor becomes a Parameter (as PyTorch's containers do); a Parameter or another object stays."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _member_line(key, value, type_name: bool) -> str:
    """One line of a parameter container's repr, PyTorch's wording."""
    if not isinstance(value, Tensor):
        return f"({key}): Object of type: {type(value).__name__}"
    size = "x".join(str(s) for s in value.shape)
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    on_device = f" ({value.device})" if value.device.type == "cuda" else ""
    if type_name:        # ParameterDict names the tensor type: zero.FloatTensor, zero.cuda.FloatTensor
        stem = "zero.cuda." if value.device.type == "cuda" else "zero."
        described = stem + _TENSOR_TYPE_NAMES.get(value.dtype.name, "Tensor")
        return f"({key}): {kind} containing: [{described} of size {size}{on_device}]"
    return f"({key}): {kind} containing: [{value.dtype} of size {size}{on_device}]"


def _members_repr(name: str, lines: list[str]) -> str:
    return f"{name}(\n    " + "\n    ".join(lines) + "\n)" if lines else f"{name}()"


class ParameterList(Module):
    """A list of parameters registered under "0", "1", ... (tensors are wrapped as Parameters),
    so a module can hold a varying number of them and the optimizer sees each one."""

    def __init__(self, values=None):
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self += values

    def _key(self, index: int) -> str:
        if not -self._size <= index < self._size:
            raise IndexError(f"index {index} is out of range")
        return str(index % self._size)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ParameterList([self[i] for i in range(*index.indices(self._size))])
        return getattr(self, self._key(index))

    def __setitem__(self, index: int, value) -> None:
        key = self._key(index)
        self._store(key, value)

    def _store(self, key: str, value) -> None:
        value = _as_parameter(value)
        if isinstance(value, Parameter) or value is None:
            self._parameters.pop(key, None)
            self.__dict__.pop(key, None)
            self.register_parameter(key, value)
        else:
            self._parameters.pop(key, None)
            object.__setattr__(self, key, value)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def __iadd__(self, values) -> ParameterList:
        return self.extend(values)

    def append(self, value) -> ParameterList:
        key = str(self._size)
        object.__setattr__(self, "_size", self._size + 1)
        self._store(key, value)
        return self

    def extend(self, values) -> ParameterList:
        for value in values:
            self.append(value)
        return self

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")

    def extra_repr(self) -> str:
        return "\n".join("  " + _member_line(i, value, False) for i, value in enumerate(self))

    def __repr__(self) -> str:
        return _members_repr(type(self).__name__, [_member_line(i, v, False) for i, v in enumerate(self)])


class ParameterDict(Module):
    """A dict of parameters registered under their (str) keys, in insertion order (tensors are
    wrapped as Parameters)."""

    def __init__(self, parameters=None):
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict: keys must be str, got {type(key).__name__}")
        self._keys[key] = None
        value = _as_parameter(value)
        self._parameters.pop(key, None)
        self.__dict__.pop(key, None)
        if isinstance(value, Parameter) or value is None:
            self.register_parameter(key, value)
        else:
            object.__setattr__(self, key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        if key in self._parameters:
            del self._parameters[key]
        else:
            self.__dict__.pop(key, None)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __or__(self, other) -> ParameterDict:
        result = self.copy()
        result.update(other)
        return result

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def copy(self) -> ParameterDict:
        return ParameterDict({k: self[k] for k in self._keys})

    def keys(self):
        return self._keys.keys()

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default=None):
        return self[key] if key in self._keys else default

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = list(self._keys)[-1]
        return key, self.pop(key)

    def setdefault(self, key: str, default=None):
        if key not in self._keys:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def fromkeys(self, keys, default=None) -> ParameterDict:
        return ParameterDict({k: default for k in keys})

    def update(self, values) -> None:
        if isinstance(values, (OrderedDict, ParameterDict)):
            pairs = list(values.items())
        elif isinstance(values, Mapping):        # a plain mapping: in key order, as PyTorch's
            pairs = sorted(values.items())
        else:
            pairs = []
            for j, pair in enumerate(values):
                if len(pair) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(pair)}; 2 is "
                                     "required")
                pairs.append(tuple(pair))
        for key, value in pairs:
            self[key] = value

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")

    def extra_repr(self) -> str:
        return "\n".join("  " + _member_line(k, v, True) for k, v in self.items())

    def __repr__(self) -> str:
        return _members_repr(type(self).__name__, [_member_line(k, v, True) for k, v in self.items()])
