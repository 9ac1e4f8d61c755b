"""README and benchmarks/RESULTS.md quote measured figures: no @NAME@ placeholder is left."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("document", ["README.md", "benchmarks/RESULTS.md"])
def test_no_placeholder_is_left(document):
    text = (ROOT / document).read_text(encoding="utf-8")
    assert re.findall(r"@[A-Z][A-Z_]*@", text) == []
