"""Game records and ``bali replay``: records of AEC games save, load and replay to their scores;
a tampered or malformed file is refused with a clear message; the viewer steps forward and back."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bali_env
from bali_env.envs.records import load_record, replay_states, save_record, validate_record
from bali_env.apps import replay
from bali_env.arena import deal_seed
from bali_env.apps.cli import parse_command


def run(argv, **kwargs):
    """``bali replay ARGV`` (``input_fn``, ``print_fn`` as ``replay.run`` takes them): its exit code."""
    return replay.run(parse_command(["replay", *argv]), **kwargs)


def _finished_record(seed=3, n=3, oracle=True, demon=False, reset_seed=True):
    env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
    if reset_seed:
        env.reset(seed=seed)
    else:
        env.reset(seed=seed)
        env.reset()  # the second game of the stream: the record must still deal it again
    rng = np.random.default_rng(seed)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    return env.game_record(["random"] * n), env.state_dict()


@pytest.mark.parametrize("reset_seed", [True, False])
def test_record_round_trip_replays_to_the_same_game(tmp_path, reset_seed):
    """save -> load -> replay gives the very same final state (also for a seedless reset)."""
    record, final = _finished_record(reset_seed=reset_seed)
    path = save_record(record, tmp_path / "game.json")
    loaded = load_record(path)
    assert loaded["final_scores"] == final["scores"] and loaded["winners"] == final["winners"]
    assert validate_record(loaded).state_dict() == final
    positions = replay_states(loaded)
    assert len(positions) == len(record["actions"]) + 1
    assert positions[-1].state_dict() == final


def test_record_with_options_replays(tmp_path):
    """A game dealt from reset options records them and replays from them."""
    deck = [0] * 12 + [1] * 9 + [2] * 9 + [3] * 5 + [4] * 5 + [5] * 5 + [6] * 5
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=1, options={"deck": deck, "starter_sets": [3, 1]})
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    record = env.game_record()
    assert record["options"]["starter_sets"] == [3, 1]
    assert load_record(save_record(record, tmp_path / "g.json"))["final_scores"] == env.state_dict()["scores"]


@pytest.mark.parametrize(
    "tamper,message",
    [
        (lambda r: r["final_scores"].__setitem__(0, r["final_scores"][0] + 1), "does not replay to its result"),
        (lambda r: r["actions"].__setitem__(0, 29), "does not replay"),
        (lambda r: r["actions"].append(4), "game ended"),
        (lambda r: r.__setitem__("version", 99), "version"),
        (lambda r: r.__setitem__("num_players", 5), "num_players"),
        (lambda r: r.__setitem__("seed", "x"), "seed"),
        (lambda r: r.__setitem__("seed", True), "seed must be an integer"),
    ],
)
def test_bad_records_are_refused(tmp_path, capsys, tamper, message):
    """A record that does not replay to its recorded result, or is malformed, is refused: one
    line on stderr, exit code 2, nothing else printed."""
    record, _ = _finished_record()
    tamper(record)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match=message):
        load_record(path)
    out = []
    assert run([str(path)], print_fn=out.append) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"bali replay: error: refusing {path}") and out == []


def test_replay_viewer_steps_forward_and_back(tmp_path):
    """Scripted keys: next, next, previous, jump, end, quit; frames show the step and the move."""
    record, final = _finished_record(n=2, oracle=False)
    path = save_record(record, tmp_path / "g.json")
    keys = iter(["n", "n", "p", "5", "e", "q"])
    out = []
    assert run([str(path)], input_fn=lambda _: next(keys), print_fn=out.append) == 0
    headers = [o.splitlines()[0] for o in out]
    last = len(record["actions"])
    assert headers == [f"--- step {i}/{last} ---" for i in (0, 1, 2, 1, 5, last)]
    assert bali_env.action_to_str(record["actions"][0]) in out[1]
    assert "Final scores: " + ", ".join(f"player_{q} (random) {x}" for q, x in enumerate(final["scores"])) \
        in out[-1].replace("\n    ", " ")  # (wrapped to the terminal)


@pytest.mark.parametrize("seat", [None, 1])
def test_the_last_step_says_the_result_in_words(tmp_path, seat):
    """The replay ends with every player's score and the winner(s) in words, not Python lists."""
    record, final = _finished_record(n=3, oracle=False)
    for winners in (final["winners"], [0, 2]):  # one winner; a shared win (a record saying so)
        rec = dict(record, winners=winners)
        frames = _frames(rec, seat)
        last = frames[-1].splitlines()[-2:]
        scores = ", ".join(f"player_{q} (random) {x}" for q, x in enumerate(final["scores"]))
        who = " and ".join(f"player_{w} (random)" for w in winners)
        assert last == [f"Final scores: {scores}.", f"Winner: {who}." if len(winners) == 1 else f"Shared win: {who}."]
        assert "[" not in "".join(last) and "'" not in "".join(last)
        assert not any("Final scores" in f for f in frames[:-1])


def _frames(record, seat):
    """The frames of ``record`` as ``bali replay --all`` draws them on a wide terminal (the record
    is not validated: a changed result still shows)."""
    from bali_env.apps.replay import frame

    positions = replay_states(record)
    return [frame(record, positions, i, seat, width=1000) for i in range(len(positions))]


def test_an_unfinished_game_says_so_at_its_last_step(tmp_path):
    """A record of a game left early (bali play's q) ends by saying it was unfinished."""
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=4)
    for _ in range(7):
        env.step(env.legal_actions()[0])
    record = env.game_record(["human", "greedy"])
    out = []
    assert run([str(save_record(record, tmp_path / "g.json")), "--all"], print_fn=out.append) == 0
    assert out[-1].splitlines()[-1] == "The game was left unfinished after 7 moves."


def test_the_public_replay_never_says_your(tmp_path):
    """The public table (no --seat) speaks of every player in the third person: no "your"/"you"."""
    import re

    seen = set()
    for seed in range(3):
        record, _ = _finished_record(seed=seed, n=3, oracle=True, demon=True)
        out = []
        assert run([str(save_record(record, tmp_path / f"g{seed}.json")), "--all"], print_fn=out.append) == 0
        for text in out:
            assert not re.search(r"\byou(r)?\b", text, re.IGNORECASE), text
            seen.update(line.split(": ", 2)[-1] for line in text.splitlines() if line.startswith("To decide: "))
    assert len(seen) >= 6  # the frames covered most decisions (play, offerings, refill, oracle, ...)


@pytest.mark.parametrize("columns", [60, 100])
def test_replay_lines_fit_the_terminal(tmp_path, monkeypatch, columns):
    """Every printed line fits the terminal's width (COLUMNS), long agent names included."""
    record, _ = _finished_record(n=4, oracle=True)
    record["agents"] = ["a_rather_long_bot_file.py:SomeBotClass:depth=3,width=12"] * 4
    path = save_record(record, tmp_path / "g.json")
    monkeypatch.setenv("COLUMNS", str(columns))
    out = []
    assert run([str(path), "--all"], print_fn=out.append) == 0
    lines = "\n".join(out).splitlines()
    assert max(len(line) for line in lines) <= columns
    assert max(len(line) for line in lines) > 55  # the long lines were there, wrapped


@pytest.mark.parametrize(("argv", "says"), [
    (["--seat", "3"], "--seat must be 0..2"),
    (["--seat", "-1"], "--seat must be 0..2"),
    (["--step", "-1"], "--step must be 0.."),
    (["--step", "100000"], "--step must be 0.."),
])
def test_bad_options_are_refused_before_anything_is_printed(tmp_path, capsys, argv, says):
    """--seat and --step out of range: one line on stderr, exit code 2, no frame printed."""
    record, _ = _finished_record(n=3)
    out = []
    assert run([str(save_record(record, tmp_path / "g.json")), *argv], print_fn=out.append) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("bali replay: error: ") and says in line and out == []


def test_replay_all_prints_every_step(tmp_path):
    """--all prints one frame per position and exits."""
    record, _ = _finished_record(n=2, oracle=False)
    out = []
    assert run([str(save_record(record, tmp_path / "g.json")), "--all"], print_fn=out.append) == 0
    assert len(out) == len(record["actions"]) + 1


@pytest.mark.parametrize("workers", [1, 2])
def test_tournament_saves_replayable_records(tmp_path, workers):
    """--save-records: one record per game, each replaying (in the AEC env) to the tournament's
    own result for that game, with the lineup as the agents."""
    from bali_env.arena import run_tournament

    result = run_tournament(["greedy", "random"], num_players=2, games=6, seed=9, workers=workers,
                            out_dir=tmp_path, progress=False, save_records=True)
    files = sorted((tmp_path / "records").glob("game_*.json"))
    assert len(files) == 6
    for f, game in zip(files, result.games, strict=True):
        record = load_record(f)
        assert record["seed"] == deal_seed(9, game["game"])
        assert record["final_scores"] == game["scores"] and record["winners"] == game["winners"]
        assert record["agents"] == game["lineup"]
        assert "actions" not in game


def test_replay_from_one_seat_shows_only_that_players_knowledge(tmp_path):
    """--seat K draws every frame from player K's observation: the same observation gives the same
    frame, and the frames differ between seats (own offering cards are private)."""
    import copy

    from bali_env.pictures.text import render_view
    from bali_env.engine.decode import decode_observation

    record, _ = _finished_record(n=3, oracle=False)
    path = save_record(record, tmp_path / "g.json")
    out0, out1 = [], []
    assert run([str(path), "--seat", "0", "--all"], print_fn=out0.append) == 0
    assert run([str(path), "--seat", "1", "--all"], print_fn=out1.append) == 0
    assert len(out0) == len(record["actions"]) + 1
    assert out0 != out1
    # a frame depends on the seat's observation only: a hidden difference leaves it unchanged
    env = bali_env.raw_env(num_players=3)
    found = False
    for seed in range(100):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()):
            sd = env.state_dict()
            hidden = [a for a in env.legal_actions() if 21 <= a <= 24]
            if sd["phase"] == "offer_own" and sd["to_move"] == sd["active"] and len(hidden) >= 2:
                found = True
                break
            env.step(int(rng.choice(env.legal_actions())))
        if found:
            break
    assert found
    a_env, b_env = copy.deepcopy(env), copy.deepcopy(env)
    a_env.step(hidden[0])
    b_env.step(hidden[1])
    watcher = (sd["active"] + 1) % 3
    labels = ["player_0", "player_1", "player_2"]
    frames = [render_view(decode_observation(e.observe(f"player_{watcher}")["observation"]), watcher, labels)
              for e in (a_env, b_env)]
    assert frames[0] == frames[1]
    with pytest.raises(SystemExit):
        run([str(path), "--seat"], print_fn=out0.append)


def test_replay_move_lines_hide_what_the_viewer_did_not_see(tmp_path):
    """--seat K and the public replay show another player's face-down offering as "offer a card
    face down" and an oracle take as "oracle: take a card"; the mover's own seat, and --reveal,
    show the move in full."""
    from bali_env.engine import ACTION_NAMES, is_oracle_take
    from bali_env.apps.replay import move_line
    from bali_env.engine.decode import decode_observation

    hidden = {"offer_face_down": 0, "oracle": 0}
    for seed in range(4):
        record, _ = _finished_record(seed=seed, n=3, oracle=True)
        positions = replay_states(record)
        for i in range(1, len(positions)):
            prev = positions[i - 1]
            mover = prev.agent_name_mapping[prev.agent_selection]
            action = record["actions"][i - 1]
            decision = decode_observation(prev.observe(prev.agent_selection)["observation"]).decision
            secret = decision == "offer_face_down" or (decision == "oracle" and is_oracle_take(action))
            for seat in (None, 0, 1, 2):
                line = move_line(record, positions, i, seat)
                if secret and seat != mover:
                    assert ACTION_NAMES[action] not in line, line
                    assert line.endswith(("offer a card face down", "oracle: take a card")), line
                else:
                    assert line.endswith(ACTION_NAMES[action]), line
                assert move_line(record, positions, i, seat, reveal=True).endswith(ACTION_NAMES[action])
            if secret:
                hidden[decision] += 1
    assert hidden["offer_face_down"] > 0 and hidden["oracle"] > 0
    path = save_record(record, tmp_path / "game.json")
    out: list[str] = []
    assert run([str(path), "--all", "--reveal"], print_fn=out.append) == 0
    assert "(moves revealed)" in out[1]


@pytest.mark.parametrize("field, value, says", [
    ("seed", True, "record field seed must be an integer (the reset seed that deals the game), got True"),
    ("num_players", True, "record field num_players must be 2, 3 or 4 (an integer), got True"),
    ("version", True, "not a 'bali-env game record' version 1 (format='bali-env game record', version=True)"),
    ("format", "bali-env results", "not a 'bali-env game record' version 1 (format='bali-env results', version=1)"),
    ("actions", [4, True], "record field actions[1]: Input should be a valid integer"),
    ("variants", {"oracle": 1, "demon": False}, "record field variants.oracle: Input should be a valid boolean"),
    ("variants", {"oracle": True, "demon": False, "fog": True}, "record field variants.fog: Extra inputs"),
    ("agents", ["random"], "record field agents must be a list of 3 names (one per seat), got ['random']"),
    ("agents", [1, 2, 3], "record field agents[0]: Input should be a valid string"),
    ("options", {"deck": [0, False]}, "record field options.deck[1]: Input should be a valid integer"),
    ("final_scores", "41", "record field final_scores must be a list of scores, one per seat, or null, got '41'"),
])
def test_the_record_model_names_the_bad_field(field, value, says):
    """Every field of a record is read by the declared ``RecordModel``: a bool is not an int (nor an
    int a bool), lists hold what they must, variants are exactly oracle and demon; one ValueError
    naming the field, before anything is replayed."""
    record, _ = _finished_record()
    with pytest.raises(ValueError) as exc:
        validate_record(dict(record, **{field: value}))
    assert str(exc.value).startswith(says), str(exc.value)


def test_the_record_model_reads_what_the_env_writes():
    """``RecordModel`` and the env agree: the format it asks for is the env's, a record the env
    writes (finished or not, with or without agents and options) passes it, and the optional
    fields may be absent."""
    from typing import get_args

    from bali_env.envs.records import FORMAT, RecordModel, parse_record

    assert get_args(RecordModel.model_fields["format"].annotation) == (FORMAT,)
    record, final = _finished_record()
    fields = parse_record(record)
    assert fields.actions == record["actions"] and fields.final_scores == final["scores"]
    bare = {k: v for k, v in record.items() if k not in ("env", "options", "agents", "final_scores", "winners")}
    assert parse_record(bare).agents is None
    for not_a_record in ([], "x", None):
        with pytest.raises(ValueError, match="a game record is a JSON object"):
            parse_record(not_a_record)


@pytest.mark.slow
def test_a_pipe_closed_early_ends_quietly(tmp_path):
    """``bali replay GAME --all | head``: the reader goes away after one line; the command ends
    with exit code 141 (a shell's for SIGPIPE), nothing on stderr (before: a BrokenPipeError
    traceback, exit 1)."""
    import subprocess
    import sys

    record, _ = _finished_record()
    path = save_record(record, tmp_path / "g.json")
    proc = subprocess.Popen([sys.executable, "-m", "bali_env.apps.cli", "replay", str(path), "--all"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"--- step 0/")
    proc.stdout.close()  # as head does after its lines
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == ""


@pytest.mark.parametrize("make, says", [
    (lambda tmp: tmp / "nope.json", "cannot read game record '{}': no such file"),
    (lambda tmp: tmp, "cannot read game record '{}': a folder, not a file"),
])
def test_a_file_that_is_not_there_is_named_so(tmp_path, capsys, make, says):
    """``bali replay /tmp/nope.json``: one line saying there is no such file (before: "is not a
    regular file", as for a device), exit code 2."""
    path = make(tmp_path)
    assert run([str(path)]) == 2
    assert capsys.readouterr().err == f"bali replay: error: {says.format(path)}\n"


@pytest.mark.parametrize("content, says", [
    ("<!DOCTYPE html>\n<html><body>a replay</body></html>\n", "it is an HTML page (a replay page, as bali replay "
                                                                "--html writes), not JSON"),
    ("hello", "not JSON (Expecting value: line 1 column 1 (char 0))"),
])
def test_a_file_that_is_not_a_record_says_what_bali_replay_reads(tmp_path, capsys, content, says):
    """``bali replay game.html``: one line saying the file is an HTML page, not JSON, and what a game
    record is and which commands write one (before: "Expecting value: line 1 column 1 (char 0)")."""
    path = tmp_path / "game.html"
    path.write_text(content)
    assert run([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"bali replay: error: cannot read game record '{path}': {says}; ")
    assert "a game record is the JSON file that bali play --save FILE or bali tournament --save-records" in err
