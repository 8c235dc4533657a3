"""Golden playthroughs of ``bali_v0`` as readable text files (OpenSpiel style), one per case.

``python tests/golden/generate.py`` plays every case (seat 0 ``greedy``, the others ``random``,
all seeded) and writes ``bali_<case>.txt`` next to this file; ``--check`` regenerates in memory
and prints a unified diff against the files on disk (exit 1 on any difference). Regenerate only
after an intended rule or encoding change, and say which in the commit: ``tests/test_golden.py``
re-renders every file from its own header and ``action:`` lines and fails on any difference.
The stored games were played by the heuristic before its ``act`` became a batch of one (ties
are now broken by its SplitMix64 stream), so regenerating plays other games for the cases where
seat 0 met a tie; the files stay as they are until a rule or encoding change needs new ones.

A file is a header (``game:``, ``options:``, ``agents:``, ``layout:``) and then, per step, the
seat to move and the decision, the legal actions (id and name), the mover's non-zero observation
slots by name as the integer counts they encode (value x scale), grouped by block, a hash of
every other seat's observation and mask (``others:``), and the action taken; it ends with a hash
of every seat's final observation and the ``end:`` line (scores, winners, rewards).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import bali_env
from bali_env.bots import make_agent

HERE = Path(__file__).resolve().parent
CASES = [(2, False, False, 1), (2, True, True, 2), (3, True, False, 3), (3, False, True, 4), (4, False, False, 5),
         (4, True, True, 6)]
REGENERATE = "# regenerate: python tests/golden/generate.py   (check: python tests/golden/generate.py --check)"

# Small blocks share one line with related ones, so that a step is about ten lines; a block not
# listed here (a new one) gets a line of its own. Lines appear in the order of their first slot.
_LINE_OF_BLOCK = {
    "decision": "turn", "active_seat": "turn", "to_move_seat": "turn", "variant": "turn", "num_players": "turn",
    "last_take_column": "turn",
    "supply": "supply", "deck_size": "supply", "deck_cards": "supply",
    "market": "market", "demon": "market",
    "altar": "altar", "oracle": "altar", "scoring": "altar",
}


def file_name(num_players: int, oracle: bool, demon: bool, seed: int) -> str:
    """The golden file name of a case, e.g. ``bali_3p_oracle_seed3.txt``."""
    return f"bali_{num_players}p{'_oracle' if oracle else ''}{'_demon' if demon else ''}_seed{seed}.txt"


def agents_line(num_players: int) -> str:
    """The ``agents:`` value of a generated case: seat 0 greedy, the others random."""
    return " ".join(["greedy"] + ["random"] * (num_players - 1))


# ----------------------------------------------------------------------------- observation text
def _obs_slots() -> tuple[tuple[str, float, float], ...]:
    """``(name, scale, high)`` per observation slot (value = count / scale)."""
    return tuple(bali_env.engine.OBS_SLOTS)


@cache
def _layout() -> tuple[tuple[str, str, str, float], ...]:
    """Per slot: (line, block, key, scale). The block is the slot name before its first dot (the
    first two parts for ``seat.relK``), the key the rest ('' when the name has no dot)."""
    names = bali_env.observation_slot_names()
    slots = _obs_slots()
    assert [s[0] for s in slots] == list(names), "OBS_SLOTS and observation_slot_names() disagree"
    out = []
    for name, scale, _ in slots:
        parts = name.split(".")
        cut = 2 if parts[0] == "seat" and len(parts) > 2 else 1
        block, key = ".".join(parts[:cut]), ".".join(parts[cut:])
        out.append((_LINE_OF_BLOCK.get(block, block), block, key, float(scale)))
    return tuple(out)


def layout_line() -> str:
    """The ``layout:`` header line: the observation and action sizes and a hash of every slot's
    name, scale and high, so that a re-scaled slot shows even when the counts stay the same."""
    text = "\n".join(f"{name} {float(scale)!r} {float(high)!r}" for name, scale, high in _obs_slots())
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    n_slots, n_actions = len(_obs_slots()), bali_env.N_ACTIONS
    return f"layout: {n_slots} observation slots (names, scales, highs: {digest}), {n_actions} actions"


def _count(value: float, scale: float) -> str:
    """The count a slot value encodes (value x scale), as an integer; four decimals if it is not one."""
    c = float(value) * scale
    r = round(c)
    return str(r) if abs(c - r) < 1e-4 else f"{c:.4f}"


def observation_lines(observation: Any) -> list[str]:
    """The non-zero slots of one observation as text lines, grouped by block: ``block: key=count
    ...``, a flag (scale 1, value 1) as its bare key, a block without keys as ``block=count``; keys
    sharing a first part are bracketed: ``hand[rice_farmer=1 priest=2]`` (``hand.rice_farmer``...)."""
    lines: dict[str, dict[str, list[tuple[str, list[str]]]]] = {}
    for i, (line, block, key, scale) in enumerate(_layout()):
        v = float(observation[i])
        if v == 0.0:
            continue
        count = _count(v, scale)
        bare = scale == 1.0 and count == "1"
        head, _, rest = key.partition(".")
        if not rest:
            head, rest = "", key
        item = (rest or block) if bare else f"{rest or block}={count}"
        runs = lines.setdefault(line, {}).setdefault(block, [])
        if not runs or runs[-1][0] != head or not head:
            runs.append((head, []))
        runs[-1][1].append(item)
    out = []
    for blocks in lines.values():
        parts = []
        for block, runs in blocks.items():
            items = " ".join(f"{h}[{' '.join(v)}]" if h else " ".join(v) for h, v in runs)
            parts.append(f"{block}: {items}" if _has_keys(block) else items)
        out.append(" | ".join(parts))
    return out


@cache
def _has_keys(block: str) -> bool:
    """Whether the block's slot names go on past the block name (``deck_size`` does not)."""
    return any(b == block and k for _, b, k, _ in _layout())


def decision_name(observation: Any) -> str:
    """The decision being taken: the ``decision.*`` slot set in the observation (``+``-joined if
    several, ``none`` if no one)."""
    names = [key for i, (_, block, key, _) in enumerate(_layout()) if block == "decision" and observation[i] != 0]
    return "+".join(names) or "none"


def seats_digest(env: Any, agents: list[str]) -> str:
    """12 hex digits of the SHA-256 of the given seats' observations and masks, each as the text
    this file would show for it (its observation lines and legal ids): float noise cannot move it."""
    h = hashlib.sha256()
    for agent in agents:
        o = env.observe(agent)
        legal = " ".join(str(i) for i, m in enumerate(o["action_mask"]) if m)
        h.update("\n".join([agent, *observation_lines(o["observation"]), f"legal {legal}", ""]).encode())
    return h.hexdigest()[:12]


# ----------------------------------------------------------------------------- rendering
def _action_text(a: int) -> str:
    """``"<id> <name>"`` of an action (``?`` for a name when the id is not an action)."""
    try:
        return f"{a} {bali_env.action_to_str(a)}"
    except (TypeError, ValueError):
        return f"{a} ?"


def _number(x: float) -> str:
    """A reward as text: ``+1``/``-1`` when integral, four decimals otherwise."""
    return f"{int(x):+d}" if float(x).is_integer() else f"{x:+.4f}"


def _seats_text(tokens: list[str]) -> str:
    """Who plays which seat, for the comment line: ``seat 0 greedy, others random``."""
    if len(tokens) > 1 and len(set(tokens[1:])) == 1:
        return f"seat 0 {tokens[0]}, others {tokens[1]}"
    return ", ".join(f"seat {i} {t}" for i, t in enumerate(tokens))


def render_playthrough(num_players: int, oracle: bool, demon: bool, seed: int, actions: list[int],
                       agents_line: str, options: dict[str, Any] | None = None) -> str:
    """Replay ``actions`` from ``reset(seed=seed, options=options)`` and return the playthrough
    text. An illegal action is shown and stops the replay (``stopped:``); a game still running
    after the last action ends with ``unfinished:``; a finished one with ``end:``."""
    variant = "+".join(v for v, on in (("oracle", oracle), ("demon", demon)) if on) or "base game"
    out = [
        f"# bali_v0 playthrough: {num_players} players, {variant}, seed {seed}; {_seats_text(agents_line.split())}",
        REGENERATE,
        f"game: num_players={num_players} oracle={str(bool(oracle)).lower()} demon={str(bool(demon)).lower()} "
        f"seed={seed}",
        f"options: {json.dumps(options or None, sort_keys=True, separators=(',', ':'))}",
        f"agents: {agents_line}",
        layout_line(),
    ]
    env = bali_env.raw_env(num_players=num_players, oracle=oracle, demon=demon, illegal_action="raise")
    env.reset(seed=seed, options=options or None)
    for i, a in enumerate(actions):
        if all(env.terminations.values()):
            out.append(f"stopped: the game ended after {i} actions; {len(actions) - i} more in the record")
            return "\n".join(out) + "\n"
        mover = env.agent_selection
        o = env.observe(mover)
        legal = [int(x) for x, m in enumerate(o["action_mask"]) if m]
        out += ["", f"step {i}: {mover} to move, decision {decision_name(o['observation'])}",
                "  legal: " + " | ".join(_action_text(x) for x in legal)]
        out += ["  obs " + line for line in observation_lines(o["observation"])]
        out.append(f"  others: {seats_digest(env, [x for x in env.possible_agents if x != mover])}")
        try:
            env.step(a)
        except (TypeError, ValueError) as exc:
            out += [f"  illegal action: {_action_text(a)}", f"stopped: {exc}"]
            return "\n".join(out) + "\n"
        out.append(f"  action: {_action_text(a)}")
    out.append("")
    if not all(env.terminations.values()):
        out.append(f"unfinished: {env.agent_selection} to move after {len(actions)} actions")
        return "\n".join(out) + "\n"
    s = env.state_dict()
    out.append(f"final: every seat's observation and mask {seats_digest(env, list(env.possible_agents))}")
    out.append(f"end: scores {' '.join(str(x) for x in s['scores'])}"
               f" | winners {' '.join(f'player_{q}' for q in s['winners']) or 'none'}"
               f" | rewards {' '.join(_number(env.rewards[x]) for x in env.possible_agents)}")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- reading back
_GAME = re.compile(r"^game: num_players=(\d+) oracle=(true|false) demon=(true|false) seed=(-?\d+)$")
_ACTION = re.compile(r"^  (?:illegal )?action: (-?\d+)\b")


def parse_header(text: str) -> dict[str, Any]:
    """The header fields of a playthrough text: ``num_players``, ``oracle``, ``demon``, ``seed``,
    ``options`` (dict or None) and ``agents_line``. ValueError if one is missing."""
    fields: dict[str, Any] = {}
    for line in text.splitlines():
        if line.startswith("step "):
            break
        if m := _GAME.match(line):
            fields.update(num_players=int(m[1]), oracle=m[2] == "true", demon=m[3] == "true", seed=int(m[4]))
        elif line.startswith("options: "):
            fields["options"] = json.loads(line[len("options: "):])
        elif line.startswith("agents: "):
            fields["agents_line"] = line[len("agents: "):]
    missing = {"num_players", "oracle", "demon", "seed", "options", "agents_line"} - set(fields)
    if missing:
        raise ValueError(f"playthrough header lacks {sorted(missing)}")
    return fields


def parse_actions(text: str) -> list[int]:
    """The action ids of a playthrough text, in order (its ``action:`` lines)."""
    return [int(m[1]) for line in text.splitlines() if (m := _ACTION.match(line))]


def rerender(text: str) -> str:
    """Render a playthrough again from its own header and actions (what the golden test compares)."""
    return render_playthrough(**parse_header(text), actions=parse_actions(text))


# ----------------------------------------------------------------------------- generating
def play_case(num_players: int, oracle: bool, demon: bool, seed: int) -> list[int]:
    """Play one case with the seeded agents (seat 0 greedy, the others random); return its actions."""
    env = bali_env.raw_env(num_players=num_players, oracle=oracle, demon=demon)
    env.reset(seed=seed)
    agents = [make_agent("greedy", seed=seed)] + [make_agent("random", seed=seed + k) for k in range(1, num_players)]
    while not all(env.terminations.values()):
        o = env.observe(env.agent_selection)
        env.step(agents[env.agent_name_mapping[env.agent_selection]].act(o["observation"], o["action_mask"]))
    return list(env.game_record()["actions"])


def render_case(num_players: int, oracle: bool, demon: bool, seed: int) -> str:
    """Play one case and return its playthrough text."""
    return render_playthrough(num_players, oracle, demon, seed, play_case(num_players, oracle, demon, seed),
                              agents_line(num_players))


def diff_text(expected: str, actual: str, name: str, limit: int = 200) -> str:
    """A unified diff (first ``limit`` lines) of two playthrough texts; '' when they are equal."""
    lines = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), f"{name} (on disk)",
                                      f"{name} (regenerated)", lineterm=""))
    more = [f"... {len(lines) - limit} more diff lines"] if len(lines) > limit else []
    return "\n".join(lines[:limit] + more)


def _write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then move it into place."""
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)  # mkstemp makes it 0600
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv: list[str] | None = None) -> int:
    """Write every case's file, or with ``--check`` compare them with the files on disk."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the files on disk; exit 1 on a difference")
    parser.add_argument("--out", type=Path, default=HERE, help="directory of the golden files (default: here)")
    args = parser.parse_args(argv)
    status = 0
    for case in CASES:
        path = args.out / file_name(*case)
        text = render_case(*case)
        if args.check:
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            if old != text:
                status = 1
                print(diff_text(old, text, path.name) if old else f"{path.name}: missing")
        else:
            _write(path, text)
            print(f"wrote {path} ({len(text.splitlines())} lines)")
    if args.check:
        print("golden playthroughs differ" if status else "golden playthroughs are up to date")
    return status


if __name__ == "__main__":
    sys.exit(main())
