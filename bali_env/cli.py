"""The ``bali`` command line: ``bali tournament`` (seat-rotated tournaments between agents, with
ratings), ``bali train`` (MaskablePPO with self-play), ``bali bench`` (speed benchmarks against
the anchors) and ``bali demo`` (play seeded random games and print the final table)."""

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


def _tournament(argv: list[str]) -> int:
    """Run ``agents.tournament.run_tournament`` from the command line; exit code 2 on a bad setup."""
    from pathlib import Path

    import shlex
    import time

    from agents.tournament import (
        DEFAULT_BATCH_SIZE,
        TournamentError,
        TournamentFailed,
        TournamentInterrupted,
        run_tournament,
    )

    parser = argparse.ArgumentParser(
        prog="bali tournament",
        description="Seat-rotated tournament between agents on the batched environment: win rates with 95% "
                    "intervals, mean score and rank, OpenSkill ratings. Game k is dealt from seed SEED + k.",
    )
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="participants, e.g. random greedy mcts:sims=200 sb3:model.zip; repeat a spec to field "
                             "it several times (greedy random random random)")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4), help="seats per game (default 4)")
    parser.add_argument("--games", type=int, default=1000,
                        help="games, rounded up to whole seat rotations (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="game k is dealt from seed SEED + k (default 0)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2; 1 = in-process)")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE,
                        help=f"games stepped together per worker (default {DEFAULT_BATCH_SIZE})")
    parser.add_argument("--oracle", action="store_true", help="play the Oracle variant")
    parser.add_argument("--demon", action="store_true", help="play the Demon variant")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder for the journal, results.json/.csv and ratings.png (default: a new "
                             "timestamped folder in results/tournament/; an --out holding an earlier run is "
                             "replaced, unless --resume)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the interrupted run in --out: play only the games its journal lacks")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--save-records", action="store_true", help="also save every game as a record in OUT/records/")
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="local: worker processes on this machine (default); ray: chunks of games as Ray tasks "
                             "(a local Ray instance of --workers CPUs, or the cluster at --ray-address)")
    parser.add_argument("--ray-address", default=None, metavar="HOST:PORT",
                        help="with --backend ray: join this Ray cluster (or 'auto') instead of starting one")
    parser.add_argument("--chunk-size", type=int, default=None, metavar="K",
                        help="with --backend ray: games per Ray task (default: about 8 chunks per CPU)")
    args = parser.parse_args(argv)
    if args.resume and args.out is None:
        parser.error("--resume needs --out, the folder of the run to continue")
    if args.out is None:
        args.out = Path("results/tournament") / time.strftime("%Y%m%d-%H%M%S")
        print(f"writing to {args.out}", file=sys.stderr)
    try:
        result = run_tournament(args.agents, num_players=args.players, games=args.games, seed=args.seed,
                                workers=args.workers, oracle=args.oracle, demon=args.demon, out_dir=args.out,
                                progress=not args.no_progress, batch_size=args.batch_size,
                                save_records=args.save_records, resume=args.resume, backend=args.backend,
                                ray_address=args.ray_address, chunk_size=args.chunk_size)
    except TournamentError as exc:
        print(f"bali tournament: error: {exc}", file=sys.stderr)
        return 2
    except (TournamentInterrupted, TournamentFailed) as exc:
        again = ["tournament", *(a for a in argv if a != "--resume")]
        if "--out" not in again:
            again += ["--out", str(args.out)]
        lines = str(exc).strip().splitlines() or [""]
        what = "interrupted" if isinstance(exc, TournamentInterrupted) else \
            "error: " + lines[0] + (f" ({lines[-1].strip()})" if len(lines) > 1 else "")
        print(f"\nbali tournament: {what}; {exc.finished} of {exc.total} games are in {exc.journal}; "
              f"continue with:\n  bali {shlex.join(again)} --resume", file=sys.stderr)
        return 130 if isinstance(exc, TournamentInterrupted) else 1
    print(result.table())
    written = [args.out / name for name in ("results.json", "results.csv", "ratings.png", "records", "journal.jsonl")]
    print("\nwrote " + ", ".join(str(p) for p in written if p.exists()))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bali`` command."""
    argv = sys.argv[1:] if argv is None else argv
    commands = {
        "tournament": "seat-rotated tournament between agents (win rates, ratings)",
        "replay": "step through a saved game record (forward/back, optionally one player's view)",
        "train": "train an agent with MaskablePPO and self-play (train extra; --framework rllib: the rllib extra)",
        "bench": "speed benchmarks vs PettingZoo/OpenSpiel anchors",
        "demo": "play seeded random games",
        "play": "play a game in the terminal against bots",
    }
    if argv and argv[0] == "--version":
        from . import __version__

        print(f"bali-env {__version__}")
        return 0
    if not argv or argv[0] not in commands:
        asked = bool(argv) and argv[0] in ("-h", "--help")
        out = sys.stdout if asked else sys.stderr
        if argv and not asked:
            print(f"bali: unknown command {argv[0]!r}\n", file=out)
        print("usage: bali {" + ",".join(commands) + "} [options]   (bali COMMAND --help for its options)\n", file=out)
        for name, text in commands.items():
            print(f"  {name:<12}{text}", file=out)
        print("  --version   print the version", file=out)
        return 0 if asked else 2
    try:
        return _run(argv)
    except KeyboardInterrupt:
        print(f"\nbali {argv[0]}: interrupted", file=sys.stderr)
        return 130


def _run(argv: list[str]) -> int:
    """Run the command ``argv[0]`` with its arguments."""
    if argv[0] == "bench":
        from benchmarks.run import main as bench_main

        bench_main(argv[1:])
        return 0
    if argv[0] == "play":
        from .play import main as play_main

        return play_main(argv[1:])
    if argv[0] == "tournament":
        return _tournament(argv[1:])
    if argv[0] == "replay":
        from .replay import run

        return run(argv[1:])
    if argv[0] == "train":
        from training.train import main as train_main

        return train_main(argv[1:])
    return _demo(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
