"""zero.set_printoptions: precision, threshold, edgeitems, linewidth, sci_mode and profiles
change repr(tensor); the defaults come back with profile="default"."""
from __future__ import annotations

import pytest

import zero


@pytest.fixture(autouse=True)
def default_options():
    yield
    zero.set_printoptions(profile="default")


def test_precision_and_sci_mode():
    x = zero.tensor([1.23456, 2.5])
    assert repr(x) == "tensor([1.2346, 2.5   ])"
    zero.set_printoptions(precision=2)
    assert repr(x) == "tensor([1.23, 2.5 ])"
    zero.set_printoptions(precision=3, sci_mode=True)
    assert repr(x) == "tensor([1.235e+00, 2.500e+00])"
    zero.set_printoptions(precision=1, sci_mode=False)
    assert repr(zero.tensor([1e-7, 12345.678])) == "tensor([0.0, 12345.7])"


def test_threshold_edgeitems_linewidth_and_profiles():
    x = zero.arange(20)
    zero.set_printoptions(threshold=10, edgeitems=2)
    assert repr(x) == "tensor([ 0,  1, ..., 18, 19])"
    zero.set_printoptions(profile="full", linewidth=30)
    assert repr(x).splitlines()[0] == "tensor([ 0,  1,  2,  3,  4," and "..." not in repr(x)
    zero.set_printoptions(profile="short")
    assert zero.get_printoptions()["precision"] == 2 and repr(zero.tensor([0.125])) == "tensor([0.12])"
    zero.set_printoptions(profile="default")
    assert zero.get_printoptions() == {"precision": 4, "threshold": 200, "edgeitems": 3, "linewidth": 80,
                                       "sci_mode": None}
    assert repr(zero.arange(300)).count("...") == 1


def test_bad_options_name_the_problem():
    with pytest.raises(ValueError, match="set_printoptions: profile must be one of"):
        zero.set_printoptions(profile="long")
    with pytest.raises(ValueError, match="set_printoptions: precision must be a non-negative number, got -1"):
        zero.set_printoptions(precision=-1)


def test_16_bit_floats_print_as_floats_with_their_dtype():
    # PyTorch 2.13's output, character for character
    assert repr(zero.ones(2, dtype=zero.bfloat16) + 1) == "tensor([2., 2.], dtype=zero.bfloat16)"
    assert (repr(zero.tensor([1.5, -2.25, 3e10]).to(zero.bfloat16))
            == "tensor([ 1.5000e+00, -2.2500e+00,  3.0065e+10], dtype=zero.bfloat16)")
    assert repr(zero.tensor([[0.1]], dtype=zero.bfloat16)) == "tensor([[0.1001]], dtype=zero.bfloat16)"
    assert repr(zero.ones(2, dtype=zero.float16) + 1) == "tensor([2., 2.], dtype=zero.float16)"
