"""Module: parameters and submodules organised as a tree (the book's ``Module``).

A module registers its parameters and children either explicitly, as the C++
core does (``register_parameter``, ``register_module``, ``register_buffer``),
or simply by attribute assignment, as the book's Python front end does::

    self.fc1 = Linear(784, 512)      # a child module, named "fc1"
    self.scale = Parameter(ones(1))  # a parameter, named "scale"

``named_parameters()`` walks the tree and yields dotted names (``fc1.weight``)
with each parameter once, even when it is shared (tied weights). The optimizer
needs nothing else.
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Iterator
from typing import TypeVar

from ..errors import ShapeError
from ..grad_mode import no_grad
from ..hooks import RemovableHandle, add_hook
from ..ops.conversion import parse_to_args
from ..tensors.creation import tensor
from ..tensors.tensor import Tensor
from .parameter import Parameter
from .utils import zero_grads

M = TypeVar("M", bound="Module")  # methods that return self keep the subclass's type
IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _EvalGuardState:
    depth = 0  # > 0 while a global eval_mode() is active


_eval_guard = _EvalGuardState()


class Module:
    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_training", True)

    # -- registration ---------------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        self._check_name(name, "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot register {type(param).__name__} as parameter {name!r} "
                            "(wrap it in zero.nn.Parameter)")
        self._parameters[name] = param

    def register_module(self, name: str, module: Module | None) -> None:
        self._check_name(name, "_modules")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module (registering {name!r})")
        self._modules[name] = module

    add_module = register_module

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """State that is not trained but belongs to the model (moved by ``to``, saved in the
        state dict unless ``persistent=False``)."""
        self._check_name(name, "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"buffer {name!r} must be a Tensor or None, got {type(tensor).__name__}")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def _check_name(self, name: str, kind: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"call Module.__init__() in {type(self).__name__}.__init__ before "
                                 "assigning parameters or modules")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"a parameter, buffer or module name must be a non-empty string without "
                           f"'.', got {name!r}")
        for other in ("_parameters", "_buffers", "_modules"):
            if other != kind and name in self.__dict__[other]:
                raise KeyError(f"{name!r} is already registered in {type(self).__name__}.{other}")
        if name in self.__dict__:
            object.__delattr__(self, name)

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, Parameter):
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self.register_module(name, value)
        elif "_parameters" in self.__dict__ and name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to parameter {name!r} "
                                "(use zero.nn.Parameter(...) or None)")
            self._parameters[name] = None
        elif "_modules" in self.__dict__ and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to submodule {name!r}")
            self._modules[name] = None
        elif "_buffers" in self.__dict__ and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} to buffer {name!r}")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, {}):
                del self.__dict__[registry][name]
                return
        object.__delattr__(self, name)

    # -- calling ------------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    # {handle id: hook}, made by the first register_forward_(pre_)hook; until then the class's None
    _forward_pre_hooks: dict | None = None
    _forward_hooks: dict | None = None

    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks is None and self._forward_hooks is None:
            return self.forward(*args, **kwargs)
        for hook in list((self._forward_pre_hooks or {}).values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in list((self._forward_hooks or {}).values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def _hook_registry(self, name: str) -> dict:
        registry = self.__dict__.get(name)
        if registry is None:
            registry = {}
            object.__setattr__(self, name, registry)
        return registry

    def register_forward_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, args)`` before each forward; a result (a tuple, or one value)
        replaces the positional arguments."""
        return add_hook(self._hook_registry("_forward_pre_hooks"), hook)

    def register_forward_hook(self, hook) -> RemovableHandle:
        """``hook(module, args, output)`` after each forward; a result replaces the output."""
        return add_hook(self._hook_registry("_forward_hooks"), hook)

    # -- walking the tree -----------------------------------------------------------------------
    def named_modules(self, prefix: str = "", memo: set | None = None) -> Iterator[tuple[str, Module]]:
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:  # iterative pre-order, children in registration order
            name, module = stack.pop()
            if id(module) in memo:
                continue
            memo.add(id(module))
            yield name, module
            children = [(f"{name}.{child_name}" if name else child_name, child)
                        for child_name, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        """Every module of the tree, once, in ``named_modules``' order, without the names
        (a training step's ``clip_grad_norm_(model.parameters(), ...)`` walks the tree
        each step, and the names were most of that walk's cost)."""
        found: list[Module] = []
        seen = set()
        stack = [self]
        while stack:  # iterative pre-order, as named_modules: no recursion limit on depth
            module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            found.append(module)
            if module._modules:
                stack.extend(reversed([child for child in module._modules.values() if child is not None]))
        return iter(found)

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen = set()
        walk = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_name, module in walk:
            for name, value in module.__dict__[registry].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_name}.{name}" if module_name else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Dotted names and parameters, each shared parameter once (the first name wins)."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        return self._members("_parameters", recurse)

    def _members(self, registry: str, recurse: bool) -> Iterator:
        """``_named_members``' values, each once, without building the names."""
        seen = set()
        for module in self.modules() if recurse else (self,):
            for value in module.__dict__[registry].values():
                if value is not None and id(value) not in seen:
                    seen.add(id(value))
                    yield value

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        return self._members("_buffers", recurse)

    def num_parameters(self, trainable_only: bool = False) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not trainable_only)

    def apply(self: M, fn) -> M:
        """Call ``fn`` on every submodule (children first) and on this module."""
        for module in reversed(list(self.modules())):
            fn(module)
        return self

    # -- modes ----------------------------------------------------------------------------------
    @property
    def training(self) -> bool:
        """True in training mode, unless a global ``eval_mode()`` is active."""
        return self._training and _eval_guard.depth == 0

    @training.setter
    def training(self, mode: bool) -> None:
        object.__setattr__(self, "_training", bool(mode))

    def train(self: M, mode: bool = True) -> M:
        for module in self.modules():
            object.__setattr__(module, "_training", bool(mode))
        return self

    def eval(self: M) -> M:
        return self.train(False)

    def requires_grad_(self: M, requires_grad: bool = True) -> M:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads(self.parameters(), set_to_none)

    # -- devices and dtypes ---------------------------------------------------------------------
    def to(self: M, *args, **kwargs) -> M:
        """Move (or cast) every parameter, its gradient and every buffer in place: the
        Parameter objects stay the same, so an optimizer built on them keeps working."""
        device, dtype = parse_to_args(*args, **kwargs)

        def convert(t: Tensor) -> Tensor:
            # Integer and bool tensors follow device moves but not dtype casts.
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None)

        with no_grad():
            for module in self.modules():
                for p in module._parameters.values():
                    if p is None:
                        continue
                    moved = convert(p)
                    if moved is not p:
                        p.data = moved
                    if p.grad is not None:
                        p.grad = convert(p.grad)
                for name, b in module._buffers.items():
                    if b is not None:
                        module._buffers[name] = convert(b)
        return self

    def cpu(self: M) -> M:
        return self.to("cpu")

    def cuda(self: M, device=None) -> M:
        return self.to("cuda" if device is None else device)

    def float(self: M) -> M:
        return self.to(dtype="float32")

    def double(self: M) -> M:
        return self.to(dtype="float64")

    # -- state ----------------------------------------------------------------------------------
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Parameters and persistent buffers by dotted name (detached unless ``keep_vars``)."""
        result = OrderedDict()
        for module_name, module in self.named_modules(prefix.rstrip(".")):
            stem = f"{module_name}." if module_name else ""
            for name, p in module._parameters.items():
                if p is not None:
                    result[stem + name] = p if keep_vars else p.detach()
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent:
                    result[stem + name] = b if keep_vars else b.detach()
        return result

    def load_state_dict(self, state_dict, strict: bool = True) -> IncompatibleKeys:
        """Copy values into the existing parameters and buffers (in place, no graph).
        With ``strict``, missing and unexpected keys are errors; a wrong shape always is."""
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        wrong_shape = [f"{k}: checkpoint {list(state_dict[k].shape)}, model {list(own[k].shape)}"
                       for k in own if k in state_dict and tuple(state_dict[k].shape) != own[k].shape]
        problems = []
        if wrong_shape:
            problems.append("wrong shapes: " + "; ".join(wrong_shape))
        if strict and missing:
            problems.append("missing keys: " + ", ".join(missing))
        if strict and unexpected:
            problems.append("unexpected keys: " + ", ".join(unexpected))
        if problems:
            raise ShapeError(f"error loading state dict into {type(self).__name__}: " + " | ".join(problems))
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    value = state_dict[key]
                    if not isinstance(value, Tensor):
                        value = tensor(value)
                    target.copy_(value)
        return IncompatibleKeys(missing, unexpected)

    # -- printing -------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, child in self._modules.items():
            child_repr = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {child_repr}")
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        head = f"{type(self).__name__}({extra}" if extra else f"{type(self).__name__}("
        return head + "\n" + "\n".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))


class eval_mode:
    """The book's ``EvalGuard``: evaluation behaviour inside, the previous mode restored on
    exit -- also when an exception escapes.

    ``with eval_mode(model):`` switches those modules (and their children) to eval and
    restores each one's own flag afterwards. ``with eval_mode():`` with no arguments is
    global, as in the book: every module reports ``training == False`` inside.
    """

    def __init__(self, *modules: Module):
        self.modules = modules
        self.saved: list = []

    def __enter__(self):
        if not self.modules:
            _eval_guard.depth += 1
        for root in self.modules:
            for m in root.modules():
                self.saved.append((m, m._training))
                object.__setattr__(m, "_training", False)
        return self

    def __exit__(self, *exc):
        if not self.modules:
            _eval_guard.depth -= 1
        for m, flag in reversed(self.saved):
            object.__setattr__(m, "_training", flag)
        self.saved.clear()
        return False
