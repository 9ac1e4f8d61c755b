"""The backward engine: graph recording, ordering, accumulation, gradient slots, freeing."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero.errors import AutogradError


def test_book_example():
    # z = x * y + x at x = 3, y = 2: dz/dx = y + 1 = 3, dz/dy = x = 3.
    x = zero.tensor(3.0, requires_grad=True)
    y = zero.tensor(2.0, requires_grad=True)
    z = x * y + x
    assert z.item() == 9.0
    z.backward()
    assert x.grad.item() == 3.0 and y.grad.item() == 3.0
    assert x.grad.shape == () and x.grad.dtype is zero.float32


def test_gradients_accumulate_across_paths():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = x * x + x.exp() + x * 3.0  # three paths from x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0]) + np.exp([1.0, 2.0]) + 3.0, rtol=1e-6)


def test_diamond_graph_runs_each_op_once():
    x = zero.tensor(2.0, requires_grad=True)
    a = x * 3.0
    b = a + a  # a is used twice: its gradient must be complete before a's backward runs
    c = b * a
    c.backward()  # c = 6x * 3x = 18 x^2 -> 36 x = 72
    assert x.grad.item() == 72.0


def test_gradients_accumulate_across_backward_calls_until_zeroed():
    x = zero.tensor([1.0, -1.0], requires_grad=True)
    for calls in range(1, 4):
        (x * 2.0).sum().backward()
        assert x.grad.tolist() == [2.0 * calls] * 2
    x.grad.zero_()
    (x * 2.0).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    (x * 5.0).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


@pytest.mark.parametrize("run", [
    lambda s: s.backward(zero.ones(3)),  # the caller's gradient reaches Add
    lambda s: (s * 1.0).sum().backward(),  # a fresh gradient from Mul reaches Add
    lambda s: s.sum().backward(),  # an expanded (stride 0) gradient reaches Add
], ids=["user_gradient", "fresh_gradient", "expanded_gradient"])
def test_sibling_leaves_never_share_gradient_storage(run):
    x = zero.ones(3, requires_grad=True)
    y = zero.ones(3, requires_grad=True)
    run(x + y)  # Add hands the same gradient tensor to both inputs
    assert x.grad.untyped_storage() is not y.grad.untyped_storage()
    assert x.grad.data_ptr() != y.grad.data_ptr()
    # A second backward accumulates into x.grad in place; y.grad must not see it.
    (x * 10.0).sum().backward()
    assert x.grad.tolist() == [11.0] * 3
    assert y.grad.tolist() == [1.0] * 3


def test_a_gradient_still_pending_for_an_op_is_not_adopted_by_a_leaf():
    # The outer Add sends one gradient tensor to x and to the inner Add. Were x to adopt it,
    # the inner Add's own contribution to x (added in place) would change the gradient the
    # inner Add passes on to z: x.grad would come out 8 instead of 3 + 1 + 1.
    x = zero.ones(3, requires_grad=True)
    z = x * 3.0
    (((z + x) + x) * 1.0).sum().backward()
    assert x.grad.tolist() == [5.0] * 3


def test_the_same_leaf_twice_in_one_op():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    (x + x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_a_user_gradient_is_never_aliased_into_a_grad():
    for make in (lambda x: x, lambda x: x + 0.0, lambda x: x.view(3), lambda x: x * 1.0, lambda x: x.reshape(3),
                 lambda x: x.clone(), lambda x: x.T, lambda x: x.to(zero.float32), lambda x: x[None][0]):
        x = zero.zeros(3, requires_grad=True)
        gradient = zero.tensor([1.0, 2.0, 3.0])
        make(x).backward(gradient)
        assert x.grad.tolist() == [1.0, 2.0, 3.0]
        assert x.grad.untyped_storage() is not gradient.untyped_storage()
        gradient.fill_(100.0)  # the caller reuses its tensor: .grad must not change
        assert x.grad.tolist() == [1.0, 2.0, 3.0]
        (x * 1.0).backward(zero.ones(3))  # and accumulating into .grad must not touch the caller's tensor
        assert gradient.tolist() == [100.0] * 3


def test_a_sole_owner_gradient_is_adopted_without_a_copy():
    x = zero.ones(4, requires_grad=True)
    with zero.profiler.profile() as prof:
        (x * 2.0).backward(zero.ones(4))
    assert "Copy" not in prof.stats  # Mul's fresh gradient became x.grad as it is
    assert x.grad.tolist() == [2.0] * 4
    y = zero.ones(4, requires_grad=True)
    with zero.profiler.profile() as prof:
        y.sum().backward()  # the gradient of a sum is an expanded view: copied once
    assert prof.stats["Copy"].forward_calls == 1
    assert y.grad.is_contiguous() and y.grad.stride() == (1,)


def test_views_have_their_own_gradient_slots():
    x = zero.arange(6.0).view(2, 3).requires_grad_()
    t = x.T
    t.retain_grad()
    (t * zero.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    assert t.grad.shape == (3, 2) and x.grad.shape == (2, 3)
    assert x.grad.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    assert t.grad.tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert t.untyped_storage() is x.untyped_storage() and t.grad_fn is not None


@pytest.mark.parametrize("make_view", [
    lambda x: x.T,
    lambda x: x[:, ::2],
    lambda x: x[1],
    lambda x: x[None].expand(2, 3, 4),
    lambda x: x.view(4, 3),
    lambda x: x.permute(1, 0)[1:],
    lambda x: x.unsqueeze(1).transpose(0, 2),
], ids=["T", "slice", "index", "expand", "view", "permute_slice", "unsqueeze_transpose"])
def test_leaf_gradient_through_views_has_the_leaf_shape_and_is_contiguous(make_view):
    values = np.arange(12.0).reshape(3, 4)
    x = zero.tensor(values, requires_grad=True)
    view = make_view(x)
    weights = np.random.default_rng(0).standard_normal(view.shape)
    (view * zero.tensor(weights)).sum().backward()
    assert x.grad.shape == (3, 4) and x.grad.is_contiguous()
    # A view is linear in x: bumping one element of x by 1 changes sum(view * w) by its gradient.
    np.testing.assert_allclose(x.grad.numpy(), _gradient_by_probing(make_view, values, weights), rtol=1e-12)


def _gradient_by_probing(make_view, values, weights):
    """d sum(view(x) * w) / dx by perturbing each element of x (the view is linear in x)."""
    grad = np.zeros_like(values)
    base = (make_view(zero.tensor(values)).numpy() * weights).sum()
    for index in np.ndindex(*values.shape):
        bumped = values.copy()
        bumped[index] += 1.0
        grad[index] = (make_view(zero.tensor(bumped)).numpy() * weights).sum() - base
    return grad


def test_a_long_chain_needs_no_recursion():
    x = zero.tensor(1.0, dtype=zero.float64, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    assert x.grad.item() == pytest.approx(1.0001 ** 10_000, rel=1e-9)


def test_retain_graph_allows_a_second_backward():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_a_second_backward_without_retain_graph_raises_a_clear_error():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(AutogradError, match="second time.*retain_graph=True"):
        y.backward()
    assert issubclass(AutogradError, RuntimeError)


def test_the_graph_releases_saved_tensors_after_backward():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    op = y.grad_fn
    y.sum().backward()
    assert op.released and op._saved is None


def test_backward_of_a_non_scalar_needs_a_gradient():
    x = zero.ones(2, 3, requires_grad=True)
    with pytest.raises(AutogradError, match=r"scalar.*float32\[2, 3\]"):
        (x * 2).backward()
    with pytest.raises(AutogradError, match=r"gradient float32\[3\].*does not match.*float32\[2, 3\]"):
        (x * 2).backward(zero.ones(3))
    (x * 2).backward(zero.full((2, 3), 0.5))
    assert x.grad.tolist() == [[1.0] * 3] * 2


def test_backward_of_a_tensor_that_does_not_require_grad_raises():
    with pytest.raises(AutogradError, match="does not require grad"):
        zero.ones(2).sum().backward()


# -- grad mode ------------------------------------------------------------------------------


def test_no_grad_and_enable_grad_as_context_managers():
    x = zero.ones(2, requires_grad=True)
    with zero.no_grad():
        assert not zero.is_grad_enabled()
        y = x * 2
        with zero.enable_grad():
            assert zero.is_grad_enabled()
            z = x * 2
        assert not zero.is_grad_enabled()
    assert zero.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None


def test_grad_mode_as_decorators():
    x = zero.ones(2, requires_grad=True)

    @zero.no_grad()
    def frozen(t):
        assert not zero.is_grad_enabled()
        return t * 2

    @zero.enable_grad()
    def recorded(t):
        return t * 2

    assert zero.is_grad_enabled()  # decorating does not switch the mode
    assert not frozen(x).requires_grad
    with zero.no_grad():
        assert recorded(x).requires_grad
    assert frozen.__name__ == "frozen"


def test_grad_mode_is_restored_when_an_exception_escapes():
    with pytest.raises(KeyError):
        with zero.no_grad():
            raise KeyError
    assert zero.is_grad_enabled()

    @zero.no_grad()
    def fails():
        raise ValueError

    with pytest.raises(ValueError):
        fails()
    assert zero.is_grad_enabled()
    with zero.no_grad():
        with pytest.raises(KeyError):
            with zero.enable_grad():
                raise KeyError
        assert not zero.is_grad_enabled()


def test_set_grad_enabled():
    with zero.set_grad_enabled(False):
        assert not zero.is_grad_enabled()
    assert zero.is_grad_enabled()
    zero.set_grad_enabled(False)
    try:
        assert not (zero.ones(1, requires_grad=True) * 2).requires_grad
    finally:
        zero.set_grad_enabled(True)
    assert zero.is_grad_enabled()


# -- tensor autograd state -----------------------------------------------------------------


def test_requires_grad_is_leaf_and_grad_fn():
    x = zero.ones(2)
    assert not x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name == "MulBackward"
    assert (zero.ones(2) * 2).grad_fn is None  # nothing requires grad: nothing recorded
    with pytest.raises(AutogradError, match="leaf.*MulBackward.*detach"):
        y.requires_grad_(False)
    with pytest.raises(zero.errors.DTypeError, match="floating-point.*int64"):
        zero.tensor([1, 2]).requires_grad_()
    x.requires_grad = False
    assert not x.requires_grad
    assert zero.ones(2, requires_grad=True).requires_grad


def test_non_leaf_gradients_are_kept_only_with_retain_grad():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    z = x * 4.0
    y.retain_grad()
    assert y.retains_grad and not z.retains_grad
    ((y + z) * 2.0).sum().backward()
    assert y.grad.tolist() == [2.0, 2.0] and z.grad is None
    assert x.grad.tolist() == [14.0, 14.0]
    with pytest.raises(AutogradError, match="retain_grad"):
        zero.ones(1).retain_grad()


def test_detach_shares_storage_but_not_the_graph():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.untyped_storage() is y.untyped_storage()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d[0] = 10.0  # writes through to y
    assert y.tolist() == [10.0, 4.0]
    d2 = x.detach()
    assert d2.data_ptr() == x.data_ptr()


def test_clone_copies_with_the_graph():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.untyped_storage() is not x.untyped_storage()
    assert c.requires_grad and c.grad_fn is not None
    (c * c).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    c2 = x.detach().clone()
    with zero.no_grad():
        c2.add_(1)
    assert x.tolist() == [1.0, 2.0]


# -- zero.autograd.grad ----------------------------------------------------------------------


def test_autograd_grad_of_leaves_and_non_leaves():
    x = zero.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    y = (h * 3.0).sum()
    gx, gh = zero.autograd.grad(y, [x, h])
    assert gx.tolist() == [6.0, 12.0] and gh.tolist() == [3.0, 3.0]
    assert x.grad is None and h.grad is None  # grad() touches no .grad


def test_autograd_grad_single_input_and_retain_graph():
    x = zero.tensor(3.0, requires_grad=True)
    y = x * x * x
    (g,) = zero.autograd.grad(y, x, retain_graph=True)
    assert g.item() == 27.0
    (g2,) = zero.autograd.grad(y, x, grad_outputs=zero.tensor(2.0))
    assert g2.item() == 54.0


def test_autograd_grad_unused_inputs():
    x = zero.tensor(1.0, requires_grad=True)
    unused = zero.tensor(2.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        zero.autograd.grad(x * 2, [x, unused], retain_graph=True)
    gx, gu = zero.autograd.grad(x * 2, [x, unused], allow_unused=True)
    assert gx.item() == 2.0 and gu is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        zero.autograd.grad(x * 2, [zero.tensor(1.0)])


def test_backward_into_float64_leaves_through_a_cast():
    x = zero.tensor([1.0, 2.0], dtype=zero.float64, requires_grad=True)
    y = x.float() * zero.tensor([1.0, 3.0])
    y.sum().backward()
    assert x.grad.dtype is zero.float64 and x.grad.tolist() == [1.0, 3.0]
