"""Issue 37 items 3-6: parity edges against PyTorch -- results where PyTorch computes, and
the builtin error class PyTorch raises where it refuses."""
from __future__ import annotations

import numpy as np
import pytest
from op_harness import DEVICE

import zero
import zero.nn.functional as ZF
from zero import errors

torch = pytest.importorskip("torch")
TF = torch.nn.functional
INF = float("inf")


def _both(fn):
    """fn(zero) and fn(torch), each as a NumPy array (or a tuple of them)."""
    def arr(r):
        return tuple(arr(x) for x in r) if isinstance(r, tuple) else r.detach().numpy()
    return arr(fn(zero)), arr(fn(torch))


def _same(fn, dtype_too=True):
    z, t = _both(fn)
    zs, ts = (z, t) if isinstance(z, tuple) else ((z,), (t,))
    for a, b in zip(zs, ts, strict=True):
        assert a.shape == b.shape
        if dtype_too:
            assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)


def _same_error(fn):
    """Both refuse, and Zero's error is an instance of the builtin class PyTorch raised."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    builtin = type(expected.value)
    with pytest.raises(builtin):
        fn(zero)


# -- item 3: values where Zero refused or differed ----------------------------------------------


@pytest.mark.parametrize("values", [[1, 2, 3], [True, False, True]])
def test_logsumexp_of_integers_and_bools_promotes(values):
    _same(lambda m: m.logsumexp(m.tensor(values), 0))
    _same(lambda m: m.tensor(values).logsumexp(-1, keepdim=True))


def test_softmax_of_integers_refused_as_pytorch():
    _same_error(lambda m: (ZF if m is zero else TF).softmax(m.tensor([1, 2]), 0))
    _same_error(lambda m: (ZF if m is zero else TF).log_softmax(m.tensor([1, 2]), 0))


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_power_of_negative_integer_tensor(dtype):
    base = [-3, -2, -1, 0, 1, 2, 3, -1, 1, 5]
    exponent = [-1, -2, -3, -1, -5, -1, 2, -2, 0, 1]
    _same(lambda m: m.tensor(base, dtype=getattr(m, dtype)) ** m.tensor(exponent, dtype=getattr(m, dtype)))
    _same(lambda m: 2 ** m.tensor(exponent, dtype=getattr(m, dtype)))
    _same(lambda m: m.pow(m.tensor(base, dtype=getattr(m, dtype)), m.tensor(-1, dtype=getattr(m, dtype))))


def test_integer_power_of_negative_integer_number_is_a_runtime_error():
    _same_error(lambda m: m.tensor([1, 2]) ** -1)


def test_square_of_bool_is_int64():
    _same(lambda m: m.square(m.tensor([True, False])))
    _same(lambda m: m.tensor([[True], [False]]).square())


def test_masked_fill_broadcasts_the_input_out_of_place():
    mask = [[True, False, True], [False, False, True]]
    _same(lambda m: m.tensor([1.0, 2.0, 3.0]).masked_fill(m.tensor(mask), 5.0))
    _same(lambda m: m.tensor([[1.0], [2.0]]).masked_fill(m.tensor(mask), -1.0))
    _same(lambda m: m.tensor([7, 8, 9]).masked_fill(m.tensor(mask), 5))

    def grad(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x.masked_fill(m.tensor(mask), 5.0) * m.tensor([[1.0], [10.0]])).sum().backward()
        return x.grad
    _same(grad)
    _same_error(lambda m: m.ones(3).masked_fill_(m.tensor(mask), 5.0))


def test_log_softmax_of_an_all_minus_inf_row_is_nan_and_attention_gives_zeros():
    # (softmax itself: tests/ops/test_parity_edges2.py)
    rows = [[-INF, -INF, -INF], [0.0, 1.0, 2.0]]
    _same(lambda m: (ZF if m is zero else TF).log_softmax(m.tensor(rows), 1))

    def attention(m):
        q = m.ones(1, 2, 4)
        mask = m.tensor([[False, False], [True, False]])
        return (ZF if m is zero else TF).scaled_dot_product_attention(q, q, m.ones(1, 2, 4), attn_mask=mask)
    _same(attention)


def test_gradient_of_zero_to_the_power_x():
    def grad(m):
        x = m.tensor([-1.0, 0.0, 1.0, 2.0], requires_grad=True)
        (m.tensor([0.0, 0.0, 0.0, 0.0]) ** x).sum().backward()
        return x.grad
    _same(grad)

    def grad_base(m):
        b = m.zeros(4, requires_grad=True)
        (b ** m.tensor([-1.0, 0.0, 1.0, 2.0])).sum().backward()
        return b.grad
    _same(grad_base)


def test_gather_index_select_and_mT_on_0d_tensors():
    _same(lambda m: m.gather(m.tensor(3.0), 0, m.tensor(0)))
    _same(lambda m: m.gather(m.tensor(3.0), -1, m.tensor([0, 0])))
    _same(lambda m: m.index_select(m.tensor(3.0), 0, m.tensor([0])))
    _same(lambda m: m.index_select(m.tensor(3.0), 0, m.tensor(0)))
    _same_error(lambda m: m.gather(m.tensor(3.0), 1, m.tensor(0)))
    _same_error(lambda m: m.gather(m.tensor(3.0), 0, m.tensor([[0]])))
    _same_error(lambda m: m.index_select(m.tensor(3.0), 0, m.tensor([0, 0])))
    _same_error(lambda m: m.index_select(m.tensor(3.0), 1, m.tensor([0])))

    def grad(m):
        x = m.tensor(3.0, requires_grad=True)
        (m.gather(x, 0, m.tensor([0, 0])).sum() + m.index_select(x, 0, m.tensor([0])) * 2).backward()
        return x.grad
    _same(grad)
    with pytest.warns(UserWarning, match="mT is deprecated on 0-D"):
        assert zero.tensor(3.0).mT.item() == 3.0
    _same_error(lambda m: m.tensor([1.0, 2.0]).mT)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_0d_float64_operand_gradient_through_maximum_minimum(op):
    def grads(m):
        a = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        b = m.tensor([1.0, 3.0, 2.0], requires_grad=True)
        y = getattr(m, op)(a, b)
        (y * m.tensor([1.0, 2.0, 4.0])).sum().backward()
        return y, a.grad, b.grad
    _same(grads)


def test_empty_tensor_corners():
    F = {zero: ZF, torch: TF}
    _same(lambda m: F[m].linear(m.ones(2, 0), m.ones(3, 0), m.ones(3)))
    _same(lambda m: F[m].linear(m.ones(2, 0), m.ones(3, 0)))
    _same(lambda m: F[m].scaled_dot_product_attention(m.ones(1, 2, 3, 0), m.ones(1, 2, 3, 0), m.ones(1, 2, 3, 4)))
    _same(lambda m: F[m].scaled_dot_product_attention(m.ones(1, 3, 0), m.ones(1, 3, 0), m.ones(1, 3, 0)))
    _same(lambda m: m.multinomial(m.ones(0, 3), 2))
    _same_error(lambda m: m.ones(1).expand(-2))
    _same_error(lambda m: m.ones(2).expand(3, -2))
    _same_error(lambda m: m.multinomial(m.tensor([1.0, -1.0]), 1))
    _same_error(lambda m: m.multinomial(m.ones(3), 0))


# -- item 5: the builtin error class PyTorch raises ---------------------------------------------


def test_shape_errors_are_runtime_errors():
    assert issubclass(errors.ShapeError, RuntimeError)
    assert issubclass(errors.ShapeValueError, errors.ShapeError) and issubclass(errors.ShapeValueError, ValueError)
    _same_error(lambda m: m.ones(2) + m.ones(3))
    _same_error(lambda m: m.ones(2, 3) @ m.ones(2, 3))
    _same_error(lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]))
    _same_error(lambda m: m.ones(2, 3).view(4))
    _same_error(lambda m: m.stack([m.ones(2), m.ones(3)]))
    _same_error(lambda m: m.ones(2, 3).masked_fill(m.ones(3, 2) > 0, 1.0))
    F = {zero: ZF, torch: TF}
    _same_error(lambda m: F[m].cross_entropy(m.rand(3, 4), m.tensor([0, 1])))          # ValueError
    _same_error(lambda m: F[m].binary_cross_entropy(m.rand(3), m.rand(4)))              # ValueError
    _same_error(lambda m: F[m].group_norm(m.ones(2, 4, 3), 3))                          # RuntimeError
    _same_error(lambda m: m.nn.BatchNorm1d(3)(m.rand(2, 3, 4, 5)))                      # ValueError
    _same_error(lambda m: m.nn.Conv2d(3, 4, 3, groups=2))                               # ValueError
    _same_error(lambda m: m.nn.init.xavier_uniform_(m.rand(3)))                         # ValueError


def test_silently_accepted_inputs_are_refused():
    _same_error(lambda m: m.linspace(0, 1, 3, dtype=m.bool))
    _same_error(lambda m: m.flip(m.ones(2, 3), (0, 0)))
    _same_error(lambda m: m.flip(m.ones(2, 3), (1, -1)))
    _same_error(lambda m: m.zeros(3, dtype=m.float16).scatter(0, m.tensor([0, 1]), m.ones(2)))
    _same_error(lambda m: m.zeros(3, dtype=m.float16).scatter_(0, m.tensor([0, 1]), m.ones(2)))
    _same_error(lambda m: m.zeros(3, dtype=m.float64).scatter_add(0, m.tensor([0, 1]), m.ones(2)))


# -- item 6: computed where Zero refused ----------------------------------------------------------


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_value_with_reduce(reduce):
    index = [[0, 0, 1], [2, 1, 2]]
    _same(lambda m: m.ones(2, 3).scatter(1, m.tensor(index), 2.0, reduce=reduce))
    _same(lambda m: m.full((3, 3), 3.0).scatter(0, m.tensor(index), value=-1.5, reduce=reduce))
    _same(lambda m: m.ones(2, 3, dtype=m.int64).scatter(1, m.tensor(index), 3, reduce=reduce))
    _same(lambda m: m.ones(2, 3).scatter_(1, m.tensor(index), 2.0, reduce=reduce))
    _same_error(lambda m: m.ones(3).scatter(0, m.tensor([0]), 2.0, reduce="mean"))


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
def test_scatter_src_with_reduce_multiply():
    src = [[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]
    _same(lambda m: m.full((2, 3), 2.0).scatter(1, m.tensor([[0, 0, 1], [2, 2, 2]]), m.tensor(src),
                                                reduce="multiply"))
    _same(lambda m: m.full((2, 3), 2.0).scatter(0, m.tensor([[1], [1]]), m.tensor(src), reduce="multiply"))
    _same(lambda m: m.ones(3, dtype=m.int64).scatter(0, m.tensor([0, 0, 2]), m.tensor([3, 4, 5]),
                                                     reduce="multiply"))
    _same(lambda m: m.full((2, 3), 2.0).scatter_(1, m.tensor([[2, 2], [0, 1]]), m.tensor(src), reduce="multiply"))
    _same(lambda m: m.full((2, 3), 2.0).scatter(1, m.tensor([[2, 2], [0, 1]]), m.tensor(src), reduce="add"))


def test_roll_with_a_tuple_of_one_shift_and_no_dims():
    _same(lambda m: m.arange(6).reshape(2, 3).roll((1,)))
    _same(lambda m: m.roll(m.arange(6.0).reshape(2, 3), [-4]))
    _same_error(lambda m: m.arange(6).reshape(2, 3).roll((1, 2)))
    _same_error(lambda m: m.arange(6).reshape(2, 3).roll((1, 2), 0))


# -- item 4: PyTorch's indexing rule (an int is a basic index, applied first) ---------------------


def _keys(m):
    d, b = m.tensor([[1], [0]]), m.tensor([True, False, True])
    return [
        (1, slice(None), slice(1, 4, 2), d, slice(0, 2)),
        (0, slice(None), d), (slice(None), 0, d), (d, slice(None), 1), (d, 0, d),
        (m.tensor(1), slice(None), d), (Ellipsis, 0, d), (None, 0, slice(None), d), (0, None, slice(None), d),
        (1, b), (0, slice(None), slice(None), [0, 2]), (-1, d, slice(None), -2), (d, slice(None), d),
        (slice(1, None), d, 0, slice(None), d), (np.int64(1), slice(None), d), (m.tensor(1),),
    ]


@pytest.mark.parametrize("case", range(16))
def test_advanced_indices_separated_by_ints_keep_their_place(case):
    data = np.arange(2 * 3 * 4 * 5 * 6, dtype=np.float32).reshape(2, 3, 4, 5, 6)
    _same(lambda m: m.tensor(data)[_keys(m)[case]])

    def grad(m):
        x = m.tensor(data, requires_grad=True)
        y = x[_keys(m)[case]]
        (y * m.arange(y.numel(), dtype=m.float32).reshape(y.shape)).sum().backward()
        return x.grad
    _same(grad)

    def written(m):
        x = m.zeros(2, 3, 4, 5, 6)
        shape = x[_keys(m)[case]].shape
        x[_keys(m)[case]] = m.arange(int(np.prod(shape)), dtype=m.float32).reshape(shape) + 1
        return x
    _same(written)


def test_a_0d_integer_tensor_index_is_a_view_as_in_pytorch():
    x = zero.arange(6).reshape(2, 3)
    row = x[zero.tensor(1)]
    row += 10
    assert x.tolist() == [[0, 1, 2], [13, 14, 15]]


def test_the_issue_example_shape():
    data = np.zeros((2, 3, 11, 5, 4, 6), dtype=np.float32)
    def pick(m):
        return m.tensor(data)[1, :, 3:11:2, m.zeros(5, 2, 2, 1, 1, 5, dtype=m.int64), 0:2]
    z, t = _both(pick)
    assert z.shape == t.shape == (3, 4, 5, 2, 2, 1, 1, 5, 2, 6)


@pytest.mark.parametrize("amounts", [(1, -2, 2, -1), (-1, 2, -2, 1), (2, -3, 0, 0), (-1, -1, 1, 1), (0, -2, 3, 0)])
@pytest.mark.parametrize("mode", ["circular", "replicate", "reflect", "constant"])
def test_pad_with_negative_amounts_crops(amounts, mode):
    data = np.arange(24, dtype=np.float32).reshape(1, 1, 4, 6)
    F = {zero: ZF, torch: TF}
    _same(lambda m: F[m].pad(m.tensor(data), amounts, mode=mode))

    def grad(m):
        x = m.tensor(data, requires_grad=True)
        y = F[m].pad(x, amounts, mode=mode)
        (y * m.arange(y.numel(), dtype=m.float32).reshape(y.shape)).sum().backward()
        return x.grad
    _same(grad)


# -- item 6, continued: view as another dtype, std_mean(axis=) -----------------------------------


@pytest.mark.parametrize("source, target", [("float32", "int32"), ("float32", "float64"), ("float64", "float32"),
                                            ("int64", "float64"), ("float32", "float16"), ("int32", "uint8"),
                                            ("uint8", "int32"), ("float32", "bfloat16"), ("bool", "uint8")])
def test_view_as_another_dtype(source, target):
    data = np.arange(1, 25).reshape(3, 8)
    make = lambda m: m.tensor(data).to(getattr(m, source))        # noqa: E731
    _same(lambda m: make(m).view(getattr(m, target)).to(m.float64) if target == "bfloat16"
          else make(m).view(getattr(m, target)))
    _same(lambda m: make(m)[1:, 4:8].view(getattr(m, target)).to(m.float64))
    z = make(zero)
    v = z.view(getattr(zero, target))
    v.zero_()                                                      # the same memory
    assert not z.to(zero.float64).numpy().any()


def test_view_as_another_dtype_refused_as_pytorch():
    _same_error(lambda m: m.ones(3, 2).t().view(m.float16))
    _same_error(lambda m: m.ones(3).view(m.float64))
    _same_error(lambda m: m.tensor(1.0).view(m.float16))
    _same_error(lambda m: m.ones(4, 3)[:, :2].view(m.float64))
    _same_error(lambda m: m.ones(4)[1:3].view(m.float64))
    _same(lambda m: m.tensor(1.0).view(m.int32))


@pytest.mark.parametrize("op", ["std_mean", "var_mean"])
def test_std_mean_takes_axis(op):
    data = np.arange(12.0, dtype=np.float32).reshape(3, 4) ** 1.5
    _same(lambda m: getattr(m, op)(m.tensor(data), axis=1))
    _same(lambda m: getattr(m, op)(m.tensor(data), axis=(0, 1), keepdim=True))
    _same(lambda m: getattr(m, op)(m.tensor(data), 0, correction=0))


@pytest.mark.parametrize("equation, shapes", [
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("...ii->...", [(2, 3, 3)]), ("...ii->...i", [(2, 3, 3)]),
    ("iij->ji", [(3, 3, 2)]), ("iji->j", [(3, 2, 3)]), ("iii->i", [(2, 2, 2)]), ("ii,ij->j", [(3, 3), (3, 4)]),
    ("bii,bj->bij", [(2, 3, 3), (2, 4)]), ("ijij->ij", [(2, 3, 2, 3)]),
])
def test_einsum_with_a_repeated_letter_takes_the_diagonal(equation, shapes):
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    _same(lambda m: m.einsum(equation, *[m.tensor(d) for d in data]))

    def grads(m):
        xs = [m.tensor(d, requires_grad=True) for d in data]
        y = m.einsum(equation, *xs)
        (y * m.arange(y.numel(), dtype=m.float32).reshape(y.shape)).sum().backward()
        return tuple(x.grad for x in xs)
    _same(grads)


def test_einsum_repeated_letter_of_unequal_sizes_refused():
    _same_error(lambda m: m.einsum("ii->i", m.ones(2, 3)))


# -- the same rules on the test device (ZERO_TEST_DEVICE=cuda: the GPU's kernels) ------------------


def test_parity_edges_on_the_test_device():
    on = lambda t: t.to(DEVICE)                                              # noqa: E731
    base, exponent = [-3, -1, 0, 1, 2, -1], [-1, -3, -1, -2, -1, 2]
    z = on(zero.tensor(base)) ** on(zero.tensor(exponent))
    np.testing.assert_array_equal(z.cpu().numpy(), (torch.tensor(base) ** torch.tensor(exponent)).numpy())
    rows = [[-INF, -INF], [0.0, 1.0]]
    np.testing.assert_allclose(zero.log_softmax(on(zero.tensor(rows)), 1).cpu().numpy(),
                               torch.log_softmax(torch.tensor(rows), 1).numpy(), equal_nan=True)
    mask = [[True, False], [False, True]]
    np.testing.assert_array_equal(on(zero.tensor([1.0, 2.0])).masked_fill(on(zero.tensor(mask)), 0.0).cpu().numpy(),
                                  torch.tensor([1.0, 2.0]).masked_fill(torch.tensor(mask), 0.0).numpy())
    v = on(zero.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(v.view(zero.int32).cpu().numpy(), torch.tensor([1.0, 2.0]).view(torch.int32).numpy())
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    d = [[1], [3]]
    np.testing.assert_array_equal(on(zero.tensor(data))[0, :, on(zero.tensor(d))].cpu().numpy(),
                                  torch.tensor(data)[0, :, torch.tensor(d)].numpy())


# -- item 5, continued: a survey of bad inputs, each refused with PyTorch's builtin class ----------

ERROR_CASES = {
    "stack of nothing": lambda m: m.stack([]),
    "chunk 0": lambda m: m.ones(4).chunk(0),
    "gather out of range": lambda m: m.ones(3).gather(0, m.tensor([5])),
    "scatter out of range": lambda m: m.ones(3).scatter(0, m.tensor([5]), m.ones(1)),
    "index_select out of range": lambda m: m.ones(3).index_select(0, m.tensor([5])),
    "index_select float index": lambda m: m.ones(3).index_select(0, m.tensor([0.0])),
    "embedding out of range": lambda m: (ZF if m is zero else TF).embedding(m.tensor([5]), m.ones(3, 2)),
    "one_hot out of range": lambda m: (ZF if m is zero else TF).one_hot(m.tensor([3]), 2),
    "cross_entropy float target of another shape": lambda m: (ZF if m is zero else TF).cross_entropy(
        m.ones(2, 3), m.ones(2, 4)),
    "integer requires grad": lambda m: m.ones(2, dtype=m.int64).requires_grad_(),
    "item of 2 elements": lambda m: m.ones(2).item(),
    "arange step 0": lambda m: m.arange(0, 5, 0),
    "clamp without bounds": lambda m: m.ones(2).clamp(),
    "bool - bool": lambda m: m.tensor([True]) - m.tensor([False]),
    "-bool": lambda m: -m.tensor([True]),
    "float & float": lambda m: m.ones(2) & m.ones(2),
    "int div_": lambda m: m.ones(2, dtype=m.int64).div_(2),
    "ragged nested list": lambda m: m.tensor([[1, 2], [3]]),
    "randint low >= high": lambda m: m.randint(5, 2, (3,)),
    "randperm -1": lambda m: m.randperm(-1),
    "normal_ std < 0": lambda m: m.ones(2).normal_(0, -1),
    "reshape to another size": lambda m: m.ones(2, 3).reshape(4),
    "view of a transposed": lambda m: m.ones(2, 3).t().view(6),
    "transpose dim out of range": lambda m: m.ones(2, 3).transpose(0, 2),
    "index out of range": lambda m: m.ones(2, 3)[5],
    "float index tensor": lambda m: m.ones(2, 3)[m.tensor([0.0])],
    "argmax of nothing": lambda m: m.ones(0).argmax(),
    "Conv2d padding 'foo'": lambda m: m.nn.Conv2d(3, 4, 3, padding="foo"),
    "Conv2d padding 'same' strided": lambda m: m.nn.Conv2d(3, 4, 3, padding="same", stride=2),
    "split size 0": lambda m: m.ones(4).split(0),
    "tensor_split 0 sections": lambda m: m.tensor_split(m.ones(4), 0),
    "label_smoothing 1.5": lambda m: (ZF if m is zero else TF).cross_entropy(m.rand(2, 3), m.tensor([0, 1]),
                                                                             label_smoothing=1.5),
    "attention with a mask and is_causal": lambda m: (ZF if m is zero else TF).scaled_dot_product_attention(
        m.rand(1, 2, 3), m.rand(1, 2, 3), m.rand(1, 2, 3), attn_mask=m.ones(2, 2, dtype=m.bool), is_causal=True),
    "argmax over an empty dim": lambda m: m.ones(0, 3).argmax(0),
    "max of nothing": lambda m: m.ones(0).max(),
    "amax over an empty dim": lambda m: m.ones(0, 3).amax(0),
    "bmm sizes": lambda m: m.bmm(m.ones(2, 3, 4), m.ones(2, 5, 4)),
    "Linear in_features": lambda m: m.nn.Linear(3, 4)(m.ones(2, 5)),
    "layer_norm shape": lambda m: (ZF if m is zero else TF).layer_norm(m.ones(2, 3), (4,)),
    "copy_ shape": lambda m: m.ones(2).copy_(m.ones(3)),
    "add_ broadcasting the target": lambda m: m.ones(2).add_(m.ones(3, 2)),
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_bad_inputs_raise_pytorchs_builtin_class(case):
    _same_error(ERROR_CASES[case])
