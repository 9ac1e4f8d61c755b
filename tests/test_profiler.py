"""zero.profiler.profile: calls per op, forward and backward, and a sorted table."""
from __future__ import annotations

import pytest

import zero
from zero.autograd import op as op_module


def test_profile_counts_forward_and_backward_calls_per_op():
    x = zero.randn(4, 3, requires_grad=True)
    w = zero.randn(3, 2, requires_grad=True)
    with zero.profiler.profile() as prof:
        for _ in range(3):
            y = (x @ w).tanh()
        loss = y.sum()
        loss.backward()
    stats = prof.stats
    assert stats["MatMul"].backward_calls == 1 and stats["Tanh"].backward_calls == 1
    assert stats["Sum"].backward_calls == 1
    # Forward: three matmuls; backward computes two more products (dA and dB) with the same op.
    assert stats["MatMul"].forward_calls == 3 + 2
    assert stats["Tanh"].forward_calls == 3
    for s in stats.values():
        assert s.forward_seconds >= 0 and s.backward_seconds >= 0
        assert s.total_seconds == s.forward_seconds + s.backward_seconds
    assert prof.wall_seconds > 0


def test_nothing_is_recorded_outside_the_context():
    with zero.profiler.profile() as prof:
        pass
    assert op_module.active_profiler is None
    zero.ones(2) + 1
    assert prof.stats == {}


def test_the_profiler_is_removed_even_when_an_exception_escapes():
    try:
        with zero.profiler.profile():
            raise KeyError
    except KeyError:
        pass
    assert op_module.active_profiler is None


def test_nested_profiles_restore_the_outer_one():
    with zero.profiler.profile() as outer:
        with zero.profiler.profile() as inner:
            zero.ones(2).exp()
        assert op_module.active_profiler is outer
        zero.ones(2).sin()
    assert "Exp" in inner.stats and "Sin" not in inner.stats
    assert "Sin" in outer.stats


def test_table_is_sorted_and_lists_every_op():
    with zero.profiler.profile() as prof:
        pass
    # Fill the statistics by hand so the order is known.
    prof.record("Small", "forward", 0.001)
    prof.record("Large", "forward", 0.010)
    prof.record("Large", "backward", 0.020)
    prof.record("Middle", "backward", 0.005)
    prof.record("Middle", "backward", 0.005)
    assert [s.name for s in prof.key_averages()] == ["Large", "Middle", "Small"]
    assert [s.name for s in prof.key_averages("forward")] == ["Large", "Small", "Middle"]
    table = prof.table()
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["op", "fwd", "calls"]
    assert [line.split()[0] for line in lines[1:4]] == ["Large", "Middle", "Small"]
    large = lines[1].split()
    assert large[1:6] == ["1", "10.000", "1", "20.000", "30.000"]
    middle = lines[2].split()
    assert middle[1] == "0" and middle[3] == "2"
    assert lines[-1].startswith("all ops") and "41.000" in lines[-1]
    assert str(prof) == table
    assert len(prof.table(row_limit=1).splitlines()) == 3


def test_profile_table_of_a_real_run_names_the_ops(capsys):
    x = zero.randn(3, 3, requires_grad=True)
    with zero.profiler.profile() as prof:
        (x * x).sum().backward()
    print(prof.table())
    out = capsys.readouterr().out
    assert "Mul" in out and "Sum" in out


def test_device_columns_add_the_gpu_s_time_and_sort_by_it():
    with zero.profiler.profile(use_device="cuda") as prof:
        pass   # no CUDA op ran: no event was made (this runs without a GPU)
    prof.record("LaunchHeavy", "forward", 0.004)     # host 4 ms, device 1 ms
    prof.stats["LaunchHeavy"].add_device("forward", 0.001)
    prof.record("DeviceHeavy", "backward", 0.001)    # host 1 ms, device 9 ms
    prof.stats["DeviceHeavy"].add_device("backward", 0.009)
    lines = prof.table().splitlines()
    assert "dev total" in lines[0]
    assert [line.split()[0] for line in lines[1:3]] == ["DeviceHeavy", "LaunchHeavy"]   # by device time
    assert lines[1].split()[-4:] == ["0.000", "9.000", "9.000", "90.0"]
    assert "10.000" in lines[-1].split() and "5.000" in lines[-1].split()   # device and host totals
    assert [s.name for s in prof.key_averages("total")] == ["LaunchHeavy", "DeviceHeavy"]


def test_an_unknown_device_to_time_is_refused():
    with pytest.raises(ValueError, match="use_device='mps'"):
        zero.profiler.profile(use_device="mps")
