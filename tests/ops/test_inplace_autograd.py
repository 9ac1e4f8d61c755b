"""In-place ops inside the graph, recorded as PyTorch records them: checked with float64
finite differences (gradcheck) and, where PyTorch is installed, against PyTorch running
the same program."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero.autograd import gradcheck
from zero.errors import InPlaceError

try:
    import torch
except ImportError:
    torch = None


def _mask(lib, a):
    return lib.tensor(np.array([True, False, True, False]))


PROGRAMS = {  # name: program(lib, a, b) -> output; a (4,) and b (4,) require grad
    "add_": lambda lib, a, b: (a * 1).add_(b),
    "sub_alpha": lambda lib, a, b: (a * 2).sub_(b, alpha=3),
    "mul_": lambda lib, a, b: (a * 1).mul_(b),
    "div_": lambda lib, a, b: (a + 0).div_(b),
    "iadd_self": lambda lib, a, b: _iadd_self(a),
    "clamp_": lambda lib, a, b: (a * b).clamp_(-0.5, 0.5),
    "relu_": lambda lib, a, b: (a * b).relu_(),
    "masked_fill_": lambda lib, a, b: (a * b).masked_fill_(_mask(lib, a), 0.25),
    "fill_": lambda lib, a, b: (a * b).fill_(2.0) * b,
    "copy_": lambda lib, a, b: (a * 1).copy_(b * 2),
    "setitem_slice": lambda lib, a, b: _setitem(a * 1, slice(1, 3), b[:2] * b[2:]),
    "setitem_index": lambda lib, a, b: _setitem(a * 1, lib.tensor([0, 3]), b[1:3]),
    "setitem_mask": lambda lib, a, b: _setitem(a * 1, _mask(lib, a), b[:2]),
    "setitem_scalar": lambda lib, a, b: _setitem(a * b, 2, 7.0),
    "view_mul_": lambda lib, a, b: _through_view(a * 1, lambda v: v.mul_(b[1:3])),
    "view_of_view": lambda lib, a, b: _through_view(a.reshape(2, 2) * 1, lambda v: v[0].mul_(b[:2]), flat=True),
    "transposed_view": lambda lib, a, b: _through_view(a.reshape(2, 2) * 1, lambda v: v.add_(b.reshape(2, 2)),
                                                       transpose=True),
    "sibling_view": lambda lib, a, b: _siblings(a * 1, b),
    "into_zeros": lambda lib, a, b: _into_zeros(lib, a, b),
}


def _iadd_self(a):
    c = a * 1
    c += c * 2   # micrograd's own test does this on scalars
    return c


def _setitem(x, key, value):
    x[key] = value
    return x


def _through_view(x, write, flat=False, transpose=False):
    view = x.t() if transpose else (x if flat else x[1:3])
    write(view)
    return x.reshape(-1) * 1.5   # the base carries the write


def _siblings(x, b):
    first, second = x[0:2], x[1:3]      # overlapping views of one base
    first.mul_(b[:2])
    return second * b[2:]                # second sees the write, and its gradient goes through it


def _into_zeros(lib, a, b):
    z = lib.zeros(4, dtype=a.dtype)      # a tensor that did not require grad ...
    z[1:3] = a[:2] * b[2:]               # ... takes the history of what is written into it
    return z + a


VALUES = np.array([0.3, -1.2, 0.8, 2.0]), np.array([1.5, 0.4, -0.7, 1.1])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradients_match_finite_differences(name):
    program = PROGRAMS[name]
    a, b = (zero.tensor(v, requires_grad=True) for v in VALUES)
    assert gradcheck(lambda x, y: program(zero, x, y), (a, b))


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_pytorch(name):
    program = PROGRAMS[name]
    results = {}
    for lib in (zero, torch):
        a, b = (lib.tensor(v, requires_grad=True) for v in VALUES)
        out = program(lib, a, b)
        out.sum().backward()
        results[lib.__name__] = [None if t is None else np.asarray(t.detach()) for t in (out, a.grad, b.grad)]
    for ours, theirs, what in zip(results["zero"], results["torch"], ("value", "grad a", "grad b")):
        assert (ours is None) == (theirs is None), what
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=what)


def test_overwriting_a_saved_tensor_raises_only_at_backward():
    a = zero.tensor([1.0, 2.0], requires_grad=True)
    y = a.exp()          # Exp saves its output, y
    y.add_(1.0)          # allowed here ...
    with pytest.raises(InPlaceError, match=r"modified by an inplace operation.*ExpBackward.*version 1; "
                                           r"expected version 0"):
        y.sum().backward()  # ... refused only now
    b = zero.tensor([1.0, 2.0], requires_grad=True)
    z = b + 1            # Add saves nothing: an in-place op after it is harmless
    z.mul_(3.0)
    z.sum().backward()
    assert b.grad.tolist() == [3.0, 3.0]


def test_what_stays_refused():
    leaf = zero.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(InPlaceError, match="add_: a leaf tensor that requires grad"):
        leaf.add_(1.0)
    with pytest.raises(InPlaceError, match="mul_: a view of a leaf tensor that requires grad"):
        leaf[:1].mul_(2.0)
    with pytest.raises(InPlaceError, match="more than one element .* refers to a single memory location"):
        (leaf * 1)[:1].expand(3).mul_(2.0)
    with zero.no_grad():
        leaf.add_(1.0)   # the optimizer's way
    assert leaf.tolist() == [2.0, 3.0] and leaf.is_leaf


def test_an_inplace_op_outside_the_graph_stays_one_kernel_write():
    x = zero.ones(3)
    version = x._storage.version
    x.mul_(2.0)
    assert x.grad_fn is None and not x.requires_grad and x._storage.version == version + 1


def test_copy_broadcasts_and_sends_the_summed_gradient_to_the_source():
    a = zero.tensor([1.0, 2.0], requires_grad=True)
    b = zero.tensor([3.0], requires_grad=True)
    x = a * 1
    x.copy_(b)
    (x * zero.tensor([1.0, 10.0])).sum().backward()
    assert x.tolist() == [3.0, 3.0] and b.grad.tolist() == [11.0] and a.grad.tolist() == [0.0, 0.0]
