"""How fast each way into the game runs (part of ``bali bench``; ``python -m bali_env.speed.ways``
runs it alone): the PettingZoo AEC env, the Gymnasium single-agent env, the Gymnasium vector env
(opponents inside the batch: random, greedy and the shipped ``ppo``), the SB3 VecEnv, the native
PufferLib env, the pgx-style batched env and the OpenSpiel game, each played by uniform random
legal actions of the learner (every player's, where there is no learner), in 2-player games.

Two units, as each way counts: **decisions per second** for the ways where every decision is a
step (AEC, batched, OpenSpiel), **learner steps per second** for the ways where the opponents'
decisions happen inside a step (Gymnasium, SB3, PufferLib): one learner step is one learner
decision and the opponents' decisions up to the next one (about two decisions in 2 players).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bali_env.speed.loops import aec_steps_per_second

PLAYERS = 2  #: the games measured
VECTOR_ENVS = 256  #: games per batch for the vector envs


def _timed(step: Callable[[], int], seconds: float) -> float:
    """Counted units per second of ``step`` (it returns how many it did), after a short warm-up."""
    warm = time.perf_counter()
    while time.perf_counter() - warm < min(0.5, seconds / 4):
        step()
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        done += step()
    return done / (time.perf_counter() - start)


def _choose(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniform random legal action per row of ``masks`` (row-wise, vectorised)."""
    scores = rng.random(masks.shape) * (masks > 0)
    return np.argmax(scores, axis=1)


def aec(seconds: float) -> float:
    """``bali_env.env()``: decisions per second (the AEC loop, in 2 players)."""
    from bali_env.envs.bali_v0 import env as make_env

    return aec_steps_per_second(lambda: make_env(num_players=PLAYERS), seconds)["steps_per_s"]


def gym_single(seconds: float) -> float:
    """``gymnasium.make("bali_env/Bali-v0")`` (random opponents): learner steps per second."""
    import gymnasium

    env, rng = gymnasium.make("bali_env/Bali-v0", num_players=PLAYERS), np.random.default_rng(0)
    state = {"info": env.reset(seed=0)[1]}

    def step() -> int:
        _, _, term, trunc, info = env.step(int(_choose(rng, state["info"]["action_mask"][None])[0]))
        state["info"] = env.reset()[1] if term or trunc else info
        return 1

    return _timed(step, seconds)


def gym_vector(seconds: float, opponents: str) -> float:
    """``gymnasium.make_vec("bali_env/Bali-v0", num_envs=256, opponents=...)``: learner steps per second."""
    import gymnasium

    env = gymnasium.make_vec("bali_env/Bali-v0", num_envs=VECTOR_ENVS, num_players=PLAYERS, opponents=opponents)
    rng = np.random.default_rng(0)
    state = {"info": env.reset(seed=0)[1]}

    def step() -> int:
        masks = state["info"]["action_mask"]
        actions = np.where(masks.any(axis=1), _choose(rng, masks), 0)  # a slot showing its game's end: any action
        state["info"] = env.step(actions)[4]
        return VECTOR_ENVS

    return _timed(step, seconds)


def sb3(seconds: float) -> float:
    """``BaliSB3VecEnv(256, "random")``: learner steps per second."""
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    env, rng = BaliSB3VecEnv(VECTOR_ENVS, "random", num_players=PLAYERS, seed=0), np.random.default_rng(0)
    env.reset()

    def step() -> int:
        env.step_async(_choose(rng, env.action_masks()))
        env.step_wait()
        return VECTOR_ENVS

    return _timed(step, seconds)


def puffer(seconds: float) -> float:
    """``BaliPufferEnv(256, "random")``, the native PufferLib env (the ``pufferlib`` extra; a
    missing ``pufferlib`` skips it): learner steps per second."""
    from bali_env.versus.puffer_env import BaliPufferEnv

    env, rng = BaliPufferEnv(VECTOR_ENVS, "random", num_players=PLAYERS, seed=0), np.random.default_rng(0)
    env.reset()

    def step() -> int:
        env.step(_choose(rng, env.action_masks()))
        return VECTOR_ENVS

    return _timed(step, seconds)


def batched(seconds: float) -> float:
    """``BaliVectorEnv(1024)`` (one thread): decisions per second."""
    from bali_env.envs.batched import BaliVectorEnv

    env, rng = BaliVectorEnv(1024, num_players=PLAYERS, seed=0, parallel=False), np.random.default_rng(0)
    env.reset()

    def step() -> int:
        env.step(_choose(rng, env.action_masks))
        return 1024

    return _timed(step, seconds)


def openspiel(seconds: float) -> float:
    """``pyspiel.load_game("python_bali")``: decisions per second (the chance nodes before each
    decision, drawn with their probabilities, are timed but not counted)."""
    import pyspiel

    import bali_env.envs.openspiel  # noqa: F401 - registers python_bali

    game, rng = pyspiel.load_game("python_bali", {"players": PLAYERS}), np.random.default_rng(0)
    state = {"s": game.new_initial_state()}

    def step() -> int:
        s = state["s"]
        while s.is_chance_node() or s.is_terminal():
            if s.is_terminal():
                s = state["s"] = game.new_initial_state()
                continue
            outcomes = s.chance_outcomes()
            k = int(np.searchsorted(np.cumsum([p for _, p in outcomes]), rng.random(), side="right"))
            s.apply_action(outcomes[min(k, len(outcomes) - 1)][0])
        legal = s.legal_actions()
        s.apply_action(legal[int(rng.integers(len(legal)))])
        return 1

    return _timed(step, seconds)


WAYS: dict[str, tuple[str, Callable[..., float], tuple[Any, ...]]] = {
    "pettingzoo_aec": ("decisions/s", aec, ()),
    "gymnasium": ("learner steps/s", gym_single, ()),
    "gymnasium_vector_random": ("learner steps/s", gym_vector, ("random",)),
    "gymnasium_vector_greedy": ("learner steps/s", gym_vector, ("greedy",)),
    "gymnasium_vector_ppo": ("learner steps/s", gym_vector, ("ppo",)),
    "sb3_vec_env": ("learner steps/s", sb3, ()),
    "pufferlib": ("learner steps/s", puffer, ()),
    "batched": ("decisions/s", batched, ()),
    "openspiel": ("decisions/s", openspiel, ()),
}  #: every way measured: (unit, function, its arguments)


def bench_ways(seconds: float = 3.0) -> dict[str, dict[str, Any]]:
    """Every way's speed: ``{way: {"unit", "per_s"}}`` (a way whose extra is missing: ``skipped``)."""
    out: dict[str, dict[str, Any]] = {}
    for way, (unit, measure, args) in WAYS.items():
        try:
            out[way] = {"unit": unit, "per_s": measure(seconds, *args)}
        except ImportError as exc:
            out[way] = {"unit": unit, "skipped": f"{exc.name or exc} is not installed"}
    return out


def summary(ways: dict[str, dict[str, Any]]) -> list[str]:
    """One line per way, for ``bali bench``'s notes."""
    return [f"{way}: " + (f"{r['per_s']:,.0f} {r['unit']}" if "per_s" in r else f"skipped ({r['skipped']})")
            for way, r in ways.items()]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Measure every way and print it; ``--out FILE`` also writes it as JSON."""
    import json
    import platform

    from bali_env import flags
    from bali_env.engine.validate import arg_type, check_number
    from bali_env.files import write_text

    parser = argparse.ArgumentParser(prog="python -m bali_env.speed.ways", description=__doc__.splitlines()[0],
                                     parents=[flags.out("write the results as JSON here (a file)")])
    parser.add_argument("--seconds", type=arg_type(check_number, 0, 600, True), default=3.0,
                        help="timed seconds per way (default 3)")
    args = parser.parse_args(argv)
    result = {"players": PLAYERS, "vector_envs": VECTOR_ENVS, "seconds": args.seconds,
              "machine": {"python": platform.python_version(), "processor": platform.processor()},
              "ways": bench_ways(args.seconds)}
    for line in summary(result["ways"]):
        print(line)
    if args.out:
        write_text(args.out, json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
