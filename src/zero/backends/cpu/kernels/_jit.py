"""How CPU loops are compiled: Numba, serial and GIL-free, cached on disk, imported at the first call.

``njit`` compiles a loop once per combination of argument types, serially, and without
the GIL (``nogil``): the loops do not use Numba's own thread pool, but the CPU pool
(``zero.backends.cpu.threads``) runs a large loop as ranges of rows, one call per thread,
and those calls must run at the same time. Loops whose iterations are independent are
written with ``prange``; compiled serially, ``prange`` is ``range``, and the marking says
which loops could be split. Numba's own pool lost on 2 cores wherever it was tried: waking
it costs more than a small loop, and a parallel region right after a matrix product fights
OpenBLAS's still-spinning threads for the cores. The CPU pool avoids the fight by running
BLAS single-threaded and splitting the products itself. Measured by
``benchmarks/investigations/thread_pools.py``; figures in benchmarks/journal/.

``cache=True`` keeps the machine code next to the source, so a second process loads a
kernel in milliseconds instead of compiling it for about a second. Numba checks a cached
kernel only against its own file's time stamp, not against the helpers it inlined from
other files: after a change to ``_fastmath.py`` alone, every loop would keep its old exp.
So the cache lives in a folder named by a hash of all these kernel files
(``__pycache__/numba-<hash>``; an explicit ``NUMBA_CACHE_DIR`` wins). The fastmath flags
allow reassociation (vectorised sums) but not "no infinities", so masked -inf scores
stay correct. Reassociation may also turn (x - max) - log(sum) into x - (max + log(sum)),
which loses every digit of a log-softmax at x = 1e20: ``njit_in_order`` compiles the few
helpers whose order of operations matters without either flag (LLVM keeps each
instruction's flags when it inlines them into a fastmath loop). Contraction may compute
scale * s - max as one fused multiply-add while max came from the rounded scale * s (the
largest score's exp would be exp(-1000) = 0 instead of 1 near 1e19): attention stores
the scaled scores before subtracting, which rounds them.

A loop made by a factory (one per GELU form) may hold constants in its closure, but not
another loop: Numba's cache key includes what a closure holds, and a compiled function
pickles differently in every process, so such a loop would compile again every run.

Numba itself takes half a second to import, more than the rest of Zero, and a program
that never runs a Numba loop (or not yet) should not pay it. So the decorators here
return a ``LazyJit`` that only remembers the function and its options. At the first call
of any of them, ``compile_all`` imports Numba, makes every registered function a Numba
dispatcher (which compiles, or loads from the cache, per argument types at its own first
call) and puts the dispatchers in place of the ``LazyJit`` objects in the globals of
Zero's modules, so a Numba loop calling another sees a dispatcher, and later calls pay
nothing extra. (A ``LazyJit`` held elsewhere keeps working: it forwards the call.)

A damaged cache heals itself. Numba writes a cache file under a temporary name and renames
it, without fsync: after a power cut the file may be empty or cut short, and Numba's
loader then raises (``EOFError``, an unpickling error) at every later run. Each cached
dispatcher here uses ``recovering_cache_class()``'s cache instead of Numba's own: when a
function's index or data file cannot be read, it removes that function's cache files and
reports a miss, so the loop compiles again and a sound entry replaces the damaged one.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
import warnings
from typing import Any

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
prange = range  # serial loops: what Numba compiles prange to without parallel=True


class LazyJit:
    """A function to be compiled by ``numba.njit(**options)``; compiles everything at the
    first call of any (see the module docstring)."""

    def __init__(self, py_func, options: dict):
        self.py_func, self.options = py_func, options
        self.dispatcher: Any = None       # numba's, once compile_all has run
        functools.update_wrapper(self, py_func)  # its name and docstring
        _registered.append(self)

    def __call__(self, *args):
        if self.dispatcher is None:
            compile_all()
        return self.dispatcher(*args)

    def __repr__(self) -> str:
        state = " (compiled)" if self.dispatcher is not None else ""
        return f"<LazyJit {self.py_func.__qualname__}{state}>"


_registered: list[LazyJit] = []
_compiling = threading.Lock()
_PACKAGE = __name__.partition(".")[0] + "."   # "zero.", or a copy's own name (step_ab.py's zero_base)


def _cache_dir() -> str:
    """Where this version of the kernel sources keeps its machine code (module docstring)."""
    import hashlib

    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha1()
    for name in sorted(entry for entry in os.listdir(here) if entry.endswith(".py")):
        with open(os.path.join(here, name), "rb") as source:
            digest.update(name.encode() + b"\0" + source.read())
    return os.path.join(here, "__pycache__", f"numba-{digest.hexdigest()[:16]}")


def compile_all() -> None:
    """Import Numba, give every registered function its dispatcher, and replace each
    LazyJit in the globals of Zero's modules by its dispatcher. Thread-safe: the first
    calls may come from the pool's threads at once, and a LazyJit shows its dispatcher only
    when every global has been replaced (Numba compiling a loop that a thread could already
    call would otherwise meet a LazyJit among its callees: "Untyped global name")."""
    with _compiling:
        fresh = [lazy for lazy in _registered if lazy.dispatcher is None]
        if not fresh:
            return
        import numba

        if not os.environ.get("NUMBA_CACHE_DIR"):
            numba.config.CACHE_DIR = _cache_dir()  # type: ignore[attr-defined]
        # Inlining _fastmath's precision switch (an isinstance branch Numba resolves) trips a
        # "pedantic internal check" of Numba's SSA pass; the code it makes is right (tested).
        warnings.filterwarnings("ignore", category=numba.core.errors.NumbaIRAssumptionWarning)
        by_id = {id(lazy): _dispatcher(numba, lazy) for lazy in fresh}
        for name, module in list(sys.modules.items()):
            if not name.startswith(_PACKAGE) or module is None:
                continue
            namespace = vars(module)
            for key, value in list(namespace.items()):
                if type(value) is LazyJit and id(value) in by_id:
                    namespace[key] = by_id[id(value)]
        for lazy in fresh:
            lazy.dispatcher = by_id[id(lazy)]


def _dispatcher(numba, lazy: LazyJit) -> Any:
    """Numba's dispatcher for ``lazy``, its disk cache (if asked for) one that recovers from
    damaged files (module docstring)."""
    options = dict(lazy.options)
    cache = options.pop("cache", False)
    dispatcher = numba.njit(**options)(lazy.py_func)
    if cache and hasattr(dispatcher, "enable_caching"):  # (not with NUMBA_DISABLE_JIT: a plain function)
        dispatcher._cache = recovering_cache_class()(dispatcher.py_func)
    return dispatcher


@functools.cache
def recovering_cache_class() -> type:
    """Numba's per-function cache (``FunctionCache``), made to discard a damaged entry: a
    load that fails for any reason removes the function's index and data files and reports
    a miss, so the function compiles again and its fresh entry is saved in their place."""
    import pickle

    from numba.core.caching import FunctionCache

    damaged_index = (EOFError, ValueError, TypeError, AttributeError, ImportError, IndexError, pickle.UnpicklingError)

    class RecoveringFunctionCache(FunctionCache):
        def load_overload(self, sig, target_context):
            try:
                return super().load_overload(sig, target_context)
            except Exception:  # EOFError, UnpicklingError, a rebuild that fails: a cache is only a shortcut
                self.discard()
                return None

        def save_overload(self, sig, data):
            try:
                super().save_overload(sig, data)
            except damaged_index:  # saving reads the index first, which may be the damaged file
                self.discard()
                super().save_overload(sig, data)

        def discard(self) -> None:
            """Remove this function's index and data files (every signature's: the index that
            names them may be the damaged file)."""
            index = getattr(self._cache_file, "_index_path", None)
            if index is None:
                return
            directory, index_name = os.path.split(index)
            base = index_name[:-len(".nbi")]  # data files: BASE.<number>.nbc
            try:
                names = os.listdir(directory)
            except OSError:
                return
            for name in names:
                number = name[len(base) + 1:-len(".nbc")] if name.startswith(base + ".") else ""
                if name == index_name or (name.endswith(".nbc") and number.isdigit()):
                    path = os.path.join(directory, name)
                    try:
                        os.unlink(path)
                    except OSError:
                        pass

    return RecoveringFunctionCache


def jit(**options) -> Any:
    """``@jit(inline="always")``: njit with these options on top of the defaults below."""
    def decorate(py_func):
        return LazyJit(py_func, {"cache": True, "nogil": True, "fastmath": FASTMATH, **options})
    return decorate


njit = jit()
njit_in_order = jit(fastmath=FASTMATH - {"reassoc", "contract"})
