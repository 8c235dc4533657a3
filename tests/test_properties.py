"""Property tests over thousands of random games (uniformly random legal actions).

Two drivers:

- ``kernel_run`` plays ``N_KERNEL_GAMES`` games (all 12 configurations, the same number each)
  directly on ``bali_env.engine`` state arrays, in lockstep as one ``[N, STATE_SIZE]`` batch so the
  invariants can be checked with vectorised numpy at every step of every game;
- ``env_run`` plays ``N_ENV_GAMES`` games through the PettingZoo AEC environment and checks the
  same properties on ``state_dict()`` and the observations.

Each driver does not stop at the first violation: it records up to a few examples per property
(configuration, deal seed, decision number, what went wrong), and one test per property asserts
that its list is empty, so one broken rule does not hide the others.

The properties (docs/rules.md references in brackets):

- cards are conserved: remaining deck + market + hands + tableaus + discarded shrines (counted
  from the discard actions) + oracles removed from the game (the oracles among the dealt deck
  cards) = the play deck's multiset plus the starter cards of the seats in play [1, 2, 3];
  the deck order never changes after the deal;
- offering cards are conserved per category: supply + every seat's offerings + altar = 25 [1];
- stones, VP tokens, supply, offerings, hands and tableaus are never negative, and the blocks of
  seats that are not in the game stay empty;
- exactly one seat is to move until the end (``S_TO_MOVE`` in range; it is the active player in
  every phase but the offering, shrine-reward and farmer-choice ones), and -1 after [3, 8];
  hands hold 3 cards except the active player's during phases 2-3 [3];
- the mask is never empty before the end; every game ends within ``MAX_DECISIONS`` decisions,
  and only by a take in phase 3 with fewer than 4 cards left in the deck [3, phase 3 ruling];
- the public bounds ``S_KNOWN_MIN <= true offerings <= S_KNOWN_MAX`` hold for every seat [5];
  nobody knows more of the altar than an independent tracker of docs/rules.md 5 allows (AEC games);
- the legal mask agrees with ``step_checked`` (every masked action applied on a copy, every
  unmasked action rejected on a copy and the copy untouched) on a random sample of steps;
- the legal mask equals an independent re-derivation from ``state_dict()`` of the conditions
  of docs/rules.md 3/6 (on a subset of games at every step, and at every step of the AEC games);
  on that subset every seat's observation is within ``[0, OBS_HIGH]`` and only the seat to move
  gets a non-zero mask (equal to ``legal_mask``);
- the final scores and winners follow docs/rules.md 4 (re-computed from the final state).
"""

from __future__ import annotations

import copy
from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np
import pytest

import bali_env
from bali_env import engine as C
from bali_env.envs.api_check import CONFIGURATIONS, config_id
from bali_env.engine.contract import state_dict

N_KERNEL_GAMES = 3000  #: games played on the core kernels with --slow (250 per configuration)
N_ENV_GAMES = 48  #: games played through the AEC environment with --slow (4 per configuration)
TOTAL_GAMES = N_KERNEL_GAMES + N_ENV_GAMES
FAST_KERNEL_GAMES, FAST_ENV_GAMES = 600, 12  #: the default (fast) run: 50 and 1 per configuration
MAX_DECISIONS = 1000  #: a game longer than this counts as not ending (real games: ~100-200)
SWEEP_FRACTION = 0.03  #: share of (game, step) pairs on which all 44 actions are tried on copies
RULES_MASK_EVERY = 25  #: kernel games i with i % RULES_MASK_EVERY == 0 get the reference mask
KERNEL_SEED_BASE = 1_000_000
ENV_SEED_BASE = 2_000_000

_E = np.zeros(0, dtype=np.int64)
PHASE_TO_MOVE_IS_ACTIVE = (C.PH_TAKE_OFFERING, C.PH_PLAY, C.PH_OFFER_SUPPLY, C.PH_REFILL, C.PH_ORACLE)


# ============================================================================= independent references
def rules_mask(sd: dict) -> np.ndarray:
    """The legal actions of the seat to move re-derived from ``state_dict()`` by docs/rules.md 3/6."""
    m = np.zeros(44, dtype=np.int8)
    if sd["phase"] != "game_over":
        _RULES[sd["phase"]](m, sd, sd["to_move"])
    return m


def _rules_counts(first: int, counts) -> Callable[[np.ndarray, dict, int], None]:
    """A phase whose action ``first + c`` is legal while ``counts(sd, p)[c]`` is above 0."""
    def rule(m: np.ndarray, sd: dict, p: int) -> None:
        for c, k in enumerate(counts(sd, p)):
            m[first + c] = k > 0
    return rule


def _rules_refill(m: np.ndarray, sd: dict, p: int) -> None:
    """A column with cards that the demon does not stand on."""
    for col in range(4):
        m[29 + col] = len(sd["market"][col]) > 0 and col != sd["demon"]


def _rules_oracle(m: np.ndarray, sd: dict, p: int) -> None:
    """Take one of the top (up to) 4 altar cards, or none."""
    m[33: 33 + min(4, len(sd["altar"]))] = 1
    m[37] = 1


def _rules_shrine_reward(m: np.ndarray, sd: dict, p: int) -> None:
    """Stones or VP."""
    m[38] = m[39] = 1


def _rules_take_offering(m: np.ndarray, sd: dict, p: int) -> None:
    """``rules_mask`` in phase take_offering: a category the supply still has, with at least
    ``5 - farmers of that category in the tableau`` stones (never below 0); passing is always legal."""
    supply, tab, stones = sd["supply"], sd["tableaus"][p], sd["stones"][p]
    for c in range(4):
        if supply[c] > 0 and stones >= max(0, 5 - tab[3 + c]):
            m[c] = 1
    m[4] = 1


def _rules_play(m: np.ndarray, sd: dict, p: int) -> None:
    """``rules_mask`` in phase play: a stonecutter, a priest, a shrine (with 7 stones), k = 1-3 farmers
    of one category (with k - 1 stones), or discarding a shrine when the hand is 3 shrines and there
    are fewer than 7 stones."""
    hand, stones = sd["hands"][p], sd["stones"][p]
    m[5] = hand[0] > 0
    m[6] = hand[1] > 0
    m[7] = hand[2] > 0 and stones >= 7
    for c in range(4):
        for k in (1, 2, 3):
            m[8 + 3 * c + k - 1] = hand[3 + c] >= k and stones >= k - 1
    m[20] = hand[2] == 3 and sum(hand) == 3 and stones < 7


_RULES = {  # the rule of each phase, by name (docs/rules.md 3, 6)
    "take_offering": _rules_take_offering,
    "play": _rules_play,
    "offer_own": _rules_counts(21, lambda sd, p: sd["offerings"][p]),
    "offer_supply": _rules_counts(25, lambda sd, p: sd["supply"]),
    "refill": _rules_refill,
    "oracle": _rules_oracle,
    "shrine_reward": _rules_shrine_reward,
    "farmer_choice": _rules_counts(40, lambda sd, p: sd["supply"]),
}


def altar_values(counts) -> list[int]:
    """docs/rules.md 4: 3 - (number of distinct counts above), never below 0; 0 without a card."""
    return [0 if k == 0 else max(0, 3 - len({x for x in counts if x > k})) for k in counts]


def expected_scores(sd: dict) -> tuple[list[int], list[int]]:
    """Final scores and winners re-computed from a finished state by docs/rules.md 4."""
    n = sd["num_players"]
    counts = [sd["altar"].count(c) for c in range(4)]
    values = altar_values(counts)
    scores = []
    for q in range(n):
        off = sum(k * v for k, v in zip(sd["offerings"][q], values, strict=True))
        scores.append(sd["vp_tokens"][q] + 4 * sd["tableaus"][q][2] + sd["stones"][q] // 5 + off)
    keys = [(scores[q], sd["tableaus"][q][2], sd["stones"][q]) for q in range(n)]
    return scores, [q for q in range(n) if keys[q] == max(keys)]


def starter_counts(starters) -> np.ndarray:
    """Card counts (8 ids) of the starter cards of the given starter sets [docs/rules.md 1]."""
    out = np.zeros(8, dtype=np.int64)
    for k in starters:
        out[C.STONECUTTER] += 1
        for c in range(4):
            if c != k:
                out[C.FARMER + c] += 1
    return out


def full_deck_counts(oracle: bool) -> np.ndarray:
    """The play deck's card counts (8 ids) [docs/rules.md 1]."""
    want = C.DECK_COUNTS.astype(np.int64).copy()
    if not oracle:
        want[C.ORACLE] = 0
    return want


# ============================================================================= the kernel driver
class _Recorder:
    """Collects up to ``limit`` violation examples per property."""

    def __init__(self, configs, seeds, decisions, limit: int = 8):
        self.examples: dict[str, list[str]] = defaultdict(list)
        self.counts: Counter = Counter()
        self.configs, self.seeds, self.decisions, self.limit = configs, seeds, decisions, limit

    def games(self, prop: str, bad: np.ndarray, what) -> None:
        """Record the games flagged in the boolean array ``bad`` (what(i) describes game i)."""
        idx = np.flatnonzero(bad)
        if idx.size == 0:
            return
        self.counts[prop] += idx.size
        for i in idx[: self.limit - len(self.examples[prop])]:
            self.one(prop, int(i), what(int(i)))

    def one(self, prop: str, i: int, text: str) -> None:
        if len(self.examples[prop]) < self.limit:
            self.examples[prop].append(
                f"{config_id(self.configs[i])} deal seed {self.seeds[i]} (game {i}), "
                f"decision {int(self.decisions[i])}: {text}"
            )


class _KernelGames:
    """The lockstep batch of ``n_games`` kernel games (configuration i mod 12, deal seed
    ``KERNEL_SEED_BASE + i``): the state arrays, what the deal fixed, the running counters
    (decisions, shrine discards, last actions, who was over), the recorder and the coverage."""

    def __init__(self, n_games: int):
        self.configs = [CONFIGURATIONS[i % len(CONFIGURATIONS)] for i in range(n_games)]
        self.seeds = [KERNEL_SEED_BASE + i for i in range(n_games)]
        self.N = N = n_games
        self.S = S = np.zeros((N, C.STATE_SIZE), dtype=C.STATE_DTYPE)
        for i, ((n, oracle, demon), seed) in enumerate(zip(self.configs, self.seeds, strict=True)):
            C.init_game(S[i], n, oracle, demon, np.uint64(seed), _E, _E, _E)
        self.decisions = np.zeros(N, dtype=np.int64)
        self.rec = _Recorder(self.configs, self.seeds, self.decisions)
        self.coverage: Counter = Counter()

        self.nplayers = S[:, C.S_NUM_PLAYERS].astype(np.int64)
        self.oracle_on = S[:, C.S_ORACLE] != 0
        self.demon_on = S[:, C.S_DEMON] != 0
        self.deck0 = S[:, C.S_DECK : C.S_DECK + C.ORACLE_DECK_SIZE].copy()
        self.deck_len = S[:, C.S_DECK_LEN].astype(np.int64)
        self.starters0 = S[:, C.S_STARTER : C.S_STARTER + 4].copy()
        self.onehot_deck = self.deck0[:, :, None] == np.arange(8)
        self.expected_cards = np.zeros((N, 8), dtype=np.int64)
        for i in range(N):
            self.expected_cards[i] = full_deck_counts(bool(self.oracle_on[i])) + starter_counts(
                self.starters0[i, : self.nplayers[i]]
            )
        self.seat_present = np.arange(4)[None, :] < self.nplayers[:, None]
        self.discards = np.zeros(N, dtype=np.int64)
        self.last_action = np.full(N, -1, dtype=np.int64)
        self.over_before = np.zeros(N, dtype=bool)
        self.masks = np.zeros((N, 44), dtype=np.int8)
        self.obs_buf = np.zeros(C.OBS_DIM, dtype=np.float32)
        self.mask_buf = np.zeros(C.N_ACTIONS, dtype=np.int8)
        self.idx58 = np.arange(C.ORACLE_DECK_SIZE)
        self.idx52 = np.arange(C.ALTAR_MAX)
        self.j4 = np.arange(4)


class _StepArrays:
    """The batch state's arrays at one step that several property checks read."""

    def __init__(self, g: _KernelGames):
        S, N = g.S, g.N
        self.phase = S[:, C.S_PHASE].astype(np.int64)
        self.over = self.phase == C.PH_GAME_OVER
        self.live = np.flatnonzero(~self.over)
        self.pos = S[:, C.S_DECK_POS].astype(np.int64)
        self.hands = S[:, C.S_HANDS : C.S_HANDS + 28].reshape(N, 4, 7).astype(np.int64)
        self.tabs = S[:, C.S_TABLEAUS : C.S_TABLEAUS + 28].reshape(N, 4, 7).astype(np.int64)
        self.offerings = S[:, C.S_OFFERINGS : C.S_OFFERINGS + 16].reshape(N, 4, 4).astype(np.int64)
        self.supply = S[:, C.S_SUPPLY : C.S_SUPPLY + 4].astype(np.int64)
        self.to_move = S[:, C.S_TO_MOVE].astype(np.int64)
        self.active = S[:, C.S_ACTIVE].astype(np.int64)
        self.dcol = S[:, C.S_DEMON_COL].astype(np.int64)


def _check_deal(g: _KernelGames) -> None:
    """The deal: deck length, no oracle in the starting market, distinct valid starter sets."""
    rec, deck_len, starters0 = g.rec, g.deck_len, g.starters0
    rec.games("deal", ~(deck_len == np.where(g.oracle_on, 58, 50)), lambda i: f"deck length {deck_len[i]}")
    rec.games("deal", np.any(g.deck0[:, :16] == C.ORACLE, axis=1), lambda i: "an oracle in the starting market")
    for i in range(g.N):
        st = starters0[i, : g.nplayers[i]]
        if len(set(st.tolist())) != len(st) or not all(0 <= k <= 3 for k in st):
            rec.one("deal", i, f"starter sets {st.tolist()}")


def _check_cards(g: _KernelGames, v: _StepArrays) -> None:
    """Cards conserved, the deck order unchanged, the market's cards and columns valid."""
    S, N, rec = g.S, g.N, g.rec
    remaining = (g.idx58 >= v.pos[:, None]) & (g.idx58 < g.deck_len[:, None])
    dealt = g.idx58 < v.pos[:, None]
    deck_counts = (g.onehot_deck & remaining[:, :, None]).sum(axis=1)
    oracles_out = (g.onehot_deck[:, :, C.ORACLE] & dealt).sum(axis=1)
    market = S[:, C.S_MARKET : C.S_MARKET + 16].reshape(N, 4, 4).astype(np.int64)
    col_pos = S[:, C.S_COL_POS : C.S_COL_POS + 4].astype(np.int64)
    col_len = S[:, C.S_COL_LEN : C.S_COL_LEN + 4].astype(np.int64)
    in_col = (g.j4 >= col_pos[:, :, None]) & (g.j4 < col_len[:, :, None])
    market_counts = ((market[..., None] == np.arange(8)) & in_col[..., None]).sum(axis=(1, 2))
    total = deck_counts + market_counts
    total[:, :7] += v.hands.sum(axis=1) + v.tabs.sum(axis=1)
    total[:, C.SHRINE] += g.discards
    total[:, C.ORACLE] += oracles_out
    expected_cards = g.expected_cards
    rec.games(
        "cards",
        np.any(total != expected_cards, axis=1),
        lambda i: f"card counts {total[i].tolist()} != expected {expected_cards[i].tolist()}",
    )
    rec.games("cards", np.any(S[:, C.S_DECK : C.S_DECK + 58] != g.deck0, axis=1), lambda i: "the deck order changed")
    bad_market = np.any(in_col & ((market < 0) | (market >= C.ORACLE)), axis=(1, 2))
    rec.games("cards", bad_market, lambda i: f"market {market[i].tolist()} holds an invalid card or an oracle")
    bad_cols = np.any((col_pos < 0) | (col_pos > col_len) | (col_len > 4) | (col_len < 1), axis=1)
    rec.games("cards", bad_cols, lambda i: f"column positions {col_pos[i].tolist()} lengths {col_len[i].tolist()}")
    rec.games("cards", ~v.over & np.any(col_pos >= col_len, axis=1), lambda i: "an empty market column during play")


def _check_offerings(g: _KernelGames, v: _StepArrays) -> None:
    """Offering cards conserved per category (supply + offerings + altar = 25), the altar valid."""
    S, rec = g.S, g.rec
    alen = S[:, C.S_ALTAR_LEN].astype(np.int64)
    altar = S[:, C.S_ALTAR : C.S_ALTAR + C.ALTAR_MAX].astype(np.int64)
    in_altar = g.idx52 < alen[:, None]
    altar_counts = ((altar[..., None] == np.arange(4)) & in_altar[..., None]).sum(axis=1)
    per_cat = v.supply + v.offerings.sum(axis=1) + altar_counts
    rec.games(
        "offerings",
        np.any(per_cat != 25, axis=1),
        lambda i: f"supply+offerings+altar by category {per_cat[i].tolist()}",
    )
    rec.games(
        "offerings", np.any(in_altar & ((altar < 0) | (altar > 3)), axis=1), lambda i: "invalid altar category"
    )
    rec.games("offerings", (alen < 0) | (alen > C.ALTAR_MAX), lambda i: f"altar length {alen[i]}")


def _check_nonnegative(g: _KernelGames, v: _StepArrays) -> None:
    """Nothing negative, and the seats that are not in the game hold nothing."""
    S = g.S
    stones = S[:, C.S_STONES : C.S_STONES + 4].astype(np.int64)
    vp = S[:, C.S_VP : C.S_VP + 4].astype(np.int64)
    supply, offerings, hands, tabs = v.supply, v.offerings, v.hands, v.tabs
    neg = (
        np.any(stones < 0, axis=1)
        | np.any(vp < 0, axis=1)
        | np.any(supply < 0, axis=1)
        | np.any(offerings < 0, axis=(1, 2))
        | np.any(hands < 0, axis=(1, 2))
        | np.any(tabs < 0, axis=(1, 2))
    )
    g.rec.games(
        "nonnegative",
        neg,
        lambda i: f"stones {stones[i].tolist()} vp {vp[i].tolist()} supply {supply[i].tolist()} "
        f"offerings {offerings[i].tolist()} hands {hands[i].tolist()}",
    )
    absent = ~g.seat_present
    leak = (
        np.any(absent & (stones != 0), axis=1)
        | np.any(absent & (vp != 0), axis=1)
        | np.any(absent[:, :, None] & (offerings != 0), axis=(1, 2))
        | np.any(absent[:, :, None] & (hands != 0), axis=(1, 2))
        | np.any(absent[:, :, None] & (tabs != 0), axis=(1, 2))
    )
    g.rec.games("nonnegative", leak, lambda i: "a seat that is not in the game holds something")


def _check_knowledge(g: _KernelGames, v: _StepArrays) -> None:
    """The public bounds: known min <= true offerings <= known max, per seat and category."""
    S, N, offerings = g.S, g.N, v.offerings
    kmin = S[:, C.S_KNOWN_MIN : C.S_KNOWN_MIN + 16].reshape(N, 4, 4).astype(np.int64)
    kmax = S[:, C.S_KNOWN_MAX : C.S_KNOWN_MAX + 16].reshape(N, 4, 4).astype(np.int64)
    bad_k = np.any((kmin > offerings) | (offerings > kmax) | (kmin < 0), axis=(1, 2))
    g.rec.games(
        "knowledge",
        bad_k,
        lambda i: f"known min {kmin[i].tolist()} / true {offerings[i].tolist()} / known max {kmax[i].tolist()}",
    )


def _check_to_move(g: _KernelGames, v: _StepArrays) -> None:
    """Who moves (one seat in range until the end, -1 after), the hand sizes, the demon column."""
    S, N, rec, nplayers = g.S, g.N, g.rec, g.nplayers
    phase, over, to_move, active, dcol = v.phase, v.over, v.to_move, v.active, v.dcol
    bad_tm = np.where(
        over,
        to_move != -1,
        (to_move < 0) | (to_move >= nplayers) | (phase < 0) | (phase > C.PH_FARMER_CHOICE),
    )
    bad_tm |= (active < 0) | (active >= nplayers)
    bad_tm |= ~over & np.isin(phase, PHASE_TO_MOVE_IS_ACTIVE) & (to_move != active)
    bad_tm |= ~over & (phase == C.PH_OFFER_OWN) & (S[:, C.S_TO_MOVE] >= 0) & (
        v.offerings[np.arange(N), np.clip(to_move, 0, 3)].sum(axis=1) == 0
    )
    rec.games("to_move", bad_tm, lambda i: f"phase {phase[i]} active {active[i]} to_move {to_move[i]}")
    hand_size = v.hands.sum(axis=2)
    is_active = np.arange(4)[None, :] == active[:, None]
    bad_hand = ~over[:, None] & g.seat_present & ~is_active & (hand_size != 3)
    bad_hand |= g.seat_present & (hand_size > 3)
    bad_hand |= (~over & np.isin(phase, (C.PH_TAKE_OFFERING, C.PH_PLAY)))[:, None] & is_active & (hand_size != 3)
    rec.games(
        "to_move",
        np.any(bad_hand, axis=1),
        lambda i: f"hand sizes {hand_size[i].tolist()} phase {phase[i]} active {active[i]}",
    )
    rec.games(
        "to_move", np.where(g.demon_on, (dcol < 0) | (dcol > 3), dcol != -1), lambda i: f"demon column {dcol[i]}"
    )


def _check_end(g: _KernelGames, v: _StepArrays) -> None:
    """A game ends only by a take in phase 3 with fewer than 4 cards left in the deck; then
    remember which games are over for the next step."""
    last_action, deck_len, pos = g.last_action, g.deck_len, v.pos
    newly_over = v.over & ~g.over_before
    g.rec.games(
        "ends_in_refill",
        newly_over & ~((last_action >= C.A_REFILL) & (last_action < C.A_REFILL + 4)),
        lambda i: f"the game ended after action {last_action[i]}",
    )
    g.rec.games(
        "ends_in_refill",
        newly_over & (deck_len - pos >= 4),
        lambda i: f"the game ended with {deck_len[i] - pos[i]} cards left in the deck",
    )
    g.over_before = v.over.copy()


def _check_masks(g: _KernelGames, v: _StepArrays) -> tuple[np.ndarray, np.ndarray]:
    """Compute the live games' legal masks and check them: never empty, never the demon's column
    in a refill; count the coverage; every ``RULES_MASK_EVERY``-th game also gets the reference
    checks of ``_check_against_rules``. Returns the live games' masks and their sizes."""
    S, masks, rec, coverage = g.S, g.masks, g.rec, g.coverage
    live, phase, dcol = v.live, v.phase, v.dcol
    for i in live:
        C.legal_mask(S[i], masks[i])
    lm = masks[live]
    counts = lm.sum(axis=1)
    empty = np.zeros(g.N, dtype=bool)
    empty[live] = counts == 0
    rec.games("mask_nonempty", empty, lambda i: f"empty mask in phase {phase[i]}")
    demon_col_legal = np.zeros(g.N, dtype=bool)
    refill_demon = live[(phase[live] == C.PH_REFILL) & g.demon_on[live]]
    demon_col_legal[refill_demon] = masks[refill_demon, C.A_REFILL + dcol[refill_demon]] != 0
    rec.games("rules_mask", demon_col_legal, lambda i: f"refill from the demon's column {dcol[i]} is legal")
    for ph in np.unique(phase[live]):
        sel = live[phase[live] == ph]
        for flag, name in ((g.oracle_on, "oracle"), (g.demon_on, "demon")):
            coverage[(int(ph), name, True)] += int(flag[sel].sum())
        coverage[(int(ph), "all", True)] += sel.size
    for i in live:
        if i % RULES_MASK_EVERY == 0:
            _check_against_rules(g, i)
    return lm, counts


def _check_against_rules(g: _KernelGames, i) -> None:
    """Game ``i``'s legal mask against ``rules_mask``, its oracle window, and every seat's
    observation: in bounds, and only the seat to move has a mask (equal to ``legal_mask``)."""
    S, masks, rec = g.S, g.masks, g.rec
    obs_buf, mask_buf = g.obs_buf, g.mask_buf
    sd = state_dict(S[i])
    want = rules_mask(sd)
    if not np.array_equal(want, masks[i]):
        rec.one(
            "rules_mask",
            int(i),
            f"phase {sd['phase']}: mask {np.flatnonzero(masks[i]).tolist()} != rules {np.flatnonzero(want).tolist()}",
        )
    if sd["phase"] == "oracle" and sd["oracle_window"] != min(4, len(sd["altar"])):
        rec.one(
            "rules_mask", int(i), f"oracle window {sd['oracle_window']} with {len(sd['altar'])} altar cards"
        )
    # every seat's observation: in bounds, and only the seat to move has a mask
    movers = []
    for p in range(int(g.nplayers[i])):
        C.observe(S[i], p, obs_buf, mask_buf)
        if np.any(obs_buf < 0) or np.any(obs_buf > C.OBS_HIGH) or not np.all(np.isfinite(obs_buf)):
            rec.one("to_move", int(i), f"observation of seat {p} out of bounds")
        if mask_buf.any():
            movers.append(p)
            if not np.array_equal(mask_buf, masks[i]):
                rec.one("to_move", int(i), f"observe() mask of seat {p} != legal_mask")
    if movers != [sd["to_move"]]:
        rec.one("to_move", int(i), f"seats with a mask {movers}, to_move {sd['to_move']}")


def _sweep_step_checked(g: _KernelGames, live: np.ndarray, rng: np.random.Generator) -> None:
    """On a random ``SWEEP_FRACTION`` of the live games, every action (and a few out of range)
    applied with ``step_checked`` on a copy agrees with the mask."""
    S, masks, rec = g.S, g.masks, g.rec
    sweep = live[rng.random(live.size) < SWEEP_FRACTION]
    for i in sweep:
        g.coverage["sweeps"] += 1
        for a in range(C.N_ACTIONS):
            c = S[i].copy()
            rc = C.step_checked(c, a)
            if masks[i, a]:
                if rc != 0:
                    rec.one("mask_vs_step", int(i), f"masked action {a} rejected by step_checked")
                elif np.array_equal(c, S[i]):
                    rec.one("mask_vs_step", int(i), f"masked action {a} changed nothing")
            elif rc != 1 or not np.array_equal(c, S[i]):
                rec.one("mask_vs_step", int(i), f"unmasked action {a} accepted (rc {rc}) or changed the state")
        for a in (-1, 44, 1000):
            c = S[i].copy()
            if C.step_checked(c, a) != 1 or not np.array_equal(c, S[i]):
                rec.one("mask_vs_step", int(i), f"out-of-range action {a} accepted")


def _step_random_actions(
    g: _KernelGames, live: np.ndarray, lm: np.ndarray, counts: np.ndarray, rng: np.random.Generator
) -> None:
    """Apply one uniformly random legal action in every live game and update the counters."""
    pick = np.floor(rng.random(live.size) * counts).astype(np.int64)
    actions = np.argmax(np.cumsum(lm, axis=1) > pick[:, None], axis=1)
    for i, a in zip(live, actions, strict=True):
        if C.step_checked(g.S[i], int(a)) != 0:
            g.rec.one("mask_vs_step", int(i), f"the chosen masked action {a} was rejected")
    g.discards[live] += actions == C.A_DISCARD_SHRINE
    g.last_action[live] = actions
    g.decisions[live] += 1
    for a in np.unique(actions):
        g.coverage[("action", int(a))] += int((actions == a).sum())


def _check_final_scores(g: _KernelGames) -> None:
    """Every finished game's scores and winners are those docs/rules.md 4 gives."""
    S = g.S
    for i in range(g.N):
        if S[i, C.S_PHASE] != C.PH_GAME_OVER:
            continue
        sd = state_dict(S[i])
        scores, winners = expected_scores(sd)
        if sd["scores"] != scores or sd["winners"] != winners:
            g.rec.one(
                "final_scores",
                i,
                f"scores {sd['scores']} winners {sd['winners']}, docs/rules.md 4 gives {scores} {winners}",
            )


def _play_kernel_games(n_games: int) -> dict:
    """Play ``n_games`` random games on the core kernels and check every property at every step."""
    rng = np.random.default_rng(20240601)
    g = _KernelGames(n_games)
    _check_deal(g)
    while True:
        v = _StepArrays(g)
        _check_cards(g, v)
        _check_offerings(g, v)
        _check_nonnegative(g, v)
        _check_knowledge(g, v)
        _check_to_move(g, v)
        _check_end(g, v)
        if v.live.size == 0:
            break
        if g.decisions.max() >= MAX_DECISIONS:
            g.rec.games("ends", ~v.over, lambda i: f"still running after {MAX_DECISIONS} decisions")
            break
        lm, counts = _check_masks(g, v)
        _sweep_step_checked(g, v.live, rng)
        _step_random_actions(g, v.live, lm, counts, rng)
    _check_final_scores(g)
    return {
        "games": g.N,
        "finished": int((g.S[:, C.S_PHASE] == C.PH_GAME_OVER).sum()),
        "decisions": g.decisions,
        "configs": g.configs,
        "examples": g.rec.examples,
        "counts": g.rec.counts,
        "coverage": g.coverage,
        "discards": int(g.discards.sum()),
    }


# ============================================================================= the AEC driver
def _check_altar_knowledge(sd: dict, tracker: list[set[int]], everyone: set[int], where: str, bad) -> None:
    """Let the active player see the oracle window in ``tracker``, then check nobody knows more of
    the altar than the tracker allows, and everyone knows a face-up top card."""
    if sd["phase"] == "oracle":  # the active player looks at the window
        for d in range(min(4, len(tracker))):
            tracker[d].add(sd["active"])
    known = [set(k) for k in sd["altar_known_by"]]
    if len(known) != len(tracker) or any(not k <= t for k, t in zip(known, tracker, strict=True)):
        bad("altar_knowledge", where, f"altar known by {known[:6]}, docs/rules.md 5 allows at most {tracker[:6]}")
    if tracker and tracker[0] == everyone and known and known[0] != everyone:
        bad("altar_knowledge", where, f"the face-up top card is known only by {known[0]}")


def _check_env_counts(sd: dict, n: int, oracle: bool, discards: int, want_cards: np.ndarray, where: str, bad) -> None:
    """Cards and offering cards conserved, nothing negative, the public offering bounds hold."""
    # cards conserved (oracles leave the game only: 8 minus those still in the deck)
    cards = np.zeros(8, dtype=np.int64)
    for card in sd["deck"]:
        cards[card] += 1
    for col in sd["market"]:
        for card in col:
            cards[card] += 1
    for q in range(n):
        cards[:7] += np.array(sd["hands"][q]) + np.array(sd["tableaus"][q])
    cards[C.SHRINE] += discards
    if oracle:
        cards[C.ORACLE] += 8 - sd["deck"].count(C.ORACLE)
    if not np.array_equal(cards, want_cards):
        bad("cards", where, f"{cards.tolist()} != {want_cards.tolist()}")
    per_cat = [
        sd["supply"][c] + sum(sd["offerings"][q][c] for q in range(n)) + sd["altar"].count(c) for c in range(4)
    ]
    if per_cat != [25] * 4:
        bad("offerings", where, f"supply+offerings+altar {per_cat}")
    if min(sd["stones"]) < 0 or min(sd["vp_tokens"]) < 0 or min(sd["supply"]) < 0:
        bad("nonnegative", where, f"stones {sd['stones']} vp {sd['vp_tokens']} supply {sd['supply']}")
    for q in range(n):
        lo, tr, hi = sd["offerings_known_min"][q], sd["offerings"][q], sd["offerings_known_max"][q]
        if any(not (a <= b <= c) for a, b, c in zip(lo, tr, hi, strict=True)):
            bad("knowledge", where, f"seat {q}: {lo} <= {tr} <= {hi} fails")


def _check_env_end(env, sd: dict, movers: list[str], where: str, bad) -> None:
    """At the end: no masks, every agent terminated, the scores and winners of docs/rules.md 4."""
    if movers:
        bad("to_move", where, f"masks after the end for {movers}")
    if not all(env.terminations.values()):
        bad("ends", where, "not every agent terminated at the end")
    scores, winners = expected_scores(sd)
    if sd["scores"] != scores or sd["winners"] != winners:
        bad("final_scores", where, f"{sd['scores']} {sd['winners']} != docs/rules.md 4 {scores} {winners}")


def _check_env_mask_vs_step(env, sd: dict, mask: np.ndarray, where: str, bad) -> None:
    """Every action stepped on a deep copy of ``env``: accepted exactly when masked, and a
    rejected one leaves the state unchanged."""
    for a in range(44):
        c = copy.deepcopy(env)
        try:
            c.step(a)
            accepted = True
        except ValueError:
            accepted = False
        if accepted != bool(mask[a]):
            bad("mask_vs_step", where, f"action {a}: mask {mask[a]} but accepted={accepted}")
        if not accepted and c.unwrapped.state_dict() != sd:
            bad("mask_vs_step", where, f"rejected action {a} changed the state")


def _track_altar_knowledge(tracker: list[set[int]], sd: dict, a: int, everyone: set[int]) -> None:
    """Update ``tracker`` (docs/rules.md 5) for action ``a`` about to be taken in state ``sd``."""
    if sd["phase"] == "offer_own":
        tracker.insert(0, {sd["to_move"]} if sd["to_move"] == sd["active"] else set(everyone))
    elif sd["phase"] == "offer_supply":
        tracker.insert(0, set(everyone))
    elif sd["phase"] == "oracle" and a != C.A_ORACLE_NONE:
        w = min(4, len(tracker))
        del tracker[a - C.A_ORACLE_TAKE]
        for d in range(w - 1):  # the others forget the rest of the window
            tracker[d] &= {sd["active"]}


def _play_env_game(g: int, bad) -> int:
    """Play AEC game ``g`` (configuration g mod 12, reset seed ``ENV_SEED_BASE + g``) with random
    legal actions, reporting violations through ``bad(prop, where, text)``; return its steps."""
    config = CONFIGURATIONS[g % len(CONFIGURATIONS)]
    n, oracle, demon = config
    seed = ENV_SEED_BASE + g
    env = bali_env.env(num_players=n, oracle=oracle, demon=demon, illegal_action="raise")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    sd0 = env.unwrapped.state_dict()
    want_cards = full_deck_counts(oracle) + starter_counts(sd0["starter_sets"])
    discards = 0
    step = 0
    everyone = set(range(n))
    # independent altar knowledge (docs/rules.md 5): per altar card, top first, the seats that may know it
    tracker: list[set[int]] = [set() for _ in sd0["altar"]]
    while True:
        where = f"{config_id(config)} reset seed {seed}, step {step}"
        sd = env.unwrapped.state_dict()
        _check_altar_knowledge(sd, tracker, everyone, where, bad)
        _check_env_counts(sd, n, oracle, discards, want_cards, where, bad)
        masks = {a: env.observe(a)["action_mask"] for a in env.agents}
        movers = [a for a, m in masks.items() if m.any()]
        if sd["phase"] == "game_over":
            _check_env_end(env, sd, movers, where, bad)
            break
        if movers != [env.agent_selection] or env.agent_selection != f"player_{sd['to_move']}":
            bad(
                "to_move",
                where,
                f"agents with a mask {movers}, selected {env.agent_selection}, to_move {sd['to_move']}",
            )
        mask = masks[env.agent_selection]
        if not mask.any():
            bad("mask_nonempty", where, f"empty mask in phase {sd['phase']}")
            break
        want = rules_mask(sd)
        if not np.array_equal(mask, want):
            bad(
                "rules_mask",
                where,
                f"phase {sd['phase']}: mask {np.flatnonzero(mask).tolist()} != rules {np.flatnonzero(want).tolist()}",
            )
        if step % 40 == 7:  # mask against step on copies of the environment
            _check_env_mask_vs_step(env, sd, mask, where, bad)
        a = int(rng.choice(np.flatnonzero(mask)))
        discards += a == C.A_DISCARD_SHRINE
        _track_altar_knowledge(tracker, sd, a, everyone)
        env.step(a)
        step += 1
        if step > MAX_DECISIONS:
            bad("ends", where, f"still running after {MAX_DECISIONS} decisions")
            break
    return step


def _play_env_games(n_games: int) -> dict:
    """Play ``n_games`` random games through the AEC environment with state_dict-level checks."""
    examples: dict[str, list[str]] = defaultdict(list)
    steps_total = 0

    def bad(prop: str, where: str, text: str) -> None:
        if len(examples[prop]) < 8:
            examples[prop].append(f"{where}: {text}")

    for g in range(n_games):
        steps_total += _play_env_game(g, bad)
    return {"games": n_games, "steps": steps_total, "examples": examples}


def _sizes(config: pytest.Config) -> tuple[int, int]:
    """(kernel games, AEC games): the full numbers with --slow, a fifth of them by default."""
    return (N_KERNEL_GAMES, N_ENV_GAMES) if config.getoption("--slow") else (FAST_KERNEL_GAMES, FAST_ENV_GAMES)


@pytest.fixture(scope="module")
def kernel_run(request):
    out = _play_kernel_games(_sizes(request.config)[0])
    print(f"\n[test_properties] {out['games']} kernel games, {int(out['decisions'].sum())} decisions")
    return out


@pytest.fixture(scope="module")
def env_run(request):
    out = _play_env_games(_sizes(request.config)[1])
    print(f"\n[test_properties] {out['games']} AEC games, {out['steps']} steps")
    return out


# ============================================================================= the tests
def _assert_none(run: dict, prop: str) -> None:
    examples = run["examples"].get(prop, [])
    count = run.get("counts", {}).get(prop, len(examples))
    assert not examples, f"{prop}: {count} violation(s), e.g.\n" + "\n".join(examples)


def test_number_of_games(kernel_run, env_run, request):
    """At least 3,000 random games in all with --slow (612 by default), every configuration, every
    kernel game finished."""
    n_kernel, n_env = _sizes(request.config)
    print(f"\n[test_properties] games played: {kernel_run['games']} (kernels) + {env_run['games']} (AEC)")
    assert (kernel_run["games"], env_run["games"]) == (n_kernel, n_env)
    if request.config.getoption("--slow"):
        assert kernel_run["games"] + env_run["games"] == TOTAL_GAMES >= 3000
    assert kernel_run["finished"] == kernel_run["games"]
    assert Counter(kernel_run["configs"]) == {c: n_kernel // 12 for c in CONFIGURATIONS}
    d = kernel_run["decisions"]
    assert d.min() > 50  # a Bali game needs at least 8 new columns' worth of turns


def test_coverage(kernel_run):
    """The random games reach every kind of decision, so the properties are checked where it matters."""
    cov = kernel_run["coverage"]
    for ph in range(C.PH_GAME_OVER):
        assert cov[(ph, "all", True)] > 0, C.PHASE_NAMES[ph]
    assert cov[(C.PH_ORACLE, "oracle", True)] > 100
    # no oracle decision without the variant
    assert cov[(C.PH_ORACLE, "all", True)] == cov[(C.PH_ORACLE, "oracle", True)]
    assert cov["sweeps"] > 1000
    assert kernel_run["discards"] > 0
    for a in (0, 4, 5, 6, 7, 8, 20, 21, 25, 29, 33, 37, 38, 39):
        assert cov[("action", a)] > 0, a
    assert sum(cov[("action", a)] for a in range(40, 44)) > 0


def test_cards_conserved(kernel_run):
    _assert_none(kernel_run, "deal")
    _assert_none(kernel_run, "cards")


def test_offering_cards_conserved(kernel_run):
    _assert_none(kernel_run, "offerings")


def test_nothing_negative(kernel_run):
    _assert_none(kernel_run, "nonnegative")


def test_exactly_one_seat_to_move(kernel_run):
    _assert_none(kernel_run, "to_move")


def test_mask_never_empty_before_the_end(kernel_run):
    _assert_none(kernel_run, "mask_nonempty")


def test_every_game_ends(kernel_run):
    _assert_none(kernel_run, "ends")
    assert kernel_run["decisions"].max() < MAX_DECISIONS


def test_game_ends_only_in_phase_3(kernel_run):
    _assert_none(kernel_run, "ends_in_refill")


def test_public_knowledge_bounds(kernel_run):
    _assert_none(kernel_run, "knowledge")


def test_mask_agrees_with_step(kernel_run):
    _assert_none(kernel_run, "mask_vs_step")


def test_mask_follows_the_rules(kernel_run):
    _assert_none(kernel_run, "rules_mask")


def test_final_scores(kernel_run):
    _assert_none(kernel_run, "final_scores")


@pytest.mark.parametrize(
    "prop",
    [
        "cards",
        "offerings",
        "nonnegative",
        "knowledge",
        "altar_knowledge",
        "to_move",
        "mask_nonempty",
        "rules_mask",
        "mask_vs_step",
        "ends",
        "final_scores",
    ],
)
def test_env_games(env_run, prop):
    """The same properties through the AEC environment and state_dict(); there exactly one agent
    has a non-zero mask before the end, and it is agent_selection. ``altar_knowledge``: who knows
    each altar card's category is never more than an independent tracker of docs/rules.md 5 allows
    (face-up cards: everyone; face-down: the placer; a peek adds the active player to the window;
    a take makes everybody else forget the rest of the window), and a face-up top card is known
    by everyone."""
    _assert_none(env_run, prop)


def test_reference_mask_can_fail():
    """rules_mask is a real check: it disagrees with a tampered engine mask."""
    e = bali_env.env(num_players=2)
    e.reset(seed=1)
    sd = e.unwrapped.state_dict()
    want = rules_mask(sd)
    assert np.array_equal(want, e.observe("player_0")["action_mask"])
    sd["stones"][0] = 10  # richer: phase 1 purchases become legal
    assert not np.array_equal(rules_mask(sd), want)
