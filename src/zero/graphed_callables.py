"""``zero.cuda.make_graphed_callables``: a module or function whose forward and backward are CUDA graphs.

Where a whole step cannot be one graph (the loss reads a value on the host, the optimizer
is not capturable), the part of the network that can is graphed alone and used as before,
autograd and all (PyTorch's "partial-network capture"):

    block = zero.cuda.make_graphed_callables(block, (zero.randn(B, T, C, device="cuda",
                                                                 requires_grad=True),))
    for x, y in batches:
        loss = F.cross_entropy(head(block(embed(x))), y)   # block's forward: one replay
        loss.backward()                                     # block's backward: one replay
        optimizer.step()

``make_graphed_callables(callables, sample_args)`` runs each callable ``num_warmup_iters``
times eagerly, forward and backward (every kernel compiled, every table built), then
captures two graphs per callable into one memory pool: the FORWARD from the sample
arguments (the static inputs) to the outputs (the static outputs), and the BACKWARD from
gradients of those outputs (static grad-outputs) to the gradients of the inputs that
require grad and of a module's parameters. With several callables the forwards are captured
in order, then the backwards in reverse, the order a training step runs them, so they can
share the pool.

A call of the graphed callable is one autograd node: it copies the call's tensors into the
static inputs (unless they are those very tensors), replays the forward and returns the
static outputs -- detached, the same memory each call: a later call overwrites them. The
backward copies the incoming gradients into the static grad-outputs (zeros for an output no
gradient reached), replays the backward graph and hands on the static gradients: the
parameters' ``.grad`` accumulate them as eager's would. A module keeps its identity; its
``forward`` is replaced, graphed in the training mode it was captured in, the original in
the other mode.

Zero's autograd keeps one node per output tensor, so a call is a node (``GraphedCall``,
whose output is a 0-d anchor) and each output that requires grad is a node after it
(``GraphedOutput``): the engine runs every output's node before the call's, so the backward
graph is replayed once, with all the gradients in place.

Rules, as PyTorch's: ``sample_args`` hold tensors only (inside tuples, lists, dicts); their
``requires_grad`` must be what the real inputs will have; a module has no hooks registered
and no buffer that requires grad; an input no output depends on is refused unless
``allow_unused_input=True``; autocast with its weight cache is refused (``cache_enabled=False``
works). Calls pass the arguments as the sample arguments were passed, same shapes and
dtypes, positional only. No double backward (PyTorch's neither). Zero refuses three things
PyTorch lets through silently: a sample argument that is not on the GPU (its work would not
be captured), a call whose tensors differ in shape or dtype from the sample's (copied into
the static input, they would broadcast or be cast), and the backward of a call after the
callable was called again (the graph's memory holds the latest call's activations only, so
that backward would be wrong).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .amp.autocast import is_autocast_cache_enabled, is_autocast_enabled
from .autograd import grad as autograd_grad
from .autograd.op import Grads, Op
from .backends.device import Device
from .backends.graph_capture import GraphPool
from .cuda_graphs import CUDAGraph, graph, graph_pool_handle
from .errors import AutogradError
from .grad_mode import no_grad
from .nn.module import Module
from .tensors.creation import empty_like, zeros, zeros_like
from .tensors.tensor import Tensor

__all__ = ["make_graphed_callables"]

_NOT_TENSORS = ("make_graphed_callables: sample_args may hold tensors only (in tuples, lists or dicts); "
                "pass anything else to the callable another way")


# -- arguments and outputs as flat lists of tensors (PyTorch's pytree, for tuples, lists, dicts) ----
def _flatten(value: Any) -> tuple[list[Any], Any]:
    """The leaves of ``value`` in order, and its structure (for ``_unflatten``)."""
    if isinstance(value, (tuple, list)):
        leaves, specs = [], []
        for item in value:
            item_leaves, spec = _flatten(item)
            leaves += item_leaves
            specs.append((len(item_leaves), spec))
        return leaves, (type(value), specs)
    if isinstance(value, dict):
        leaves, spec = _flatten(list(value.values()))
        return leaves, (dict, (list(value), spec))
    return [value], None


def _unflatten(leaves: Sequence[Any], spec: Any) -> Any:
    if spec is None:
        return leaves[0]
    kind, parts = spec
    if kind is dict:
        keys, values_spec = parts
        return dict(zip(keys, _unflatten(leaves, values_spec)))
    items, start = [], 0
    for count, item_spec in parts:
        items.append(_unflatten(leaves[start:start + count], item_spec))
        start += count
    return kind(items) if kind in (tuple, list) else kind(*items)   # (a namedtuple takes fields)


# -- the autograd nodes ---------------------------------------------------------------------------
class _Graphed:
    """One graphed callable: its two graphs and the static tensors they read and write."""

    def __init__(self, name: str, static_inputs: list[Tensor], user_count: int, forward_graph: CUDAGraph,
                 static_outputs: list[Tensor]) -> None:
        self.name = name
        self.static_inputs = static_inputs            # the user's tensors, then the module's parameters
        self.user_count = user_count
        self.forward_graph = forward_graph
        self.static_outputs = static_outputs          # detached: the memory every call returns
        self.backward_graph: CUDAGraph | None = None
        self.static_grad_outputs: list[Tensor | None] = [None] * len(static_outputs)
        self.static_grad_inputs: list[Tensor | None] = [None] * len(static_inputs)
        self.received: set[int] = set()               # outputs whose gradient this backward pass delivered
        self.replays = 0                              # forward replays so far: which call the activations are
        self.zero = zeros((), device=Device("cuda"))   # the anchor's memory, and its (zero) gradient

    def run_forward(self, inputs: Sequence[Tensor]) -> None:
        with no_grad():
            for static, given in zip(self.static_inputs[:self.user_count], inputs):
                if given.data_ptr() != static.data_ptr():
                    static.copy_(given)
        self.received.clear()
        self.forward_graph.replay()
        self.replays += 1

    def check_latest(self, replay: int) -> None:
        """Refuse the backward of a call whose activations a later call has overwritten."""
        if replay != self.replays:
            self.received.clear()
            raise AutogradError(
                f"graphed {self.name}: called again before the backward of an earlier call; the graph's memory "
                "holds the activations of its latest call only (PyTorch's would give wrong gradients here). "
                "Call it once per backward, or graph each use as a callable of its own")

    def receive(self, index: int, grad: Tensor) -> None:
        """Output ``index``'s gradient, into its static grad-output."""
        static = self.static_grad_outputs[index]
        if static is not None and grad.data_ptr() != static.data_ptr():
            static.copy_(grad)
        self.received.add(index)

    def run_backward(self) -> list[Tensor | None]:
        for index, static in enumerate(self.static_grad_outputs):
            if static is not None and index not in self.received:
                static.zero_()   # no gradient reached this output: PyTorch's materialised zeros
        self.received.clear()
        if self.backward_graph is not None:
            self.backward_graph.replay()
        return [g.detach() if g is not None else None for g in self.static_grad_inputs]


class GraphedCall(Op):
    """A call of a graphed callable (``GraphedCallBackward``): the forward graph replayed; its
    output is a 0-d anchor that the call's outputs hang on (``GraphedOutput``)."""

    def forward(self, graphed: _Graphed, *inputs: Tensor) -> Tensor:
        graphed.run_forward(inputs)
        self.graphed, self.replay = graphed, graphed.replays
        return graphed.zero._alias()

    def backward(self, grad: Tensor) -> Grads:
        self.graphed.check_latest(self.replay)
        return (None, *self.graphed.run_backward())


class GraphedOutput(Op):
    """One output of a graphed call that requires grad: its gradient goes into the static
    grad-output; the call's node, after every output's, replays the backward graph."""

    def forward(self, anchor: Tensor, graphed: _Graphed, index: int) -> Tensor:
        self.graphed, self.index, self.replay = graphed, index, graphed.replays
        return graphed.static_outputs[index].detach()

    def backward(self, grad: Tensor) -> Grads:
        self.graphed.check_latest(self.replay)
        self.graphed.receive(self.index, grad)
        return (self.graphed.zero, None, None)


def _graphed_function(graphed: _Graphed, parameters: tuple[Tensor, ...], output_spec: Any,
                      name: str) -> Callable[..., Any]:
    samples = graphed.static_inputs[:graphed.user_count]

    def graphed_function(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"graphed {name}: keyword arguments are not supported; pass the arguments "
                            "positionally, as in sample_args")
        flat, _ = _flatten(args)
        _check_call(name, flat, samples)
        anchor = GraphedCall.apply(graphed, *flat, *parameters)
        outputs = [GraphedOutput.apply(anchor, graphed, i) if grad_out is not None else out.detach()
                   for i, (out, grad_out) in enumerate(zip(graphed.static_outputs, graphed.static_grad_outputs))]
        return _unflatten(outputs, output_spec)

    graphed_function.__name__ = graphed_function.__qualname__ = f"graphed_{name}"
    return graphed_function


def _check_call(name: str, flat: list[Any], samples: list[Tensor]) -> None:
    if len(flat) != len(samples):
        raise TypeError(f"graphed {name}: called with {len(flat)} arguments (tensors inside tuples, lists and dicts "
                        f"counted one by one), but sample_args had {len(samples)}; pass the arguments in the same "
                        "order and format as sample_args")
    for i, (given, sample) in enumerate(zip(flat, samples)):
        if not isinstance(given, Tensor):
            raise TypeError(f"graphed {name}: argument {i} is {type(given).__name__}, not a tensor")
        if given.shape != sample.shape or given.dtype is not sample.dtype or given.device != sample.device:
            raise ValueError(f"graphed {name}: argument {i} is {given.dtype.name}{list(given.shape)} on "
                             f"{given.device}, but the graph was captured for {sample.dtype.name}"
                             f"{list(sample.shape)} on {sample.device}; copy it into a tensor of that shape")


def _graphed_forward(module: Module, training: bool, graphed: Callable[..., Any],
                     original: Callable[..., Any]) -> Callable[..., Any]:
    def forward(*args: Any, **kwargs: Any) -> Any:
        return graphed(*args, **kwargs) if module.training == training else original(*args, **kwargs)
    return forward


# -- make_graphed_callables -------------------------------------------------------------------------
def make_graphed_callables(callables: Any, sample_args: tuple, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool: GraphPool | None = None) -> Any:
    """Graphed versions of ``callables`` (a module or function, or a tuple of them, with
    ``sample_args`` a tuple of tensors, or a tuple of such tuples): see the module docstring."""
    if is_autocast_enabled() and is_autocast_cache_enabled():
        raise RuntimeError("make_graphed_callables under autocast with its weight cache on: the cached casts "
                           "would outlive the capture; use zero.autocast(..., cache_enabled=False)")
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    if not isinstance(sample_args, tuple) or len(sample_args) != len(callables):
        raise TypeError(f"make_graphed_callables: sample_args must be a tuple of {len(callables)} tuples of "
                        f"tensors, one per callable, got {type(sample_args).__name__}")
    if num_warmup_iters < 0:
        raise ValueError(f"make_graphed_callables: num_warmup_iters must be >= 0, got {num_warmup_iters}")

    prepared = [_prepare(c, args) for c, args in zip(callables, sample_args)]
    for c, (args, inputs, _) in zip(callables, prepared):
        _warm_up(c, args, inputs, num_warmup_iters, allow_unused_input)

    pool = graph_pool_handle() if pool is None else pool
    calls = []
    for c, (args, inputs, user_count) in zip(callables, prepared):   # forwards, in order
        forward_graph = CUDAGraph()
        with graph(forward_graph, pool=pool):
            result = c(*args)
        outputs, spec = _flatten(result)
        if not all(isinstance(o, Tensor) for o in outputs):
            forward_graph.reset()
            raise TypeError(f"make_graphed_callables: {_name(c)} returned "
                            f"{', '.join(sorted({type(o).__name__ for o in outputs}))}; a graphed callable "
                            "must return tensors (inside tuples, lists or dicts)")
        graphed = _Graphed(_name(c), inputs, user_count, forward_graph, [o.detach() for o in outputs])
        calls.append((graphed, outputs, spec))
    for c, (graphed, outputs, _) in reversed(list(zip(callables, calls))):   # backwards, in reverse
        _capture_backward(_name(c), graphed, outputs, pool, allow_unused_input)

    results: list[Any] = []
    for c, (graphed, _, spec) in zip(callables, calls):
        parameters = tuple(graphed.static_inputs[graphed.user_count:])
        function = _graphed_function(graphed, parameters, spec, _name(c))
        if isinstance(c, Module):
            c.forward = _graphed_forward(c, c.training, function, c.forward)  # type: ignore[method-assign]
            results.append(c)
        else:
            results.append(function)
    return results[0] if just_one else tuple(results)


def _name(c: Any) -> str:
    return type(c).__name__ if isinstance(c, Module) else getattr(c, "__name__", type(c).__name__)


def _prepare(c: Any, args: Any) -> tuple[Any, list[Tensor], int]:
    """Check one callable and its sample arguments; the arguments to capture with (the
    samples' memory, as leaves of their own), the graph's inputs (those, then the module's
    parameters) and how many of them are the user's."""
    if not callable(c):
        raise TypeError(f"make_graphed_callables: expected a module or function, got {type(c).__name__}")
    if isinstance(c, Module):
        if c._forward_hooks or c._forward_pre_hooks or getattr(c, "_backward_hooks", None):
            raise AssertionError(f"make_graphed_callables: {_name(c)} has hooks registered, which a graph would "
                                 "not run; register them after graphing it")
        if any(b.requires_grad for b in c.buffers()):
            raise AssertionError(f"make_graphed_callables: a buffer of {_name(c)} requires grad; only parameters "
                                 "may be trained through a graph (set the buffer's requires_grad=False)")
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"make_graphed_callables: the sample_args of {_name(c)} must be a tuple of tensors, "
                        f"got {type(args).__name__}")
    flat, spec = _flatten(tuple(args))
    if not all(isinstance(a, Tensor) for a in flat):
        raise AssertionError(_NOT_TENSORS)
    for a in flat:
        if a.device.type != "cuda":
            raise ValueError(f"make_graphed_callables: the sample_args of {_name(c)} must be CUDA tensors, got one "
                             f"on {a.device}; work on another device would not be captured")
    # Leaves of their own on the samples' memory: the backward graph stops at them, even when a
    # sample was computed by another op; a call passing the sample itself needs no copy.
    static = [a.detach().requires_grad_(a.requires_grad) for a in flat]
    parameters = list(c.parameters()) if isinstance(c, Module) else []
    return _unflatten(static, spec), static + parameters, len(static)


def _differentiable(outputs: list[Any], inputs: list[Tensor]) -> tuple[list[Tensor], list[Tensor]]:
    return ([o for o in outputs if isinstance(o, Tensor) and o.requires_grad],
            [i for i in inputs if i.requires_grad])


def _gradients(c_name: str, outputs: list[Tensor], inputs: list[Tensor], grad_outputs: list[Tensor | None],
               all_inputs: list[Tensor], allow_unused_input: bool) -> tuple[Tensor | None, ...]:
    grads = autograd_grad(outputs, inputs, grad_outputs=grad_outputs, allow_unused=True)
    if not allow_unused_input and any(g is None for g in grads):
        unused = inputs[next(i for i, g in enumerate(grads) if g is None)]
        index = next(i for i, t in enumerate(all_inputs) if t is unused)
        raise AutogradError(f"make_graphed_callables: {_describe_input(index, len(all_inputs))} of {c_name} was not "
                            "used to compute its outputs (its gradient would always be zero); pass "
                            "allow_unused_input=True if this is intended")
    return grads


def _describe_input(index: int, count: int) -> str:
    return f"input {index} (of {count}: the sample arguments, then the module's parameters)"


def _warm_up(c: Any, args: Any, inputs: list[Tensor], iterations: int, allow_unused_input: bool) -> None:
    """Eager forwards and backwards: what runs once (compiling, building tables) runs before the capture."""
    for _ in range(iterations):
        outputs, _ = _flatten(c(*args))
        needing, wrt = _differentiable(outputs, inputs)
        if needing:
            _gradients(_name(c), needing, wrt, [zeros_like(o) for o in needing], inputs, allow_unused_input)


def _capture_backward(name: str, graphed: _Graphed, outputs: list[Tensor], pool: GraphPool,
                      allow_unused_input: bool) -> None:
    """The backward graph: from gradients of the outputs that require grad (static grad-outputs,
    made outside the graph) to the gradients of the inputs that require grad."""
    needing, wrt = _differentiable(outputs, graphed.static_inputs)
    if not needing:
        return
    graphed.static_grad_outputs = [empty_like(o) if o.requires_grad else None for o in outputs]
    backward_graph = CUDAGraph()
    with graph(backward_graph, pool=pool):
        grads = _gradients(name, needing, wrt, [g for g in graphed.static_grad_outputs if g is not None],
                           graphed.static_inputs, allow_unused_input)
    graphed.backward_graph = backward_graph
    found = dict(zip(map(id, wrt), grads))
    graphed.static_grad_inputs = [found.get(id(t)) for t in graphed.static_inputs]
