"""Bots in any language (docs/protocol.md): the messages say what the seat knows by name; the two
example bots (Python, JavaScript) play tournaments to the end, the same games whatever the
workers; every fault (timeout, crash, illegal, protocol: garbage, chatter, flood) loses the game
it happens in and only that one, the bot is restarted, the tournament goes on and resumes; bad
specs are refused with one line before any game; ``bali play``, the web app and training take
``cmd:`` bots too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import bali_env
from bali_env.bots.protocol import BotFault, CommandAgent
from bali_env.bots.protocol.messages import decide_message, parse_answer
from bali_env.arena import TournamentError, run_tournament
from bali_env.engine.ids import ACTION_NAMES
from bali_env.engine.decode import decode_observation

ROOT = Path(__file__).resolve().parent.parent
PY_BOT = f"cmd:{sys.executable} {ROOT / 'agents' / 'random_bot.py'}"
JS_BOT = f"cmd:node {ROOT / 'agents' / 'greedy_bot.js'}"
FAULTY = f"{sys.executable} {ROOT / 'tests' / 'faulty_bot.py'}"


def faulty(*args: object) -> str:
    return f"cmd:{FAULTY} " + " ".join(str(a) for a in args)


def node() -> None:
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed (apt-get install nodejs)")


# ----------------------------------------------------------------------------- messages
def test_a_decision_message_says_what_the_seat_knows_by_name():
    env = bali_env.raw_env(num_players=3, oracle=True, demon=True)
    env.reset(seed=4)
    rng = np.random.default_rng(2)
    for _ in range(60):
        o = env.observe(env.agent_selection)
        message = json.loads(json.dumps(decide_message(o["observation"], o["action_mask"], 5, 3, None)))
        view = decode_observation(o["observation"])
        v = message["view"]
        assert v["decision"] == view.decision and v["num_players"] == 3 and v["oracle"] and v["demon"]
        assert [a["id"] for a in message["legal"]] == np.flatnonzero(o["action_mask"]).tolist()
        assert all(a["name"] == ACTION_NAMES[a["id"]] for a in message["legal"])
        assert np.allclose(message["observation"], o["observation"], atol=1e-6)
        for r, seat in enumerate(v["seats"]):
            assert sum(seat["hand"].values()) == view.hands[r].sum() and seat["stones"] == view.stones[r]
            assert list(seat["offerings_min"].values()) == view.offerings_min[r].tolist()
        assert [len(c) for c in v["market"]] == [len(c) for c in view.market]
        assert v["deck_size"] == view.deck_size and v["altar"]["size"] == view.altar_size
        assert v["demon_column"] == view.demon_column
        env.step(int(rng.choice(env.legal_actions())))


def test_answers_are_checked():
    mask = np.zeros(44, dtype=np.int8)
    mask[[4, 29]] = 1
    assert parse_answer(b"29", mask) == 29 and parse_answer(b'{"action": 4}', mask) == 4
    for raw, reason in ((b"31", "illegal"), (b"99", "illegal"), (b"-1", "illegal"), (b"true", "protocol"),
                        (b"29.0", "protocol"), (b'"29"', "protocol"), (b"take column 0", "protocol"),
                        (b'{"act": 4}', "protocol"), (b"[" * 5000, "protocol")):
        with pytest.raises(BotFault) as exc:
            parse_answer(raw, mask)
        assert exc.value.reason == reason, raw


@pytest.mark.parametrize("raw, says", [
    (b'{"type": "hello", "version": 1, "fields": "view"}', "hello fields must be a list drawn from "
                                                            "['view', 'observation'], got 'view'"),
    (b'{"type": "hello", "version": 1, "fields": ["view", 3]}', "hello fields must be a list drawn from "
                                                                 "['view', 'observation'], got ['view', 3]"),
    (b'{"type": "hello", "version": 1, "fields": null}', "hello fields must be a list"),
    (b'{"type": "hello", "version": true}', "the bot speaks version True; this is version 1"),
    (b'{"type": "hello", "version": "1"}', "the bot speaks version '1'; this is version 1"),
    (b'{"type": "hello"}', "the bot speaks version None; this is version 1"),
    (b'{"type": "hi", "version": 1}', 'expected {"type": "hello", "version": 1, ...}'),
    (b'[1]', 'expected {"type": "hello", "version": 1, ...}'),
    (b"hello!", 'expected {"type": "hello", "version": 1, ...}, got b\'hello!\''),
])
def test_a_bad_hello_is_a_protocol_fault(raw, says):
    """The hello a bot answers is read by the declared ``BotHello``: a bad ``fields``, another (or a
    bool) version, or anything but a hello is a ``protocol`` fault saying so."""
    from bali_env.bots.protocol.messages import parse_hello

    with pytest.raises(BotFault) as exc:
        parse_hello(raw)
    assert exc.value.reason == "protocol" and exc.value.detail.startswith(says), exc.value.detail


def test_a_good_hello_gives_the_name_and_the_fields():
    """A hello's name is kept (cut to 60 characters; a blank or non-string one is no name), its
    fields come back in the protocol's order, once each; other keys are ignored."""
    from bali_env.bots.protocol.messages import parse_hello

    assert parse_hello(b'{"type": "hello", "version": 1}') == ("", ("view", "observation"))
    assert parse_hello(b'{"type": "hello", "version": 1, "name": "mine", "x": 1}') == ("mine", ("view", "observation"))
    assert parse_hello(('{"type": "hello", "version": 1, "name": "%s"}' % ("b" * 99)).encode())[0] == "b" * 60
    for name in ('"  "', "7", "null", '["a"]'):
        assert parse_hello(b'{"type": "hello", "version": 1, "name": %s}' % name.encode())[0] == ""
    fields = b'{"type": "hello", "version": 1, "fields": ["observation", "view", "observation"]}'
    assert parse_hello(fields) == ("", ("view", "observation"))
    assert parse_hello(b'{"type": "hello", "version": 1, "fields": []}') == ("", ())


def test_the_messages_bali_sends_are_the_bytes_the_docs_show():
    """hello, start (in its caller's key order), a lean decide, end and quit, byte for byte."""
    from bali_env.bots.protocol.messages import QUIT, end_message, hello_message, line, start_message

    assert line(hello_message(10.0, None)) == \
        b'{"type":"hello","protocol":"bali-bot","version":1,"move_time":10.0,"game_time":null}\n'
    game = {"game": 17, "seat": 1, "num_players": 3, "variants": {"oracle": False, "demon": True},
            "agents": ["greedy", "mybot", "random"]}
    assert line(start_message(game)) == (b'{"type":"start","game":17,"seat":1,"num_players":3,"variants":'
                                         b'{"oracle":false,"demon":true},"agents":["greedy","mybot","random"]}\n')
    moved = {"game": 0, "num_players": 2, "variants": {"oracle": False, "demon": False}, "agents": ["human", "x"],
             "seat": 1}  # bali play's order
    assert line(start_message(moved)).startswith(b'{"type":"start","game":0,"num_players":2,') and \
        line(start_message(moved)).endswith(b'"agents":["human","x"],"seat":1}\n')
    mask = np.zeros(44, dtype=np.int8)
    mask[[4, 29]] = 1
    lean = line(decide_message(np.zeros(bali_env.OBS_DIM, np.float32), mask, 5, 3, 9.5, ()))
    names = [json.dumps(ACTION_NAMES[a]) for a in (4, 29)]
    assert lean == (f'{{"type":"decide","game":5,"decision":3,"time_left":9.5,"legal":[{{"id":4,"name":{names[0]}}},'
                    f'{{"id":29,"name":{names[1]}}}]}}\n').encode()
    assert line(end_message({"game": 17, "final_scores": [41, 38, 29], "winners": [0], "forfeit": None})) == \
        b'{"type":"end","game":17,"final_scores":[41,38,29],"winners":[0],"forfeit":null}\n'
    assert line(QUIT) == b'{"type":"quit"}\n'


# ----------------------------------------------------------------------------- the example bots
@pytest.mark.slow
def test_the_example_bots_play_tournaments_to_the_end(tmp_path):
    node()
    out = tmp_path / "t"
    result = run_tournament([PY_BOT, JS_BOT, "greedy"], num_players=3, games=6, seed=3, workers=2, out_dir=out,
                            progress=False, save_records=True)
    names = [p["name"] for p in result.participants]
    assert names == ["random-py", "greedy-js", "greedy"]
    assert all(sum(p["forfeits"].values()) == 0 for p in result.participants)
    assert len(result.games) == 6 and all(g["scores"] is not None for g in result.games)
    assert result.config["batch_size"] == 1  # one game at a time per bot process
    assert {p.name for p in (out / "logs").iterdir()} == {"random-py.log", "greedy-js.log"}
    assert result.timing["random-py"]["decisions"] > 50
    table = result.table(width=120)
    assert "forfeits" in table and "mean move" in table


@pytest.mark.slow
def test_a_bot_seeded_from_the_key_plays_the_same_games_whatever_the_workers(tmp_path):
    runs = [run_tournament([PY_BOT, "random"], num_players=2, games=6, seed=8, workers=w, out_dir=tmp_path / str(w),
                           progress=False) for w in (1, 2)]
    assert runs[0].to_dict()["games"] == runs[1].to_dict()["games"]
    assert runs[0].participants == runs[1].participants


# ----------------------------------------------------------------------------- faults
@pytest.mark.parametrize("mode, reason, says", [
    pytest.param("hang", "timeout", "no answer within 0.5 s", marks=pytest.mark.slow),  # waits out its clock
    ("crash", "crash", "exited with code 3"),
    ("illegal", "illegal", "action 99 is not legal"),
    ("garbage", "protocol", "not JSON"),
    ("chatty", "protocol", "not JSON"),
    ("flood", "protocol", "flood"),
])
def test_every_fault_loses_its_game_and_the_bot_is_restarted(tmp_path, mode, reason, says):
    out = tmp_path / "t"
    result = run_tournament([faulty(mode, 7), "random"], num_players=2, games=4, seed=1, workers=1, out_dir=out,
                            progress=False, move_time=0.5)
    bot = next(p for p in result.participants if p["name"] == f"faulty-{mode}")
    assert bot["forfeits"][reason] == 4 and sum(bot["forfeits"].values()) == 4  # every game: its 7th decision
    assert bot["wins"] == 0 and bot["games"] == 4
    games = result.to_dict()["games"]
    assert [g["game"] for g in games] == [0, 1, 2, 3]
    for g in games:
        seat = g["lineup"].index(f"faulty-{mode}")
        assert g["forfeit"]["seat"] == seat and g["forfeit"]["reason"] == reason and says in g["forfeit"]["detail"]
        assert g["winners"] == [1 - seat] and g["scores"] is None and g["decisions"] >= 12
    log = (out / "logs" / f"faulty-{mode}.log").read_text()
    assert log.count("misbehaving") == 4  # restarted after each fault: a new process counts from 1 again
    stray = subprocess.run(["pgrep", "-f", f"faulty_bot.py {mode} 7"], capture_output=True, text=True).stdout
    assert not stray.strip(), "a faulty bot's process outlived the tournament"
    index = (out / "index.html").read_text()
    assert f"forfeit: faulty-{mode} ({reason})" in index


# a bot that sends a line when no answer is due: MODE start (answers start with an action), end
# (answers end), twice (answers every decision with two lines)
UNASKED_BOT = """\
import json, sys
mode = sys.argv[1]
for raw in sys.stdin:
    m = json.loads(raw)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "version": 1, "name": "unasked-" + mode}), flush=True)
    elif m["type"] in ("start", "end") and m["type"] == mode:
        print(json.dumps({"action": 0}), flush=True)
    elif m["type"] == "decide":
        print(json.dumps({"action": m["legal"][0]["id"]}) + ("\\n0" if mode == "twice" else ""), flush=True)
    elif m["type"] == "quit":
        break
"""


def unasked(tmp_path: Path, mode: str) -> str:
    script = tmp_path / "unasked_bot.py"
    script.write_text(UNASKED_BOT)
    return f"{sys.executable} {script} {mode}"


@pytest.mark.parametrize("mode, says", [
    ("start", "a line sent when no answer was due: b'{\"action\": 0}'"),
    ("end", "a line sent when no answer was due: b'{\"action\": 0}'"),
    ("twice", "a line sent when no answer was due: b'0' came after the answer b'{\"action\": "),
])
def test_a_line_sent_when_no_answer_is_due_is_a_protocol_fault(tmp_path, mode, says):
    """A line answering ``start`` or ``end``, or a second line with an answer, is a ``protocol``
    fault where bali finds it (before its next message, or right after the answer), never read as
    the next answer."""
    agent = CommandAgent(unasked(tmp_path, mode))
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=1)
    o = env.observe(env.agent_selection)
    game = {"game": 0, "seat": 0, "num_players": 2, "variants": {"oracle": False, "demon": False}, "agents": ["a", "b"]}
    with pytest.raises(BotFault) as exc:
        agent.begin_game(game)
        if mode == "end":
            agent.end_game({"game": 0, "final_scores": None, "winners": [1], "forfeit": None})
            time.sleep(0.3)  # the line arrives
            agent.begin_game(game | {"game": 1})
        time.sleep(0.3)
        agent.act(o["observation"], o["action_mask"])
    assert exc.value.reason == "protocol" and exc.value.detail.startswith(says), exc.value.detail
    assert not agent.process.alive  # killed: the next game starts a new process
    agent.close()


def test_a_bot_that_answers_start_loses_by_protocol_not_one_decision_behind(tmp_path):
    """The issue's bot: it answers ``start`` with an action and then every decision. Each game is
    lost by ``protocol`` (the line is found before the first decision, or the illegal answer it
    became is followed by the real one), none played with the stale answer or lost as ``illegal``."""
    result = run_tournament([f"cmd:{unasked(tmp_path, 'start')}", "random"], num_players=2, games=8, seed=1,
                            workers=1, progress=False)
    assert [g["forfeit"]["reason"] for g in result.games] == ["protocol"] * 8
    assert all("a line sent when no answer was due" in g["forfeit"]["detail"] for g in result.games)


@pytest.mark.slow
def test_faults_in_some_games_leave_the_others_whole_and_resume(tmp_path):
    """A bot that crashes at its 5th decision of every third game: exactly those games are lost,
    the others finish; an interrupted run resumes to the very same results."""
    specs = [faulty("crash", 5, 3), "greedy"]
    full = run_tournament(specs, num_players=2, games=12, seed=2, workers=2, out_dir=tmp_path / "a", progress=False)
    lost = sorted(g["game"] for g in full.games if g.get("forfeit"))
    assert lost == [0, 3, 6, 9]
    assert all(g["scores"] is not None for g in full.games if g["game"] not in lost)
    cut = tmp_path / "b"
    run_tournament(specs, num_players=2, games=12, seed=2, workers=1, out_dir=cut, progress=False)
    lines = (cut / "journal.jsonl").read_text().splitlines()
    (cut / "journal.jsonl").write_text("\n".join(lines[:6]) + "\n")  # as if stopped after 5 games
    resumed = run_tournament(specs, num_players=2, games=12, seed=2, workers=2, out_dir=cut, progress=False,
                             resume=True)
    assert resumed.to_dict()["games"] == full.to_dict()["games"] and resumed.participants == full.participants


def test_a_game_budget_is_a_clock_too(tmp_path):
    result = run_tournament([faulty("slow", 10**6), "random"], num_players=2, games=2, seed=1, workers=1,
                            out_dir=tmp_path / "t", progress=False, game_time=0.15)
    assert [g["forfeit"]["reason"] for g in result.games] == ["timeout", "timeout"]
    assert all("for the game" in g["forfeit"]["detail"] or "no answer" in g["forfeit"]["detail"]
               for g in result.games)
    assert all(g["decisions"] < 40 for g in result.games)


def test_a_slow_in_process_agent_loses_on_the_clock(tmp_path):
    bot = tmp_path / "slow.py"
    bot.write_text("import time\nfrom bali_env.bots.random_agent import RandomAgent\n\n"
                   "class Slow(RandomAgent):\n    name = 'slow'\n\n"
                   "    def act_batch_keyed(self, o, m, k):\n        time.sleep(0.03)\n"
                   "        return super().act_batch_keyed(o, m, k)\n")
    result = run_tournament([f"{bot}:Slow", "random"], num_players=2, games=2, seed=1, workers=1, progress=False,
                            move_time=0.01)
    slow = next(p for p in result.participants if p["name"] == "slow")
    assert slow["forfeits"]["timeout"] == 2
    assert all(g["forfeit"]["seat"] == g["lineup"].index("slow") and g["decisions"] < 10 for g in result.games)


def test_an_in_process_agent_that_raises_loses_only_its_games(tmp_path):
    bot = tmp_path / "buggy.py"
    bot.write_text("from bali_env.bots.random_agent import RandomAgent\n\n"
                   "class Buggy(RandomAgent):\n    name = 'buggy'\n\n"
                   "    def act_batch_keyed(self, o, m, k):\n        if (o[:, 10:14].argmax(1) == 1).any():\n"
                   "            raise ZeroDivisionError('oops')\n        return super().act_batch_keyed(o, m, k)\n")
    kw = dict(num_players=2, games=64, seed=4, workers=1, progress=False)  # 64: batches of 8 (8 waves)
    big = run_tournament([f"{bot}:Buggy", "random"], batch_size=8, **kw)
    small = run_tournament([f"{bot}:Buggy", "random"], batch_size=1, **kw)
    assert big.games == small.games and big.participants == small.participants  # whatever the batching
    buggy = next(p for p in big.participants if p["name"] == "buggy")
    assert 0 < buggy["forfeits"]["crash"] < 64
    assert all("ZeroDivisionError: oops" in g["forfeit"]["detail"] for g in big.games if g.get("forfeit"))


# ----------------------------------------------------------------------------- refused before any game
@pytest.mark.parametrize("spec, says", [
    ("cmd:", "needs a program"),
    ("cmd:no-such-program-anywhere", "is not on the PATH"),
    ("cmd:./no/such/file", "does not exist"),
    ("cmd:python3 'unclosed", "cannot parse"),
    ("NOTEXEC", "is not executable"),
    ("OLDHELLO", "speaks version 0"),
])
def test_bad_bots_are_refused_before_any_game(tmp_path, spec, says):
    script = tmp_path / "bot.py"
    script.write_text("print('hi')\n")
    spec = {"NOTEXEC": f"cmd:{script}", "OLDHELLO": faulty("oldhello")}.get(spec, spec)
    with pytest.raises(TournamentError, match=says):
        run_tournament([spec, "random"], num_players=2, games=2, out_dir=tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_bot_that_never_says_hello_is_refused(tmp_path, monkeypatch):
    import bali_env.bots.protocol.process as process

    monkeypatch.setattr(process, "HELLO_SECONDS", 0.3)
    with pytest.raises(TournamentError, match="did not start: timeout"):
        run_tournament([faulty("nohello"), "random"], num_players=2, games=2, progress=False)


@pytest.mark.parametrize("argv, says", [
    (["--move-time", "0"], "--move-time"), (["--move-time", "nan"], "--move-time"),
    (["--game-time", "-3"], "--game-time"), (["--agents", "cmd:nope-not-here", "random"], "is not on the PATH"),
])
def test_the_command_line_refuses_bad_clocks_and_bots(tmp_path, capsys, argv, says):
    from bali_env.apps.cli import main

    args = ["tournament", "--agents", "random", "random", "--players", "2", "--games", "2",
            "--out", str(tmp_path / "o")]
    if argv[0] == "--agents":
        args = args[:1] + argv + args[4:]
    else:
        args += argv
    assert main(args) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------- everywhere else
def test_bali_play_ends_the_game_when_a_bot_fails():
    from bali_env.apps.terminal import play_game

    printed: list[str] = []
    record = play_game(2, [faulty("crash", 3)], seed=1, input_fn=lambda prompt: "1",
                       print_fn=lambda *a: printed.append(" ".join(map(str, a))))
    assert record["final_scores"] is None
    assert any("player_1 (cmd:" in line and "failed" in line and "exited with code 3" in line for line in printed)


def test_bali_play_against_a_bot_program_to_the_end():
    from bali_env.apps.terminal import play_game

    record = play_game(2, [PY_BOT], seed=2, input_fn=lambda prompt: "1", print_fn=lambda *a: None)
    assert record["final_scores"] is not None and record["agents"][1] == PY_BOT


def test_the_web_app_plays_a_bot_program():
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from bali_env.apps.web.app import create_app

    client = TestClient(create_app([PY_BOT]))
    state = client.post("/api/games", json={"players": 2, "seat": 0, "opponents": [PY_BOT], "seed": 3}).json()
    while state["status"] == "playing":
        if state["your_turn"]:
            state = client.post(f"/api/games/{state['id']}/move", json={"action": state["options"][0]["action"]}).json()
        else:
            state = client.post(f"/api/games/{state['id']}/advance").json()
    assert state["status"] == "over" and state["record"]["final_scores"] is not None


def test_training_takes_any_spec_with_weights():
    from bali_env.trainers.ppo_selfplay.pool import opponent_weights

    assert opponent_weights("greedy:1,self:1,ppo:2") == {"greedy": 1.0, "self": 1.0, "ppo": 2.0}
    assert opponent_weights("random:1,greedy:3,self:1") == {"random": 1.0, "greedy": 3.0, "self": 1.0}
    assert opponent_weights("mcts:sims=200,c=1.4:2,random") == {"mcts:sims=200,c=1.4": 2.0, "random": 1.0}
    assert opponent_weights(f"{PY_BOT}:3,self") == {PY_BOT: 3.0, "self": 1.0}
    assert opponent_weights("mcts") == {"mcts": 1.0}
    for text, says in (("nosuch:1", "unknown agent"), ("greedy:-1", ">= 0"), ("greedy:0", "positive weight"),
                       ("cmd:nope-not-here:1", "not on the PATH"), (":2", "without a spec")):
        with pytest.raises(ValueError, match=says):
            opponent_weights(text)


def test_a_bot_program_as_a_training_opponent_survives_its_faults(capsys):
    from bali_env.trainers.ppo_selfplay.pool import opponent

    bot = opponent(faulty("crash", 4), seed=0)
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=1)
    for _ in range(12):
        o = env.observe(env.agent_selection)
        action = int(bot.act_batch(o["observation"][None], o["action_mask"][None])[0])
        assert o["action_mask"][action]
        env.step(action)
    assert bot.faults == 3 and "a random move instead" in capsys.readouterr().err
    bot.agent.close()


def test_a_command_agent_outside_a_tournament():
    agent = CommandAgent(f"{sys.executable} {ROOT / 'agents' / 'random_bot.py'}", seed=1)
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=1)
    o = env.observe(env.agent_selection)
    assert o["action_mask"][agent.act(o["observation"], o["action_mask"])]
    assert agent.name == "random-py" and agent.process.alive
    agent.close()
    assert not agent.process.alive
    assert os.environ.get("PATH")  # the program was found on it


@pytest.mark.slow
@pytest.mark.parametrize("fields, expected", [
    (None, ["decision", "game", "key", "legal", "observation", "time_left", "type", "view"]),
    ([], ["decision", "game", "key", "legal", "time_left", "type"]),
    (["view"], ["decision", "game", "key", "legal", "time_left", "type", "view"]),
])
def test_a_bot_asks_for_the_fields_it_reads(tmp_path, fields, expected):
    hello = {"type": "hello", "name": "keys", "version": 1} | ({} if fields is None else {"fields": fields})
    script = tmp_path / "keys.py"
    script.write_text("import json, sys\n"
                      "for raw in sys.stdin:\n"
                      "    m = json.loads(raw)\n"
                      f"    if m['type'] == 'hello': print(json.dumps({hello!r}), flush=True)\n"
                      "    elif m['type'] == 'decide':\n"
                      "        print(json.dumps(sorted(m)), file=sys.stderr, flush=True)\n"
                      "        print(m['legal'][0]['id'], flush=True)\n")
    agent = CommandAgent(f"{sys.executable} {script}")
    agent.set_log(tmp_path / "keys.log")
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=1)
    o = env.observe(env.agent_selection)
    agent.act(o["observation"], o["action_mask"])
    agent.close()
    assert json.loads((tmp_path / "keys.log").read_text().splitlines()[0]) == expected


def test_a_hello_with_unknown_fields_is_refused(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("import sys\nfor raw in sys.stdin:\n"
                      "    print('{\"type\": \"hello\", \"version\": 1, \"fields\": [\"everything\"]}', flush=True)\n")
    agent = CommandAgent(f"{sys.executable} {script}")
    with pytest.raises(BotFault, match="hello fields"):
        agent.start()
    agent.close()


@pytest.mark.parametrize("name, first_line, runs_it", [
    ("bot.sh", "echo hi\n", "cmd:bash {}"), ("bot.py", "print(1)\n", "cmd:python3 {}"),
    ("bot.js", "x\n", "cmd:node {}"), ("bot", "#!/usr/bin/env ruby\n", "cmd:ruby {}"),
    ("bot.weird", "x\n", None),
])
def test_a_program_that_is_not_executable_gets_the_interpreter_of_its_kind(tmp_path, name, first_line, runs_it):
    """A ``cmd:`` program without the execute permission: chmod +x, or the spec with the interpreter
    its ending (or its #! line) calls for: bash for a .sh (before: python3 for every file), python3
    for a .py, node for a .js; none named when it is unknown."""
    from bali_env.bots.protocol.command_agent import parse_command

    script = tmp_path / name
    script.write_text(first_line)
    script.chmod(0o644)
    program = f"./{name}"
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        with pytest.raises(ValueError) as exc:
            parse_command(program)
    finally:
        os.chdir(cwd)
    text = str(exc.value)
    assert text.startswith(f"program '{program}' is not executable (") and f"chmod +x {program}" in text
    if runs_it is None:
        assert "interpreter" not in text
    else:
        assert text.endswith(f"run it with its interpreter: '{runs_it.format(program)}')")


@pytest.mark.parametrize("answer, reason", [("illegal", "illegal"), ("raise", "crash")])
def test_an_in_process_agent_that_always_fails_forfeits_every_game_in_one_process(tmp_path, answer, reason):
    """With one worker (the tournament plays in this process, after a warm-up game that compiles
    the kernels) a bot that answers an illegal action, or raises, from its first decision loses
    each game, and the tournament goes on to the end (the warm-up never plays its answers)."""
    bot = tmp_path / "bad.py"
    bot.write_text("import numpy as np\nfrom bali_env.bots.random_agent import RandomAgent\n\n"
                   "class Bad(RandomAgent):\n    name = 'bad'\n\n"
                   "    def act_batch(self, o, m):\n"
                   + ("        return np.argmin(m, axis=1)\n" if answer == "illegal" else
                      "        raise RuntimeError('always')\n")
                   + "\n    def act_batch_keyed(self, o, m, k):\n        return self.act_batch(o, m)\n")
    result = run_tournament([f"{bot}:Bad", "random"], num_players=2, games=4, seed=2, workers=1, progress=False)
    bad = next(p for p in result.participants if p["name"] == "bad")
    assert bad["forfeits"][reason] == 4 and len(result.games) == 4


def test_the_guide_says_what_an_illegal_answer_does():
    """docs/bots.md says what the tests above show: an illegal answer or an exception forfeits that
    game and the tournament goes on (it said the tournament stopped)."""
    text = " ".join((Path(__file__).resolve().parent.parent / "docs" / "bots.md").read_text().split())
    assert "An illegal answer (or an exception) forfeits that game" in text
    assert "the tournament goes on" in text and "stops a tournament" not in text
