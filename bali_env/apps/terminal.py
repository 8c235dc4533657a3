"""``bali play``: a terminal game of Bali for one human against bots.

The human takes one seat, bots built with ``bali_env.bots.registry.make_agent`` (``random``,
``greedy``, ``mcts``, ``mcts:sims=200``, ``ppo``, ``sb3:model.zip``...) fill the others: a
``TableSession`` (``session.py``), the game the web app plays too. Everything shown during the
game is built from the human's own observation only (its ``Spectator`` frames), so the display shows
exactly what that player may know (docs/rules.md section 5): never the deck order, the category of
face-down altar cards the human did not see, or another player's exact offering cards once they
became uncertain. Bot moves are announced in the same spirit: a face-down offering is shown as
"offer a card face down" and an oracle take as "oracle: take a card". Only after the game is over,
when everything is revealed, does the final scoring read the true state. A bot that fails (raises,
or a ``cmd:`` bot that times out, crashes or breaks the protocol) ends the game with a line naming
it.

``play_game`` is the testable core (input and output are injectable); ``run`` is the command
(``bali play --players 3 --opponents greedy mcts [--oracle] [--demon] [--seed N] [--seat K]
[--save FILE]``; ``parents`` and ``add_arguments`` give its flags to ``bali``'s parser): every
option is checked before anything is printed (a bad one: one line on stderr, exit code 2, nothing
written); Ctrl-C (and SIGTERM, through ``bali``) ends the game with one line, exit code 130.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


from bali_env import flags
from bali_env.engine.ids import ACTION_NAMES
from bali_env.engine.validate import check_int, check_num_players, check_seat
from bali_env.pictures.frames import Frame
from bali_env.pictures.text import fit, options_text, render_view

from bali_env.apps.session import SetupError, TableSession

__all__ = ["PlayError", "add_arguments", "check_save_path", "parents", "parse_choice", "play_game", "run"]

HELP_TEXT = """How to answer:
  1, 2, 3 ...      the key shown in front of a legal action
  #29              an action id (docs/rules.md section 6), if it is legal now
  take col         a unique prefix of a legal action's name (case does not matter)
  t / table        show the table again
  ? / help         this help
  q / quit         leave the game
The market shows each column in take order; the card marked * is the one you would take.
Others' offering cards: an exact count, or "a-b" (at least a, at most b) once they are uncertain."""


class PlayError(ValueError):
    """A bad ``bali play`` setup (unknown agent spec, bad seat...): the CLI exits with code 2."""


class _Quit(Exception):
    """The human left the game (``q`` or end of input)."""


# ---------------------------------------------------------------------------- input
COMMANDS = {"?": "help", "h": "help", "help": "help", "q": "quit", "quit": "quit", "exit": "quit", "t": "table",
            "table": "table"}  #: what a line may say besides an action


def parse_choice(text: str, legal: list[int]) -> int | str:
    """Turn one line of input into a legal action id, or a command: ``"help"``, ``"quit"``,
    ``"table"``. Raises ``ValueError`` with a hint for anything else."""
    t = text.strip().lower()
    if not t:
        raise ValueError(f"type a key 1..{len(legal)}, #id, a name prefix, ? for help or q to quit")
    if t in COMMANDS:
        return COMMANDS[t]
    if t.isdigit():
        k = int(t)
        if 1 <= k <= len(legal):
            return legal[k - 1]
        raise ValueError(f"no key {k}: choose 1..{len(legal)}")
    if t.startswith("#"):
        return _action_id(t[1:].strip(), legal)
    return _action_name(t, text.strip(), legal)


def _action_id(body: str, legal: list[int]) -> int:
    """``#29``: a legal action by its id."""
    if not body.isdigit():
        raise ValueError("after # give an action id, e.g. #" + str(legal[0]))
    a = int(body)
    if a in legal:
        return a
    if not 0 <= a < len(ACTION_NAMES):
        raise ValueError(f"#{a} is not an action id (0..{len(ACTION_NAMES) - 1})")
    raise ValueError(f"#{a} ({ACTION_NAMES[a]}) is not legal now; legal ids: " + ", ".join(f"#{x}" for x in legal))


def _action_name(t: str, typed: str, legal: list[int]) -> int:
    """A legal action by its name, or by a prefix that only one legal action's name has."""
    exact = [a for a in legal if ACTION_NAMES[a].lower() == t]
    if exact:
        return exact[0]
    matches = [a for a in legal if ACTION_NAMES[a].lower().startswith(t)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValueError(f"{typed!r} matches several actions: "
                         + ", ".join(ACTION_NAMES[a] for a in matches) + "; type more or use the key")
    raise ValueError(f"{typed!r} is not a legal action; type a key 1..{len(legal)} or ? for help")


def _ask(legal: list[int], table: str, view: Any, input_fn: Callable[[str], str], print_fn: Callable[..., None]) -> int:
    menu = options_text(view, legal)
    print_fn(menu)
    while True:
        try:
            line = input_fn("your choice> ")
        except EOFError:
            raise _Quit("end of input: leaving the game") from None
        if line is None:
            raise _Quit("end of input: leaving the game")
        try:
            choice = parse_choice(str(line), legal)
        except ValueError as exc:
            print_fn(f"hint: {exc}")
            continue
        if choice == "help":
            print_fn(HELP_TEXT)
            print_fn(menu)
        elif choice == "table":
            print_fn(table)
            print_fn(menu)
        elif choice == "quit":
            raise _Quit("you left the game")
        else:
            return int(choice)


# ---------------------------------------------------------------------------- the game
def _lines(frame: Frame) -> str:
    """A move and what it caused, as the human saw it (``Frame.move``, then its events indented)."""
    return fit("\n".join([str(frame.move), *(f"  {event}" for event in frame.events)]))


def play_game(
    num_players: int,
    opponents: list[str],
    seed: int | None = None,
    seat: int = 0,
    oracle: bool = False,
    demon: bool = False,
    input_fn: Callable[[str], str] = input,
    print_fn: Callable[..., None] = print,
) -> dict[str, Any]:
    """Play one game, the human in ``seat`` answering through ``input_fn``, bots built from the
    ``opponents`` specs in the other seats (a ``TableSession``); return the game record, with
    ``final_scores`` None if the human left early or a bot failed. Raises ``PlayError`` for a bad
    set-up, before anything is printed; a ``KeyboardInterrupt`` (Ctrl-C) is not caught."""
    seed = secrets.randbelow(2**31) if seed is None else seed
    try:
        check_seat(seat, check_num_players(num_players, "--players"), "--seat")
        check_int("--seed", seed, 0)
        session = TableSession(num_players, seat, list(opponents), seed, oracle, demon, label_width=14)
    except (SetupError, TypeError, ValueError) as exc:
        raise PlayError(str(exc)) from None
    labels = session.labels
    print_fn(fit(f"Bali: you are {labels[seat]}; opponents: "
                 + ", ".join(labels[q] for q in range(num_players) if q != seat)
                 + f" | seed {seed} | type ? for help"))
    try:
        while session.status == "playing":
            if session.your_turn():
                view = session.frame.view
                table = render_view(view, seat, labels)
                print_fn("")
                print_fn(table)
                frame = session.human_move(_ask(session.legal(), table, view, input_fn, print_fn))
            else:
                frame = session.bot_move()
            if frame is not None:
                print_fn(_lines(frame))
    except _Quit as exc:
        session.leave(str(exc))
        print_fn(f"{exc}. Bye!")
        return session.record()
    finally:
        session.close()
    if session.status == "failed":
        print_fn(fit(session.message))
        return session.record()
    print_fn("")
    print_fn(render_view(session.frame.view, seat, labels))
    print_fn(fit(session.final_scoring()))
    return session.record()


def check_save_path(path: str | Path) -> Path:
    """``--save FILE``: a file that can be written at the end of the game (an existing file is
    replaced; missing folders are created then). PlayError otherwise, before anything is created."""
    from bali_env.files import check_output_file

    try:
        return check_output_file(path, "--save", "game.json")
    except ValueError as exc:
        raise PlayError(str(exc)) from None


def parents() -> list[argparse.ArgumentParser]:
    """The shared flags ``bali play`` takes (``bali_env.flags``)."""
    return [flags.players(3), flags.variants(), flags.seed(None, "the deal, >= 0")]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bali play`` besides the shared ones."""
    parser.description = "Play Bali in the terminal against bots."
    parser.add_argument("--opponents", nargs="+", default=["greedy"], metavar="SPEC",
                        help="bots for the other seats, in order, cycled if too few "
                             "(random, greedy, mcts, mcts:sims=200, ppo, ppo:path=FILE.npz, sb3:model.zip, "
                             "mybot.py:MyBot; default greedy)")
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 = first player (default 0)")
    parser.add_argument("--save", default=None, metavar="FILE", help="write the game record (JSON) here")


def run(args: argparse.Namespace, input_fn: Callable[[str], str] | None = None) -> int:
    """``bali play`` with the options of ``bali``'s parser: check them, play, optionally save the
    record. Exit code 2 (one line) on a bad option, before anything is printed or written; 130
    (one line) on Ctrl-C (``bali``'s entry point turns SIGTERM into one too; nothing is saved);
    0 otherwise. ``input_fn`` defaults to ``input``."""
    try:
        if args.save is not None:
            check_save_path(args.save)
        record = play_game(args.players, args.opponents, seed=args.seed, seat=args.seat, oracle=args.oracle,
                           demon=args.demon, input_fn=input_fn or (lambda prompt: input(prompt)))
    except PlayError as exc:
        print(f"bali play: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nbali play: interrupted", file=sys.stderr)
        return 130
    if args.save:
        from bali_env.envs.records import save_record

        try:
            path = save_record(record, args.save)
        except (OSError, ValueError) as exc:
            print(f"bali play: could not save the record: {exc}", file=sys.stderr)
            return 1
        print(f"saved the game record to {path}")
    return 0
