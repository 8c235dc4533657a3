"""The ``bali`` command line: one ``argparse`` parser with a subcommand per job: ``bali tournament``
(seat-rotated tournaments between agents, with ratings), ``bali league`` (every pair, and the
free-for-all, in one folder), ``bali train`` (MaskablePPO with self-play; ``--framework rllib``:
RLlib), ``bali exploit``, ``bali fit-value`` and ``bali distil`` (the commands around training),
``bali bench`` (speed benchmarks against the anchors), ``bali play`` (a game in the terminal
against bots), ``bali replay`` (step through a saved game, or write it as a web page or an
animation), ``bali serve`` (the web app: play in the browser, browse results) and ``bali demo``
(play seeded random games and print the final table). ``bali --help`` lists them, ``bali COMMAND
--help`` gives a command's options.

The flags several commands take (``--seed``, ``--games``, ``--players``, ``--oracle``/``--demon``,
``--out``, ``--workers``, ``--move-time``/``--game-time``, ``--progress``/``--no-progress``) are
declared once, as parent parsers in ``bali_env.flags``, and mean the same in every command.
A command's own flags live next to the code they configure: its module has ``parents()`` (the
shared flags it takes), ``add_arguments(parser)`` (its own) and ``run(args) -> int``; ``commands``
puts them together here (the commands of the arena, ``tournament`` and ``league``, and ``demo``
have theirs in this module).

The entry point of every floor, so the one module of ``bali_env`` that imports the rooms above
the environment (``arena``, ``training``, ``bench``, ``apps``), each when the parser is built
(none of them imports torch, Ray, matplotlib or Starlette to do it). Every command checks all its
arguments before it prints or creates anything (exit 2 on a bad one: the line that matters and a
pointer to its help, ``flags.Parser``), exits 130 when interrupted (Ctrl-C or SIGTERM), and 141
without a traceback when its output is cut short (``bali replay GAME --all | head``: a broken
pipe, the exit status a shell gives a program stopped by SIGPIPE). Every command that writes an
output folder follows one rule for ``--out`` (``bali_env.files.check_out_folder``: a finished run
is never replaced without ``--overwrite``). ``parse_command`` parses a command line without
running it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bali_env import flags
from bali_env.flags import UsageError


@dataclass(frozen=True)
class Command:
    """One ``bali`` subcommand: its line in ``bali --help``, the shared flags it takes (parent
    parsers, ``bali_env.flags``), the function that adds its own flags, and what runs it."""

    help: str
    parents: Callable[[], list[argparse.ArgumentParser]]
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# ---------------------------------------------------------------------------------------- demo
def _demo_parents() -> list[argparse.ArgumentParser]:
    return [flags.players(4), flags.games(20), flags.variants(),
            flags.seed(0, "the deals and the random moves: game k is dealt by reset(seed=SEED + k)")]


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    """``bali demo`` has no flags of its own."""
    parser.description = "Play seeded random games through the AEC env."


def _demo(args: argparse.Namespace) -> int:
    """Play random games through the AEC env and print the last table and the win counts."""
    if args.games < 1:
        raise UsageError(f"--games must be at least 1, got {args.games}")
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {args.seed}")
    import numpy as np

    from bali_env.envs.bali_v0 import env as make_env

    env = make_env(num_players=args.players, oracle=args.oracle, demon=args.demon, render_mode="ansi")
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


# ---------------------------------------------------------------------------------------- resuming
def _resume_argument(parser: argparse.ArgumentParser, what: str, how: str) -> None:
    """``--resume [OUT]``: continue the interrupted ``what`` in OUT, as ``bali train --resume OUT``
    does (or in ``--out`` when OUT is left out)."""
    parser.add_argument("--resume", nargs="?", const=True, default=False, metavar="OUT",
                        help=f"continue the interrupted {what} in OUT (or in --out): {how}")


def _resume_folder(args: argparse.Namespace, what: str) -> None:
    """``--resume OUT`` as ``--out OUT --resume``; UsageError when there is no folder to resume."""
    if isinstance(args.resume, str):
        if args.out is not None and Path(args.out) != Path(args.resume):
            raise UsageError(f"--resume {args.resume} and --out {args.out} name two folders: give one")
        args.out, args.resume = Path(args.resume), True
    if args.resume and args.out is None:
        raise UsageError(f"--resume needs the folder of the {what} to continue: --resume OUT")


def _again(command: str, argv: Sequence[str], out: Path) -> list[str]:
    """The command line that continues an interrupted run: its arguments, ``--resume OUT`` in
    place of its ``--out`` and ``--resume``."""
    kept: list[str] = []
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg in ("--resume", "--out"):
            skip = i + 1 < len(argv) and not argv[i + 1].startswith("-")  # their folder
        elif not arg.startswith(("--resume=", "--out=")):
            kept.append(arg)
    return [command, *kept, "--resume", str(out)]


# ---------------------------------------------------------------------------------------- tournament
def _tournament_parents() -> list[argparse.ArgumentParser]:
    from bali_env.arena import TournamentSettings

    default = TournamentSettings()  # the defaults, declared once
    return [flags.players(default.game.num_players),
            flags.games(default.games, "games, rounded up to whole seat rotations"),
            flags.seed(default.seed), flags.workers(default.workers), flags.variants(),
            flags.out("output folder for the journal, results.json/.csv and ratings.png (default: a new folder "
                      "results/tournament/<date-time>, with a -N suffix when another run took that name; an --out "
                      "holding an earlier run is refused: --resume OUT continues it, --overwrite replaces it)"),
            flags.overwrite("tournament"), flags.progress(), flags.clock()]


def _tournament_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bali tournament`` besides the shared ones."""
    from bali_env.arena import BACKENDS, TournamentSettings

    default = TournamentSettings()  # the defaults, declared once
    parser.description = ("Seat-rotated tournament between agents on the batched environment: win rates with 95% "
                          "intervals, mean score and rank, ratings fitted to all games. Game k is dealt from SEED "
                          "and k hashed together (deal_seed), the same deal whatever the workers or the batch.")
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="participants, e.g. random greedy mcts:sims=200 ppo sb3:model.zip mybot.py:MyBot "
                             "'cmd:python3 bot.py' (a program speaking the bot protocol, quoted as one argument); "
                             "repeat a spec to field it several times (greedy random random random)")
    parser.add_argument("--batch-size", type=int, default=default.batch_size,
                        help=f"games stepped together per worker (default {default.batch_size})")
    _resume_argument(parser, "run", "play only the games its journal lacks")
    parser.add_argument("--save-records", action="store_true", help="also save every game as a record in OUT/records/")
    parser.add_argument("--backend", choices=BACKENDS, default=default.backend,
                        help="local: worker processes on this machine (default); ray: chunks of games as Ray tasks "
                             "(a local Ray instance of --workers CPUs, or the cluster at --ray-address)")
    parser.add_argument("--ray-address", default=None, metavar="HOST:PORT",
                        help="with --backend ray: join this Ray cluster (or 'auto') instead of starting one")
    parser.add_argument("--chunk-size", type=int, default=None, metavar="K",
                        help="with --backend ray: games per Ray task (default: about 8 chunks per CPU)")


def _tournament(args: argparse.Namespace) -> int:
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

    _resume_folder(args, "run")
    settings = {"num_players": args.players, "games": args.games, "seed": args.seed, "workers": args.workers,
                "batch_size": args.batch_size, "save_records": args.save_records, "resume": args.resume,
                "backend": args.backend, "ray_address": args.ray_address, "chunk_size": args.chunk_size,
                "move_time": args.move_time, "game_time": args.game_time, "overwrite": args.overwrite}
    try:
        check_tournament(args.agents, out_dir=args.out if args.out is not None else Path("results/tournament"),
                         **settings)
        if args.out is None:
            from bali_env.files import new_output_dir

            args.out = new_output_dir("results/tournament")
            print(f"writing to {args.out}", file=sys.stderr)
        result = run_tournament(args.agents, oracle=args.oracle, demon=args.demon, out_dir=args.out,
                                progress=args.progress, **settings)
    except TournamentError as exc:
        print(f"bali tournament: error: {exc}", file=sys.stderr)
        return 2
    except (TournamentInterrupted, TournamentFailed) as exc:
        again = _again("tournament", args.argv, args.out)
        lines = str(exc).strip().splitlines() or [""]
        what = "interrupted" if isinstance(exc, TournamentInterrupted) else \
            "error: " + lines[0] + (f" ({lines[-1].strip()})" if len(lines) > 1 else "")
        print(f"\nbali tournament: {what}; {exc.finished} of {exc.total} games are in {exc.journal}; "
              f"continue with:\n  bali {shlex.join(again)}", file=sys.stderr)
        return 130 if isinstance(exc, TournamentInterrupted) else 1
    print(result.table())
    crash = result.first_crash()
    if crash is not None:  # an in-process agent raised: what and where, not only a count in the table
        print(f"\nbali tournament: {crash}", file=sys.stderr)
    written = [args.out / name for name in ("results.json", "results.csv", "ratings.png", "index.html", "timing.json",
                                            "records", "replays", "logs", "journal.jsonl")]
    print("\nwrote " + ", ".join(str(p) for p in written if p.exists()))
    return 0


# ---------------------------------------------------------------------------------------- league
def _league_parents() -> list[argparse.ArgumentParser]:
    from bali_env.arena import LeagueSettings

    default = LeagueSettings()  # the defaults, declared once
    return [flags.games(default.games, "games per part (each pair, each free-for-all; rounded up to whole rotations)"),
            flags.players(list(default.sizes), many=True, detail="the parts: 2 = every pair, 3 and 4 = the "
                          "free-for-all at that size when there are enough agents"),
            flags.seed(default.seed, "the deals: game k of every part is dealt from SEED and k hashed together "
                       "(deal_seed)"),
            flags.workers(default.workers),
            flags.variants(), flags.out("output folder (default: a new folder results/league/<date-time>; an --out "
                                        "holding an earlier league is refused: --resume OUT continues it, "
                                        "--overwrite replaces it)"),
            flags.overwrite("league"), flags.progress(), flags.clock()]


def _league_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bali league`` besides the shared ones."""
    parser.description = ("Every pair of the agents in 2-player matches, plus the free-for-all in 3 and 4 players: "
                          "the pairwise win-rate matrix with intervals (a heat map), ratings fitted to all games, "
                          "one folder.")
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="the participants (any agent spec, e.g. ppo mcts greedy random 'cmd:python3 bot.py')")
    _resume_argument(parser, "league", "part by part")


def _league(args: argparse.Namespace) -> int:
    """Run ``bali_env.arena.league.run_league`` from the command line (exit 2 on a bad
    argument, before anything is played; 130 when interrupted: continue with ``--resume``)."""
    from bali_env.arena import TournamentError, TournamentFailed, TournamentInterrupted
    from bali_env.arena.league import run_league

    _resume_folder(args, "league")
    folders: list[Path] = []  # the league's folder, once made (every check passed first: nothing made otherwise)
    try:
        result = run_league(args.agents, games=args.games, seed=args.seed, workers=args.workers, out_dir=args.out,
                            sizes=tuple(sorted(set(args.players))), oracle=args.oracle, demon=args.demon,
                            progress=args.progress, resume=args.resume, move_time=args.move_time,
                            game_time=args.game_time, overwrite=args.overwrite, out_parent="results/league",
                            on_folder=folders.append)
    except TournamentError as exc:
        print(f"bali league: error: {exc}", file=sys.stderr)
        return 2
    except (TournamentInterrupted, TournamentFailed) as exc:
        what = "interrupted" if isinstance(exc, TournamentInterrupted) else f"error: {str(exc).splitlines()[0]}"
        out = args.out or (folders[0] if folders else None)
        print(f"\nbali league: {what}; continue with --resume {out}", file=sys.stderr)
        return 130 if isinstance(exc, TournamentInterrupted) else 1
    print(result.table())
    out = result.out_dir
    print(f"\nwrote {out / 'league.json'}, {out / 'league.png'}, {out / 'index.html'} and a folder per part")
    return 0


# ---------------------------------------------------------------------------------------- the parser
def commands(argv: Sequence[str] | None = None) -> dict[str, Command]:
    """The ``bali`` commands by name, in the order ``bali --help`` lists them. ``argv``, the
    command line to parse, picks ``bali train``'s trainer: ``train --framework rllib`` has RLlib's
    flags (``bali_env.trainers.rllib.launch``)."""
    from bali_env.apps import replay, terminal
    from bali_env.apps.web import serve
    from bali_env.speed import run as bench
    from bali_env.trainers.exploitability import exploit
    from bali_env.trainers.finetune import distil
    from bali_env.trainers.finetune import fit_value as value
    from bali_env.trainers.ppo_selfplay import train
    from bali_env.trainers.alphazero import command as az
    from bali_env.trainers.league_training import league_command as league_train

    argv = list(argv or [])
    framework = train.framework(argv[1:]) if argv[:1] == ["train"] else "sb3"
    return {
        "tournament": Command("seat-rotated tournament between agents (win rates, ratings)", _tournament_parents,
                              _tournament_arguments, _tournament),
        "league": Command("every pair in 2-player matches plus the free-for-all: win-rate matrix, ratings",
                          _league_parents, _league_arguments, _league),
        "replay": Command("step through a saved game record, or write it as a web page (--html) or a GIF (--gif)",
                          replay.parents, replay.add_arguments, replay.run),
        "train": Command("train an agent with MaskablePPO and self-play (train extra; --framework rllib: the rllib "
                         "extra)", lambda: train.parents(framework),
                         lambda parser: train.add_arguments(parser, framework), train.run),
        "exploit": Command("train a best response against an agent: how far a learner gets against it (train extra)",
                           exploit.parents, exploit.add_arguments, exploit.run),
        "fit-value": Command("give an exported policy a value head from its own games (for ppo+search; train extra)",
                             value.parents, value.add_arguments, value.run),
        "distil": Command("fit an exported policy to what ppo+search plays from its positions (train extra)",
                          distil.parents, distil.add_arguments, distil.run),
        "az": Command("AlphaZero: generations of self-play with search, training and a gate (train extra)",
                      az.parents, az.add_arguments, az.run),
        "league-train": Command("a main and its exploiters over generations, PFSP weights, a payoff matrix "
                                "(AlphaStar-style league; train extra)", league_train.parents,
                                league_train.add_arguments, league_train.run),
        "bench": Command("speed benchmarks vs PettingZoo/OpenSpiel anchors", bench.parents, bench.add_arguments,
                         bench.run),
        "demo": Command("play seeded random games", _demo_parents, _demo_arguments, _demo),
        "play": Command("play a game in the terminal against bots", terminal.parents, terminal.add_arguments,
                        terminal.run),
        "serve": Command("play in the browser against bots and browse results (web extra)", serve.parents,
                         serve.add_arguments, serve.run),
    }


class _ListFormatter(argparse.HelpFormatter):
    """``bali --help``: the commands' help lines beside their names (a column wide enough for them)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=16)


def build_parser(argv: Sequence[str] | None = None) -> flags.Parser:
    """The ``bali`` parser: ``--version``, and a subcommand per command (``commands``; ``argv``
    picks ``bali train``'s trainer), each built from its shared flags (``parents``) and its own
    (``add_arguments``), its ``run`` the default of ``args.run``."""
    from bali_env.release import VERSION

    parser = flags.Parser(prog="bali", description="Bali (Klaus-Jürgen Wrede, 2017) as a reinforcement-"
                                     "learning environment: tournaments, training, benchmarks, games.",
                                     epilog="bali COMMAND --help: the options of a command",
                                     formatter_class=_ListFormatter)
    parser.add_argument("--version", action="version", version=f"bali-env {VERSION}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", required=True)
    for name, command in commands(argv).items():
        subparser = sub.add_parser(name, help=command.help, parents=command.parents())
        command.add_arguments(subparser)
        subparser.set_defaults(run=command.run)
    return parser


def subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``bali COMMAND`` inside ``parser`` (``build_parser``'s)."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[command]


def command_parser(command: str, argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``bali COMMAND`` (``argv``: the command's arguments, for a command
    whose options depend on one of them, as ``bali train --framework rllib``). ValueError for
    an unknown command."""
    if command not in commands():
        raise ValueError(f"unknown command {command!r}; known: {', '.join(commands())}")
    return subparser(build_parser([command, *(argv or [])]), command)


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed by ``parser``, with ``args.argv``: the command's own arguments as given
    (for a command that repeats or reads its command line)."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the command's error, with its usage (argparse gives it to ``bali`` as a whole)
        subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    args.argv = list(argv[1:])
    return args


def parse_command(argv: list[str]) -> argparse.Namespace:
    """Parse a ``bali`` command line (``["tournament", "--agents", ...]``) without running it:
    the namespace its command would run with (``args.run(args)`` runs it); SystemExit(2) from
    argparse for a bad option, ValueError for an unknown command. Used to check every command the
    docs show."""
    if not argv or argv[0] not in commands():
        raise ValueError(f"unknown command {argv[0]!r}" if argv else "no command")
    return _parse(build_parser(argv), list(argv))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bali`` command: parse, then run the command; returns the exit code
    (SystemExit(2) from argparse for a bad option, 130 when interrupted, ``BROKEN_PIPE`` when
    the output was cut short)."""
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # a pipe closed early fails here rather than at exit
        return code
    except BrokenPipeError:
        return _output_cut_short()


def _main(argv: list[str]) -> int:
    """``main`` without its broken-pipe guard."""
    parser = build_parser(argv)
    if not argv:
        print(parser.format_help(), file=sys.stderr, end="")
        return 2
    if not argv[0].startswith("-") and argv[0] not in commands():
        import difflib

        close = difflib.get_close_matches(argv[0], commands(), n=1)
        print(parser.error_text(f"unknown command {argv[0]!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                                + f"; the commands: {', '.join(commands())}"), file=sys.stderr, end="")
        return 2
    try:
        args = _parse(parser, argv)
    except SystemExit as exc:
        if exc.code in (0, None):  # --help, --version
            return 0
        raise
    try:
        _interrupt_on_sigterm()
        return args.run(args)
    except UsageError as exc:
        subparser(parser, args.command).error(str(exc))
    except KeyboardInterrupt:
        print(f"\nbali {args.command}: interrupted", file=sys.stderr)
        return 130


BROKEN_PIPE = 141  #: the exit status when the output was cut short: 128 + SIGPIPE, as a shell reports ``yes | head``


def _output_cut_short() -> int:
    """The reader of the output went away (``bali replay GAME --all | head``): no traceback, and
    nothing more written to it (Python's recipe: stdout onto ``os.devnull``, so the flush at exit
    does not fail again); returns ``BROKEN_PIPE``."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return BROKEN_PIPE


def _interrupt_on_sigterm() -> None:
    """SIGTERM stops a command as Ctrl-C does (KeyboardInterrupt: its clean stop, then exit 130)."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


if __name__ == "__main__":
    sys.exit(main())
