"""Who knows what, in pictures (docs/rules.md section 5): pairs of games that differ only in what
seat K cannot know give seat K byte-identical pictures at every step and byte-identical HTML
replay files; the public pictures and pages are equal across pairs that differ in any private
information.

Pairs: (1) a face-down offering of category X or Y, and (2) an oracle take at depth d or e, each
branched from a random game and played on with common actions (records that stop before the
end: the final scoring shows every card); (3) whole games, to the end, whose decks differ only in
the two cards that are never dealt. Controls make sure each comparison can fail: the hider's own
pages, and the revealed pages, do tell the branches apart, and so do public pages of decks that
differ in a card that is dealt.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import bali_env
from bali_env import engine as C
from bali_env.pictures.frames import Spectator, frame_parts, labels_for, record_frames
from bali_env.pictures.html import replay_html
from scenario import random_deck

TITLE = "the same title"
STEPS_AFTER = 45  #: common moves played after the branch


def pictures(record, seat=None, reveal=False) -> list[str]:
    """Every step's picture (the groups joined) as ``seat`` saw it."""
    spectator = Spectator(labels_for(record["num_players"], record.get("agents")), seat, reveal)
    return ["".join(frame_parts(f, spectator)) for f in record_frames(record, seat, reveal)]


def branch_records(config, is_hidden, choices, seed):
    """Two records of one random game that branch at the first hidden decision ``is_hidden(sd)``
    (after a few turns) into ``choices(sd)`` x or y, then play on with common actions; each stops
    before the end and before another seat peeks at the (different) altar."""
    n, oracle, demon = config
    for s in range(seed, seed + 200):
        env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
        env.reset(seed=s)
        rng = np.random.default_rng(s)
        while not all(env.terminations.values()):
            sd = env.state_dict()
            if sd["turn"] >= 3 and is_hidden(sd) and len(sd["deck"]) >= 12:
                x, y = choices(sd)
                a, b = copy.deepcopy(env), copy.deepcopy(env)
                a.step(x)
                b.step(y)
                hider = sd["to_move"]
                for _ in range(STEPS_AFTER):
                    common = sorted(set(a.legal_actions()) & set(b.legal_actions()))
                    if not common:
                        break
                    act = int(rng.choice(common))
                    a2, b2 = copy.deepcopy(a), copy.deepcopy(b)
                    a2.step(act)
                    b2.step(act)
                    if all(a2.terminations.values()) or all(b2.terminations.values()):
                        break  # the final scoring would show every card: stop before it
                    s2 = a2.state_dict()
                    if s2["phase"] == "oracle" and s2["active"] != hider:
                        break  # another seat peeks at the (different) altar: it may learn it now
                    a, b = a2, b2
                agents = [f"bot{q}" for q in range(n)]
                return a.game_record(agents), b.game_record(agents), hider
            env.step(int(rng.choice(env.legal_actions())))
    raise AssertionError("no hidden decision found")


def face_down(sd) -> bool:
    p = sd["to_move"]
    return sd["phase"] == "offer_own" and p == sd["active"] and sum(k > 0 for k in sd["offerings"][p]) >= 2


def face_down_choices(sd):
    cats = [c for c in range(4) if sd["offerings"][sd["to_move"]][c] > 0]
    return C.A_OFFER_OWN + cats[0], C.A_OFFER_OWN + cats[-1]


def oracle_pair(sd) -> bool:
    window = sd["altar"][: min(4, len(sd["altar"]))]
    return sd["phase"] == "oracle" and len(set(window)) >= 2


def oracle_choices(sd):
    window = sd["altar"][: min(4, len(sd["altar"]))]
    d = 0
    e = next(i for i, c in enumerate(window) if c != window[0])
    return C.A_ORACLE_TAKE + d, C.A_ORACLE_TAKE + e


def assert_seat_cannot_tell(rec_a, rec_b, hider):
    n = rec_a["num_players"]
    assert rec_a["actions"] != rec_b["actions"]
    for seat in range(n):
        pa, pb = pictures(rec_a, seat), pictures(rec_b, seat)
        ha, hb = replay_html(rec_a, seat, title=TITLE), replay_html(rec_b, seat, title=TITLE)
        if seat == hider:  # control: the hider's own pictures show what they chose
            assert pa != pb and ha != hb
        else:
            diff = next((i for i, (x, y) in enumerate(zip(pa, pb, strict=True)) if x != y), None)
            assert diff is None, f"seat {seat}'s picture differs at step {diff}"
            assert ha == hb, f"seat {seat}'s HTML replay differs"
    assert pictures(rec_a) == pictures(rec_b)
    assert replay_html(rec_a, title=TITLE) == replay_html(rec_b, title=TITLE)
    assert replay_html(rec_a, reveal=True, title=TITLE) != replay_html(rec_b, reveal=True, title=TITLE)  # control


@pytest.mark.parametrize("config", [(2, False, False), pytest.param((3, False, True), marks=pytest.mark.slow),
                                    pytest.param((4, True, False), marks=pytest.mark.slow)])
def test_a_face_down_offering_never_shows(config):
    rec_a, rec_b, hider = branch_records(config, face_down, face_down_choices, seed=10 * config[0])
    assert len(rec_a["actions"]) > 20
    assert_seat_cannot_tell(rec_a, rec_b, hider)


@pytest.mark.parametrize("config", [(2, True, False), pytest.param((3, True, True), marks=pytest.mark.slow),
                                    pytest.param((4, True, False), marks=pytest.mark.slow)])
def test_an_oracle_take_never_shows(config):
    rec_a, rec_b, hider = branch_records(config, oracle_pair, oracle_choices, seed=7 * config[0])
    assert_seat_cannot_tell(rec_a, rec_b, hider)


def _game_to_the_end(n: int, deck: list[int]) -> dict:
    """A whole game on ``deck``, played by the greedy agent (same moves whatever the undealt cards)."""
    from bali_env.bots.greedy import GreedyAgent

    env = bali_env.raw_env(num_players=n)
    env.reset(seed=3, options={"deck": deck, "starter_sets": list(range(n))})
    bot = GreedyAgent(seed=1)
    while not all(env.terminations.values()):
        o = env.observe(env.agent_selection)
        env.step(int(bot.act(o["observation"], o["action_mask"])))
    return env.game_record(["greedy"] * n)


@pytest.mark.parametrize("n", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_the_undealt_cards_never_show_to_the_end(n):
    """Decks that differ only in the last two cards (never dealt): every seat's pages, the
    public page and the revealed page are byte-identical, final scoring included."""
    deck = random_deck(oracle=False, seed=n)
    other = deck[:-2] + deck[-2:][::-1]
    k = 1
    while other == deck:  # the last two are the same card: swap with one before
        other = deck[: -2 - k] + [deck[-1]] + deck[-1 - k : -1] + [deck[-2 - k]]
        k += 1
    rec_a, rec_b = _game_to_the_end(n, deck), _game_to_the_end(n, other)
    assert rec_a["options"] != rec_b["options"] and rec_a["final_scores"] is not None
    for seat in [None, *range(n)]:
        assert replay_html(rec_a, seat, title=TITLE) == replay_html(rec_b, seat, title=TITLE)
    assert replay_html(rec_a, reveal=True, title=TITLE) == replay_html(rec_b, reveal=True, title=TITLE)
    page = replay_html(rec_a, title=TITLE)
    assert "seed" not in page and '"deck"' not in page and "options" not in page  # nothing of the deal


def test_a_dealt_difference_does_show():
    """Control: decks that differ in a card that is dealt (the market) give different pages."""
    deck = random_deck(oracle=False, seed=5)
    j = next(i for i in range(1, 16) if deck[i] != deck[0])
    other = [deck[j]] + deck[1:j] + [deck[0]] + deck[j + 1 :]
    assert replay_html(_game_to_the_end(2, deck), title=TITLE) != replay_html(_game_to_the_end(2, other), title=TITLE)


@pytest.mark.parametrize("seat", [None, 0, 2])
def test_the_end_reveals_what_the_final_scoring_shows_and_nothing_more(seat):
    """At the end every viewer sees what the final scoring shows everyone (docs/rules.md section
    4): every altar card's category (the altar is counted) and every player's offering cards
    (they are scored). Before the last move the same viewer still did not know them (a control),
    and the end changes nothing else of the view: not the altar's order, not the deck."""
    import dataclasses

    from bali_env.engine.contract import final_result
    from bali_env.engine.state import absolute_seat

    rec = None
    for s in range(40):  # a game with a face-down offering that this viewer did not place
        env = bali_env.raw_env(num_players=3, oracle=True)
        env.reset(seed=s)
        rng = np.random.default_rng(s)
        while not all(env.terminations.values()):
            env.step(int(rng.choice(env.legal_actions())))
        frames = record_frames(env.game_record(), seat)
        if frames[-2].view.altar_unknown > 0:
            rec, final = env.game_record(), final_result(env.unwrapped.state())
            break
    assert rec is not None
    before, end = frames[-2].view, frames[-1].view
    assert end.altar_unknown == 0 and list(end.altar_known) == final["altar_counts"]
    me = 0 if seat is None else seat
    for r in range(3):
        exact = final["offering_cards"][absolute_seat(me, r, 3)]
        assert list(end.offerings_min[r]) == exact and list(end.offerings_max[r]) == exact
    assert any((before.offerings_min[r] != before.offerings_max[r]).any() for r in range(3)) or before.altar_unknown
    # the picture: no altar card of unknown category is left, the counts drawn are the final ones
    spectator = Spectator(labels_for(3), seat)
    altar = frame_parts(frames[-1], spectator)[3]
    assert 'href="#hidden"' not in altar and "counted at the final scoring" in altar
    # nothing else changes at the end: the same view as the engine's own, but for the revealed parts
    if seat is not None:
        from bali_env.engine.decode import decode_observation

        obs = np.zeros(C.OBS_DIM, dtype=np.float32)
        C.observe(_final_state(rec), seat, obs, np.zeros(C.N_ACTIONS, dtype=np.int8))
        raw = decode_observation(obs)
        revealed = ("offerings_min", "offerings_max", "altar_known", "altar_unknown")
        for field in dataclasses.fields(raw):
            a, b = getattr(raw, field.name), getattr(end, field.name)
            if field.name not in revealed:
                assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, field.name


def _final_state(record):
    """The engine state at the end of ``record``."""
    from bali_env.engine.contract import dealt_state

    s = dealt_state(record["num_players"], record["variants"]["oracle"], record["variants"]["demon"],
                    record["seed"], record.get("options"))
    for action in record["actions"]:
        assert C.step_checked(s, int(action)) == 0
    return s
