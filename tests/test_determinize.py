"""The engine's determinization (``bali_env.engine.determinize``): for states reached by seeded
random games (every player count and variant, every decision kind) and every seat, a sample
observed from seat 0 gives back that seat's observation bit for bit, keeps everything the seat
sees, draws the hidden cards only from the cards the seat cannot see, is a valid state the
engine plays to the end, and orders the deck uniformly (chi-square tests that a biased sampler
fails)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from bali_env import engine as E
from bali_env.envs.api_check import CONFIGURATIONS, config_id
from bali_env.engine.contract import check_states

_EMPTY = np.zeros(0, dtype=np.int64)
#: the decisions where every state is kept (they are rare in random games); others every few steps
_RARE = (E.D_OFFER_FACE_UP, E.D_OFFER_FACE_DOWN, E.D_OFFER_SUPPLY, E.D_ORACLE, E.D_SHRINE_REWARD,
         E.D_FARMER_CHOICE)
P_MIN = 1e-6  #: a chi-square p-value below this fails (a correct sampler: one false failure in a million)


def _new_state(config, seed):
    n, oracle, demon = config
    s = np.zeros(E.STATE_SIZE, dtype=E.STATE_DTYPE)
    E.init_game(s, n, oracle, demon, np.uint64(seed), _EMPTY, _EMPTY, _EMPTY)
    return s


def _states(config, seeds, every=4):
    """States along seeded random games: every ``every``-th decision, every rare decision, the end."""
    mask = np.zeros(E.N_ACTIONS, dtype=np.int8)
    for seed in seeds:
        s = _new_state(config, seed)
        policy = np.array([seed + 1000], dtype=np.uint64)
        step = 0
        while s[E.S_PHASE] != E.PH_GAME_OVER:
            if step % every == 0 or E.decision_index(s) in _RARE:
                yield s.copy()
            E.legal_mask(s, mask)
            E.apply_action(s, E.random_legal_action(policy, mask))
            step += 1
        yield s.copy()


def _observe(s, p):
    obs = np.zeros(E.OBS_DIM, dtype=np.float32)
    mask = np.zeros(E.N_ACTIONS, dtype=np.int8)
    E.observe(s, p, obs, mask)
    return obs, mask


def _live_market(s):
    v = E.state_blocks(s)
    return [v.market[col, v.col_pos[col] : v.col_len[col]].tolist() for col in range(E.N_COLUMNS)]


def _altar_known_to(s, seat):
    """(categories at depth 0..3 as ``seat`` knows them, -1 unknown; known categories, counted)."""
    v, top = E.state_blocks(s), int(s[E.S_ALTAR_LEN])
    knows = [bool(v.altar_known[i] >> seat & 1) for i in range(top)]
    window = [int(v.altar[top - 1 - d]) if knows[top - 1 - d] else -1 for d in range(min(E.ORACLE_WINDOW, top))]
    return window, Counter(int(v.altar[i]) for i in range(top) if knows[i])


def _check_seen_parts(truth, p, sample):
    """Everything seat ``p`` sees of ``truth`` is in ``sample`` unchanged (``p`` is its seat 0)."""
    n = int(truth[E.S_NUM_PLAYERS])
    t, u = E.state_blocks(truth), E.state_blocks(sample)
    seats = [(p + r) % n for r in range(n)]  # sample seat r is truth seat seats[r]
    assert (u.hands[:n] == t.hands[seats]).all() and (u.tableaus[:n] == t.tableaus[seats]).all()
    assert (u.stones[:n] == t.stones[seats]).all() and (u.vp_tokens[:n] == t.vp_tokens[seats]).all()
    assert (u.offerings[0] == t.offerings[p]).all()  # own offering cards: exact
    assert (u.known_min[1:n] == t.known_min[seats[1:]]).all() and (u.known_max[1:n] == t.known_max[seats[1:]]).all()
    assert (u.offerings[:n].sum(axis=1) == t.offerings[seats].sum(axis=1)).all()
    assert (u.supply == t.supply).all() and _live_market(sample) == _live_market(truth)
    for k in (E.S_PHASE, E.S_DEMON_COL, E.S_LAST_COL, E.S_SCORED, E.S_PEEKS, E.S_WINDOW, E.S_ALTAR_LEN):
        assert sample[k] == truth[k], k
    assert sample[E.S_ACTIVE] == (truth[E.S_ACTIVE] - p) % n
    over = truth[E.S_PHASE] == E.PH_GAME_OVER
    assert sample[E.S_TO_MOVE] == (-1 if over else (truth[E.S_TO_MOVE] - p) % n)
    if truth[E.S_PHASE] in (E.PH_OFFER_OWN, E.PH_OFFER_SUPPLY):
        assert sample[E.S_OFFER_STEP] == truth[E.S_OFFER_STEP]
    if truth[E.S_PHASE] in (E.PH_SHRINE_REWARD, E.PH_FARMER_CHOICE):
        assert sample[E.S_SCORE_STEP] == truth[E.S_SCORE_STEP]
        assert sample[E.S_BONUS_SEAT] == (-1 if truth[E.S_BONUS_SEAT] < 0 else (truth[E.S_BONUS_SEAT] - p) % n)
    deck_left = slice(int(truth[E.S_DECK_POS]), int(truth[E.S_DECK_LEN]))
    assert sorted(u.deck[: sample[E.S_DECK_LEN]]) == sorted(t.deck[deck_left])  # the public composition
    assert _altar_known_to(sample, 0) == _altar_known_to(truth, p)


def _check_hidden_parts(truth, p, sample):
    """The hidden parts of ``sample`` stay within the public bounds, and the hidden cards of each
    category are exactly the cards of that category seat ``p`` cannot see."""
    n = int(truth[E.S_NUM_PLAYERS])
    u = E.state_blocks(sample)
    assert (u.known_min[1:n] <= u.offerings[1:n]).all() and (u.offerings[1:n] <= u.known_max[1:n]).all()
    top = int(sample[E.S_ALTAR_LEN])
    unknown_altar = Counter(int(u.altar[i]) for i in range(top) if not u.altar_known[i] & 1)
    _, seen_altar = _altar_known_to(truth, p)
    t = E.state_blocks(truth)
    for c in range(E.N_CATEGORIES):
        hidden = int(u.offerings[1:n, c].sum()) + unknown_altar[c]
        unseen = E.SUPPLY_PER_CATEGORY - int(t.supply[c]) - int(t.offerings[p, c]) - seen_altar[c]
        assert hidden == unseen, c


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=config_id)
def test_sample_gives_back_the_observation_and_keeps_what_the_seat_sees(config):
    """For every seat of states along random games: ``check_observation`` accepts the observation,
    the sample observed from seat 0 gives back the observation and mask bit for bit, keeps every
    seen part, draws hidden cards from the unseen ones only, is a valid state, and the engine
    plays it to the end."""
    n, oracle, _ = config
    mask = np.zeros(E.N_ACTIONS, dtype=np.int8)
    kinds = set(range(E.N_DECISIONS)) - {E.D_FARMER_CHOICE} - (set() if oracle else {E.D_ORACLE})
    decisions: set[int] = set()
    games = itertools.takewhile(lambda seed: seed < 13 or not kinds <= decisions, range(11, 60))
    checked = 0
    for i, truth in enumerate(itertools.chain.from_iterable(_states(config, (seed,)) for seed in games)):
        decisions.add(int(E.decision_index(truth)))
        for p in range(n):
            obs, legal = _observe(truth, p)
            assert np.array_equal(E.check_observation(obs), obs)
            stream = np.array([1000 * i + p], dtype=np.uint64)
            sample = np.zeros(E.STATE_SIZE, dtype=E.STATE_DTYPE)
            E.determinize(obs, stream, sample)
            again, again_legal = _observe(sample, 0)
            assert np.array_equal(again.view(np.uint32), obs.view(np.uint32))  # bit for bit
            assert np.array_equal(again_legal, legal)
            _check_seen_parts(truth, p, sample)
            _check_hidden_parts(truth, p, sample)
            check_states(sample[None])
            E.play_out(sample, stream, mask)
            assert sample[E.S_PHASE] == E.PH_GAME_OVER
            check_states(sample[None])
            checked += 1
    assert checked > 100
    assert kinds <= decisions, sorted(kinds - decisions)  # farmer choices: see the next test


def test_farmer_choices_and_every_decision_kind_are_covered():
    """Farmer choices (an empty supply pile) are rare: searched for over more games, and checked
    like the others; together with the test above every decision kind is covered."""
    found = 0
    for config in ((2, True, False), (3, True, True), (4, False, False)):
        for truth in _states(config, seeds=range(100, 160), every=10**6):
            if E.decision_index(truth) != E.D_FARMER_CHOICE:
                continue
            for p in range(config[0]):
                obs, legal = _observe(truth, p)
                sample = np.zeros(E.STATE_SIZE, dtype=E.STATE_DTYPE)
                E.determinize(obs, np.array([found], dtype=np.uint64), sample)
                again, again_legal = _observe(sample, 0)
                assert np.array_equal(again.view(np.uint32), obs.view(np.uint32))
                assert np.array_equal(again_legal, legal)
                _check_seen_parts(truth, p, sample)
                _check_hidden_parts(truth, p, sample)
            found += 1
    assert found >= 3


def test_samples_are_reproducible_and_not_the_truth():
    """The same stream gives the same sample; successive samples differ in the deck order, never
    copy the true (hidden) order, and draw from the public composition."""
    truth = _new_state((3, True, False), seed=4)
    obs, _ = _observe(truth, int(truth[E.S_TO_MOVE]))
    a, b = (np.zeros(E.STATE_SIZE, dtype=E.STATE_DTYPE) for _ in range(2))
    E.determinize(obs, np.array([5], dtype=np.uint64), a)
    E.determinize(obs, np.array([5], dtype=np.uint64), b)
    assert np.array_equal(a, b)
    stream = np.array([1], dtype=np.uint64)
    decks = set()
    for _ in range(20):
        E.determinize(obs, stream, a)
        decks.add(tuple(E.state_blocks(a).deck[: a[E.S_DECK_LEN]].tolist()))
    true_deck = tuple(E.state_blocks(truth).deck[truth[E.S_DECK_POS] : truth[E.S_DECK_LEN]].tolist())
    assert len(decks) == 20 and true_deck not in decks
    assert all(sorted(d) == sorted(true_deck) for d in decks)


# ----------------------------------------------------------------------------- the deck order is uniform
def _decks(obs, count, seed):
    """``count`` sampled deck orders of one observation, as a [count, deck size] array."""
    stream = np.array([seed], dtype=np.uint64)
    s = np.zeros(E.STATE_SIZE, dtype=E.STATE_DTYPE)
    out = []
    for _ in range(count):
        E.determinize(obs, stream, s)
        out.append(E.state_blocks(s).deck[: s[E.S_DECK_LEN]].copy())
    return np.array(out)


def _arrangements_p_value(decks):
    """Chi-square p-value of the decks against the uniform law over every distinct arrangement
    of their composition (each arrangement equally likely under a uniform shuffle)."""
    from scipy.stats import chisquare

    composition = Counter(decks[0].tolist())
    total = math.factorial(len(decks[0]))
    for copies in composition.values():
        total //= math.factorial(copies)
    seen = Counter(map(tuple, decks.tolist()))
    assert set(seen) <= set(itertools.permutations(decks[0].tolist()))  # only arrangements of the composition
    observed = np.array(list(seen.values()) + [0] * (total - len(seen)), dtype=np.float64)
    return chisquare(observed, np.full(total, len(decks) / total)).pvalue


def _positions_p_value(decks, positions):
    """The smallest chi-square p-value (times the number of tests: Bonferroni) of the card ids at
    each of ``positions`` against the deck's composition (a uniform shuffle puts each card
    anywhere with equal chance)."""
    from scipy.stats import chisquare

    ids, copies = np.unique(decks[0], return_counts=True)
    expected = copies / copies.sum() * len(decks)
    worst = 1.0
    for j in positions:
        observed = np.array([(decks[:, j] == k).sum() for k in ids], dtype=np.float64)
        worst = min(worst, chisquare(observed, expected).pvalue * len(positions))
    return worst


def _small_deck_observation():
    """An observation late in a game, with 4 to 6 cards left in the deck, some of them alike."""
    mask = np.zeros(E.N_ACTIONS, dtype=np.int8)
    for seed in range(50):
        s = _new_state((2, True, False), seed)
        policy = np.array([seed], dtype=np.uint64)
        while s[E.S_PHASE] != E.PH_GAME_OVER:
            left = E.state_blocks(s).deck[s[E.S_DECK_POS] : s[E.S_DECK_LEN]]
            if 4 <= len(left) <= 6 and 1 < len(set(left.tolist())) < len(left):
                return _observe(s, 0)[0]
            E.legal_mask(s, mask)
            E.apply_action(s, E.random_legal_action(policy, mask))
    pytest.fail("no position with a small deck found")


def _naive_shuffle(decks, seed):
    """A classic biased shuffle (swap each card with any card, not one not yet placed)."""
    rng = np.random.default_rng(seed)
    out = decks.copy()
    for row in out:
        for i in range(len(row)):
            j = rng.integers(len(row))
            row[i], row[j] = row[j], row[i]
    return out


def test_small_deck_orders_are_uniform_over_all_arrangements():
    """With a few cards left, every distinct order of the public composition is equally likely
    (chi-square over 20,000 samples, p >= 1e-6); the same test rejects a sampler that never
    shuffles and one that shuffles with the classic bias."""
    pytest.importorskip("scipy")
    obs = _small_deck_observation()
    decks = _decks(obs, 20_000, seed=2024)
    assert _arrangements_p_value(decks) >= P_MIN
    unshuffled = np.sort(decks, axis=1)
    assert _arrangements_p_value(unshuffled) < P_MIN
    assert _arrangements_p_value(_naive_shuffle(unshuffled, seed=1)) < P_MIN


def test_full_deck_positions_are_uniform():
    """At the start of a game (a deck of 40+ cards) the card at the top, in the middle and at the
    bottom of a sample follows the public composition (chi-square over 20,000 samples, p >= 1e-6
    after Bonferroni); a sampler that never shuffles fails."""
    pytest.importorskip("scipy")
    truth = _new_state((4, True, True), seed=9)
    obs, _ = _observe(truth, 2)
    decks = _decks(obs, 20_000, seed=77)
    positions = (0, 1, decks.shape[1] // 2, decks.shape[1] - 1)
    assert decks.shape[1] > 40
    assert _positions_p_value(decks, positions) >= P_MIN
    assert _positions_p_value(np.sort(decks, axis=1), positions) < P_MIN


# ----------------------------------------------------------------------------- checking an observation
def _real_observation():
    truth = _new_state((3, True, True), seed=5)
    mask = np.zeros(E.N_ACTIONS, dtype=np.int8)
    policy = np.array([5], dtype=np.uint64)
    for _ in range(40):  # some altar and offering cards by now
        E.legal_mask(truth, mask)
        E.apply_action(truth, E.random_legal_action(policy, mask))
    return _observe(truth, 1)[0]


def _edited(obs, **slots):
    out = obs.copy()
    for key, value in slots.items():
        field, _, k = key.partition("_at_")
        out[E.OFFSET[field] + int(k or 0)] = value
    return out


def test_check_observation_refuses_what_determinize_cannot_read():
    """Wrong shape or dtype, values off the scale grid or out of range, one-hots with no or two
    slots, counts that do not add up: TypeError / ValueError naming the problem."""
    obs = _real_observation()
    assert np.array_equal(E.check_observation(obs.astype(np.float64)), obs)
    with pytest.raises(ValueError, match="shape"):
        E.check_observation(obs[:-1])
    with pytest.raises(TypeError, match="numeric"):
        E.check_observation(obs.astype(str))
    deck = E.OFFSET["deck"]
    bad = {
        "count": _edited(obs, deck=obs[deck] + 0.5 / E.X_DECK),
        "count within": _edited(obs, deck=np.nan),
        "one-hot": _edited(obs, num_players_at_0=1.0, num_players_at_1=1.0),
        "active seat": _edited(obs, active_at_3=1.0),
        "deck's cards": _edited(obs, deck=obs[deck] + 1 / E.X_DECK),
        "altar": _edited(obs, altar_unknown=obs[E.OFFSET["altar_unknown"]] + 1 / E.X_ALTAR),
    }
    known = np.rint(obs[E.O_ALTAR_KNOWN : E.O_ALTAR_KNOWN + E.N_CATEGORIES] * E.X_ALTAR)
    assert obs[E.O_ALTAR] > 0 and (known == 0).any()
    top_unseen = obs.copy()  # the top altar card of a category the observer knows no altar card of
    top_unseen[E.O_ALTAR_TOP : E.O_ALTAR_TOP + E.N_CATEGORIES] = np.eye(E.N_CATEGORIES)[int(np.argmin(known))]
    bad["depth 0 is not among"] = top_unseen
    for match, o in bad.items():
        with pytest.raises(ValueError, match=match):
            E.check_observation(o)
