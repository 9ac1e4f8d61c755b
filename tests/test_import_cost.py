"""What ``import zero`` loads: only what every program needs. Numba (half a second) waits
for the first CPU loop, the CUDA stack for the first CUDA tensor, the network and the
checkpoint format for the first download or save (see backends/cpu/kernels/_jit.py),
datasets, process groups and the profiler for their first use (zero/lazy_modules.py),
NumPy's random generators for the first draw, ml_dtypes for the first bfloat16."""
import functools
import os
import subprocess
import sys

import pytest

DEFERRED = ["numba", "cupy", "triton", "torch", "safetensors", "urllib.request", "http.client", "subprocess",
            "zero.data", "zero.distributed", "zero.profiler", "zero.serialization", "zero.nn.parallel",
            "multiprocessing", "socket", "hashlib", "json", "pathlib", "ml_dtypes", "numpy.random"]


def modules_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@functools.cache
def loaded_by_import_zero() -> frozenset[str]:
    """What ``import zero`` adds to the interpreter's own start-up, which may load some of
    these already (the GPU machine's site-packages load pathlib before any code runs)."""
    return frozenset(modules_after("import zero") - modules_after(""))


@pytest.mark.parametrize("name", DEFERRED)
def test_import_zero_leaves_heavy_modules_unloaded(name):
    assert name not in loaded_by_import_zero()


def test_first_cpu_loop_loads_numba_and_computes():
    code = ("import zero\n"
            "x = zero.tensor([[0.5, -1.0, 2.0]], requires_grad=True)\n"
            "y = zero.nn.functional.gelu(x).sum()\n"
            "y.backward()\n"
            "assert abs(y.item() - 2.14158) < 1e-4, y.item()\n")
    assert "numba" in modules_after(code)


def test_what_waits_is_there_at_its_first_use():
    code = ("import io, sys, zero\n"
            "from zero import load\n"
            "assert 'data' in dir(zero) and 'parallel' in dir(zero.nn)\n"
            "loader = zero.data.DataLoader(zero.data.TensorDataset(zero.arange(4.0)), batch_size=2)\n"
            "assert [b[0].tolist() for b in loader] == [[0.0, 1.0], [2.0, 3.0]]\n"
            "assert zero.utils.data.DataLoader is zero.data.DataLoader\n"
            "assert zero.nn.parallel.DistributedDataParallel.__name__ == 'DistributedDataParallel'\n"
            "file = io.BytesIO(); zero.save({'w': zero.ones(2)}, file); file.seek(0)\n"
            "assert load(file)['w'].tolist() == [1.0, 1.0] and zero.load is load\n"
            "zero.manual_seed(3); first = zero.randn(3).tolist(); zero.manual_seed(3)\n"
            "assert zero.randn(3).tolist() == first\n"
            "assert zero.ones(2, dtype=zero.bfloat16).numpy().dtype.name == 'bfloat16'\n"
            "try:\n"
            "    zero.no_such_name\n"
            "except AttributeError as error:\n"
            "    assert \"has no attribute 'no_such_name'\" in str(error)\n"
            "else:\n"
            "    raise AssertionError('no error')\n")
    loaded = modules_after(code)
    assert {"zero.data", "zero.serialization", "zero.nn.parallel", "numpy.random", "ml_dtypes"} <= loaded


def test_a_bfloat16_array_from_ml_dtypes_before_zero_bfloat16_is_used():
    code = ("import ml_dtypes, numpy as np, zero\n"
            "t = zero.from_numpy(np.array([1.5, 2.0], dtype=ml_dtypes.bfloat16))\n"
            "assert t.dtype is zero.bfloat16 and t.tolist() == [1.5, 2.0], (t.dtype, t.tolist())\n")
    modules_after(code)


RACE = """
import threading, time, numpy as np, numba, zero
from zero.backends.cpu.kernels import _jit, nn
real_njit = numba.njit
real_njit(lambda: 1)()            # Numba warmed up, as after an earlier compile: typing starts at once
def slow_njit(*function, **options):
    time.sleep(0.001)             # the compiling thread takes a while to make the dispatchers
    return real_njit(*function, **options)
numba.njit = slow_njit
rows = nn._softmax_rows           # a LazyJit, before anything is compiled
x = np.random.rand(4, 5).astype(np.float32)
out = np.empty_like(x)
compiling = threading.Thread(target=_jit.compile_all)
compiling.start()
while rows.dispatcher is None:    # a pool thread calls it as soon as it shows a dispatcher
    time.sleep(0.0001)
rows(x, out, False)
compiling.join()
assert np.allclose(out, np.exp(x) / np.exp(x).sum(1, keepdims=True))
"""


def test_a_loop_called_while_another_thread_compiles_finds_its_callees_compiled(tmp_path):
    # (the first loops of a process may run on the pool's threads at once: flash attention's)
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))   # compiled here, not loaded
    done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, env=environment)
    assert done.returncode == 0, done.stderr[-2000:]
