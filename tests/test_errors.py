"""Bad input gets a clear error and changes nothing.

- ``step``: an illegal action raises ``ValueError`` naming the action and listing the legal ones;
  out-of-range ids raise ``ValueError``; non-integers (floats, strings, ``None`` while alive,
  bools) raise ``TypeError``; numpy integers and 0-d integer arrays are accepted like ints;
  stepping a finished game is refused; in every refused case ``state_dict()``, the agent to move,
  the observations and the rewards are unchanged.
- ``reset``: every bad option of docs/rules.md section 7 raises ``ValueError`` with a message that
  names the problem and leaves the previous game (and the seed stream) untouched; an unknown key
  only warns, naming the key.
- the constructor rejects bad arguments.
- ``illegal_action="terminate"``: the game ends, the offender gets -1 and the others 0.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import bali_env
from bali_env.envs import bali_v0
from scenario import random_deck


def _env(n=3, oracle=False, demon=False, illegal_action="raise", **kwargs):
    return bali_env.env(num_players=n, oracle=oracle, demon=demon, illegal_action=illegal_action, **kwargs)


def _snapshot(env) -> dict:
    """Everything a refused call must leave unchanged."""
    u = env.unwrapped
    return {
        "state": u.state_dict(),
        "agents": list(env.agents),
        "selection": env.agent_selection,
        "rewards": dict(u._cumulative_rewards),
        "terminations": dict(env.terminations),
        "obs": {a: {k: v.tolist() for k, v in env.observe(a).items()} for a in env.agents},
        "deal_seed": u.deal_seed,
    }


def _advance(env, rng, steps: int) -> None:
    for _ in range(steps):
        env.step(int(rng.choice(env.unwrapped.legal_actions())))



# ============================================================================= step: illegal actions
@pytest.mark.parametrize("oracle, demon", [(False, False), (True, True)])
def test_illegal_action_in_every_phase(oracle, demon):
    """In each phase met in a random game: an illegal action raises ValueError naming the action
    (id and name) and every legal one, and nothing changes; the game then goes on normally."""
    env = _env(3, oracle, demon)
    env.reset(seed=8)
    rng = np.random.default_rng(8)
    seen = set()
    while env.unwrapped.state_dict()["phase"] != "game_over":
        sd = env.unwrapped.state_dict()
        legal = env.unwrapped.legal_actions()
        if sd["phase"] not in seen:
            seen.add(sd["phase"])
            illegal = [a for a in range(44) if a not in legal]
            for a in (illegal[0], illegal[-1], illegal[len(illegal) // 2]):
                before = _snapshot(env)
                with pytest.raises(ValueError) as info:
                    env.step(a)
                msg = str(info.value)
                assert re.search(rf"\b{a}\b", msg) and bali_env.action_to_str(a) in msg, msg
                assert "legal" in msg
                for b in legal:
                    assert f"{b} ({bali_env.action_to_str(b)})" in msg, (b, msg)
                assert _snapshot(env) == before
        env.step(int(rng.choice(legal)))
    assert {"take_offering", "play", "refill"} <= seen
    if oracle:
        assert "oracle" in seen


@pytest.mark.parametrize("bad", [-1, 44, 45, 1000, -44, 2**40])
def test_out_of_range_action(bad):
    env = _env()
    env.reset(seed=1)
    _advance(env, np.random.default_rng(1), 7)
    before = _snapshot(env)
    with pytest.raises(ValueError, match="range") as info:
        env.step(bad)
    assert str(bad) in str(info.value)
    assert _snapshot(env) == before


@pytest.mark.parametrize(
    "bad",
    [1.5, 4.0, "3", "pass", None, True, False, np.float64(4.0), np.array(4.0), np.bool_(True), 4 + 0j],
    ids=lambda v: f"{type(v).__name__}({v!r})",
)
def test_wrong_type_action(bad):
    """Non-integers are a TypeError (also 4.0 and True, which equal legal ids)."""
    env = _env()
    env.reset(seed=1)
    assert 4 in env.unwrapped.legal_actions()  # "pass" is legal: 4.0 and np.array(4.0) would be too
    before = _snapshot(env)
    with pytest.raises(TypeError):
        env.step(bad)
    assert _snapshot(env) == before


@pytest.mark.parametrize(
    "convert",
    [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64, np.array, lambda a: np.array(a, dtype=np.int32)],
    ids=["int8", "int16", "int32", "int64", "uint8", "uint64", "0d-array", "0d-int32-array"],
)
def test_numpy_integers_accepted(convert):
    """numpy integers and 0-d integer arrays act exactly like the Python int."""
    env = _env(4, True, True)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(25):
        a = int(rng.choice(env.unwrapped.legal_actions()))
        twin = copy.deepcopy(env)
        twin.step(a)
        env.step(convert(a))
        assert env.unwrapped.state_dict() == twin.unwrapped.state_dict()


# ============================================================================= step: finished games
def _finished(illegal_action="raise", seed=4):
    env = _env(3, illegal_action=illegal_action)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not any(env.terminations.values()):
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
    return env


def test_stepping_a_finished_game():
    env = _finished()
    before = _snapshot(env)
    assert before["state"]["phase"] == "game_over"
    # a real action for a terminated agent is refused (PettingZoo: only None)
    with pytest.raises(ValueError):
        env.step(29)
    assert _snapshot(env) == before
    # every agent leaves with None
    left = 0
    while env.agents:
        env.step(None)
        left += 1
    assert left == 3
    assert env.unwrapped.state_dict() == before["state"]
    # through the wrapper too, a step after everyone left raises and changes nothing
    with pytest.raises(RuntimeError, match="reset"):
        env.step(29)
    assert env.unwrapped.state_dict() == before["state"] and env.agents == []


def test_raw_env_step_after_everyone_left_raises():
    env = bali_v0.raw_env(num_players=2)
    env.reset(seed=6)
    rng = np.random.default_rng(6)
    while not any(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    while env.agents:
        env.step(None)
    state = env.state_dict()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(29)
    with pytest.raises(RuntimeError):
        env.step(None)
    assert env.state_dict() == state
    env.reset(seed=6)  # and a new game starts normally
    assert env.agents == ["player_0", "player_1"] and env.state_dict()["phase"] == "take_offering"


# ============================================================================= reset options
BAD_OPTIONS = [
    # (num_players, oracle, options, words the message must contain)
    (3, False, {"deck": random_deck(False)[:-1]}, ["deck", "50", "49"]),
    (3, False, {"deck": random_deck(False) + [0]}, ["deck", "50", "51"]),
    (3, True, {"deck": random_deck(False)}, ["deck", "58", "50"]),
    (3, False, {"deck": random_deck(True)}, ["deck", "50", "58"]),
    (3, False, {"deck": [1] + random_deck(False)[1:] if random_deck(False)[0] == 0 else [0] + random_deck(False)[1:]},
     ["deck", "multiset"]),
    (3, False, {"deck": [7] + random_deck(False)[1:]}, ["deck", "oracle"]),
    (3, False, {"deck": [9] + random_deck(False)[1:]}, ["deck"]),
    (3, False, {"deck": [-1] + random_deck(False)[1:]}, ["deck"]),
    (3, False, {"deck": [1.0] + random_deck(False)[1:]}, ["deck", "integer"]),
    (3, False, {"deck": [True] + random_deck(False)[1:]}, ["deck", "integer"]),
    (3, False, {"deck": "stonecutter"}, ["deck", "list"]),
    (3, False, {"deck": 5}, ["deck", "list"]),
    (3, True, {"deck": [7] + [c for c in random_deck(True) if c != 7] + [7] * 7}, ["first 16", "oracle"]),
    (3, True, {"deck": random_deck(False)[:15] + [7] + random_deck(False)[16:] + [7] * 7 + [random_deck(False)[15]]},
     ["first 16"]),
    (3, False, {"starter_sets": [0, 0, 1]}, ["starter_sets", "distinct"]),
    (3, False, {"starter_sets": [0, 1]}, ["starter_sets", "3", "2"]),
    (3, False, {"starter_sets": [0, 1, 2, 3]}, ["starter_sets", "3", "4"]),
    (2, False, {"starter_sets": [0, 4]}, ["starter_sets"]),
    (2, False, {"starter_sets": [-1, 0]}, ["starter_sets"]),
    (2, False, {"starter_sets": "01"}, ["starter_sets"]),
    (3, False, {"altar": [0, 1, 2, 3]}, ["altar", "Oracle"]),
    (3, True, {"altar": [0, 0, 1, 2]}, ["altar", "permutation"]),
    (3, True, {"altar": [0, 1, 2]}, ["altar", "permutation"]),
    (3, True, {"altar": [1, 2, 3, 4]}, ["altar", "permutation"]),
    (3, True, {"altar": [0, 1, 2, 3, 0]}, ["altar", "permutation"]),
    (3, True, {"deck": random_deck(True), "altar": [3, 3, 3, 3]}, ["altar"]),  # a valid key with a bad one
    (3, False, [("deck", random_deck(False))], ["dict"]),
    (3, False, "deck", ["dict"]),
    (3, False, 5, ["dict"]),
]


@pytest.mark.parametrize("n, oracle, options, words", BAD_OPTIONS, ids=[f"bad{i}" for i in range(len(BAD_OPTIONS))])
def test_bad_reset_option(n, oracle, options, words):
    """ValueError with a useful message; the previous game and the seed stream are untouched."""
    env, twin = _env(n, oracle), _env(n, oracle)
    env.reset(seed=10)
    twin.reset(seed=10)
    rng = np.random.default_rng(10)
    _advance(env, rng, 12)
    before = _snapshot(env)
    with pytest.raises(ValueError) as info:
        env.reset(seed=99, options=options)
    msg = str(info.value)
    for w in words:
        assert w.lower() in msg.lower(), f"{w!r} not in {msg!r}"
    assert _snapshot(env) == before
    env.step(int(rng.choice(env.unwrapped.legal_actions())))  # the old game goes on
    # the failed reset neither re-seeded nor consumed the stream: the next unseeded reset deals
    # the same game as in an environment that never saw the bad call
    env.reset()
    twin.reset()
    assert env.unwrapped.state_dict() == twin.unwrapped.state_dict()


def test_unknown_option_key_warns_and_names_it():
    env = _env(2, True)
    deck = random_deck(True, seed=4)
    with pytest.warns(UserWarning, match="colour"):
        env.reset(seed=1, options={"colour": "red", "deck": deck})
    sd = env.unwrapped.state_dict()
    assert [c for col in sd["market"] for c in col] + sd["deck"] == deck  # the known key still applies
    with pytest.warns(UserWarning, match="options"):
        env.reset(seed=1, options={"options": 1})  # what PettingZoo's api_test passes
    assert env.unwrapped.state_dict()["phase"] == "take_offering"


def test_good_options_apply():
    """Control for the rejections above: the same keys with good values are accepted."""
    env = _env(3, True)
    deck = random_deck(True, seed=9)
    env.reset(seed=0, options={"deck": deck, "starter_sets": [3, 1, 0], "altar": [2, 3, 0, 1]})
    sd = env.unwrapped.state_dict()
    assert [c for col in sd["market"] for c in col] + sd["deck"] == deck
    assert sd["starter_sets"] == [3, 1, 0] and sd["altar"] == [2, 3, 0, 1]
    env.reset(seed=0, options={"deck": np.array(deck), "starter_sets": (3, 1, 0), "altar": None})
    assert env.unwrapped.state_dict()["starter_sets"] == [3, 1, 0]


# ============================================================================= constructor
@pytest.mark.parametrize(
    "kwargs, error, word",
    [
        ({"num_players": 1}, ValueError, "num_players"),
        ({"num_players": 5}, ValueError, "num_players"),
        ({"num_players": 0}, ValueError, "num_players"),
        ({"num_players": True}, TypeError, "num_players"),
        ({"num_players": "4"}, TypeError, "num_players"),
        ({"num_players": None}, TypeError, "num_players"),
        ({"render_mode": "rgb"}, ValueError, "render_mode"),
        ({"reward": "dense"}, ValueError, "reward"),
        ({"illegal_action": "ignore"}, ValueError, "illegal_action"),
    ],
)
def test_bad_constructor_args(kwargs, error, word):
    """A bad constructor argument is one error naming it: TypeError for the wrong type (a bool is
    not a player count), ValueError for a value out of range (the validators every env shares)."""
    with pytest.raises(error, match=word):
        bali_env.env(**kwargs)
    with pytest.raises(error, match=word):
        bali_v0.raw_env(**kwargs)


def test_unknown_constructor_arg():
    with pytest.raises(TypeError):
        bali_env.env(players=3)


# ============================================================================= illegal_action="terminate"
@pytest.mark.parametrize("reward", ["win_loss", "score"])
@pytest.mark.parametrize("steps", [0, 23])
def test_terminate_on_illegal_action(reward, steps):
    env = _env(4, True, False, reward=reward, illegal_action="terminate")
    env.reset(seed=12)
    _advance(env, np.random.default_rng(12), steps)
    offender = env.agent_selection
    legal = env.unwrapped.legal_actions()
    bad = next(a for a in range(44) if a not in legal)
    state = env.unwrapped.state_dict()
    env.step(bad)  # no exception
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.unwrapped.state_dict() == state  # the illegal action itself was not applied
    assert env.infos[offender]["illegal_action"] is True
    assert env.infos[offender]["legal_actions"] == legal
    for a in env.agents:
        assert not env.observe(a)["action_mask"].any()
    assert env.unwrapped.legal_actions() == []
    got = {}
    while env.agents:
        agent = env.agent_selection
        _, r, term, trunc, _ = env.last()
        assert term and not trunc
        got[agent] = r
        env.step(None)
    assert got == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}


def test_terminate_mode_still_rejects_bad_input():
    """Out-of-range ids and wrong types are input errors, not illegal moves: they raise and the
    game does not end."""
    env = _env(2, illegal_action="terminate")
    env.reset(seed=3)
    before = _snapshot(env)
    with pytest.raises(ValueError):
        env.step(44)
    with pytest.raises(TypeError):
        env.step("4")
    assert _snapshot(env) == before
    assert not any(env.terminations.values())


def test_env_ends_the_game_on_an_illegal_move_and_raw_env_raises(caplog):
    """PettingZoo classic's convention: ``env()`` ends the game on an illegal move, -1 for the
    offender and 0 for the others, with PettingZoo's warning; ``raw_env()`` raises (debugging)."""
    from pettingzoo.utils.env_logger import EnvLogger

    EnvLogger.unsuppress_output()
    env = bali_env.env(num_players=3)
    env.reset(seed=3)
    bad = next(a for a in range(44) if a not in env.unwrapped.legal_actions())
    offender = env.agent_selection
    with caplog.at_level("WARNING"):
        env.step(bad)
    assert "Illegal move made" in caplog.text
    assert all(env.terminations.values())
    assert env.rewards == {a: (-1.0 if a == offender else 0.0) for a in env.possible_agents}
    assert env.infos[offender]["illegal_action"] is True and env.infos[offender]["action"] == bad
    raw = bali_v0.raw_env(num_players=3)
    raw.reset(seed=3)
    with pytest.raises(ValueError, match="illegal action"):
        raw.step(bad)
    assert not any(raw.terminations.values())


@pytest.mark.parametrize(
    "kwargs,error",
    [
        ({"num_players": 4.0}, TypeError),
        ({"num_players": True}, TypeError),
        ({"oracle": "no"}, TypeError),
        ({"demon": 1}, TypeError),
    ],
)
def test_constructor_is_strict_about_types(kwargs, error):
    """num_players must be an int, the variant flags real bools (oracle="no" must not mean True)."""
    with pytest.raises(error):
        bali_v0.raw_env(**kwargs)


@pytest.mark.parametrize("spec, guess", [("greddy", "greedy"), ("ppo_search", "ppo+search"), ("mtcs", "mcts"),
                                         ("nosuchagent", None)])
def test_an_unknown_agent_names_the_specs_as_written_and_a_close_one(spec, guess):
    """An unknown agent: "did you mean" the closest kind, and every spec known as one writes it
    (before: ['cmd', 'greedy', ..., 'sb3'], where cmd and sb3 need a program and a path, and no
    FILE.py:Class)."""
    from bali_env.bots import make_agent

    with pytest.raises(ValueError) as exc:
        make_agent(spec)
    text = str(exc.value)
    assert text.startswith(f"unknown agent {spec!r}" + (f" (did you mean {guess!r}?)" if guess else ";"))
    assert "; known: random, greedy, mcts, ppo, ppo+search, sb3:PATH, cmd:PROGRAM, " in text  # then registered ones
    assert text.endswith(", FILE.py:Class")


def test_a_file_bot_without_its_py_is_pointed_to_it(tmp_path, monkeypatch):
    """``mybot:MyBot`` where ``mybot.py`` is here: did you mean ``mybot.py:Class``."""
    from bali_env.bots import make_agent

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mybot.py").write_text("")
    with pytest.raises(ValueError, match=r"unknown agent 'mybot' \(did you mean 'mybot.py:Class'\?\)"):
        make_agent("mybot:MyBot")
