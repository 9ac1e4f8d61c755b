"""zero.utils.data is torch.utils.data's address for zero.data's classes; PyTorch as an optional oracle
for the rules a user relies on: len(loader) for each sampler kind, the argument errors, random_split sizes."""
import numpy as np
import pytest

import zero
import zero.data
import zero.utils.data as utils_data

PYTORCH_NAMES = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
                 "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset",
                 "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info", "random_split"]


def test_the_same_objects_under_both_names():
    for name in PYTORCH_NAMES:
        assert getattr(utils_data, name) is getattr(zero.data, name), name
    assert zero.data.MNIST.__mro__[1] is utils_data.TensorDataset
    from zero.utils.data import DataLoader, TensorDataset  # what `from torch.utils.data import ...` becomes

    assert [b.numpy().tolist() for b, in DataLoader(TensorDataset(np.arange(3)), batch_size=2)] == [[0, 1], [2]]


def test_pytorch_has_these_names_too():
    torch = pytest.importorskip("torch")
    for name in PYTORCH_NAMES:
        assert hasattr(torch.utils.data, name), name


# -- len(loader), as PyTorch computes it --------------------------------------------------------------
def make_stream(base, n, with_length):
    """0 .. n-1 as an IterableDataset of either library (``base`` is zero's or torch's IterableDataset)."""
    class Stream(base):
        def __iter__(self):
            return iter(range(n))

    if with_length:
        Stream.__len__ = lambda self: n
    return Stream()


LOADERS = [  # (name, a function of the library's utils.data module and a dataset of 10 -> a DataLoader)
    ("default", lambda d, ds: d.DataLoader(ds)),
    ("batch 3", lambda d, ds: d.DataLoader(ds, batch_size=3)),
    ("batch 3 drop_last", lambda d, ds: d.DataLoader(ds, batch_size=3, drop_last=True)),
    ("shuffle", lambda d, ds: d.DataLoader(ds, batch_size=4, shuffle=True)),
    ("batch None", lambda d, ds: d.DataLoader(ds, batch_size=None)),
    ("random num_samples", lambda d, ds: d.DataLoader(ds, batch_size=4, sampler=d.RandomSampler(ds, num_samples=7))),
    ("replacement", lambda d, ds: d.DataLoader(ds, batch_size=4,
                                               sampler=d.RandomSampler(ds, replacement=True, num_samples=25))),
    ("subset sampler", lambda d, ds: d.DataLoader(ds, batch_size=2, sampler=d.SubsetRandomSampler([1, 2, 3]))),
    ("weighted", lambda d, ds: d.DataLoader(ds, batch_size=3, sampler=d.WeightedRandomSampler([1.0] * 10, 8))),
    ("list sampler", lambda d, ds: d.DataLoader(ds, batch_size=3, sampler=[0, 1, 2, 3])),
    ("batch sampler", lambda d, ds: d.DataLoader(ds, batch_sampler=d.BatchSampler(d.SequentialSampler(ds), 4,
                                                                                  True))),
    ("list batch sampler", lambda d, ds: d.DataLoader(ds, batch_sampler=[[0], [1, 2]])),
]


@pytest.mark.parametrize("make", [m for _, m in LOADERS], ids=[name for name, _ in LOADERS])
def test_len_of_a_loader_is_pytorchs(make):
    torch = pytest.importorskip("torch")
    zero_loader = make(utils_data, utils_data.TensorDataset(np.arange(10.0)))
    torch_loader = make(torch.utils.data, torch.utils.data.TensorDataset(torch.arange(10.0)))
    assert len(zero_loader) == len(torch_loader)
    assert len(list(zero_loader)) == len(list(torch_loader))


@pytest.mark.parametrize("batch_size,drop_last", [(None, False), (1, False), (3, False), (3, True), (20, True)])
def test_len_of_an_iterable_loader_is_pytorchs(batch_size, drop_last):
    torch = pytest.importorskip("torch")
    ours = utils_data.DataLoader(make_stream(utils_data.IterableDataset, 10, True), batch_size=batch_size,
                                 drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(make_stream(torch.utils.data.IterableDataset, 10, True),
                                         batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs) and len(list(ours)) == len(list(theirs))
    for data in (utils_data, torch.utils.data):
        with pytest.raises(TypeError):
            len(data.DataLoader(make_stream(data.IterableDataset, 10, False)))


# -- the errors, at the same moments -----------------------------------------------------------------
BAD_ARGUMENTS = [dict(batch_sampler=[[0]], batch_size=2), dict(batch_sampler=[[0]], shuffle=True),
                 dict(batch_sampler=[[0]], sampler=[0]), dict(batch_sampler=[[0]], drop_last=True),
                 dict(sampler=[0], shuffle=True), dict(batch_size=None, drop_last=True), dict(num_workers=-1),
                 dict(timeout=-1), dict(drop_last=1), dict(prefetch_factor=2), dict(persistent_workers=True),
                 dict(batch_size=0), dict(batch_size=2.5), dict(multiprocessing_context="fork"),
                 dict(num_workers=1, multiprocessing_context="bogus"), dict(num_workers=1, prefetch_factor=-1)]


@pytest.mark.parametrize("kwargs", BAD_ARGUMENTS, ids=[str(k) for k in BAD_ARGUMENTS])
def test_argument_errors_are_pytorchs(kwargs):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError):
        torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(3)), **kwargs)
    with pytest.raises(ValueError):
        utils_data.DataLoader(utils_data.TensorDataset(np.arange(3)), **kwargs)


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])])
def test_iterable_dataset_argument_errors_are_pytorchs(kwargs):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError):
        torch.utils.data.DataLoader(make_stream(torch.utils.data.IterableDataset, 3, True), **kwargs)
    with pytest.raises(ValueError):
        utils_data.DataLoader(make_stream(utils_data.IterableDataset, 3, True), **kwargs)


@pytest.mark.parametrize("n,lengths", [(10, [3, 7]), (10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]),
                                       (10, [0.33, 0.33, 0.34]), (7, [0.25] * 4), (100, [0.1] * 10), (3, [1.0])])
def test_random_split_sizes_are_pytorchs(n, lengths):
    torch = pytest.importorskip("torch")
    ours = utils_data.random_split(range(n), lengths, generator=zero.Generator(seed=0))
    theirs = torch.utils.data.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]


def test_iterable_splitting_with_workers_is_pytorchs():
    torch = pytest.importorskip("torch")

    def make(data):
        class Split(data.IterableDataset):
            def __iter__(self):
                info = data.get_worker_info()
                return iter(range(info.id, 9, info.num_workers))

        return Split()

    ours = [b.tolist() for b in utils_data.DataLoader(make(utils_data), batch_size=2, num_workers=2)]
    theirs = [b.tolist() for b in torch.utils.data.DataLoader(make(torch.utils.data), batch_size=2, num_workers=2)]
    assert ours == theirs
