"""The PettingZoo API of ``bali_v0``: PettingZoo's ``api_test``/``seed_test`` and the generic
checker ``bali_env.envs.api_check.check_env`` on all 12 configurations (with the Bali end-of-game and
illegal-action hooks defined here), the metadata, agents, spaces,
the registry entry, rendering, action names, and the documented observation layout (the table in
the ``bali_v0`` docstring against the ``O_*`` constants of ``core`` and against what ``observe``
really writes for random positions)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import gymnasium
import numpy as np
import pytest
from pettingzoo.utils.env import AECEnv

import bali_env
from bali_env.envs import bali_v0
from bali_env import engine as C
from bali_env.envs.api_check import CONFIGURATIONS, check_env, config_id
from scenario import random_deck

CARD_WORDS = ("stonecutter", "priest", "shrine", "rice", "peanut", "banana", "chili")
CATEGORY_WORDS = ("rice", "peanut", "banana", "chili")


def make(config, **kwargs):
    """A fresh wrapped environment for a (num_players, oracle, demon) configuration."""
    n, oracle, demon = config
    return bali_env.env(num_players=n, oracle=oracle, demon=demon, **kwargs)


# ----------------------------------------------------------------------------- the checker
def bali_final_check(env: AECEnv, where: str) -> None:
    """The end of a ``bali_v0`` game (a ``final_check`` hook of ``check_env``): every agent's
    ``infos`` holds the same ``final_scores``, ``winners`` and ``score_breakdown``; the breakdown
    parts add up to each total, which is the final score; scores and winners agree with
    ``state_dict()``; the rewards follow the documented definition of the reward mode. The score
    rule and the tie-breaks are the engine's: they are not recomputed here."""
    n = len(env.possible_agents)
    info = env.infos[env.possible_agents[0]]
    for a in env.possible_agents:
        for key in ("final_scores", "winners", "score_breakdown"):
            assert key in env.infos[a], f"{where}: infos[{a}] lacks {key!r} at the end"
            assert env.infos[a][key] == info[key], f"{where}: infos[{a}][{key!r}] differs between agents"
    scores, winners, breakdown = info["final_scores"], info["winners"], info["score_breakdown"]
    assert len(scores) == n and len(breakdown) == n, f"{where}: {len(scores)} scores for {n} players"
    assert winners and set(winners) <= set(range(n)), f"{where}: winners {winners}"
    for q, row in enumerate(breakdown):
        assert row["total"] == scores[q], f"{where}: breakdown total {row['total']} != final score {scores[q]}"
        parts = sum(sum(v.values()) if isinstance(v, dict) else v for k, v in row.items() if k != "total")
        assert parts == row["total"], f"{where}: breakdown parts {row} add up to {parts}, not the total"
    sd = env.unwrapped.state_dict()
    assert sd["phase"] == "game_over" and sd["to_move"] is None, f"{where}: state_dict() is not over"
    assert sd["scores"] == scores, f"{where}: infos scores {scores} != state_dict() {sd['scores']}"
    assert sd["winners"] == winners, f"{where}: infos winners {winners} != state_dict() {sd['winners']}"
    # the reward definitions of the bali_v0 docstring
    mode = env.unwrapped.reward_mode
    for q, a in enumerate(env.possible_agents):
        if mode == "win_loss":
            want = 1.0 if q in winners else -1.0
        else:
            assert mode == "score", mode
            want = scores[q] - (sum(scores) - scores[q]) / (n - 1)
        got = float(env.unwrapped._cumulative_rewards[a])
        assert abs(got - want) < 1e-9, f"{where}: reward of {a} is {got}, expected {want} ({mode})"


def bali_illegal_check(env: AECEnv, agent: str, action: int, where: str) -> None:
    """After an illegal action ended a game (``illegal_action="terminate"``, an
    ``illegal_check`` hook of ``check_env``): the offender's ``infos`` say so."""
    info = env.infos[agent]
    assert info.get("illegal_action") is True, f"{where}: infos[{agent}] lacks illegal_action: {info}"
    assert info.get("action") == action, f"{where}: infos[{agent}]['action'] is {info.get('action')}, not {action}"


def check_bali(env_fn: Callable[[], AECEnv], **kwargs: Any) -> dict[str, Any]:
    """``check_env`` with the ``bali_v0`` conventions and hooks: empty masks after the end (the
    ``state_dict`` and ``legal_actions`` hooks are found by default)."""
    hooks = {"final_check": bali_final_check, "illegal_check": bali_illegal_check}
    return check_env(env_fn, final_mask_empty=True, **hooks, **kwargs)


#: the configurations the fast suite checks (the smallest and the largest game); --slow checks all 12
FAST_CONFIGURATIONS = ((2, False, False), (4, True, True))


@pytest.mark.parametrize("config", [pytest.param(c, id=config_id(c), marks=() if c in FAST_CONFIGURATIONS
                                                  else pytest.mark.slow) for c in CONFIGURATIONS])
def test_check_env_every_configuration(config):
    """PettingZoo's api_test and seed_test plus two fully checked random games."""
    summary = check_bali(lambda: make(config), num_games=2, seed=100 * config[0] + 10 * config[1] + config[2])
    assert summary["games"] == 2
    assert summary["illegal_action"] == "terminate"  # env()'s default, PettingZoo classic's convention
    assert summary["steps"] > 100  # a Bali game has well over 100 decisions
    assert summary["legal_checked"] >= summary["steps"]
    assert summary["illegal_checked"] > 0
    assert len(summary["final_rewards"]) == 2
    # api_test resets with options={"options": 1}: the unknown key is named in a warning
    assert any("'options'" in w for w in summary["api_test_warnings"]), summary["api_test_warnings"]


@pytest.mark.parametrize(
    "config, kwargs",
    [
        ((2, False, False), {"reward": "score"}),
        ((4, True, True), {"reward": "score"}),
        ((3, True, False), {"illegal_action": "raise"}),
        ((4, False, True), {"reward": "score", "illegal_action": "raise"}),
    ],
    ids=["2p-score", "4p-oracle-demon-score", "3p-oracle-raise", "4p-demon-score-raise"],
)
def test_check_env_other_modes(config, kwargs):
    """The checker also passes with the score reward and the raise-on-illegal mode (debugging)."""
    summary = check_bali(lambda: make(config, **kwargs), num_games=1, seed=7, api_cycles=300, seed_cycles=200)
    assert summary["games"] == 1
    assert summary["illegal_action"] == kwargs.get("illegal_action", "terminate")
    rewards = summary["final_rewards"][0]
    if kwargs.get("reward") == "score":
        assert abs(sum(rewards.values())) < 1e-9
    else:
        assert sorted(set(rewards.values())) <= [-1.0, 1.0]


def test_check_env_detects_a_broken_mask():
    """The checker is not a tautology: an environment whose mask leaks to a waiting agent fails."""

    class LeakyMask(bali_v0.raw_env):
        def observe(self, agent):
            out = super().observe(agent)
            if agent != self.agent_selection:
                out["action_mask"][4] = 1  # a waiting player "may pass"
            return out

    with pytest.raises(AssertionError, match="is not to move"):
        check_env(lambda: LeakyMask(num_players=2), num_games=1, api_cycles=50, seed_cycles=50)


def _swap_winners(e):
    for info in e.infos.values():
        info["winners"] = [q for q in range(2) if q not in info["winners"]]


def _inflate_a_breakdown_part(e):
    for info in e.infos.values():
        info["score_breakdown"][0]["stones"] += 1


@pytest.mark.parametrize(
    "tamper, message",
    [
        (_swap_winners, "winners"),
        (lambda e: e.infos["player_1"].update(final_scores=[99, 99]), "differs between agents"),
        (_inflate_a_breakdown_part, "parts"),
        (lambda e: e.unwrapped._cumulative_rewards.update(player_0=0.0), "reward of player_0"),
    ],
    ids=["winners", "infos-differ", "breakdown", "reward"],
)
def test_bali_final_check_detects_wrong_ends(tamper, message):
    """The end-of-game hook is not a tautology: each tampered end fails it."""
    e = _finished_env((2, False, False), seed=3)
    bali_final_check(e, "end")  # the real end passes
    tamper(e)
    with pytest.raises(AssertionError, match=message):
        bali_final_check(e, "end")


# ----------------------------------------------------------------------------- metadata, agents, spaces
def test_metadata():
    e = bali_env.env()
    assert e.metadata["name"] == "bali_v0"
    assert set(e.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert e.metadata["is_parallelizable"] is False
    assert str(e.unwrapped) == "bali_v0"


@pytest.mark.parametrize("n", [2, 3, 4])
def test_agents(n):
    e = bali_env.env(num_players=n)
    assert e.possible_agents == [f"player_{i}" for i in range(n)]
    e.reset(seed=1)
    assert e.agents == e.possible_agents
    assert e.num_agents == n
    assert e.agent_selection == "player_0"  # seat 0 starts (docs/rules.md 2.1)
    assert e.unwrapped.agent_name_mapping == {f"player_{i}": i for i in range(n)}


def test_default_is_four_players():
    e = bali_env.env()
    assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]


@pytest.mark.parametrize("config", [(2, False, False), (4, True, True)], ids=config_id)
def test_spaces(config):
    e = make(config)
    # the same space objects before reset(), after it and after a step: an implementation that
    # builds a new space per call fails here
    before = {a: (e.observation_space(a), e.action_space(a)) for a in e.possible_agents}
    e.reset(seed=3)
    after_reset = {a: (e.observation_space(a), e.action_space(a)) for a in e.possible_agents}
    e.step(e.unwrapped.legal_actions()[0])
    for agent in e.possible_agents:
        space = e.observation_space(agent)
        assert space is before[agent][0] and space is after_reset[agent][0]
        assert e.action_space(agent) is before[agent][1] and e.action_space(agent) is after_reset[agent][1]
        assert isinstance(space, gymnasium.spaces.Dict)
        obs_box, mask_box = space["observation"], space["action_mask"]
        assert obs_box.shape == (293,) and obs_box.dtype == np.float32
        assert np.all(obs_box.low == 0.0)
        assert np.array_equal(obs_box.high, C.OBS_HIGH)
        assert mask_box.shape == (44,) and mask_box.dtype == np.int8
        assert np.all(mask_box.low == 0) and np.all(mask_box.high == 1)
        act = e.action_space(agent)
        assert isinstance(act, gymnasium.spaces.Discrete) and act.n == 44 and act.start == 0
        obs = e.observe(agent)
        assert obs["observation"].shape == (293,) and obs["observation"].dtype == np.float32
        assert obs["action_mask"].shape == (44,) and obs["action_mask"].dtype == np.int8
        assert space.contains(obs)
    assert bali_env.OBS_DIM == 293 and bali_env.N_ACTIONS == 44


def test_observe_returns_fresh_arrays():
    """Mutating a returned observation must not change the next one."""
    e = bali_env.env(num_players=3)
    e.reset(seed=5)
    first = e.observe("player_0")
    keep = {k: v.copy() for k, v in first.items()}
    first["observation"][:] = 99
    first["action_mask"][:] = 0
    again = e.observe("player_0")
    assert np.array_equal(again["observation"], keep["observation"])
    assert np.array_equal(again["action_mask"], keep["action_mask"])


# ----------------------------------------------------------------------------- registry
def test_registry():
    registration = pytest.importorskip("pettingzoo.env_registry.registration")
    e = registration.make("aec", "bali_v0", num_players=3, oracle=True)
    assert e.metadata["name"] == "bali_v0"
    assert isinstance(e.unwrapped, bali_v0.raw_env)
    assert e.unwrapped.num_players == 3 and e.unwrapped.oracle and not e.unwrapped.demon
    e.reset(seed=0)
    assert e.agents == ["player_0", "player_1", "player_2"]
    default = registration.make("aec", "bali_v0")
    assert default.unwrapped.num_players == 4
    spec = registration.spec("aec", "bali_v0")
    assert spec.name == "bali" and spec.version == 0


# ----------------------------------------------------------------------------- render
def _finished_env(config, seed):
    e = make(config, render_mode="ansi")
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not any(e.terminations.values()):
        e.step(int(rng.choice(e.unwrapped.legal_actions())))
    return e


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=config_id)
def test_render_ansi(config):
    """The text shows the market (every column and its takeable card) and every player."""
    e = make(config, render_mode="ansi")
    e.reset(seed=11)
    text = e.render()
    assert isinstance(text, str) and text
    assert "Market" in text
    for col in range(4):
        assert f"col {col}" in text
    for q in range(config[0]):
        assert f"player_{q}" in text
    assert f"player_{config[0]}" not in text
    # the four market lines ("Market col 0: Stone <, Rice, ...", "       col 1: ...") name exactly the 16 cards
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Market"))
    words = re.findall(r"[a-z]+", "\n".join(line.split(": ", 1)[1] for line in lines[start : start + 4]).lower())
    prefixes = ("stone", "priest", "shrine", "rice", "pean", "bana", "chil")
    shown = Counter(next(k for k, pre in enumerate(prefixes) if w.startswith(pre)) for w in words)
    sd = e.unwrapped.state_dict()
    assert shown == Counter(card for col in sd["market"] for card in col)
    if config[2]:
        assert "(demon)" in text
    # a finished game renders too, with the scores
    done = _finished_env(config, seed=12)
    final = done.render()
    assert isinstance(final, str) and "game over" in final and "WINNER" in final


def test_render_human_prints(capsys):
    e = bali_env.env(num_players=3, render_mode="human")
    e.reset(seed=4)
    capsys.readouterr()
    assert e.render() is None
    printed = capsys.readouterr().out
    assert "Market" in printed and all(f"player_{q}" in printed for q in range(3))
    e.step(e.unwrapped.legal_actions()[0])  # human mode renders after every step
    assert "player_0" in capsys.readouterr().out


def test_render_ansi_hides_the_deck_order():
    """Rendering is public information: two deals that differ only in the unseen deck tail render
    the same."""
    deck = random_deck(oracle=False, seed=3)
    other = deck[:30] + deck[30:][::-1]
    assert other != deck
    texts = []
    for d in (deck, other):
        e = bali_env.env(num_players=2, render_mode="ansi")
        e.reset(seed=1, options={"deck": d, "starter_sets": [0, 1]})
        texts.append(e.render())
    assert texts[0] == texts[1]


def test_render_without_mode_warns():
    e = bali_env.env(num_players=2)
    e.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert e.render() is None


# ----------------------------------------------------------------------------- action names
def test_action_to_str_names_every_id():
    names = [bali_env.action_to_str(a) for a in range(44)]
    assert len(set(names)) == 44 and all(isinstance(x, str) and x for x in names)
    assert names == [bali_v0.raw_env.action_to_str(a) for a in range(44)]
    assert tuple(names) == bali_env.ACTION_NAMES
    low = [x.lower() for x in names]
    for c in range(4):
        assert CATEGORY_WORDS[c] in low[c] and "take" in low[c]
        assert CATEGORY_WORDS[c] in low[21 + c] and "own" in low[21 + c]
        assert CATEGORY_WORDS[c] in low[25 + c] and "supply" in low[25 + c]
        assert CATEGORY_WORDS[c] in low[40 + c]
        assert str(c) in low[29 + c] and "column" in low[29 + c]
        assert str(c) in low[33 + c] and "oracle" in low[33 + c]
        for k in (1, 2, 3):
            a = 8 + 3 * c + (k - 1)
            assert CATEGORY_WORDS[c] in low[a] and str(k) in low[a] and "farmer" in low[a]
    assert "pass" in low[4]
    assert "stonecutter" in low[5] and "priest" in low[6] and "shrine" in low[7]
    assert "discard" in low[20] and "shrine" in low[20]
    assert "oracle" in low[37] and "none" in low[37]
    assert "stone" in low[38] and "vp" in low[39]
    assert bali_env.action_to_str(np.int64(9)) == names[9]
    for bad in (-1, 44):
        with pytest.raises(ValueError):
            bali_env.action_to_str(bad)


# ----------------------------------------------------------------------------- observation layout
def test_observation_slot_names():
    names = bali_env.observation_slot_names()
    assert len(names) == 293 == C.OBS_DIM
    assert len(set(names)) == 293
    assert all(isinstance(x, str) and x for x in names)
    assert names[C.O_DECK] == "deck_size"
    assert names[C.O_SUPPLY].startswith("supply")
    assert names[C.O_MARKET] == "market.col0.slot0.stonecutter"
    assert names[C.O_MARKET + 28 * 3 + 7 * 2 + 6] == "market.col3.slot2.chili_farmer"
    assert names[C.O_SEATS + 26 * 2 + C.SO_STONES] == "seat.rel2.stones"


def _doc_table():
    """The rows of the observation table of the bali_v0 docstring: (first, last, text), and the
    seat-block sub-rows: (first offset, last offset, text)."""
    doc = bali_v0.__doc__
    top, sub = [], []
    for line in doc.splitlines():
        m = re.match(r"^\|\s*(\d+)(?:-(\d+))?\s*\|(.*)\|", line)
        if m:
            first = int(m.group(1))
            top.append((first, int(m.group(2) or first), m.group(3)))
            continue
        m = re.match(r"^\|\s*\|\s*\+(\d+)(?:\.\.\+(\d+))?\s(.*)\|", line)
        if m:
            first = int(m.group(1))
            sub.append((first, int(m.group(2) or first), m.group(3)))
    return top, sub


def test_docstring_table_matches_core_constants():
    top, sub = _doc_table()
    assert top and sub
    # the rows tile 0..OBS_DIM-1 without a gap or an overlap
    assert top[0][0] == 0 and top[-1][1] == C.OBS_DIM - 1
    for (a0, a1, _), (b0, _b1, _) in pairwise(top):
        assert a1 >= a0 and b0 == a1 + 1, (a0, a1, b0)
    starts = {first for first, _, _ in top}
    constants = {name: getattr(C, name) for name in dir(C) if name.startswith("O_")}
    assert len(constants) >= 14
    for name, value in constants.items():
        assert value in starts, f"{name} = {value} does not start a row of the docstring table"
    row = {first: (last, text) for first, last, text in top}
    assert row[C.O_SEATS][0] == C.O_SEATS + 4 * C.SEAT_WIDTH - 1
    assert f"{C.SEAT_WIDTH} r" in row[C.O_SEATS][1] and str(C.O_SEATS) in row[C.O_SEATS][1]
    assert row[C.O_MARKET][0] == C.O_MARKET + 4 * 4 * C.N_CARD_TYPES - 1
    assert f"{C.O_MARKET} + 28c + 7j + k" in row[C.O_MARKET][1]
    assert f"{C.O_ALTAR_TOP} + 4d + c" in row[C.O_ALTAR_TOP][1]
    assert row[C.O_ALTAR + 1][0] == C.O_ALTAR + 4 and C.O_ALTAR + 5 in row
    assert row[C.O_SCORING][0] == C.O_SCORING + 6
    # the seat sub-rows tile 0..SEAT_WIDTH-1 and start at the SO_* constants
    assert sub[0][0] == 0 and sub[-1][1] == C.SEAT_WIDTH - 1
    for (_a0, a1, _), (b0, _b1, _) in pairwise(sub):
        assert b0 == a1 + 1
    sub_starts = {first for first, _, _ in sub}
    for name in dir(C):
        if name.startswith("SO_"):
            assert getattr(C, name) in sub_starts, name
    # the header states the shapes
    assert "(293,) float32" in bali_v0.__doc__ and "(44,) int8" in bali_v0.__doc__


def test_docstring_table_scales_match_slot_names():
    """The scale column of each row agrees with the scale core uses for its slots."""
    top, _ = _doc_table()
    slots = C.OBS_SLOTS
    for first, last, text in top:
        cells = [x.strip() for x in text.split("|")]
        scale = cells[-1]
        if not scale:
            continue  # the seat-block header row
        for i in range(first, last + 1):
            assert float(scale) == slots[i][1], (first, last, slots[i])


def _decision_name(sd):
    phase = sd["phase"]
    if phase == "offer_own":
        return "offer_face_down" if sd["to_move"] == sd["active"] else "offer_face_up"
    return phase


def _expected_observation(sd, p):
    """The observation of seat p built from state_dict() by the documented table."""
    n = sd["num_players"]
    o = np.zeros(293, dtype=np.float64)
    o[C.DECISION_NAMES.index(_decision_name(sd))] = 1
    o[10 + (sd["active"] - p) % n] = 1
    if sd["to_move"] is not None:
        o[14 + (sd["to_move"] - p) % n] = 1
    for r in range(n):
        q = (p + r) % n
        b = 18 + 26 * r
        o[b] = 1
        o[b + 1 : b + 8] = np.array(sd["hands"][q]) / 3
        o[b + 8 : b + 15] = np.array(sd["tableaus"][q]) / 5
        o[b + 15] = sd["stones"][q] / 10
        o[b + 16] = sd["vp_tokens"][q] / 10
        lo = sd["offerings"][q] if r == 0 else sd["offerings_known_min"][q]
        hi = sd["offerings"][q] if r == 0 else sd["offerings_known_max"][q]
        o[b + 17 : b + 21] = np.array(lo) / 10
        o[b + 21 : b + 25] = np.array(hi) / 10
        o[b + 25] = sum(sd["offerings"][q]) / 10
    o[122:126] = np.array(sd["supply"]) / 25
    o[126] = len(sd["deck"]) / 58
    for c, cards in enumerate(sd["market"]):
        for j, k in enumerate(cards):
            o[127 + 28 * c + 7 * j + k] = 1
    if sd["demon"] is not None:
        o[239 + sd["demon"]] = 1
    o[243] = sd["variants"]["oracle"]
    o[244] = sd["variants"]["demon"]
    o[245 + n - 2] = 1
    altar, known_by = sd["altar"], sd["altar_known_by"]
    o[248] = len(altar) / 10
    for cat, who in zip(altar, known_by, strict=True):
        if p in who:
            o[249 + cat] += 0.1
        else:
            o[253] += 0.1
    for d, (cat, who) in enumerate(zip(altar[:4], known_by[:4], strict=True)):
        if p in who:
            o[254 + 4 * d + cat] = 1
    o[270] = sd["peeks_owed"] / 4
    o[271] = sd["oracle_window"] / 4
    for k in sd["deck"]:
        o[281 + k] += 1 / 12
    if sd["last_take_column"] is not None:
        o[289 + sd["last_take_column"]] = 1
    return o


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=config_id)
def test_observation_matches_documented_layout(config):
    """For positions of random games, every observation slot outside the scoring block equals the
    value the docstring table gives for the true state (state_dict), for every seat."""
    e = make(config)
    e.reset(seed=21)
    rng = np.random.default_rng(21)
    checked = 0
    step = 0
    while True:
        sd = e.unwrapped.state_dict()
        if step % 3 == 0 or sd["phase"] in ("oracle", "offer_own", "shrine_reward", "farmer_choice", "game_over"):
            for p, agent in enumerate(e.possible_agents):
                got = e.observe(agent)["observation"]
                want = _expected_observation(sd, p)
                outside = np.r_[0:272, 281:293]
                bad = outside[~np.isclose(got[outside], want[outside], atol=1e-6)]
                names = [bali_env.observation_slot_names()[i] for i in bad]
                where = f"step {step}, seat {p}, phase {sd['phase']}"
                assert not bad.size, f"{where}: slots {names} {got[bad]} != {want[bad]}"
                scoring = got[272:281]
                if sd["phase"] in ("shrine_reward", "farmer_choice"):
                    assert scoring[sd["scored_type"]] == 1 and scoring[:7].sum() == 1
                    assert 0 < scoring[7] <= 1
                else:
                    assert not scoring.any()
                checked += 1
        if sd["phase"] == "game_over":
            break
        e.step(int(rng.choice(e.unwrapped.legal_actions())))
        step += 1
    assert checked > 40


def test_render_ansi_shows_no_private_knowledge():
    """The public table ignores what only some players know: clearing every private altar bit and
    replacing each seat's own offering cards by the public bounds changes nothing in render()."""
    from bali_env import engine as E
    from bali_env.pictures.text import render_ansi

    checked = 0
    for seed in range(6):
        env = bali_env.raw_env(num_players=3, oracle=True)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()):
            s = env._state
            v = E.state_blocks(s)
            everyone = (1 << 3) - 1
            private = [i for i in range(int(s[E.S_ALTAR_LEN])) if 0 < int(v.altar_known[i]) < everyone]
            if private:
                other = s.copy()
                ov = E.state_blocks(other)
                for i in private:
                    ov.altar_known[i] = 0
                assert render_ansi(other) == render_ansi(s)
                checked += 1
            env.step(int(rng.choice(env.legal_actions())))
    assert checked > 20


def test_state_is_the_true_state_read_only_and_live():
    """``state()`` (PettingZoo's global view) is the engine's state array: read-only (nothing
    outside the env writes it), live (it follows the game), inside ``state_space``."""
    env = bali_v0.raw_env(num_players=3)
    env.reset(seed=7)
    s = env.state()
    assert s.shape == (C.STATE_SIZE,) and s.dtype == C.STATE_DTYPE and env.state_space.contains(s)
    with pytest.raises(ValueError):
        s[0] = 1
    phase = int(s[C.S_PHASE])
    before = s.copy()
    env.step(env.legal_actions()[0])
    assert not np.array_equal(before, s) or int(s[C.S_PHASE]) != phase
    np.testing.assert_array_equal(s, env.state())
    assert env.state_space is env.state_space
