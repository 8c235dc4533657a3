"""The command-line flags the commands share, each declared once as an ``argparse`` parent parser
(``ArgumentParser(..., parents=[flags.seed(), flags.games(200, "games per part")])``), so a flag
means the same in every command that takes it: one type, one action, one help; a command says
only its default (and what its games or its seed are for).

| parent | flags | what |
|---|---|---|
| ``players`` | ``--players N`` (``many``: ``--players 2 3 4``) | seats per game: 2, 3 or 4 |
| ``variants`` | ``--oracle``, ``--demon`` | the variants |
| ``seed`` | ``--seed SEED`` | the seed of the deals and of whatever else is random |
| ``games`` | ``--games N`` | how many games |
| ``workers`` | ``--workers N`` | worker processes (1: in-process) |
| ``clock`` | ``--move-time``, ``--game-time`` | the clock every agent plays under |
| ``out`` | ``--out OUT`` | where the command writes |
| ``overwrite`` | ``--overwrite`` | replace the finished (or unfinished) run an ``--out`` folder holds |
| ``progress`` | ``--progress`` / ``--no-progress`` | progress bars, on by default |

The ``bali`` command (``bali_env.apps.cli``) builds its subcommands from them; the tools with a
parser of their own (``python -m bali_env.trainers.evaluation.curve``, ``python -m bali_env.speed.search``,
the repository's ``benchmarks/``) take theirs from here too, which is why they live on the lowest
floor: every room can reach them. A range a library function checks itself (a tournament's
``games``, a seed ``bali play`` needs to be 0 or more) stays its check, so its one-line error is
the same from Python and from the command line.

``UsageError`` is a bad argument found after parsing (a range, a file that is not there, two flags
that do not go together): ``bali`` reports it as argparse reports its own, before the command
prints or creates anything. ``Parser`` is the ``ArgumentParser`` the ``bali`` command is built
with (every subcommand too; a tool with a parser of its own should use it as well): its error is
a one-line pointer to the command's help and the line that matters (``bali tournament: error:
argument --players: ...``), not the whole usage (exit 2).

Every command that writes an output folder takes ``out`` and ``overwrite`` and follows one rule,
``bali_env.files.check_out_folder``: a folder holding a finished run is never replaced without
``--overwrite``, an unfinished one is continued with ``--resume OUT`` or replaced with
``--overwrite``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

from bali_env.engine.ids import MAX_PLAYERS, MIN_PLAYERS

PLAYER_COUNTS = tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1))  #: the values of ``--players``


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose error is short: a one-line usage pointing to the help
    (``usage: PROG --agents SPEC [SPEC ...] [options]; see 'PROG --help'``), then the line that
    matters (``PROG: error: ...``), exit 2, where argparse prints the whole usage (8-18 lines for
    a command with many options) before it. Subparsers made with ``add_subparsers`` are
    ``Parser`` too."""

    def short_usage(self) -> str:
        """``usage: PROG`` with only what the command cannot do without (its positional and
        required arguments), then ``[options]``."""
        formatter = self._get_formatter()
        parts = []
        for action in self._actions:
            if action.help == argparse.SUPPRESS:
                continue
            if not action.option_strings:  # a positional (its metavar, or its name)
                parts.append(formatter._format_args(action, action.dest))
            elif action.required:
                shown = formatter._format_args(action, formatter._get_default_metavar_for_optional(action))
                parts.append(" ".join(filter(None, (action.option_strings[0], shown))))
        return " ".join(["usage:", self.prog, *parts, "[options]"])

    def error_text(self, message: str) -> str:
        """The short usage with its pointer to ``--help``, then ``PROG: error: MESSAGE`` (two lines)."""
        return f"{self.short_usage()}; see '{self.prog} --help'\n{self.prog}: error: {message}\n"

    def error(self, message: str) -> NoReturn:
        """Print ``error_text`` on stderr; exit 2."""
        self.exit(2, self.error_text(message))


class UsageError(ValueError):
    """A bad command-line argument found after parsing; the message names the flag. The ``bali``
    command turns it into argparse's error of the command (its usage and one line, exit 2)."""


def _parent() -> argparse.ArgumentParser:
    """A new parent parser (no ``-h`` of its own). Every call builds a new one: argparse shares a
    parent's actions with its children, so one parent per parser keeps their defaults apart."""
    return argparse.ArgumentParser(add_help=False)


def players(default: int | list[int], *, many: bool = False, detail: str = "") -> argparse.ArgumentParser:
    """``--players N``: seats per game, 2, 3 or 4; ``many``: one or more counts (``--players 2 3``,
    ``default`` a list). ``detail``: what the count means for the command, after the help."""
    p = _parent()
    shown = " ".join(map(str, default)) if many else "%(default)s"
    p.add_argument("--players", type=int, choices=PLAYER_COUNTS, default=default, nargs="+" if many else None,
                   help=f"seats per game{'; ' + detail if detail else ''} (default {shown})")
    return p


def variants() -> argparse.ArgumentParser:
    """``--oracle`` and ``--demon``: play with the variants (both off by default)."""
    p = _parent()
    p.add_argument("--oracle", action="store_true", help="play the Oracle variant")
    p.add_argument("--demon", action="store_true", help="play the Demon variant")
    return p


#: what ``--seed`` seeds in the commands that only deal: a tournament's deals (``bali_env.arena.schedule.deal_seed``)
DEALS = "the deals: game k is dealt from SEED and k hashed together (deal_seed), so two seeds share no deal"


def seed(default: int | None = 0, seeds: str = DEALS) -> argparse.ArgumentParser:
    """``--seed SEED``: an int that seeds ``seeds`` (the same seed, the same games); ``default``
    None: a random seed, which the command prints."""
    p = _parent()
    shown = "a random seed, printed" if default is None else "%(default)s"
    p.add_argument("--seed", type=int, default=default, help=f"seeds {seeds} (default {shown})")
    return p


def games(default: int, what: str = "games to play") -> argparse.ArgumentParser:
    """``--games N``: how many games the command plays (``what`` says which), at least 1."""
    p = _parent()
    p.add_argument("--games", type=int, default=default, help=f"{what} (default %(default)s)")
    return p


def workers(default: int = 2) -> argparse.ArgumentParser:
    """``--workers N``: the worker processes that play the games (1: in this process)."""
    p = _parent()
    p.add_argument("--workers", type=int, default=default, help="worker processes (default %(default)s; "
                   "1 = in-process)")
    return p


def clock() -> argparse.ArgumentParser:
    """``--move-time`` and ``--game-time``: the clock every agent plays under (seconds, or none)."""
    p = _parent()
    p.add_argument("--move-time", type=float, default=None, metavar="SECONDS",
                   help="the clock: seconds per decision for every agent (cmd: bots 10 unless set); a bot over "
                        "it loses the game")
    p.add_argument("--game-time", type=float, default=None, metavar="SECONDS",
                   help="the clock: seconds per game for every agent (default: no budget)")
    return p


def out(help: str, *, default: Path | None = None, required: bool = False) -> argparse.ArgumentParser:
    """``--out OUT``: where the command writes (a folder, or a file for the commands that write
    one); ``help`` says what goes there and what happens without it."""
    p = _parent()
    p.add_argument("--out", type=Path, default=default, required=required, metavar="OUT", help=help)
    return p


def overwrite(what: str = "run", *, resume: bool = True) -> argparse.ArgumentParser:
    """``--overwrite``: replace the earlier ``what`` the ``--out`` folder holds (finished or not);
    without it such a folder is refused (``bali_env.files.check_out_folder``: one rule for every
    command that writes an output folder). ``resume``: whether the command takes ``--resume OUT``
    (its help then says that an unfinished one is continued with it)."""
    p = _parent()
    refused = "refused: continue an unfinished one with --resume OUT" if resume else "refused"
    p.add_argument("--overwrite", action="store_true",
                   help=f"replace the earlier {what} in --out OUT (finished or not; without it such an OUT is "
                        f"{refused})")
    return p


def progress() -> argparse.ArgumentParser:
    """``--progress`` / ``--no-progress``: progress bars while the command runs (on by default)."""
    p = _parent()
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                   help="show progress bars (default %(default)s)")
    return p


__all__ = ["DEALS", "PLAYER_COUNTS", "Parser", "UsageError", "clock", "games", "out", "overwrite", "players",
           "progress", "seed", "variants", "workers"]
