"""The MNIST downloader against a local HTTP server (127.0.0.1) serving files the test makes."""
import gzip
import hashlib
import http.server
import re
import socket
import threading

import numpy as np
import pytest

from zero.data import download as download_module
from zero.data.download import download_mnist
from zero.data.idx import encode_idx, read_idx
from zero.errors import DataError

NAMES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
         "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


def fake_files() -> dict:
    rng = np.random.default_rng(1)
    files = {}
    for name in NAMES:
        shape = (4, 28, 28) if "images" in name else (4,)
        files[name] = gzip.compress(encode_idx(rng.integers(0, 256, size=shape, dtype=np.uint8)), mtime=0)
    return files


class Server:
    """Serves ``routes[path] -> bytes`` (or an int: that HTTP status) and records every request."""

    def __init__(self):
        self.routes = {}
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append(self.path)
                body = server.routes.get(self.path, 404)
                if callable(body):
                    body = body()
                if isinstance(body, int):
                    self.send_error(body)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture
def refused_url():
    """A port that refuses connections: bound but not listening, for the whole test."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/mnist/"
    sock.close()


@pytest.fixture
def files():
    data = fake_files()
    return data, {name: hashlib.sha256(body).hexdigest() for name, body in data.items()}


def serve(server, prefix, data):
    for name, body in data.items():
        server.routes[f"{prefix}{name}"] = body


def test_downloads_and_verifies(tmp_path, server, files):
    data, checksums = files
    serve(server, "/good/", data)
    messages = []
    dest = download_mnist(tmp_path / "mnist", mirrors=[server.base + "/good/"], checksums=checksums,
                          backoff=0, log=messages.append)
    assert dest == tmp_path / "mnist"
    assert sorted(p.name for p in dest.iterdir()) == sorted(NAMES)  # no temporary files left over
    for name in NAMES:
        assert (dest / name).read_bytes() == data[name]
    assert read_idx(dest / "train-images-idx3-ubyte.gz").shape == (4, 28, 28)
    assert sum("SHA-256 verified" in m for m in messages) == 4
    # a second run finds the files in place and fetches nothing
    server.requests.clear()
    download_mnist(dest, mirrors=[server.base + "/good/"], checksums=checksums, backoff=0)
    assert server.requests == []


def test_corrupted_file_moves_on_to_the_next_mirror(tmp_path, server, files):
    data, checksums = files
    bad = dict(data)
    bad["train-labels-idx1-ubyte.gz"] = data["train-labels-idx1-ubyte.gz"] + b"junk"
    serve(server, "/bad/", bad)
    serve(server, "/good/", data)
    download_mnist(tmp_path, mirrors=[server.base + "/bad/", server.base + "/good/"], checksums=checksums,
                   backoff=0)
    assert (tmp_path / "train-labels-idx1-ubyte.gz").read_bytes() == data["train-labels-idx1-ubyte.gz"]
    assert "/good/train-labels-idx1-ubyte.gz" in server.requests
    assert "/good/train-images-idx3-ubyte.gz" not in server.requests  # the first mirror served it right


def test_corrupted_file_everywhere_is_a_clear_error(tmp_path, server, files):
    data, checksums = files
    name = "t10k-images-idx3-ubyte.gz"
    bad = dict(data)
    bad[name] = b"\x1f\x8b not what you asked for"
    serve(server, "/bad/", bad)
    with pytest.raises(DataError) as info:
        download_mnist(tmp_path, mirrors=[server.base + "/bad/"], checksums=checksums, retries=2, backoff=0)
    message = str(info.value)
    actual = hashlib.sha256(bad[name]).hexdigest()
    assert f"could not download {name}" in message
    assert f"expected {checksums[name]}, got {actual}" in message
    assert message.count(f"/bad/{name}: SHA-256 mismatch") == 2  # two rounds
    assert not (tmp_path / name).exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_mirror_down_then_a_good_one(tmp_path, server, files, refused_url):
    data, checksums = files
    serve(server, "/good/", data)
    messages = []
    download_mnist(tmp_path, mirrors=[refused_url, server.base + "/good/"], checksums=checksums, backoff=0,
                   log=messages.append)
    assert all((tmp_path / name).read_bytes() == data[name] for name in NAMES)
    assert sum("connection refused" in m for m in messages) == 4


def test_every_mirror_failing_lists_what_was_tried(tmp_path, server, files, refused_url):
    data, checksums = files
    with pytest.raises(DataError) as info:
        download_mnist(tmp_path, mirrors=[refused_url, server.base + "/missing/"], checksums=checksums,
                       retries=3, backoff=0)
    message = str(info.value)
    first = NAMES[0]
    assert f"could not download {first}" in message and "tried 6 times" in message
    assert message.count(f"{refused_url}{first}: connection refused") == 3
    assert message.count(f"/missing/{first}: HTTP 404") == 3
    assert re.search(r"round 3: ", message)


def test_transient_failure_is_retried_after_a_pause(tmp_path, server, files, monkeypatch):
    data, checksums = files
    serve(server, "/flaky/", data)
    name = "train-images-idx3-ubyte.gz"
    answers = iter([503, 503, data[name]])
    server.routes[f"/flaky/{name}"] = lambda: next(answers)
    pauses = []
    monkeypatch.setattr(download_module.time, "sleep", pauses.append)
    download_mnist(tmp_path, mirrors=[server.base + "/flaky/"], checksums=checksums, retries=3, backoff=0.5)
    assert (tmp_path / name).read_bytes() == data[name]
    assert pauses == [0.5, 1.0]  # the pause doubles each round


def test_a_wrong_file_in_place_is_replaced(tmp_path, server, files):
    data, checksums = files
    serve(server, "/good/", data)
    (tmp_path / NAMES[1]).write_bytes(b"stale")
    download_mnist(tmp_path, mirrors=[server.base + "/good/"], checksums=checksums, backoff=0)
    assert (tmp_path / NAMES[1]).read_bytes() == data[NAMES[1]]


def test_default_tables():
    assert set(download_module.MNIST_SHA256) == set(NAMES)
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in download_module.MNIST_SHA256.values())
    assert all(m.endswith("/") for m in download_module.MIRRORS)
