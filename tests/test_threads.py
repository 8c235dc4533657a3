"""The threads an agent's decision uses (bali_env/bots/threads.py): BLAS on one thread, Numba's
parallel kernels on the cores idle now, the same decisions whatever that count."""

from __future__ import annotations

import subprocess
import sys
import time

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_info

from bali_env.bots import make_agent, threads
from bali_env.speed.search import choice_positions


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_a_decision_keeps_blas_to_one_thread_and_restores_both_pools(monkeypatch):
    monkeypatch.setattr(threads, "idle_cores", lambda: 1)
    numba_before, blas_before = numba.get_num_threads(), _blas_threads()
    with threads.decision_threads() as used:
        assert used == 1 and numba.get_num_threads() == 1
        assert _blas_threads() and set(_blas_threads()) == {1}
    assert numba.get_num_threads() == numba_before and _blas_threads() == blas_before


@pytest.mark.slow
def test_idle_cores_sees_other_busy_processes():
    """Beside one spinning process per usable core, no core is idle: a search steps down to one
    thread instead of waiting for one."""
    cores = threads.usable_cores()
    assert threads.idle_cores() >= 1
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        time.sleep(1.0)
        seen = min(threads.idle_cores() for _ in range(20))
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    assert seen == 1


@pytest.mark.parametrize("spec", ["ppo+search:sims=64", "mcts:sims=64"])
def test_search_kernels_run_on_the_idle_cores_only(spec, monkeypatch):
    """The parallel search kernel is entered with the thread count idle_cores allows."""
    obs, masks = choice_positions(count=4)
    agent = make_agent(spec, seed=0)
    agent.act_batch_keyed(obs, masks, np.arange(4, dtype=np.uint64))  # compiled before spying
    module = sys.modules[type(agent).__module__]
    kernels = module.K if hasattr(module, "K") else module.search
    name = "puct_descend" if hasattr(kernels, "puct_descend") else "ismcts_choose_batch"
    seen: list[int] = []
    kernel = getattr(kernels, name)

    def spy(*args, **kwargs):
        seen.append(numba.get_num_threads())
        return kernel(*args, **kwargs)

    monkeypatch.setattr(kernels, name, spy)
    monkeypatch.setattr(threads, "idle_cores", lambda: 1)
    agent.act_batch_keyed(obs, masks, np.arange(4, dtype=np.uint64))
    assert seen and set(seen) == {1}


@pytest.mark.parametrize("spec", ["ppo+search:sims=96", "mcts:sims=96"])
def test_the_same_decisions_whatever_the_thread_count(spec, monkeypatch):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread on this machine: nothing to compare")
    obs, masks = choice_positions(count=16)
    keys = np.arange(100, 116, dtype=np.uint64)
    chosen = {}
    for count in (1, 2):
        monkeypatch.setattr(threads, "idle_cores", lambda count=count: count)
        chosen[count] = make_agent(spec, seed=0).act_batch_keyed(obs, masks, keys)
    np.testing.assert_array_equal(chosen[1], chosen[2])
