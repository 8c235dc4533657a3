"""Numba's on-disk cache, kept fresh across files.

Numba keys a cached kernel on the source of the file that defines it only: change a callee in
another file and the caller's cached machine code (which holds the old callee) would still be
loaded. Here every kernel file of the engine, and every file that registers itself with
``cover`` (the search kernels of ``bots/``), gets a source stamp that also holds a hash of the
engine's *kernel sources* (``kernel_sources``: the files that define kernels and the engine
files they import, the constants among them): a change to any of them makes every dependent
cache entry stale, and Numba then recompiles and overwrites it. Editing an engine file no kernel
is compiled from (the validators, the contract, the compile notice, this file) keeps the cache.

What it changes in Numba, for this package's kernels only: the cache locators are ours for the
files above and Numba's own for every other file (a user's ``@njit(cache=True)`` function is
cached exactly as Numba caches it), and an unreadable cache entry of one of our kernels (a file
cut short, a disk error) is a cache miss with a warning, compiled again, instead of an error in
every later run; another file's unreadable entry fails as Numba makes it fail. ``install()`` runs
when ``bali_env.engine`` is imported, before any kernel is defined.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path
from typing import Any

from numba.core import caching

ENGINE_DIR = Path(__file__).resolve().parent
_covered: dict[Path, tuple[Path, ...]] = {}  # kernel file outside the engine -> other files it depends on


def _defines_kernels(tree: ast.Module) -> bool:
    """Whether a module defines a Numba kernel (a function decorated ``@njit`` or ``@njit(...)``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                if getattr(target, "id", getattr(target, "attr", "")) == "njit":
                    return True
    return False


def _engine_imports(tree: ast.Module, package: str) -> set[str]:
    """The engine modules (by file stem) a module imports by name, anywhere in its file."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(package + "."):
            found.add(node.module.split(".")[len(package.split("."))])
    return found


def kernel_sources(directory: Path = ENGINE_DIR, package: str = "bali_env.engine") -> list[Path]:
    """The engine files the kernels are compiled from: every file that defines a kernel, and every
    engine file those import (their constants are compiled in), sorted by name."""
    trees = {p.stem: ast.parse(p.read_text(), filename=str(p)) for p in directory.glob("*.py") if p.stem != "__init__"}
    found = {stem for stem, tree in trees.items() if _defines_kernels(tree)}
    todo = list(found)
    while todo:
        for dep in _engine_imports(trees[todo.pop()], package) & set(trees):
            if dep not in found:
                found.add(dep)
                todo.append(dep)
    return sorted(directory / f"{stem}.py" for stem in found)


@functools.lru_cache(maxsize=1)
def engine_sources_hash(directory: Path = ENGINE_DIR) -> str:
    """SHA-256 over the names and contents of the engine's kernel sources (``kernel_sources``)."""
    h = hashlib.sha256()
    for path in kernel_sources(directory):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def cover(py_file: str, *depends_on: str) -> None:
    """Key the cache of the kernels in ``py_file`` (outside the engine) on the engine sources too,
    and on the files ``depends_on`` (e.g. a module whose arrays the kernels read as constants).
    Call it before the file's first ``@njit(cache=True)``."""
    _covered[Path(py_file).resolve()] = tuple(Path(d).resolve() for d in depends_on)


def _is_covered(py_file: str) -> bool:
    p = Path(py_file).resolve()
    return p.parent == ENGINE_DIR or p in _covered


def _dependencies_hash(py_file: str) -> str:
    """SHA-256 over the contents of the extra files a covered file depends on ("" if none)."""
    deps = _covered.get(Path(py_file).resolve(), ())
    if not deps:
        return ""
    h = hashlib.sha256()
    for dep in deps:
        h.update(dep.read_bytes())
    return h.hexdigest()


class _EngineStamp:
    """Mixin for a Numba cache locator: the file's own stamp plus the engine sources' hash (and
    the hash of the extra files the kernel file depends on)."""

    def get_source_stamp(self):  # noqa: D102 - Numba's interface
        return (super().get_source_stamp(), engine_sources_hash(), _dependencies_hash(self._py_file))

    @classmethod
    def from_function(cls, py_func, py_file):  # noqa: D102 - Numba's interface
        if not _is_covered(py_file):
            return None
        return super().from_function(py_func, py_file)


def _numba_class(*names: str) -> type:
    for name in names:
        cls = getattr(caching, name, None)
        if cls is not None:
            return cls
    raise ImportError(f"numba.core.caching has none of {names}")


_BASES = (
    _numba_class("UserProvidedCacheLocator", "_UserProvidedCacheLocator"),
    _numba_class("InTreeCacheLocator", "_InTreeCacheLocator"),
    _numba_class("UserWideCacheLocator", "_UserWideCacheLocator"),
)
LOCATORS = tuple(type(f"Engine{base.__name__.lstrip('_')}", (_EngineStamp, base), {}) for base in _BASES)


def _tolerant_load(original: Any) -> Any:
    """Numba's ``Cache._load_overload``, except that an entry of one of this package's kernels that
    cannot be read (a file cut short or corrupted) is a cache miss with a warning naming the folder,
    instead of an error in every later run: the kernel is compiled again and the entry rewritten.
    Every other file's cache is loaded by Numba's own code, errors and all."""

    def load(self: Any, sig: Any, target_context: Any) -> Any:
        if not isinstance(getattr(getattr(self, "_impl", None), "locator", None), _EngineStamp):
            return original(self, sig, target_context)  # not one of ours: Numba's own behaviour
        try:
            return original(self, sig, target_context)
        except Exception as exc:  # noqa: BLE001  (any unreadable entry: recompile)
            import warnings

            where = getattr(self, "_cache_path", "Numba's cache folder")
            warnings.warn(f"ignoring an unreadable Numba cache entry for {self._name} ({type(exc).__name__}: "
                          f"{exc}); compiling it again. Deleting {where} clears the cache.", RuntimeWarning,
                          stacklevel=2)
            return None

    load._bali_tolerant = True  # type: ignore[attr-defined]
    return load


def install() -> None:
    """Put the engine's locators first in Numba's list (once; the order of Numba's own is kept),
    and make an unreadable cache entry a cache miss (``_tolerant_load``)."""
    impl = _numba_class("CacheImpl", "_CacheImpl")
    classes = impl._locator_classes
    for loc in reversed(LOCATORS):
        if loc not in classes:
            classes.insert(0, loc)
    if not getattr(caching.Cache._load_overload, "_bali_tolerant", False):
        caching.Cache._load_overload = _tolerant_load(caching.Cache._load_overload)
