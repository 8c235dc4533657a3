"""Numba's thread pool, started with OpenMP waiting passively.

Numba's parallel kernels (the batched env's deal and step, the searches' batched decisions) run on
an OpenMP runtime whose threads, by default, spin between parallel regions: on a shared or small
machine that spinning starves the thread that has work, and a batched step ran 10-100x slower.
OpenMP reads its wait policy once, when its runtime starts. ``start_thread_pool`` starts Numba's
pool with ``OMP_WAIT_POLICY=PASSIVE`` set for that moment only, then takes the variable away again:

- ``import bali_env`` changes no environment variable and starts no thread;
- a value you set yourself (``OMP_WAIT_POLICY=ACTIVE python ...``) is used and left as it is;
- other OpenMP runtimes started later in the process (PyTorch's own, for one) see the
  environment as you left it;
- when Numba's pool was already running (your own ``prange`` code ran first), nothing changes.

Every path of the package that runs Numba threads calls it first (the batched env, the agents'
decisions, tournament and self-play workers, ``bali bench``); call it yourself before calling the
engine's parallel kernels (``bali_env.engine.batch``) directly.
"""

from __future__ import annotations

import os

import numba

_started = False


def start_thread_pool() -> None:
    """Start Numba's thread pool (once), its OpenMP runtime waiting passively unless
    ``OMP_WAIT_POLICY`` is set already; the environment is left as it was found."""
    global _started
    if _started:
        return
    chosen = "OMP_WAIT_POLICY" in os.environ
    if not chosen:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        numba.get_num_threads()  # launches the pool (and loads the OpenMP runtime) on first call
    finally:
        if not chosen:
            del os.environ["OMP_WAIT_POLICY"]
    _started = True


__all__ = ["start_thread_pool"]
