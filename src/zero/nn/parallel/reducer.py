"""The Reducer: DistributedDataParallel's gradient all-reduce, in buckets, during backward.

Layout, made once at wrap time (PyTorch's): the parameters that require grad, in reverse
registration order -- roughly the order backward finishes their gradients -- cut into
buckets of about ``bucket_cap_mb`` (the first one at most 1 MiB, or the cap when that is
smaller, so the first all-reduce starts early), one dtype and device per bucket. Each
bucket owns a flat buffer.

One iteration:

    forward            prepare(): every bucket waits for all its gradients
    backward           each parameter's post-accumulate-grad hook marks it ready (its .grad
                       is complete: the engine summed every contribution before the hook);
                       a bucket whose parameters are all ready copies their gradients into
                       its buffer and starts an asynchronous all-reduce (AVG) -- while
                       backward goes on computing the gradients of the layers below
    end of backward    a callback queued with autograd.queue_callback waits for every
                       bucket and copies the averaged gradients back into each .grad

Buckets start in their index order on every rank: collectives must be called in the same
order everywhere, and ranks may see gradients finish in different orders. A bucket that
is ready waits for those before it.

With ``find_unused_parameters``, the graph is walked after forward from the outputs, and
the parameters it does not reach count as ready at once with a zero gradient. After the
all-reduce a parameter that no rank used keeps ``.grad`` as it was (None stays None); one
used elsewhere receives the average. Without it, a parameter that gets no gradient is an
error at the end of backward, naming it.
"""
from __future__ import annotations

import weakref

from ... import dtypes
from ...autograd.engine import queue_callback, topological_order
from ...autograd.op import AccumulateGrad
from ...distributed import ReduceOp, all_reduce
from ...distributed.flat import FlatBuffer, group_by_kind
from ...distributed.work import Work
from ...errors import DistributedError
from ...grad_mode import no_grad
from ...tensors.creation import tensor
from ...tensors.tensor import Tensor

FIRST_BUCKET_BYTES = 1 << 20  # PyTorch's _DEFAULT_FIRST_BUCKET_BYTES


class Bucket:
    def __init__(self, index: int, params: list, names: list[str]):
        self.index = index
        self.params = params
        self.names = names
        self.flat = FlatBuffer(params)
        self.ready = [False] * len(params)
        self.pending = len(params)
        self.work: Work | None = None


def make_buckets(named_params: list[tuple[str, Tensor]], bucket_bytes: int) -> list[Bucket]:
    """Buckets over ``named_params`` (already in reverse registration order)."""
    buckets: list[Bucket] = []
    names = {id(p): n for n, p in named_params}
    for group in group_by_kind([p for _, p in named_params]):
        current: list = []
        size = 0
        for p in group:
            limit = min(FIRST_BUCKET_BYTES, bucket_bytes) if not buckets else bucket_bytes
            if current and size + p.nbytes > limit:
                buckets.append(Bucket(len(buckets), current, [names[id(q)] for q in current]))
                current, size = [], 0
            current.append(p)
            size += p.nbytes
        if current:
            buckets.append(Bucket(len(buckets), current, [names[id(q)] for q in current]))
    return buckets


class Reducer:
    def __init__(self, named_params: list[tuple[str, Tensor]], bucket_bytes: int, find_unused_parameters: bool):
        self.buckets = make_buckets(named_params, bucket_bytes)
        self.where = {}  # id(param) -> (bucket, position in it)
        for bucket in self.buckets:
            for i, p in enumerate(bucket.params):
                self.where[id(p)] = (bucket, i)
        self.find_unused = find_unused_parameters
        self.armed = False      # a forward that will sync ran, and its backward has not finished
        self.synced = False     # the backward of the last forward has synced already
        self.next_bucket = 0    # the first bucket not started yet
        self.queued = False     # the finishing callback is queued in the running backward
        self.locally_used: set[int] = set()
        me = weakref.ref(self)  # the hooks live on the parameters: they must not keep the reducer alive
        self.handles = [p.register_post_accumulate_grad_hook(lambda p, me=me: _on_ready(me, p))
                        for bucket in self.buckets for p in bucket.params]

    def prepare(self, outputs) -> None:
        """Called after a forward whose backward should sync."""
        if self.armed and any(b.work is not None for b in self.buckets):
            raise DistributedError("DistributedDataParallel: a forward began while the previous iteration's "
                                   "gradient all-reduce was unfinished (its backward raised?)")
        for bucket in self.buckets:
            bucket.ready = [False] * len(bucket.params)
            bucket.pending = len(bucket.params)
            bucket.work = None
        self.next_bucket = 0
        self.queued = False
        self.armed = True
        self.synced = False
        self.locally_used = set()
        if self.find_unused:
            reached = _leaves_reached(outputs)
            for bucket in self.buckets:
                for i, p in enumerate(bucket.params):
                    if id(p) not in reached:
                        self._mark(bucket, i)

    def disarm(self) -> None:
        """Called after a forward whose backward keeps its gradients local (no_sync, no_grad)."""
        self.armed = False
        self.synced = False

    def ready(self, p: Tensor) -> None:
        """``p``'s gradient for this backward is complete."""
        if not self.armed:
            if self.synced:
                raise DistributedError("DistributedDataParallel: a second backward after one forward; its gradients "
                                       "would not be all-reduced, and the replicas would part. Run a forward per "
                                       "backward, or the extra forwards under no_sync()")
            return  # a backward of no DistributedDataParallel forward (or of one under no_sync): local gradients
        if not self.queued:
            queue_callback(self.finish)
            self.queued = True
        bucket, i = self.where[id(p)]
        if bucket.ready[i]:
            raise DistributedError(f"DistributedDataParallel: parameter {bucket.names[i]} received a gradient twice "
                                   "in one iteration (two backward passes after one forward?); use one backward "
                                   "per forward, or no_sync() for the extra ones")
        self.locally_used.add(id(p))
        self._mark(bucket, i)
        for b in self.buckets[:self.next_bucket]:  # let MPI progress the all-reduces in flight
            if b.work is not None:
                b.work.is_completed()

    def _mark(self, bucket: Bucket, i: int) -> None:
        bucket.ready[i] = True
        bucket.pending -= 1
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            self._start(self.buckets[self.next_bucket])
            self.next_bucket += 1

    def _start(self, bucket: Bucket) -> None:
        with no_grad():
            for i, p in enumerate(bucket.params):
                if p.grad is None or id(p) not in self.locally_used:  # unused here: contributes zero
                    bucket.flat.view(i).zero_()
                else:
                    bucket.flat.view(i).copy_(p.grad)
        bucket.work = all_reduce(bucket.flat.buffer, op=ReduceOp.AVG, async_op=True)

    def finish(self) -> None:
        """End of backward: every bucket all-reduced, the averages back in the gradients."""
        self.armed = False
        self.synced = True
        unready = [name for b in self.buckets for name, ok in zip(b.names, b.ready) if not ok]
        if unready:
            for bucket in self.buckets[:self.next_bucket]:  # none left in flight (the ranks started the same ones)
                assert bucket.work is not None
                bucket.work.wait()
                bucket.work = None
            raise DistributedError(
                f"DistributedDataParallel: parameters received no gradient in this backward: {', '.join(unready)}; "
                "if the forward does not use them, pass find_unused_parameters=True (the ranks must agree on the "
                "gradients they all-reduce)")
        used = self._used_anywhere() if self.find_unused else None
        with no_grad():
            for bucket in self.buckets:
                assert bucket.work is not None
                bucket.work.wait()
                bucket.work = None
                for i, p in enumerate(bucket.params):
                    if used is not None and not used[id(p)]:
                        continue  # no rank used it: its .grad stays as it was
                    if p.grad is None:
                        p.grad = bucket.flat.view(i).clone()
                    else:
                        p.grad.copy_(bucket.flat.view(i))

    def _used_anywhere(self) -> dict[int, bool]:
        """Which parameters some rank used in this iteration (an all-reduce of the ranks' flags)."""
        params = [p for b in self.buckets for p in b.params]
        flags = tensor([1 if id(p) in self.locally_used else 0 for p in params], dtype=dtypes.int32,
                       device=params[0].device)
        all_reduce(flags, op=ReduceOp.MAX)
        return {id(p): bool(f) for p, f in zip(params, flags.tolist())}


def _on_ready(reducer_ref, p) -> None:
    reducer = reducer_ref()
    if reducer is not None:
        reducer.ready(p)


def _leaves_reached(outputs) -> set[int]:
    """ids of the leaves whose gradients backward from ``outputs`` would reach."""
    roots = [t.grad_fn for t in _tensors_in(outputs) if t.grad_fn is not None]
    reached = set()
    for node in topological_order(roots):
        if isinstance(node, AccumulateGrad):
            leaf = node.leaf()
            if leaf is not None:
                reached.add(id(leaf))
    return reached


def _tensors_in(value) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors_in(v)]
    return []
