"""The CUDA path in a fresh process, as a first GPU run would take it, without a GPU.

Collecting the other tests imports ``zero.backends.cuda.kernels`` directly, which hid a
RecursionError on the first CUDA op of a fresh process (issue 9, item 1). Here a new
interpreter, without Triton's interpreter, goes through ``Device("cuda")`` the way
``zero.zeros(..., device="cuda")`` and every op do -- on a machine without a GPU, on a
fake one (``fake_gpu.py``: made-up device memory, cuda:0 reported present; nothing can
run). It checks

- that ``Device("cuda").kernels`` is reached, and offers the kernel contract exactly, as
  the CPU's table does (``zero.backends.kernel_contract.differences``);
- that ops on CUDA tensors reach their Triton kernels with the launch configuration a
  GPU run would use: grids, block sizes and warps, and pointer arguments that Triton
  accepts (device addresses inside the tensors' allocations, typed by their dtype).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cupy")
pytest.importorskip("triton")

from conftest import ON_GPU  # (tests/backends/cuda/conftest.py)

HERE = Path(__file__).parent
FAKE_GPU = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from fake_gpu import fake_gpu
runtime = fake_gpu(setattr)
"""


def run_fresh(code: str, fake: bool = True) -> dict:
    """Run ``code`` in a new interpreter without TRITON_INTERPRET, on the fake GPU unless
    ``fake`` is False; the JSON it prints last."""
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "ZERO_FAST_MATMUL")}
    script = (FAKE_GPU if fake else "") + "import json, sys\nimport zero\n" + code
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


KERNEL_TABLE = """
from zero.backends.kernel_contract import differences, table_of

cuda = zero.Device("cuda")
kernels = cuda.kernels
print(json.dumps({"cuda": differences(kernels), "cpu": differences(zero.Device("cpu").kernels),
                  "count": len(table_of(kernels)), "module": kernels.__name__,
                  "same": kernels is sys.modules["zero.backends.cuda"].kernels}))
"""


def test_a_fresh_process_reaches_the_cuda_kernels_and_they_match_the_cpu_table():
    found = run_fresh(KERNEL_TABLE, fake=not ON_GPU)   # on a GPU machine, the real device
    assert found["module"] == "zero.backends.cuda.kernels" and found["same"]
    assert found["cuda"] == [] and found["cpu"] == [], "a table departs from the kernel contract"
    assert found["count"] > 150


LAUNCHES = """
from triton.runtime.jit import mangle_type
from zero.backends.cuda.kernels import _launch
from zero.nn import functional as F

launches = []

def record(kernel, grid, args, meta):
    arguments = [_launch._argument(a) for a in args]
    pointers = [(a.data_ptr(), mangle_type(a)) for a in arguments if hasattr(a, "data_ptr")]
    scalars = {p.name: p.annotation_type or mangle_type(a) for p, a in zip(kernel.params, arguments)
               if not hasattr(a, "data_ptr")}   # the types Triton compiles the scalar arguments with
    launches.append({"kernel": kernel.fn.__name__, "grid": list(grid), "pointers": pointers, "scalars": scalars,
                     "meta": {k: v for k, v in meta.items() if isinstance(v, (int, str, bool))}})

_launch.recorder = record
batch, length, width, heads = 2, 70, 384, 6
x = zero.empty(batch, length, width, device="cuda")
weight, bias = zero.empty(width, device="cuda"), zero.empty(width, device="cuda")
F.layer_norm(x, (width,), weight, bias)
F.layer_norm(zero.empty(3, 16, device="cuda", dtype=zero.float64), (16,), eps=1e-5)
F.softmax(zero.empty(batch * heads, length, length, device="cuda"), -1)
F.gelu(x)
F.dropout(x, 0.1, training=True)
q, k, v = (zero.empty(batch, heads, length, width // heads, device="cuda", dtype=zero.float64) for _ in range(3))
F.scaled_dot_product_attention(q, k, v, is_causal=True)
allocations = [[address, size] for address, size in runtime.allocated.items()]
print(json.dumps({"launches": launches, "allocations": allocations}))
"""


@pytest.mark.skipif(ON_GPU, reason="fakes, without a GPU, what a GPU run has for real")
def test_ops_in_a_fresh_process_launch_triton_kernels_with_a_gpu_run_s_configuration():
    found = run_fresh(LAUNCHES)
    norm, norm64 = found["launches"][:2]
    launches = {launch["kernel"]: launch for launch in found["launches"][1:]}
    assert list(launches) == ["layer_norm_forward_kernel", "softmax_forward_kernel", "gelu_forward_kernel",
                              "dropout_kernel", "attention_forward_kernel"]
    rows, width = 2 * 70, 384
    assert norm["grid"] == [rows] and norm["meta"]["BLOCK"] == 512 and norm["meta"]["num_warps"] == 2
    assert norm64["grid"] == [3] and norm64["meta"]["BLOCK"] == 16
    assert norm64["scalars"]["eps"] == "fp64", "a float64 layer norm would add a float32 eps"
    softmax = launches["softmax_forward_kernel"]
    assert softmax["grid"] == [12 * 70] and softmax["meta"]["BLOCK"] == 128 and softmax["meta"]["LOG"] is False
    assert launches["gelu_forward_kernel"]["grid"] == [-(-rows * width // 1024)]
    attention = launches["attention_forward_kernel"]
    assert attention["grid"] == [2, 12] and attention["meta"]["BLOCK_E"] == 64   # 70 rows in 64-row tiles, G = 12
    for launch in found["launches"]:
        for address, kind in launch["pointers"]:
            assert any(start <= address < start + size for start, size in found["allocations"]), (
                f"{launch['kernel']}: pointer {address:#x} outside every allocation")
            assert kind in ("*fp32", "*fp64", "*i64"), (launch["kernel"], kind)
    assert {kind for _, kind in attention["pointers"]} == {"*fp64"}


SPECIALIZER = """
at_start = "torch" in sys.modules
from zero.backends.cuda import triton_driver
triton_driver.set_up_specializer_without_torch()
from triton._C.libtriton import native_specialize_impl
print(json.dumps({"at_start": at_start, "int": native_specialize_impl(None, 7, False, True, True),
                  "torch": "torch" in sys.modules}))
"""


def test_triton_s_argument_specializer_is_set_up_without_importing_torch():
    """Triton 3.6's native specializer imports torch on its first call (the first GPU run saw
    it); Zero runs that first call with torch hidden."""
    found = run_fresh(SPECIALIZER, fake=False)
    if found["at_start"]:
        pytest.skip("this interpreter loads torch at start-up, before any of Zero")
    assert found == {"at_start": False, "int": ["i32", ""], "torch": False}
