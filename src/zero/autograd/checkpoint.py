"""Activation checkpointing (PyTorch's ``torch.utils.checkpoint``): trade compute for memory.

    y = checkpoint(block, x, use_reentrant=False)        # block's activations are not kept
    y = checkpoint_sequential(model, 4, x, use_reentrant=False)

``checkpoint(function, *args)`` runs ``function`` under ``no_grad``, so none of the
activations inside it are kept: the graph holds only the inputs (and, with
``preserve_rng_state``, the random generator's state as it was). Each tensor output gets
one node, ``CheckpointBackward``; when the backward pass reaches it, the function runs
again -- from the saved inputs, with the saved random state, so a dropout inside draws
the same mask -- this time recording its graph, and a nested backward pass through that
graph delivers the gradients: the parameters' into their ``.grad`` (as a plain run's
backward would), the inputs' back to the outer pass. Several outputs share one
recomputation. Gradients equal those of the plain run.

``use_reentrant`` (which PyTorch asks to be passed; without it, a warning and ``True``)
selects PyTorch's two behaviours where they differ visibly: with ``True`` the output
requires grad only if an input does (else a warning, and no gradient reaches the
parameters -- PyTorch's reentrant rule) and keyword arguments are refused; with
``False`` the output is connected to the graph whenever grad mode is on (so a first
block whose input is plain data still trains its parameters) and keyword arguments go
to ``function``. In both, parameters receive their gradients in ``.grad``: through a
checkpoint, ``autograd.grad(loss, params)`` does not see them (PyTorch's reentrant
variant refuses that case; use ``loss.backward()``). Tensors are found among the
positional and keyword arguments, not inside lists or dicts passed as arguments (a
tensor there gets no gradient from the checkpoint).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ..grad_mode import enable_grad, is_grad_enabled, no_grad
from ..random import get_rng_state, set_rng_state
from ..tensors.tensor import Tensor
from .engine import backward as run_backward
from .op import Grads, Op

_EXPLICIT = ("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly; use_reentrant=False "
             "is recommended (Zero takes True when it is not given, as PyTorch does)")
_NO_INPUT_GRAD = "None of the inputs have requires_grad=True. Gradients will be None"


class _Run:
    """One checkpointed call: what the recomputation needs, and its result once made."""

    def __init__(self, function: Callable, args: tuple, kwargs: dict, rng_state: dict | None) -> None:
        self.function, self.args, self.kwargs, self.rng_state = function, args, kwargs, rng_state
        self.inputs: list[Tensor] = []   # the recomputation's leaves, one per tensor argument
        self.outputs: list[Tensor] | None = None
        self.several = False

    def recompute(self) -> list[Tensor]:
        if self.outputs is not None:
            return self.outputs
        self.inputs = []

        def leaf(a: Any) -> Any:
            if not isinstance(a, Tensor):
                return a
            t = a.detach().requires_grad_(a.requires_grad)
            self.inputs.append(t)
            return t

        args = [leaf(a) for a in self.args]
        kwargs = {key: leaf(a) for key, a in self.kwargs.items()}
        outer_state = get_rng_state() if self.rng_state is not None else None
        try:
            if self.rng_state is not None:
                set_rng_state(self.rng_state)
            with enable_grad():
                result = self.function(*args, **kwargs)
        finally:
            if outer_state is not None:
                set_rng_state(outer_state)
        self.outputs = _tensors(result)
        return self.outputs

    def gradients(self, index: int, grad: Tensor) -> list[Tensor | None]:
        """The inputs' gradients from output ``index``'s gradient ``grad`` (the parameters'
        go into their ``.grad`` on the way)."""
        outputs = self.recompute()
        out = outputs[index]
        for leaf in self.inputs:
            leaf.grad = None
        if out.requires_grad:
            run_backward([out], [grad], retain_graph=self.several)
        grads = [leaf.grad for leaf in self.inputs]
        if not self.several:
            self.outputs = None  # its graph is spent: another backward (retain_graph) recomputes
        return grads


def _tensors(result: Any) -> list[Tensor]:
    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [r for r in result if isinstance(r, Tensor)]
    return []


class Checkpoint(Op):
    """One tensor output of a checkpointed call (shown as ``CheckpointBackward``)."""

    def forward(self, run: _Run, index: int, output: Tensor, *inputs: Tensor) -> Tensor:
        self.run, self.index, self.n_inputs = run, index, len(inputs)
        return output

    def backward(self, grad: Tensor) -> Grads:
        grads = self.run.gradients(self.index, grad)
        grads += [None] * (self.n_inputs - len(grads))  # (the anchor, when there is one)
        return (None, None, None, *grads)


def _function_parameters(function: Callable) -> Iterable[Tensor] | None:
    """The parameters of ``function`` when it is a module (or a module's method), else None."""
    owner = getattr(function, "__self__", function)
    parameters = getattr(owner, "parameters", None)
    return parameters() if callable(parameters) else None


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None, context_fn: Callable | None = None,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` without keeping its activations (see the module's docstring).

    ``preserve_rng_state=True`` (a keyword, as in PyTorch) replays the random generator's
    state in the recomputation. ``context_fn`` (PyTorch's selective checkpointing) is not
    supported; ``determinism_check``, ``debug`` and ``early_stop`` are accepted and change
    nothing (Zero recomputes each output's graph whole).
    """
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if use_reentrant is None:
        warnings.warn(_EXPLICIT, stacklevel=2)
        use_reentrant = True
    if context_fn is not None:
        raise ValueError("checkpoint: context_fn (selective activation checkpointing) is not supported by Zero")
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]  # (the recomputation's order)
    if not is_grad_enabled():
        return function(*args, **kwargs)
    inputs_need_grad = any(t.requires_grad for t in tensors)
    if use_reentrant and not inputs_need_grad:
        warnings.warn(_NO_INPUT_GRAD, stacklevel=2)
    anchor: list[Tensor] = []
    if not use_reentrant and not inputs_need_grad:
        parameters = _function_parameters(function)
        if parameters is None or any(p.requires_grad for p in parameters):
            from ..tensors.creation import zeros  # an input that requires grad: the call is recorded

            anchor = [zeros((), requires_grad=True)]
    run = _Run(function, args, kwargs, get_rng_state() if preserve_rng_state else None)
    with no_grad():
        result = function(*args, **kwargs)
    outputs = _tensors(result)
    wrapped_outputs = []
    for index, out in enumerate(outputs):
        if out.dtype.is_floating_point and (inputs_need_grad or anchor):
            wrapped_outputs.append(Checkpoint.apply(run, index, out.detach(), *tensors, *anchor))
        else:
            wrapped_outputs.append(out)
    run.several = len(wrapped_outputs) > 1
    if isinstance(result, Tensor):
        return wrapped_outputs[0]
    if isinstance(result, (tuple, list)):
        replaced = iter(wrapped_outputs)
        items = [next(replaced) if isinstance(r, Tensor) else r for r in result]
        return type(result)(items) if isinstance(result, list) else tuple(items)
    return result


def _run_segment(functions: list, start: int, end: int) -> Callable:
    def forward(x):
        for f in functions[start:end + 1]:
            x = f(x)
        return x
    return forward


def checkpoint_sequential(functions: Any, segments: int, input: Any,  # noqa: A002 (PyTorch's name)
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run a sequence of modules (a ``Sequential`` or a list) in ``segments`` pieces, every
    piece but the last under ``checkpoint``: only the pieces' boundaries are kept."""
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant is None:
        warnings.warn(_EXPLICIT, stacklevel=2)
        use_reentrant = True
    children = getattr(functions, "children", None)
    functions = list(children()) if callable(children) and not isinstance(functions, (list, tuple)) else list(functions)
    segment_size = len(functions) // segments
    end, x = -1, input
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        x = checkpoint(_run_segment(functions, start, end), x, use_reentrant=use_reentrant,
                       preserve_rng_state=preserve_rng_state)
    return _run_segment(functions, end + 1, len(functions) - 1)(x)
