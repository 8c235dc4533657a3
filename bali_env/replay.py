"""``bali replay FILE``: step through a saved game record, forward and back, with the table
drawn by the ansi renderer (public information), or from one player's point of view
(``--seat K``: only what that player knew at each step). Move lines follow the same rule: a
move by someone else shows what the table saw (a face-down offering is "offer a card face down",
an oracle take "oracle: take a card"); ``--reveal`` shows every move in full.

Keys (then Enter): Enter or ``n`` next, ``p`` previous, a number to jump to that step, ``e`` the
end, ``q`` quit. ``--all`` prints every step and exits (for pipes and logs). The file is
validated first: one that is malformed or does not replay to its recorded scores is refused with
a clear message (exit code 2).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .contract import action_to_str
from .records import load_record, replay_states
from .render import describe_move, render_view
from .view import decode_observation


def move_line(record: dict[str, Any], positions: list[Any], i: int, seat: int | None, reveal: bool = False) -> str:
    """The move that led to step ``i`` as the viewer saw it: the mover's own move in full, anybody
    else's as the table saw it (a face-down offering's category and an oracle take's depth
    hidden, ``render.describe_move``); ``reveal`` shows every move in full."""
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


def frame(record: dict[str, Any], positions: list[Any], i: int, seat: int | None, reveal: bool = False) -> str:
    """The text of step ``i``: header, the move that led here (as ``seat``, or the public, saw
    it: ``move_line``), and the table (``reveal``: every move in full)."""
    env = positions[i]
    n_steps = len(positions) - 1
    lines = [f"--- step {i}/{n_steps} ---" + (" (moves revealed)" if reveal else "")]
    if i > 0:
        lines.append(move_line(record, positions, i, seat, reveal))
    if seat is None:
        lines.append(env.render())
    else:
        who = record.get("agents") or [None] * env.num_players
        labels = [f"player_{q}" + (f" ({who[q]})" if who[q] else "") for q in range(env.num_players)]
        view = decode_observation(env.observe(env.possible_agents[seat])["observation"])
        lines.append(render_view(view, seat, labels))
    if i == n_steps and record.get("final_scores") is not None:
        winners = [f"player_{int(w)}" for w in record["winners"]]
        lines.append(f"final scores {record['final_scores']}, winners {winners}")
    return "\n".join(lines)


def run(
    argv: list[str] | None = None, input_fn: Callable[[str], str] = input, print_fn: Callable[..., None] = print
) -> int:
    """Entry point of ``bali replay``; returns the exit code."""
    p = argparse.ArgumentParser(prog="bali replay", description="Step through a saved Bali game record.")
    p.add_argument("file")
    p.add_argument("--seat", type=int, default=None, help="show the game from this player's point of view")
    p.add_argument("--step", type=int, default=0, help="start at this step")
    p.add_argument("--all", action="store_true", help="print every step and exit")
    p.add_argument("--reveal", action="store_true",
                   help="show every move in full (face-down offerings, oracle takes), as after the game")
    args = p.parse_args(argv)
    try:
        record = load_record(args.file)
    except ValueError as exc:
        print_fn(f"bali replay: refusing {args.file}: {exc}")
        return 2
    if args.seat is not None and not 0 <= args.seat < record["num_players"]:
        print_fn(f"bali replay: --seat must be 0..{record['num_players'] - 1}")
        return 2
    positions = replay_states(record)
    last = len(positions) - 1
    if args.all:
        for i in range(last + 1):
            print_fn(frame(record, positions, i, args.seat, args.reveal))
        return 0
    i = max(0, min(args.step, last))
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
