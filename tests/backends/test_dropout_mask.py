"""The dropout mask's integer test: (z >> 11) >= keep_threshold(p) keeps exactly the
elements whose uniform number (z >> 11) * 2**-53 is >= p (``backends/dropout_mask.py``)."""
from __future__ import annotations

import pytest

from zero.backends.dropout_mask import keep_scale, keep_threshold


@pytest.mark.parametrize("p", [0.0, 1e-300, 2.0 ** -60, 0.1, 0.2, 1 / 3, 0.5, 0.7, 1 - 2.0 ** -53, 1.0])
def test_the_threshold_keeps_what_the_uniform_number_keeps(p):
    threshold = keep_threshold(p)
    # the 53-bit values on either side of the threshold, and the two ends of the range
    for top_bits in {0, 1, threshold - 1, threshold, threshold + 1, 2 ** 53 - 1}:
        if 0 <= top_bits < 2 ** 53:
            assert (top_bits >= threshold) == (top_bits * 2.0 ** -53 >= p), (p, top_bits)


def test_the_ends_keep_everything_or_nothing():
    assert keep_threshold(0.0) == 0 and keep_scale(0.0) == 1.0
    assert keep_threshold(1.0) == 2 ** 53 and keep_scale(1.0) == 0.0   # no 53-bit value reaches it
    assert keep_scale(0.2) == 1 / 0.8
