"""The backward engine (the book's ``Tensor::Backward``).

1. Order: an iterative depth-first search from the roots gives the ops in
   post-order; reversed, every op comes after all ops that consume its output,
   so its gradient is complete when its turn comes. (No recursion: a chain of
   10,000 ops is as easy as one of ten.) Nodes are identified by the op object,
   which is exactly one per logical tensor: a view has its own op.
2. Run: each op's ``backward`` turns its output gradient into input
   gradients; each goes along its edge, to the producing op (summed with
   contributions from other paths) or to a leaf's ``.grad`` (accumulated in
   place across paths and across calls, until zeroed).
3. Free: without ``retain_graph`` an op drops its saved tensors as soon as it
   has run, so activations are released during the backward pass.
"""
from __future__ import annotations

import sys
import time

from ..errors import AutogradError, describe
from . import op as op_module
from .grad_mode import no_grad
from .op import Op


def topological_order(roots: list) -> list:
    """Ops reachable from ``roots`` in post-order (producers before consumers)."""
    order = []
    visited = set()
    for root in roots:
        if id(root) in visited:
            continue
        visited.add(id(root))
        stack = [(root, 0)]
        while stack:
            node, i = stack[-1]
            edges = node.next_edges if not node.released else ()
            while i < len(edges):
                child = edges[i]
                i += 1
                if isinstance(child, Op) and id(child) not in visited:
                    visited.add(id(child))
                    stack[-1] = (node, i)
                    stack.append((child, 0))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def backward(tensors, grad_tensors=None, retain_graph: bool = False, inputs=None):
    """Back-propagate from ``tensors``. Accumulates into leaves' ``.grad``; when ``inputs``
    is given, instead returns the gradients of those tensors and touches no ``.grad``."""
    roots, seeds = _seed_gradients(tensors, grad_tensors)
    capture = capture_nodes = None
    if inputs is not None:
        capture = {id(t): None for t in inputs}  # tensor id -> its gradient
        capture_nodes = {id(t.grad_fn): id(t) for t in inputs if t.grad_fn is not None}

    # A root that is itself a leaf receives its seed directly.
    grads = {}
    root_ops = []
    for t, g in zip(roots, seeds):
        if t.grad_fn is None:
            _deliver_to_leaf(t, g, capture)
        else:
            _add_into(grads, t.grad_fn, g)
            root_ops.append(t.grad_fn)

    order = topological_order(root_ops)
    profiler = op_module.active_profiler
    with no_grad():
        for node in reversed(order):
            grad = grads.pop(id(node), None)
            if grad is None:
                continue
            if node.released:
                raise AutogradError(
                    f"{node.name}: trying to backward through the graph a second time (its saved "
                    "tensors were freed by the first backward); pass retain_graph=True to the first "
                    "backward() if you need to call it twice")
            if grad._meta.shape != node.out_shape:
                raise AutogradError(f"{node.name}: received a gradient of shape {list(grad.shape)} for "
                                    f"an output of shape {list(node.out_shape)}")
            if capture is not None:
                if id(node) in capture_nodes:
                    capture[capture_nodes[id(node)]] = grad
            elif node.retained is not None:
                tensor = node.retained()
                if tensor is not None:
                    tensor.grad = grad.clone() if tensor.grad is None else tensor.grad + grad
            if profiler is None:
                input_grads = node.backward(grad)
            else:
                start = time.perf_counter()
                input_grads = node.backward(grad)
                profiler.record(type(node).__name__, "backward", time.perf_counter() - start, grad.device)
            del grad
            # Emptied as it is read, so a gradient reaches a leaf with no reference left here
            # but the local ``g``: then the leaf can adopt it (see _sole_owner).
            input_grads = list(input_grads)
            for i, edge in zip(range(len(input_grads)), node.next_edges):
                g, input_grads[i] = input_grads[i], None
                if edge is None or g is None:
                    continue
                if isinstance(edge, Op):
                    _add_into(grads, edge, g)
                else:
                    _deliver_to_leaf(edge, g, capture)
            del input_grads
            if not retain_graph:
                node.release()
    if capture is not None:
        return tuple(capture[id(t)] for t in inputs)
    return None


def _seed_gradients(tensors, grad_tensors):
    from ..tensor.creation import ones_like  # noqa: PLC0415

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
            g = g.detach()  # another reference to the caller's tensor: never adopted as a .grad
        seeds.append(g)
    return roots, seeds


def _add_into(grads: dict, node: Op, g) -> None:
    """Sum a contribution into the gradient waiting for ``node``."""
    key = id(node)
    current = grads.get(key)
    grads[key] = g if current is None else current + g


def _deliver_to_leaf(leaf, g, capture) -> None:
    """The book's AccumulateGrad: the first gradient is adopted when nobody else holds it,
    later ones are added in place."""
    if g._meta.shape != leaf._meta.shape:
        raise AutogradError(f"gradient of shape {list(g.shape)} for a leaf of shape {list(leaf.shape)}")
    if g._meta.dtype is not leaf._meta.dtype:
        g = g.to(leaf._meta.dtype)
    if capture is not None:
        key = id(leaf)
        if key in capture:
            capture[key] = g if capture[key] is None else capture[key] + g
        return
    if leaf.grad is None:
        leaf.grad = g.detach() if _sole_owner(g) else g.clone()  # clone() is contiguous
    else:
        leaf.grad.add_(g)


def _sole_owner(g) -> bool:
    """True when ``g`` is contiguous, not a view of anything, and referenced only by the
    engine's locals, so a leaf may keep it as its ``.grad`` without a copy."""
    # References here: the engine loop's local ``g``, the caller's argument, this frame's
    # argument and getrefcount's argument; any other holder (the same gradient sent to a
    # second input, a caller's ``gradient=``) makes one more. The storage is referenced
    # once per tensor object using it (plus getrefcount's argument).
    return (g.is_contiguous() and g.grad_fn is None and sys.getrefcount(g._storage) <= 2
            and sys.getrefcount(g) <= _EXCLUSIVE_REFS)


_EXCLUSIVE_REFS = 4
