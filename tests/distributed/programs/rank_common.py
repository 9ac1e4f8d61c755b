"""What every rank program shares: where to write its report, and how to record an error."""
from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(sys.argv[1])
ARGS = sys.argv[2:]


def report(rank: int, results: dict) -> None:
    """Write this rank's results (JSON) where the test reads them; written last, so a rank
    that failed before the end leaves no report."""
    (OUT / f"rank{rank}.json").write_text(json.dumps(results))


def error_of(function) -> str | None:
    """'TypeName: message' of what ``function()`` raises, or None when it returns."""
    try:
        function()
    except Exception as e:  # (the test asserts the type and the message)
        return f"{type(e).__name__}: {e}"
    return None


def pretend_cuda():
    """A "cuda" device played by the CPU backend (as tests/conftest.py's second_device): its
    tensors are CUDA tensors to every check, computed by the CPU kernels."""
    from zero.backends import cpu as cpu_backend
    from zero.backends.device import Device

    cuda = Device("cuda")
    cuda._backend, cuda._kernels = cpu_backend, cpu_backend.kernels
    return cuda
