"""How much of PyTorch's public API Zero provides, namespace by namespace.

    python scripts/api_coverage.py                   # every namespace, a summary line each
    python scripts/api_coverage.py --missing nn      # and the names still missing from zero.nn
    python scripts/api_coverage.py --json out.json   # the counts and lists, for a note

Runs where PyTorch is installed (the oracle, as for the tests). A PyTorch name counts as
provided only when Zero has it, it is not a stand-in that raises NotImplementedError, and
a test under ``tests/`` names it -- so "present but never tried" is reported apart and
never counted.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
# tests that call every public name for a property of all ops (not what each one computes):
# naming a name there does not make it tested
SWEEPS = {"ops/test_aliasing.py"}


@dataclass(frozen=True)
class Namespace:
    """A PyTorch namespace, the Zero one that answers to it, and which of its names count."""

    key: str
    torch_path: str
    zero_path: str
    kind: str                # "classes", "callables", "all" (the namespace's __all__), "attributes"
    # how a test names one of its members: a regex with {name}
    test_pattern: str = r"\b{name}\b"


NAMESPACES = [
    Namespace("nn", "torch.nn", "zero.nn", "classes", r"\bnn\.{name}\b|\b{name}\(|[\"']{name}[\"']"),
    Namespace("nn.functional", "torch.nn.functional", "zero.nn.functional", "callables",
              r"\bF\.{name}\b|functional\.{name}\b|[\"']{name}[\"']"),
    Namespace("nn.utils.rnn", "torch.nn.utils.rnn", "zero.nn.utils.rnn", "all"),
    Namespace("torch", "torch", "zero", "all", r"\b(zero|torch|lib)\.{name}\b|\"{name}\""),
    Namespace("Tensor", "torch.Tensor", "zero.Tensor", "attributes", r"\.{name}\b|\"{name}\""),
    Namespace("linalg", "torch.linalg", "zero.linalg", "callables", r"linalg\.{name}\b|\"{name}\""),
    Namespace("optim", "torch.optim", "zero.optim", "all", r"\b{name}\b"),
    Namespace("optim.lr_scheduler", "torch.optim.lr_scheduler", "zero.optim.lr_scheduler", "classes"),
    Namespace("utils.data", "torch.utils.data", "zero.utils.data", "all"),
    Namespace("sparse", "torch.sparse", "zero.sparse", "callables", r"sparse\.{name}\b"),
]


def resolve(path: str):
    """A module, or a class reached through a module (``torch.Tensor``); None if absent."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute, None)
        return target
    return None


def public_names(namespace: Namespace, target) -> list[str]:
    """PyTorch's public names in ``target`` of the namespace's kind."""
    if namespace.kind == "all":
        return sorted(set(getattr(target, "__all__", [])))
    names = [n for n in dir(target) if not n.startswith("_")]
    if namespace.kind == "attributes":
        return sorted(names)
    members = {n: getattr(target, n, None) for n in names}
    if namespace.kind == "classes":   # (the namespace's own classes, not the ones it imports)
        return sorted(n for n, m in members.items() if inspect.isclass(m)
                      and (getattr(m, "__module__", "") or "").startswith(namespace.torch_path))
    return sorted(n for n, m in members.items()          # callables defined by torch itself
                  if callable(m) and not inspect.isclass(m) and "torch" in (getattr(m, "__module__", "") or "torch"))


def is_stand_in(member) -> bool:
    """A function (or a class's __init__) whose first statement raises NotImplementedError."""
    function = member.__init__ if inspect.isclass(member) else member
    try:
        source = inspect.getsource(function)
    except (TypeError, OSError):
        return False
    body = [line.strip() for line in source.splitlines() if line.strip() and not line.strip().startswith(("#", "@"))]
    body = [line for line in body[1:] if not line.startswith(('"', "'"))]
    return bool(body) and body[0].startswith("raise NotImplementedError")


@dataclass
class Coverage:
    namespace: Namespace
    pytorch: list[str]
    provided: list[str] = field(default_factory=list)      # present, working, named by a test
    untested: list[str] = field(default_factory=list)      # present, but no test names it
    stand_ins: list[str] = field(default_factory=list)     # present, but raise NotImplementedError
    missing: list[str] = field(default_factory=list)

    @property
    def fraction(self) -> float:
        return len(self.provided) / len(self.pytorch) if self.pytorch else 1.0

    def line(self) -> str:
        ns = self.namespace
        return (f"{ns.torch_path:<26} {len(self.provided):4d} / {len(self.pytorch):4d}  {self.fraction:6.1%}   "
                f"untested {len(self.untested):3d}   stand-ins {len(self.stand_ins):2d}   "
                f"missing {len(self.missing):4d}")


def measure(namespace: Namespace, test_text: str) -> Coverage:
    theirs, ours = resolve(namespace.torch_path), resolve(namespace.zero_path)
    coverage = Coverage(namespace, public_names(namespace, theirs))
    for name in coverage.pytorch:
        member = getattr(ours, name, None) if ours is not None else None
        if member is None:
            coverage.missing.append(name)
        elif is_stand_in(member):
            coverage.stand_ins.append(name)
        elif re.search(namespace.test_pattern.format(name=re.escape(name)), test_text):
            coverage.provided.append(name)
        else:
            coverage.untested.append(name)
    return coverage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("namespaces", nargs="*", help="keys to measure (default: all): "
                        + ", ".join(ns.key for ns in NAMESPACES))
    parser.add_argument("--missing", action="store_true", help="list the missing and untested names")
    parser.add_argument("--json", metavar="FILE", help="write the counts and lists as JSON")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("api_coverage: PyTorch is not installed; it is the reference this script counts against",
              file=sys.stderr)
        return 2
    known = {ns.key: ns for ns in NAMESPACES}
    unknown = [key for key in args.namespaces if key not in known]
    if unknown:
        parser.error(f"unknown namespace {unknown[0]!r}; choose from {', '.join(known)}")
    chosen = [known[key] for key in args.namespaces] or NAMESPACES
    test_text = "\n".join(path.read_text(errors="replace") for path in sorted(TESTS.rglob("*.py"))
                          if path.relative_to(TESTS).as_posix() not in SWEEPS)
    report = {}
    for namespace in chosen:
        coverage = measure(namespace, test_text)
        print(coverage.line())
        if args.missing:
            for label, names in (("missing", coverage.missing), ("untested", coverage.untested),
                                 ("stand-ins", coverage.stand_ins)):
                if names:
                    print(f"    {label}: {', '.join(names)}")
        report[namespace.key] = {"pytorch": len(coverage.pytorch), "provided": len(coverage.provided),
                                 "fraction": round(coverage.fraction, 4), "missing": coverage.missing,
                                 "untested": coverage.untested, "stand_ins": coverage.stand_ins}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
