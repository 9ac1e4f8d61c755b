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
