"""Checkpoints: round trips, files other tools can read, clear errors, atomic writes."""
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy
from hypothesis import given, settings
from hypothesis import strategies as st

import zero
from zero.errors import DataError
from zero.serialization import atomic_write, load, save

DTYPES = [zero.float32, zero.float64, zero.float16, zero.int32, zero.int64, zero.uint8, zero.bool]


def _values(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    if dtype is zero.bool:
        return rng.random(shape) > 0.5
    if dtype.is_floating_point:
        return rng.standard_normal(shape).astype(dtype.numpy)
    return rng.integers(0, 200, size=shape).astype(dtype.numpy)


def _plain(obj):
    """obj with tensors replaced by ('tensor', dtype name, values) for comparison."""
    if isinstance(obj, zero.Tensor):
        return ("tensor", obj.dtype.name, obj.shape, obj.numpy().tolist())
    if isinstance(obj, np.ndarray):
        return ("ndarray", str(obj.dtype), obj.shape, obj.tolist())
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    if isinstance(obj, tuple):
        return ("tuple", [_plain(v) for v in obj])
    return (type(obj).__name__, obj)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_tensor_round_trip_every_dtype(tmp_path, dtype):
    values = _values(dtype)
    path = tmp_path / "t.safetensors"
    save(zero.tensor(values, dtype=dtype), path)
    loaded = load(path)
    assert isinstance(loaded, zero.Tensor)
    assert loaded.dtype is dtype and loaded.device == "cpu"
    np.testing.assert_array_equal(loaded.numpy(), values)


def test_zero_dim_and_empty_tensors(tmp_path):
    obj = {"scalar": zero.tensor(2.5), "empty": zero.zeros(0, 3, dtype=zero.int64)}
    save(obj, tmp_path / "c")
    loaded = load(tmp_path / "c")
    assert loaded["scalar"].shape == () and loaded["scalar"].item() == 2.5
    assert loaded["empty"].shape == (0, 3) and loaded["empty"].dtype is zero.int64


def test_views_and_non_contiguous_tensors(tmp_path):
    base = zero.arange(24, dtype=zero.float32).reshape(4, 6)
    views = {"t": base.t(), "rows": base[1:3], "strided": base[:, ::2], "column": base[:, 4]}
    assert not views["t"].is_contiguous() and not views["strided"].is_contiguous()
    save(views, tmp_path / "v")
    loaded = load(tmp_path / "v")
    for name, view in views.items():
        assert loaded[name].shape == view.shape
        np.testing.assert_array_equal(loaded[name].numpy(), np.asarray(view), err_msg=name)
    # tensors that shared storage come back as independent copies
    loaded["t"][0, 0] = 100.0
    assert loaded["rows"].numpy()[0, 0] == 6.0 and base.numpy()[0, 0] == 0.0


def test_nested_state_dict_with_int_keys(tmp_path):
    zero.manual_seed(3)
    generator = zero.Generator(seed=12345)
    generator.numpy.standard_normal(7)  # move the state along: its 128-bit ints must survive
    state = {
        "model": {"fc1.weight": zero.randn(4, 3), "fc1.bias": zero.zeros(4)},
        "optimizer": {
            "state": {0: {"step": 10, "exp_avg": zero.ones(4, 3), "exp_avg_sq": zero.ones(4, 3) * 2},
                      1: {"step": 10, "exp_avg": zero.zeros(4), "exp_avg_sq": zero.zeros(4)}},
            "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "weight_decay": 0.01, "params": [0, 1],
                              "nesterov": False, "name": None}],
        },
        "rng": generator.get_state(),
        "epoch": 2,
        "history": [1.5, float("inf"), -0.0],
        "mixed_keys": {1: "int", 1.5: "float", "s": "str", None: "none", False: "bool"},
        "tagged": {"__tensor__": "not a tensor", "__tuple__": [1]},
    }
    save(state, tmp_path / "state.safetensors")
    loaded = load(tmp_path / "state.safetensors")
    assert _plain(loaded) == _plain(state)
    assert list(loaded["optimizer"]["state"]) == [0, 1]
    assert isinstance(loaded["optimizer"]["param_groups"][0]["betas"], tuple)
    restored = zero.Generator(seed=0)
    restored.set_state(loaded["rng"])
    np.testing.assert_array_equal(restored.numpy.standard_normal(5), generator.numpy.standard_normal(5))


def test_readable_by_safetensors_without_zero(tmp_path):
    weight = zero.randn(5, 3)
    obj = {"model": {"fc1.weight": weight, "fc1.bias": zero.zeros(5)},
           "optimizer": {"state": {0: {"exp_avg": zero.ones(2)}}}, "step": 7}
    save(obj, tmp_path / "ckpt.safetensors")
    arrays = safetensors.numpy.load_file(str(tmp_path / "ckpt.safetensors"))
    assert set(arrays) == {"model.fc1.weight", "model.fc1.bias", "optimizer.state.0.exp_avg"}
    np.testing.assert_array_equal(arrays["model.fc1.weight"], weight.numpy())


def test_plain_safetensors_file_loads_as_flat_dict(tmp_path):
    path = tmp_path / "foreign.safetensors"
    safetensors.numpy.save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, str(path))
    loaded = load(path)
    assert list(loaded) == ["w"] and loaded["w"].dtype is zero.float32
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(6).reshape(2, 3))


def test_key_collisions_and_arrays_and_grad_flags(tmp_path):
    a, b = zero.ones(2), zero.zeros(2)
    w = zero.randn(3, requires_grad=True)
    array = np.arange(4, dtype=np.int16)
    save({"a.b": a, "a": {"b": b}, "w": w, "array": array}, tmp_path / "c")
    loaded = load(tmp_path / "c")
    assert loaded["a.b"].numpy().tolist() == [1.0, 1.0] and loaded["a"]["b"].numpy().tolist() == [0.0, 0.0]
    assert loaded["w"].requires_grad and not loaded["a.b"].requires_grad
    assert isinstance(loaded["array"], np.ndarray) and loaded["array"].dtype == np.int16
    assert loaded["array"].tolist() == [0, 1, 2, 3]


def test_map_location(tmp_path):
    save({"x": zero.ones(2)}, tmp_path / "c")
    loaded = load(tmp_path / "c", map_location="cpu")
    assert loaded["x"].device == "cpu" and loaded["x"].numpy().tolist() == [1.0, 1.0]


json_keys = st.one_of(st.text(max_size=8), st.integers(), st.booleans(), st.none())
json_leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                        st.floats(allow_nan=False))
structures = st.recursive(
    json_leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(inner, max_size=4).map(tuple),
                            st.dictionaries(json_keys, inner, max_size=4)),
    max_leaves=20)


@settings(max_examples=40, deadline=None)
@given(structures)
def test_any_json_structure_round_trips(tmp_path_factory, obj):
    path = tmp_path_factory.mktemp("h") / "c"
    save({"value": obj, "t": zero.ones(1)}, path)
    assert _plain(load(path)["value"]) == _plain(obj)


# -- errors -----------------------------------------------------------------------------------


def test_unsupported_type_names_the_place(tmp_path):
    with pytest.raises(TypeError, match=r"obj\['opt'\]\['state'\]\[0\]\[1\].*function.*cannot be pickled"):
        save({"opt": {"state": {0: [1, lambda: 0]}}}, tmp_path / "c")  # (any object pickle can store is pickled)
    with pytest.raises(TypeError, match=r"key \(1, 2\).*obj\['a'\]"):
        save({"a": {(1, 2): 3}}, tmp_path / "c")
    assert not (tmp_path / "c").exists() and list(tmp_path.iterdir()) == []


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.safetensors"):
        load(tmp_path / "nope.safetensors")


def test_not_a_checkpoint(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("these are not the weights you are looking for\n" * 3)
    with pytest.raises(DataError, match="notes.txt.*not a safetensors"):
        load(path)
    path.write_bytes(b"abc")
    with pytest.raises(DataError, match="notes.txt.*3 bytes"):
        load(path)


@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "good.safetensors"
    save({"w": zero.arange(1000, dtype=zero.float32), "step": 3}, path)
    return path


@pytest.mark.parametrize("keep", [0, 5, 8, 40, -1, -100])
def test_truncated_file(checkpoint, keep):
    data = checkpoint.read_bytes()
    checkpoint.write_bytes(data[:keep] if keep >= 0 else data[:len(data) + keep])
    with pytest.raises(DataError, match=r"good\.safetensors") as info:
        load(checkpoint)
    assert "truncated" in str(info.value) or keep < 8


def test_corrupt_tensor_bytes_fail_the_crc(checkpoint):
    data = bytearray(checkpoint.read_bytes())
    data[-10] ^= 0xFF  # inside the tensor data
    checkpoint.write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"good\.safetensors.*'w'.*CRC-32"):
        load(checkpoint)


def test_corrupt_header(checkpoint):
    data = bytearray(checkpoint.read_bytes())
    data[9] = ord("#")  # the first character of the JSON header
    checkpoint.write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"good\.safetensors.*not valid JSON"):
        load(checkpoint)


def test_extra_bytes_at_the_end(checkpoint):
    checkpoint.write_bytes(checkpoint.read_bytes() + b"junk")
    with pytest.raises(DataError, match=r"good\.safetensors.*4 bytes after"):
        load(checkpoint)


# -- atomic writes ----------------------------------------------------------------------------


def test_failed_write_keeps_the_old_file_and_removes_the_temporary(checkpoint, monkeypatch):
    before = checkpoint.read_bytes()

    def failing_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk on fire"):
        save({"w": zero.zeros(5)}, checkpoint)
    monkeypatch.undo()
    assert checkpoint.read_bytes() == before
    assert [p.name for p in checkpoint.parent.iterdir()] == [checkpoint.name]


def test_atomic_write_refused_inside_the_block(tmp_path):
    target = tmp_path / "file.bin"
    target.write_bytes(b"old")
    with pytest.raises(ValueError, match="bad"):
        with atomic_write(target) as f:
            f.write(b"new and partial")
            raise ValueError("bad")
    assert target.read_bytes() == b"old" and list(tmp_path.iterdir()) == [target]
    with atomic_write(target) as f:
        f.write(b"new")
    assert target.read_bytes() == b"new" and list(tmp_path.iterdir()) == [target]


_WRITER = textwrap.dedent("""
    import os, sys, time
    import zero
    from zero.serialization import save

    target, ready = sys.argv[1], sys.argv[2]
    real_write, calls = os.write, [0]

    def stalling_write(fd, data):
        calls[0] += 1
        if calls[0] == 3:  # two chunks are in the temporary file: tell the parent, then hang
            with open(ready, "w") as f:
                f.write("ready")
            time.sleep(3600)
        return real_write(fd, data)

    os.write = stalling_write
    save({"w": zero.ones(4 << 20, dtype=zero.float32), "step": 2}, target)  # 16 MiB
""")


def test_writer_killed_mid_write_leaves_previous_checkpoint(tmp_path):
    target = tmp_path / "ckpt.safetensors"
    save({"w": zero.arange(10, dtype=zero.float32), "step": 1}, target)
    before = target.read_bytes()
    ready = tmp_path / "ready"
    child = subprocess.Popen([sys.executable, "-c", _WRITER, str(target), str(ready)])
    try:
        deadline = time.monotonic() + 300  # generous: only a guard against a hung test
        while not ready.exists():
            assert child.poll() is None, "the writer exited before reaching the middle of its write"
            assert time.monotonic() < deadline, "the writer never reached the middle of its write"
            time.sleep(0.05)
        temporaries = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert len(temporaries) == 1 and 0 < temporaries[0].stat().st_size < (4 << 20) * 4
        assert target.read_bytes() == before  # mid-write, the target is still the old file
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    assert target.read_bytes() == before
    loaded = load(target)
    assert loaded["step"] == 1 and loaded["w"].numpy().tolist() == list(range(10))


def test_file_mode_is_like_a_plain_write(tmp_path):
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    save(zero.ones(1), tmp_path / "ckpt")
    assert (tmp_path / "ckpt").stat().st_mode & 0o777 == plain.stat().st_mode & 0o777


def test_header_metadata_is_json(checkpoint):
    data = checkpoint.read_bytes()
    length = int.from_bytes(data[:8], "little")
    metadata = json.loads(data[8:8 + length])["__metadata__"]
    assert metadata["format"] == "zero"
    assert json.loads(metadata["zero.structure"]) == {"w": {"__tensor__": "w"}, "step": 3}


def test_path_objects_and_strings(tmp_path):
    save(zero.ones(2), str(tmp_path / "a"))
    save(zero.ones(2), Path(tmp_path / "b"))
    assert load(str(tmp_path / "a")).numpy().tolist() == load(tmp_path / "b").numpy().tolist()


# -- the whole-file checksum ------------------------------------------------------------------


def _header_length(data: bytes) -> int:
    return int.from_bytes(data[:8], "little")


def test_a_bit_flipped_in_any_byte_of_the_header_is_caught(tmp_path):
    """The issue's finding: flipping bits in the JSON header loaded silently in 33 of 300 trials.
    Here one bit of every byte of the length prefix and the header (bit i % 8 of byte i, so
    every bit position occurs), and of a sample of the data, is flipped."""
    path = tmp_path / "c.safetensors"
    save({"model": {"w": zero.arange(6, dtype=zero.float32)}, "step": 50, "lr": 1e-3, "name": "run"}, path)
    good = path.read_bytes()
    length = _header_length(good)
    positions = list(range(8 + length)) + list(range(8 + length, len(good), 5))
    silent = []
    for position in positions:
        bit = position % 8
        data = bytearray(good)
        data[position] ^= 1 << bit
        path.write_bytes(bytes(data))
        try:
            load(path)
        except DataError:
            continue
        silent.append((position, bit))
    assert not silent, f"{len(silent)} flips loaded silently, the first at (byte, bit) {silent[:5]}"


def test_an_edited_step_is_refused_and_the_header_named(checkpoint):
    data = checkpoint.read_bytes()
    edited = data.replace(b'\\"step\\":3', b'\\"step\\":9')
    assert edited != data and len(edited) == len(data)
    checkpoint.write_bytes(edited)
    with pytest.raises(DataError, match=r"good\.safetensors.*SHA-256.*header was changed"):
        load(checkpoint)


def test_flipped_tensor_bytes_name_the_tensor(checkpoint):
    data = bytearray(checkpoint.read_bytes())
    data[-10] ^= 0x01
    checkpoint.write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"SHA-256.*tensor 'w'.*CRC-32"):
        load(checkpoint)


def test_every_dtype_and_shape_stays_readable_by_safetensors(tmp_path):
    """Zero writes the safetensors bytes itself: the library must still read them exactly."""
    obj = {f"{d.name}": zero.tensor(_values(d), dtype=d) for d in DTYPES}
    obj.update(scalar=zero.tensor(1.5), empty=zero.zeros(0, 3), flag=zero.tensor(True))
    save(obj, tmp_path / "c.safetensors")
    data = (tmp_path / "c.safetensors").read_bytes()
    assert (8 + _header_length(data)) % 8 == 0
    arrays = safetensors.numpy.load_file(str(tmp_path / "c.safetensors"))
    assert set(arrays) == set(obj)
    for key, t in obj.items():
        assert arrays[key].dtype == t.numpy().dtype and arrays[key].shape == t.shape, key
        np.testing.assert_array_equal(arrays[key], t.numpy(), err_msg=key)


def _format_1_file(path, obj_structure: dict, arrays: dict) -> None:
    """A checkpoint as Zero wrote them before the whole-file checksum (format "1")."""
    import zlib
    metadata = {"format": "zero", "zero.checkpoint": "1", "zero.structure": json.dumps(obj_structure),
                "zero.crc32": json.dumps({k: zlib.crc32(a.tobytes()) for k, a in arrays.items()})}
    safetensors.numpy.save_file(arrays, str(path), metadata=metadata)


def test_format_1_checkpoints_load_with_a_warning(tmp_path):
    path = tmp_path / "old.safetensors"
    _format_1_file(path, {"w": {"__tensor__": "w"}, "step": 7}, {"w": np.arange(3, dtype=np.float32)})
    with pytest.warns(UserWarning, match=r"old\.safetensors.*format 1.*header is not"):
        loaded = load(path)
    assert loaded["step"] == 7 and loaded["w"].numpy().tolist() == [0.0, 1.0, 2.0]


def test_other_formats_are_refused(tmp_path):
    path = tmp_path / "new.safetensors"
    save({"w": zero.ones(2)}, path)
    data = path.read_bytes().replace(b'"zero.checkpoint":"2"', b'"zero.checkpoint":"9"')
    path.write_bytes(data)
    with pytest.raises(DataError, match=r"new\.safetensors.*format '9'.*reads formats '2', '1'"):
        load(path)


# -- orphaned temporaries ---------------------------------------------------------------------


def test_the_next_save_removes_temporaries_a_killed_writer_left(tmp_path):
    target = tmp_path / "ckpt.safetensors"
    orphans = [tmp_path / ".ckpt.safetensors.abc123.tmp", tmp_path / ".ckpt.safetensors.x.tmp"]
    for orphan in orphans:
        orphan.write_bytes(b"half a checkpoint")
    other = tmp_path / ".other.safetensors.abc.tmp"  # another file's: not ours to remove
    other.write_bytes(b"")
    save({"w": zero.ones(2)}, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name, target.name]


def test_a_temporary_being_written_is_left_alone(tmp_path):
    import fcntl
    live = tmp_path / ".ckpt.safetensors.live.tmp"
    live.write_bytes(b"being written")
    with open(live, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # what a live writer holds
        save({"w": zero.ones(2)}, tmp_path / "ckpt.safetensors")
        assert live.exists()
    save({"w": zero.ones(2)}, tmp_path / "ckpt.safetensors")
    assert not live.exists()


# -- file objects and PyTorch's load arguments -------------------------------------------------


def test_save_and_load_through_a_bytes_buffer():
    buffer = io.BytesIO()
    zero.save({"w": zero.arange(6.0).reshape(2, 3), "step": 7}, buffer)
    buffer.seek(0)
    loaded = zero.load(buffer, map_location="cpu", weights_only=True)
    assert loaded["step"] == 7 and loaded["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_save_into_an_open_file_loads_from_its_path(tmp_path):
    with open(tmp_path / "ckpt.pt", "wb") as f:
        zero.save(zero.ones(3), f)
    assert zero.load(tmp_path / "ckpt.pt").tolist() == [1.0, 1.0, 1.0]
    with open(tmp_path / "ckpt.pt", "rb") as f:
        assert zero.load(f, weights_only=False, mmap=False).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("map_location", [lambda storage, location: storage, {"cuda:0": "cpu"}, {"cpu": "cpu"},
                                          zero.device("cpu")], ids=["function", "dict-other", "dict-cpu", "device"])
def test_map_location_forms_that_pytorch_scripts_use(map_location):
    buffer = io.BytesIO()
    zero.save({"w": zero.ones(2)}, buffer)
    buffer.seek(0)
    loaded = zero.load(buffer, map_location=map_location)
    assert loaded["w"].device == zero.device("cpu") and loaded["w"].tolist() == [1.0, 1.0]


def test_map_location_function_sees_each_tensor():
    buffer = io.BytesIO()
    zero.save({"a": zero.ones(2), "b": zero.zeros(1)}, buffer)
    buffer.seek(0)
    loaded = zero.load(buffer, map_location=lambda t, location: t + 1)
    assert loaded["a"].tolist() == [2.0, 2.0] and loaded["b"].tolist() == [1.0]


def test_text_file_objects_are_refused_by_name(tmp_path):
    with open(tmp_path / "ckpt.pt", "w") as f, pytest.raises(TypeError, match="ckpt.pt is a text file object"):
        zero.save(zero.ones(1), f)
    (tmp_path / "other.pt").write_text("not a checkpoint")
    with open(tmp_path / "other.pt") as f, pytest.raises(TypeError, match="binary mode"):
        zero.load(f)


def test_a_damaged_buffer_is_named_in_the_error():
    buffer = io.BytesIO()
    zero.save(zero.ones(4), buffer)
    damaged = io.BytesIO(buffer.getvalue()[:-3])
    with pytest.raises(DataError, match="<BytesIO>: truncated"):
        zero.load(damaged)
