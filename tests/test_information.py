"""Who knows what (docs/rules.md section 5): hidden choices and the deck order never reach the other
players' observations.

Method: play seeded random games until a hidden decision comes up, ``copy.deepcopy`` the
environment into two branches that differ only in that decision, then continue both branches
with the same actions (drawn from the actions legal in both) and compare the observations
(vector and mask) of every player other than the one who decided, at every step. The
comparison stops when the branches can no longer take the same action, when the game ends, or
when another player starts an oracle peek (a peek legitimately reveals altar cards, and the
altar differs between the branches).

Controls make sure the comparisons can fail: the deciding player's own observation differs
between the branches, a *public* choice (a face-up offering) does change the others'
observations, and a permuted deck tail becomes visible once it is dealt into the market.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import bali_env
from bali_env import engine as C
from bali_env.envs.api_check import config_id

FACE_DOWN_CONFIGS = [(2, False, False), (3, False, True), (4, False, False), (3, True, False), (4, True, True)]
ORACLE_CONFIGS = [(2, True, False), (3, True, True), (4, True, False)]
BRANCHES_PER_CONFIG = 3
COMPARE_STEPS = 120
MIN_DECK_LEFT = 12  #: branch only where at least 3 more columns will be dealt (the game goes on)


def _env(config):
    n, oracle, demon = config
    return bali_env.env(num_players=n, oracle=oracle, demon=demon)


def _state(env) -> dict:
    return env.unwrapped.state_dict()


def _find_decisions(config, predicate, count: int, first_seed: int = 0, max_seeds: int = 300):
    """Yield up to ``count`` (env, sd, seed) positions of seeded random games where
    ``predicate(sd)`` holds and the game is far from its end (at most one per game, so the
    positions are varied)."""
    found = 0
    for seed in range(first_seed, first_seed + max_seeds):
        env = _env(config)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        skip = rng.integers(0, 3)  # not always the first occurrence in a game
        while True:
            sd = _state(env)
            if sd["phase"] == "game_over":
                break
            if predicate(sd) and len(sd["deck"]) >= MIN_DECK_LEFT:
                if skip == 0:
                    yield env, sd, seed
                    found += 1
                    if found == count:
                        return
                    break
                skip -= 1
            env.step(int(rng.choice(env.unwrapped.legal_actions())))
    raise AssertionError(f"{config_id(config)}: only {found} of {count} decision points found")


def _obs(env, agent):
    o = env.observe(agent)
    return o["observation"].copy(), o["action_mask"].copy()


def _same(a, b) -> bool:
    return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def _branch_and_compare(env, action_x: int, action_y: int, hider: int, seed: int) -> dict:
    """Step copies of ``env`` with the two actions, then play on with common actions comparing the
    observations of every seat but ``hider``. Returns what happened (raises on a leak)."""
    A, B = copy.deepcopy(env), copy.deepcopy(env)
    A.step(action_x)
    B.step(action_y)
    agents = A.possible_agents
    hider_agent = agents[hider]
    others = [a for a in agents if a != hider_agent]
    out = {
        "hider_differs": not _same(_obs(A, hider_agent), _obs(B, hider_agent)),
        "truth_differs": _state(A) != _state(B),
        "compared": 0,
    }
    rng = np.random.default_rng(seed)
    for step in range(COMPARE_STEPS):
        sa, sb = _state(A), _state(B)
        assert sa["phase"] == sb["phase"] and sa["to_move"] == sb["to_move"], f"public flow diverged at step {step}"
        if sa["phase"] == "oracle" and sa["active"] != hider:
            break  # another player peeks at the (different) altar: they may learn it now
        for agent in others:
            oa, ob = _obs(A, agent), _obs(B, agent)
            if not _same(oa, ob):
                diff = np.flatnonzero(oa[0] != ob[0])
                names = [bali_env.observation_slot_names()[i] for i in diff]
                raise AssertionError(
                    f"step {step} after the branch (phase {sa['phase']}): {agent} sees the hidden choice "
                    f"of player_{hider}: slots {names} {oa[0][diff]} vs {ob[0][diff]}, masks "
                    f"{np.flatnonzero(oa[1]).tolist()} vs {np.flatnonzero(ob[1]).tolist()}"
                )
        out["compared"] += 1
        if sa["phase"] == "game_over":
            break
        common = sorted(set(A.unwrapped.legal_actions()) & set(B.unwrapped.legal_actions()))
        if not common:
            break
        a = int(rng.choice(common))
        A.step(a)
        B.step(a)
    return out


# ----------------------------------------------------------------------------- face-down offering
def _face_down(sd) -> bool:
    p = sd["to_move"]
    return sd["phase"] == "offer_own" and p == sd["active"] and sum(k > 0 for k in sd["offerings"][p]) >= 2


@pytest.mark.parametrize("config", FACE_DOWN_CONFIGS, ids=config_id)
def test_face_down_offering_is_hidden(config):
    """The active player's face-down offering: category X or Y, nobody else can tell."""
    results = []
    for env, sd, seed in _find_decisions(config, _face_down, BRANCHES_PER_CONFIG):
        p = sd["to_move"]
        cats = [c for c in range(4) if sd["offerings"][p][c] > 0]
        x, y = cats[0], cats[-1]
        r = _branch_and_compare(env, C.A_OFFER_OWN + x, C.A_OFFER_OWN + y, hider=p, seed=seed)
        assert r["truth_differs"]
        assert r["hider_differs"], "the offering player's own observation must show which card they offered"
        results.append(r)
    assert sum(r["compared"] for r in results) >= 10 * len(results)


def test_face_up_offering_is_public():
    """Control: the same comparison on a face-up offering (another player's) sees the difference."""

    def face_up(sd):
        p = sd["to_move"]
        return sd["phase"] == "offer_own" and p != sd["active"] and sum(k > 0 for k in sd["offerings"][p]) >= 2

    for env, sd, seed in _find_decisions((3, False, False), face_up, 2):
        p = sd["to_move"]
        cats = [c for c in range(4) if sd["offerings"][p][c] > 0]
        with pytest.raises(AssertionError, match="sees the hidden choice"):
            _branch_and_compare(env, C.A_OFFER_OWN + cats[0], C.A_OFFER_OWN + cats[-1], hider=p, seed=seed)


# ----------------------------------------------------------------------------- oracle take
def _oracle_pairs(sd):
    """All pairs of depths of the peeked window holding different categories."""
    if sd["phase"] != "oracle":
        return []
    window = sd["altar"][: min(4, len(sd["altar"]))]
    return [(d, e) for d in range(len(window)) for e in range(d + 1, len(window)) if window[d] != window[e]]


@pytest.mark.parametrize("config", ORACLE_CONFIGS, ids=config_id)
def test_oracle_take_is_hidden(config):
    """Taking the altar card at depth d or at depth d' (different categories): the others see only
    that one card was taken."""
    results = []
    for env, sd, seed in _find_decisions(config, lambda s: bool(_oracle_pairs(s)), BRANCHES_PER_CONFIG):
        pairs = _oracle_pairs(sd)
        d, e = pairs[seed % len(pairs)]
        p = sd["active"]
        r = _branch_and_compare(env, C.A_ORACLE_TAKE + d, C.A_ORACLE_TAKE + e, hider=p, seed=seed)
        assert r["truth_differs"]
        assert r["hider_differs"], "the taker's own observation must show the card taken"
        results.append(r)
    assert sum(r["compared"] for r in results) >= 10 * len(results)


def test_oracle_take_versus_none_is_public():
    """Control: taking a card versus taking none is public (docs/rules.md 5), and the comparison sees it."""
    for env, sd, seed in _find_decisions((3, True, False), lambda s: s["phase"] == "oracle", 1):
        with pytest.raises(AssertionError, match="sees the hidden choice"):
            _branch_and_compare(env, C.A_ORACLE_TAKE, C.A_ORACLE_NONE, hider=sd["active"], seed=seed)


# ----------------------------------------------------------------------------- the deck order
def _deck(oracle: bool, rng) -> list[int]:
    base = [card for card in range(7) for _ in range(int(C.DECK_COUNTS[card]))]
    rng.shuffle(base)
    tail = base[16:] + ([C.ORACLE] * 8 if oracle else [])
    rng.shuffle(tail)
    return [int(c) for c in base[:16] + tail]


CUT = 32  #: deck cards from this index on are permuted; the deal at index 32 is the 5th new column


def _permuted_tail(deck: list[int], rng) -> list[int]:
    """The same deck with cards CUT.. permuted so that the first dealt group looks different."""
    visible = lambda group: [c for c in group if c != C.ORACLE]  # noqa: E731
    for _ in range(1000):
        tail = deck[CUT:].copy()
        rng.shuffle(tail)
        if visible(tail[:4]) != visible(deck[CUT : CUT + 4]):
            return deck[:CUT] + tail
    raise AssertionError("no distinguishable permutation")


@pytest.mark.parametrize(
    "config", [(2, False, False), (3, True, False), (4, False, True), (4, True, True)], ids=config_id
)
def test_observation_never_contains_the_deck_order(config):
    """Two games identical except for a permuted, not yet dealt deck tail give every player the
    same observation until the tail is dealt; afterwards the market shows the difference."""
    n, oracle, demon = config
    rng = np.random.default_rng(n * 10 + oracle)
    deck = _deck(oracle, rng)
    other = _permuted_tail(deck, rng)
    options = [{"deck": d, "starter_sets": list(range(n))} for d in (deck, other)]
    if oracle:
        for o in options:
            o["altar"] = [2, 0, 3, 1]
    envs = []
    for o in options:
        e = _env(config)
        e.reset(seed=5, options=o)
        envs.append(e)
    A, B = envs
    assert _state(A)["deck"] != _state(B)["deck"]
    play = np.random.default_rng(99)
    before = after = 0
    differed_after = False
    deck_len = len(deck)
    while True:
        sa = _state(A)
        dealt_tail = deck_len - len(sa["deck"]) > CUT
        same = all(_same(_obs(A, a), _obs(B, a)) for a in A.possible_agents)
        if not dealt_tail:
            assert same, f"an observation differs before the permuted cards were dealt (phase {sa['phase']})"
            before += 1
        else:
            after += 1
            differed_after |= not same
        if sa["phase"] == "game_over":
            break
        common = sorted(set(A.unwrapped.legal_actions()) & set(B.unwrapped.legal_actions()))
        if not common:
            break
        a = int(play.choice(common))
        A.step(a)
        B.step(a)
    assert before > 30
    assert after > 0 and differed_after, "the permuted cards never became visible: the comparison is blind"


def test_core_observe_ignores_the_deck_order():
    """The same at the kernel level, for every seat, on raw states that differ only in the
    undealt part of the deck array."""
    rng = np.random.default_rng(3)
    E = np.zeros(0, dtype=np.int64)
    for n in (2, 3, 4):
        s = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
        C.init_game(s, n, True, False, np.uint64(17 + n), E, E, E)
        mask = np.zeros(C.N_ACTIONS, dtype=np.int8)
        for _ in range(60):
            C.legal_mask(s, mask)
            C.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
        t = s.copy()
        pos, length = int(s[C.S_DECK_POS]), int(s[C.S_DECK_LEN])
        assert length - pos >= 8
        undealt = t[C.S_DECK + pos : C.S_DECK + length].copy()
        t[C.S_DECK + pos : C.S_DECK + length] = (
            undealt[::-1] if not np.array_equal(undealt, undealt[::-1]) else np.roll(undealt, 1)
        )
        assert not np.array_equal(s, t)
        for p in range(n):
            o1, m1 = np.zeros(C.OBS_DIM, np.float32), np.zeros(C.N_ACTIONS, np.int8)
            o2, m2 = np.zeros(C.OBS_DIM, np.float32), np.zeros(C.N_ACTIONS, np.int8)
            C.observe(s, p, o1, m1)
            C.observe(t, p, o2, m2)
            assert np.array_equal(o1, o2) and np.array_equal(m1, m2)


# ----------------------------------------------------------------------------- every hidden decision, kernel level
FUZZ_GAMES = 120  #: random games (all 12 configurations) whose every hidden decision is branched
FUZZ_STEPS = 25  #: common steps compared after each branch


def _hidden_alternatives(s) -> list[int]:
    """The actions of a hidden decision with at least two distinguishable outcomes, else []."""
    ph, p, a = int(s[C.S_PHASE]), int(s[C.S_TO_MOVE]), int(s[C.S_ACTIVE])
    if ph == C.PH_OFFER_OWN and p == a:
        acts = [C.A_OFFER_OWN + c for c in range(4) if s[C.S_OFFERINGS + 4 * p + c] > 0]
        return acts if len(acts) >= 2 else []
    if ph == C.PH_ORACLE:
        L, w = int(s[C.S_ALTAR_LEN]), int(s[C.S_WINDOW])
        cats = [int(s[C.S_ALTAR + L - 1 - d]) for d in range(w)]
        # one depth per category present in the window: equal categories are equal outcomes
        acts = [C.A_ORACLE_TAKE + cats.index(c) for c in sorted(set(cats))]
        return acts if len(acts) >= 2 else []
    return []


def _others_cannot_tell(first: np.ndarray, other: np.ndarray, hider: int, n: int, brng: np.random.Generator,
                        what: str) -> int:
    """Play the same moves from two branches that differ only in ``hider``'s hidden choice: for
    FUZZ_STEPS steps every other seat's observation and mask are equal in both (AssertionError
    naming the slots otherwise). Returns how many positions were compared."""
    o1, o2 = np.zeros(C.OBS_DIM, np.float32), np.zeros(C.OBS_DIM, np.float32)
    m1, m2 = np.zeros(C.N_ACTIONS, np.int8), np.zeros(C.N_ACTIONS, np.int8)
    x, y = first.copy(), other.copy()
    compared = 0
    for step in range(FUZZ_STEPS):
        if x[C.S_PHASE] == C.PH_ORACLE and x[C.S_ACTIVE] != hider:
            break  # another seat peeks at the altar, which differs
        for q in (q for q in range(n) if q != hider):
            C.observe(x, q, o1, m1)
            C.observe(y, q, o2, m2)
            if not (np.array_equal(o1, o2) and np.array_equal(m1, m2)):
                diff = [bali_env.observation_slot_names()[i] for i in np.flatnonzero(o1 != o2)]
                raise AssertionError(f"{what}: seat {q} tells them apart {step} steps later: {diff}")
        compared += 1
        if x[C.S_PHASE] == C.PH_GAME_OVER:
            break
        C.legal_mask(x, m1)
        C.legal_mask(y, m2)
        common = np.flatnonzero(m1 & m2)
        if common.size == 0:
            break
        a = int(brng.choice(common))
        C.apply_action(x, a)
        C.apply_action(y, a)
    return compared


def test_every_hidden_decision_of_random_games():
    """Kernel-level fuzz: in FUZZ_GAMES random games, every face-down offering and every oracle
    take with two or more distinguishable choices is branched over all of them; for FUZZ_STEPS
    common steps, every other seat's observation and mask are identical across the branches."""
    E = np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(77)
    mask = np.zeros(C.N_ACTIONS, dtype=np.int8)
    o1, o2 = np.zeros(C.OBS_DIM, np.float32), np.zeros(C.OBS_DIM, np.float32)
    m1, m2 = np.zeros(C.N_ACTIONS, np.int8), np.zeros(C.N_ACTIONS, np.int8)
    branched = {C.PH_OFFER_OWN: 0, C.PH_ORACLE: 0}
    compared = 0
    configs = [(n, o, d) for n in (2, 3, 4) for o in (False, True) for d in (False, True)]
    for g in range(FUZZ_GAMES):
        n, oracle, demon = configs[g % len(configs)]
        s = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
        C.init_game(s, n, oracle, demon, np.uint64(3_000_000 + g), E, E, E)
        while s[C.S_PHASE] != C.PH_GAME_OVER:
            alts = _hidden_alternatives(s)
            if alts:
                hider = int(s[C.S_TO_MOVE])
                branched[int(s[C.S_PHASE])] += 1
                branches = []
                for a in alts:
                    b = s.copy()
                    C.apply_action(b, a)
                    branches.append(b)
                for k, other in enumerate(branches[1:], 1):
                    what = (f"game {g} ({n}p oracle={oracle} demon={demon}, deal seed {3_000_000 + g}): actions "
                            f"{alts[0]} and {alts[k]} of seat {hider}")
                    compared += _others_cannot_tell(branches[0], other, hider, n, np.random.default_rng(g * 100 + k),
                                                    what)
                # the hider's own view does tell the branches apart (the test can fail)
                C.observe(branches[0], hider, o1, m1)
                C.observe(branches[1], hider, o2, m2)
                assert not np.array_equal(o1, o2)
            C.legal_mask(s, mask)
            C.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
    print(f"\n[test_information] {FUZZ_GAMES} games, branched {branched}, {compared} comparisons")
    assert branched[C.PH_OFFER_OWN] > 50 and branched[C.PH_ORACLE] > 50, branched
    assert compared > 5000


def test_known_altar_counts_include_the_peeked_window():
    """docs/bots.md: during an oracle decision, slots 249-252 (altar cards of known category)
    count the peeked window too, and every window card shown in 254-269 is among them."""
    from bali_env.engine.decode import decode_observation

    seen = 0
    for seed in range(30):
        env = bali_env.raw_env(num_players=3, oracle=True)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()):
            o = env.observe(env.agent_selection)
            v = decode_observation(o["observation"])
            if v.decision == "oracle":
                window = [c for c in v.altar_top[: v.oracle_window] if c >= 0]
                assert len(window) == v.oracle_window
                for c in set(window):
                    assert v.altar_known[c] >= window.count(c)
                seen += 1
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    assert seen > 5
