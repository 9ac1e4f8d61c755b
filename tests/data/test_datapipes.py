"""DataPipes (zero.utils.data.datapipes) against PyTorch's: the same elements in the same order for
deterministic chains, seeded shuffles that are permutations and reproducible (and equal to PyTorch's for
the same seed: both use Python's ``random`` the same way), the decorators, and the DataLoader with them."""
import warnings

import numpy as np
import pytest

import zero
import zero.utils.data as zdata
from zero.utils.data import DataLoader
from zero.utils.data.datapipes import iter as ziter
from zero.utils.data.datapipes import map as zmap

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Local function is not supported by pickle")  # (PyTorch's, on lambdas)
import torch.utils.data as tdata
from torch.utils.data.datapipes import iter as titer
from torch.utils.data.datapipes import map as tmap


def plain(value):
    """Batches as nested lists, tensors as lists: what both libraries' outputs are compared as."""
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value) if isinstance(value, tuple) else [plain(v) for v in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def both(build):
    """``build(iter_module, map_module)`` with Zero's and PyTorch's built-ins, as lists of plain values."""
    return plain(list(build(ziter, zmap))), plain(list(build(titer, tmap)))


def double(x):
    return x * 2


CHAINS = {
    "map_filter_batch": lambda it, mp: it.IterableWrapper(range(20)).map(double).filter(lambda x: x % 3 == 0)
    .batch(4),
    "batch_drop_last": lambda it, mp: it.IterableWrapper(range(10)).batch(3, drop_last=True),
    "batch_unbatch": lambda it, mp: it.IterableWrapper(range(10)).batch(3).unbatch(),
    "nested_unbatch_all": lambda it, mp: it.IterableWrapper([[[1, 2], [3]], [[4]], [5]]).unbatch(unbatch_level=-1),
    "nested_unbatch_2": lambda it, mp: it.IterableWrapper([[[1, 2], [3]], [[4]]]).unbatch(unbatch_level=2),
    "concat": lambda it, mp: it.IterableWrapper(range(3)).concat(it.IterableWrapper("ab"), it.IterableWrapper([9])),
    "zip": lambda it, mp: it.IterableWrapper(range(5)).zip(it.IterableWrapper("abc")),
    "mux": lambda it, mp: it.IterableWrapper(range(5)).mux(it.IterableWrapper(range(10, 13))),
    "collate": lambda it, mp: it.IterableWrapper([[1, 2], [3, 4]]).collate(),
    "collate_fn": lambda it, mp: it.IterableWrapper(range(4)).batch(2).collate(collate_fn=sum),
    "input_col": lambda it, mp: it.IterableWrapper([(1, 2, 3), (4, 5, 6)]).map(lambda a, b: a + b, input_col=[0, 2]),
    "input_col_out": lambda it, mp: it.IterableWrapper([[1, 2], [4, 5]]).map(double, input_col=1, output_col=-1),
    "input_col_dict": lambda it, mp: it.IterableWrapper([{"a": 1}, {"a": 7}]).map(double, input_col="a",
                                                                                  output_col="b"),
    "filter_col": lambda it, mp: it.IterableWrapper([(1, "x"), (2, "y"), (3, "z")]).filter(lambda v: v != 2,
                                                                                           input_col=0),
    "groupby": lambda it, mp: it.IterableWrapper(range(20)).groupby(lambda x: x % 3),
    "groupby_sized": lambda it, mp: it.IterableWrapper(range(20)).groupby(lambda x: x % 3, group_size=3,
                                                                           keep_key=True),
    "groupby_buffer": lambda it, mp: it.IterableWrapper([1, 2, 4, 5, 7, 3, 8, 6, 9]).groupby(
        lambda x: x % 3, buffer_size=4),
    "groupby_guaranteed": lambda it, mp: it.IterableWrapper([0, 3, 1, 6, 4, 9, 2, 5, 12]).groupby(
        lambda x: x % 3, buffer_size=4, group_size=3, guaranteed_group_size=2, drop_remaining=True),
    "sharding_default": lambda it, mp: it.IterableWrapper(range(7)).sharding_filter(),
    "sampler": lambda it, mp: it.Sampler(it.IterableWrapper(range(5))),
    "shuffle_off": lambda it, mp: it.IterableWrapper(range(8)).shuffle().set_shuffle(False),
    "map_style": lambda it, mp: mp.SequenceWrapper(range(10)).map(double).batch(3),
    "map_batch_drop": lambda it, mp: mp.SequenceWrapper(range(10)).batch(4, drop_last=True),
    "map_concat_zip": lambda it, mp: mp.SequenceWrapper(range(3)).concat(mp.SequenceWrapper("xy"))
    .zip(mp.SequenceWrapper(range(10, 20))),
    "map_shuffle_off": lambda it, mp: mp.SequenceWrapper("abcd").shuffle().set_shuffle(False),
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_chains_equal_pytorch(name):
    ours, theirs = both(CHAINS[name])
    assert ours == theirs


def test_lengths_equal_pytorch():
    for name in ("map_filter_batch", "batch_drop_last", "concat", "zip", "mux", "sharding_default", "sampler",
                 "map_style", "map_batch_drop", "map_concat_zip"):
        build = CHAINS[name]
        try:
            expected = len(build(titer, tmap))
        except TypeError:
            with pytest.raises(TypeError, match="valid length"):
                len(build(ziter, zmap))
            continue
        assert len(build(ziter, zmap)) == expected, name


def test_batch_is_a_datachunk():
    batches = list(ziter.IterableWrapper(range(5)).batch(2))
    assert all(type(b) is zdata.DataChunk for b in batches)
    chunk = zdata.DataChunk([1, 2, 3])
    reference = tdata.DataChunk([1, 2, 3])
    assert chunk.as_str("  ") == reference.as_str("  ") and list(chunk.raw_iterator()) == [1, 2, 3]
    assert isinstance(chunk, list) and chunk == [1, 2, 3]


def test_sharding_split_like_pytorch():
    for n, i in ((3, 0), (3, 2), (4, 1)):
        ours = ziter.IterableWrapper(range(11)).sharding_filter()
        theirs = titer.IterableWrapper(range(11)).sharding_filter()
        ours.apply_sharding(n, i)
        theirs.apply_sharding(n, i)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    with pytest.raises(ValueError, match="should be smaller"):
        ziter.IterableWrapper(range(3)).sharding_filter().apply_sharding(2, 2)


@pytest.mark.parametrize("buffer_size", [3, 10000])
def test_seeded_shuffle_is_a_reproducible_permutation_equal_to_pytorchs(buffer_size):
    def run(it, seed):
        return list(it.IterableWrapper(range(30)).shuffle(buffer_size=buffer_size).set_seed(seed))

    first, again, other = run(ziter, 7), run(ziter, 7), run(ziter, 8)
    assert sorted(first) == list(range(30)) and first == again and first != other
    assert first == run(titer, 7)


def test_map_shuffle_seeded_and_from_manual_seed():
    ours = list(zmap.SequenceWrapper(range(12)).shuffle().set_seed(3))
    assert ours == list(tmap.SequenceWrapper(range(12)).shuffle().set_seed(3))
    zero.manual_seed(1)
    dp = zmap.SequenceWrapper(range(12)).shuffle()
    a = list(dp)
    zero.manual_seed(1)
    assert list(dp) == a and sorted(a) == list(range(12))
    assert isinstance(dp, zdata.IterDataPipe)


def test_unseeded_shuffle_follows_zero_manual_seed():
    dp = ziter.IterableWrapper(range(20)).shuffle()
    zero.manual_seed(4)
    a = list(dp)
    b = list(dp)            # the next epoch: a new order
    zero.manual_seed(4)
    assert list(dp) == a and a != b


def test_fork_and_demux_like_pytorch():
    for it in (ziter, titer):
        a, b, c = it.IterableWrapper(range(6)).fork(3)
        assert list(a) == list(range(6)) and list(b) == list(range(6)) and list(c) == list(range(6))
        a, b = it.IterableWrapper(range(6)).fork(2)
        assert list(zip(a, b)) == [(i, i) for i in range(6)]
    z = ziter.IterableWrapper(range(6)).fork(1)
    assert isinstance(z, ziter.IterableWrapper)
    for it in (ziter, titer):
        evens, odds = it.IterableWrapper(range(9)).demux(2, lambda x: x % 2)
        assert (list(evens), list(odds)) == ([0, 2, 4, 6, 8], [1, 3, 5, 7])
        keep, = it.IterableWrapper(range(6)).demux(1, lambda x: 0 if x % 3 else None, drop_none=True)
        assert list(keep) == [1, 2, 4, 5]


def test_fork_demux_errors_like_pytorch():
    for it in (ziter, titer):
        with pytest.raises(ValueError, match="larger than 0"):
            it.IterableWrapper(range(3)).fork(0)
        a, b = it.IterableWrapper(range(10)).fork(2, buffer_size=3)
        with pytest.raises(BufferError, match="buffer overflow"):
            list(a)
        a, b = it.IterableWrapper(range(10)).demux(2, lambda x: int(x > 2), buffer_size=2)
        with pytest.raises(BufferError, match="buffer overflow"):
            list(a)
        bad, other = it.IterableWrapper(range(4)).demux(2, lambda x: 5)
        with pytest.raises(ValueError, match="between 0 and 1"):
            list(bad)
        with pytest.raises(ValueError, match="Unknown copy method"):
            it.IterableWrapper(range(3)).fork(2, copy="wrong")


def test_fork_copy_modes():
    source = [[1], [2]]
    a, b = ziter.IterableWrapper(source, deepcopy=False).fork(2, copy="deep")
    first = list(a)
    first[0].append(9)
    assert list(b) == [[1], [2]] and source == [[1], [2]]


def test_errors_like_pytorch():
    cases = [
        (lambda it, mp: it.IterableWrapper(range(3)).batch(0), AssertionError),
        (lambda it, mp: list(it.IterableWrapper([[1], 2]).unbatch(unbatch_level=2)), IndexError),
        (lambda it, mp: list(it.IterableWrapper([[1]]).unbatch(unbatch_level=-2)), ValueError),
        (lambda it, mp: list(it.IterableWrapper(range(3)).filter(lambda x: x)), ValueError),
        (lambda it, mp: list(it.IterableWrapper([1]).filter(lambda x: (zero if it is ziter else torch).tensor(True))),
         ValueError),
        (lambda it, mp: it.IterableWrapper(range(3)).map(double, output_col=1), ValueError),
        (lambda it, mp: it.IterableWrapper(range(3)).map(double, input_col=0, output_col=[1, 2]), ValueError),
        (lambda it, mp: it.Concater(), ValueError),
        (lambda it, mp: it.IterableWrapper(range(3)).groupby(bool, buffer_size=2, group_size=3), AssertionError),
        (lambda it, mp: it.IterableWrapper(range(3)).groupby(bool, guaranteed_group_size=2), AssertionError),
        (lambda it, mp: list(it.IterableWrapper([0, 1, 2, 4]).groupby(lambda x: x % 3, buffer_size=2, group_size=2,
                                                                      guaranteed_group_size=2)), RuntimeError),
        (lambda it, mp: it.IterableWrapper(range(3)).concat([1]), TypeError),
        (lambda it, mp: it.IterableWrapper(range(3)).zip([1]), TypeError),
        (lambda it, mp: it.IterableWrapper(range(3)).shuffle(buffer_size=0), AssertionError),
        (lambda it, mp: len(it.IterableWrapper(iter(range(3)))), TypeError),
        (lambda it, mp: len(it.IterableWrapper(range(3)).filter(bool)), TypeError),
        (lambda it, mp: mp.SequenceWrapper(range(3)).batch(2)[5], IndexError),
        (lambda it, mp: mp.SequenceWrapper(range(3)).concat(mp.SequenceWrapper("ab"))[9], IndexError),
        (lambda it, mp: mp.SequenceWrapper(range(3)).zip(mp.SequenceWrapper("ab"))[2], IndexError),
        (lambda it, mp: mp.SequenceWrapper(range(3)).concat([1]), TypeError),
        (lambda it, mp: it.IterableWrapper(range(3)).no_such_function, AttributeError),
    ]
    for build, error in cases:
        with pytest.raises(error):
            build(titer, tmap)
        with pytest.raises(error):
            build(ziter, zmap)


def test_iterable_wrapper_deepcopies():
    source = [[1], [2]]
    dp = ziter.IterableWrapper(source)
    for item in dp:
        item.append(0)
    assert source == [[1], [2]]
    shallow = ziter.IterableWrapper(source, deepcopy=False)
    next(iter(shallow)).append(5)
    assert source == [[1, 5], [2]]


def test_functional_datapipe_registers_a_method():
    @zdata.functional_datapipe("zero_test_add_k")
    class AddK(zdata.IterDataPipe):
        def __init__(self, source, k=1):
            self.source, self.k = source, k

        def __iter__(self):
            for x in self.source:
                yield x + self.k

    @zdata.functional_datapipe("zero_test_map_neg")
    class Neg(zdata.MapDataPipe):
        def __init__(self, source):
            self.source = source

        def __getitem__(self, i):
            return -self.source[i]

        def __len__(self):
            return len(self.source)

    assert list(ziter.IterableWrapper(range(3)).zero_test_add_k(k=10).map(double)) == [20, 22, 24]
    assert list(zmap.SequenceWrapper(range(3)).zero_test_map_neg()) == [0, -1, -2]
    assert "zero_test_add_k" in dir(ziter.IterableWrapper([])) and "zero_test_add_k" in zdata.IterDataPipe.functions
    with pytest.raises(Exception, match="already taken"):   # PyTorch raises a plain Exception
        tdata.functional_datapipe("map")(type("Again", (tdata.IterDataPipe,), {}))
    with pytest.raises(Exception, match="already taken"):
        zdata.functional_datapipe("map")(type("Again", (zdata.IterDataPipe,), {}))
    assert repr(AddK(range(2))) == str(AddK(range(2))) == AddK.__qualname__


def test_reset_runs_at_every_iter():
    class Counting(zdata.IterDataPipe):
        def __init__(self):
            self.resets = 0

        def reset(self):
            self.resets += 1

        def __iter__(self):
            yield self.resets

    dp = Counting()
    assert list(dp) == [1] and list(dp) == [2]


def test_base_classes_are_datasets():
    assert issubclass(zdata.IterDataPipe, zdata.IterableDataset) and issubclass(zdata.MapDataPipe, zdata.Dataset)
    assert issubclass(zdata.DFIterDataPipe, zdata.IterDataPipe) and zdata.DFIterDataPipe()._is_dfpipe()
    assert issubclass(tdata.DFIterDataPipe, tdata.IterDataPipe)


def test_dataset_kind_constants_and_fetchers():
    assert (zdata._DatasetKind.Map, zdata._DatasetKind.Iterable) == (tdata._DatasetKind.Map,
                                                                      tdata._DatasetKind.Iterable)
    fetcher = zdata._DatasetKind.create_fetcher(zdata._DatasetKind.Map, list(range(5)), True, list, False)
    assert fetcher.fetch([3, 1]) == [3, 1]
    stream = zdata._DatasetKind.create_fetcher(zdata._DatasetKind.Iterable, ziter.IterableWrapper(range(5)), True,
                                               list, False)
    assert stream.fetch([None, None]) == [0, 1]


def test_determinism_decorators_like_pytorch():
    for lib in (zdata, tdata):
        @lib.non_deterministic
        class Random(lib.IterDataPipe):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                yield from range(self.n)

        assert list(Random(2)) == [0, 1]
        with lib.guaranteed_datapipes_determinism():
            with pytest.raises(TypeError, match="non-deterministic"):
                Random(2)
        assert list(Random(3)) == [0, 1, 2]   # the guarantee ends with the block

        @lib.non_deterministic(lambda n: n > 5)
        class Sometimes(lib.IterDataPipe):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                yield self.n

        with lib.guaranteed_datapipes_determinism():
            assert list(Sometimes(2)) == [2]
            with pytest.raises(TypeError, match="non-deterministic with the inputs"):
                Sometimes(9)
        with pytest.raises(TypeError, match="Only `IterDataPipe`"):
            lib.non_deterministic(int)
        with pytest.raises(TypeError):
            lib.non_deterministic(3)


def test_argument_validation():
    def make(lib):
        @lib.argument_validation
        def needs_pipe(dp: lib.IterDataPipe, n: int):
            return n
        return needs_pipe

    for lib in (zdata, tdata):
        with pytest.raises(TypeError, match="Expected argument 'dp' as a IterDataPipe"):
            make(lib)([1], 2)
    needs_pipe = make(zdata)
    # Zero checks what PyTorch documents (PyTorch 2.13's type layer is off: its check raises AttributeError)
    assert needs_pipe(ziter.IterableWrapper([1]), 2) == 2

    class Ints(zdata.IterDataPipe[int]):
        def __iter__(self):
            yield 1

    class Strings(zdata.IterDataPipe[str]):
        def __iter__(self):
            yield "a"

    @zdata.argument_validation
    def wants_ints(dp: zdata.IterDataPipe[int]):
        return list(dp)

    assert wants_ints(Ints()) == [1] and wants_ints(ziter.IterableWrapper([1])) == [1]
    with pytest.raises(TypeError, match="subtype of hint int"):
        wants_ints(Strings())
    with pytest.raises(TypeError, match="as a IterDataPipe"):
        wants_ints((1, 2))


def test_runtime_validation():
    def make(lib):
        class Ints(lib.IterDataPipe[int]):
            def __init__(self, data):
                self.data = data

            @lib.runtime_validation
            def __iter__(self):
                yield from self.data
        return Ints

    for lib in (zdata, tdata):
        with pytest.raises(TypeError, match="Can not decorate function"):
            lib.runtime_validation(lambda self: iter(()))
        with lib.runtime_validation_disabled():
            assert list(make(lib)([1, "a"])) == [1, "a"]
    Ints = make(zdata)
    assert list(Ints([1, 2])) == [1, 2]              # (PyTorch 2.13: AttributeError, its type layer is off)
    with pytest.raises(RuntimeError, match="Expected an instance as subtype of int"):
        list(Ints([1, "a"]))

    class Pairs(zdata.IterDataPipe[tuple[int, str]]):
        def __init__(self, data):
            self.data = data

        @zdata.runtime_validation
        def __iter__(self):
            yield from self.data

    assert list(Pairs([(1, "a")])) == [(1, "a")]
    with pytest.raises(RuntimeError, match="subtype"):
        list(Pairs([(1, 2)]))
    with zdata.runtime_validation_disabled():
        assert list(Pairs([(1, 2)])) == [(1, 2)]
    with pytest.raises(RuntimeError):
        list(Pairs([(1, 2)]))    # on again after the block


# -- with the DataLoader ------------------------------------------------------------------------------------

def loader_items(dataset, **kwargs):
    return [plain(x) for x in DataLoader(dataset, **kwargs)]


def test_loader_deterministic_pipeline_equals_pytorch():
    ours = loader_items(ziter.IterableWrapper(range(10)).map(double).sharding_filter(), batch_size=3)
    theirs = [plain(x) for x in tdata.DataLoader(titer.IterableWrapper(range(10)).map(double).sharding_filter(),
                                                 batch_size=3)]
    assert ours == theirs


def test_loader_map_datapipe():
    dp = zmap.SequenceWrapper(np.arange(12, dtype=np.float32)).map(double)
    batches = loader_items(dp, batch_size=5)
    assert batches == [[0.0, 2.0, 4.0, 6.0, 8.0], [10.0, 12.0, 14.0, 16.0, 18.0], [20.0, 22.0]]


def test_loader_shuffle_argument_and_generator_seed():
    dp = ziter.IterableWrapper(range(16)).shuffle().sharding_filter()
    off = loader_items(dp, batch_size=None, shuffle=False)
    assert off == list(range(16))
    a = loader_items(dp, batch_size=None, shuffle=True, generator=zero.Generator(seed=3))
    b = loader_items(dp, batch_size=None, shuffle=True, generator=zero.Generator(seed=3))
    c = loader_items(dp, batch_size=None, shuffle=True, generator=zero.Generator(seed=4))
    assert a == b != c and sorted(a) == list(range(16))
    with pytest.warns(UserWarning, match="Adding one at the end"):
        added = loader_items(ziter.IterableWrapper(range(8)), batch_size=None, shuffle=True)
    assert sorted(added) == list(range(8))


def test_loader_workers_shard_one_shared_order():
    dp = ziter.IterableWrapper(range(24)).shuffle().sharding_filter().map(double)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (more workers than CPUs on a small machine)
        single = loader_items(dp, batch_size=None, generator=zero.Generator(seed=9))
        workers = loader_items(dp, batch_size=None, num_workers=2, generator=zero.Generator(seed=9))
        assert workers == single and sorted(single) == [2 * i for i in range(24)]
        loader = DataLoader(dp, batch_size=4, num_workers=2, persistent_workers=True)
        epochs = [sorted(sum((plain(b) for b in loader), [])) for _ in range(2)]
    assert epochs == [[2 * i for i in range(24)]] * 2


def test_sharding_twice_on_a_path_refused():
    dp = ziter.IterableWrapper(range(4)).sharding_filter().sharding_filter()
    with pytest.raises(RuntimeError, match="Sharding twice"):
        loader_items(dp, batch_size=None)


def outcome(action):
    try:
        return ("ok", plain(action()))
    except Exception as error:
        return (type(error).__name__, "invalidated" in str(error))


def single_iterator_scripts(it):
    """Sequences of iterator uses whose outcomes (values, or the error's type) PyTorch defines."""
    def second_iterator_invalidates_first():
        dp = it.IterableWrapper(range(5)).map(double)
        first = iter(dp)
        values = [next(first)]
        second = iter(dp)
        values.append(next(second))
        return outcome(lambda: values + [next(first)])

    def lazily_numbered():   # an iterator takes its number at its first next(), as PyTorch's
        dp = it.IterableWrapper(range(5)).map(double)
        first, second = iter(dp), iter(dp)
        values = [next(first), next(first), next(second)]
        return outcome(lambda: values + [next(first)])

    def zip_with_itself():
        dp = it.IterableWrapper(range(3)).map(double)
        return outcome(lambda: list(dp.zip(dp)))

    def fresh_iterator_after_the_end():
        dp = it.IterableWrapper(range(3)).map(double)
        return outcome(lambda: [list(dp), list(dp)])

    def fork_child_restarted():
        a, b = it.IterableWrapper(range(4)).fork(2)
        old_b = iter(b)
        values = [next(iter(a)), next(old_b)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values.append(next(iter(b)))   # b again, while a is mid-way: everything restarts
        return outcome(lambda: values + [next(old_b)])

    return [second_iterator_invalidates_first(), lazily_numbered(), zip_with_itself(),
            fresh_iterator_after_the_end(), fork_child_restarted()]


def test_single_iterator_rule_like_pytorch():
    ours, theirs = single_iterator_scripts(ziter), single_iterator_scripts(titer)
    assert ours == theirs
    assert [o[0] for o in ours] == ["RuntimeError", "RuntimeError", "RuntimeError", "ok", "RuntimeError"]


def test_errors_inside_a_pipe_name_it_like_pytorch():
    for it, name in ((ziter, "Mapper"), (titer, "MapperIterDataPipe")):
        with pytest.raises(ZeroDivisionError, match=f"thrown by __iter__ of {name}\\(") as caught:
            list(it.IterableWrapper(range(3)).map(lambda x: 1 / 0).filter(bool))
        assert str(caught.value).count("thrown by __iter__") == 1   # named once, by the innermost pipe


def test_file_pipes_like_pytorch(tmp_path):
    (tmp_path / "sub").mkdir()
    for name, text in (("b.txt", "bee\nline"), ("a.txt", "ay"), ("c.csv", "1,2"), ("sub/d.txt", "dee")):
        (tmp_path / name).write_text(text)
    root = str(tmp_path)
    for options in ({}, {"masks": "*.txt"}, {"masks": ["*.csv", "d*"], "recursive": True}, {"recursive": True}):
        ours = list(ziter.FileLister(root, **options))
        assert ours == list(titer.FileLister(root, **options)) and ours
    assert list(ziter.IterableWrapper([root, str(tmp_path / "a.txt")]).list_files(masks="a*")) == \
        [str(tmp_path / "a.txt")] * 2
    assert list(ziter.FileLister(root, abspath=True)) == list(titer.FileLister(root, abspath=True))
    for mode, chunk in (("r", None), ("b", 3), ("rt", 2)):
        results = []
        for it in (ziter, titer):
            files = it.FileLister(root, "*.txt").open_files(mode=mode)
            results.append(list(files.read_from_stream(chunk=chunk)))
        assert results[0] == results[1] and results[0]
    path, stream = next(iter(ziter.FileOpener([str(tmp_path / "a.txt")], mode="b")))
    assert stream.read() == b"ay" and not stream.closed
    stream.close()
    assert stream.file_obj.closed
    for it in (ziter, titer):
        with pytest.raises(ValueError, match="Invalid mode"):
            it.FileOpener([root], mode="w")
        with pytest.raises(ValueError, match="binary mode"):
            it.FileOpener([root], mode="b", encoding="utf-8")
        with pytest.raises(TypeError, match="valid length"):
            len(it.FileLister(root))
        assert len(it.FileLister(root, length=3)) == 3
        with pytest.raises(TypeError, match="Expected string type"):
            list(it.FileOpener([3]))
        with pytest.raises(FileNotFoundError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            list(it.FileLister(str(tmp_path / "missing")))


def test_pytorchs_addresses():
    import importlib
    import subprocess
    import sys

    assert zdata.datapipes.iter.Mapper is ziter.Mapper and zdata.datapipes.map.SequenceWrapper is zmap.SequenceWrapper
    assert sorted(ziter.__all__) == sorted(n for n in titer.__all__ if n != "RoutedDecoder")
    assert sorted(zmap.__all__) == sorted(tmap.__all__)
    assert importlib.import_module("zero.utils.data.datapipes.iter") is ziter
    # a fresh interpreter reaching them by attribute only (no import statement for the submodules)
    code = ("import zero; d = zero.utils.data; "
            "print(d.datapipes.iter.IterableWrapper([1]).map(abs).batch(1).__class__.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "Batcher"
