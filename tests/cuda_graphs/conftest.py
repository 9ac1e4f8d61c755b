"""What the CUDA graph tests share: the device ("cuda", played by the CPU on a machine
without a GPU: ``second_device``), checked to be left with no capture open."""
from __future__ import annotations

import pytest

import zero


@pytest.fixture
def cuda(second_device):
    yield second_device
    assert not zero.cuda.is_current_stream_capturing(), "a test left a capture open"
