"""Running out of memory: the pool empties itself and tries once more before it reports,
and the report is a MemoryError that says the size asked for and what tensors hold."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from zero.backends.caching_allocator import CachingAllocator
from zero.errors import OutOfMemoryError, ZeroError

SRC = str(Path(__file__).resolve().parents[2] / "src")


class _SmallMemory:
    """A raw source with ``capacity`` bytes: a malloc beyond what is left raises MemoryError."""

    def __init__(self, capacity: int):
        self.capacity, self.used, self.handles = capacity, 0, 0

    def malloc(self, nbytes: int):
        if self.used + nbytes > self.capacity:
            raise MemoryError
        self.used += nbytes
        self.handles += 1
        return (self.handles, nbytes)

    def free(self, handle) -> None:
        self.used -= handle[1]


def _pool(capacity: int) -> CachingAllocator:
    return CachingAllocator(_SmallMemory(capacity), granularity=64, max_oversize_ratio=1.25,
                            max_oversize_bytes=4096, max_cached_bytes=1 << 40, name="test")


def test_a_failed_allocation_empties_the_pool_and_retries():
    pool = _pool(3000 << 10)
    pool.release(pool.allocate(1600 << 10))          # freed, and kept in the pool
    assert pool.cached_bytes == 1600 << 10
    block = pool.allocate(2000 << 10)                # needs the cached block's memory
    assert block.size == 2000 << 10 and pool.cached_bytes == 0 and pool.reserved_bytes == 2000 << 10


def test_the_report_says_what_was_asked_and_what_is_held():
    pool = _pool(3000 << 10)
    held = pool.allocate(1024 << 10)
    pool.release(pool.allocate(512 << 10))
    with pytest.raises(OutOfMemoryError) as e:
        pool.allocate(2 << 20)
    message = str(e.value)
    assert message == ("test out of memory: cannot allocate 2.0 MiB (2,097,152 bytes); tensors hold 1.0 MiB, and "
                       "the 512.0 KiB the pool had cached went back before a second try: free some, or use smaller "
                       "batches or a smaller model")
    assert (e.value.requested, e.value.live, e.value.cached) == (2 << 20, 1 << 20, 512 << 10)
    assert isinstance(e.value, MemoryError) and isinstance(e.value, RuntimeError) and isinstance(e.value, ZeroError)
    assert held.size == 1 << 20 and pool.live_bytes == 1 << 20   # nothing else changed


# Under an address-space limit a little above what the interpreter already maps: a 1.6 GiB
# tensor, freed, then a 2 GiB one (the pool must give the first back), then 1 TiB.
_UNDER_A_LIMIT = textwrap.dedent("""
    import resource
    import zero

    def mapped() -> int:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmSize:")) << 10

    limit = mapped() + (2800 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    a = zero.empty(1600 << 20, dtype=zero.uint8)
    del a
    b = zero.empty(2000 << 20, dtype=zero.uint8)
    print("2 GiB after 1.6 GiB: ok", zero.cpu.memory_stats()["cached_bytes"])
    del b
    try:
        zero.empty(2 ** 40, dtype=zero.uint8)
    except MemoryError as e:
        print(type(e).__name__, e)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/status are Linux's")
def test_under_an_address_space_limit():
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "2", "MALLOC_ARENA_MAX": "2"}
    run = subprocess.run([sys.executable, "-c", _UNDER_A_LIMIT], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[0] == "2 GiB after 1.6 GiB: ok 0"
    assert lines[1].startswith("OutOfMemoryError CPU out of memory: cannot allocate 1.0 TiB (1,099,511,627,776 "
                               "bytes); tensors hold ")
    assert lines[1].endswith("free some, or use smaller batches or a smaller model") and len(lines) == 2


# The job as a user meets it: the kernels loaded by a small run first (so that compiling
# them needs no memory under the limit), then a --hidden too large for what is left.
_JOB_UNDER_A_LIMIT = textwrap.dedent("""
    import resource, sys
    from zero.cli.main import main

    data = sys.argv[1]
    assert main(["mnist", "--data", data, "--hidden", "8", "--epochs", "1"]) == 0
    with open("/proc/self/status") as status:
        mapped = next(int(line.split()[1]) for line in status if line.startswith("VmSize:")) << 10
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (350 << 20), mapped + (350 << 20)))
    sys.exit(main(["mnist", "--data", data, "--hidden", "40000", "--epochs", "1"]))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/status are Linux's")
def test_a_job_out_of_memory_says_what_to_lower(tmp_path):
    import numpy as np

    from zero.data import write_idx

    rng = np.random.default_rng(0)
    for split, n in (("train", 64), ("t10k", 16)):
        write_idx(tmp_path / f"{split}-images-idx3-ubyte", rng.integers(0, 256, (n, 28, 28)).astype(np.uint8))
        write_idx(tmp_path / f"{split}-labels-idx1-ubyte", rng.integers(0, 10, n).astype(np.uint8))
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "2", "MALLOC_ARENA_MAX": "2"}
    run = subprocess.run([sys.executable, "-c", _JOB_UNDER_A_LIMIT, str(tmp_path)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 2, run.stderr[-3000:]
    err = run.stderr.strip()
    assert err.splitlines() == [err], err
    assert err.startswith("zero mnist: error: out of memory ") and "--hidden 40000" in err
    assert " asked for while tensors held " in err and err.endswith(": lower it" if "building" in err else
                                                                     ": lower them")
