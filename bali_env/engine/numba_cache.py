"""Numba's on-disk cache, kept fresh across files.

Numba keys a cached kernel on the source of the file that defines it only: change a callee in
another file and the caller's cached machine code (which holds the old callee) would still be
loaded. Here every kernel file of the engine, and every file that registers itself with
``cover`` (the search kernels of ``agents/``), gets a source stamp that also holds a hash of
*all* engine sources: any change to any engine file makes every dependent cache entry stale,
and Numba then recompiles and overwrites it. ``install()`` runs when ``bali_env.engine`` is
imported, before any kernel is defined.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from numba.core import caching

ENGINE_DIR = Path(__file__).resolve().parent
_covered: dict[Path, tuple[Path, ...]] = {}  # kernel file outside the engine -> other files it depends on


@functools.lru_cache(maxsize=1)
def engine_sources_hash() -> str:
    """SHA-256 over the names and contents of every ``.py`` file of the engine package."""
    h = hashlib.sha256()
    for path in sorted(ENGINE_DIR.glob("*.py")):
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
    """Numba's ``Cache._load_overload``, except that a cache entry that cannot be read (a file cut
    short or corrupted) is a cache miss with a warning naming the folder, instead of an error in
    every later run: the kernel is compiled again and the entry rewritten."""

    def load(self: Any, sig: Any, target_context: Any) -> Any:
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
