"""Helpers for the rule-by-rule scenario tests (tests/test_rules_*.py).

A scenario is a game dealt with chosen ``reset`` options (a deck built from a chosen prefix,
chosen starter sets, a chosen Oracle altar) and driven with chosen actions, each checked to be
legal before it is played. Everything here is plain bookkeeping of docs/rules.md ids: no rule of the
game is computed here, so the tests' expected numbers stay independent of the engine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import bali_env

# ----------------------------------------------------------------------------- card ids (docs/rules.md 1)
SC, PR, SH = 0, 1, 2  # stonecutter, priest, shrine
RF, PF, BF, CF = 3, 4, 5, 6  # rice, peanut, banana, chili farmer
OR = 7  # oracle (Oracle variant only)
FARMER_OF = (RF, PF, BF, CF)  # farmer card id of category c

# ----------------------------------------------------------------------------- category ids
RICE, PEANUTS, BANANAS, CHILIES = 0, 1, 2, 3

# ----------------------------------------------------------------------------- action ids (docs/rules.md 6)
PASS = 4
PLAY_SC, PLAY_PR, PLAY_SH = 5, 6, 7
DISCARD = 20
ORACLE_NONE = 37
STONES, VP = 38, 39


def TAKE(c: int) -> int:
    """Phase 1: take an offering card of category c from the supply."""
    return 0 + c


def FARMERS(c: int, k: int = 1) -> int:
    """Phase 2a: play k farmers of category c."""
    assert 0 <= c < 4 and 1 <= k <= 3
    return 8 + 3 * c + (k - 1)


def OWN(c: int) -> int:
    """Phase 2b: put one of your own offering cards of category c on the altar."""
    return 21 + c


def SUPPLY(c: int) -> int:
    """Phase 2b (active player): put a supply card of category c on the altar."""
    return 25 + c


def COL(col: int) -> int:
    """Phase 3: take the first takeable card of column col."""
    return 29 + col


def PEEK(depth: int) -> int:
    """Oracle peek: take the altar card at depth d (0 = top)."""
    return 33 + depth


def CHOOSE(c: int) -> int:
    """Farmer scoring with the scored category empty: take category c instead."""
    return 40 + c


# ----------------------------------------------------------------------------- decks
DECK_COUNTS = {SC: 12, PR: 9, SH: 9, RF: 5, PF: 5, BF: 5, CF: 5}
ORACLE_COUNT = 8


def deck_with(prefix: Sequence[int], oracle: bool = False, rest: Sequence[int] = ()) -> list[int]:
    """A full valid play deck (top first): ``prefix``, then ``rest``, then every remaining card of
    the deck's multiset in a fixed order (by card id; oracles last). 50 cards, 58 with ``oracle``."""
    want = Counter(DECK_COUNTS)
    if oracle:
        want[OR] = ORACLE_COUNT
    head = list(prefix) + list(rest)
    used = Counter(head)
    for card, k in used.items():
        assert k <= want[card], f"the prefix uses {k} copies of card {card}, the deck has {want[card]}"
    tail = []
    for card in sorted(want):
        tail += [card] * (want[card] - used[card])
    deck = head + tail
    assert len(deck) == (58 if oracle else 50)
    if oracle:
        assert OR not in deck[:16], "the starting market (first 16 cards) must hold no oracle"
    return deck


def random_deck(oracle: bool, seed: int = 0) -> list[int]:
    """A valid shuffled ``deck`` option (no oracle among the first 16), reproducible from ``seed``."""
    import numpy as np

    from bali_env import engine as C

    rng = np.random.default_rng(seed)
    base = [card for card in range(7) for _ in range(int(C.DECK_COUNTS[card]))]
    rng.shuffle(base)
    tail = base[16:] + ([C.ORACLE] * 8 if oracle else [])
    rng.shuffle(tail)
    return [int(c) for c in base[:16] + tail]


def market(*columns: Sequence[int]) -> list[int]:
    """The 16-card deck prefix that deals these four columns (each in take order, first = takeable)."""
    assert len(columns) == 4 and all(len(c) == 4 for c in columns)
    return [card for col in columns for card in col]


def starter_hand(k: int) -> list[int]:
    """Hand counts (by card id 0..6) of starter set k: the farmers of the three categories but k."""
    hand = [0] * 7
    for c in range(4):
        if c != k:
            hand[FARMER_OF[c]] = 1
    return hand


def counts(**kw: int) -> list[int]:
    """A 7-long card-count vector: counts(sc=1, pr=2, sh=0, rf=.., pf=.., bf=.., cf=..)."""
    names = ("sc", "pr", "sh", "rf", "pf", "bf", "cf")
    assert set(kw) <= set(names), kw
    return [kw.get(n, 0) for n in names]


# ----------------------------------------------------------------------------- driving a game
class Game:
    """A dealt game with chosen options, driven with legal actions only (seed 0: the options fix
    every random choice of the deal)."""

    def __init__(
        self,
        n: int = 2,
        *,
        prefix: Sequence[int] = (),
        rest: Sequence[int] = (),
        deck: Sequence[int] | None = None,
        starters: Sequence[int] | None = None,
        altar: Sequence[int] | None = None,
        oracle: bool = False,
        demon: bool = False,
        seed: int = 0,
        **env_kwargs,
    ) -> None:
        self.env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon, **env_kwargs)
        # the whole deck if given (checked to be the exact multiset), else prefix + rest + the rest
        self.deck = deck_with(deck, oracle=oracle) if deck is not None else deck_with(prefix, oracle=oracle, rest=rest)
        options: dict = {"deck": self.deck}
        if starters is not None:
            options["starter_sets"] = list(starters)
        if altar is not None:
            options["altar"] = list(altar)
        self.env.reset(seed=seed, options=options)

    @property
    def sd(self) -> dict:
        """The full true state (state_dict)."""
        return self.env.state_dict()

    @property
    def to_move(self) -> int | None:
        return self.sd["to_move"]

    @property
    def phase(self) -> str:
        return self.sd["phase"]

    def legal(self) -> list[int]:
        return self.env.legal_actions()

    def act(self, *actions: int) -> Game:
        """Play the actions in order, asserting each is legal for the agent to move."""
        for a in actions:
            sd = self.sd
            legal = self.env.legal_actions()
            assert a in legal, (
                f"action {a} ({bali_env.action_to_str(a)}) is not legal for seat {sd['to_move']} "
                f"in phase {sd['phase']}; legal: {legal}"
            )
            assert self.env.agent_selection == f"player_{sd['to_move']}"
            self.env.step(a)
        return self

    def turn(self, play: int, takes: Iterable[int], offering: int = PASS) -> Game:
        """A plain turn with no decision in phase 2b or 4: offering choice, one play, the takes."""
        self.act(offering, play, *takes)
        return self

    def observe(self, seat: int) -> dict:
        return self.env.observe(f"player_{seat}")


# ----------------------------------------------------------------------------- shared long scenarios
DRAIN_CHILIES_PREFIX = market(
    [CF, SC, SC, SC],  # column 0: seat 0 takes the chili farmer, then three stonecutter reveals
    [PR, CF, CF, CF],  # column 1: three chili farmer reveals
    [SH, SC, SC, PR],  # column 2: two stonecutter reveals, then a priest (nobody owns one)
    [PR, CF, SH, SH],  # column 3: the last chili farmer reveal
) + [SC, PR, PR, PR]  # the new column 0 (dealt when column 0 empties): a stonecutter first


def drain_chilies_game() -> Game:
    """A 4-player game (starter sets 0, 1, 2, 3) that empties the chili supply (21 cards) in 11
    turns, then stops at the farmer-scoring choice it causes. Hand-derived trace (stones by seat;
    D = chili cards gone from the supply; every seat owns exactly 1 stonecutter throughout):

    T1  s0 pass, plays its chili farmer, takes the chili farmer of col 0, reveals SC: stones 3,4,5,6
    T2  s1 pass (chili 5 > 4), plays chili farmer, takes SC, reveals SC: 4,5,6,7
    T3  s2 takes chili for 5 (D=1), plays chili farmer, takes SC, reveals SC: 5,6,2,8
    T4  s3 takes chili for 5 (D=2), plays rice farmer, takes the last SC of col 0 -> new column,
        whose first card SC is scored: 6,7,3,4
    T5  s0 takes chili for 4 (D=3), plays its 2nd chili farmer, takes PR, reveals CF: s0, s1, s2
        one card each + s0 majority bonus (2 > 1, >= 2): D=7; stones 2,7,3,4
    T6  s1 takes chili for 4 (D=8), plays rice farmer, takes CF, reveals CF: 4 cards, D=12; 2,3,3,4
    T7  s2 pass (4 > 3), plays peanut farmer, takes CF, reveals CF: 4 cards, D=16
    T8  s3 pass (5 > 4), plays peanut farmer, takes SH, reveals SC: 3,4,4,5
    T9  s0 takes chili for 3 (D=17), plays peanut farmer, takes SC, reveals SC: 1,5,5,6
    T10 s1 takes chili for 4 (D=18), plays banana farmer, takes SC, reveals PR: 1,1,5,6
    T11 s2 takes chili for 4 (D=19, supply 2 left), plays rice farmer, takes PR, reveals CF: in turn
        order from s2: s2 gets 1 (1 left), s3 owns none, s0 gets the last, s1 finds chilies empty
        -> the game stops here with seat 1 to choose (actions 40-43); the majority bonus of s0
        comes after.
    """
    g = Game(4, prefix=DRAIN_CHILIES_PREFIX, starters=[0, 1, 2, 3])
    g.turn(FARMERS(CHILIES), [COL(0)])  # T1
    g.turn(FARMERS(CHILIES), [COL(0)])  # T2
    g.turn(FARMERS(CHILIES), [COL(0)], offering=TAKE(CHILIES))  # T3
    g.turn(FARMERS(RICE), [COL(0)], offering=TAKE(CHILIES))  # T4
    g.turn(FARMERS(CHILIES), [COL(1)], offering=TAKE(CHILIES))  # T5
    g.turn(FARMERS(RICE), [COL(1)], offering=TAKE(CHILIES))  # T6
    g.turn(FARMERS(PEANUTS), [COL(1)])  # T7
    g.turn(FARMERS(PEANUTS), [COL(2)])  # T8
    g.turn(FARMERS(PEANUTS), [COL(2)], offering=TAKE(CHILIES))  # T9
    g.turn(FARMERS(BANANAS), [COL(2)], offering=TAKE(CHILIES))  # T10
    g.turn(FARMERS(RICE), [COL(3)], offering=TAKE(CHILIES))  # T11
    return g


# ----------------------------------------------------------------------------- a plain driver
PLAY_PRIORITY = [PLAY_SC, PLAY_PR] + [FARMERS(c, 1) for c in range(4)] + [DISCARD, PLAY_SH]


def plain_action(g: Game, oracle_action: int = ORACLE_NONE) -> int:
    """A fixed, simple choice for the decision at hand (used only to reach the end of a game):
    pass in phase 1, play one free card (shrine last), offer the first legal card, take from the
    first legal column, ``oracle_action`` at a peek if legal (else take none), stones for shrines."""
    legal = g.legal()
    phase = g.phase
    if phase == "take_offering":
        return PASS
    if phase == "play":
        return next(a for a in PLAY_PRIORITY if a in legal)
    if phase == "oracle":
        return oracle_action if oracle_action in legal else ORACLE_NONE
    if phase == "shrine_reward":
        return STONES
    return legal[0]


def autoplay(g: Game, stop, oracle_action: int = ORACLE_NONE, limit: int = 2000) -> Game:
    """Play ``plain_action`` until ``stop(g)`` is true (checked before every decision)."""
    for _ in range(limit):
        if stop(g):
            return g
        assert g.phase != "game_over", "the game ended before the stop condition"
        g.act(plain_action(g, oracle_action))
    raise AssertionError("stop condition not reached")


# The deal and the 126 decisions below reach a 4-player position where the whole supply (84
# offering cards) is empty. They were found once by a search over random deals with a simple
# greedy policy (take the fullest category in phase 1 whenever affordable, play farmers of new
# categories, take towards farmer reveals) and are replayed here as fixed reset options and
# actions: nothing in them is a rule under test, they only reach the position. At the end seat 0
# is to make its last take of turn 41, with column 0 = [SC, PF] and all four seats owning peanut
# farmers (2, 1, 1, 2: no majority).
WHOLE_SUPPLY_EMPTY_DECK = [2, 1, 0, 4, 0, 4, 4, 0, 1, 0, 0, 2, 3, 1, 2, 3] + [
    4, 2, 0, 3, 2, 2, 0, 6, 2, 3, 1, 5, 5, 6, 0, 3, 1,
    0, 5, 1, 6, 2, 6, 5, 0, 0, 6, 1, 5, 2, 4, 0, 1, 1,
]  # fmt: skip
WHOLE_SUPPLY_EMPTY_STARTERS = [0, 3, 2, 1]
WHOLE_SUPPLY_EMPTY_ACTIONS = [
    4, 17, 31, 4, 8, 31, 0, 11, 30, 2, 8, 30, 3, 14, 32, 0, 11, 29, 4, 17, 31, 4, 17, 31,
    4, 11, 32, 4, 14, 32, 4, 8, 32, 4, 14, 31, 4, 8, 30, 4, 5, 30, 4, 8, 30, 4, 11, 31,
    4, 11, 31, 2, 5, 31, 0, 5, 31, 1, 11, 31, 1, 6, 31, 3, 8, 31, 4, 14, 31, 4, 17, 31,
    4, 5, 32, 1, 8, 32, 3, 6, 32, 1, 5, 32, 1, 5, 32, 1, 20, 32, 4, 5, 32, 4, 17, 32,
    1, 17, 32, 1, 20, 32, 42, 1, 17, 30, 1, 14, 30, 1, 6, 30, 41, 40, 41, 4, 5, 30,
    1, 8, 30, 4, 6, 29, 4, 14,
]  # fmt: skip


def whole_supply_empty_game() -> Game:
    """The position described above (every action checked legal on the way)."""
    g = Game(4, deck=WHOLE_SUPPLY_EMPTY_DECK, starters=WHOLE_SUPPLY_EMPTY_STARTERS)
    g.act(*WHOLE_SUPPLY_EMPTY_ACTIONS)
    return g


def face_down_twins(num_players: int, seeds: Iterable[int] = range(200)):
    """Two copies of a random game (uniform legal moves, seeded) that differ only in the card the
    active player just offered face down, at the first such choice between two cards: ``(a, b,
    watcher)``, ``watcher`` the agent name of the next seat, who cannot tell the two apart.
    None when no seed reaches such a choice."""
    import copy

    import numpy as np

    for seed in seeds:
        rng = np.random.default_rng(seed)
        env = bali_env.raw_env(num_players=num_players)
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            sd = env.state_dict()
            legal = env.legal_actions()
            hidden = [a for a in legal if 21 <= a <= 24]
            if sd["phase"] == "offer_own" and sd["to_move"] == sd["active"] and len(hidden) >= 2:
                a, b = copy.deepcopy(env), copy.deepcopy(env)
                a.step(hidden[0])
                b.step(hidden[1])
                return a, b, env.possible_agents[(sd["active"] + 1) % num_players]
            env.step(int(rng.choice(legal)))
    return None


def play_checked(bots: Sequence, seed: int, **config) -> tuple[list[int], list[int]]:
    """Play one AEC game (``bali_env.raw_env(**config)`` dealt from ``seed``), seat k by
    ``bots[k].act``, asserting every move legal; return the actions and the final scores."""
    env = bali_env.raw_env(**config)
    env.reset(seed=seed)
    actions = []
    while not all(env.terminations.values()):
        o = env.observe(env.agent_selection)
        a = bots[env.agent_name_mapping[env.agent_selection]].act(o["observation"], o["action_mask"])
        assert o["action_mask"][a] == 1, f"illegal action {a}"
        env.step(a)
        actions.append(a)
    return actions, env.state_dict()["scores"]


def random_game(seed: int, num_players: int = 3, **config):
    """An AEC env that played a whole game of uniformly random legal moves (deal and moves from ``seed``)."""
    import numpy as np

    env = bali_env.raw_env(num_players=num_players, **config)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    return env
