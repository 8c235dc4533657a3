"""The ``bali`` command line: ``bali tournament`` (seat-rotated tournaments between agents, with
ratings), ``bali league`` (every pair, and the free-for-all, in one folder), ``bali train``
(MaskablePPO with self-play), ``bali bench`` (speed benchmarks against the anchors), ``bali play``
(a game in the terminal against bots), ``bali replay`` (step through a saved game, or write it as
a web page or an animation), ``bali serve`` (the web app: play in the browser, browse results)
and ``bali demo`` (play seeded random games and print the final table).

The entry point of every floor, so the one module of ``bali_env`` that imports the floors above
it (``agents``, ``training``, ``benchmarks``), each on use. Every command checks all its
arguments before it prints or creates anything (exit 2 on a bad one) and exits 130 when
interrupted (Ctrl-C or SIGTERM). ``parse_command`` parses a command line without running it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _demo_parser() -> argparse.ArgumentParser:
    """The options of ``bali demo``."""
    parser = argparse.ArgumentParser(prog="bali demo", description="Play seeded random games through the AEC env.")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4), help="seats per game (default 4)")
    parser.add_argument("--games", type=int, default=20, help="games to play (default 20)")
    parser.add_argument("--oracle", action="store_true", help="play the Oracle variant")
    parser.add_argument("--demon", action="store_true", help="play the Demon variant")
    parser.add_argument("--seed", type=int, default=0, help="game k is dealt from seed SEED + k (default 0)")
    return parser


def _demo(argv: list[str]) -> int:
    """Play random games through the AEC env and print the last table and the win counts."""
    import numpy as np

    import bali_env

    parser = _demo_parser()
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    if args.seed < 0:
        parser.error(f"--seed must be 0 or more, got {args.seed}")
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


def _tournament_parser() -> argparse.ArgumentParser:
    """The options of ``bali tournament``."""
    from bali_env.arena import DEFAULT_BATCH_SIZE

    parser = argparse.ArgumentParser(
        prog="bali tournament",
        description="Seat-rotated tournament between agents on the batched environment: win rates with 95% "
                    "intervals, mean score and rank, ratings fitted to all games. Game k is dealt from seed SEED + k.",
    )
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="participants, e.g. random greedy mcts:sims=200 ppo sb3:model.zip mybot.py:MyBot "
                             "'cmd:python3 bot.py' (a program speaking the bot protocol, quoted as one argument); "
                             "repeat a spec to field it several times (greedy random random random)")
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
                             "folder results/tournament/<date-time>, with a -N suffix when another run took that "
                             "name; an --out holding an earlier run is replaced, unless --resume)")
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
    parser.add_argument("--move-time", type=float, default=None, metavar="SECONDS",
                        help="the clock: seconds per decision for every agent (cmd: bots 10 unless set); a bot over "
                             "it loses the game")
    parser.add_argument("--game-time", type=float, default=None, metavar="SECONDS",
                        help="the clock: seconds per game for every agent (default: no budget)")
    return parser


def _tournament(argv: list[str]) -> int:
    """Run ``bali_env.arena.run_tournament`` from the command line: every argument is checked
    before anything is printed or created (exit 2 on a bad one); 130 when interrupted."""
    import shlex

    from bali_env.arena import (
        TournamentError,
        TournamentFailed,
        TournamentInterrupted,
        check_tournament,
        run_tournament,
    )

    parser = _tournament_parser()
    args = parser.parse_args(argv)
    if args.resume and args.out is None:
        parser.error("--resume needs --out, the folder of the run to continue")
    settings = {"num_players": args.players, "games": args.games, "seed": args.seed, "workers": args.workers,
                "batch_size": args.batch_size, "save_records": args.save_records, "resume": args.resume,
                "backend": args.backend, "ray_address": args.ray_address, "chunk_size": args.chunk_size,
                "move_time": args.move_time, "game_time": args.game_time}
    try:
        check_tournament(args.agents, out_dir=args.out if args.out is not None else Path("results/tournament"),
                         **settings)
        if args.out is None:
            from bali_env.files import new_output_dir

            args.out = new_output_dir("results/tournament")
            print(f"writing to {args.out}", file=sys.stderr)
        result = run_tournament(args.agents, oracle=args.oracle, demon=args.demon, out_dir=args.out,
                                progress=not args.no_progress, **settings)
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
    written = [args.out / name for name in ("results.json", "results.csv", "ratings.png", "index.html", "timing.json",
                                            "records", "replays", "logs", "journal.jsonl")]
    print("\nwrote " + ", ".join(str(p) for p in written if p.exists()))
    return 0


def _league_parser() -> argparse.ArgumentParser:
    """The options of ``bali league``."""
    parser = argparse.ArgumentParser(
        prog="bali league",
        description="Every pair of the agents in 2-player matches, plus the free-for-all in 3 and 4 players: the "
                    "pairwise win-rate matrix with intervals (a heat map), ratings fitted to all games, one folder.")
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="the participants (any agent spec, e.g. ppo mcts greedy random 'cmd:python3 bot.py')")
    parser.add_argument("--games", type=int, default=200,
                        help="games per part (each pair, each free-for-all; rounded up to whole rotations; "
                             "default 200)")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4], choices=(2, 3, 4),
                        help="the parts: 2 = every pair, 3 and 4 = the free-for-all at that size when there are "
                             "enough agents (default 2 3 4)")
    parser.add_argument("--seed", type=int, default=0, help="game k of every part is dealt from seed SEED + k")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--oracle", action="store_true", help="play the Oracle variant")
    parser.add_argument("--demon", action="store_true", help="play the Demon variant")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: a new folder results/league/<date-time>)")
    parser.add_argument("--resume", action="store_true", help="continue the interrupted league in --out")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--move-time", type=float, default=None, metavar="SECONDS",
                        help="the clock: seconds per decision for every agent")
    parser.add_argument("--game-time", type=float, default=None, metavar="SECONDS",
                        help="the clock: seconds per game for every agent")
    return parser


def _league(argv: list[str]) -> int:
    """Run ``bali_env.arena.league.run_league`` from the command line (exit 2 on a bad
    argument, before anything is played; 130 when interrupted: continue with ``--resume``)."""
    from bali_env.arena import TournamentError, TournamentFailed, TournamentInterrupted
    from bali_env.arena.league import run_league

    parser = _league_parser()
    args = parser.parse_args(argv)
    if args.resume and args.out is None:
        parser.error("--resume needs --out, the folder of the league to continue")
    try:
        if args.out is None:
            from bali_env.arena.checks import check_out_dir

            check_out_dir(Path("results/league"))
        out = args.out
        if out is None:
            from bali_env.files import new_output_dir

            out = new_output_dir("results/league")
            print(f"writing to {out}", file=sys.stderr)
        result = run_league(args.agents, games=args.games, seed=args.seed, workers=args.workers, out_dir=out,
                            sizes=tuple(sorted(set(args.players))), oracle=args.oracle, demon=args.demon,
                            progress=not args.no_progress, resume=args.resume, move_time=args.move_time,
                            game_time=args.game_time)
    except TournamentError as exc:
        print(f"bali league: error: {exc}", file=sys.stderr)
        return 2
    except (TournamentInterrupted, TournamentFailed) as exc:
        what = "interrupted" if isinstance(exc, TournamentInterrupted) else f"error: {str(exc).splitlines()[0]}"
        print(f"\nbali league: {what}; continue with --out {out} --resume", file=sys.stderr)
        return 130 if isinstance(exc, TournamentInterrupted) else 1
    print(result.table())
    print(f"\nwrote {out / 'league.json'}, {out / 'league.png'}, {out / 'index.html'} and a folder per part")
    return 0


COMMANDS = {
    "tournament": "seat-rotated tournament between agents (win rates, ratings)",
    "league": "every pair in 2-player matches plus the free-for-all: win-rate matrix, ratings",
    "replay": "step through a saved game record, or write it as a web page (--html) or a GIF (--gif)",
    "train": "train an agent with MaskablePPO and self-play (train extra; --framework rllib: the rllib extra)",
    "exploit": "train a best response against an agent: how far a learner gets against it (train extra)",
    "fit-value": "give an exported policy a value head from its own games (for ppo+search; train extra)",
    "distil": "fit an exported policy to what ppo+search plays from its positions (train extra)",
    "bench": "speed benchmarks vs PettingZoo/OpenSpiel anchors",
    "demo": "play seeded random games",
    "play": "play a game in the terminal against bots",
    "serve": "play in the browser against bots and browse results (web extra)",
}  #: the ``bali`` commands and what each does


def command_parser(command: str, argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``bali COMMAND`` (``argv``: the command's arguments, for a command
    whose options depend on one of them, as ``bali train --framework rllib``). ValueError for
    an unknown command."""
    if command == "tournament":
        return _tournament_parser()
    if command == "league":
        return _league_parser()
    if command == "demo":
        return _demo_parser()
    if command == "play":
        from bali_env.apps.terminal import make_parser
    elif command == "serve":
        from bali_env.apps.web.serve import make_parser
    elif command == "replay":
        from .replay import make_parser
    elif command == "bench":
        from bali_env.bench.run import make_parser
    elif command == "train":
        from bali_env.training.train import make_parser

        return make_parser(argv or [])
    elif command == "exploit":
        from bali_env.training.exploit import make_parser
    elif command == "fit-value":
        from bali_env.training.value import make_parser
    elif command == "distil":
        from bali_env.training.distil import make_parser
    else:
        raise ValueError(f"unknown command {command!r}; known: {', '.join(COMMANDS)}")
    return make_parser()


def parse_command(argv: list[str]) -> argparse.Namespace:
    """Parse a ``bali`` command line (``["tournament", "--agents", ...]``) without running it:
    the namespace its command would run with; SystemExit(2) from argparse for a bad option,
    ValueError for an unknown command. Used to check every command the docs show."""
    if not argv:
        raise ValueError("no command")
    return command_parser(argv[0], argv[1:]).parse_args(argv[1:])


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bali`` command."""
    argv = sys.argv[1:] if argv is None else argv
    commands = COMMANDS
    if argv and argv[0] == "--version":
        from bali_env import __version__

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
        _interrupt_on_sigterm()
        return _run(argv)
    except KeyboardInterrupt:
        print(f"\nbali {argv[0]}: interrupted", file=sys.stderr)
        return 130


def _interrupt_on_sigterm() -> None:
    """SIGTERM stops a command as Ctrl-C does (KeyboardInterrupt: its clean stop, then exit 130)."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def _run(argv: list[str]) -> int:
    """Run the command ``argv[0]`` with its arguments."""
    if argv[0] == "bench":
        from bali_env.bench.run import main as bench_main

        bench_main(argv[1:])
        return 0
    if argv[0] == "play":
        from bali_env.apps.terminal import main as play_main

        return play_main(argv[1:])
    if argv[0] == "tournament":
        return _tournament(argv[1:])
    if argv[0] == "league":
        return _league(argv[1:])
    if argv[0] == "serve":
        from bali_env.apps.web.serve import main as serve_main

        return serve_main(argv[1:])
    if argv[0] == "replay":
        from .replay import run

        return run(argv[1:])
    if argv[0] == "train":
        from bali_env.training.train import main as train_main

        return train_main(argv[1:])
    if argv[0] == "exploit":
        from bali_env.training.exploit import main as exploit_main

        return exploit_main(argv[1:])
    if argv[0] == "fit-value":
        from bali_env.training.value import main as value_main

        return value_main(argv[1:])
    if argv[0] == "distil":
        from bali_env.training.distil import main as distil_main

        return distil_main(argv[1:])
    return _demo(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
