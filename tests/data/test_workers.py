"""DataLoader(num_workers > 0): real processes, the same batches as in the main process, seeding,
IterableDataset splitting, persistent workers, and failures reported clearly."""
import os
import random
import time

import numpy as np
import pytest

import zero
from zero.data import DataLoader, Dataset, IterableDataset, TensorDataset, WorkerInfo, get_worker_info


def make_dataset(n=23):
    return TensorDataset(np.arange(n * 2, dtype=np.float32).reshape(n, 2), np.arange(n, dtype=np.int64))


def as_lists(batches):
    return [[t.numpy().tolist() for t in b] for b in batches]


class Rows(Dataset):
    """Per-sample fetching (no batch method), so workers do real work sample by sample."""

    def __init__(self, n=23):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.array([i, 2 * i], dtype=np.float32), i


@pytest.mark.parametrize("dataset", [make_dataset(), Rows()], ids=["batch method", "per sample"])
@pytest.mark.parametrize("kwargs", [dict(batch_size=4), dict(batch_size=5, shuffle=True, drop_last=True),
                                    dict(batch_size=3, shuffle=True, prefetch=1),
                                    dict(batch_size=4, shuffle=True, persistent=True)])
def test_two_workers_yield_the_batches_of_none_for_the_same_seed(dataset, kwargs):
    """The issue's demand: num_workers=2 yields the same batches as num_workers=0 -- for three epochs,
    and leaving the random state where num_workers=0 leaves it (persistent workers too)."""
    kwargs = dict(kwargs)
    prefetch, persistent = kwargs.pop("prefetch", None), kwargs.pop("persistent", False)
    epochs = {}
    for workers in (0, 2):
        extra = dict(num_workers=2, prefetch_factor=prefetch, persistent_workers=persistent) if workers else {}
        loader = DataLoader(dataset, **kwargs, **extra)
        zero.manual_seed(1234)
        epochs[workers] = [as_lists(loader) for _ in range(3)] + [zero.get_rng_state()]
    assert epochs[2] == epochs[0]
    assert epochs[0][0] != epochs[0][1] or not kwargs.get("shuffle")


def test_workers_are_processes_and_know_who_they_are():
    class WhoAmI(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            info = get_worker_info()
            return {"pid": os.getpid(), "id": info.id, "of": info.num_workers, "seed": info.seed,
                    "same dataset type": type(info.dataset) is WhoAmI}

    assert get_worker_info() is None  # in the main process
    batches = list(DataLoader(WhoAmI(), batch_size=2, num_workers=2))
    pids = {int(p) for b in batches for p in b["pid"].numpy()}
    assert len(pids) == 2 and os.getpid() not in pids
    assert [b["id"].numpy().tolist() for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]  # round robin
    assert all(b["of"].numpy().tolist() == [2, 2] and all(b["same dataset type"].numpy()) for b in batches)
    seeds = [int(b["seed"].numpy()[0]) for b in batches]
    assert seeds[1] == seeds[0] + 1 and seeds[2] == seeds[0]  # base seed + worker id


def test_worker_seeds_come_from_the_generator():
    class Draws(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return zero.rand(1).item(), random.random(), float(np.random.rand()), get_worker_info().seed

    def epoch(seed):
        zero.manual_seed(seed)
        return [b[:3] for b in (list(map(lambda t: t.numpy().tolist(), b)) for b in
                                DataLoader(Draws(), batch_size=1, num_workers=2))]

    first, again, other = epoch(5), epoch(5), epoch(6)
    assert first == again and first != other  # reproducible, and from the generator
    assert first[0] != first[1]  # the two workers draw different numbers: zero, random and NumPy alike
    assert [c[0] for c in first[0]] != [c[0] for c in first[1]]
    zero.manual_seed(5)
    expected = zero.Generator(seed=5).next_seed()  # nothing to shuffle: the base seed is the first draw
    (_, _, _, seed), = DataLoader(Draws(), batch_size=None, num_workers=1, sampler=[0])
    assert seed == expected
    loader = DataLoader(Draws(), batch_size=None, num_workers=1, sampler=[0], generator=zero.Generator(seed=9))
    assert list(loader)[0][3] == zero.Generator(seed=9).next_seed()


class Numbers(IterableDataset):
    """0 .. n-1; split between workers if ``split``, or by a worker_init_fn that narrows the copy's range."""

    def __init__(self, n, split=True):
        self.start, self.end, self.split = 0, n, split

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.split:
            return iter(range(self.start, self.end))
        return iter(range(self.start + info.id, self.end, info.num_workers))


def narrow_to_this_worker(worker_id):
    info = get_worker_info()
    dataset = info.dataset  # this worker's copy
    per_worker = -(-(dataset.end - dataset.start) // info.num_workers)
    dataset.start, dataset.end = worker_id * per_worker, min(dataset.end, (worker_id + 1) * per_worker)


def test_an_iterable_dataset_splits_itself_between_workers():
    loader = DataLoader(Numbers(10), batch_size=3, num_workers=2)
    assert [b.numpy().tolist() for b in loader] == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
    loader = DataLoader(Numbers(10, split=False), batch_size=4, num_workers=2, worker_init_fn=narrow_to_this_worker)
    assert [b.numpy().tolist() for b in loader] == [[0, 1, 2, 3], [5, 6, 7, 8], [4], [9]]
    loader = DataLoader(Numbers(10), batch_size=3, num_workers=2, drop_last=True)
    assert [b.numpy().tolist() for b in loader] == [[0, 2, 4], [1, 3, 5]]


def test_an_iterable_dataset_that_does_not_split_is_read_by_every_worker():
    values = [v for b in DataLoader(Numbers(5, split=False), batch_size=2, num_workers=2) for v in b.numpy()]
    assert sorted(values) == sorted(list(range(5)) * 2)
    assert sorted(DataLoader(Numbers(5, split=False), batch_size=None, num_workers=2)) == sorted([*range(5)] * 2)


def test_persistent_workers_live_across_epochs():
    class Pid(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return os.getpid()

    loader = DataLoader(Pid(), batch_size=2, num_workers=2, persistent_workers=True)
    first = {int(p) for b in loader for p in b.numpy()}
    iterator = loader._iterator
    second = {int(p) for b in loader for p in b.numpy()}
    assert first == second and len(first) == 2 and loader._iterator is iterator
    partial = iter(loader)
    next(partial)  # an epoch left half-way ...
    assert {int(p) for b in loader for p in b.numpy()} == first  # ... and the next one is whole
    processes = iterator._workers
    del loader, iterator, partial
    for process in processes:
        process.join(timeout=10)
        assert not process.is_alive()


def test_persistent_workers_are_seeded_once_and_their_generators_run_on():
    class Draw(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return zero.rand(1).item(), get_worker_info().seed

    loader = DataLoader(Draw(), batch_size=1, num_workers=2, persistent_workers=True)
    first, second = ([b[0].numpy().tolist() + b[1].numpy().tolist() for b in loader] for _ in range(2))
    assert [s for _, s in first] == [s for _, s in second]  # the same seeds ...
    assert [d for d, _ in first] != [d for d, _ in second]  # ... but not the same numbers again


def test_persistent_iterable_workers_restart_their_streams():
    loader = DataLoader(Numbers(6), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [[b.numpy().tolist() for b in loader] for _ in range(3)]
    assert epochs == [[[0, 2], [1, 3], [4], [5]]] * 3


def test_workers_end_with_the_epoch_and_when_the_iterator_is_dropped():
    loader = DataLoader(make_dataset(), batch_size=2, num_workers=2)
    iterator = iter(loader)
    processes = list(iterator._workers)
    assert all(p.is_alive() for p in processes)
    list(iterator)
    assert not any(p.is_alive() for p in processes)
    iterator = iter(loader)
    next(iterator)
    processes = list(iterator._workers)
    del iterator
    assert not any(p.is_alive() for p in processes)


class Failing(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise KeyError(f"no sample {i}")
        return i


def test_a_worker_exception_is_raised_with_its_traceback():
    iterator = iter(DataLoader(Failing(), batch_size=2, num_workers=2))
    assert next(iterator).numpy().tolist() == [0, 1]
    with pytest.raises(KeyError) as caught:
        next(iterator)
    message = str(caught.value)
    assert message.startswith("Caught KeyError in DataLoader worker process 1.\nOriginal Traceback")
    assert "in __getitem__" in message and "KeyError: 'no sample 3'" in message
    assert next(iterator).numpy().tolist() == [4, 5]  # as in PyTorch, the other batches still come


def test_a_failing_worker_init_fn_and_an_unpicklable_exception_type():
    class LocalError(Exception):  # defined in a function: the main process cannot unpickle the type
        pass

    def init(worker_id):
        raise LocalError(f"init {worker_id} failed")

    with pytest.raises(RuntimeError, match="Caught LocalError in DataLoader worker process 0(.|\n)*init 0 failed"):
        list(DataLoader(make_dataset(), batch_size=2, num_workers=1, worker_init_fn=init))


def test_a_batch_that_cannot_be_pickled_is_reported():
    class Unpicklable(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return lambda: i

    with pytest.raises(Exception, match="in DataLoader worker process 0 \\(pickling the batch\\)"):
        list(DataLoader(Unpicklable(), batch_size=None, num_workers=1, collate_fn=lambda x: x))


def test_a_worker_that_dies_is_reported():
    class Exits(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            os._exit(3)

    with pytest.raises(RuntimeError, match="worker process exited unexpectedly .*exit code 3"):
        list(DataLoader(Exits(), batch_size=2, num_workers=1))


def test_timeout():
    class Slow(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(0.6)
            return i

    with pytest.raises(RuntimeError, match="timed out after 0.2 seconds"):
        list(DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.2))


def test_the_spawn_start_method():
    dataset = make_dataset(9)
    zero.manual_seed(0)
    expected = as_lists(DataLoader(dataset, batch_size=4, shuffle=True))
    zero.manual_seed(0)
    loader = DataLoader(dataset, batch_size=4, shuffle=True, num_workers=1, multiprocessing_context="spawn")
    assert loader.multiprocessing_context.get_start_method() == "spawn"
    assert as_lists(loader) == expected


def test_worker_info_is_read_only():
    info = WorkerInfo(id=0, num_workers=1, seed=3, dataset=None)
    with pytest.raises(RuntimeError, match="read-only"):
        info.id = 2
    assert repr(info) == "WorkerInfo(id=0, num_workers=1, seed=3)"


def test_more_workers_than_cpus_is_warned_about():
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with pytest.warns(UserWarning, match=f"may use only {usable} CPUs"):
        DataLoader(make_dataset(), num_workers=usable + 1)
