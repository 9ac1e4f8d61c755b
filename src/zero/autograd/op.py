"""The op base class (the book's ``TensorOp``) and graph recording (its ``Apply``).

Every differentiable operation is a subclass with two methods:

    forward(*inputs, **params) -> Tensor      shape rule, output allocation, kernel call
    backward(grad) -> tuple of input grads    the local rule of the chain rule

``Op.apply`` makes one op object per call (the book's ``RunOp``), runs the
forward, and records the graph only when grad mode is on and some input
requires grad. Recording makes the op the output's ``grad_fn`` and keeps, per
input, an *edge* to the node that receives that input's gradient: the input's
own ``grad_fn`` (a non-leaf), or the input's ``AccumulateGrad`` node (a leaf,
whose ``.grad`` receives the gradient; the book's ``AccumulateGrad``). Ops keep
for backward only what they ask for with ``save_for_backward``, so an
intermediate that no backward needs is freed during the forward.

A backward rule returns new tensors (or the gradient it received, unchanged); it
never writes into the gradient it was given, which the engine may hand to
several consumers.
"""
from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import AutogradError, DeviceError, InPlaceError, describe, describe_all
from ..grad_mode import _state
from ..hooks import RemovableHandle, add_hook
from ..tensors.meta import Shape
from ..tensors.tensor import Tensor

if TYPE_CHECKING:
    from ..backends.device import Device
    from ..profiler import profile

Grads = tuple[Tensor | None, ...]  # what backward returns: per input, its gradient or None
TensorHook = Callable[[Tensor], Tensor | None]  # Tensor.register_hook's: the gradient in, a replacement or None out

# Set by zero.profiler.profile while a profile is running; None otherwise.
active_profiler: profile | None = None


class Op:
    __slots__ = ("next_edges", "needs_input_grad", "out_shape", "recording", "released",
                 "_saved", "_saved_versions", "retained", "__dict__", "__weakref__")

    next_edges: list[Op | None]   # per input: the node its gradient goes to, or None
    needs_input_grad: list[bool]  # per input: whether it requires grad
    out_shape: Shape              # the shape of the output (and of the gradient backward receives)
    recording: bool               # whether this call is part of the graph
    released: bool                # saved tensors freed by a backward without retain_graph
    _saved: tuple[Tensor | None, ...] | None
    _saved_versions: tuple[int, ...]
    retained: weakref.ref[Tensor] | None  # the output, when it asked to keep its .grad (retain_grad)
    # The output's gradient hooks (Tensor.register_hook), {handle id: hook}; in the instance's
    # __dict__ once a hook is registered, so the ops that have none pay nothing for it.
    tensor_hooks: dict[int, TensorHook] | None = None

    op_name = "op"  # how error messages name the op: the class name in snake case (LogicalAnd -> logical_and)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.op_name = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()

    # -- the two methods each op defines -------------------------------------------------------
    def forward(self, *args: Any, **params: Any) -> Any:
        raise NotImplementedError

    def backward(self, grad: Tensor) -> Grads:
        raise NotImplementedError

    # -- recording -------------------------------------------------------------------------------
    @classmethod
    def apply(cls, *args: Any, **params: Any) -> Any:
        """Run the op on ``args`` (tensors, Python scalars, other parameters) and record the
        graph when needed. Returns what ``forward`` returns.

        The book's ``Apply``: check the inputs, run forward, and -- when grad mode is on and
        an input requires grad -- make the op the output's ``grad_fn``, with an edge to each
        input's node. (Two extras keep to the loop below: a view whose base an in-place op has
        given a new history takes that history first, and a CPU scalar beside tensors of
        another device moves there, as in PyTorch.)"""
        device: Device | None = None
        needs: list[bool] = []          # per input: does it require grad?
        for a in args:
            if isinstance(a, Tensor):
                view_of = a._view_of
                if view_of is not None and view_of[2] != view_of[0]._history_stamp:
                    refresh_view(a)     # its base was rebased by an in-place op since
                if device is None:
                    device = a._meta.device
                elif a._meta.device is not device:
                    return cls.apply(*_on_one_device(cls, args), **params)
                needs.append(a._requires_grad)
            else:
                needs.append(False)

        op = cls.__new__(cls)
        op.recording = record = _state.enabled and True in needs
        op.needs_input_grad = needs
        op._saved = None
        op.released = False
        op.retained = None
        if active_profiler is None:
            result = op.forward(*args, **params)
        else:
            result = run_profiled(active_profiler, op.forward, cls.__name__, "forward", device, *args, **params)
        if record:
            op._record(args, result)
        return result

    def _record(self, args: tuple[Any, ...], result: Tensor | tuple[Tensor, ...]) -> None:
        """Make this op the grad_fn of its (floating-point) output, with an edge per input
        that requires grad to the node receiving that input's gradient."""
        out = result[0] if isinstance(result, tuple) else result
        if out._meta.dtype.is_floating_point:
            self.next_edges = [gradient_node(a) if needed else None for a, needed in zip(args, self.needs_input_grad)]
            self.out_shape = out._meta.shape
            out.grad_fn = self
            out._requires_grad = True

    # -- what backward may use ------------------------------------------------------------------
    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep these tensors (inputs or the output) for backward. A no-op when nothing is
        recorded. Saved tensors are aliases without graph, so saving the output makes no
        reference cycle, and their storage versions are noted to catch later in-place writes."""
        if not self.recording:
            return
        self._saved = tuple(t._alias() if t is not None else None for t in tensors)
        self._saved_versions = tuple(t._storage.version if t is not None else 0 for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Tensor, ...]:
        """What ``save_for_backward`` kept, in its order. An entry saved as None reads back as
        None, which the type leaves out (as PyTorch's ``ctx.saved_tensors`` does): a backward
        reads such an entry only under the condition that saved a tensor there."""
        if self.released:
            raise freed_graph_error(self)
        saved = self._saved or ()
        for t, version in zip(saved, self._saved_versions or ()):
            if t is not None and t._storage.version != version:
                raise InPlaceError(
                    f"one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.dtype.name}{list(t.shape)}], saved by {self.name}, is at version "
                    f"{t._storage.version}; expected version {version} instead. Work on a clone() of it, "
                    "or do the in-place operation before it is used")
        return saved  # type: ignore[return-value]  # None entries: see the docstring

    def release(self) -> None:
        """Free what the graph holds for this op (after a backward without retain_graph)."""
        self._saved = None
        self.released = True
        self.__dict__.clear()

    @property
    def name(self) -> str:
        """How the graph shows this op: ``MulBackward`` (PyTorch's ``grad_fn`` names)."""
        return type(self).__name__ + "Backward"

    def __repr__(self) -> str:
        return f"<{self.name}>"


class AccumulateGrad(Op):
    """The node of a leaf tensor that requires grad (the book's ``AccumulateGrad``): the
    gradient the engine delivers here is added into the leaf's ``.grad``.

    One per leaf, made when the leaf first takes part in a recorded op and cached on it.
    It refers to the leaf weakly (the leaf refers to it), so neither keeps the other alive
    in a cycle; a graph whose leaf is gone has nowhere to deliver, as nothing could read it."""

    post_accumulate_hooks: dict[int, Callable[[Tensor], None]] | None = None  # register_post_accumulate_grad_hook's

    def __init__(self, leaf: Tensor) -> None:
        self.leaf = weakref.ref(leaf)
        self.next_edges = []
        self.out_shape = leaf._meta.shape
        self.released = False
        self.retained = None
        self._saved = None

    def accumulate(self, grad: Tensor, adopt: bool) -> None:
        """Add ``grad`` into the leaf's ``.grad``. The first gradient becomes ``.grad``
        itself when ``adopt`` says nothing else holds it (no copy), else a copy."""
        leaf = self.leaf()
        if leaf is None:
            return
        if grad._meta.dtype is not leaf._meta.dtype:
            grad, adopt = grad.to(leaf._meta.dtype), True  # the cast is a new tensor
        if leaf.grad is None:
            leaf.grad = grad.detach() if adopt else grad.clone()  # clone() is contiguous
        else:
            leaf.grad.add_(grad)
        if self.post_accumulate_hooks:
            for hook in list(self.post_accumulate_hooks.values()):
                hook(leaf)

    def release(self) -> None:
        """Nothing to free: the node outlives each graph, as its leaf does."""

    @property
    def name(self) -> str:
        return "AccumulateGrad"


def is_cpu_scalar(t: Tensor) -> bool:
    """PyTorch's exception to "one device per op": a 0-dim CPU tensor acts as a scalar
    beside tensors of any device."""
    return t._meta.shape == () and t._meta.device.type == "cpu"


def _on_one_device(op: type[Op], args: tuple[Any, ...]) -> list[Any]:
    """``args`` with their CPU scalars (``is_cpu_scalar``) copied to the other tensors' device
    (a recorded copy, so their gradients come back to the CPU); DeviceError when the tensors
    are on several devices otherwise."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    devices = {t._meta.device for t in tensors if not is_cpu_scalar(t)}
    if len(devices) != 1:
        raise DeviceError(f"{op.__name__}: all tensors must be on one device, got {describe_all(tensors)}; "
                          "move them with .to(device) first")
    (device,) = devices
    return [a.to(device) if isinstance(a, Tensor) and a._meta.device is not device else a for a in args]


def run_profiled(profiler: profile, function: Callable[..., Any], name: str, phase: str, device: Device | None,
                 *args: Any, **params: Any) -> Any:
    """``function(*args, **params)``, timed by the running profiler (zero.profiler)."""
    started = profiler.begin(device)
    result = function(*args, **params)
    profiler.end(name, phase, started, device)
    return result


def gradient_node(t: Tensor) -> Op:
    """The node that receives ``t``'s gradient: its grad_fn, or (a leaf) its AccumulateGrad."""
    if t.grad_fn is not None:
        return t.grad_fn
    node = t._grad_accumulator
    if node is None:
        node = t._grad_accumulator = AccumulateGrad(t)
    return node


def register_tensor_hook(t: Tensor, hook: TensorHook) -> RemovableHandle:
    """Tensor.register_hook: ``hook(grad)`` runs when the engine has summed ``t``'s gradient
    at its node, before .grad, retain_grad or the node's backward see it."""
    if not t._requires_grad:
        raise AutogradError(f"register_hook: {describe(t)} does not require grad, so no gradient "
                            "will reach a hook on it")
    node = gradient_node(t)
    if node.tensor_hooks is None:
        node.tensor_hooks = {}
    return add_hook(node.tensor_hooks, hook)


def register_post_accumulate_hook(t: Tensor, hook: Callable[[Tensor], None]) -> RemovableHandle:
    """Tensor.register_post_accumulate_grad_hook: ``hook(t)`` runs after the engine has added
    this backward's gradient into the leaf ``t``'s .grad (data-parallel training starts a
    gradient's all-reduce there)."""
    if t.grad_fn is not None or not t._requires_grad:
        raise AutogradError(f"register_post_accumulate_grad_hook: only a leaf tensor that requires grad "
                            f"accumulates a gradient, got {describe(t)}")
    node = gradient_node(t)
    assert isinstance(node, AccumulateGrad)
    if node.post_accumulate_hooks is None:
        node.post_accumulate_hooks = {}
    return add_hook(node.post_accumulate_hooks, hook)


def refresh_view(t: Tensor) -> None:
    """A view whose base an in-place op rebased (through another view) takes the base's new
    history: the view steps replayed from the base (see ops/inplace.py)."""
    assert t._view_of is not None
    base, steps, _ = t._view_of
    previous, _state.enabled = _state.enabled, True  # the view's history, even when used under no_grad
    try:
        view = base
        for step, params in steps:
            view = step.apply(view, *params)
    finally:
        _state.enabled = previous
    t.grad_fn, t._requires_grad = view.grad_fn, view._requires_grad
    t._view_of = (base, steps, base._history_stamp)


def freed_graph_error(node: Op) -> AutogradError:
    """What backward through a graph freed by an earlier backward raises."""
    return AutogradError(
        f"{node.name}: trying to backward through the graph a second time (its saved tensors were "
        "freed by the first backward); pass retain_graph=True to the first backward() if you need "
        "to call it twice")
