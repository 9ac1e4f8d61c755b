"""zero.onnx: importable (as torch.onnx is), its export refused with a clear error."""
import pytest

import zero


def test_import_and_attribute_access():
    import zero.onnx

    assert zero.onnx.is_in_onnx_export() is False
    assert zero.onnx is __import__("zero.onnx", fromlist=["export"])


def test_export_is_refused_clearly(tmp_path):
    model = zero.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="ONNX export is not supported by Zero") as info:
        zero.onnx.export(model, (zero.ones(1, 2),), str(tmp_path / "m.onnx"))
    assert isinstance(info.value, ImportError)  # a program's `except ImportError:` guard catches it too
    assert not (tmp_path / "m.onnx").exists()


def test_pytorch_has_these_names():
    torch = pytest.importorskip("torch.onnx").__name__ and pytest.importorskip("torch")

    for name in zero.onnx.__all__:
        assert hasattr(torch.onnx, name), name
    assert torch.onnx.is_in_onnx_export() is False
