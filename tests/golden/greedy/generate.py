"""Regression goldens of the greedy heuristic (``tests/golden/greedy/decisions.npz``), recorded
from the two-implementation heuristic of commit a64b2ee (``agents/greedy.py``'s Python scorers and
``agents/greedy_kernels.py``'s Numba port), before they were merged into ``bali_env/bots/greedy/``.

The file holds observations and masks of the player to move in 2 games of each of the 12
configurations (2-4 players, with and without the oracle and demon variants; greedy on one seat,
random players on the others), the final observation of each game and the drained-chilies farmer
choice (``tests/scenario.py``), and per row:

- ``best`` / ``scores``: the actions the Python scorer ranked best (within its 1e-9 tie tolerance;
  every legal action for a decision without a scorer) and its score of each action (-inf where it
  gave none); ``other_best`` / ``other_scores``: the same with the non-default weights ``OTHER``;
- ``batch_choice``: ``GreedyAgent(seed=0).act_batch(obs, masks)`` over all rows in one call;
- ``keys`` / ``keyed_choice`` / ``other_keyed_choice``: ``act_batch_keyed(obs, masks, keys)`` of
  ``GreedyAgent(seed=0)`` and ``GreedyAgent(seed=0, **OTHER)`` (what tournaments call);
- ``tournament_*``: the actions of a few ``bali_env.arena.play_games`` games (greedy against
  random, see ``TOURNAMENTS``), concatenated, with each game's length. Re-recorded alone when
  tournaments began to deal game k from ``deal_seed(seed, k)`` instead of ``seed + k`` (the
  other arrays kept), after checking that the old deals still gave the recorded actions.

The file was recorded from a checkout of that commit (the Python scorer no longer exists)::

    git worktree add /tmp/before a64b2ee   # or any copy of that commit
    python tests/golden/greedy/generate.py --code /tmp/before

After an intended change of the heuristic, record the current code (its scores and best sets then
come from its kernel, ``bali_env.bots.greedy.decide.greedy_scores``) and say why in the commit::

    python tests/golden/greedy/generate.py --code .
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "decisions.npz"
GAMES_PER_CONFIG = 2
#: non-default weights (every one different), to check the weights reach the scorers by name
OTHER = {"rival_weight": 0.7, "stone_high": 1.3, "stone_low": 0.15, "stone_mid": 0.6, "shrine_bonus": 2.0,
         "project": 0.5, "stone_complete": 2.5, "rival_stone": 0.3, "tempo": 0.4, "future_altar": 9.0,
         "discount": 0.35}
#: (num_players, oracle, demon, seed, games) of the recorded tournament games (greedy vs random)
TOURNAMENTS = ((2, False, False, 0, 6), (3, True, False, 1, 3), (4, True, True, 2, 4))


def collect() -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to move in every game (greedy, through ``act_batch``,
    on seat ``game % n``; random players elsewhere), each game's final observation of seat 0 and
    the drained-chilies farmer choice."""
    import bali_env
    from bali_env.bots.greedy import GreedyAgent
    from bali_env.bots.random_agent import RandomAgent
    from bali_env.envs.api_check import CONFIGURATIONS
    from scenario import drain_chilies_game

    observations, masks = [], []
    for config_index, (n, oracle, demon) in enumerate(CONFIGURATIONS):
        for game in range(GAMES_PER_CONFIG):
            seed = 1000 + 10 * config_index + game
            env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
            env.reset(seed=seed)
            greedy, rand = GreedyAgent(seed=seed), RandomAgent(seed=seed)
            while not all(env.terminations.values()):
                o = env.observe(env.agent_selection)
                observations.append(o["observation"])
                masks.append(o["action_mask"])
                if int(env.agent_selection.split("_")[1]) == game % n:
                    action = int(greedy.act_batch(o["observation"][None], o["action_mask"][None])[0])
                else:
                    action = rand.act(o["observation"], o["action_mask"])
                env.step(action)
            o = env.observe("player_0")
            observations.append(o["observation"])
            masks.append(o["action_mask"])
    g = drain_chilies_game()
    o = g.observe(g.to_move)
    observations.append(o["observation"])
    masks.append(o["action_mask"])
    return np.array(observations, dtype=np.float32), np.array(masks, dtype=np.int8)


def recorded_scores(obs: np.ndarray, masks: np.ndarray, **weights: float) -> tuple[np.ndarray, np.ndarray]:
    """The best sets (bool [N, N_ACTIONS]) and scores (-inf: none) of the recorded code: its Python
    scorer (``bali_env.bots.greedy._SCORERS``) if it has one, else its kernel (``greedy_scores``)."""
    import bali_env
    from bali_env.bots import greedy
    from bali_env.bots.greedy import GreedyAgent

    agent = GreedyAgent(seed=0, **weights)
    best = np.zeros(masks.shape, dtype=bool)
    scores = np.full(masks.shape, -np.inf)
    for i in range(len(obs)):
        legal = [int(a) for a in np.flatnonzero(masks[i])]
        if not legal:
            continue
        if hasattr(greedy, "_SCORERS"):  # the original Python heuristic
            view = bali_env.decode_observation(obs[i])
            scorer = greedy._SCORERS.get(view.decision)
            got = scorer(agent, agent._context(view), legal) if scorer is not None else {}
            scores[i, legal] = [got.get(a, -np.inf) for a in legal]
        else:
            from bali_env.bots.greedy.decide import greedy_scores
            from bali_env.bots.greedy.slots import new_workspace

            v, x, row, _ = new_workspace()
            greedy_scores(obs[i], masks[i], agent.params(), v, x, row)
            scores[i, legal] = row[legal]
        top = scores[i, legal].max()
        if len(legal) == 1 or top == -np.inf:  # act draws among every legal action
            best[i, legal] = True
        else:
            best[i, legal] = scores[i, legal] >= top - 1e-9
    return best, scores


def tournament_actions() -> tuple[np.ndarray, np.ndarray]:
    """The actions of the ``TOURNAMENTS`` games, concatenated, and the length of each game."""
    from bali_env.arena import play_games

    actions, lengths = [], []
    for n, oracle, demon, seed, games in TOURNAMENTS:
        specs = ["greedy"] + ["random"] * (n - 1)
        for record in play_games(specs, range(games), num_players=n, seed=seed, oracle=oracle, demon=demon,
                                 keep_actions=True):
            actions += list(record["actions"])
            lengths.append(len(record["actions"]))
    return np.array(actions, dtype=np.int16), np.array(lengths, dtype=np.int32)


def main(argv: list[str] | None = None) -> None:
    """Record the goldens from the code in ``--code`` (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", required=True, help="checkout whose agents/ and bali_env/ are recorded")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    sys.path[:0] = [str(Path(args.code).resolve()), str(HERE.parent.parent)]  # its code, then tests/scenario.py
    from bali_env.bots import greedy
    from bali_env.engine.seeds import decision_keys

    print(f"recording {greedy.__file__}")
    obs, masks = collect()
    from bali_env.bots.greedy import GreedyAgent

    keys = decision_keys(7, np.arange(len(obs)), np.zeros(len(obs)), np.arange(len(obs)))
    out = {"obs": obs, "masks": masks, "keys": keys,
           "batch_choice": GreedyAgent(seed=0).act_batch(obs, masks),
           "keyed_choice": GreedyAgent(seed=0).act_batch_keyed(obs, masks, keys),
           "other_keyed_choice": GreedyAgent(seed=0, **OTHER).act_batch_keyed(obs, masks, keys)}
    out["tournament_actions"], out["tournament_lengths"] = tournament_actions()
    out["best"], out["scores"] = recorded_scores(obs, masks)
    out["other_best"], out["other_scores"] = recorded_scores(obs, masks, **OTHER)
    np.savez_compressed(args.out, **out)
    print(f"{len(obs)} decisions, {len(out['tournament_lengths'])} tournament games -> {args.out} "
          f"({Path(args.out).stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
