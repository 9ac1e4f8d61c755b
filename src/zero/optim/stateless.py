"""``swap_in_optimizer_params_and_state``, PyTorch's: run an optimizer on other parameters and state.

    with swap_in_optimizer_params_and_state(optimizer, dict(model_copy.named_parameters()), saved_state):
        optimizer.step()        # updates model_copy's tensors and the tensors of saved_state

Inside the block the optimizer's groups hold the given parameters (in the order of the
optimizer's own, group by group) and the hyper-parameters of ``swapin_optim_state`` (an
``optimizer.state_dict()``-shaped dict); its state is that dict's ``"state"``, keyed by the
given parameters. The per-parameter dicts are shallow copies: in-place updates of their
tensors reach the caller's dict, anything assigned to them does not. On leaving, the
optimizer's groups and state are restored as they were. The checks (each a RuntimeError,
as PyTorch's): the optimizer has state already, the dict has a ``"state"`` keyed by packed
parameter numbers and ``"param_groups"`` matching the optimizer's groups in number, sizes
and keys, and no state for a parameter no group names.
"""
from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from ..tensors.tensor import Tensor

_NAME = "swap_in_optimizer_params_and_state"


def _checked_state(state: Any) -> dict:
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter "
                           f"ids to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(key, Tensor) for key in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(key, int) and not isinstance(value, dict) for key, value in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _checked_group(index: int, live: dict, swapin: Any) -> list[int]:
    if not isinstance(swapin, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries "
                           "keyed by packed parameter ids.")
    if len(ids) != len(live["params"]):
        raise RuntimeError(f"swapin_optim_state param group {index} has a different number of params than the "
                           "live optimizer param group.")
    only_swapin = [key for key in swapin if key not in live]
    only_live = [key for key in live if key not in swapin]
    if only_swapin or only_live:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the "
                           f"live optimizer group keys for group {index}. Keys only in swap-in: {only_swapin}. "
                           f"Keys only in live: {only_live}.")
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Within the block, ``optimizer`` works on ``swapin_parameters`` and ``swapin_optim_state``."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _checked_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
                           f"dicts, got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live "
                           "optimizer.")
    parameters = list(swapin_parameters.values())
    plan = []   # (live group, swap-in group, its parameters)
    named: set[int] = set()
    offset = 0
    for index, (live, swapin) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _checked_group(index, live, swapin)
        named.update(ids)
        if offset + len(ids) > len(parameters):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        plan.append((live, swapin, parameters[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [key for key in state if key not in named]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")

    live_state = optimizer.state
    snapshots = [dict(group) for group in optimizer.param_groups]
    try:
        swapped: defaultdict = defaultdict(dict)
        for live, swapin, params in plan:
            live.update({key: value for key, value in swapin.items() if key != "params"}, params=params)
            for p, number in zip(params, swapin["params"]):
                swapped[p] = dict(state.get(number, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
