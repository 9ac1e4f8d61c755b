"""The op base class (the book's ``TensorOp``) and graph recording (its ``Apply``).

Every differentiable operation is a subclass with two methods:

    forward(*inputs, **params) -> Tensor      shape rule, output allocation, kernel call
    backward(grad) -> tuple of input grads    the local rule of the chain rule

``Op.apply`` makes one op object per call (the book's ``RunOp``), runs the
forward, and records the graph only when grad mode is on and some input
requires grad. Recording makes the op the output's ``grad_fn`` and keeps, per
input, an *edge*: the input's own ``grad_fn`` (a non-leaf) or the input tensor
itself (a leaf, whose ``.grad`` receives the gradient). Ops keep for backward
only what they ask for with ``save_for_backward``, so an intermediate that no
backward needs is freed during the forward.
"""
from __future__ import annotations

import time

from ..errors import AutogradError, DeviceError, InPlaceError, describe_all
from .grad_mode import _state

# Set by zero.profiler.profile while a profile is running; None otherwise.
active_profiler = None


class Op:
    __slots__ = ("next_edges", "needs_input_grad", "out_shape", "recording", "released",
                 "_saved", "_saved_versions", "retained", "__dict__", "__weakref__")

    # -- the two methods each op defines -------------------------------------------------------
    def forward(self, *args, **params):
        raise NotImplementedError

    def backward(self, grad):
        raise NotImplementedError

    # -- recording -------------------------------------------------------------------------------
    @classmethod
    def apply(cls, *args, **params):
        """Run the op on ``args`` (tensors, Python scalars, other parameters) and record the
        graph when needed. Returns what ``forward`` returns."""
        op = cls.__new__(cls)
        device = None
        record = False
        needs = []
        for a in args:
            if isinstance(a, _tensor_class()):
                if device is None:
                    device = a._meta.device
                elif a._meta.device is not device:
                    tensors = [t for t in args if isinstance(t, _tensor_class())]
                    raise DeviceError(f"{cls.__name__}: all tensors must be on one device, got "
                                      f"{describe_all(tensors)}; move them with .to(device) first")
                needs.append(a._requires_grad)
                record = record or a._requires_grad
            else:
                needs.append(False)
        record = record and _state.enabled
        op.recording = record
        op.needs_input_grad = needs
        op._saved = None
        op.released = False
        op.retained = None

        profiler = active_profiler
        if profiler is None:
            result = op.forward(*args, **params)
        else:
            start = time.perf_counter()
            result = op.forward(*args, **params)
            profiler.record(cls.__name__, "forward", time.perf_counter() - start, device)

        if record:
            out = result[0] if isinstance(result, tuple) else result
            if out._meta.dtype.is_floating_point:
                op.next_edges = [
                    (a.grad_fn if a.grad_fn is not None else a) if needed else None
                    for a, needed in zip(args, needs)
                ]
                op.out_shape = out._meta.shape
                out.grad_fn = op
                out._requires_grad = True
        return result

    # -- what backward may use ------------------------------------------------------------------
    def save_for_backward(self, *tensors) -> None:
        """Keep these tensors (inputs or the output) for backward. A no-op when nothing is
        recorded. Saved tensors are aliases without graph, so saving the output makes no
        reference cycle, and their storage versions are noted to catch later in-place writes."""
        if not self.recording:
            return
        self._saved = tuple(t._alias() if t is not None else None for t in tensors)
        self._saved_versions = tuple(t._storage.version if t is not None else 0 for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        if self.released:
            raise AutogradError(
                f"{self.name}: trying to backward through the graph a second time, but its saved "
                "tensors were freed after the first backward; pass retain_graph=True to the first "
                "backward() if you need to call it twice")
        saved = self._saved or ()
        for t, version in zip(saved, self._saved_versions or ()):
            if t is not None and t._storage.version != version:
                raise InPlaceError(
                    f"{self.name}: a tensor it saved for backward ({t.dtype.name}{list(t.shape)}) "
                    f"was modified in place after it was saved (version {version}, now "
                    f"{t._storage.version}); make a clone() before modifying it")
        return saved

    def release(self) -> None:
        """Free what the graph holds for this op (after a backward without retain_graph)."""
        self._saved = None
        self.released = True
        self.__dict__.clear()

    @property
    def name(self) -> str:
        return type(self).__name__ + "Backward"

    def __repr__(self) -> str:
        return f"<{self.name}>"


_TENSOR = []


def _tensor_class():
    """Tensor, imported on first use (the tensor module imports this one)."""
    if not _TENSOR:
        from ..tensor.tensor import Tensor  # noqa: PLC0415

        _TENSOR.append(Tensor)
    return _TENSOR[0]
