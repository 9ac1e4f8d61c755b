"""Hook registries and the handle that removes a hook (``zero.utils.hooks.RemovableHandle``).

A hook is a function a tensor or a module calls at a given moment: a tensor's when its
gradient has been computed (``Tensor.register_hook``), a module's before or after its
forward (``Module.register_forward_pre_hook`` / ``register_forward_hook``). Hooks are
kept in a dict in the order they were registered; ``handle.remove()`` takes one out.
"""
from __future__ import annotations

import itertools

_ids = itertools.count()


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook (twice is
    harmless). Also a context manager: the hook is removed on leaving the block."""

    def __init__(self, registry: dict):
        self.id = next(_ids)
        self._registry = registry

    def remove(self) -> None:
        self._registry.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def add_hook(registry: dict, hook) -> RemovableHandle:
    """Register ``hook`` (which must be callable) in ``registry``; its handle."""
    if not callable(hook):
        raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
    handle = RemovableHandle(registry)
    registry[handle.id] = hook
    return handle
