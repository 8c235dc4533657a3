"""The bot protocol's pages tell the truth and read the same on GitHub as on the site: the example
files they show are whole copies of the files (no include line that GitHub would show as text),
the example messages are messages the schema accepts, and the sizes quoted are the sizes
measured."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import bali_env
from bali_env.bots.protocol.messages import decide_message, line
from bali_env.engine.ids import ACTION_NAMES

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "docs" / "protocol.md"
# (page, file it shows whole)
SHOWN = [(PROTOCOL, "agents/random_bot.py"), (ROOT / "docs" / "bots.md", "agents/my_bot.py")]
FIELD_CHOICES = (("view", "observation"), ("view",), ("observation",), ())  #: as the page quotes them
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "agents" / "README.md"]


@pytest.mark.parametrize("page, shown", SHOWN, ids=[s for _, s in SHOWN])
def test_a_page_shows_the_example_file_whole_and_as_it_is(page, shown):
    """The code block after the page's marker is the file, byte for byte (GitHub shows pages as
    they are: an mkdocs include line would show there as text)."""
    text = page.read_text()
    marker = f"<!-- {shown}, whole: tests/test_protocol_docs.py keeps this copy equal to the file -->\n```python\n"
    assert marker in text, f"{page.name} lost its copy of {shown}"
    body = text[text.index(marker) + len(marker):]
    body = body[: body.index("\n```\n") + 1]
    assert body == (ROOT / shown).read_text(), f"copy {shown} into {page.relative_to(ROOT)} again"


def test_no_page_includes_a_file_by_an_include_line():
    """No page uses mkdocs' include syntax (`--8<--`), which GitHub shows as a line of text."""
    offenders = [f"{p.relative_to(ROOT)}:{i + 1}" for p in PAGES for i, text in enumerate(p.read_text().splitlines())
                 if text.strip().startswith("--8" + "<--")]
    assert offenders == []


def _measured_kb() -> dict[tuple[str, ...], tuple[float, float]]:
    """The smallest and largest decision message (kB, to 0.1) of each kind of fields, over 15
    random games of 2 to 4 players (oracle and demon in some), with a 16-digit key."""
    sizes: dict[tuple[str, ...], list[int]] = {f: [] for f in FIELD_CHOICES}
    for n in (2, 3, 4):
        for seed in range(5):
            env = bali_env.raw_env(num_players=n, oracle=seed % 2 == 0, demon=seed % 3 == 0)
            env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            while not all(env.terminations.values()):
                o = env.observe(env.agent_selection)
                for fields, kept in sizes.items():
                    message = decide_message(o["observation"], o["action_mask"], 17, 3, None, fields)
                    kept.append(len(line(message | {"key": 7307374982038541})))
                env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return {f: (round(min(v) / 1000, 1), round(max(v) / 1000, 1)) for f, v in sizes.items()}


def test_the_message_sizes_quoted_are_the_sizes_measured():
    """The page's sizes of a decision message, for each choice of fields, are the measured ones."""
    text = " ".join(PROTOCOL.read_text().split())
    quoted = re.search(r"a decision message is ([\d.]+) to ([\d.]+) kB with the view and the observation \(the "
                       r"default\), ([\d.]+) to ([\d.]+) kB with the view only, ([\d.]+) to ([\d.]+) kB with the "
                       r"observation only, and ([\d.]+) to ([\d.]+) kB lean", text)
    assert quoted, "the sentence with the sizes is gone from docs/protocol.md"
    figures = [float(x) for x in quoted.groups()]
    measured = _measured_kb()
    assert figures == [x for f in FIELD_CHOICES for x in measured[f]]


def test_the_example_messages_of_the_page_are_messages():
    """Every whole JSON message in the page's table passes the schema (those from bali as
    ``ToBot``, the bot's as ``BotHello`` or ``Answer``); the decision's elided one has a key below
    2^53 and a null clock."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "protocol.schema.json").read_text())

    def valid(name: str, message: object) -> bool:
        return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]}).is_valid(message)

    table = PROTOCOL.read_text().split("| from bali | when | the bot answers |")[1].split("\n\n")[0]
    rows = [re.findall(r"`([^`]+)`", row) for row in table.splitlines()[2:]]
    checked = 0
    for row in rows:
        for k, span in enumerate(row):
            try:
                message = json.loads(span)
            except ValueError:
                continue
            if not isinstance(message, (dict, int)) or (isinstance(message, dict) and "type" not in message
                                                         and "action" not in message):
                continue
            if k == 0:
                assert valid("ToBot", message), span
            else:
                assert valid("BotHello", message) or valid("Answer", message), span
            checked += 1
    assert checked >= 7
    decide = next(r[0] for r in rows if r[0].startswith('{"type": "decide"'))
    key = int(re.search(r'"key": (\d+)', decide).group(1))
    assert key < 2**53 and '"time_left": null' in decide
    for action, name in re.findall(r'\{"id": (\d+), "name": "([^"]+)"\}', decide):
        assert ACTION_NAMES[int(action)] == name
