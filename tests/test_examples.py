"""The book's small examples under examples/ run and reach their results."""
import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("name, expected", [
    ("autograd_basics.py", "dz/dx = 3"),
    ("regression_loop.py", "converged"),
    ("linear_regression.py", "final loss"),
])
def test_example_runs(name, expected, capsys):
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")  # each asserts its own result
    assert expected in capsys.readouterr().out


def test_draw_graph_example_writes_both_graphs(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["draw_graph.py", str(tmp_path)])
    runpy.run_path(str(EXAMPLES / "draw_graph.py"), run_name="__main__")
    assert "MulBackward" in (tmp_path / "book_example.dot").read_text()
    assert "fc1.weight" in (tmp_path / "mlp_loss.dot").read_text()
    assert "x.grad = 3.0, y.grad = 3.0" in capsys.readouterr().out
