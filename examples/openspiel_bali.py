"""OpenSpiel's own algorithms on Bali (``python_bali``): its information-set MCTS bot against a
random player, and its PyTorch DQN agent trained through its RL environment against a random
player, each measured with a 95% Wilson interval on seat-alternated 2-player games.

    pip install torch==2.13.0 && pip install -e ".[openspiel,train]"
    python examples/openspiel_bali.py --games 100 --sims 20 --episodes 6000

Everything here is OpenSpiel's: ``pyspiel.load_game``, ``open_spiel.python.algorithms.ismcts``
(the search resamples hidden cards with the game's ``resample_from_infostate``, which is the
engine's ``determinize``), ``open_spiel.python.rl_environment`` and
``open_spiel.python.pytorch.dqn``; bali-env only registers the game (``import
bali_env.envs.openspiel``). Chance is explicit: the ISMCTS games are played in a loop that takes
game k's deal and draws from ``SeededChance`` (the game ``bali_env.env().reset(seed=deal_seed(seed,
k))`` deals), the RL environment draws them from its sampler seeded with ``--seed``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pyspiel
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import ismcts, mcts, random_agent

from bali_env.engine.seeds import deal_seed
from bali_env.envs.openspiel import SeededChance  # importing it registers python_bali


def wilson(wins: float, games: int) -> tuple[float, float]:
    """The 95% Wilson interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    z, p = 1.959964, wins / games
    mid = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return mid - half, mid + half


def ismcts_against_random(games: int, sims: int, seed: int) -> float:
    """OpenSpiel's ISMCTS (``sims`` simulations, random rollouts) against a random player; its
    win rate (a shared win counts half), seats alternating. Its Python bot has no ``restart_at``
    (``pyspiel.evaluate_bots`` cannot drive it): a loop plays, chance from ``SeededChance``."""
    game = pyspiel.load_game("python_bali", {"players": 2})
    rollouts = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(seed))
    bot = ismcts.ISMCTSBot(game=game, uct_c=1.5, max_simulations=sims, random_state=np.random.RandomState(seed),
                           evaluator=rollouts)
    rng, wins = np.random.default_rng(seed), 0.0
    for g in range(games):
        state, me, chance = game.new_initial_state(), g % 2, SeededChance(2, seed=deal_seed(seed, g))
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(chance(state))
            elif state.current_player() == me:
                state.apply_action(bot.step(state))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
        returns = state.returns()
        wins += 1.0 if returns[me] > 0 and returns[1 - me] < 0 else 0.5 if returns[me] > 0 else 0.0
    return wins


def dqn_against_random(episodes: int, games: int, seed: int) -> float:
    """OpenSpiel's PyTorch DQN trained for ``episodes`` games through ``rl_environment`` against a
    random player (seats alternating), then its greedy policy's win rate over ``games``."""
    from open_spiel.python.pytorch import dqn

    env = rl_environment.Environment(pyspiel.load_game("python_bali", {"players": 2}),
                                     chance_event_sampler=rl_environment.ChanceEventSampler(seed=seed))
    size = env.observation_spec()["info_state"][0]
    learner = dqn.DQN(player_id=0, state_representation_size=size, num_actions=44, hidden_layers_sizes=[128, 128],
                      replay_buffer_capacity=50_000, batch_size=64, learning_rate=1e-3, optimizer_str="adam",
                      epsilon_decay_duration=max(1, episodes * 60), min_buffer_size_to_learn=1000, seed=seed)
    np.random.seed(seed)  # OpenSpiel's random agent draws from NumPy's global generator
    wins = 0.0
    for episode in range(episodes + games):
        evaluating, me = episode >= episodes, episode % 2
        learner.player_id = me
        opponent = random_agent.RandomAgent(player_id=1 - me, num_actions=44)
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            agent = learner if player == me else opponent
            time_step = env.step([agent.step(time_step, is_evaluation=evaluating).action])
        learner.step(time_step, is_evaluation=evaluating)
        if evaluating:
            wins += 1.0 if time_step.rewards[me] > 0 and time_step.rewards[1 - me] < 0 else \
                0.5 if time_step.rewards[me] > 0 else 0.0
    return wins


def main() -> None:
    """Run both and print their win rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="evaluation games of each (default 40)")
    parser.add_argument("--sims", type=int, default=30, help="ISMCTS simulations a move (default 30)")
    parser.add_argument("--episodes", type=int, default=6000, help="DQN training games (default 6000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the results as JSON here")
    args = parser.parse_args()
    runs = {}
    for name, run in (("ISMCTS", lambda: ismcts_against_random(args.games, args.sims, args.seed)),
                      ("DQN", lambda: dqn_against_random(args.episodes, args.games, args.seed))):
        start = time.perf_counter()
        wins = run()
        lo, hi = wilson(wins, args.games)
        seconds = round(time.perf_counter() - start)
        runs[name] = {"against": "random", "wins": wins, "games": args.games, "seconds": seconds}
        print(f"{name} against random: {100 * wins / args.games:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] of "
              f"{args.games} games ({seconds} s)")
    if args.out:
        import json

        from bali_env.files import write_text

        write_text(args.out, json.dumps({"command": "python examples/openspiel_bali.py " + " ".join(
            f"--{k} {v}" for k, v in (("games", args.games), ("sims", args.sims), ("episodes", args.episodes),
                                      ("seed", args.seed))), "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
