"""zero.autograd.draw: the recorded graph as Graphviz DOT text."""
from __future__ import annotations

import re
import shutil

import pytest

import zero
from zero.errors import AutogradError
from zero.models import MLP


def _edges(source: str) -> set:
    labels = dict(re.findall(r'^\s+(\w+) \[.*?label="([^"]*)"', source, flags=re.M))
    return {(labels[a].split("\\n")[0], labels[b].split("\\n")[0])
            for a, b in re.findall(r"^\s+(\w+) -> (\w+);", source, flags=re.M)}


def test_the_books_example():
    x = zero.tensor(3.0, requires_grad=True)
    y = zero.tensor(2.0, requires_grad=True)
    z = x * y + x
    source = zero.autograd.draw(z, {"x": x, "y": y}).source
    assert source.startswith("digraph autograd {") and source.rstrip().endswith("}")
    assert _edges(source) == {("output", "AddBackward"), ("AddBackward", "MulBackward"), ("AddBackward", "x"),
                              ("MulBackward", "x"), ("MulBackward", "y")}
    assert source.count('label="saved\\nfloat32[]"') == 2    # Mul saved x and y
    assert 'label="x\\nfloat32[]"' in source                  # a leaf, named


def test_the_mlps_loss_names_its_parameters():
    zero.manual_seed(0)
    model = MLP(in_features=4, hidden=3, classes=2)
    loss = zero.nn.functional.cross_entropy(model(zero.randn(5, 4)), zero.tensor([0, 1, 1, 0, 1]))
    source = zero.autograd.draw(loss, dict(model.named_parameters())).source
    for name, shape in (("fc1.weight", [3, 4]), ("fc1.bias", [3]), ("fc2.weight", [2, 3]), ("fc2.bias", [2])):
        assert f'label="{name}\\nfloat32{shape}"' in source
    assert ("CrossEntropyBackward", "LinearBiasBackward") in _edges(source)
    loss.backward()
    after = zero.autograd.draw(loss).source   # the graph was freed: ops and leaves remain, nothing saved
    assert "saved" not in after and "LinearBiasBackward" in after


def test_a_tensor_without_a_graph_is_refused(tmp_path):
    with pytest.raises(AutogradError, match="no recorded graph"):
        zero.autograd.draw(zero.ones(2))
    x = zero.ones(2, requires_grad=True)
    graph = zero.autograd.draw((x * 2).sum())
    assert graph.save(tmp_path / "g.dot").read_text() == graph.source


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_renders_svg_where_graphviz_is_installed(tmp_path):
    x = zero.ones(2, requires_grad=True)
    path = zero.autograd.draw((x * 2).sum(), {"x": x}).render(tmp_path / "g.svg")
    assert path.read_text().lstrip().startswith("<?xml") or "<svg" in path.read_text()
