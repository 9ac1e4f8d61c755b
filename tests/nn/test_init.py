"""Initialisers fill parameters in place, with the variances their names promise."""
import math

import numpy as np
import pytest

import zero
from zero import nn
from zero.nn import init


def fresh(*shape):
    return nn.Parameter(zero.empty(*shape))


def test_kaiming_normal_is_the_books_he_initialisation():
    zero.manual_seed(0)
    w = init.kaiming_normal_(fresh(256, 400))
    assert w.requires_grad and w.is_leaf and w.grad_fn is None  # no graph, still trainable
    assert float(w.detach().numpy().std()) == pytest.approx(math.sqrt(2 / 400), rel=0.03)
    w = init.kaiming_normal_(fresh(256, 400), mode="fan_out", nonlinearity="tanh")
    assert float(w.detach().numpy().std()) == pytest.approx(5 / 3 / math.sqrt(256), rel=0.03)


def test_uniform_initialisers_respect_their_bounds():
    zero.manual_seed(0)
    bound = math.sqrt(6 / (300 + 200))
    values = init.xavier_uniform_(fresh(200, 300)).detach().numpy()
    assert values.min() >= -bound and values.max() <= bound
    assert float(values.std()) == pytest.approx(bound / math.sqrt(3), rel=0.03)
    kaiming = init.kaiming_uniform_(fresh(200, 300)).detach().numpy()
    assert np.abs(kaiming).max() <= math.sqrt(2) * math.sqrt(3 / 300)
    normal = init.xavier_normal_(fresh(200, 300), gain=2.0).detach().numpy()
    assert float(normal.std()) == pytest.approx(2 * math.sqrt(2 / 500), rel=0.03)


def test_constant_initialisers_and_seeding():
    assert np.all(init.zeros_(fresh(3, 2)).detach().numpy() == 0)
    assert np.all(init.ones_(fresh(3)).detach().numpy() == 1)
    assert np.all(init.constant_(fresh(2), 0.5).detach().numpy() == 0.5)
    zero.manual_seed(7)
    a = init.normal_(fresh(5), 0.0, 0.02).detach().numpy().copy()
    zero.manual_seed(7)
    b = init.normal_(fresh(5), 0.0, 0.02).detach().numpy()
    np.testing.assert_array_equal(a, b)


def test_fan_needs_a_matrix():
    with pytest.raises(zero.errors.ShapeError, match="at least 2 dimensions"):
        init.xavier_uniform_(fresh(4))
    with pytest.raises(ValueError, match="unknown nonlinearity"):
        init.kaiming_normal_(fresh(2, 2), nonlinearity="swish")
