"""PyTorch's ``torch`` names issue 37 (torchnames) adds, against PyTorch (1 of 3): the top-level
in-place forms (``zero.exp_(x)``), Tensor's missing in-place twins (``x.eq_(y)``, ``x.pow_(2)``,
``x.t_()`` ...), constants, settings, ``sym_*``, ``vmap``, ``from_file``, Tensor's older and
smaller methods, and the new names on the test device. Values, dtypes, gradients, and the
errors PyTorch gives (an in-place op on a leaf that requires grad). The others:
test_torch_level_nn.py, test_torch_views_scatters.py."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import zero
from torch_namespace_data import (B3, F32, INTS, OTHER, RNG, UNIT, close, compare, lib_tensor)

torch = pytest.importorskip("torch")


# name: (input array, extra arguments; "other" is a second float tensor)
IN_PLACE = {
    **{name: (UNIT, ()) for name in (
        "abs_", "acos_", "arccos_", "asin_", "arcsin_", "asinh_", "arcsinh_", "atan_", "arctan_",
        "atanh_", "arctanh_", "ceil_", "cos_", "cosh_", "erf_", "erfc_", "exp_", "exp2_", "expm1_", "fix_",
        "floor_", "frac_", "log_", "log10_", "log1p_", "log2_", "nan_to_num_", "neg_", "negative_",
        "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
        "trunc_", "zero_", "deg2rad_", "rad2deg_", "sinc_", "logit_", "i0_")},
    "acosh_": (UNIT + 1.5, ()), "arccosh_": (UNIT + 1.5, ()),
    "clamp_": (UNIT, (0.3, 0.6)), "clip_": (UNIT, (0.3, 0.6)), "clamp_min_": (UNIT, (0.4,)),
    "clamp_max_": (UNIT, (0.4,)), "xlogy_": (UNIT, ("other",)), "fill_": (UNIT, (2.5,)),
    "ldexp_": (UNIT, ("other",)),
}


@pytest.mark.parametrize("name", ["gcd_", "lcm_"])
def test_integer_in_place_forms_as_pytorch(name):
    a, b = np.array([4, 6, 0, -9, 15]), np.array([6, 4, 5, 6, -10])
    got, want = zero.tensor(a), torch.tensor(a)
    assert getattr(zero, name)(got, zero.tensor(b)) is got
    assert getattr(torch, name)(want, torch.tensor(b)) is want
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def _arguments(lib, args):
    named = {"other": OTHER}
    return [lib_tensor(lib, named[a]) if isinstance(a, str) else a for a in args]


def _run_in_place(lib, name, array, args, call):
    leaf = lib_tensor(lib, array, requires_grad=True)
    t = leaf * 1.0                      # (a non-leaf: in place is allowed, and differentiable)
    result = call(lib, name, t, _arguments(lib, args))
    assert result is t
    weights = lib_tensor(lib, OTHER.reshape(-1)[:t.numel()].reshape(tuple(t.shape)))
    try:
        (t * weights).sum().backward()
    except NotImplementedError:         # (PyTorch has no in-place derivative of acosh, asinh, atanh:
        leaf.grad = None                # Zero's is the out-of-place one's, checked against that)
        (getattr(lib, name[:-1])(leaf * 1.0, *_arguments(lib, args)) * weights).sum().backward()
    return t, leaf.grad


def _as_function(lib, name, t, args):
    return getattr(lib, name)(t, *args)


def _as_method(lib, name, t, args):
    return getattr(t, name)(*args)


@pytest.mark.parametrize("call", [_as_function, _as_method], ids=["function", "method"])
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_forms_as_pytorch(name, call):
    array, args = IN_PLACE[name]
    got, got_grad = _run_in_place(zero, name, array, args, call)
    want, want_grad = _run_in_place(torch, name, array, args, call)
    close(got, want, rtol=1e-5)
    if want_grad is None:
        assert got_grad is None
    else:
        close(got_grad, want_grad, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_on_a_leaf_that_requires_grad_is_refused(name):
    array, args = IN_PLACE[name]
    for lib in (torch, zero):
        leaf = lib_tensor(lib, array, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            getattr(lib, name)(leaf, *_arguments(lib, args))
        with lib.no_grad():              # (outside grad mode it is allowed, as optimizers do)
            assert getattr(lib, name)(leaf, *_arguments(lib, args)) is leaf


def test_in_place_functions_refuse_a_float_result_in_an_integer_tensor():
    for lib in (torch, zero):
        with pytest.raises(RuntimeError):
            lib.sqrt_(lib_tensor(lib, INTS))
        with pytest.raises(TypeError):
            lib.exp_([1.0, 2.0])


def test_every_top_level_in_place_function_is_tested():
    from zero.ops.inplace_functions import TOP_LEVEL_IN_PLACE
    assert set(TOP_LEVEL_IN_PLACE) - {"detach_", "index_put_", "gcd_", "lcm_"} == set(IN_PLACE)  # (tests below)


def test_detach_and_detach_():
    for lib in (torch, zero):
        leaf = lib_tensor(lib, UNIT, requires_grad=True)
        d = lib.detach(leaf * 2)
        assert not d.requires_grad and d.grad_fn is None
        t = leaf * 2
        assert lib.detach_(t) is t and not t.requires_grad and t.grad_fn is None


def test_fill_is_a_new_tensor_with_the_gradient_of_value():
    for lib in (torch, zero):
        x = lib_tensor(lib, UNIT, requires_grad=True)
        value = lib.tensor(2.0, requires_grad=True)
        out = lib.fill(x, value)
        assert out.shape == x.shape and bool((out == 2.0).all()) and out.dtype == x.dtype
        out.sum().backward()
        assert value.grad.item() == 12.0 and float(x.grad.abs().sum()) == 0.0
        ints = lib.fill(lib_tensor(lib, INTS), 7)
        assert ints.dtype == lib.int64 and ints.tolist() == [[7] * 3] * 2
        with pytest.raises(RuntimeError):
            lib.fill(x, lib.ones(2))


# -- Tensor's in-place twins (computed out of place, written in) ---------------------------------

TWINS = {  # name: (input, arguments)
    "eq_": (UNIT, ("other",)), "ne_": (UNIT, (0.5,)), "not_equal_": (UNIT, ("other",)),
    "lt_": (UNIT, ("other",)), "less_": (UNIT, (0.5,)), "le_": (UNIT, ("other",)),
    "less_equal_": (UNIT, ("other",)), "gt_": (UNIT, ("other",)), "greater_": (UNIT, ("other",)),
    "ge_": (UNIT, (0.5,)), "greater_equal_": (UNIT, ("other",)),
    "logical_and_": (UNIT, ("other",)), "logical_or_": (UNIT, ("other",)), "logical_xor_": (UNIT, ("other",)),
    "logical_not_": (UNIT, ()), "pow_": (UNIT, (2.0,)), "cumsum_": (UNIT, (1,)), "tril_": (UNIT, ()),
    "triu_": (UNIT, (1,)),
}


@pytest.mark.parametrize("name", sorted(TWINS))
def test_tensor_in_place_twins_as_pytorch(name):
    array, args = TWINS[name]
    got, got_grad = _run_in_place(zero, name, array, args, _as_method)
    want, want_grad = _run_in_place(torch, name, array, args, _as_method)
    close(got, want, rtol=1e-5)
    close(got_grad, want_grad, rtol=1e-5)


@pytest.mark.parametrize("name, args", [("bitwise_and_", (3,)), ("bitwise_or_", (8,)), ("bitwise_xor_", ("ints",)),
                                        ("bitwise_not_", ()), ("pow_", (2,)), ("eq_", (3,)), ("cumsum_", (0,))])
def test_integer_in_place_twins(name, args):
    results = []
    for lib in (torch, zero):
        t = lib_tensor(lib, INTS)
        resolved = [lib_tensor(lib, INTS[::-1].copy()) if a == "ints" else a for a in args]
        assert getattr(t, name)(*resolved) is t
        results.append(t.tolist())
    assert results[0] == results[1]


def test_logical_twins_write_outside_the_graph():
    for lib in (torch, zero):
        leaf = lib_tensor(lib, UNIT - 0.5, requires_grad=True)
        assert leaf.logical_not_() is leaf and leaf.grad_fn is None and leaf.requires_grad
        assert leaf.tolist() == [[0.0] * 4] * 3
        ints = lib_tensor(lib, np.array([1, 0, 2]))
        assert ints.logical_xor_(lib_tensor(lib, np.array([1, 1, 0]))).tolist() == [0, 1, 1]


def test_in_place_operators():
    for lib in (torch, zero):
        t = lib_tensor(lib, INTS)
        keep = t
        t &= 6
        t |= 1
        t ^= 2
        assert t is keep and t.tolist() == (((INTS & 6) | 1) ^ 2).tolist()
        f = lib_tensor(lib, UNIT)
        keep = f
        f **= 2
        assert f is keep
        np.testing.assert_allclose(f.numpy(), UNIT ** 2, rtol=1e-6)


def test_a_float_comparison_result_in_an_integer_tensor():
    for lib in (torch, zero):
        t = lib_tensor(lib, INTS)
        t.gt_(2.5)
        assert t.dtype == lib.int64 and t.tolist() == (INTS > 2.5).astype(int).tolist()
        with pytest.raises(RuntimeError):
            lib_tensor(lib, INTS).pow_(0.5)


# -- in-place view changes: the tensor's own shape ------------------------------------------------

VIEW_CHANGES = [("t_", ()), ("transpose_", (0, 1)), ("swapaxes_", (1, 0)), ("swapdims_", (0, 1)),
                ("squeeze_", ()), ("squeeze_", (1,)), ("unsqueeze_", (1,)), ("unsqueeze_", (-1,))]


@pytest.mark.parametrize("name, args", VIEW_CHANGES)
def test_in_place_view_changes_as_pytorch(name, args):
    array = UNIT[:, :1].copy() if name == "squeeze_" else UNIT
    out = {}
    for lib in (torch, zero):
        leaf = lib_tensor(lib, array, requires_grad=True)
        t = leaf * 2.0
        assert getattr(t, name)(*args) is t
        weights = lib.arange(t.numel(), dtype=lib.float32).reshape(t.shape)
        (t * weights).sum().backward()
        out[lib] = (tuple(t.shape), tuple(t.stride()), t.detach().numpy().copy(), leaf.grad.numpy().copy())
        with pytest.raises(RuntimeError, match="leaf"):
            getattr(lib_tensor(lib, array, requires_grad=True), name)(*args)
        plain = lib_tensor(lib, array)
        storage = plain.data_ptr()
        getattr(plain, name)(*args)
        assert plain.data_ptr() == storage and tuple(plain.shape) == out[lib][0]
    (shape, strides, values, grad), (z_shape, z_strides, z_values, z_grad) = out[torch], out[zero]
    assert (z_shape, z_strides) == (shape, strides)
    np.testing.assert_allclose(z_values, values)
    np.testing.assert_allclose(z_grad, grad)


def test_in_place_view_change_of_a_view_writes_the_base():
    for lib in (torch, zero):
        base = lib.zeros(2, 3)
        view = base[:, 1:]
        view.t_()
        view[0, 1] = 5.0
        assert base.tolist() == [[0, 0, 0], [0, 5, 0]]


def test_constants():
    for name in ("e", "pi", "inf", "nan"):
        got, want = getattr(zero, name), getattr(torch, name)
        assert (math.isnan(got) and math.isnan(want)) or got == want
    assert zero.newaxis is torch.newaxis is None
    assert zero.ones(2, 3)[:, zero.newaxis].shape == (2, 1, 3)


# -- settings and facts ------------------------------------------------------------------------------

def test_default_generator_is_the_one_manual_seed_seeds():
    for lib in (torch, zero):
        assert isinstance(lib.default_generator, lib.Generator)
        lib.default_generator.manual_seed(21)
        first = lib.rand(4)
        lib.manual_seed(21)
        assert bool((lib.rand(4) == first).all()) and lib.default_generator.initial_seed() == 21


def test_is_inference_mode_enabled_as_pytorch():
    for lib in (torch, zero):
        seen = [lib.is_inference_mode_enabled()]
        with lib.inference_mode():
            seen.append(lib.is_inference_mode_enabled())
            with lib.inference_mode(False):
                seen.append(lib.is_inference_mode_enabled())
            with lib.no_grad():
                seen.append(lib.is_inference_mode_enabled())
        with lib.no_grad():
            seen.append(lib.is_inference_mode_enabled())
        seen.append(lib.is_inference_mode_enabled())
        assert seen == [False, True, False, True, False, False], lib.__name__


def test_facts():
    assert zero.has_lapack is True and torch.has_lapack is True
    assert zero.is_vulkan_available() is False and torch.is_vulkan_available() is False
    assert zero.set_flush_denormal(True) is False and zero.set_flush_denormal(False) is False
    with pytest.raises(TypeError):
        zero.set_flush_denormal("yes")


# -- on the test device (ZERO_TEST_DEVICE=cuda: the GPU run, or its played dry run) ----------------

def test_new_names_on_the_test_device():
    """The names built here that touch storage, random draws or index arithmetic, on the
    test device, against the same calls on the CPU."""
    from op_harness import DEVICE
    device = zero.device(DEVICE)
    x_cpu = zero.tensor(UNIT, requires_grad=True)
    x_dev = zero.tensor(UNIT, device=device, requires_grad=True)
    results = []
    for x in (x_cpu, x_dev):
        index = zero.tensor([0, 2, 0], device=x.device)
        parts = [
            zero.as_strided(x * 1, (3, 3), (1, 1), 1),
            zero.index_put(x, (index,), zero.ones(4, device=x.device), True),
            zero.put(x, index, zero.ones(3, device=x.device), accumulate=True),
            zero.slice_scatter(x, zero.zeros(3, 2, device=x.device), 1, 0, 4, 2),
            zero.index_reduce(x, 1, zero.tensor([1, 1], device=x.device), x[:, :2] * 3, "amax"),
            zero.transpose_copy(x, 0, 1), zero.select(x, 1, 2), zero.exp_(x * 1),
        ]
        sum((p * (k + 1)).sum() for k, p in enumerate(parts)).backward()
        results.append([p.detach().cpu().numpy() for p in parts] + [x.grad.cpu().numpy()])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    zero.manual_seed(2)
    draws = zero.empty(50, 40, device=device).exponential_(2.0)
    assert draws.device == device and float(draws.min()) >= 0 and abs(float(draws.mean()) - 0.5) < 0.05
    grown = zero.arange(6.0, device=device)
    grown.resize_(3, 4)
    assert grown.device == device and grown.reshape(-1)[:6].cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert zero.get_device(zero.ones(1, device=device)) == (-1 if device.type == "cpu" else device.index or 0)


# -- older and smaller Tensor methods ----------------------------------------------------------------

def test_apply_map_map2_as_pytorch():
    results = []
    for lib in (torch, zero):
        x = lib.arange(6.0).reshape(2, 3)
        a = x.clone()
        assert a.apply_(lambda v: v * 2 + 1) is a
        b = x.clone().map_(lib.ones(3), lambda p, q: p - q)
        c = x.clone().map2_(lib.ones(3), lib.full((2, 1), 2.0), lambda p, q, r: p + q * r)
        ints = lib.tensor([1, 2]).apply_(lambda v: v * 1.7)             # (written back as the dtype)
        results.append([a.tolist(), b.tolist(), c.tolist(), ints.tolist()])
        with pytest.raises(RuntimeError, match="requires grad"):
            lib.ones(2, requires_grad=True).apply_(lambda v: v)
    assert results[0] == results[1]


def test_new_const_data_ptr_is_set_to_dim_order_is_distributed():
    for lib in (torch, zero):
        x = lib.arange(6.0).reshape(2, 3)
        assert tuple(x.new(2, 3).shape) == (2, 3) and x.new(2, 3).dtype == lib.float32
        assert tuple(x.new().shape) == (0,)
        assert x.new([1, 2]).dtype == lib.float32 and x.new([1, 2]).tolist() == [1.0, 2.0]
        assert lib.ones(2, dtype=lib.int64).new([1.5]).dtype == lib.int64
        assert x.const_data_ptr() == x.data_ptr()
        assert x.is_set_to(x) and x.is_set_to(x.view(2, 3)) and not x.is_set_to(x.t())
        assert not x.is_set_to(x.clone()) and not x[1:].is_set_to(x[:1])
        assert x.dim_order() == (0, 1) and x.t().dim_order() == (1, 0)
        assert lib.ones(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
        assert lib.ones(2, 1, 3).dim_order() == (0, 1, 2)
        assert not lib.is_distributed(x) and not x.is_distributed()


# -- sym_*, vmap, from_file, set_default_tensor_type, nonzero_static, conj_physical_, cudnn_is_acceptable

@pytest.mark.parametrize("call", [
    lambda lib: lib.sym_max(2, 3), lambda lib: lib.sym_max(2, 3.5), lambda lib: lib.sym_max(True, 2),
    lambda lib: lib.sym_min(2.5, 1), lambda lib: lib.sym_min(4, 7), lambda lib: lib.sym_float(2),
    lambda lib: lib.sym_int(2.7), lambda lib: lib.sym_int(-2.7), lambda lib: lib.sym_not(True),
    lambda lib: lib.sym_not(0), lambda lib: lib.sym_sqrt(4), lambda lib: lib.sym_sum([1, 2, 3]),
    lambda lib: lib.sym_sum([1, 2.5]), lambda lib: lib.sym_ite(True, 1, 2), lambda lib: lib.sym_ite(False, 1, 2),
])
def test_sym_helpers_on_plain_numbers_as_pytorch(call):
    got, want = call(zero), call(torch)
    assert got == want and type(got) is type(want)


def test_vmap_as_pytorch():
    cases = [
        (lambda lib: lib.vmap(lambda a, b: (a * b).sum()), [UNIT, OTHER]),
        (lambda lib: lib.vmap(lambda a, b: a @ b, in_dims=(0, None)), [B3, OTHER.T.copy()]),
        (lambda lib: lib.vmap(lambda a: a.softmax(0), in_dims=1, out_dims=1), [UNIT]),
        (lambda lib: lib.vmap(lambda a: (a.max(), a.min()), out_dims=(0, 0)), [UNIT]),
        (lambda lib: lib.vmap(lib.outer), [UNIT, OTHER]),
    ]
    for make, arrays in cases:
        compare(lambda lib, *tensors, make=make: make(lib)(*tensors), arrays)
    for lib in (torch, zero):
        with pytest.raises(ValueError):
            lib.vmap(lambda a, b: a + b)(lib.ones(2, 3), lib.ones(3, 3))
        with pytest.raises(ValueError):
            lib.vmap(lambda a: a, in_dims=None)(lib.ones(2))


def test_from_file_maps_or_copies(tmp_path):
    for lib in (torch, zero):
        path = tmp_path / f"{lib.__name__}.bin"
        np.arange(6, dtype=np.float32).tofile(path)
        copied = lib.from_file(str(path), False, 4, dtype=lib.float32)
        assert copied.tolist() == [0.0, 1.0, 2.0, 3.0]
        copied[0] = 9.0
        assert np.fromfile(path, np.float32)[0] == 0.0
        mapped = lib.from_file(str(path), True, 6, dtype=lib.float32)
        mapped[1] = 7.0
        del mapped
        assert np.fromfile(path, np.float32)[1] == 7.0
        with pytest.raises(RuntimeError):
            lib.from_file(str(path), False, 100, dtype=lib.float32)
        created = lib.from_file(str(tmp_path / f"{lib.__name__}.new"), True, 3, dtype=lib.int32)
        assert created.tolist() == [0, 0, 0] and (tmp_path / f"{lib.__name__}.new").stat().st_size == 12


def test_set_default_tensor_type_as_pytorch():
    try:
        with pytest.warns(UserWarning, match="deprecated"):
            zero.set_default_tensor_type(zero.FloatTensor)
        for lib in (torch, zero):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")     # (PyTorch warns once a process)
                lib.set_default_tensor_type(lib.DoubleTensor)
                assert lib.get_default_dtype() == lib.float64 and lib.ones(1).dtype == lib.float64
                lib.set_default_tensor_type("torch.FloatTensor")
                assert lib.get_default_dtype() == lib.float32
                for bad in (lib.LongTensor, "torch.IntTensor", "torch.cuda.FloatTensor"):
                    with pytest.raises(TypeError):
                        lib.set_default_tensor_type(bad)
    finally:
        torch.set_default_dtype(torch.float32)
        zero.set_default_dtype(zero.float32)


def test_nonzero_static_conj_physical_cudnn():
    for lib in (torch, zero):
        t = lib.tensor([0, 1, 0, 2])
        assert lib.nonzero_static(t, size=3).tolist() == [[1], [3], [-1]]
        assert t.nonzero_static(size=1).tolist() == [[1]]
        grid = lib.tensor([[0, 1], [1, 1]])
        assert lib.nonzero_static(grid, size=4, fill_value=-5).tolist() == [[0, 1], [1, 0], [1, 1], [-5, -5]]
        assert lib.nonzero_static(grid, size=0).shape == (0, 2)
        x = lib.ones(2)
        assert lib.conj_physical_(x) is x and x.conj_physical_() is x
        assert lib.cudnn_is_acceptable(x) is False


# -- fill_diagonal_, set_, as_subclass, the devices Zero does not have ---------------------------------

@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((7, 3), True), ((7, 3), False), ((2, 5), False),
                                         ((2, 2, 2), False)])
def test_fill_diagonal_as_pytorch(shape, wrap):
    array = RNG.uniform(0, 1, shape).astype(F32)

    def fill(lib, x):
        return (x * 1).fill_diagonal_(5.0, wrap=wrap)
    compare(fill, [array])


def test_fill_diagonal_errors():
    for lib in (torch, zero):
        with pytest.raises(RuntimeError):
            lib.zeros(2, 3, 4).fill_diagonal_(1.0)
        with pytest.raises(RuntimeError, match="leaf"):
            lib.zeros(2, 2, requires_grad=True).fill_diagonal_(1.0)


def test_set_reads_another_tensors_memory():
    for lib in (torch, zero):
        target, source = lib.ones(2), lib.arange(4.0)
        assert target.set_(source) is target and target.tolist() == [0.0, 1.0, 2.0, 3.0]
        target[0] = 9.0
        assert source[0].item() == 9.0
        assert tuple(target.set_().shape) == (0,)
        storage = lib.arange(6.0).untyped_storage()
        t = lib.empty(0).set_(storage, 1, (2, 2), (1, 2))
        assert t.tolist() == [[1.0, 3.0], [2.0, 4.0]]
        with pytest.raises(RuntimeError):
            lib.ones(2, requires_grad=True).set_(lib.ones(3))


def test_as_subclass_shares_and_keeps_the_graph():
    for lib in (torch, zero):
        class Marked(lib.Tensor):
            pass
        leaf = lib.ones(2, 3, requires_grad=True)
        marked = leaf.as_subclass(Marked)
        assert type(marked) is Marked and marked.data_ptr() == leaf.data_ptr() and marked.requires_grad
        (marked * 2).sum().backward()
        assert leaf.grad.tolist() == [[2.0] * 3] * 2
        with pytest.raises(TypeError):
            leaf.as_subclass(int)


def test_devices_and_layouts_zero_does_not_have():
    for lib in (torch, zero):
        x = lib.ones(2)
        for name in ("is_ipu", "is_maia", "is_mtia", "is_xla", "is_xpu", "is_mps", "is_vulkan", "is_mkldnn",
                     "is_nested", "is_quantized"):
            assert getattr(x, name) is False, name
        assert x.is_pinned() is False
