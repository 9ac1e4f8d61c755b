"""Optimizer: parameter groups and per-parameter state (the book's ``Optimizer``), as PyTorch lays them out.

The optimizer needs no knowledge of the model: it gets a flat list of
parameters (or of ``(name, parameter)`` pairs, or of groups, each a dict with
its own ``lr``, ``weight_decay`` ...). ``zero_grad`` clears gradients before
each backward (backward accumulates); ``step`` updates every parameter that has
a gradient, in place and under no_grad, so the update never enters the graph.

One home for what every update rule shares: ``step`` (the closure, grad mode,
the walk over groups and parameters with a gradient), ``gradient`` (the sign
under ``maximize=True`` and L2 weight decay), ``state_for`` (the state created
the first time a parameter is seen), ``advance`` (the step counter). A subclass
writes only ``_update(p, group)``: its formula for one parameter -- or
``_update_group(params, group)``, the formula over a group's parameters at once
(AdamW: one kernel launch for all of them on a GPU).

``state_dict()`` is PyTorch's layout, so a checkpoint moves between Zero and
PyTorch::

    {"state": {0: {"step": tensor(3.), "exp_avg": ..., "exp_avg_sq": ...}, ...},
     "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), ..., "params": [0, 1, 2]}]}

Parameters are numbered by position across the groups, so the checkpoint loads
into a new optimizer built on a new model. ``step`` is a 0-d float32 tensor on
the CPU (float64 when that is the default dtype), as in PyTorch 2.x: reading it
never waits for a GPU. ``load_state_dict`` also takes older layouts -- Zero's
before this one kept ``step`` as a Python int and no ``maximize``/``foreach``
keys -- converting the step and filling missing hyper-parameters from the
optimizer's defaults, the rule PyTorch applies to its own old checkpoints.

``capturable=True`` (Adam, AdamW; issue 38: a step inside a CUDA graph) keeps ``step`` on
the parameter's device instead, counted there by the update's kernels, never read by the
host during ``step()`` (``device_step``); ``lr`` may then be a 0-d tensor on the device,
which the step reads there, so ``group["lr"].fill_(new)`` -- what a scheduler does to a
tensor lr -- reaches a replayed step. A checkpoint's groups say where its steps go on
loading, as in PyTorch: on the parameter's device for a capturable group, on the CPU
otherwise.
"""
from __future__ import annotations

import copy
import functools
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from .. import dtypes
from ..errors import CaptureError, DataError, DeviceError, DTypeError, ShapeError
from ..grad_mode import enable_grad, no_grad
from ..nn.utils import zero_grads
from ..ops.elementwise import add
from ..tensors.creation import tensor
from ..tensors.tensor import Tensor

# PyTorch's names for the hyper-parameters whose range each constructor checks ("Invalid learning rate: -1").
_LABELS = {"lr": "learning rate", "eps": "epsilon value"}


def check_non_negative(optimizer: str, **values) -> None:
    """ValueError, in PyTorch's words, for the first hyper-parameter below 0."""
    for name, value in values.items():
        if not value >= 0.0:  # (also catches nan)
            raise ValueError(f"{optimizer}: Invalid {_LABELS.get(name, name + ' value')}: {value}")


def check_lr(optimizer: str, lr, foreach, capturable: bool) -> None:
    """PyTorch's rules for an lr given as a tensor (what a captured step reads on the
    device): one element, and not with ``foreach=True`` unless ``capturable=True``."""
    if isinstance(lr, Tensor):
        if foreach and not capturable:
            raise ValueError(f"{optimizer}: a Tensor lr with foreach=True needs capturable=True")
        if lr.numel() != 1:
            raise ValueError(f"{optimizer}: a Tensor lr holds one number, got {lr.numel()} elements")


def check_betas(optimizer: str, betas) -> tuple:
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"{optimizer}: Invalid beta parameter at index {i}: {beta}")
    return tuple(float(b) for b in betas)


def execution_options(optimizer: str, **options) -> dict:
    """PyTorch's options that choose how a step runs, not what it computes (``foreach``,
    ``fused``, ``capturable``, ``differentiable``: each optimizer takes those PyTorch's takes).
    Zero accepts them (programs pass ``fused=True``) and keeps them in each group, as PyTorch's
    state_dict does; the result is the same whatever they say. ``differentiable=True`` (a step
    recorded in the graph) is the exception: Zero's updates never enter the graph."""
    if options.get("differentiable"):
        raise NotImplementedError(f"{optimizer}: differentiable=True is not supported: Zero's optimizer "
                                  "steps are never recorded in the autograd graph")
    return options


def _marks_step_called(step: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a subclass's ``step`` so that schedulers can tell it ran (PyTorch's order rule:
    ``scheduler.step()`` after ``optimizer.step()``)."""
    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        self._opt_called = True
        return step(self, *args, **kwargs)
    return wrapper


class Optimizer:
    state_names: tuple[str, ...] = ()  # per-parameter state tensors shaped like the parameter
    scalar_state_names: tuple[str, ...] = ()  # 0-d state kept like ``step`` (CPU, the scalar dtype)
    counts_on_device = False  # whether capturable=True keeps ``step`` on the device (Adam, AdamW); others ignore it

    def __init__(self, params, defaults: dict):
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(f"{name}: params should be an iterable of tensors or dicts, got a Tensor "
                            "(pass [tensor] or model.parameters())")
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)  # Parameter -> dict, keyed by the parameter object
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError(f"{name}: optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in vars(cls):  # (replacing the method is the point: mypy flags any assignment to one)
            cls.step = _marks_step_called(vars(cls)["step"])  # type: ignore[method-assign]

    def add_param_group(self, param_group: dict) -> None:
        """Add a group (a dict with "params" and any hyper-parameters that differ from the
        defaults); the dict itself becomes the group, as in PyTorch."""
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}: param_group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(f"{name}: parameters must be in an ordered collection (a list), not a set: "
                            "a set's order changes between runs")
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]  # model.named_parameters()
        if names and len(names) != len(params):
            raise ValueError(f"{name}: all parameters should be with or without names; some names are missing")
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{name} can only optimize tensors, got {type(p).__name__}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError(f"{name}: can't optimize a non-leaf tensor")
        param_group["params"] = params
        if names:
            param_group["param_names"] = names
        for key, value in self.defaults.items():
            param_group.setdefault(key, value)
        for group in self.param_groups:
            if ("param_names" in group) != ("param_names" in param_group):
                raise ValueError(f"{name}: all parameter groups should be with names or all without")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads(self._all_params(), set_to_none)

    # -- the update ------------------------------------------------------------------------------
    def step(self, closure=None):
        """Update every parameter that has a gradient. ``closure`` (optional) re-evaluates the
        model and returns the loss; it runs with grad enabled, before the update."""
        self._opt_called = True
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                with_grad = [p for p in group["params"] if p.grad is not None]
                if with_grad:
                    self._update_group(with_grad, group)
        return loss

    def _update(self, p: Tensor, group: dict) -> None:
        """Apply this optimizer's rule to parameter ``p`` (which has a gradient) of ``group``."""
        raise NotImplementedError

    def _update_group(self, params: list, group: dict) -> None:
        """Apply the rule to each of ``params`` (those of ``group`` with a gradient). A rule
        with a kernel over many parameters at once (AdamW on a GPU) overrides this."""
        for p in params:
            self._update(p, group)

    @staticmethod
    def gradient(p: Tensor, group: dict, weight_decay: bool = True) -> Tensor:
        """The gradient the rule reads: −∇ under ``maximize=True``, plus ``weight_decay``·p
        (L2 decay, folded into the gradient) unless ``weight_decay=False``. A new tensor
        whenever it differs from ``p.grad``, which is never written."""
        grad: Tensor = p.grad  # type: ignore[assignment]  # (step() passes only parameters with one)
        if group.get("maximize"):
            grad = -grad
        decay = group.get("weight_decay", 0)
        if weight_decay and decay != 0:
            grad = add(grad, p, alpha=decay)
        return grad

    def adam_family_start(self, p: Tensor, group: dict, on_device: bool = False) -> tuple[Tensor, dict, Any]:
        """What Adam, NAdam and RAdam do first: the gradient (with L2 decay, or the decoupled
        decay θ ← θ (1 − lr λ) applied under ``decoupled_weight_decay``), the state, the step
        count -- a float, or with ``on_device`` (capturable) the count itself, a 0-d tensor on
        p's device advanced there."""
        decoupled = group.get("decoupled_weight_decay", False)
        grad = self.gradient(p, group, weight_decay=not decoupled)
        state = self.state_for(p, group)
        t: Any
        if on_device:
            t = self.device_step(state, p).add_(1)
        else:
            t = self.advance(state)
        if decoupled and group["weight_decay"] != 0:
            p.mul_(1 - group["lr"] * group["weight_decay"])
        return grad, state, t

    @staticmethod
    def update_moments(state: dict, grad: Tensor, beta1: float, beta2: float) -> tuple[Tensor, Tensor]:
        """m ← β1 m + (1 − β1) g (rounded as PyTorch's lerp_), v ← β2 v + (1 − β2) g²; returns (m, v)."""
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.add_((grad - m) * (1 - beta1))
        v.mul_(beta2).add_(grad * (1 - beta2) * grad)
        return m, v

    def state_for(self, p: Tensor, group: dict) -> dict:
        """``p``'s state, made by ``_init_state`` the first time ``p`` is updated."""
        state = self.state[p]
        if not state:
            self.refuse_new_state_in_a_capture(p)
            state.update(self._init_state(p, group))
        return state

    def refuse_new_state_in_a_capture(self, p: Tensor) -> None:
        """A parameter's state is made at its first step; made inside a CUDA graph capture, its
        zeros would be written again by every replay: a clear error instead of silently wrong steps."""
        if p.device._capture is not None:
            raise CaptureError(f"{type(self).__name__}: a parameter's first step (which makes its state) inside a "
                               "CUDA graph capture: every replay would start the state afresh; take one step "
                               "before capturing (a warm-up)")

    def _init_state(self, p: Tensor, group: dict) -> dict:
        raise NotImplementedError

    @staticmethod
    def new_step(device=None) -> Tensor:
        """A step counter as PyTorch keeps it: 0-d, float32 (float64 by default dtype), on the
        CPU -- or on ``device``, the parameter's, under ``capturable=True``."""
        return tensor(0.0, dtype=_step_dtype(), device=device)

    def init_step(self, p: Tensor, group: dict) -> Tensor:
        """A new parameter's counter: on p's device in a capturable group, on the CPU otherwise."""
        return self.new_step(p.device if self.counts_on_device and group.get("capturable") else None)

    def device_step(self, state: dict, p: Tensor) -> Tensor:
        """``state["step"]`` where a capturable step reads it, on p's device, in the counter
        dtype; a count from elsewhere (a group made capturable after some steps) moves there
        once, before any capture."""
        step = state["step"]
        wanted = _step_dtype()
        if step.device != p.device or step.dtype is not wanted:
            step = state["step"] = step.to(device=p.device, dtype=wanted)
        return step

    @staticmethod
    def advance(state: dict) -> float:
        """Count one more step in ``state["step"]`` and return the count."""
        step = state["step"]
        counter = step._array  # a 0-d CPU tensor outside any graph: written directly, as add_(1)
        counter += 1           # would, without an op's checks (each step, for each parameter)
        step._bump_version()
        return float(counter)

    # -- checkpoints ----------------------------------------------------------------------------
    def _all_params(self) -> list:
        return [p for g in self.param_groups for p in g["params"]]

    def state_dict(self) -> dict:
        """``{"state": {index: {name: value}}, "param_groups": [{hyper-parameters, "params": [index]}]}``.
        The state's tensors are the optimizer's own (save or copy them before the next step)."""
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): dict(v) for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore state and hyper-parameters saved by ``state_dict`` -- Zero's or PyTorch's
        (with its tensors as Zero tensors). State tensors are copied to each parameter's device
        and, when floating point, to its dtype; the step is a CPU tensor, or one on the
        parameter's device where the checkpoint's group is capturable (PyTorch's rule: the
        checkpoint's groups replace the optimizer's, ``capturable`` with them)."""
        name = type(self).__name__
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict: loaded state dict has a different number of parameter "
                             f"groups: {len(saved_groups)} in the checkpoint, {len(self.param_groups)} here")
        for i, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(f"{name}.load_state_dict: loaded state dict contains a parameter group that "
                                 f"doesn't match the size of optimizer's group: group {i} has "
                                 f"{len(saved['params'])} parameters in the checkpoint, {len(group['params'])} here")
        by_index = {int(i): p for saved, group in zip(saved_groups, self.param_groups)
                    for i, p in zip(saved["params"], group["params"])}
        capturable = {int(i) for saved in saved_groups if self.counts_on_device and saved.get("capturable")
                      for i in saved["params"]}
        new_state: defaultdict = defaultdict(dict)
        for key, values in state_dict["state"].items():
            p = by_index.get(int(key)) if isinstance(key, (int, str)) and str(key).isdigit() else None
            if p is None:
                new_state[key] = values  # state not tied to a parameter: kept as it is, as PyTorch does
                continue
            on_device = int(key) in capturable
            new_state[p] = {k: self._restore_state_value(p, key, k, v, on_device) for k, v in values.items()}
        for saved, group in zip(saved_groups, self.param_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            for key, value in self.defaults.items():  # older checkpoints lack the newer keys
                saved.setdefault(key, value)
        self.state = new_state
        self.param_groups = saved_groups

    def _restore_state_value(self, p: Tensor, index, key: str, value, step_on_device: bool = False):
        if key == "step" or key in self.scalar_state_names:
            step = self.new_step(p.device if step_on_device and key == "step" else None)
            step.fill_(float(value))  # an int (Zero's layout before 0.1) or a 0-d tensor (PyTorch's)
            return step
        if isinstance(value, Tensor):
            if key in self.state_names and value.shape != p.shape:
                raise DataError(f"{type(self).__name__}.load_state_dict: state {key!r} of parameter {index} "
                                 f"has shape {list(value.shape)}, the parameter {list(p.shape)}")
            return value.to(device=p.device, dtype=p.dtype if p.is_floating_point() else None, copy=True)
        if isinstance(value, dict):
            return {k: self._restore_state_value(p, index, k, v, step_on_device) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._restore_state_value(p, index, "", v, step_on_device) for v in value)
        return value

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {v}" for k, v in sorted(g.items()) if k not in ("params", "param_names"))
        return "\n".join(lines) + "\n)"


def _step_dtype():
    """The counters' dtype, PyTorch's: float32, or float64 when that is the default dtype."""
    return dtypes.float64 if dtypes.get_default_dtype() is dtypes.float64 else dtypes.float32


def flat_arrays(param, grad, *state):
    """1-D arrays over ``param``, its ``grad`` (copied to contiguous memory if it is not:
    it is only read) and each state tensor (None stays None), for the fused kernels.
    Writes to the param and state arrays go straight into the tensors."""
    meta = param._meta
    if not meta.contiguous:
        raise ShapeError(f"optimizer: parameter of shape {list(meta.shape)} must be contiguous")
    arrays = [param._array.reshape(-1)]
    for index, t in enumerate((grad,) + state):
        if t is None:
            arrays.append(None)
            continue
        other = t._meta
        if other.shape != meta.shape:
            raise ShapeError(f"optimizer: a gradient or state of shape {list(other.shape)} does not match its "
                             f"parameter {list(meta.shape)}")
        if other.dtype is not meta.dtype:
            raise DTypeError(f"optimizer: {other.dtype} gradient or state for a {meta.dtype} parameter")
        if other.device is not meta.device:
            raise DeviceError(f"optimizer: gradient or state on {other.device} for a parameter on {meta.device}")
        if not other.contiguous:
            if index:   # a state tensor: written, so its own memory must be the flat array
                raise ShapeError(f"optimizer: state of shape {list(other.shape)} must be contiguous")
            t = t.contiguous()
        arrays.append(t._array.reshape(-1))
    return arrays
