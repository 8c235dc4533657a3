"""``bali replay FILE``: step through a saved game record, forward and back, with the table
drawn by the ansi renderer (public information), or from one player's point of view
(``--seat K``: only what that player knew at each step). Move lines follow the same rule: a
move by someone else shows what the table saw (a face-down offering is "offer a card face down",
an oracle take "oracle: take a card"); ``--reveal`` shows every move in full.

``--html OUT.html`` writes the game as one self-contained web page instead (pictures, controls,
move log: ``viewer.html``), ``--gif OUT.gif`` as an animated picture (``viewer.gif``, the render
extra); with them ``--seat K`` is that player's page (only what they knew) and ``--reveal``
shows everything, the table included, as after the game.

Keys (then Enter): Enter or ``n`` next, ``p`` previous, a number to jump to that step, ``e`` the
end, ``q`` quit. ``--all`` prints every step and exits (for pipes and logs). The last step ends
with the final scores and the winner(s) in words. Lines fit the terminal (100 columns when the
output is not a terminal). The file and every option are checked before anything is printed: a
file that is malformed or does not replay to its recorded scores, or a ``--seat``/``--step`` out
of range, is refused with one line on stderr (exit code 2).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from typing import Any

from bali_env.engine.contract import action_to_str
from bali_env.envs.records import load_record, replay_states
from bali_env.pictures.narrate import explain_final_scoring, result_text as narrate_result
from bali_env.pictures.text import describe_move, fit, render_view, scored_view
from bali_env.engine.decode import decode_observation
from bali_env.pictures.frames import labels_for

NOT_A_TERMINAL_WIDTH = 100  #: the line width when the output is not a terminal (a pipe, a log)


def terminal_width() -> int:
    """The terminal's width in columns (``NOT_A_TERMINAL_WIDTH`` when not a terminal)."""
    return shutil.get_terminal_size((NOT_A_TERMINAL_WIDTH, 24)).columns


def _labels(record: dict[str, Any]) -> list[str]:
    """``player_K (agent)`` per seat, or ``player_K`` when the record does not say who played."""
    return labels_for(record["num_players"], record.get("agents"))


def result_text(record: dict[str, Any]) -> str:
    """How the game ended, in words: every player's final score, then the winner(s) on a line of
    their own; or that the game was left unfinished (``narrate.result_text``)."""
    return narrate_result(record, _labels(record), len(record["actions"]))


def move_line(record: dict[str, Any], positions: list[Any], i: int, seat: int | None, reveal: bool = False) -> str:
    """The move that led to step ``i`` as the viewer saw it: the mover's own move in full, anybody
    else's as the table saw it (a face-down offering's category and an oracle take's depth
    hidden, ``bali_env.pictures.text.describe_move``); ``reveal`` shows every move in full."""
    prev = positions[i - 1]
    mover = prev.agent_selection
    q = prev.agent_name_mapping[mover]
    who = record.get("agents") or []
    name = f" ({who[q]})" if who else ""
    action = record["actions"][i - 1]
    if reveal or seat == q:
        return f"{mover}{name}: {action_to_str(action)}"
    decision = decode_observation(prev.observe(mover)["observation"]).decision
    return f"{mover}{name}: {describe_move(decision, action)}"


def frame(record: dict[str, Any], positions: list[Any], i: int, seat: int | None, reveal: bool = False,
          width: int | None = None) -> str:
    """The text of step ``i``: header, the move that led here (as ``seat``, or the public, saw
    it: ``move_line``), the table (``reveal``: every move in full), and after the last step how
    the game ended (``result_text``); lines wrapped to ``width`` (default: the terminal's)."""
    env = positions[i]
    n_steps = len(positions) - 1
    lines = [f"--- step {i}/{n_steps} ---" + (" (moves revealed)" if reveal else "")]
    if i > 0:
        lines.append(move_line(record, positions, i, seat, reveal))
    if seat is None:
        lines.append(env.render())
    else:
        view = decode_observation(env.observe(env.possible_agents[seat])["observation"])
        lines.append(render_view(scored_view(view, env.state(), seat), seat, _labels(record)))
    if i == n_steps:
        if all(env.terminations.values()):  # the final scoring, item by item, as bali play prints it
            lines.append(explain_final_scoring(env.state_dict(), env.infos[env.possible_agents[0]], _labels(record)))
        lines.append(result_text(record))
    return fit("\n".join(lines), width or terminal_width())


def _picture_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with ``--html``/``--gif`` and the options given with them, or None."""
    if not (args.html or args.gif):
        return None
    if args.seat is not None and args.reveal:
        return "--seat and --reveal cannot be combined with --html/--gif: a seat's page shows only what that " \
               "player knew, --reveal shows everything"
    if args.all:
        return "--all prints text; leave it out with --html/--gif"
    from bali_env.files import check_output_file

    try:
        for flag, path, example in (("--html", args.html, "game.html"), ("--gif", args.gif, "game.gif")):
            if path:
                check_output_file(path, flag, example)
    except ValueError as exc:
        return str(exc)
    if args.gif:
        try:
            import PIL  # noqa: F401
            import resvg_py  # noqa: F401
        except ImportError:
            return "--gif needs the render extra: pip install -e '.[render]' (resvg-py and Pillow)"
    return None


def _write_pictures(args: argparse.Namespace, record: dict[str, Any]) -> int:
    """``--html`` / ``--gif``: write the files (each appears only once complete)."""
    from pathlib import Path

    from bali_env.files import write_text

    title = Path(args.file).name
    if args.html:
        from bali_env.pictures.html import replay_html

        path = write_text(args.html, replay_html(record, args.seat, args.reveal, title))
        print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    if args.gif:
        from bali_env.pictures.gif import replay_gif

        path = replay_gif(record, args.gif, args.seat, args.reveal)
        print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


def parents() -> list[argparse.ArgumentParser]:
    """``bali replay`` takes none of the shared flags."""
    return []


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``bali replay``."""
    parser.description = "Step through a saved Bali game record."
    parser.add_argument("file", metavar="GAME.json", help="a saved game record (bali tournament --save-records "
                        "writes them in OUT/records/)")
    parser.add_argument("--seat", type=int, default=None, help="show the game from this player's point of view")
    parser.add_argument("--step", type=int, default=0, help="start at this step")
    parser.add_argument("--all", action="store_true", help="print every step and exit")
    parser.add_argument("--reveal", action="store_true",
                        help="show every move in full (face-down offerings, oracle takes), as after the game; with "
                             "--html/--gif the table too")
    parser.add_argument("--html", metavar="OUT.html", default=None,
                        help="write the game as one self-contained web page (pictures, controls, move log) and exit")
    parser.add_argument("--gif", metavar="OUT.gif", default=None,
                        help="write the game as an animated picture and exit (needs the render extra)")


def _problem(args: argparse.Namespace, record: dict[str, Any]) -> str | None:
    """What is wrong with ``--seat``, ``--step`` and the picture options for this game, or None."""
    n, steps = record["num_players"], len(record["actions"])
    if args.seat is not None and not 0 <= args.seat < n:
        return f"--seat must be 0..{n - 1} for this {n}-player game, got {args.seat}"
    problem = _picture_problem(args)
    if problem:
        return problem
    if not 0 <= args.step <= steps:
        return f"--step must be 0..{steps} (this game has {steps} moves), got {args.step}"
    return None


def _step_through(args: argparse.Namespace, record: dict[str, Any], input_fn: Callable[[str], str],
                  print_fn: Callable[..., None]) -> int:
    """The viewer: a frame, then a key (next, previous, a step, the end, quit), until ``q`` or
    the end of input."""
    positions = replay_states(record)
    last = len(positions) - 1
    i = args.step
    while True:
        print_fn(frame(record, positions, i, args.seat, args.reveal))
        try:
            key = input_fn("[Enter/n] next, p previous, NUMBER jump, e end, q quit > ").strip().lower()
        except EOFError:
            return 0
        if key in ("", "n"):
            i = min(i + 1, last)
        elif key == "p":
            i = max(i - 1, 0)
        elif key == "e":
            i = last
        elif key == "q":
            return 0
        elif key.isdigit():
            i = max(0, min(int(key), last))
        else:
            print_fn("keys: Enter or n = next, p = previous, a number = jump to that step, e = end, q = quit")


def run(
    args: argparse.Namespace, input_fn: Callable[[str], str] = input, print_fn: Callable[..., None] = print
) -> int:
    """``bali replay`` with the options of ``bali``'s parser: check the file and the options (one
    line, exit 2, nothing printed), then write the pictures, print every step (``--all``) or step
    through the game; returns the exit code."""
    try:
        record = load_record(args.file)
    except ValueError as exc:
        why = " ".join(str(exc).split())
        unread = why.startswith("cannot read game record")  # it names the file and why (no such file, a folder...)
        print("bali replay: error: " + (why if unread else f"refusing {args.file}: {why}"), file=sys.stderr)
        return 2
    problem = _problem(args, record)
    if problem:
        print(f"bali replay: error: {problem}", file=sys.stderr)
        return 2
    if args.html or args.gif:
        return _write_pictures(args, record)
    if args.all:
        positions = replay_states(record)
        for i in range(len(positions)):
            print_fn(frame(record, positions, i, args.seat, args.reveal))
        return 0
    return _step_through(args, record, input_fn, print_fn)
