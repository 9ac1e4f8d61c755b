"""Grad mode: whether ops record the graph (``no_grad``, ``enable_grad``).

The book's ``RunOpNoGrad`` is the same switch seen from an optimizer: updates
made under it never enter the graph. Each class works as a context manager and
as a decorator, and restores the previous mode even when an exception escapes.
"""
from __future__ import annotations

import functools


class _GradState:
    enabled = True
    inference = False   # inside inference_mode(True) (issue 37: torchnames)


_state = _GradState()


def is_grad_enabled() -> bool:
    return _state.enabled


class set_grad_enabled:
    """Switch grad mode on or off; also usable as a context manager or decorator."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self.previous = _state.enabled
        _state.enabled = self.mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled = self.previous
        return False

    def __call__(self, fn):
        mode = self.mode
        _state.enabled = self.previous  # used as a decorator: do not change the mode now

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


class _GradModeContext:
    mode = True

    def __enter__(self):
        self.previous = _state.enabled
        _state.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _state.enabled = self.previous
        return False

    def __call__(self, fn):
        mode_class = type(self)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with mode_class():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Ops inside do not record the graph: for evaluation, sampling and parameter updates."""

    mode = False


class enable_grad(_GradModeContext):
    """Record the graph again inside a ``no_grad`` region."""

    mode = True


class inference_mode:
    """PyTorch's ``inference_mode``: ops inside record no graph, as under ``no_grad`` (Zero
    has no separate, faster kind of tensor for code that never meets autograd).
    ``inference_mode(False)`` leaves grad mode as it is. A context manager or a decorator."""

    def __init__(self, mode: bool = True):
        self.inference = bool(mode)

    def __enter__(self):
        self.previous = _state.enabled
        self.previous_inference = _state.inference
        _state.inference = self.inference
        if self.inference:
            _state.enabled = False
        return self

    def __exit__(self, *exc):
        _state.enabled = self.previous
        _state.inference = self.previous_inference
        return False

    def __call__(self, fn):
        inference = self.inference

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(inference):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """Whether code runs inside ``inference_mode()`` (and not an inner ``inference_mode(False)``)."""
    return _state.inference
