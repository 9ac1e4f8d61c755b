"""The CUDA dropout that reads its seed on the device (``dropout_forward_seeded``, Triton's
``dropout_seeded_kernel``: a CUDA graph's seed slot, issue 38) against the int-seed kernel
and the CPU, bit for bit.

Without a GPU these run under TRITON_INTERPRET=1 on NumPy arrays (see conftest); on a GPU
(ZERO_TEST_DEVICE=cuda) the compiled kernels run on CuPy arrays. The op-level tests are
``tests/ops/test_dropout_seeded.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

import zero.backends.cpu.kernels as cpu
import zero.backends.cuda.kernels as cuda

SEEDS = [0, 7, (1 << 62) + 987654321, (1 << 63) - 1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 1025, 5000])       # 1025: one element past a 1024-element block
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_seeded_triton_kernel_equals_the_int_seed_kernel_and_the_cpu(arrays, dtype, n, p):
    x = np.random.default_rng(n).uniform(0.5, 2.0, n).astype(dtype)   # no zeros: 0 out means dropped
    device_x = arrays.put(x)
    for seed in SEEDS:
        slot = arrays.put(np.array([seed], np.int64))
        results = {}
        for name, kernel, seed_argument in (("int", cuda.dropout_forward, seed),
                                            ("seeded", cuda.dropout_forward_seeded, slot),
                                            ("seeded backward", cuda.dropout_backward_seeded, slot)):
            storage = arrays.put(np.full(n + 1, 9.0, dtype))                  # a guard element after the output
            kernel(device_x, p, seed_argument, storage[:n])
            results[name] = arrays.get(storage)
            assert results[name][-1] == 9.0, f"{name}: wrote past the end"
        want = np.empty(n, dtype)
        cpu.dropout_forward(x, p, seed, want)
        assert results["int"][:n].tobytes() == want.tobytes(), f"seed {seed}: the int-seed kernel differs from the CPU"
        assert results["seeded"].tobytes() == results["int"].tobytes(), f"seed {seed}: the seeded kernel differs"
        assert results["seeded backward"].tobytes() == results["int"].tobytes()


def test_the_kernel_reads_the_slot_at_each_launch(arrays):
    """A slot rewritten between launches (what a graph's replay does): each launch's mask is
    the value then in the slot."""
    x = np.linspace(0.5, 2.0, 3000)
    device_x, slot = arrays.put(x), arrays.put(np.array([SEEDS[2]], np.int64))
    masks = []
    for seed in (SEEDS[2], 12345, SEEDS[3]):
        slot[0] = seed
        out = arrays.put(np.empty_like(x))
        cuda.dropout_forward_seeded(device_x, 0.5, slot, out)
        want = np.empty_like(x)
        cpu.dropout_forward(x, 0.5, seed, want)
        np.testing.assert_array_equal(arrays.get(out), want)
        masks.append(want == 0)
    assert not np.array_equal(masks[0], masks[1]) and not np.array_equal(masks[1], masks[2])


def test_other_seed_arrays_are_refused(arrays):
    x, out = arrays.put(np.ones(10)), arrays.put(np.empty(10))
    for bad in (np.array([1, 2], np.int64), np.array([1], np.int32), np.array([1.0])):
        with pytest.raises(TypeError, match="one 64-bit integer"):
            cuda.dropout_forward_seeded(x, 0.4, arrays.put(bad), out)
