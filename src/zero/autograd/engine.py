"""The backward engine (the book's ``Tensor::Backward``).

1. Order: an iterative depth-first search from the roots gives the graph's nodes
   in post-order; reversed, every node comes after all nodes that consume its
   output, so its gradient is complete when its turn comes. (No recursion: a
   chain of 10,000 ops is as easy as one of ten.) A node is an op -- exactly one
   per logical tensor, since a view has its own op -- or a leaf's
   ``AccumulateGrad``.
2. Run: each op's ``backward`` turns its output gradient into input gradients;
   each goes along its edge to the next node, summed with the contributions of
   other paths. An ``AccumulateGrad`` node adds its total into the leaf's
   ``.grad`` (accumulating across calls, until zeroed).
3. Free: without ``retain_graph`` an op drops its saved tensors as soon as it
   has run, so activations are released during the backward pass.
4. Finish: functions that a hook queued with ``queue_callback`` during the pass run
   once every node has run (data-parallel training waits there for its last
   gradient all-reduce).

Ownership of gradient buffers: a leaf whose ``.grad`` is empty may keep the
gradient it receives as its ``.grad`` without a copy -- when the engine knows
nothing else will hold that memory. It knows because it watches the storages:
a buffer made during this pass (its storage's serial is newer than the pass) is
no parameter, saved tensor or caller's tensor, and the pass remembers which
buffers it already gave to a leaf, so two leaves never share one.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import overload

from ..errors import AutogradError, describe
from ..grad_mode import no_grad
from ..tensors.creation import ones_like
from ..tensors.storage import new_serial
from ..tensors.tensor import Tensor
from . import autocast_hook
from . import op as op_module
from .op import AccumulateGrad, Op, run_profiled, freed_graph_error, gradient_node


def topological_order(roots: list[Op]) -> list[Op]:
    """Nodes reachable from ``roots`` in post-order (producers before consumers)."""
    order: list[Op] = []
    visited: set[int] = set()
    for root in roots:
        if id(root) in visited:
            continue
        visited.add(id(root))
        stack: list[tuple[Op, int]] = [(root, 0)]
        while stack:
            node, i = stack[-1]
            edges: Sequence[Op | None] = node.next_edges if not node.released else ()
            while i < len(edges):
                child = edges[i]
                i += 1
                if child is not None and id(child) not in visited:
                    visited.add(id(child))
                    stack[-1] = (node, i)
                    stack.append((child, 0))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


# One list per backward pass now running (a hook may start a nested one): the functions
# queue_callback added to it, run when that pass has run every node.
_pass_callbacks: list[list[Callable[[], object]]] = []


def queue_callback(callback: Callable[[], object]) -> None:
    """Run ``callback()`` when the backward pass now running has run its last node (PyTorch's
    ``Variable._execution_engine.queue_callback``): a hook calls it to act once the pass is
    over, after every ``.grad`` it fills is complete. Callbacks run in the order they were
    queued (one queued by a callback runs too), under no_grad; a pass that raises runs none."""
    if not callable(callback):
        raise TypeError(f"queue_callback: expected a function, got {type(callback).__name__}")
    if not _pass_callbacks:
        raise AutogradError("queue_callback: no backward pass is running; call it from a hook "
                            "during backward()")
    _pass_callbacks[-1].append(callback)


@overload
def backward(tensors: Iterable[Tensor], grad_tensors: Iterable[Tensor | None] | None = None,
             retain_graph: bool = False, inputs: None = None) -> None: ...
@overload
def backward(tensors: Iterable[Tensor], grad_tensors: Iterable[Tensor | None] | None = None,
             retain_graph: bool = False, *, inputs: Sequence[Tensor]) -> tuple[Tensor | None, ...]: ...


def backward(tensors: Iterable[Tensor], grad_tensors: Iterable[Tensor | None] | None = None,
             retain_graph: bool = False, inputs: Sequence[Tensor] | None = None) -> tuple[Tensor | None, ...] | None:
    """Back-propagate from ``tensors``. Accumulates into leaves' ``.grad``; when ``inputs``
    is given, instead returns the gradients of those tensors and touches no ``.grad``."""
    callbacks: list[Callable[[], object]] = []
    _pass_callbacks.append(callbacks)
    try:
        result = _run_pass(tensors, grad_tensors, retain_graph, inputs)
        with no_grad():
            while callbacks:
                callbacks.pop(0)()
    finally:
        _pass_callbacks.pop()
    return result


def backward_from(tensor: Tensor, gradient: Tensor | None = None, retain_graph: bool = False) -> None:
    """``tensor.backward()``: back-propagate from this tensor into the ``.grad`` of the leaves
    it depends on (``gradient``: the seed, for a tensor of more than one element)."""
    backward([tensor], None if gradient is None else [gradient], retain_graph=retain_graph)


def _run_pass(tensors: Iterable[Tensor], grad_tensors: Iterable[Tensor | None] | None, retain_graph: bool,
              inputs: Sequence[Tensor] | None) -> tuple[Tensor | None, ...] | None:
    """The book's loop: order the graph, then for each node, consumers first: pop the gradient
    its consumers summed for it, run its backward, and add what comes out into the gradients
    waiting for its inputs' nodes (a leaf's node adds it into ``.grad``). With ``inputs``
    (``autograd.grad``) the gradients reaching those tensors are returned instead."""
    owned = _PassOwnership()  # before the seeds: an implicit seed (ones) is the engine's own
    roots, seeds = _seed_gradients(tensors, grad_tensors)
    root_nodes = [gradient_node(t) for t in roots]
    grads: dict[int, Tensor] = {}  # id(node) -> the gradient summed so far
    for node, seed in zip(root_nodes, seeds):
        _add_into(grads, node, seed)
    captured: dict[int, Tensor | None] | None = (
        None if inputs is None else {id(gradient_node(t)): None for t in inputs})
    profiler = op_module.active_profiler

    with no_grad(), autocast_hook.suspended():
        for node in reversed(topological_order(root_nodes)):    # 1. consumers before producers
            grad = grads.pop(id(node), None)                      # 2. every path's part, summed
            if grad is None:
                continue                                          # (no gradient flows through it)
            if node.released or grad._meta.shape != node.out_shape:
                raise _refusal(node, grad)
            if node.tensor_hooks:
                grad = _hooked(node, grad, owned)
            if captured is not None and id(node) in captured:
                captured[id(node)] = grad                         # autograd.grad's answer
            if isinstance(node, AccumulateGrad):
                if captured is None:                              # (autograd.grad touches no .grad)
                    node.accumulate(grad, adopt=owned.may_adopt(grad))
                continue
            if node.retained is not None:
                _retain(node, grad)
            if profiler is None:                                  # 3. the op's local rule
                input_grads = node.backward(grad)
            else:
                input_grads = run_profiled(profiler, node.backward, type(node).__name__, "backward", grad.device, grad)
            for edge, input_grad in zip(node.next_edges, input_grads):
                if edge is not None and input_grad is not None:
                    _add_into(grads, edge, input_grad)            # 4. summed with the other paths
            if not retain_graph:
                node.release()                                    # its saved tensors, freed now
    if captured is not None and inputs is not None:
        return tuple(captured[id(gradient_node(t))] for t in inputs)
    return None


def _refusal(node: Op, grad: Tensor) -> AutogradError:
    """Why ``grad`` cannot go through ``node``: its graph was freed, or the shapes differ."""
    if node.released:
        return freed_graph_error(node)
    return AutogradError(f"{node.name}: received a gradient of shape {list(grad.shape)} for an output of "
                         f"shape {list(node.out_shape)}")


def _hooked(node: Op, grad: Tensor, owned: _PassOwnership) -> Tensor:
    """The gradient after the tensor's hooks (``register_hook``); one a hook returned is
    never adopted as a leaf's .grad, as the hook may keep it."""
    hooked = _run_tensor_hooks(node, grad)
    if hooked is not grad:
        owned.given.add(id(hooked._storage))
    return hooked


def _retain(node: Op, grad: Tensor) -> None:
    """``retain_grad()``: the output of ``node`` keeps a copy of its gradient in ``.grad``."""
    assert node.retained is not None
    tensor = node.retained()
    if tensor is not None:
        tensor.grad = grad.clone() if tensor.grad is None else tensor.grad + grad


def _run_tensor_hooks(node: Op, grad: Tensor) -> Tensor:
    """The tensor's hooks in registration order, each seeing the gradient the one before
    returned (None keeps it), before it reaches .grad, retain_grad or the node's backward."""
    assert node.tensor_hooks is not None
    for hook in list(node.tensor_hooks.values()):
        result = hook(grad)
        if result is None:
            continue
        if not isinstance(result, Tensor) or result.shape != grad.shape:
            raise AutogradError(f"a hook on the output of {node.name} returned {describe(result)}; a tensor "
                                f"hook must return None or a gradient of the same shape, {list(grad.shape)}")
        grad = result.detach()
    return grad


class _PassOwnership:
    """Which gradient buffers a leaf may keep as its ``.grad`` without a copy."""

    def __init__(self) -> None:
        self.start = new_serial()  # storages with a larger serial were made during this pass
        self.given: set[int] = set()  # ids of storages already given to a leaf in this pass

    def may_adopt(self, grad: Tensor) -> bool:
        storage = grad._storage
        if (storage.serial < self.start or id(storage) in self.given or grad.grad_fn is not None
                or not grad.is_contiguous() or grad.nbytes != storage.nbytes):
            return False
        self.given.add(id(storage))
        return True


def _seed_gradients(tensors: Iterable[Tensor],
                    grad_tensors: Iterable[Tensor | None] | None) -> tuple[list[Tensor], list[Tensor]]:
    roots = list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(roots)
    seeds = []
    for t, g in zip(roots, grad_tensors):
        if not t.requires_grad:
            raise AutogradError(f"backward: {describe(t)} does not require grad and has no grad_fn; "
                                "did you forget requires_grad=True on an input, or run under no_grad?")
        if g is None:
            if t.numel() != 1:
                raise AutogradError(f"backward: grad can be created implicitly only for a scalar output, "
                                    f"got {describe(t)}; pass gradient= with the output's shape "
                                    "(or reduce it first, e.g. .sum())")
            g = ones_like(t)
        else:
            if g.shape != t.shape:
                raise AutogradError(f"backward: gradient {describe(g)} does not match the output {describe(t)}")
            if g.device is not t.device:
                raise AutogradError(f"backward: gradient on {g.device} for an output on {t.device}")
            g = g.detach()  # the caller's memory: its storage is older than the pass, never adopted
        seeds.append(g)
    return roots, seeds


def _add_into(grads: dict[int, Tensor], node: Op, g: Tensor) -> None:
    """Sum a contribution into the gradient waiting for ``node``."""
    key = id(node)
    current = grads.get(key)
    grads[key] = g if current is None else current + g
