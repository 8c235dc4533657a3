"""What a decision of the search agents costs (part of ``bali bench``; ``python -m bali_env.speed.search``
runs it alone): ``mcts`` (1,000 simulations, random playouts) and ``ppo+search`` (its defaults,
the shipped policy's priors and value head), on the positions of random games that need a
choice, one position per call (``act``, as ``bali play`` and the web app ask) and 64 positions per
call (``act_batch``, as tournaments and training opponents ask), milliseconds per decision; and
one at a time again beside a competing process (one Python process spinning on a core, as
another job on a user's machine), the busy figure beside the quiet one.
``bali bench`` times 2-player positions; ``--players 3`` or ``4`` times 3- or 4-player ones (the
search reads the 4-player policy and its value head for every seat, in 3 players cut to three). The issue's goal for
``ppo+search``: at most 20 ms a decision on this machine, in 2 players.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

GOAL_MS = 20.0  #: the goal for one ppo+search decision
AGENTS = ("mcts", "ppo+search")


def choice_positions(count: int = 64, players: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``count`` positions that need a choice (observations and masks with at least two legal
    actions), from random ``players``-player games: what the search agents are timed on."""
    from bali_env.envs.bali_v0 import raw_env

    env = raw_env(num_players=players)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    obs, masks = [], []
    while len(obs) < count:
        if all(env.terminations.values()):
            env.reset()
        o = env.observe(env.agent_selection)
        if o["action_mask"].sum() > 1:
            obs.append(o["observation"])
            masks.append(o["action_mask"])
        env.step(int(rng.choice(env.legal_actions())))
    return np.array(obs), np.array(masks)


@contextmanager
def competing_process() -> Iterator[None]:
    """Within the block another process spins on a core (started, given a moment to run, killed after)."""
    other = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        yield
    finally:
        other.kill()
        other.wait()


def _one_by_one(agent: Any, obs: np.ndarray, masks: np.ndarray, count: int) -> float:
    """Seconds a decision of ``agent.act`` over the first ``count`` positions."""
    start = time.perf_counter()
    for i in range(count):
        agent.act(obs[i], masks[i])
    return (time.perf_counter() - start) / count


def bench_search(one_by_one: int = 20, players: int = 2) -> dict[str, Any]:
    """Per agent: ms per decision one at a time (``one_by_one`` positions) and in a batch of 64, in
    ``players``-player games; and one at a time beside a competing process (``competing_process``)."""
    from bali_env.bots import make_agent

    obs, masks = choice_positions(players=players)
    out: dict[str, Any] = {}
    for spec in AGENTS:
        agent = make_agent(spec, seed=0)  # the policy for the player count: read from the observation
        agent.act(obs[0], masks[0])  # compiled (or loaded) before timing
        single = _one_by_one(agent, obs, masks, one_by_one)
        start = time.perf_counter()
        agent.act_batch(obs, masks)
        batch = (time.perf_counter() - start) / len(obs)
        with competing_process():
            busy = _one_by_one(agent, obs, masks, one_by_one)
        settings = {k: getattr(agent, k) for k in ("sims", "c", "leaves") if hasattr(agent, k)}
        out[spec] = {"players": players, "settings": settings, "ms_per_decision": 1e3 * single,
                     "ms_per_decision_batched": 1e3 * batch, "ms_per_decision_busy": 1e3 * busy,
                     "decisions": one_by_one, "batch": len(obs)}
    return out


def summary(results: dict[str, Any]) -> list[str]:
    """Lines for the bench notes."""
    lines = []
    for spec, r in results.items():
        settings = ", ".join(f"{k}={v:g}" for k, v in r["settings"].items())
        players = r.get("players", 2)  # results written before the option: 2 players
        goal = f" (goal: at most {GOAL_MS:g} ms)" if spec == "ppo+search" and players == 2 else ""
        busy = (f"; {r['ms_per_decision_busy']:.1f} ms one at a time beside a competing process"
                if "ms_per_decision_busy" in r else "")  # results written before the busy figure: none
        lines.append(f"{spec} ({settings}, {players} players): {r['ms_per_decision']:.1f} ms a decision "
                     f"one at a time{goal}, {r['ms_per_decision_batched']:.1f} ms in batches of {r['batch']}{busy}")
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """``python -m bali_env.speed.search [--decisions N] [--players P] [--out OUT]``: measure, print the lines,
    return the figures (and write them, with the date and the machine, to ``OUT`` as JSON)."""
    import argparse

    from bali_env import flags
    from bali_env.engine.validate import arg_type, check_int

    p = argparse.ArgumentParser(prog="python -m bali_env.speed.search", description="ms a decision of mcts and "
                                "ppo+search, one at a time and in batches of 64",
                                parents=[flags.players(2),
                                         flags.out("also write the figures there as JSON, with the date and the "
                                                   "machine")])
    p.add_argument("--decisions", type=arg_type(check_int, 1, 64), default=20,
                   help="positions timed one at a time, 1..64 (default 20)")
    args = p.parse_args(argv)
    results = bench_search(args.decisions, args.players)
    for line in summary(results):
        print(line)
    if args.out:
        import datetime
        import json

        from bali_env.speed.machine import machine_info
        from bali_env.files import write_text

        kept = {"date": datetime.date.today().isoformat(), "machine": machine_info(), "search": results}
        print(f"wrote {write_text(args.out, json.dumps(kept, indent=1) + chr(10))}")
    return results


if __name__ == "__main__":
    main()
