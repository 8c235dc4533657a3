"""Regenerate the golden playthroughs: ``python tests/golden/generate.py``. Only after an
intended rule or encoding change (say which in the commit): ``tests/test_golden.py`` fails on any
difference. Each file is a game record (seat 0 greedy, the others random, seeded) plus the
playthrough of every step (``bali_env.records.playthrough``)."""

from __future__ import annotations

import json
from pathlib import Path

import bali_env
from agents import make_agent
from bali_env.records import playthrough

CASES = [(2, False, False, 1), (2, True, True, 2), (3, True, False, 3), (3, False, True, 4), (4, False, False, 5),
         (4, True, True, 6)]


def name(n: int, oracle: bool, demon: bool, seed: int) -> str:
    """The file name of a case."""
    return f"bali_{n}p{'_oracle' if oracle else ''}{'_demon' if demon else ''}_seed{seed}.json"


def generate(out: Path) -> None:
    """Play and write every case."""
    for n, oracle, demon, seed in CASES:
        env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
        env.reset(seed=seed)
        agents = [make_agent("greedy", seed=seed)] + [make_agent("random", seed=seed + k) for k in range(1, n)]
        while not all(env.terminations.values()):
            o = env.observe(env.agent_selection)
            env.step(agents[env.agent_name_mapping[env.agent_selection]].act(o["observation"], o["action_mask"]))
        record = env.game_record(["greedy"] + ["random"] * (n - 1))
        record["playthrough"] = playthrough(record)
        (out / name(n, oracle, demon, seed)).write_text(json.dumps(record, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    generate(Path(__file__).parent)
