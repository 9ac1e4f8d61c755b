"""PyTorch's ``torch.onnx``, so that programs which import it for an optional export run.

Zero has no ONNX exporter: ``export`` raises ``OnnxExporterError``,
a ``RuntimeError`` as PyTorch's exporter errors are -- and an ``ImportError`` too, so a
program that guards the export the way it guards a missing ``onnx`` package
(``except ImportError``) carries on without it. ``is_in_onnx_export()`` is always False
(model code asks it to take an export-only branch).
"""
from __future__ import annotations

from typing import Any

from .errors import ZeroError

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]

_UNSUPPORTED = ("ONNX export is not supported by Zero: {what} cannot write an .onnx file. Export from PyTorch "
                "(zero.save the state_dict and load it into the same model under PyTorch), or skip the export")


class OnnxExporterError(ZeroError, ImportError, RuntimeError):
    """ONNX export was asked for; Zero has no exporter."""


def export(*args: Any, **kwargs: Any) -> Any:
    """Refused: Zero cannot export to ONNX (see the module's docstring)."""
    raise OnnxExporterError(_UNSUPPORTED.format(what="zero.onnx.export"))


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is running: never, in Zero."""
    return False
