"""Draw the graphs autograd records: the book's z = x * y + x, and an MLP's loss.

    python examples/draw_graph.py [OUT_DIR]

Writes book_example.dot and mlp_loss.dot (Graphviz DOT text), and .svg pictures of both
where Graphviz's `dot` is installed, into OUT_DIR (default: runs/graphs, which git
ignores in Zero's checkout, as it does the jobs' runs/).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import zero
from zero.models import MLP


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    x = zero.tensor(3.0, requires_grad=True)
    y = zero.tensor(2.0, requires_grad=True)
    z = x * y + x
    graphs = {"book_example": zero.autograd.draw(z, {"x": x, "y": y})}

    zero.manual_seed(0)
    model = MLP(in_features=784, hidden=32, classes=10)
    images, labels = zero.randn(8, 784), zero.randint(0, 10, (8,))
    loss = zero.nn.functional.cross_entropy(model(images), labels)
    graphs["mlp_loss"] = zero.autograd.draw(loss, dict(model.named_parameters()))

    for name, graph in graphs.items():
        print(f"wrote {graph.save(out / f'{name}.dot')}")
        if shutil.which("dot"):
            print(f"wrote {graph.render(out / f'{name}.svg')}")
    z.backward()
    print(f"x.grad = {x.grad.item()}, y.grad = {y.grad.item()}  (the book: 3 and 3)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("runs") / "graphs")
