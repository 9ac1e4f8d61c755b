"""Where an op asks autocast which dtype to run in: one flag and one call.

The functional form of each op on autocast's lists (``zero.amp.autocast.POLICIES``,
PyTorch's op reference) starts with

    if autocast_hook.state.active:
        x, weight, bias = autocast_hook.cast("linear", x, weight, bias)

``state.active`` is False unless some device's autocast is on, so outside autocast an op
pays one attribute read. ``cast`` hands the op's name and tensor arguments to the policy
``zero.amp.autocast`` installed, and gets them back cast, or unchanged when the op is not
on the table for the tensors' device type. (This module sits in the autograd layer, below
the ops, so that the backward engine can turn autocast off; the table and the state
functions live above, in ``zero.amp``.)
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


class _AutocastState:
    active = False                                    # some device type's autocast is enabled
    policy: Callable[[str, tuple], tuple] | None = None   # set by zero.amp.autocast


state = _AutocastState()


def cast(op: str, *arguments: Any) -> tuple:
    """``arguments`` (tensors, None, numbers) as ``op`` takes them under the autocast in force."""
    policy = state.policy
    return arguments if policy is None else policy(op, arguments)


class suspended:
    """Autocast off for a while: the backward engine runs each op's backward in the dtypes its
    forward chose (PyTorch's engine does not autocast either), even when ``backward()`` is
    called inside an autocast region."""

    __slots__ = ("previous",)

    def __enter__(self) -> None:
        self.previous = state.active
        state.active = False

    def __exit__(self, *exc: Any) -> None:
        state.active = self.previous
