"""The library's word that Numba is compiling: the first use of the engine from empty caches compiles
its kernels for a minute or two, and without a word that looks like a hang. ``install()`` (run when
``bali_env.engine`` is imported) listens to Numba's ``numba:compile`` event, which fires only when a
kernel is really compiled (a kernel loaded from the disk cache raises none): at the first compile
of a ``bali_env`` kernel in a process, one line is logged (``NOTICE``, a warning of the logger
``bali_env.compile``: on stderr when the program has not configured logging, through its handlers
when it has). Nothing when the cache is warm, nothing a second time.

The ``bali`` command's tournaments show their own notice, with progress (``bali_env.arena.workers
.CompileNotice``): they ``quiet()`` this one in the processes they compile in.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

#: the line said at the first compile of a process
NOTICE = ("bali_env: compiling the game's Numba kernels (first use only: a minute or two on a busy machine; "
          "cached afterwards)")
logger = logging.getLogger("bali_env.compile")  #: where the notice goes (a warning)

_lock = threading.Lock()
_state = {"installed": False, "said": False}


def _ours(event: Any) -> bool:
    """Whether the kernel a ``numba:compile`` event is about is one of ``bali_env``'s."""
    dispatcher = (getattr(event, "data", None) or {}).get("dispatcher")
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module == "bali_env" or module.startswith("bali_env.")


def _compiling(event: Any) -> None:
    """A kernel starts compiling: say ``NOTICE`` if it is the first of ``bali_env``'s here."""
    if _state["said"] or not _ours(event):
        return
    with _lock:
        if _state["said"]:
            return
        _state["said"] = True
    logger.warning(NOTICE)


def install() -> None:
    """Listen to Numba's compiles (once per process; idempotent)."""
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            _compiling(ev)

        def on_end(self, ev: Any) -> None:
            pass

    with _lock:
        if _state["installed"]:
            return
        _state["installed"] = True
    event.register("numba:compile", _Listener())


def quiet() -> None:
    """Say nothing in this process from now on (a caller that shows a notice of its own)."""
    with _lock:
        _state["said"] = True


__all__ = ["NOTICE", "install", "logger", "quiet"]
