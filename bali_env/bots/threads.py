"""The threads an agent's decision may use now, so that it decides at the speed its own threads
allow wherever it runs (``bali play``, ``bali serve``, an in-process tournament, a benchmark).

Two thread pools would otherwise fight over the cores when the machine is busy: NumPy's BLAS
pool (a user's bot's matrix products; the shipped networks use none, ``bali_env.bots.network``)
and Numba's parallel regions (the search kernels).
Both spin while they wait, and a parallel region lasts as long as its slowest thread, so a
search that takes 13 ms on a quiet 2-core machine took 140-500 ms beside another job.

``decision_threads()`` wraps one decision: NumPy's BLAS runs on the calling thread only (the
batches of a decision are small: a second BLAS thread gains nothing and spins against Numba),
and Numba's parallel kernels run on the cores that are idle now (``idle_cores``: the usable
cores less the other runnable tasks, at least one), the previous settings restored after. Quiet,
a search keeps all its threads; beside another job it steps down instead of waiting for a core.
The tournament workers, one thread each, keep one (``arena.workers``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numba

from bali_env.engine.thread_pool import start_thread_pool

_controller: Any = None
P = ParamSpec("P")
R = TypeVar("R")


def _blas() -> Any:
    """The process's ``threadpoolctl.ThreadpoolController`` (built once: finding the pools takes
    milliseconds, limiting them microseconds)."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, else ``os.cpu_count()``)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _running_here() -> int:
    """This process's threads that are running or runnable now (``/proc/self/task/*/stat``)."""
    count = 0
    for stat in Path("/proc/self/task").glob("*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the thread ended meanwhile
            continue
        count += text[text.rindex(")") + 2] == "R"
    return count


def idle_cores() -> int:
    """The usable cores not taken by another process's runnable task now (Linux:
    ``/proc/loadavg``'s count of runnable tasks less this process's own), at least 1; all
    usable cores where ``/proc`` cannot tell."""
    cores = usable_cores()
    try:
        runnable = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return cores
    others = max(0, runnable - _running_here())
    return max(1, min(cores, cores - others))


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within the block NumPy's BLAS runs on the calling thread only."""
    with _blas().limit(limits=1, user_api="blas"):
        yield


@contextmanager
def decision_threads() -> Iterator[int]:
    """Within the block: NumPy's BLAS on one thread and Numba's parallel kernels on the idle cores
    (``idle_cores``, at most Numba's own limit); yields that thread count. Numba's setting is per
    thread and comes back after the block."""
    start_thread_pool()
    before = numba.get_num_threads()
    threads = 1 if before == 1 else max(1, min(before, idle_cores()))  # a worker's one thread: nothing to ask
    numba.set_num_threads(threads)
    try:
        with one_blas_thread():
            yield threads
    finally:
        numba.set_num_threads(before)


def _within(context: Callable[[], Any]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator running a method within ``context()``."""

    def wrap(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def decide(*args: P.args, **kwargs: P.kwargs) -> R:
            with context():
                return method(*args, **kwargs)

        return decide

    return wrap


def on_decision_threads(method: Callable[P, R]) -> Callable[P, R]:
    """A decision method run within ``decision_threads()`` (looked up at each call)."""
    return _within(lambda: decision_threads())(method)

