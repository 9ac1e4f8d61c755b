"""Optimizer constructors name the one bad hyper-parameter, in PyTorch's words (and refuse NaN)."""
import math

import pytest

import zero
from zero.optim import SGD, AdamW


@pytest.fixture
def params():
    return [zero.zeros(2, requires_grad=True)]


@pytest.mark.parametrize("kwargs, message", [
    ({"lr": -1, "weight_decay": 0.1}, r"^AdamW: Invalid learning rate: -1$"),
    ({"lr": math.nan}, r"^AdamW: Invalid learning rate: nan"),
    ({"weight_decay": math.nan}, r"^AdamW: Invalid weight_decay value: nan"),
    ({"eps": -1e-8}, r"^AdamW: Invalid epsilon value: -1e-08"),
    ({"betas": (0.9, 1.0)}, r"^AdamW: Invalid beta parameter at index 1: 1.0"),
])
def test_adamw_names_only_the_bad_value(params, kwargs, message):
    with pytest.raises(ValueError, match=message):
        AdamW(params, **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"lr": -1, "weight_decay": 0.1}, r"^SGD: Invalid learning rate: -1$"),
    ({"lr": 0.1, "momentum": math.nan}, r"^SGD: Invalid momentum value: nan"),
    ({"lr": 0.1, "weight_decay": -0.5}, r"^SGD: Invalid weight_decay value: -0.5"),
])
def test_sgd_names_only_the_bad_value(params, kwargs, message):
    with pytest.raises(ValueError, match=message):
        SGD(params, **kwargs)
