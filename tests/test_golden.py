"""Golden playthroughs (OpenSpiel style): every checked-in ``tests/golden/*.txt`` game, replayed
from its own header and ``action:`` lines, must render to the very same text: the seat to move,
the decision, the legal actions, the mover's observation, a hash of the other seats' observations,
the actions and the result. Any unintended rule or encoding change fails here with a readable
diff; after an intended one, regenerate with ``python tests/golden/generate.py`` and say why in
the commit (``--check`` shows the diff first)."""

from __future__ import annotations

import importlib.util
import re
from functools import cache
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"
GOLDEN = sorted(GOLDEN_DIR.glob("*.txt"))

_spec = importlib.util.spec_from_file_location("bali_golden_generate", GOLDEN_DIR / "generate.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


@cache
def _rendered(path: Path) -> tuple[str, str]:
    """(the file's text, the text re-rendered from its header and actions)."""
    text = path.read_text(encoding="utf-8")
    return text, gen.rerender(text)


def _first_difference(expected: str, actual: str, name: str, context: int = 40) -> str:
    """A unified diff of the first differing lines (at most ``context`` lines of it)."""
    return gen.diff_text(expected, actual, name, limit=context)


def test_there_are_golden_files_for_every_player_count_and_variant():
    """At least one file per player count, and every variant combination is covered."""
    headers = [gen.parse_header(p.read_text(encoding="utf-8")) for p in GOLDEN]
    assert {h["num_players"] for h in headers} == {2, 3, 4}
    assert {(h["oracle"], h["demon"]) for h in headers} == {(False, False), (True, True), (True, False), (False, True)}


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_playthrough_replays_exactly(path):
    """The file's own actions, replayed, render to exactly the file."""
    expected, actual = _rendered(path)
    assert actual == expected, (f"{path.name} changed; if intended, run python tests/golden/generate.py\n"
                                + _first_difference(expected, actual, path.name))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_actions_play_a_whole_game(path):
    """The file's actions end the game: the replay's last line is the result."""
    _, actual = _rendered(path)
    last = actual.rstrip("\n").splitlines()[-1]
    assert re.fullmatch(r"end: scores( \d+)+ \| winners( player_\d)+ \| rewards( [+-]\d+)+", last), last


def test_the_golden_check_can_fail():
    """Replaying a file with one action changed to another legal one gives a different text, and
    the difference reaches past the changed action line (the game itself went elsewhere)."""
    path = min(GOLDEN, key=lambda p: p.stat().st_size)
    text = path.read_text(encoding="utf-8")
    actions = gen.parse_actions(text)
    legal = [[int(a.split()[0]) for a in m[1].split(" | ")] for m in re.finditer(r"^  legal: (.*)$", text, re.M)]
    step = next(i for i, ids in enumerate(legal) if len(ids) > 1)
    changed = list(actions)
    changed[step] = next(a for a in legal[step] if a != actions[step])
    other = gen.render_playthrough(**gen.parse_header(text), actions=changed)
    assert other != text
    diff = _first_difference(text, other, path.name, context=200)
    assert f"-  action: {gen._action_text(actions[step])}" in diff
    assert f"+  action: {gen._action_text(changed[step])}" in diff
    changed_lines = [line for line in diff.splitlines() if line.startswith(("+", "-"))
                     and not line.startswith(("+++", "---", "-  action:", "+  action:"))]
    assert changed_lines, diff
