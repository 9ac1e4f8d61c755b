"""Optimizer: holds parameter groups and per-parameter state (the book's ``Optimizer``).

The optimizer needs no knowledge of the model: it gets a flat list of
parameters (or of groups, each a dict with its own ``lr``, ``weight_decay``
...). ``zero_grad`` clears gradients before each backward (backward
accumulates); ``step`` updates every parameter in place under no_grad, so the
update never enters the graph.

``state_dict()`` refers to parameters by their position across groups, as
PyTorch does, so a checkpoint loads into a new optimizer built on a new model.
"""
from __future__ import annotations

import copy

from ..errors import DeviceError, DTypeError, ShapeError
from ..nn.utils import zero_grads
from ..tensors.tensor import Tensor


class Optimizer:
    def __init__(self, params, defaults: dict):
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        self.state: dict = {}  # Parameter -> dict (keyed by the parameter object)
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        group = dict(group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__} can only optimize tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"{type(self).__name__}: can't optimize a non-leaf tensor")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        group.setdefault("initial_lr", group.get("lr"))
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads(self._all_params(), set_to_none)

    def step(self) -> None:
        raise NotImplementedError

    # -- checkpoints ----------------------------------------------------------------------------
    def _all_params(self) -> list:
        return [p for g in self.param_groups for p in g["params"]]

    def state_dict(self) -> dict:
        index = {id(p): i for i, p in enumerate(self._all_params())}
        groups = []
        for g in self.param_groups:
            saved = {k: v for k, v in g.items() if k != "params"}
            saved["params"] = [index[id(p)] for p in g["params"]]
            groups.append(saved)
        state = {index[id(p)]: {k: (v.detach() if isinstance(v, Tensor) else v) for k, v in s.items()}
                 for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore state and hyper-parameters saved by ``state_dict`` (state tensors are
        copied to each parameter's device)."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ShapeError(f"{type(self).__name__}.load_state_dict: the checkpoint has {len(saved_groups)} "
                             f"parameter groups, this optimizer {len(self.param_groups)}")
        for i, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ShapeError(f"{type(self).__name__}.load_state_dict: group {i} has {len(saved['params'])} "
                                 f"parameters in the checkpoint, {len(group['params'])} here")
        params = self._all_params()
        new_state = {}
        for key, values in state_dict["state"].items():
            p = params[int(key)]
            restored = {}
            for name, value in values.items():
                if isinstance(value, Tensor):
                    if value.shape != p.shape and value.ndim > 0:
                        raise ShapeError(f"{type(self).__name__}.load_state_dict: state {name!r} of parameter "
                                         f"{key} has shape {list(value.shape)}, the parameter {list(p.shape)}")
                    value = value.to(device=p.device, dtype=p.dtype if value.is_floating_point() else None,
                                     copy=True)
                restored[name] = value
            new_state[p] = restored
        self.state = new_state
        for saved, group in zip(saved_groups, self.param_groups):
            for k, v in saved.items():
                if k != "params":
                    group[k] = copy.deepcopy(v)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"  group {i}: " + ", ".join(f"{k}={v}" for k, v in g.items() if k != "params")
                         + f", {len(g['params'])} tensors")
        return "\n".join(lines) + "\n)"


def flat_arrays(param, grad, *state):
    """1-D arrays over ``param``, its ``grad`` (copied to contiguous memory if it is not:
    it is only read) and each state tensor (None stays None). Writes to the param and
    state arrays go straight into the tensors."""
    if not param.is_contiguous():
        raise ShapeError(f"optimizer: parameter of shape {list(param.shape)} must be contiguous")
    arrays = [param._array.reshape(-1)]
    for t, written in [(grad, False)] + [(s, True) for s in state]:
        if t is None:
            arrays.append(None)
            continue
        if t.shape != param.shape:
            raise ShapeError(f"optimizer: a gradient or state of shape {list(t.shape)} does not match its "
                             f"parameter {list(param.shape)}")
        if t.dtype is not param.dtype:
            raise DTypeError(f"optimizer: {t.dtype} gradient or state for a {param.dtype} parameter")
        if t.device is not param.device:
            raise DeviceError(f"optimizer: gradient or state on {t.device} for a parameter on {param.device}")
        if written and not t.is_contiguous():
            raise ShapeError(f"optimizer: state of shape {list(t.shape)} must be contiguous")
        arrays.append(t.contiguous()._array.reshape(-1))
    return arrays
