"""``bali play``: a terminal game of Bali for one human against bots.

The human takes one seat, bots built with ``bali_env.agents.base.make_agent`` (``random``, ``greedy``,
``mcts``, ``mcts:sims=200``, ``ppo``, ``sb3:model.zip``...) fill the others. Everything shown during the game
is built from the human's own observation only (``decode_observation``), so the display shows
exactly what that player may know (docs/rules.md section 5): never the deck order, the category of
face-down altar cards the human did not see, or another player's exact offering cards once they
became uncertain. Bot moves are announced in the same spirit: a face-down offering is shown as
"offer a card face down" and an oracle take as "oracle: take a card". Only after the game is over,
when everything is revealed, does the final scoring read the true state. A bot that fails (raises,
or a ``cmd:`` bot that times out, crashes or breaks the protocol) ends the game with a line naming
it.

``play_game`` is the testable core (input and output are injectable); ``main`` is the CLI
(``bali play --players 3 --opponents greedy mcts [--oracle] [--demon] [--seed N] [--seat K]
[--save FILE]``): every option is checked before anything is printed (a bad one: one line on
stderr, exit code 2, nothing written); Ctrl-C (and SIGTERM, through ``bali``) ends the game with
one line, exit code 130. It lives with the bots (``agents``), the floor it needs; the
environment below (``bali_env``) does not know about it.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.envs.bali_v0 import raw_env
from bali_env.engine.ids import ACTION_NAMES
from bali_env.pictures.narrate import TurnNarrator, explain_final_scoring
from bali_env.pictures.text import describe_move, fit, options_text, render_view
from bali_env.engine.decode import decode_observation

from bali_env.agents.base import make_agent

__all__ = [
    "PlayError",
    "TurnNarrator",
    "build_opponents",
    "check_save_path",
    "describe_bot_move",
    "explain_final_scoring",
    "main",
    "make_parser",
    "parse_choice",
    "play_game",
    "render_view",
]

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


class _BotFailed(Exception):
    """The bot in ``seat`` raised, broke the bot protocol or chose an illegal action: the game ends."""

    def __init__(self, seat: int, message: str) -> None:
        super().__init__(message)
        self.seat = seat


def _bot_call(seat: int, method: Callable[..., Any], *args: Any) -> Any:
    """``method(*args)`` of the bot in ``seat``; ``_BotFailed`` saying why when it raises."""
    try:
        return method(*args)
    except Exception as exc:  # noqa: BLE001 - a bot program's fault, or an in-process bot's bug
        raise _BotFailed(seat, f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}") from None


def _bot_action(seat: int, bot: Any, obs: dict[str, np.ndarray]) -> int:
    """The move of the bot in ``seat``; ``_BotFailed`` saying why when it fails."""
    action = int(_bot_call(seat, bot.act, obs["observation"], obs["action_mask"]))
    if not 0 <= action < len(obs["action_mask"]) or not obs["action_mask"][action]:
        raise _BotFailed(seat, f"it chose action {action}, which is not legal")
    return action


# ---------------------------------------------------------------------------- set-up
def build_opponents(num_players: int, seat: int, opponents: list[str], seed: int) -> dict[int, tuple[str, Any]]:
    """Map every non-human seat to ``(spec, agent)``: the specs fill the other seats in order,
    cycling when there are fewer specs than seats. Raises ``PlayError`` with a friendly message."""
    if num_players not in (2, 3, 4):
        raise PlayError(f"--players must be 2, 3 or 4, got {num_players}")
    if not 0 <= seat < num_players:
        raise PlayError(f"--seat must be 0..{num_players - 1} for {num_players} players, got {seat}")
    if not opponents:
        raise PlayError("name at least one opponent, e.g. --opponents greedy")
    bots: dict[int, tuple[str, Any]] = {}
    others = [q for q in range(num_players) if q != seat]
    for i, q in enumerate(others):
        spec = opponents[i % len(opponents)]
        try:
            agent = make_agent(spec, seed=seed + q)
            check = getattr(agent, "check_players", None)  # e.g. the shipped ppo: a policy for this count?
            if callable(check):
                check(num_players)
        except Exception as exc:  # noqa: BLE001  (unknown kind, bad setting, missing model file or extra)
            raise PlayError(f"opponent {spec!r}: " + " ".join(str(exc).split())) from None
        bots[q] = (spec, agent)
    return bots


def _labels(num_players: int, seat: int, bots: dict[int, tuple[str, Any]]) -> list[str]:
    """``player_K (you)`` and ``player_K (spec)``, long specs shortened (the table fits 80 columns)."""
    def short(spec: str) -> str:
        return spec if len(spec) <= 14 else spec[:13] + "~"

    return [f"player_{q} (you)" if q == seat else f"player_{q} ({short(bots[q][0])})" for q in range(num_players)]


# ---------------------------------------------------------------------------- display
describe_bot_move = describe_move  #: what the human sees of a bot's move (``render.describe_move``)


# ---------------------------------------------------------------------------- input
def parse_choice(text: str, legal: list[int]) -> int | str:
    """Turn one line of input into a legal action id, or a command: ``"help"``, ``"quit"``,
    ``"table"``. Raises ``ValueError`` with a hint for anything else."""
    t = text.strip().lower()
    if not t:
        raise ValueError(f"type a key 1..{len(legal)}, #id, a name prefix, ? for help or q to quit")
    if t in ("?", "h", "help"):
        return "help"
    if t in ("q", "quit", "exit"):
        return "quit"
    if t in ("t", "table"):
        return "table"
    if t.isdigit():
        k = int(t)
        if 1 <= k <= len(legal):
            return legal[k - 1]
        raise ValueError(f"no key {k}: choose 1..{len(legal)}")
    if t.startswith("#"):
        body = t[1:].strip()
        if not body.isdigit():
            raise ValueError("after # give an action id, e.g. #" + str(legal[0]))
        a = int(body)
        if a in legal:
            return a
        if not 0 <= a < len(ACTION_NAMES):
            raise ValueError(f"#{a} is not an action id (0..{len(ACTION_NAMES) - 1})")
        raise ValueError(f"#{a} ({ACTION_NAMES[a]}) is not legal now; legal ids: "
                         + ", ".join(f"#{x}" for x in legal))
    exact = [a for a in legal if ACTION_NAMES[a].lower() == t]
    if exact:
        return exact[0]
    matches = [a for a in legal if ACTION_NAMES[a].lower().startswith(t)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValueError(f"{text.strip()!r} matches several actions: "
                         + ", ".join(ACTION_NAMES[a] for a in matches) + "; type more or use the key")
    raise ValueError(f"{text.strip()!r} is not a legal action; type a key 1..{len(legal)} or ? for help")


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
    ``opponents`` specs in the other seats; return the game record (``env.game_record``), with
    ``final_scores`` None if the human left early. Raises ``PlayError`` for a bad set-up, before
    anything is printed; a ``KeyboardInterrupt`` (Ctrl-C) is not caught."""
    if seed is None:
        seed = secrets.randbelow(2**31)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise PlayError(f"--seed must be an int >= 0, got {seed!r}")
    bots = build_opponents(num_players, seat, list(opponents), seed)
    labels = _labels(num_players, seat, bots)
    env = raw_env(num_players=num_players, oracle=oracle, demon=demon)
    env.reset(seed=seed)
    human = env.possible_agents[seat]
    specs = ["human" if q == seat else bots[q][0] for q in range(num_players)]
    print_fn(fit(f"Bali: you are {labels[seat]}; opponents: "
                 + ", ".join(labels[q] for q in range(num_players) if q != seat)
                 + f" | seed {seed} | type ? for help"))
    narrator = TurnNarrator(labels, seat)
    try:
        for q, (_, bot) in bots.items():
            _bot_call(q, bot.begin_game, {"game": 0, "seat": q, "num_players": num_players,
                                          "variants": {"oracle": oracle, "demon": demon}, "agents": specs})
        while not all(env.terminations.values()):
            agent = env.agent_selection
            q = env.agent_name_mapping[agent]
            obs = env.observe(agent)
            legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
            before = decode_observation(env.observe(human)["observation"])
            if q == seat:
                table = render_view(before, seat, labels)
                print_fn("")
                print_fn(table)
                action = _ask(legal, table, before, input_fn, print_fn)
                text = ACTION_NAMES[action]
            else:
                action = _bot_action(q, bots[q][1], obs)
                text = describe_bot_move(before.decision, action)
            env.step(action)
            after = decode_observation(env.observe(human)["observation"])
            print_fn(fit("\n".join(narrator.move(before, action, after, text))))
    except _Quit as exc:
        print_fn(f"{exc}. Bye!")
        return env.game_record(agents=specs)
    except _BotFailed as exc:
        print_fn(fit(f"{labels[exc.seat]} failed ({exc}): the game ends here."))
        return env.game_record(agents=specs)
    finally:
        result = env.state_dict()
        for _, bot in bots.values():
            bot.end_game({"game": 0, "final_scores": result["scores"], "winners": result["winners"], "forfeit": None})
            bot.close()
    final = render_view(decode_observation(env.observe(human)["observation"]), seat, labels)
    print_fn("")
    print_fn(final)
    print_fn(fit(explain_final_scoring(env.state_dict(), env.infos[human], labels)))
    return env.game_record(agents=specs)


def check_save_path(path: str | Path) -> Path:
    """``--save FILE``: a file that can be written at the end of the game (an existing file is
    replaced; missing folders are created then). PlayError otherwise, before anything is created."""
    from bali_env.files import check_output_file

    try:
        return check_output_file(path, "--save", "game.json")
    except ValueError as exc:
        raise PlayError(str(exc)) from None


def make_parser() -> argparse.ArgumentParser:
    """The options of ``bali play``."""
    parser = argparse.ArgumentParser(prog="bali play", description="Play Bali in the terminal against bots.")
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4), help="seats (default 3)")
    parser.add_argument("--opponents", nargs="+", default=["greedy"], metavar="SPEC",
                        help="bots for the other seats, in order, cycled if too few "
                             "(random, greedy, mcts, mcts:sims=200, ppo, ppo:path=FILE.npz, sb3:model.zip, "
                             "mybot.py:MyBot; default greedy)")
    parser.add_argument("--oracle", action="store_true", help="play the Oracle variant")
    parser.add_argument("--demon", action="store_true", help="play the Demon variant")
    parser.add_argument("--seed", type=int, default=None, help="deal seed, >= 0 (default: random, printed)")
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 = first player (default 0)")
    parser.add_argument("--save", default=None, metavar="FILE", help="write the game record (JSON) here")
    return parser


def main(argv: list[str] | None = None, input_fn: Callable[[str], str] | None = None) -> int:
    """``bali play``: parse and check the options, play, optionally save the record. Exit code 2
    (one line) on a bad option, before anything is printed or written; 130 (one line) on Ctrl-C
    (``bali``'s entry point turns SIGTERM into one too; nothing is saved); 0 otherwise.
    ``input_fn`` defaults to ``input``."""
    parser = make_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
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


if __name__ == "__main__":
    sys.exit(main())
