"""The golden of the shipped policies' inputs and choices (``tests/golden/policy/inputs.npz``),
read by ``tests/test_policy_golden.py``. The shipped ``ppo`` policies append the greedy
heuristic's estimates to the observation (``bali_env.bots.features``, feature set
``greedy-v1``): retuning the heuristic would silently change what the policies see and play.
This file freezes both, on the observations of the greedy golden (``tests/golden/greedy``:
every player count and variant):

- ``features``: ``policy_input(obs, masks, "greedy-v1")[:, OBS_DIM:]`` for every row;
- ``rows_2p`` / ``rows_4p``: the rows of 2 and 4 players with a decision to take; ``logits_2p`` / ``logits_4p``: the
  shipped policy's logits there (``ExportedPolicy.logits``); ``choice_2p`` / ``choice_4p``: what
  ``PPOAgent`` plays (its most probable legal action).

It was first recorded from commit b3a684d (the code before the package moved under ``bali_env``,
the same computation with the old import paths), and the current code reproduces it. Record it
again only after an intended change of the features or of a shipped policy, and say why in the
commit::

    python tests/golden/policy/generate.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "inputs.npz"
SOURCE = HERE.parent / "greedy" / "decisions.npz"


def compute() -> dict[str, np.ndarray]:
    """Everything the golden holds, from the current code and the shipped policies."""
    from bali_env.bots.features import policy_input
    from bali_env.bots.ppo import PPOAgent
    from bali_env.engine import MIN_PLAYERS, N_PLAYER_COUNTS, O_NUM_PLAYERS, OBS_DIM

    golden = np.load(SOURCE)
    obs, masks = golden["obs"], golden["masks"]
    players = MIN_PLAYERS + np.argmax(obs[:, O_NUM_PLAYERS : O_NUM_PLAYERS + N_PLAYER_COUNTS], axis=1)
    out = {"features": policy_input(obs, masks, "greedy-v1")[:, OBS_DIM:]}
    agent = PPOAgent(seed=0)
    for n in (2, 4):
        rows = np.flatnonzero((players == n) & masks.any(axis=1))  # decisions, not finished games
        policy = agent._policy_for(n)
        out[f"rows_{n}p"] = rows
        out[f"logits_{n}p"] = policy.logits(obs[rows], masks[rows]).astype(np.float32)
        out[f"choice_{n}p"] = agent.act_batch(obs[rows], masks[rows]).astype(np.int64)
    return out


def main() -> None:
    """Record the golden from the current code."""
    from bali_env.files import replace_when_done

    data = compute()
    with replace_when_done(OUT) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **data)
    print(f"wrote {OUT}: " + ", ".join(f"{k} {v.shape}" for k, v in data.items()))


if __name__ == "__main__":
    main()
