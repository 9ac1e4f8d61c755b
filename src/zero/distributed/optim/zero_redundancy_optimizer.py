"""ZeroRedundancyOptimizer: ZeRO stage 1 -- each rank keeps the optimizer state of its own shard.

    model = DistributedDataParallel(GPT(config))
    optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=AdamW, lr=3e-4)

Plain data parallelism keeps the whole optimizer state (AdamW: two tensors per
parameter, twice the model) on every rank. Here each parameter has one owner rank; only
the owner keeps its state and updates it, so a rank holds about 1/N of the state. A step:

    1. DistributedDataParallel has already averaged every gradient over the ranks
    2. each rank's own optimizer (``optimizer_class``) steps its shard
    3. each owner broadcasts its updated parameters (one buffer per owner), so every
       replica again holds the same weights

The shards are whole parameters, as in PyTorch: sorted by size within each group, each
goes to the rank that owns the fewest elements so far. A whole-parameter shard keeps the
wrapped optimizer unchanged (any Zero optimizer works, its state per parameter as ever),
and keeps the checkpoint in the wrapped optimizer's own layout; the price is balance to
within one parameter (a flat shard of exactly 1/N would cut parameters apart and need
an optimizer that works on pieces). Gradients are all-reduced whole by DDP, as PyTorch's
ZeRO-1 does, not reduce-scattered: each rank reads the averaged gradients of its shard.

Checkpoints: ``consolidate_state_dict(to=0)`` (every rank calls it) gathers the shards on
rank ``to``; there ``state_dict()`` is exactly what the wrapped optimizer would return for
all the parameters -- ``{"state": {index: ...}, "param_groups": [...]}``, indices counted
over every group -- so it loads into a ZeroRedundancyOptimizer on any number of ranks, or
into the plain optimizer in one process (and a plain optimizer's state dict loads here).
"""
from __future__ import annotations

from ...grad_mode import enable_grad
from ...optim.adamw import AdamW
from ...optim.optimizer import Optimizer
from ..flat import broadcast_from_owners
from ..objects import broadcast_object_list
from ..process_group import default_group

_GROUP_ONLY = ("params", "param_names")  # the keys of a group that are not hyper-parameters


class ZeroRedundancyOptimizer(Optimizer):
    def __init__(self, params, optimizer_class: type[Optimizer] = AdamW, process_group=None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False, **defaults):
        group = default_group("ZeroRedundancyOptimizer", process_group)
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer: overlap_with_ddp=True is not supported; the step "
                                      "runs after backward")
        if not (isinstance(optimizer_class, type) and issubclass(optimizer_class, Optimizer)):
            raise TypeError(f"ZeroRedundancyOptimizer: optimizer_class must be a zero.optim.Optimizer class, got "
                            f"{optimizer_class!r}")
        self.rank, self.world_size = group.rank, group.size
        self.optimizer_class = optimizer_class
        self.owner: dict[int, int] = {}          # id(param) -> the rank that updates it
        self._owned_numel = [0] * self.world_size
        self._consolidated: dict | None = None  # the whole state, on the rank it was consolidated to
        self.optim: Optimizer | None = None
        super().__init__(params, defaults)
        local = [self._local_group(g) for g in self.param_groups]
        self.optim = optimizer_class(local, **defaults)
        self.state = self.optim.state  # this rank's shard of the state
        self._fill_hyper_parameters()

    # -- the partition --------------------------------------------------------------------------
    def _local_group(self, group: dict) -> dict:
        """Assign ``group``'s parameters to ranks; this rank's part, as a group for its optimizer."""
        for p in sorted(group["params"], key=lambda p: -p.numel()):  # sorted() is stable: ties keep their order
            owner = min(range(self.world_size), key=lambda r: (self._owned_numel[r], r))
            self.owner[id(p)] = owner
            self._owned_numel[owner] += p.numel()
        local = {k: v for k, v in group.items() if k not in _GROUP_ONLY}
        local["params"] = [p for p in group["params"] if self.owner[id(p)] == self.rank]
        return local

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        if self.optim is not None:  # (during __init__ the groups are partitioned once the optimizer exists)
            self.optim.add_param_group(self._local_group(self.param_groups[-1]))
            self._fill_hyper_parameters()

    def _fill_hyper_parameters(self) -> None:
        """The wrapped optimizer's defaults also in the groups seen here, as its own groups have them."""
        assert self.optim is not None
        for group, local in zip(self.param_groups, self.optim.param_groups):
            for key, value in local.items():
                if key not in _GROUP_ONLY:
                    group.setdefault(key, value)

    def owned_parameters(self, rank: int | None = None) -> list:
        """The parameters ``rank`` (default: this one) updates, in group order."""
        rank = self.rank if rank is None else rank
        return [p for g in self.param_groups for p in g["params"] if self.owner[id(p)] == rank]

    # -- the step -------------------------------------------------------------------------------
    def step(self, closure=None):
        """Step this rank's shard, then bring every rank's updated parameters everywhere
        (a collective: every rank calls it)."""
        assert self.optim is not None
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group, local in zip(self.param_groups, self.optim.param_groups):  # e.g. a scheduler's new lr
            local.update({k: v for k, v in group.items() if k not in _GROUP_ONLY})
        self.optim.step()
        self._consolidated = None
        broadcast_from_owners({r: self.owned_parameters(r) for r in range(self.world_size)})
        return loss

    # -- checkpoints ----------------------------------------------------------------------------
    def _global_indices(self) -> dict[int, int]:
        """id(param) -> its index in the whole state dict (position over every group)."""
        index: dict[int, int] = {}
        for p in self._all_params():
            index.setdefault(id(p), len(index))
        return index

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every rank's shard of the state on rank ``to`` (a collective: every rank calls it)."""
        assert self.optim is not None
        if not isinstance(to, int) or not 0 <= to < self.world_size:
            raise ValueError(f"consolidate_state_dict: to={to!r} is not a rank (0 to {self.world_size - 1})")
        index = self._global_indices()
        local_params = self.optim._all_params()
        local = self.optim.state_dict()["state"]
        mine = {index[id(local_params[i])]: values for i, values in local.items()}
        whole: dict = {}
        for src in range(self.world_size):
            payload = [mine if src == self.rank else None]
            broadcast_object_list(payload, src=src)
            if self.rank == to and payload[0] is not None:
                whole.update(payload[0])
        self._consolidated = dict(sorted(whole.items())) if self.rank == to else None

    def state_dict(self) -> dict:
        """The whole state, in the wrapped optimizer's layout: only on the rank that
        ``consolidate_state_dict`` gathered it on, and only until the next step."""
        if self._consolidated is None:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please call "
                               "`consolidate_state_dict(to=0)` on all ranks beforehand if you meant to save the "
                               "global state.")
        index = self._global_indices()
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        return {"state": dict(self._consolidated), "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a whole state (from ``state_dict()`` here, on any number of ranks, or from the
        plain optimizer): every rank keeps its shard's part."""
        assert self.optim is not None
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups) or any(
                len(s["params"]) != len(g["params"]) for s, g in zip(saved_groups, self.param_groups)):
            raise ValueError("ZeroRedundancyOptimizer.load_state_dict: the state dict's parameter groups ("
                             f"{[len(s['params']) for s in saved_groups]} parameters) do not match the optimizer's "
                             f"({[len(g['params']) for g in self.param_groups]})")
        position = {}  # global index in the state dict -> the parameter
        for saved, group in zip(saved_groups, self.param_groups):
            position.update({int(i): p for i, p in zip(saved["params"], group["params"])})
        local_index = {id(p): i for i, p in enumerate(self.optim._all_params())}
        local_state = {local_index[id(position[int(k)])]: v for k, v in state_dict["state"].items()
                       if int(k) in position and id(position[int(k)]) in local_index}
        local_groups = []
        for saved, group, local in zip(saved_groups, self.param_groups, self.optim.param_groups):
            hyper = {k: v for k, v in saved.items() if k not in _GROUP_ONLY}
            group.update(hyper)
            local_groups.append({**hyper, "params": [local_index[id(p)] for p in local["params"]]})
        self.optim.load_state_dict({"state": local_state, "param_groups": local_groups})
        self.state = self.optim.state
        self._consolidated = None

    def __repr__(self) -> str:
        return (f"ZeroRedundancyOptimizer(rank {self.rank} of {self.world_size}, "
                f"{len(self.owned_parameters())} parameters here) over {self.optim!r}")
