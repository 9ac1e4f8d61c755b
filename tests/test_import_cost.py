"""What ``import zero`` loads: only what every program needs. Numba (half a second) waits
for the first CPU loop, the CUDA stack for the first CUDA tensor, the network and the
checkpoint format for the first download or save (see backends/cpu/kernels/_jit.py)."""
import subprocess
import sys

import pytest

DEFERRED = ["numba", "cupy", "triton", "torch", "safetensors", "urllib.request", "http.client", "subprocess"]


def modules_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("name", DEFERRED)
def test_import_zero_leaves_heavy_modules_unloaded(name):
    assert name not in modules_after("import zero")


def test_first_cpu_loop_loads_numba_and_computes():
    code = ("import zero\n"
            "x = zero.tensor([[0.5, -1.0, 2.0]], requires_grad=True)\n"
            "y = zero.nn.functional.gelu(x).sum()\n"
            "y.backward()\n"
            "assert abs(y.item() - 2.14158) < 1e-4, y.item()\n")
    assert "numba" in modules_after(code)
