"""The ``bali`` command line: ``bali bench`` (speed benchmarks against the anchors) and
``bali demo`` (play seeded random games and print the final table)."""

from __future__ import annotations

import argparse
import sys


def _demo(argv: list[str]) -> int:
    """Play random games through the AEC env and print the last table and the win counts."""
    import numpy as np

    import bali_env

    parser = argparse.ArgumentParser(prog="bali demo", description="Play seeded random games through the AEC env.")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--oracle", action="store_true")
    parser.add_argument("--demon", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    env = bali_env.env(num_players=args.players, oracle=args.oracle, demon=args.demon, render_mode="ansi")
    rng = np.random.default_rng(args.seed)
    wins = np.zeros(args.players)
    steps = 0
    for g in range(args.games):
        env.reset(seed=args.seed + g)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            steps += action is not None
            if term and "winners" in info and agent == env.possible_agents[0]:
                for q in info["winners"]:
                    wins[q] += 1 / len(info["winners"])
                final = env.render()
            env.step(action)
    print(final)
    print(f"\n{args.games} random games, {steps} decisions; wins by seat: "
          + ", ".join(f"player_{q} {w:g}" for q, w in enumerate(wins)))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bali`` command."""
    argv = sys.argv[1:] if argv is None else argv
    commands = {"bench": "speed benchmarks vs PettingZoo/OpenSpiel anchors", "demo": "play seeded random games"}
    if not argv or argv[0] not in commands:
        print("usage: bali {" + ",".join(commands) + "} [options]\n")
        for name, text in commands.items():
            print(f"  {name:<8}{text}")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    if argv[0] == "bench":
        from benchmarks.run import main as bench_main

        bench_main(argv[1:])
        return 0
    return _demo(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
