"""The CUDA convolution and pooling kernels against the CPU kernels of the same names.

Without a GPU they run under TRITON_INTERPRET=1 on NumPy arrays (the GEMMs then are NumPy's);
on a GPU (ZERO_TEST_DEVICE=cuda) on CuPy arrays, compiled. Outputs are written into arrays
with a guard element after them, so a store past the end shows; inputs include strided
views (a transposed plane, a sliced batch), and sizes that are not multiples of the
1024-element blocks.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("triton")

import zero.backends.cpu.kernels as cpu
import zero.backends.cuda.kernels as cuda
from zero.backends.cpu.kernels import conv as cpu_conv
from zero.backends.cuda.kernels import conv as cuda_conv

GUARD = 12345.0
TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-11, atol=1e-11)}


class Run:
    """One kernel on both devices, outputs compared (and their guard elements checked)."""

    def __init__(self, arrays, dtype):
        self.arrays, self.dtype = arrays, dtype

    def input(self, array, layout: str = "contiguous"):
        """(host array, device array) of the same values; ``layout`` "transposed" makes the
        device array (and the host one) a view with the last two axes swapped."""
        array = array.astype(self.dtype)
        if layout == "transposed":
            base = np.ascontiguousarray(np.swapaxes(array, -1, -2))
            return np.swapaxes(base, -1, -2), self.arrays.put(base).swapaxes(-1, -2)
        if layout == "sliced":
            wide = np.concatenate([array, array], axis=0)
            return wide[::2], self.arrays.put(wide)[::2]
        return array, self.arrays.put(array)

    def __call__(self, name, host_inputs, device_inputs, outputs: dict, **compare):
        host = {k: np.zeros(shape, dtype or self.dtype) for k, (shape, dtype) in outputs.items()}
        getattr(cpu, name)(*host_inputs, *host.values())
        storages, device = {}, []
        for k, (shape, dtype) in outputs.items():
            storages[k] = self.arrays.put(np.full(int(np.prod(shape)) + 1, GUARD, dtype or self.dtype))
            device.append(storages[k][:-1].reshape(shape))
        getattr(cuda, name)(*device_inputs, *device)
        for k in outputs:
            got = self.arrays.get(storages[k])
            assert got[-1] == GUARD, f"{name}: wrote past the end of {k}"
            tolerance = {} if host[k].dtype.kind == "i" else TOLERANCE[self.dtype]
            np.testing.assert_allclose(got[:-1].reshape(host[k].shape), host[k], err_msg=f"{name}: {k}",
                                       **(compare or tolerance))
        return host


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def run(request, arrays):
    return Run(arrays, request.param)


CONVOLUTIONS = [  # x shape, weight shape, stride, padding, dilation, groups
    ((2, 3, 19, 17), (5, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 11, 13), (6, 2, 3, 2), (2, 1), (0, 2), (2, 1), 2),
    ((3, 4, 9, 8), (8, 4, 1, 1), (1, 1), (0, 0), (1, 1), 1),
    ((1, 6, 12, 10), (6, 1, 5, 3), (3, 2), (2, 1), (1, 2), 6),
]


@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups", CONVOLUTIONS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("passes", ["one pass", "an image a pass"])
def test_conv2d_forward_and_backward(run, x_shape, w_shape, stride, padding, dilation, groups, layout, passes,
                                     monkeypatch):
    if passes != "one pass":   # the columns of one image at a time, on both devices
        monkeypatch.setattr(cpu_conv, "COLUMN_BYTES", 1)
        monkeypatch.setattr(cuda_conv, "COLUMN_BYTES", 1)
    rng = np.random.default_rng(0)
    host_x, device_x = run.input(rng.standard_normal(x_shape), layout)
    host_w, device_w = run.input(rng.standard_normal(w_shape))
    host_b, device_b = run.input(rng.standard_normal(w_shape[0]))
    out_size = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                     for n, k, s, p, d in zip(x_shape[2:], w_shape[2:], stride, padding, dilation))
    out_shape = (x_shape[0], w_shape[0]) + out_size
    arguments = (stride, padding, dilation, groups)
    for bias in ((host_b, device_b), (None, None)):
        run("conv2d_forward", [host_x, host_w, bias[0], *arguments], [device_x, device_w, bias[1], *arguments],
            {"out": (out_shape, None)})
    host_g, device_g = run.input(rng.standard_normal(out_shape), layout)
    run("conv2d_backward", [host_g, host_x, host_w, *arguments], [device_g, device_x, device_w, *arguments],
        {"grad_x": (x_shape, None), "grad_weight": (w_shape, None), "grad_bias": ((w_shape[0],), None)})


def test_conv2d_backward_computes_only_what_is_wanted(run):
    """grad_weight and grad_bias None (a first layer's input needs no gradient either way):
    x may then be None, and grad_x is still right."""
    rng = np.random.default_rng(1)
    host_g, device_g = run.input(rng.standard_normal((2, 4, 5, 5)))
    host_w, device_w = run.input(rng.standard_normal((4, 3, 3, 3)))
    arguments = ((1, 1), (0, 0), (1, 1), 1)
    want, got = np.zeros((2, 3, 7, 7), run.dtype), run.arrays.put(np.zeros((2, 3, 7, 7), run.dtype))
    cpu.conv2d_backward(host_g, None, host_w, *arguments, want, None, None)
    cuda.conv2d_backward(device_g, None, device_w, *arguments, got, None, None)
    np.testing.assert_allclose(run.arrays.get(got), want, **TOLERANCE[run.dtype])
    assert np.abs(want).sum() > 0


POOLS = [  # x shape, kernel, stride, padding, dilation
    ((2, 3, 33, 35), (2, 2), (2, 2), (0, 0), (1, 1)),
    ((2, 3, 9, 8), (3, 3), (2, 1), (1, 1), (1, 1)),
    ((1, 4, 10, 9), (3, 2), (1, 2), (1, 0), (2, 1)),
]


@pytest.mark.parametrize("x_shape, kernel, stride, padding, dilation", POOLS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_max_pool2d_forward_and_backward(run, x_shape, kernel, stride, padding, dilation, layout):
    rng = np.random.default_rng(2)
    values = rng.standard_normal(x_shape)
    values[0, 0, 0, :3] = [np.nan, 7.0, 7.0]   # a NaN, and a tie
    host_x, device_x = run.input(values, layout)
    out_shape = x_shape[:2] + tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                                    for n, k, s, p, d in zip(x_shape[2:], kernel, stride, padding, dilation))
    arguments = (kernel, stride, padding, dilation)
    host = run("max_pool2d_forward", [host_x, *arguments], [device_x, *arguments],
               {"out": (out_shape, None), "indices": (out_shape, np.int64)}, equal_nan=True)
    host_g, device_g = run.input(rng.standard_normal(out_shape))
    indices = host["indices"]
    run("max_pool2d_backward", [host_g, indices, *arguments], [device_g, run.arrays.put(indices), *arguments],
        {"grad_x": (x_shape, None)})


@pytest.mark.parametrize("x_shape, kernel, stride, padding, _", POOLS)
@pytest.mark.parametrize("count_include_pad, divisor_override", [(True, None), (False, None), (True, 5)])
def test_avg_pool2d_forward_and_backward(run, x_shape, kernel, stride, padding, _, count_include_pad,
                                         divisor_override):
    rng = np.random.default_rng(3)
    host_x, device_x = run.input(rng.standard_normal(x_shape), "transposed")
    out_shape = x_shape[:2] + tuple((n + 2 * p - k) // s + 1
                                    for n, k, s, p in zip(x_shape[2:], kernel, stride, padding))
    arguments = (kernel, stride, padding, count_include_pad, divisor_override)
    run("avg_pool2d_forward", [host_x, *arguments], [device_x, *arguments], {"out": (out_shape, None)})
    host_g, device_g = run.input(rng.standard_normal(out_shape))
    run("avg_pool2d_backward", [host_g, *arguments], [device_g, *arguments], {"grad_x": (x_shape, None)})


@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups", CONVOLUTIONS[:3])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_im2col_and_col2im(run, x_shape, w_shape, stride, padding, dilation, groups, layout):
    """F.unfold's and F.fold's kernels: cols (N, C, kH, kW, Ho, Wo) and back."""
    rng = np.random.default_rng(3)
    host_x, device_x = run.input(rng.standard_normal(x_shape), layout)
    blocks = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                   for n, k, s, p, d in zip(x_shape[2:], w_shape[2:], stride, padding, dilation))
    cols_shape = x_shape[:2] + w_shape[2:] + blocks
    arguments = (stride, padding, dilation)
    run("im2col", [host_x, *arguments], [device_x, *arguments], {"cols": (cols_shape, None)})
    host_c, device_c = run.input(rng.standard_normal(cols_shape), layout)
    run("col2im", [host_c, *arguments], [device_c, *arguments], {"out": (x_shape, None)})
