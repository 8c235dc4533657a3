"""The published JSON Schema of the bot protocol (docs/protocol.schema.json) is the one the models
generate, and every message of real games (a tournament with a forfeit, the game clock, lean and
full decisions, ``bali play``, a training opponent) passes it and the strict models: every count
named (zeros too), a ``key`` every JSON parser reads exactly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bali_env
from bali_env.arena import run_tournament
from bali_env.bots.protocol import CommandAgent
from bali_env.bots.protocol.schema import KEY_LIMIT, SCHEMA_FILE, TO_BOT, main, protocol_schema, schema_text
from bali_env.engine.ids import CARD_KEYS, CATEGORY_NAMES, N_CARD_TYPES

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
FAULTY = f"{sys.executable} {ROOT / 'tests' / 'faulty_bot.py'}"
# a bot that keeps every line it gets (appended to argv[1]) and asks for the fields argv[2] names
RECORDER = """\
import json, sys
fields = {"full": None, "lean": [], "view": ["view"], "observation": ["observation"]}[sys.argv[2]]
for raw in sys.stdin:
    with open(sys.argv[1], "a") as kept:
        kept.write(raw)
    m = json.loads(raw)
    if m["type"] == "hello":
        hello = {"type": "hello", "version": 1, "name": "rec-" + sys.argv[2]}
        print(json.dumps(hello if fields is None else hello | {"fields": fields}), flush=True)
    elif m["type"] == "decide":
        print(json.dumps({"action": m["legal"][-1]["id"]}), flush=True)
    elif m["type"] == "quit":
        break
"""


def validator(name: str) -> jsonschema.protocols.Validator:
    """A validator of ``#/$defs/NAME`` of the committed schema file."""
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]})


def recorder(tmp_path: Path, fields: str) -> tuple[str, Path]:
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    kept = tmp_path / f"lines-{fields}.jsonl"
    return f"{sys.executable} {script} {kept} {fields}", kept


@pytest.fixture(scope="module")
def real_lines(tmp_path_factory) -> list[str]:
    """Every line four recording bots got: a 3-player tournament with both variants, a game clock
    and a bot that crashes in every other game; ``bali play``; a training opponent."""
    tmp = tmp_path_factory.mktemp("lines")
    bots = {f: recorder(tmp, f) for f in ("full", "lean", "view", "observation")}
    specs = [f"cmd:{bots['full'][0]}", f"cmd:{bots['lean'][0]}", f"cmd:{FAULTY} crash 5 2", "random"]
    result = run_tournament(specs, num_players=3, games=8, seed=5, workers=1, oracle=True, demon=True,
                            game_time=300, progress=False)
    assert any(g.get("forfeit") for g in result.games) and any(g.get("scores") for g in result.games)
    from bali_env.apps.terminal import play_game

    answers = iter(["1"] * 6)  # then the person leaves: an end without scores
    play_game(2, [f"cmd:{bots['view'][0]}"], seed=3, input_fn=lambda prompt: next(answers, "q"),
              print_fn=lambda *a: None)
    agent = CommandAgent(bots["observation"][0])  # as a training opponent: no start, no end, game null
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=2)
    for _ in range(3):
        o = env.observe(env.agent_selection)
        env.step(agent.act(o["observation"], o["action_mask"]))
    agent.close()
    return [line for _, kept in bots.values() for line in kept.read_text().splitlines()]


def test_the_committed_schema_is_the_generated_one(tmp_path, capsys):
    """docs/protocol.schema.json is what `python -m bali_env.bots.protocol.schema` writes now,
    and the check notices a stale file."""
    assert SCHEMA_FILE.read_text() == schema_text(), "regenerate: python -m bali_env.bots.protocol.schema"
    assert main(["--check"]) == 0
    stale = tmp_path / "schema.json"
    stale.write_text(schema_text().replace('"minimum": 0', '"minimum": 1', 1))
    assert main(["--check", str(stale)]) == 1 and "out of date" in capsys.readouterr().out
    assert main([str(stale)]) == 0 and stale.read_text() == schema_text()
    schema = protocol_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert {"ToBot", "BotHello", "Answer", "HelloMessage", "StartMessage", "DecideMessage", "EndMessage",
            "QuitMessage", "View"} <= set(schema["$defs"])


def test_every_real_message_passes_the_schema_and_the_models(real_lines):
    """Each line of real games passes the schema file and the strict models (no key more or less,
    no other type), and every kind of message is among them."""
    to_bot = validator("ToBot")
    kinds = set()
    for line in real_lines:
        message = json.loads(line)
        errors = [e.message for e in to_bot.iter_errors(message)]
        assert errors == [], (errors[:3], line[:300])
        TO_BOT.validate_json(line)
        kind = message["type"]
        if kind == "decide":
            kind += "/" + "+".join(k for k in ("view", "observation") if k in message)
            kind += ("/clock" if message["time_left"] is not None else "") + ("/training" if message["game"] is None
                                                                              else "")
        if kind == "end":
            kind += "/forfeit" if message["forfeit"] else "/scores" if message["final_scores"] else "/early"
        kinds.add(kind)
    assert kinds >= {"hello", "start", "quit", "end/forfeit", "end/scores", "end/early", "decide//clock",
                     "decide/view+observation/clock", "decide/view", "decide/observation/training"}, kinds


def test_counts_name_every_card_and_category_and_keys_are_exact_in_any_json(real_lines):
    """``hand``, ``tableau``, ``deck_cards`` list every card as ``supply`` lists every category,
    zeros included (``hand["shrine"]`` is 0, not missing); ``key`` is below 2^53."""
    decides = [json.loads(line) for line in real_lines if '"type":"decide"' in line]
    views = [m["view"] for m in decides if "view" in m]
    assert views
    zeros = 0
    for v in views:
        assert list(v["supply"]) == list(CATEGORY_NAMES) and list(v["deck_cards"]) == list(CARD_KEYS)
        for seat in v["seats"]:
            assert list(seat["hand"]) == list(seat["tableau"]) == list(CARD_KEYS[:N_CARD_TYPES])
            zeros += list(seat["hand"].values()).count(0)
    assert zeros > 0
    keys = [m["key"] for m in decides]
    assert all(isinstance(k, int) and 0 <= k < KEY_LIMIT for k in keys) and len(set(keys)) > len(keys) // 2


def test_javascript_reads_the_key_exactly(real_lines):
    """Node's JSON.parse reads a real decision's key as the very integer bali sent."""
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed (apt-get install nodejs)")
    lines = [line for line in real_lines if '"type":"decide"' in line][:50]
    read = subprocess.run(["node", "-e", "require('readline').createInterface({input: process.stdin})"
                           ".on('line', l => console.log(String(JSON.parse(l).key)))"],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout.split()
    assert read == [str(json.loads(line)["key"]) for line in lines]


@pytest.mark.parametrize("change, where", [
    (lambda m: m["view"]["seats"][0]["hand"].pop("shrine"), "shrine"),
    (lambda m: m.update(key=2**64 - 1), "key"),
    (lambda m: m.update(extra=1), "extra"),
    (lambda m: m["view"]["altar"].update(top=["rice"] * 5), "top"),
    (lambda m: m.update(time_left="9.5"), "time_left"),
])
def test_the_schema_and_the_models_refuse_a_message_that_drifted(real_lines, change, where):
    """The checks can fail: a missing zero count, a key above 2^53, a key bali does not send, a
    too long altar top, a number as a string are each refused by the schema and by the models."""
    message = json.loads(next(line for line in real_lines if '"view"' in line and '"type":"decide"' in line))
    change(message)
    assert not validator("ToBot").is_valid(message), where
    with pytest.raises(ValueError):
        TO_BOT.validate_python(message)


def test_the_bots_answers_pass_the_schema(tmp_path):
    """What a bot answers is declared too: the example bot's hello and answer, an id alone, and
    the hello fields."""
    hello, answer = validator("BotHello"), validator("Answer")
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=1)
    o = env.observe(env.agent_selection)
    from bali_env.bots.protocol.messages import decide_message, hello_message, line

    decide = decide_message(o["observation"], o["action_mask"], 0, 0, None) | {"key": 12345}
    said = subprocess.run([sys.executable, str(ROOT / "agents" / "random_bot.py")], input=line(
        hello_message(10.0, None)) + line(decide) + b'{"type": "quit"}\n', capture_output=True, check=True,
        timeout=60).stdout.decode().splitlines()
    assert hello.is_valid(json.loads(said[0])) and answer.is_valid(json.loads(said[1]))
    assert answer.is_valid(29) and answer.is_valid({"action": 29}) and not answer.is_valid("29")
    assert hello.is_valid({"type": "hello", "version": 1, "fields": []})
    assert not hello.is_valid({"type": "hello", "version": 2}) and not hello.is_valid({"type": "hello"})
