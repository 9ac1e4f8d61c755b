"""Drawing the graph autograd records: ``zero.autograd.draw(loss)``.

The book's Figure of ``z = x * y + x``, from the graph Zero actually built:

    x = zero.tensor(3.0, requires_grad=True)
    y = zero.tensor(2.0, requires_grad=True)
    z = x * y + x
    zero.autograd.draw(z, {"x": x, "y": y}).save("z.dot")      # Graphviz DOT text
    zero.autograd.draw(z, {"x": x, "y": y}).render("z.svg")    # SVG or PNG, where Graphviz is installed

What the picture shows, following backward's direction from the output at the top:

    ellipse (blue)         an op of the forward pass, named as its grad_fn (MulBackward)
    box (green)            a leaf tensor whose .grad receives a gradient (name, dtype, shape)
    box (grey, dashed)     a tensor an op saved for backward (dtype, shape)
    box (yellow)           the output the drawing starts from

Draw before calling ``backward()``: a backward without ``retain_graph`` frees what the ops
saved, and the drawing then shows only the ops and the leaves.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import AutogradError, describe
from ..tensors.tensor import Tensor
from .op import AccumulateGrad, Op

if TYPE_CHECKING:
    import os
    from pathlib import Path


def _graphviz_dot() -> str | None:
    """Where Graphviz's ``dot`` program is, if installed (shutil and pathlib are imported
    here, at the first drawing, not with zero)."""
    import shutil

    return shutil.which("dot")


class Graph:
    """A drawing of a recorded graph: its Graphviz ``source``, to save or render."""

    def __init__(self, source: str) -> None:
        self.source = source

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the DOT text (a .dot file any Graphviz tool reads)."""
        from pathlib import Path

        path = Path(path)
        path.write_text(self.source, encoding="utf-8")
        return path

    def render(self, path: str | os.PathLike[str], format: str | None = None) -> Path:  # noqa: A002  (graphviz's name)
        """Render to an image with Graphviz's ``dot`` (format from the suffix: svg, png, pdf)."""
        from pathlib import Path

        path = Path(path)
        kind = format or path.suffix.lstrip(".") or "svg"
        dot = _graphviz_dot()
        if dot is None:
            raise AutogradError(f"draw: rendering {path} needs Graphviz's `dot` program, which is not installed "
                                "(Debian: apt-get install graphviz); .save() writes the DOT text without it")
        import subprocess

        subprocess.run([dot, f"-T{kind}", "-o", str(path)], input=self.source.encode("utf-8"), check=True)
        return path

    def _repr_svg_(self) -> str | None:  # notebooks show it as a picture when Graphviz is there
        dot = _graphviz_dot()
        if dot is None:
            return None
        import subprocess

        return subprocess.run([dot, "-Tsvg"], input=self.source.encode("utf-8"), capture_output=True,
                              check=True).stdout.decode("utf-8")

    def __str__(self) -> str:
        return self.source


def draw(output: Tensor, names: dict[str, Tensor] | None = None) -> Graph:
    """The graph that ``output.backward()`` would walk. ``names`` maps names to leaf tensors
    (``dict(model.named_parameters())``, ``{"x": x}``) to label them."""
    if not isinstance(output, Tensor):
        raise TypeError(f"draw: expected a tensor, got {describe(output)}")
    if output.grad_fn is None:
        raise AutogradError(f"draw: {describe(output)} has no recorded graph (it is a leaf; was it computed "
                            "under no_grad, or from tensors that do not require grad?)")
    label_of = {id(t): name for name, t in (names or {}).items()}
    lines = ["digraph autograd {", '  rankdir="TB";', '  node [fontname="Helvetica", fontsize=11];']
    ids: dict[int, str] = {}

    def node_id(key: int) -> str:
        if key not in ids:
            ids[key] = f"n{len(ids)}"
        return ids[key]

    out = node_id(id(output))
    lines.append(f'  {out} [shape=box, style=filled, fillcolor="#fff2b3", label="{_tensor_label(output, "output")}"];')
    lines.append(f"  {out} -> {node_id(id(output.grad_fn))};")
    seen, stack = set(), [output.grad_fn]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        me = node_id(id(node))
        if isinstance(node, AccumulateGrad):
            leaf = node.leaf()
            name = label_of.get(id(leaf), "leaf") if leaf is not None else "leaf (gone)"
            label = _tensor_label(leaf, name) if leaf is not None else name
            lines.append(f'  {me} [shape=box, style=filled, fillcolor="#c9f0c9", label="{label}"];')
            continue
        lines.append(f'  {me} [shape=ellipse, style=filled, fillcolor="#cfe3ff", label="{node.name}"];')
        for k, saved in enumerate(_saved(node)):
            box = f"{me}_saved{k}"
            lines.append(f'  {box} [shape=box, style="dashed,filled", fillcolor="#eeeeee", fontsize=9, '
                         f'label="{_tensor_label(saved, "saved")}"];')
            lines.append(f"  {box} -> {me} [style=dashed, arrowhead=none];")
        for edge in node.next_edges:
            if edge is not None:
                lines.append(f"  {me} -> {node_id(id(edge))};")
                stack.append(edge)
    lines.append("}")
    return Graph("\n".join(lines) + "\n")


def _saved(node: Op) -> tuple[Tensor, ...]:
    saved = getattr(node, "_saved", None) if not node.released else None
    return tuple(t for t in (saved or ()) if t is not None)


def _tensor_label(t: Tensor, name: str) -> str:
    return f"{name}\\n{t.dtype.name}{list(t.shape)}"
