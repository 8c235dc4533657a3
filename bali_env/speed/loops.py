"""The timed loops of ``bali bench`` on the environments, written against the package's public
names only (``bali_env.envs.batched``, an env factory passed in), so that the same code measures
any commit: ``benchmarks.compare`` loads this file for both sides of a comparison.

| function | what it times |
|---|---|
| ``aec_steps_per_second`` | a PettingZoo AEC env played by uniform random masked actions |
| ``bench_vector`` | ``BaliVectorEnv`` at each batch size (actions chosen with NumPy) |
| ``bench_rollout`` | the rollout kernel on 1 thread and on all Numba threads |
| ``random_masked_actions`` | the random legal actions the batched loops play |
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def aec_steps_per_second(make_env: Callable[[], Any], seconds: float, seed: int = 0) -> dict[str, float]:
    """Decisions per second of a PettingZoo AEC env played by uniform random masked actions.

    The loop is the usual ``agent_iter``/``last``/``step`` one; the observation is produced
    (``last()``) at every step; dead steps at the end of a game are not counted as decisions."""
    env = make_env()
    rnd = random.Random(seed)

    def play(budget: float) -> tuple[int, int, float]:
        steps = games = 0
        env.reset(seed=seed)
        t0 = time.perf_counter()
        while True:
            for _agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    action = None
                else:
                    legal = np.flatnonzero(obs["action_mask"])
                    action = int(legal[int(rnd.random() * len(legal))])
                    steps += 1
                env.step(action)
            games += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= budget:
                return steps, games, elapsed
            env.reset()

    play(min(0.5, seconds))  # warm-up: JIT, caches
    steps, games, elapsed = play(seconds)
    return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps": steps, "games": games,
            "seconds": elapsed}


def random_masked_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One uniform random legal action per row of ``masks`` (NumPy only). The random keys lie in
    [1, 2), so a legal action always beats the illegal ones (a key of exactly 0 once made the
    benchmark pick an illegal action)."""
    return np.argmax(masks * (rng.random(masks.shape, dtype=np.float32) + 1.0), axis=1)


def bench_vector(sizes: tuple[int, ...], seconds: float, num_players: int = 4) -> dict[str, Any]:
    """Steps per second of ``BaliVectorEnv`` at each batch size (actions chosen with NumPy)."""
    from bali_env.envs.batched import BaliVectorEnv

    out: dict[str, Any] = {}
    rng = np.random.default_rng(0)
    for n in sizes:
        env = BaliVectorEnv(n, num_players=num_players, seed=0)
        _, info = env.reset()
        masks = info["action_mask"]
        for _ in range(5):  # warm-up (JIT)
            env.step(random_masked_actions(rng, masks))
        steps, kernel_time, games = 0, 0.0, 0
        t0 = time.perf_counter()
        while True:
            actions = random_masked_actions(rng, masks)
            t1 = time.perf_counter()
            _, _, terminated, _, _ = env.step(actions)
            kernel_time += time.perf_counter() - t1
            steps += n
            games += int(terminated.sum())
            elapsed = time.perf_counter() - t0
            if elapsed >= seconds:
                break
        out[str(n)] = {
            "steps_per_s": steps / elapsed,
            "games_per_s": games / elapsed,
            "steps": steps,
            "games": games,
            "seconds": elapsed,
            "step_call_share": kernel_time / elapsed,
            "buffer_bytes": int(sum(a.nbytes for a in (env.states, env.obs, env.action_masks, env.to_move, env.rewards,
                                                        env.terminated, env.final_scores, env.winner_masks))),
        }
    return out


def bench_rollout(num_games: int) -> dict[str, Any]:
    """The rollout kernel on 1 thread and on all Numba threads."""
    import numba

    from bali_env.envs.batched import rollout

    try:  # the pool starts waiting passively (a commit before this one set that on import)
        from bali_env.engine.thread_pool import start_thread_pool
    except ImportError:
        pass
    else:
        start_thread_pool()
    out: dict[str, Any] = {}
    all_threads = numba.config.NUMBA_NUM_THREADS
    try:
        for threads in sorted({1, all_threads}):
            numba.set_num_threads(threads)
            rollout(min(num_games, 256), seed=0)  # warm-up (JIT, threads)
            t0 = time.perf_counter()
            res = rollout(num_games, seed=1)
            elapsed = time.perf_counter() - t0
            steps = int(res["steps"].sum())
            out[f"{threads}_threads"] = {
                "threads": threads,
                "steps_per_s": steps / elapsed,
                "games_per_s": num_games / elapsed,
                "steps": steps,
                "games": num_games,
                "seconds": elapsed,
                "mean_steps_per_game": float(res["steps"].mean()),
            }
    finally:
        numba.set_num_threads(all_threads)
    return out
