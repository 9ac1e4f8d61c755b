"""default_collate and default_convert: PyTorch's rules, recursively; PyTorch itself as an optional oracle."""
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import zero
from zero.data import default_collate, default_convert
from zero.data.collate import collate, default_collate_fn_map

Point = namedtuple("Point", ["x", "y"])


def test_leaves():
    t = default_collate([zero.tensor([1.0, 2.0]), zero.tensor([3.0, 4.0])])
    assert t.shape == (2, 2) and t.dtype is zero.float32 and t.numpy().tolist() == [[1, 2], [3, 4]]
    a = default_collate([np.array([1, 2], dtype=np.uint8), np.array([3, 4], dtype=np.uint8)])
    assert a.dtype is zero.uint8 and a.numpy().tolist() == [[1, 2], [3, 4]]
    s = default_collate([np.float32(1.5), np.float32(2.5)])
    assert s.dtype is zero.float32 and s.shape == (2,)
    assert default_collate([np.array(1.0), np.array(2.0)]).dtype is zero.float64
    f = default_collate([1.0, 2])
    assert f.dtype is zero.float64 and f.numpy().tolist() == [1.0, 2.0]
    i = default_collate([1, 2, 3])
    assert i.dtype is zero.int64 and i.numpy().tolist() == [1, 2, 3]
    assert default_collate([True, False]).dtype is zero.bool
    assert default_collate(["a", "b"]) == ["a", "b"] and default_collate([b"a", b"b"]) == [b"a", b"b"]


def test_nested_structures():
    batch = [{"image": np.full((2,), i, dtype=np.float32), "meta": (i, f"name{i}"), "p": Point(i, [i, -i])}
             for i in range(3)]
    out = default_collate(batch)
    assert set(out) == {"image", "meta", "p"}
    assert out["image"].shape == (3, 2) and out["image"].numpy()[:, 0].tolist() == [0, 1, 2]
    ids, names = out["meta"]  # a tuple becomes a list, position by position
    assert isinstance(out["meta"], list) and ids.numpy().tolist() == [0, 1, 2] and names == ["name0", "name1",
                                                                                            "name2"]
    assert isinstance(out["p"], Point) and out["p"].x.numpy().tolist() == [0, 1, 2]
    plus, minus = out["p"].y  # a list stays a list
    assert isinstance(out["p"].y, list) and plus.numpy().tolist() == [0, 1, 2] and minus.numpy().tolist() == [0, -1,
                                                                                                             -2]


def test_mapping_and_sequence_types_are_kept():
    out = default_collate([OrderedDict(b=1, a=2), OrderedDict(b=3, a=4)])
    assert isinstance(out, OrderedDict) and list(out) == ["b", "a"] and out["a"].numpy().tolist() == [2, 4]

    class Row(list):
        pass

    rows = default_collate([Row([1, 2]), Row([3, 4])])
    assert type(rows) is Row and [r.numpy().tolist() for r in rows] == [[1, 3], [2, 4]]
    ranges = default_collate([range(2), range(2)])  # a sequence that cannot be rebuilt: a list
    assert isinstance(ranges, list) and ranges[1].numpy().tolist() == [1, 1]


def test_errors():
    with pytest.raises(TypeError, match="found <class 'NoneType'>"):
        default_collate([None, None])
    with pytest.raises(TypeError, match="dtype <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="same length; got lengths \\[2, 1\\]"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="same shape"):
        default_collate([zero.zeros(2), zero.zeros(3)])


def test_the_map_can_be_extended():
    class Box:
        def __init__(self, v):
            self.v = v

    fn_map = dict(default_collate_fn_map)
    fn_map[Box] = lambda batch, *, collate_fn_map: sum(b.v for b in batch)
    assert collate([(Box(1), 2), (Box(3), 4)], collate_fn_map=fn_map)[0] == 4


def test_default_convert():
    converted = default_convert({"a": np.arange(3), "b": (np.float32(2.0), 5, "s"), "c": [np.ones(1)]})
    assert isinstance(converted["a"], zero.Tensor) and converted["a"].numpy().tolist() == [0, 1, 2]
    scalar, number, text = converted["b"]
    assert isinstance(converted["b"], list) and isinstance(scalar, zero.Tensor) and scalar.shape == ()
    assert number == 5 and text == "s" and isinstance(converted["c"][0], zero.Tensor)
    strings = np.array(["x"])
    assert default_convert(strings) is strings
    t = zero.ones(2)
    assert default_convert(t) is t and default_convert(Point(np.ones(1), 1)).y == 1


def test_default_convert_shares_the_array():
    array = np.zeros(3, dtype=np.float32)
    default_convert(array).numpy()[0] = 7.0  # as torch.as_tensor: no copy
    assert array[0] == 7.0


# -- PyTorch as an oracle ------------------------------------------------------------------------------
def _structure(value):
    """A comparable picture of a collated batch: containers by type name, tensors by dtype, shape, values."""
    if hasattr(value, "numpy") and hasattr(value, "dtype"):
        return ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape), value.numpy().tolist())
    if isinstance(value, dict):
        return (type(value).__name__, {k: _structure(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_structure(v) for v in value])
    return value


SAMPLES = [
    [(np.arange(3, dtype=np.float32) + i, i) for i in range(4)],
    [{"x": [i, float(i)], "y": {"z": np.int64(i)}, "s": str(i)} for i in range(3)],
    [Point(np.ones((2, 2)) * i, True) for i in range(2)],
    [[1.5, 2], [3.5, 4]],
]


@pytest.mark.parametrize("batch", SAMPLES)
def test_default_collate_gives_what_pytorch_gives(batch):
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate
    from torch.utils.data import default_convert as torch_convert

    assert _structure(default_collate(batch)) == _structure(torch_collate(batch))
    assert _structure(default_convert(batch)) == _structure(torch_convert(batch))
    zero_tensors = [zero.tensor([float(i), 2.0]) for i in range(3)]
    torch_tensors = [torch.tensor([float(i), 2.0]) for i in range(3)]
    assert _structure(default_collate(zero_tensors)) == _structure(torch_collate(torch_tensors))
