"""Every Triton-backed CUDA kernel against the CPU kernel of the same name.

Without a GPU these run under TRITON_INTERPRET=1 on NumPy arrays (see conftest); on a GPU
(ZERO_TEST_DEVICE=cuda) the same tests run the compiled kernels on CuPy arrays. Sizes
include ones that are not multiples of the block sizes (1025 elements for 1024-element
blocks, rows of 33 or 4100 columns for power-of-two tiles, 70 query rows for 64-row
tiles), so the masks at the edges are exercised. Outputs are written into arrays
padded with guard values, so a store past the end would show.
"""
from __future__ import annotations

import numpy as np
import pytest

import zero.backends.cpu.kernels as cpu
import zero.backends.cuda.kernels as cuda
import zero.backends.cuda.kernels.optim as optim_kernels

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf/nan on purpose (masked rows)

FLOATS = (np.float32, np.float64)
TOLERANCE: dict = {np.float32: {"rtol": 1e-5, "atol": 1e-5}, np.float64: {"rtol": 1e-9, "atol": 1e-10}}
GUARD = 12345.0


def random(rng, shape, dtype, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


def guarded(shape, dtype):
    """An output array with a guard element after it, set to GUARD (checked after the call)."""
    n = int(np.prod(shape))
    storage = np.full(n + 1, GUARD, dtype)
    return storage, storage[:n].reshape(shape)


class Case:
    """Runs one kernel on the CPU and on the device with the same inputs and compares
    the named outputs (their guard elements must be untouched on the device)."""

    def __init__(self, arrays, dtype):
        self.arrays = arrays
        self.dtype = dtype

    def run(self, name, inputs: list, outputs: dict, tolerance=None, **kwargs):
        tolerance = tolerance or TOLERANCE[self.dtype]
        host_out = {k: np.zeros(shape, dtype or self.dtype) for k, (shape, dtype) in outputs.items()}
        getattr(cpu, name)(*inputs, *host_out.values(), **kwargs)
        device_out, storages = {}, {}
        for k, (shape, dtype) in outputs.items():
            storage, _ = guarded(shape, dtype or self.dtype)
            storages[k] = self.arrays.put(storage)
            n = int(np.prod(shape))
            device_out[k] = storages[k][:n].reshape(shape)
        device_inputs = [self.arrays.put(a) for a in inputs]
        getattr(cuda, name)(*device_inputs, *device_out.values(), **kwargs)
        results = {}
        for k in outputs:
            storage = self.arrays.get(storages[k])
            assert storage[-1] == GUARD, f"{name}: wrote past the end of {k}"
            got = storage[:-1].reshape(host_out[k].shape)
            np.testing.assert_allclose(got, host_out[k], err_msg=f"{name}: {k}", **tolerance)
            results[k] = got
        return results, host_out


@pytest.fixture(params=FLOATS, ids=["float32", "float64"])
def case(request, arrays):
    return Case(arrays, request.param)


# -- elementwise ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 1000, 1025])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_forward_and_backward(case, n, approximate):
    rng = np.random.default_rng(n)
    x = random(rng, (n,), case.dtype, -6, 6)
    case.run("gelu", [x], {"out": ((n,), None)}, approximate=approximate)
    grad = random(rng, (n,), case.dtype)
    case.run("gelu_backward", [grad, x], {"out": ((n,), None)}, approximate=approximate)


@pytest.mark.parametrize("p", [0.0, 0.2, 0.5, 1.0])
@pytest.mark.parametrize("n", [1, 1025, 5000])
def test_dropout_mask_is_bit_identical_to_the_cpu(case, p, n):
    rng = np.random.default_rng(n)
    x = random(rng, (n,), case.dtype, 0.5, 2.0)  # no zeros in the input: a zero output means dropped
    seed = (1 << 62) + 987654321
    got, want = case.run("dropout_forward", [x, p, seed], {"out": ((n,), None)})
    assert np.array_equal(got["out"] == 0, want["out"] == 0), "the masks differ"
    if 0 < p < 1 and n > 1000:
        assert abs((want["out"] == 0).mean() - p) < 0.05
    got, want = case.run("dropout_backward", [x, p, seed], {"grad_in": ((n,), None)})
    assert np.array_equal(got["grad_in"] == 0, want["grad_in"] == 0)


# -- softmax, cross-entropy, layer norm -------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 1), (5, 33), (3, 4100)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_and_backward(case, shape, log):
    rng = np.random.default_rng(shape[1])
    x = random(rng, shape, case.dtype, -5, 5)
    if shape[1] > 3:
        x[0, :3] = -np.inf  # masked positions
    name = "log_softmax" if log else "softmax"
    _, want = case.run(f"{name}_forward", [x], {"out": (shape, None)})
    grad = random(rng, shape, case.dtype)
    case.run(f"{name}_backward", [grad, want["out"]], {"grad_in": (shape, None)},
             tolerance={"rtol": 1e-4, "atol": 1e-4} if case.dtype == np.float32 else None)


@pytest.mark.parametrize("width", [40, 4100])
def test_softmax_of_a_fully_masked_row_is_nan_and_masked_softmax_s_is_zero(case, width):
    x = np.full((2, width), -np.inf, case.dtype)
    x[1, 5] = 1.0
    got, _ = case.run("softmax_forward", [x], {"out": ((2, width), None)})
    assert np.isnan(got["out"][0]).all() and got["out"][1, 5] == 1.0    # PyTorch's softmax
    got, _ = case.run("masked_softmax_forward", [x], {"out": ((2, width), None)})
    assert not got["out"][0].any() and got["out"][1, 5] == 1.0          # PyTorch's attention
    got, _ = case.run("log_softmax_forward", [x], {"out": ((2, width), None)})
    assert np.isnan(got["out"][0]).all() and got["out"][1, 5] == 0.0


@pytest.mark.parametrize("classes", [1, 70, 4100])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_forward_and_backward(case, classes, weighted, smoothing):
    rng = np.random.default_rng(classes)
    rows = 9
    logits = random(rng, (rows, classes), case.dtype, -4, 4)
    target = rng.integers(0, classes, rows)
    target[2] = -100  # an ignored row
    weight = random(rng, (classes,), case.dtype, 0.1, 2.0) if weighted else None
    _, want = case.run("cross_entropy_forward", [logits, target, weight, -100, smoothing],
                       {"loss": ((rows,), None), "logsumexp": ((rows,), np.float64)})
    for grad_loss in (random(rng, (rows,), case.dtype), np.broadcast_to(case.dtype(0.25), (rows,))):
        case.run("cross_entropy_backward", [grad_loss, logits, target, weight, want["logsumexp"], -100, smoothing],
                 {"grad_logits": ((rows, classes), None)})


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignored", [0, 3, 9])
def test_class_loss_mean_over_the_kept_rows(case, weighted, ignored):
    """One program over every row (1500: the loop over blocks of 1024 takes two steps). All
    the rows ignored: 0 / 0 = nan on both."""
    rows = 9 if ignored < 9 else 1500
    rng = np.random.default_rng(ignored)
    loss, target = random(rng, (rows,), case.dtype, 0, 4), rng.integers(0, 5, rows)
    target[:ignored if ignored < 9 else rows] = -100
    loss[target == -100] = 0
    weight = random(rng, (5,), case.dtype, 0.1, 2.0) if weighted else None
    got, _ = case.run("class_loss_mean", [loss, target, weight, -100], {"mean": ((), None), "divisor": ((), None)})
    kept = target != -100
    divisor = (weight[target[kept]].astype(np.float64).sum() if weighted else kept.sum())
    np.testing.assert_allclose(got["divisor"], divisor, rtol=1e-6)
    np.testing.assert_allclose(got["mean"], loss.astype(np.float64).sum() / divisor if divisor else np.nan, rtol=1e-6)


@pytest.mark.parametrize("rows,classes", [(9, 1), (300, 70), (5, 4100)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("target_dtype", [np.int64, np.int32])
def test_nll_loss_forward_and_backward(case, rows, classes, weighted, target_dtype):
    """300 rows: two programs of the forward's 256; 4100 classes: two column blocks a row."""
    rng = np.random.default_rng(rows + classes)
    log_probs = random(rng, (rows, classes), case.dtype, -6, 0)
    target = rng.integers(0, classes, rows).astype(target_dtype)
    target[1] = -100  # an ignored row
    weight = random(rng, (classes,), case.dtype, 0.1, 2.0) if weighted else None
    case.run("nll_loss_forward", [log_probs, target, weight, -100], {"loss": ((rows,), None)})
    case.run("nll_loss_backward", [random(rng, (rows,), case.dtype), target, weight, -100],
             {"grad_input": ((rows, classes), None)})


@pytest.mark.parametrize("n", [1, 1000, 40_000])
@pytest.mark.parametrize("ignore", [None, -100])
def test_index_extremes_parts_give_the_extremes(arrays, n, ignore):
    """The range check's chunks (16384 entries each: 40000 is three), ignored entries
    counted as the valid value given."""
    rng = np.random.default_rng(n)
    index = rng.integers(-5, 50, n)
    if ignore is not None:
        index[::7] = ignore
    parts = arrays.get(cuda.index_extremes_parts(arrays.put(index), ignore, 3))
    kept = index if ignore is None else np.where(index == ignore, 3, index)
    assert parts.shape == (-(-n // 16384), 2)
    assert (parts[:, 0].min(), parts[:, 1].max()) == (kept.min(), kept.max())


def test_cross_entropy_at_logits_near_ten_million(case):
    # A float32 logsumexp would be off by a whole unit here; the kernels keep it in float64.
    rng = np.random.default_rng(7)
    logits = (random(rng, (5, 70), case.dtype, -4, 4) + case.dtype(1e7)).astype(case.dtype)
    target = rng.integers(0, 70, 5)
    _, want = case.run("cross_entropy_forward", [logits, target, None, -100, 0.0],
                       {"loss": ((5,), None), "logsumexp": ((5,), np.float64)})
    case.run("cross_entropy_backward", [random(rng, (5,), case.dtype), logits, target, None, want["logsumexp"],
                                        -100, 0.0], {"grad_logits": ((5, 70), None)})
    case.run("log_softmax_forward", [logits], {"out": ((5, 70), None)})


@pytest.mark.parametrize("shape", [(1, 7), (37, 100), (70, 384)])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_layer_norm_forward_and_backward(case, shape, affine):
    rng = np.random.default_rng(shape[0])
    rows, width = shape
    x = random(rng, shape, case.dtype) * 3 + 1
    weight = random(rng, (width,), case.dtype) if affine != "none" else None
    bias = random(rng, (width,), case.dtype) if affine == "both" else None
    _, want = case.run("layer_norm_forward", [x, weight, bias, 1e-5],
                       {"out": (shape, None), "mean": ((rows,), None), "rstd": ((rows,), None)})
    grad = random(rng, shape, case.dtype)
    inputs = [grad, x, weight, want["mean"], want["rstd"]]
    outputs = {"grad_x": (shape, None)}
    if affine != "none":
        outputs.update(grad_weight=((width,), None), grad_bias=((width,), None))
        case.run("layer_norm_backward", inputs, outputs)
    else:
        got = np.zeros(shape, case.dtype)
        cpu.layer_norm_backward(*inputs, got, None, None)
        device_grad = case.arrays.put(np.zeros(shape, case.dtype))
        cuda.layer_norm_backward(*[case.arrays.put(a) for a in inputs], device_grad, None, None)
        np.testing.assert_allclose(case.arrays.get(device_grad), got, **TOLERANCE[case.dtype])


@pytest.mark.parametrize("wanted,rows", [("grad_weight", 37), ("grad_bias", 37), ("grad_weight", 4100)])
def test_layer_norm_backward_gives_one_parameter_gradient_alone(arrays, wanted, rows):
    """Either half of the (programs, 2 * width) partial sums alone; 4100 rows are 129
    programs, whose partial rows are summed in two bands."""
    rng = np.random.default_rng(rows)
    width = 48
    x, grad = (random(rng, (rows, width), np.float32) for _ in range(2))
    weight = random(rng, (width,), np.float32)
    mean, rstd = np.zeros(rows, np.float32), np.zeros(rows, np.float32)
    cpu.layer_norm_forward(x, weight, None, 1e-5, np.zeros_like(x), mean, rstd)
    want = {"grad_weight": np.zeros(width, np.float32), "grad_bias": np.zeros(width, np.float32)}
    cpu.layer_norm_backward(grad, x, weight, mean, rstd, np.zeros_like(x), *want.values())
    got = arrays.put(np.full(width, GUARD, np.float32))
    others = {"grad_weight": None, "grad_bias": None, wanted: got}
    cuda.layer_norm_backward(*(arrays.put(a) for a in (grad, x, weight, mean, rstd)), arrays.put(np.zeros_like(x)),
                             others["grad_weight"], others["grad_bias"])
    np.testing.assert_allclose(arrays.get(got), want[wanted], rtol=1e-4, atol=1e-4)


def test_layer_norm_eps_is_float64_for_float64(arrays):
    """Rows of nearly equal values: rstd is about 1/sqrt(eps), so an eps rounded to float32
    (1e-5 becomes 9.99999974737875e-06) moves it by 1.3e-8, far beyond float64's rounding."""
    rng = np.random.default_rng(0)
    x = 1.0 + rng.standard_normal((8, 64)) * 1e-6
    rstd = {}
    for name, kernels, put in (("cpu", cpu, lambda a: a), ("cuda", cuda, arrays.put)):
        out, mean, rstd[name] = (put(np.zeros(shape)) for shape in ((8, 64), (8,), (8,)))
        kernels.layer_norm_forward(put(x), None, None, 1e-5, out, mean, rstd[name])
    np.testing.assert_allclose(arrays.get(rstd["cuda"]), rstd["cpu"], rtol=1e-13)


# -- column sums (bias gradients) ---------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 5), (33, 130), (4100, 384), (0, 7)])
def test_column_sums(case, shape):
    """Bands of rows in parallel, then their sums (4100 rows make several bands)."""
    from zero.backends.cuda.kernels.reduction import column_sums

    x = random(np.random.default_rng(shape[0]), shape, case.dtype)
    want = x.sum(axis=0, dtype=np.float64)
    out = case.arrays.put(np.full(shape[1], GUARD, case.dtype))
    column_sums(case.arrays.put(x), out)
    tolerance = {"rtol": 1e-5, "atol": 1e-4} if case.dtype == np.float32 else TOLERANCE[case.dtype]  # 4100 terms
    np.testing.assert_allclose(case.arrays.get(out), want, **tolerance)


@pytest.mark.parametrize("shape", [(33, 130), (4100, 384)])
def test_column_sums_into_two_outputs(case, shape):
    """x's first columns into out, the rest into second, by the same launches."""
    from zero.backends.cuda.kernels.reduction import column_sums

    x = random(np.random.default_rng(shape[0]), shape, case.dtype)
    want = x.sum(axis=0, dtype=np.float64)
    split = shape[1] // 3
    out = case.arrays.put(np.full(split, GUARD, case.dtype))
    second = case.arrays.put(np.full(shape[1] - split, GUARD, case.dtype))
    column_sums(case.arrays.put(x), out, second)
    tolerance = {"rtol": 1e-5, "atol": 1e-4} if case.dtype == np.float32 else TOLERANCE[case.dtype]
    np.testing.assert_allclose(case.arrays.get(out), want[:split], **tolerance)
    np.testing.assert_allclose(case.arrays.get(second), want[split:], **tolerance)


def test_column_sums_of_strided_rows_and_sums_over_leading_axes(arrays):
    from zero.backends.cuda.kernels.reduction import column_sums

    rng = np.random.default_rng(4)
    x = random(rng, (300, 70), np.float32)
    out = arrays.put(np.zeros(70, np.float32))
    column_sums(arrays.put(x)[::3], out)                      # every third row: a row stride of 210
    np.testing.assert_allclose(arrays.get(out), x[::3].sum(axis=0), rtol=1e-5, atol=1e-5)
    y = random(rng, (4, 5, 6, 7), np.float64)
    for axes in ((0,), (0, 1), (0, 1, 2), (1,), (0, 2)):    # the last two: the shared CuPy sum
        shape = tuple(n for i, n in enumerate(y.shape) if i not in axes)
        want, got = np.zeros(shape), arrays.put(np.zeros(shape))
        cpu.sum(y, axes, want)
        cuda.sum(arrays.put(y), axes, got)
        np.testing.assert_allclose(arrays.get(got), want, rtol=1e-12, err_msg=str(axes))


# -- optimizers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 1025])
@pytest.mark.parametrize("eps_inside,eps_outside", [(0.0, 1e-8 * 0.2), (1e-8, 0.0)], ids=["pytorch", "book"])
def test_adamw_step(case, n, eps_inside, eps_outside):
    rng = np.random.default_rng(n)
    param, grad, m = (random(rng, (n,), case.dtype) for _ in range(3))
    v = random(rng, (n,), case.dtype, 0.0, 1.0)
    host = [a.copy() for a in (param, grad, m, v)]
    device = [case.arrays.put(a) for a in (param, grad, m, v)]
    scalars = (1e-3, 0.9, 0.95, eps_inside, eps_outside, 0.1, 1e-3 * 0.7)
    cpu.adamw_step(*host, *scalars)
    cuda.adamw_step(*device, *scalars)
    for name, want, got in zip(("param", "grad", "exp_avg", "exp_avg_sq"), host, device):
        np.testing.assert_allclose(case.arrays.get(got), want, err_msg=name, **TOLERANCE[case.dtype])


@pytest.mark.parametrize("sizes", [[1025, 1, 3000, 0, 17], [5]])
def test_adamw_step_many_is_adamw_step_on_each(case, sizes):
    """One launch over many parameters (a table of their addresses), block edges inside each."""
    rng = np.random.default_rng(len(sizes))
    host = [[random(rng, (n,), case.dtype) for n in sizes] for _ in range(3)]
    host.append([random(rng, (n,), case.dtype, 0.0, 1.0) for n in sizes])
    device = [[case.arrays.put(a) for a in column] for column in host]
    scalars = (1e-3, 0.9, 0.95, 0.0, 1e-8 * 0.2, 0.1, 1e-3 * 0.7)
    for _ in range(2):   # the second call finds its table made
        cpu.adamw_step_many(*host, *scalars)
        cuda.adamw_step_many(*device, *scalars)
    for name, want_column, got_column in zip(("params", "grads", "exp_avgs", "exp_avg_sqs"), host, device):
        for index, (want, got) in enumerate(zip(want_column, got_column)):
            np.testing.assert_allclose(case.arrays.get(got), want, err_msg=f"{name}[{index}]",
                                       **TOLERANCE[case.dtype])


@pytest.mark.parametrize("sizes", [[1025, 1, 0, 3000, 70_000], [4]])
def test_the_clip_s_squared_norms_and_scaling_over_many_gradients(case, sizes):
    rng = np.random.default_rng(len(sizes))
    grads = [random(rng, (n,), case.dtype) for n in sizes]
    grads[0] = grads[0].reshape(-1, 1)   # any shape
    device = [case.arrays.put(g) for g in grads]
    want, got = np.zeros(len(sizes), np.float32), case.arrays.put(np.zeros(len(sizes), np.float32))
    cpu.squared_norms(grads, want)
    cuda.squared_norms(device, got)
    np.testing.assert_allclose(case.arrays.get(got), want, rtol=1e-5)
    factor = np.array(0.37, np.float32)
    cpu.scale_in_place(grads, factor)
    cuda.scale_in_place(device, case.arrays.put(factor))
    for index, (g, d) in enumerate(zip(grads, device)):
        np.testing.assert_array_equal(case.arrays.get(d), g, err_msg=f"gradient {index}")


def test_a_long_list_of_tensors_takes_several_tables(arrays, monkeypatch):
    """Lists longer than one table holds (TABLE_TENSORS, 2 here) go in several launches;
    each program finds its tensor among up to a power of two of rows, here 1 and 2."""
    monkeypatch.setattr(optim_kernels, "TABLE_TENSORS", 2)
    rng = np.random.default_rng(11)
    sizes = [1025, 0, 7, 3000, 1]
    host = [[random(rng, (n,), np.float32) for n in sizes] for _ in range(3)]
    host.append([random(rng, (n,), np.float32, 0.0, 1.0) for n in sizes])
    device = [[arrays.put(a) for a in column] for column in host]
    scalars = (1e-3, 0.9, 0.95, 0.0, 1e-8, 0.1, 1e-3)
    cpu.adamw_step_many(*host, *scalars)
    cuda.adamw_step_many(*device, *scalars)
    for want, got in zip(host[0], device[0]):
        np.testing.assert_allclose(arrays.get(got), want, **TOLERANCE[np.float32])
    want, got = np.zeros(len(sizes), np.float32), arrays.put(np.zeros(len(sizes), np.float32))
    cpu.squared_norms(host[1], want)
    cuda.squared_norms(device[1], got)
    np.testing.assert_allclose(arrays.get(got), want, rtol=1e-5)
    factor = np.array(0.25, np.float32)
    cpu.scale_in_place(host[1], factor)
    cuda.scale_in_place(device[1], arrays.put(factor))
    for g, d in zip(host[1], device[1]):
        np.testing.assert_array_equal(arrays.get(d), g)


def test_the_clip_s_kernels_take_strided_and_mixed_gradients_too(arrays):
    rng = np.random.default_rng(5)
    full = random(rng, (6, 8), np.float32)
    grads = [full[:, ::2], random(rng, (9,), np.float64)]     # a strided view, and another dtype
    device = [arrays.put(full)[:, ::2], arrays.put(grads[1])]
    want, got = np.zeros(2, np.float32), arrays.put(np.zeros(2, np.float32))
    cpu.squared_norms(grads, want)
    cuda.squared_norms(device, got)
    np.testing.assert_allclose(arrays.get(got), want, rtol=1e-6)
    factor = np.array(0.5, np.float32)
    cpu.scale_in_place(grads, factor)
    cuda.scale_in_place(device, arrays.put(factor))
    for g, d in zip(grads, device):
        np.testing.assert_array_equal(arrays.get(d), g)


def test_adamw_step_many_with_mixed_dtypes_updates_each(arrays):
    rng = np.random.default_rng(7)
    columns = [[random(rng, (33,), dtype) for dtype in (np.float32, np.float64)] for _ in range(4)]
    columns[3] = [np.abs(a) for a in columns[3]]
    host = [[a.copy() for a in column] for column in columns]
    device = [[arrays.put(a) for a in column] for column in columns]
    scalars = (1e-3, 0.9, 0.95, 1e-8, 0.0, 0.0, 1e-3)
    cpu.adamw_step_many(*host, *scalars)
    cuda.adamw_step_many(*device, *scalars)
    for want, got in zip(host[0], device[0]):
        np.testing.assert_allclose(arrays.get(got), want, **TOLERANCE[want.dtype.type])


@pytest.mark.parametrize("momentum,nesterov,first_step", [(0.0, False, False), (0.9, False, True),
                                                          (0.9, False, False), (0.9, True, False)])
def test_sgd_step(case, momentum, nesterov, first_step):
    rng = np.random.default_rng(3)
    n = 1500
    arrays = [random(rng, (n,), case.dtype) for _ in range(3)]
    if momentum == 0.0:
        arrays[2] = None
    host = [None if a is None else a.copy() for a in arrays]
    device = [case.arrays.put(a) for a in arrays]
    scalars = (0.1, momentum, 0.1, 0.01, nesterov, first_step)
    cpu.sgd_step(*host, *scalars)
    cuda.sgd_step(*device, *scalars)
    for want, got in zip(host, device):
        if want is not None:
            np.testing.assert_allclose(case.arrays.get(got), want, **TOLERANCE[case.dtype])
