"""The ``ppo`` agent's errors say what to do, in one line: a player count without a shipped policy
(a policies folder that lacks its file) names ``bali train --players N`` and ``ppo:path=FILE``; a
``ppo:path=`` that is not the ``.npz`` ``bali train`` writes (a Python file, a pickle, junk, an
.npz of something else) is refused without unpickling anything; the shipped policies play legal
moves, in 3 players the 4-player network cut to three seats."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

import bali_env
from bali_env.bots.registry import make_agent
from bali_env.bots.ppo import ExportedPolicy, shipped_policy

NOT_A_POLICY = "not a policy file: expected the .npz that bali train writes"


def _observation(num_players: int) -> tuple[np.ndarray, np.ndarray]:
    env = bali_env.raw_env(num_players=num_players)
    env.reset(seed=0)
    o = env.observe(env.agent_selection)
    return o["observation"], o["action_mask"]


def test_a_player_count_without_a_shipped_policy_says_how_to_train_one(tmp_path, monkeypatch):
    """Where the policies folder lacks a count's file (here: only the 2-player one), check_players
    (what bali play calls on its bots) and the first move both raise one line naming the command
    and the setting."""
    import bali_env.bots.ppo as ppo

    (tmp_path / "bali_2p.npz").write_bytes(shipped_policy(2).read_bytes())
    monkeypatch.setattr(ppo, "POLICY_DIR", tmp_path)
    assert shipped_policy(2).is_file() and not shipped_policy(3).is_file()
    agent = make_agent("ppo", seed=0)
    agent.check_players(2)
    obs, mask = _observation(2)
    assert mask[agent.act(obs, mask)] == 1
    with pytest.raises(ValueError) as exc:
        agent.check_players(3)
    message = str(exc.value)
    assert "\n" not in message and "(shipped: 2)" in message
    assert "train a 3-player policy with bali train --players 3" in message and "ppo:path=FILE" in message
    obs, mask = _observation(3)
    with pytest.raises(ValueError, match="bali train --players 3"):
        agent.act(obs, mask)


def test_three_players_play_the_four_player_network_cut_to_three_seats():
    """``ppo`` has a policy for every player count: in 3 players the 4-player network, its value
    head cut to three seats; it plays legal moves, and ``ppo+search`` reads three seats' values."""
    assert shipped_policy(3) == shipped_policy(4)
    agent = make_agent("ppo", seed=0)
    agent.check_players(3)
    policy = agent._policy_for(3)
    assert policy.meta["num_players"] == 3 and policy.value_weights[-1][0].shape[1] == 3
    cut = ExportedPolicy(shipped_policy(4)).for_players(3)
    assert all(np.array_equal(a, b) for pair in zip(policy.value_weights, cut.value_weights, strict=True)
               for a, b in zip(*pair, strict=True))
    env = bali_env.raw_env(num_players=3)
    env.reset(seed=3)
    searched = make_agent("ppo+search", seed=0)
    for _ in range(6):
        o = env.observe(env.agent_selection)
        assert o["action_mask"][agent.act(o["observation"], o["action_mask"])] == 1
        action = searched.act(o["observation"], o["action_mask"])
        assert o["action_mask"][action] == 1
        env.step(action)


class _Boom:
    """Unpickling this would run code: the test fails if it ever is."""

    def __reduce__(self):
        return (pytest.fail, ("a pickle was loaded",))


@pytest.mark.parametrize("content", ["python", "pickle", "junk", "empty", "npy", "npz_other", "npz_object"])
def test_a_file_that_is_not_a_policy_is_refused_in_one_line(tmp_path, content):
    """ExportedPolicy and make_agent("ppo:path=...") refuse anything but a policy export with the
    same one line, and never unpickle (an object array or a pickle is not loaded)."""
    path = tmp_path / "bot.npz"
    if content == "python":
        path = tmp_path / "my_bot.py"
        path.write_text("from bali_env.bots import Agent\n\nclass MyBot(Agent):\n    pass\n")
    elif content == "pickle":
        path.write_bytes(pickle.dumps(_Boom()))
    elif content == "junk":
        path.write_bytes(bytes(range(256)) * 4)
    elif content == "empty":
        path.write_bytes(b"")
    elif content == "npy":
        np.save(path.with_suffix(".npy"), np.zeros(3))
        path = path.with_suffix(".npy")
    elif content == "npz_other":
        np.savez(path, weights=np.zeros(3))
    else:
        np.savez(path, meta=np.array([_Boom()], dtype=object))
    with pytest.raises(ValueError) as exc:
        ExportedPolicy(path)
    assert str(exc.value) == f"{NOT_A_POLICY}, got {str(path)!r}"
    with pytest.raises(ValueError, match=NOT_A_POLICY):
        make_agent(f"ppo:path={path}")


def test_bali_play_reports_a_bad_ppo_opponent_in_one_line(tmp_path, capsys, monkeypatch):
    """`bali play --opponents ppo:path=my_bot.py`, and the shipped ppo at 3 players from a
    policies folder without the file they play: exit code 2, one line on stderr saying what to do,
    nothing printed on stdout and nothing saved."""
    import bali_env.bots.ppo as ppo
    from bali_env.apps.cli import parse_command
    from bali_env.apps.terminal import run

    monkeypatch.setattr(ppo, "POLICY_DIR", tmp_path)

    bot = tmp_path / "my_bot.py"
    bot.write_text("print('hello')\n")
    save = tmp_path / "game.json"
    for argv, says in ((["--players", "2", "--opponents", f"ppo:path={bot}"], NOT_A_POLICY),
                       (["--players", "3", "--opponents", "ppo", "greedy"], "bali train --players 3")):
        assert run(parse_command(["play", *argv, "--save", str(save)]), input_fn=lambda prompt: "q") == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        [line] = captured.err.strip().splitlines()
        assert line.startswith("bali play: error: opponent 'ppo") and says in line
    assert not save.exists()


def _rewrite_meta(source, path, meta_text):
    """A copy of the policy file ``source`` at ``path`` whose ``meta`` is ``meta_text``."""
    with np.load(source) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["meta"] = np.array([meta_text])
    np.savez(path, **arrays)
    return path


def test_policy_metadata_is_written_as_json_and_older_files_still_load(tmp_path):
    """A policy written now stores its metadata as JSON (the shipped 2-player file, written by
    ``bali az``); the shipped 4-player file (and any written before) holds a Python literal, which
    still loads to the same policy; both are read by ``PolicyMeta``."""
    import json

    from bali_env.bots.ppo import PolicyMeta, read_meta, write_policy

    with np.load(shipped_policy(2)) as data:
        assert json.loads(str(data["meta"][0]))["num_players"] == 2
    shipped = ExportedPolicy(shipped_policy(4))
    with np.load(shipped_policy(4)) as data:
        old_text = str(data["meta"][0])
    assert old_text.startswith("{'format': 'bali-env/ppo-policy'")  # the shipped file: not rewritten
    assert isinstance(shipped.info, PolicyMeta) and shipped.info.num_players == 4 and shipped.info.value_layers == 3
    path = write_policy(*shipped.arrays(), tmp_path / "new.npz", value=shipped.value_arrays())
    with np.load(path) as data:
        written = json.loads(str(data["meta"][0]))
    assert written == shipped.meta == read_meta(path) == read_meta(shipped_policy(4))
    again = ExportedPolicy(path)
    obs, mask = _observation(4)
    assert np.array_equal(again.logits(obs[None], mask[None]), shipped.logits(obs[None], mask[None]))
    assert again.info == shipped.info and again.info.env_steps == shipped.meta["env_steps"] > 0
    older = ExportedPolicy(_rewrite_meta(path, tmp_path / "older.npz", repr(written)))  # as written before
    assert older.meta == written and older.info == shipped.info


@pytest.mark.parametrize("change, says", [
    ({"layers": True}, "layers must be a positive integer (the actor's layer count), got True"),
    ({"obs_dim": "445"}, "obs_dim must be a positive integer (the network's input size), got '445'"),
    ({"version": 2}, "policy format version 2, expected 1"),
    ({"version": True}, "policy format version True, expected 1"),
    ({"activation": "gelu"}, "unknown activation 'gelu'"),
    ({"num_players": "2"}, "num_players must be a player count (an integer >= 2) or null, got '2'"),
    ({"env_steps": -5}, "env_steps must be an integer >= 0, got -5"),
])
@pytest.mark.parametrize("style", ["json", "literal"])
def test_bad_policy_metadata_names_the_field(tmp_path, change, says, style):
    """Metadata of either format is checked by the model: a bool is not a count, a string not a
    size; one ValueError naming the file and the field."""
    import json

    meta = dict(ExportedPolicy(shipped_policy(2)).meta, **change)
    text = json.dumps(meta) if style == "json" else repr(meta)
    path = _rewrite_meta(shipped_policy(2), tmp_path / "bad.npz", text)
    with pytest.raises(ValueError) as exc:
        ExportedPolicy(path)
    assert str(exc.value) == f"{str(path)!r}: {says}"
    weights, good = ExportedPolicy(shipped_policy(2)).arrays()
    with pytest.raises(ValueError) as exc:  # arrays from a trainer are checked by the same model
        ExportedPolicy.from_arrays(weights, dict(good, **change), where="the arrays")
    assert str(exc.value) == f"the arrays: {says}"


def test_metadata_and_layers_must_agree():
    """The metadata's layer count is the actor's (a file written with another would lose layers)."""
    weights, meta = ExportedPolicy(shipped_policy(2)).arrays()
    with pytest.raises(ValueError, match="3 actor layers, the metadata says 2"):
        ExportedPolicy.from_arrays(weights, dict(meta, layers=2))


@pytest.mark.parametrize("text", ["{'format': 'bali-env/ppo-policy', 'x': __import__('os')}", "[1, 2]", "not meta",
                                  '{"format": "something else", "version": 1}'])
def test_metadata_that_is_not_a_policys_is_refused_in_one_line(tmp_path, text):
    """Metadata that is neither JSON nor a plain literal (code is never run), not a dict, or of
    another format: the file is not a policy."""
    path = _rewrite_meta(shipped_policy(2), tmp_path / "odd.npz", text)
    with pytest.raises(ValueError) as exc:
        ExportedPolicy(path)
    assert str(exc.value) == f"{NOT_A_POLICY}, got {str(path)!r}"


@pytest.mark.parametrize("num_players", [2, 4])
def test_a_rows_outputs_do_not_depend_on_the_batch(num_players):
    """Each row's logits and value, computed alone, in a pair or in the whole batch, are the same
    bits (BLAS's one-row path rounds differently, and a tie between two copies of a card would then
    break the other way for ``act`` and not for a batch)."""
    from bali_env.bots.random_agent import RandomAgent

    env = bali_env.raw_env(num_players=num_players)
    env.reset(seed=5)
    obs, masks, agent = [], [], RandomAgent(seed=5)
    while len(obs) < 40 and not all(env.terminations.values()):
        o = env.observe(env.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(agent.act(o["observation"], o["action_mask"]))
    policy = ExportedPolicy(shipped_policy(num_players))
    x = policy.input(np.array(obs), np.array(masks))
    logits, values = policy.forward(x), policy.seat_values(x, num_players)
    for i in range(len(x)):
        assert np.array_equal(policy.forward(x[i : i + 1])[0], logits[i]), i
        assert np.array_equal(policy.seat_values(x[i : i + 1], num_players)[0], values[i]), i
    assert np.array_equal(policy.forward(x[3:5]), logits[3:5])


def test_a_per_seat_value_head_is_cut_to_fewer_players():
    """``for_players`` (``bali az --init`` a policy of another player count): the 4-player network
    for 3 players keeps its actor bit for bit, and its value head's softmax runs over the first
    three seats' outputs; the same count gives the policy itself; a head that cannot be cut (one
    output, or fewer seats than asked) is refused naming both counts."""
    four = ExportedPolicy(shipped_policy(4))
    three = four.for_players(3)
    assert three.meta["num_players"] == 3 and four.meta["num_players"] == 4
    for (w3, b3), (w4, b4) in zip(three.weights, four.weights, strict=True):
        assert np.array_equal(w3, w4) and np.array_equal(b3, b4)
    obs, mask = _observation(3)
    x = four.input(obs[None], mask[None])
    assert np.array_equal(three.forward(x), four.forward(x))
    logits = four._mlp(four.value_weights, x)[:, :3]
    expected = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    assert three.seat_values(x).shape == (1, 3)
    assert np.allclose(three.seat_values(x), expected, atol=1e-6)
    assert four.for_players(4) is four
    two = ExportedPolicy(shipped_policy(2))
    for policy, players, says in ((two, 3, "a 2-player policy whose value head gives 1 output(s)"),
                                  (four, 2, "a 4-player policy whose value head gives 4 output(s)"),
                                  (three, 4, "a 3-player policy whose value head gives 3 output(s)")):
        with pytest.raises(ValueError, match=re.escape(f"{says} cannot start {players}-player games")):
            policy.for_players(players)
