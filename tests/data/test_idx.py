"""IDX files (good, truncated, corrupt) and the MNIST dataset built on them."""
import gzip
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zero
from zero.data import idx as idx_module
from zero.data import mnist as mnist_module
from zero.data.idx import read_idx, write_idx
from zero.data.mnist import MNIST, find_mnist
from zero.errors import DataError


def _idx_bytes(type_code: int, shape, payload: bytes) -> bytes:
    """An IDX file built by hand, independently of write_idx."""
    return bytes([0, 0, type_code, len(shape)]) + b"".join(struct.pack(">I", n) for n in shape) + payload


def test_reads_a_hand_made_file(tmp_path):
    path = tmp_path / "images-idx3-ubyte"
    path.write_bytes(_idx_bytes(0x08, (2, 2, 3), bytes(range(12))))
    array = read_idx(path)
    assert array.dtype == np.uint8 and array.shape == (2, 2, 3)
    assert array.ravel().tolist() == list(range(12))


def test_big_endian_values_become_native(tmp_path):
    path = tmp_path / "x.idx"
    path.write_bytes(_idx_bytes(0x0C, (3,), struct.pack(">3i", 1, -2, 70000)))
    assert read_idx(path).tolist() == [1, -2, 70000]
    path.write_bytes(_idx_bytes(0x0E, (2,), struct.pack(">2d", 0.5, -3.25)))
    array = read_idx(path)
    assert array.tolist() == [0.5, -3.25] and array.dtype == np.float64 and array.dtype.isnative


def test_gzip_is_recognised_by_its_magic_bytes(tmp_path):
    data = _idx_bytes(0x08, (4,), bytes([9, 8, 7, 6]))
    (tmp_path / "a.gz").write_bytes(gzip.compress(data))
    (tmp_path / "no-suffix").write_bytes(gzip.compress(data))
    (tmp_path / "raw-but-named.gz").write_bytes(data)
    for name in ("a.gz", "no-suffix", "raw-but-named.gz"):
        assert read_idx(tmp_path / name).tolist() == [9, 8, 7, 6], name


@pytest.mark.parametrize("dtype", ["u1", "i1", "i2", "i4", "f4", "f8"])
@pytest.mark.parametrize("name", ["data.idx", "data.idx.gz"])
def test_write_then_read(tmp_path, dtype, name):
    array = (np.arange(24).reshape(2, 3, 4) * 3 - 20).astype(dtype)
    write_idx(tmp_path / name, array)
    assert (tmp_path / name).read_bytes()[:2] == (b"\x1f\x8b" if name.endswith(".gz") else b"\x00\x00")
    back = read_idx(tmp_path / name)
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=4), st.sampled_from(["u1", "i2", "f4", "f8"]),
       st.booleans())
def test_any_shape_round_trips(tmp_path_factory, shape, dtype, compress):
    array = np.random.default_rng(len(shape)).integers(-100, 100, size=shape).astype(dtype)
    path = tmp_path_factory.mktemp("idx") / "a"
    write_idx(path, array, compress=compress)
    np.testing.assert_array_equal(read_idx(path), array)


def test_write_header_is_the_standard_one(tmp_path):
    write_idx(tmp_path / "x", np.zeros((60, 28, 28), np.uint8))
    assert (tmp_path / "x").read_bytes()[:16] == bytes.fromhex("00000803 0000003c 0000001c 0000001c")


def test_write_rejects_types_idx_lacks(tmp_path):
    with pytest.raises(TypeError, match="int64"):
        write_idx(tmp_path / "x", np.zeros(3, np.int64))


# -- bad files --------------------------------------------------------------------------------


def test_truncated_data(tmp_path):
    path = tmp_path / "short-idx1-ubyte"
    path.write_bytes(_idx_bytes(0x08, (10,), bytes(7)))
    with pytest.raises(DataError, match=r"short-idx1-ubyte: truncated: expected 10 bytes of data.*found 7"):
        read_idx(path)


def test_trailing_bytes(tmp_path):
    path = tmp_path / "long"
    path.write_bytes(_idx_bytes(0x0B, (2, 2), bytes(8 + 3)))
    with pytest.raises(DataError, match=r"long: corrupt: 3 trailing bytes after the expected 8 bytes"):
        read_idx(path)


def test_not_an_idx_file(tmp_path):
    path = tmp_path / "page.html"
    path.write_bytes(b"<!DOCTYPE html><html>404</html>")
    with pytest.raises(DataError, match=r"page\.html: not an IDX file: it starts with bytes 3c 21 44 4f"):
        read_idx(path)


def test_unknown_type_code(tmp_path):
    path = tmp_path / "weird"
    path.write_bytes(_idx_bytes(0x0A, (1,), b"\x00"))
    with pytest.raises(DataError, match=r"weird: corrupt IDX header: unknown type code 0x0A"):
        read_idx(path)


@pytest.mark.parametrize("data,message", [
    (b"", "has 0 bytes"),
    (b"\x00\x00\x08", "has 3 bytes"),
    (bytes([0, 0, 8, 3]) + struct.pack(">I", 60000), r"3 dimensions need 12 bytes of sizes, found 4"),
])
def test_truncated_header(tmp_path, data, message):
    path = tmp_path / "cut"
    path.write_bytes(data)
    with pytest.raises(DataError, match=rf"cut: truncated.*{message}"):
        read_idx(path)


def test_huge_sizes_in_a_corrupt_header_do_not_allocate(tmp_path):
    path = tmp_path / "huge"
    path.write_bytes(_idx_bytes(0x0E, (1 << 31, 1 << 31), b"\x00" * 16))
    with pytest.raises(DataError, match=r"huge: truncated: expected 36893488147419103232 bytes.*found 16"):
        read_idx(path)


def test_truncated_and_corrupt_gzip(tmp_path):
    compressed = gzip.compress(_idx_bytes(0x08, (1000,), bytes(range(250)) * 4))
    cut = tmp_path / "cut.gz"
    cut.write_bytes(compressed[: len(compressed) // 2])
    with pytest.raises(DataError, match=r"cut\.gz: truncated"):
        read_idx(cut)
    damaged = bytearray(compressed)
    damaged[-6] ^= 0xFF  # the CRC-32 in the gzip trailer
    bad = tmp_path / "bad.gz"
    bad.write_bytes(bytes(damaged))
    with pytest.raises(DataError, match=r"bad\.gz: corrupt gzip stream"):
        read_idx(bad)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="nothing-here"):
        read_idx(tmp_path / "nothing-here")


# -- MNIST ------------------------------------------------------------------------------------


def make_fake_mnist(directory: Path, n_train=5, n_test=3, compress=True) -> dict:
    """Tiny MNIST-shaped files; returns the arrays written."""
    rng = np.random.default_rng(0)
    arrays = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        images[0, 0, :3] = (0, 51, 255)
        labels = rng.integers(0, 10, size=n, dtype=np.uint8)
        suffix = ".gz" if compress else ""
        write_idx(directory / f"{prefix}-images-idx3-ubyte{suffix}", images)
        write_idx(directory / f"{prefix}-labels-idx1-ubyte{suffix}", labels)
        arrays[prefix] = (images, labels)
    return arrays


@pytest.mark.parametrize("compress", [True, False])
def test_mnist_dataset(tmp_path, compress):
    arrays = make_fake_mnist(tmp_path, compress=compress)
    train, test = MNIST(tmp_path, train=True), MNIST(tmp_path, train=False)
    assert len(train) == 5 and len(test) == 3
    assert train.images.shape == (5, 784) and train.images.dtype is zero.float32
    assert train.labels.shape == (5,) and train.labels.dtype is zero.int64
    np.testing.assert_allclose(train.images.numpy()[0, :3], [0.0, 0.2, 1.0], rtol=1e-6)
    np.testing.assert_allclose(test.images.numpy(), arrays["t10k"][0].reshape(3, 784) / 255.0, rtol=1e-6)
    assert test.labels.numpy().tolist() == arrays["t10k"][1].tolist()
    image, label = train[2]
    assert image.shape == (784,) and label.item() == int(arrays["train"][1][2])


def test_mnist_shape_and_count_checks(tmp_path):
    make_fake_mnist(tmp_path)
    write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", np.zeros((3, 27, 28), np.uint8))
    with pytest.raises(DataError, match=r"t10k-images-idx3-ubyte\.gz: expected MNIST images.*\[3, 27, 28\]"):
        MNIST(tmp_path, train=False)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.zeros(4, np.uint8))
    with pytest.raises(DataError, match=r"5 images but .*train-labels-idx1-ubyte\.gz holds 4 labels"):
        MNIST(tmp_path, train=True)
    (tmp_path / "train-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DataError, match="no MNIST file train-labels-idx1-ubyte"):
        MNIST(tmp_path, train=True)


@pytest.fixture
def places(tmp_path, monkeypatch):
    """Empty stand-ins for $ZERO_DATA, the home directory and Debian's Fashion-MNIST."""
    home, zero_data, fashion = tmp_path / "home", tmp_path / "zero_data", tmp_path / "fashion-mnist"
    for d in (home, zero_data):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ZERO_DATA", str(zero_data))
    monkeypatch.setattr(mnist_module, "FASHION_MNIST_DIR", fashion)
    return {"home": home / ".cache" / "zero" / "mnist", "zero_data": zero_data / "mnist", "fashion": fashion}


@pytest.mark.parametrize("uid, command", [
    (0, "  apt-get update && apt-get install dataset-fashion-mnist"),
    (1000, "  sudo apt-get update && sudo apt-get install dataset-fashion-mnist")])
def test_the_install_hint_uses_sudo_only_when_not_root(places, monkeypatch, uid, command):
    monkeypatch.setattr(mnist_module.os, "geteuid", lambda: uid, raising=False)
    with pytest.raises(DataError) as info:
        find_mnist()
    assert command + "\n" in str(info.value)


def test_find_mnist_order(tmp_path, places):
    with pytest.raises(DataError) as info:
        find_mnist()
    message = str(info.value)
    for text in ("--data DIR", str(places["zero_data"]), str(places["home"]), str(places["fashion"]),
                 "dataset-fashion-mnist", "zero mnist --download"):
        assert text in message

    places["fashion"].mkdir()
    make_fake_mnist(places["fashion"])
    assert find_mnist() == (places["fashion"], "fashion-mnist")
    places["home"].mkdir(parents=True)
    make_fake_mnist(places["home"], compress=False)
    assert find_mnist() == (places["home"], "mnist")
    places["zero_data"].mkdir()
    make_fake_mnist(places["zero_data"])
    assert find_mnist() == (places["zero_data"], "mnist")
    explicit = tmp_path / "mine"
    explicit.mkdir()
    make_fake_mnist(explicit)
    assert find_mnist(explicit) == (explicit, "mnist")


def test_find_mnist_explains_incomplete_directories(tmp_path, places):
    places["home"].mkdir(parents=True)
    make_fake_mnist(places["home"])
    (places["home"] / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DataError, match=r"~/.cache/zero/mnist .*lacks t10k-labels-idx1-ubyte"):
        find_mnist()
    with pytest.raises(DataError, match=r"--data .*lacks t10k-labels-idx1-ubyte"):
        find_mnist(places["home"])  # an explicit --data never falls back to other places
    with pytest.raises(DataError, match="no such directory"):
        find_mnist(tmp_path / "absent")


@pytest.mark.skipif(not Path("/usr/share/datasets/fashion-mnist").is_dir(),
                    reason="Debian's dataset-fashion-mnist is not installed")
def test_real_fashion_mnist():
    root = "/usr/share/datasets/fashion-mnist"
    train, test = MNIST(root), MNIST(root, train=False)
    assert (len(train), len(test)) == (60000, 10000)
    images = train.images.numpy()
    assert images.min() == 0.0 and images.max() == 1.0
    assert sorted(set(test.labels.numpy().tolist())) == list(range(10))


def test_idx_types_table_matches_the_format():
    assert {code: dt.str for code, dt in idx_module.IDX_TYPES.items()} == {
        0x08: "|u1", 0x09: "|i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
