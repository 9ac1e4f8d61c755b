"""AdamW's capturable kernel (issue 38) on the device against the CPU's: the counts advanced
on the device, the bias corrections worked out there, the lr a number or a 0-d array read
there. Under the interpreter without a GPU; compiled on one (ZERO_TEST_DEVICE=cuda)."""
from __future__ import annotations

import numpy as np
import pytest

import zero.backends.cpu.kernels as cpu
import zero.backends.cuda.kernels as cuda
import zero.backends.cuda.kernels.optim as optim_kernels
from zero.backends.kernel_contract import adamw_scalars

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0) of beta1 = 0 under the interpreter

TOLERANCE: dict = {np.float32: {"rtol": 2e-5, "atol": 1e-6}, np.float64: {"rtol": 1e-9, "atol": 1e-11},
                   np.float16: {"rtol": 2e-3, "atol": 1e-3}}


def _columns(rng, sizes, dtype):
    """params, grads, exp_avgs, exp_avg_sqs: lists of 1-D arrays of ``sizes``."""
    columns = [[rng.uniform(-2, 2, n).astype(dtype) for n in sizes] for _ in range(3)]
    columns.append([rng.uniform(0, 1, n).astype(dtype) for n in sizes])
    return columns


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("lr_on_device", [False, True], ids=["float-lr", "array-lr"])
@pytest.mark.parametrize("eps_inside_sqrt", [False, True], ids=["pytorch-eps", "book-eps"])
@pytest.mark.parametrize("step_dtype", [np.float32, np.float64])
def test_the_capturable_step_matches_the_cpu_s(arrays, dtype, lr_on_device, eps_inside_sqrt, step_dtype):
    """Three calls on parameters whose counts differ (one starts at 0, one at 5): each count
    advances by one a call, and every array matches the CPU kernel's (float16 parameters, which
    take a launch each, against the CPU's float32 from the same values)."""
    rng = np.random.default_rng(3)
    sizes = [1025, 1, 3000, 0, 17]
    host = _columns(rng, sizes, dtype)
    host_steps = [np.array(5.0 if i == 2 else 0.0, step_dtype) for i in range(len(sizes))]
    device = [[arrays.put(a) for a in column] for column in host]
    host = [[a.astype(np.float32) if dtype == np.float16 else a for a in column] for column in host]
    device_steps = [arrays.put(s) for s in host_steps]
    host_lr = np.array(1e-2, np.float32)
    device_lr = arrays.put(host_lr)
    for call in range(3):
        if call == 2:   # the lr changed in place between calls: the next call reads the new one
            host_lr.fill(3e-3)
            device_lr[...] = 3e-3
        lr_host, lr_device = (host_lr, device_lr) if lr_on_device else (float(host_lr), float(host_lr))
        cpu.adamw_step_many_capturable(*host, host_steps, lr_host, 0.9, 0.95, 1e-8, eps_inside_sqrt, 0.1)
        cuda.adamw_step_many_capturable(*device, device_steps, lr_device, 0.9, 0.95, 1e-8, eps_inside_sqrt, 0.1)
    for want, got in zip(host_steps, device_steps):
        assert arrays.get(got).dtype == step_dtype and float(arrays.get(got)) == float(want)
    assert [float(s) for s in host_steps] == [3.0, 3.0, 8.0, 3.0, 3.0]
    for name, want_column, got_column in zip(("params", "grads", "exp_avgs", "exp_avg_sqs"), host, device):
        for index, (want, got) in enumerate(zip(want_column, got_column)):
            np.testing.assert_allclose(arrays.get(got).astype(want.dtype), want, err_msg=f"{name}[{index}]",
                                       **TOLERANCE[dtype])


def test_the_capturable_step_is_the_plain_one_at_the_same_count(arrays):
    """At count t the capturable kernel does what adamw_step_many does with the host's
    scalars for t (beta1 = 0 too: 0^t is 0)."""
    rng = np.random.default_rng(5)
    sizes = [700, 33]
    for beta1 in (0.9, 0.0):
        plain = [[arrays.put(a) for a in column] for column in _columns(rng, sizes, np.float64)]
        captured = [[arrays.put(arrays.get(a)) for a in column] for column in plain]
        steps = [arrays.put(np.array(6.0, np.float32)) for _ in sizes]
        eps_inside, eps_outside, step_size = adamw_scalars(1e-3, 7.0, beta1, 0.999, 1e-8, False)
        cuda.adamw_step_many(*plain, 1e-3, beta1, 0.999, eps_inside, eps_outside, 0.01, step_size)
        cuda.adamw_step_many_capturable(*captured, steps, 1e-3, beta1, 0.999, 1e-8, False, 0.01)
        for want, got in zip(plain[0], captured[0]):
            np.testing.assert_allclose(arrays.get(got), arrays.get(want), rtol=1e-12, atol=1e-15)


def test_a_long_list_takes_several_tables(arrays, monkeypatch):
    monkeypatch.setattr(optim_kernels, "TABLE_TENSORS", 2)
    rng = np.random.default_rng(11)
    sizes = [1025, 0, 7, 3000, 1]
    host = _columns(rng, sizes, np.float32)
    device = [[arrays.put(a) for a in column] for column in host]
    host_steps = [np.array(float(i), np.float32) for i in range(len(sizes))]
    device_steps = [arrays.put(s) for s in host_steps]
    cpu.adamw_step_many_capturable(*host, host_steps, 1e-3, 0.9, 0.95, 1e-8, False, 0.0)
    cuda.adamw_step_many_capturable(*device, device_steps, 1e-3, 0.9, 0.95, 1e-8, False, 0.0)
    assert [float(arrays.get(s)) for s in device_steps] == [1.0, 2.0, 3.0, 4.0, 5.0]
    for want, got in zip(host[0], device[0]):
        np.testing.assert_allclose(arrays.get(got), want, **TOLERANCE[np.float32])


def test_mixed_step_dtypes_are_refused(arrays):
    from zero.errors import DTypeError

    params = [arrays.put(np.zeros(3, np.float32)) for _ in range(2)]
    steps = [arrays.put(np.array(0.0, np.float32)), arrays.put(np.array(0.0, np.float64))]
    with pytest.raises(DTypeError, match="step counts"):
        cuda.adamw_step_many_capturable(params, params, params, params, steps, 1e-3, 0.9, 0.99, 1e-8, False, 0.0)
