"""``bali replay FILE``: step through a saved game record, forward and back, with the table
drawn by the ansi renderer (public information), or from one player's point of view
(``--seat K``: only what that player knew at each step).

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


def frame(record: dict[str, Any], positions: list[Any], i: int, seat: int | None) -> str:
    """The text of step ``i``: header, the move that led here, and the table."""
    env = positions[i]
    n_steps = len(positions) - 1
    lines = [f"--- step {i}/{n_steps} ---"]
    if i > 0:
        prev = positions[i - 1]
        mover = prev.agent_selection
        who = record.get("agents") or []
        name = f" ({who[prev.agent_name_mapping[mover]]})" if who else ""
        lines.append(f"{mover}{name}: {action_to_str(record['actions'][i - 1])}")
    if seat is None:
        lines.append(env.render())
    else:
        from .render import render_view
        from .view import decode_observation

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
            print_fn(frame(record, positions, i, args.seat))
        return 0
    i = max(0, min(args.step, last))
    while True:
        print_fn(frame(record, positions, i, args.seat))
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
