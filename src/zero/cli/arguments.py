"""The rules for the jobs' arguments, each written once and used by every job.

A job checks all of its arguments -- numbers, the paths it will read and
write, whether its run already holds checkpoints, whether the work fits in
memory -- before it loads any data, so a bad argument costs no time and writes
nothing. Each rule raises ``zero.errors.UsageError`` naming the option, the
value and what would be valid; ``zero`` prints it as one line and exits with
status 2.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

from ..errors import UsageError


def option(name: str) -> str:
    """The command-line spelling of an ``args`` attribute: ``batch_size`` -> ``--batch-size``."""
    return "--" + name.replace("_", "-")


def require_at_least(args, minimum: int, *names: str) -> None:
    """Each ``--name`` (attribute ``name`` of the parsed ``args``) must be at least ``minimum``."""
    for name in names:
        value = getattr(args, name)
        if value < minimum:
            raise UsageError(f"{option(name)} must be at least {minimum}, got {value}")


def require_number(args, *names: str, minimum: float = 0.0, below: float | None = None) -> None:
    """Each ``--name`` must be a finite number, at least ``minimum`` (and below ``below``)."""
    for name in names:
        value = getattr(args, name)
        valid = f"a number >= {minimum:g}" + (f" and < {below:g}" if below is not None else "")
        if not math.isfinite(value) or value < minimum or (below is not None and value >= below):
            raise UsageError(f"{option(name)} must be {valid}, got {value}")


def require_not_above(args, name: str, limit: str) -> None:
    if getattr(args, name) > getattr(args, limit):
        raise UsageError(f"{option(name)} {getattr(args, name)} must not exceed {option(limit)} "
                         f"{getattr(args, limit)}")


def require_multiple(args, name: str, of: str) -> None:
    if getattr(args, name) % getattr(args, of):
        raise UsageError(f"{option(name)} {getattr(args, name)} must be a multiple of {option(of)} "
                         f"{getattr(args, of)}")


def require_input_file(flag: str, path) -> None:
    """A file the job will read."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{flag} {path}: no such file")
    if not path.is_file():
        raise UsageError(f"{flag} {path}: not a file")


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def require_writable(flag: str, path, directory: bool = False) -> None:
    """A file (or, with ``directory``, a directory) the job will write: either it exists as
    such, or its nearest existing ancestor is a directory the job may write into (missing
    directories in between are created when training starts)."""
    path = Path(path)
    kind = "a directory" if directory else "a file"
    if path.exists():
        if path.is_dir() != directory:
            raise UsageError(f"{flag} {path}: is {'a file' if directory else 'a directory'}; expected {kind}")
        if not os.access(path if directory else path.parent, os.W_OK):
            raise UsageError(f"{flag} {path}: not writable")
        return
    ancestor = _nearest_existing(path.parent)
    if not ancestor.is_dir():
        raise UsageError(f"{flag} {path}: {ancestor} is a file, so {kind} cannot be made under it")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: cannot create it, {ancestor} is not writable")


def require_new_or_resumed(checkpoints, resume: bool, overwrite: bool, where: str) -> None:
    """Training into ``checkpoints`` (a ``CheckpointSet``): with ``resume`` it must hold one to
    resume; without, it must hold none unless ``overwrite`` (which deletes them). Either way no
    file it did not write may sit where it writes (``CheckpointSet.strangers``)."""
    existing = checkpoints.existing()
    checkpoints.require_no_strangers(where)
    if resume and checkpoints.resumable() is None:
        raise UsageError(f"--resume: no checkpoint {checkpoints.latest}")
    if existing and not resume and not overwrite:
        names = ", ".join(p.name for p in existing[:3]) + (" ..." if len(existing) > 3 else "")
        raise UsageError(f"{where} already holds checkpoints ({names}): continue the run with --resume, "
                         "or start over with --overwrite (deletes them)")


def settle_with_checkpoint(args, saved: dict, path, fixed: tuple = (), adjustable: tuple = ()) -> list[str]:
    """On --resume, each option of ``fixed + adjustable`` the checkpoint records (``saved``)
    and the command line does not give takes the checkpoint's value, so a resumed run goes
    on as it was started. One given on the command line must equal it if ``fixed`` (the
    model's shape), else overrides it; returns a line for each override."""
    given: frozenset[str] = getattr(args, "given", frozenset())
    settled, overrides = merge_with_checkpoint(vars(args), given, saved, path, fixed, adjustable)
    for name, value in settled.items():
        setattr(args, name, value)
    return overrides


def merge_with_checkpoint(values: dict, given, saved: dict, path, fixed: tuple = (),
                          adjustable: tuple = ()) -> tuple[dict, list[str]]:
    """``settle_with_checkpoint``'s rule without changing anything: ``values`` (option name ->
    value, ``given`` the names the command line gave) merged with the checkpoint's ``saved``
    settings; returns the values that change and a line for each override."""
    settled, overrides = {}, []
    for name in (*fixed, *adjustable):
        if name not in saved:
            continue
        value, asked = saved[name], values.get(name)
        if name not in given:
            settled[name] = value
        elif asked != value and name in fixed:
            raise UsageError(f"--resume: {path} was trained with {option(name)} {value}; a resumed run cannot "
                             f"change it to {asked}")
        elif asked != value:
            overrides.append(f"{option(name)} {asked} (the checkpoint's: {value})")
    return settled, overrides


def physical_memory() -> int | None:
    """Bytes of RAM in this machine (None where the platform cannot say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def require_fits_in_memory(needed: int, available: int | None, what: str, lower: str) -> None:
    """Refuse work whose estimated memory (``needed`` bytes) exceeds ``available``."""
    if available is not None and needed > available:
        raise UsageError(f"{what} needs about {needed / 2**30:,.1f} GiB, more than the "
                         f"{available / 2**30:,.1f} GiB of memory here: lower {lower}")
