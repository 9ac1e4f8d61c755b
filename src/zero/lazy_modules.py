"""Names a package imports at their first use, through its module ``__getattr__``
(PEP 562): ``zero.data.DataLoader`` and ``zero.save`` read as usual, and ``import zero``
does not pay for what they need (multiprocessing, sockets, hashing, file formats) until then."""
from __future__ import annotations

import importlib
from collections.abc import Callable


def on_first_use(package: str, deferred: dict[str, str], namespace: dict) -> tuple[Callable, Callable]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` (whose globals are ``namespace``).
    ``deferred`` maps a name to the submodule it is (``"data"``) or comes from
    (``"serialization:save"``). Once imported, the name is a plain attribute of the package,
    so each is looked up here once."""

    def __getattr__(name: str):
        target = deferred.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        submodule, _, attribute = target.partition(":")
        module = importlib.import_module(f"{package}.{submodule}")
        value = getattr(module, attribute) if attribute else module
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(deferred))

    return __getattr__, __dir__
