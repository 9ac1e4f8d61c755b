"""Small habits PyTorch users bring: formatting a 0-d tensor, the legacy Tensor(...)
constructor, randint(high, size), axis= for dim=, nelement, isclose/allclose,
inference_mode, zero.cuda.manual_seed_all, zero.accelerator."""
from __future__ import annotations

import math

import numpy as np
import pytest

import zero


def test_a_zero_dim_tensor_formats_as_its_number():
    loss = zero.tensor(3.14159)
    assert f"{loss:.4f}" == "3.1416" and f"{zero.tensor(7):>3d}" == "  7"
    assert f"{zero.ones(2)}" == str(zero.ones(2))
    with pytest.raises(TypeError):
        f"{zero.ones(2):.2f}"


def test_the_legacy_tensor_constructor():
    assert zero.Tensor([1, 2]).dtype is zero.float32 and zero.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert zero.Tensor(2, 3).shape == (2, 3) and zero.Tensor().shape == (0,)
    assert isinstance(zero.Tensor(np.ones(2)), zero.Tensor)


def test_randint_takes_high_and_size_positionally():
    zero.manual_seed(0)
    values = zero.randint(5, (100,))
    assert values.shape == (100,) and values.dtype is zero.int64 and 0 <= int(values.min()) and int(values.max()) < 5
    assert zero.randint(2, 5, (3, 2)).shape == (3, 2)


def test_axis_is_accepted_for_dim():
    x = zero.arange(6, dtype=zero.float32).reshape(2, 3)
    assert x.sum(axis=1).tolist() == [3.0, 12.0] and x.mean(axis=0).tolist() == [1.5, 2.5, 3.5]
    assert x.amax(axis=1, keepdim=True).shape == (2, 1) and x.nelement() == 6 == zero.nelement(x)
    with pytest.raises(TypeError, match="not both"):
        x.sum(0, axis=1)


def test_isclose_and_allclose_follow_numpy():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1.0, 0.0])
    b = np.array([1.0 + 1e-9, np.nan, np.inf, np.inf, 1.1, 1e-9])
    for equal_nan in (False, True):
        ours = zero.isclose(zero.tensor(a), zero.tensor(b), equal_nan=equal_nan).tolist()
        assert ours == np.isclose(a, b, equal_nan=equal_nan).tolist()
    assert zero.allclose(zero.ones(3), zero.ones(3) + 1e-9) and not zero.ones(2).allclose(zero.zeros(2))


def test_inference_mode_records_no_graph():
    x = zero.ones(2, requires_grad=True)
    with zero.inference_mode():
        assert not (x * 2).requires_grad
    with zero.inference_mode(False):
        assert (x * 2).requires_grad

    @zero.inference_mode()
    def double(t):
        return t * 2
    assert not double(x).requires_grad and zero.is_grad_enabled()


def test_cuda_seeding_and_the_accelerator_api():
    zero.cuda.manual_seed_all(3)
    first = zero.rand(3).tolist()
    zero.manual_seed(3)
    assert zero.rand(3).tolist() == first
    assert zero.accelerator.is_available() == zero.cuda.is_available()
    if not zero.cuda.is_available():
        assert zero.accelerator.current_accelerator() is None and zero.accelerator.device_count() == 0
    assert math.isfinite(zero.cuda.current_device())


def test_multinomial_draws_by_weight_and_refuses_what_is_no_distribution():
    zero.manual_seed(0)
    draws = zero.multinomial(zero.tensor([1.0, 3.0]), 1000, replacement=True)
    assert draws.dtype is zero.int64 and 0.7 < float(draws.float().mean()) < 0.8   # P(1) = 3/4
    rows = zero.tensor([[0.0, 5.0, 1.0], [2.0, 0.0, 2.0]]).multinomial(2)
    assert rows.shape == (2, 2)
    for row, weights in zip(rows.tolist(), ([0.0, 5.0, 1.0], [2.0, 0.0, 2.0])):
        assert len(set(row)) == 2 and all(weights[i] > 0 for i in row)   # without replacement, never weight 0
    from zero.ops.extra.sampling import SamplingError
    for bad in ([0.0, 0.0], [1.0, -1.0], [1.0, float("nan")]):
        with pytest.raises(SamplingError):
            zero.multinomial(zero.tensor(bad), 1)
    with pytest.raises(SamplingError, match="without replacement"):
        zero.multinomial(zero.tensor([1.0, 1.0]), 3)
    generator = zero.Generator(seed=5)
    again = zero.Generator(seed=5)
    assert zero.multinomial(zero.ones(10), 4, generator=generator).tolist() == \
        zero.multinomial(zero.ones(10), 4, generator=again).tolist()


@pytest.mark.parametrize("call", [
    lambda lib, a: lib.matmul(input=a, other=a),
    lambda lib, a: a.matmul(other=a),
    lambda lib, a: lib.bmm(a[None], mat2=a[None]),
    lambda lib, a: a[None].bmm(mat2=a[None]),
    lambda lib, a: lib.multinomial(input=a.abs() + 1, num_samples=1),
    lambda lib, a: a.new_tensor([1.0], dtype=lib.float64),
    lambda lib, a: a.new_zeros(2, 3, dtype=lib.int64),
    lambda lib, a: a.new_zeros((2, 3)),
    lambda lib, a: a.round(decimals=1),
])
def test_keyword_arguments_have_pytorchs_names(call):
    torch = pytest.importorskip("torch")
    values = np.arange(4, dtype=np.float32).reshape(2, 2)
    want = call(torch, torch.tensor(values))
    got = call(zero, zero.tensor(values))
    assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == str(want.dtype).replace("torch.", "")


@pytest.mark.parametrize("call", [
    lambda lib, a: (a.abs() + 1).multinomial(1, False, None),   # generator is keyword-only
    lambda lib, a: a.new_tensor([1.0], lib.float64),             # dtype is keyword-only
    lambda lib, a: a.round(1),                                   # decimals is keyword-only
    lambda lib, a: +(a > 0),                                     # + is refused on bool
])
def test_what_pytorch_refuses_zero_refuses(call):
    torch = pytest.importorskip("torch")
    values = np.arange(4, dtype=np.float32).reshape(2, 2)
    with pytest.raises((TypeError, RuntimeError)):
        call(torch, torch.tensor(values))
    with pytest.raises((TypeError, zero.errors.ZeroError)):
        call(zero, zero.tensor(values))
