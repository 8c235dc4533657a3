"""A probe run in a subprocess by ``tests/test_blas.py``: what the shipped agents compute and
decide on fixed positions, and the games of a short tournament, as SHA-256 digests (printed as
one JSON line), so that runs under other OpenBLAS kernels, thread counts or Numba CPU targets
can be compared bit for bit.

Usage: ``python tests/probes/decisions.py OUT_DIR [--golden]`` (``--golden``: also write the
digests to ``tests/golden/decisions.json``, after a deliberate change of the shipped policies or
of the search)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np


def positions(num_players: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` positions of a seeded random game (restarted when it ends), as observed."""
    import bali_env
    from bali_env.bots.random_agent import RandomAgent

    env, agent = bali_env.raw_env(num_players=num_players), RandomAgent(seed=11)
    env.reset(seed=11)
    obs, masks = [], []
    while len(obs) < count:
        if all(env.terminations.values()):
            env.reset()
        o = env.observe(env.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(agent.act(o["observation"], o["action_mask"]))
    return np.array(obs), np.array(masks)


def digest(*arrays: np.ndarray) -> str:
    """SHA-256 of the arrays' bytes."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def main(out: Path) -> dict[str, str]:
    """The digests: each shipped policy's logits and seat values, each agent's decisions on the
    same positions, and a tournament's games."""
    from bali_env.bots import make_agent
    from bali_env.bots.ppo import ExportedPolicy, shipped_policy
    from bali_env.arena import run_tournament

    found: dict[str, str] = {}
    for n in (2, 4):
        obs, masks = positions(n, 96)
        policy = ExportedPolicy(shipped_policy(n))
        x = policy.input(obs, masks)
        found[f"network-{n}p"] = digest(policy.forward(x), policy.seat_values(x, n))
        for spec in ("ppo", "ppo:deterministic=false", "ppo+search:sims=32", "ppo+search:sims=32,gumbel=4"):
            keys = np.arange(len(obs), dtype=np.uint64) + np.uint64(7)
            found[f"{spec}-{n}p"] = digest(make_agent(spec, seed=3).act_batch_keyed(obs, masks, keys))
    run_tournament(["ppo", "ppo+search:sims=16", "greedy"], num_players=3, games=3, seed=4, workers=1, out_dir=out,
                   progress=False, save_records=True)
    journal = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]
    games = sorted(({k: v for k, v in g.items() if k != "move_times"} for g in journal[1:]), key=lambda g: g["game"])
    found["journal"] = hashlib.sha256(json.dumps(games, sort_keys=True).encode()).hexdigest()
    records = sorted((out / "records").iterdir())
    found["records"] = hashlib.sha256(b"".join(r.name.encode() + r.read_bytes() for r in records)).hexdigest()
    found["games"] = str(len(games))
    return found


def blas_kernel() -> str:
    """The OpenBLAS kernel NumPy runs here (threadpoolctl's ``architecture``; "" when NumPy's BLAS
    is not OpenBLAS)."""
    from threadpoolctl import threadpool_info

    return next((str(p.get("architecture")) for p in threadpool_info() if p.get("internal_api") == "openblas"), "")


if __name__ == "__main__":
    digests = main(Path(sys.argv[1]))
    if "--golden" in sys.argv[2:]:
        (Path(__file__).parents[1] / "golden" / "decisions.json").write_text(json.dumps(digests, indent=1) + "\n")
    print(json.dumps({"digests": digests, "blas_kernel": blas_kernel()}))
