"""The hand-written heuristic agent ("greedy"): one scoring function per decision, no search.

It decides from its own observation only (``decode_observation``). Every legal action gets a score
in expected end-of-game points, relative to the others (own gain minus ``rival_weight`` x the
others' mean gain), and the best one is played (ties broken by the agent's seeded ``rng``):

- Offering categories are valued from the altar as the agent knows it: known counts, unknown cards
  spread at random, two cards of its favourite category for each shrine in hand it can afford
  (its face-down card and its supply card) and the others' likely additions, averaged over a fixed
  table of random completions (so ties and "3 - distinct counts above" are exact). Holdings are
  projected to the end (farmer scorings to come), and altar placements, oracle takes and face-up
  offerings maximise the relative final offering score under that estimate.
- Stones are dear while a shrine in hand needs them (7 each, the completing stone dearest), cheap
  otherwise (1 point per 5 at the end): phase-1 purchases use spare stones, the shrine reward is
  taken in stones when that pays a shrine, and a shrine is built as soon as it is affordable.
- Tableau cards are valued by their income: expected remaining scorings of their type (turns
  left x share of that type among the cards still to come) x reward, majority bonuses included
  (strictly ahead with at least 2). A shrine adds 4 points and the altar control it brings.
- Market takes try every sequence of the takes left: hand values of the cards plus, for the last
  take, the relative scoring of the card it reveals (the scored type). Emptying a column when the
  deck cannot refill it ends the game: done only when ahead.

``act`` decides one observation in Python; ``act_batch`` runs the same heuristic over a whole
batch in one Numba call (``agents.greedy_kernels``, a port of the scorers below, which stay its
reference: the tests check that both choose from the same ties).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from bali_env import decode_observation
from bali_env import engine as E
from bali_env.view import ObservationView

from .base import Agent, check_observations

# the engine's ids under short names
SC, PR, SH, FARMER = E.STONECUTTER, E.PRIEST, E.SHRINE, E.FARMER
PASS, PLAY_SC, PLAY_PR, PLAY_SH = E.A_PASS, E.A_PLAY_STONECUTTER, E.A_PLAY_PRIEST, E.A_PLAY_SHRINE
DISCARD = E.A_DISCARD_SHRINE
FARMERS0 = E.A_PLAY_FARMERS
OWN0, SUPPLY0, COL0, PEEK0, PEEK_NONE = E.A_OFFER_OWN, E.A_OFFER_SUPPLY, E.A_REFILL, E.A_ORACLE_TAKE, E.A_ORACLE_NONE
STONES, VP, CHOOSE0 = E.A_SHRINE_STONES, E.A_SHRINE_VP, E.A_FARMER_CHOICE

# A fixed table of random altar completions: _CUM[s, m] = category counts of the first m of 80
# uniform random cards in sample s. Unknown altar cards and the others' future cards are drawn from
# it, so the category values are expectations over plausible altars, identical on every call.
_SAMPLES, _MAX_RANDOM = 64, 80
_draws = np.random.default_rng(20170901).integers(0, 4, size=(_SAMPLES, _MAX_RANDOM))
_CUM = np.zeros((_SAMPLES, _MAX_RANDOM + 1, 4), dtype=np.int64)
_CUM[:, 1:, :] = np.cumsum(np.eye(4, dtype=np.int64)[_draws], axis=1)
_EYE = np.eye(5, 4, dtype=np.int64)  # _EYE[c]: one card of category c; _EYE[4]: no card
_EARLIER = np.tril(np.ones((4, 4), dtype=bool), k=-1)  # _EARLIER[d, e]: category e comes before d


# The altar values (the engine's ``altar_values``) only depend on how the 4 counts compare
# pairwise: a lookup table over the 3^6 sign patterns of the 6 pairs values many sampled altars in
# one NumPy call.
_PAIR_A, _PAIR_B = np.array([0, 0, 0, 1, 1, 2]), np.array([1, 2, 3, 2, 3, 3])
_PAIR_POW = 3 ** np.arange(6)
_PATTERN_VALUES = np.zeros((3**6, 4), dtype=np.int64)
for _v in itertools.product(range(1, 5), repeat=4):
    _v = np.array(_v, dtype=np.int64)
    # the engine's rule as plain Python (importing this module loads no Numba kernel; with the
    # JIT disabled the kernel is the plain function already)
    _altar_values = getattr(E.altar_values, "py_func", E.altar_values)
    _altar_values(_v, _PATTERN_VALUES[int((np.sign(_v[_PAIR_B] - _v[_PAIR_A]) + 1) @ _PAIR_POW)])


def _fast_values(counts: np.ndarray) -> np.ndarray:
    """The engine's ``altar_values`` of altars ``counts[..., 4]``, through the sign-pattern table."""
    key = (np.sign(counts[..., _PAIR_B] - counts[..., _PAIR_A]) + 1) @ _PAIR_POW
    return np.where(counts > 0, _PATTERN_VALUES[key], 0)


_VALUE_CACHE: dict[tuple[tuple[int, ...], int], list[float]] = {}


def _sampled_altars(known: tuple[int, ...], random_cards: int) -> np.ndarray:
    """[S, 4] final altars: the ``known`` counts plus ``random_cards`` uniform random cards."""
    return np.asarray(known, dtype=np.int64)[None, :] + _CUM[:, min(random_cards, _MAX_RANDOM)]


def _expected_values(known: tuple[int, ...], random_cards: int) -> list[float]:
    """Expected category values of the altars of ``_sampled_altars`` (cached: the altar rarely
    changes within a game)."""
    key = (known, random_cards)
    hit = _VALUE_CACHE.get(key)
    if hit is None:
        if len(_VALUE_CACHE) > 20000:
            _VALUE_CACHE.clear()
        hit = _VALUE_CACHE[key] = _fast_values(_sampled_altars(known, random_cards)).mean(0).tolist()
    return hit


@dataclass
class _Ctx:
    """What every decision needs, derived once from the observation (plain Python numbers)."""

    view: ObservationView
    n: int
    tabs: list[list[int]]  # [n][7] tableaus (row 0 = me)
    hand: list[int]  # [7] my hand
    stones: int
    held: np.ndarray  # [n, 4] offering cards now (mine exact, others the middle of their bounds)
    offers: np.ndarray  # [n, 4] offering cards expected at the end (held + farmer scorings)
    turns_left: float  # turns still to be played by everybody (including the current one)
    my_turns: float  # of which mine
    share: list[float]  # [7] share of each card type among the cards still to come
    plan: tuple[int, ...]  # known altar counts plus the cards I plan to put there
    random_cards: int  # unknown altar cards plus the cards others will likely add
    values: list[float]  # [4] expected final category values
    now_values: list[float]  # [4] category values if the game ended now
    favourite: int  # the category I push onto the altar
    units: list[float] | None = None  # [7] value to me of one scoring reward of each card type
    rival_units: list[float] | None = None  # [7] the same for the others (stones at a flat rate)
    rival_offers: list[list[float]] | None = None  # [n-1][4] the others' rows of ``offers``
    _shrine_gain: float | None = None

    def shrine_altar_gain(self, agent: GreedyAgent) -> float:
        """Relative offering points one more shrine of mine brings: my favourite category gets my
        face-down card and a supply card, each other player puts a card face up (at random, as
        far as I can tell) and so loses it."""
        if self._shrine_gain is None:
            fav = self.favourite
            mine = self.offers[0].copy()
            if self.held[0, fav] > 0:
                mine[fav] -= 1
            change = [2 * (c == fav) for c in range(4)]
            without = agent._altar_score(self, (0, 0, 0, 0), self.offers[0])
            gain = agent._altar_score(self, change, mine, self.n - 1) - without
            others_loss = agent.rival_weight * float(np.mean(self.values))
            self._shrine_gain = gain + others_loss
        return self._shrine_gain


class GreedyAgent(Agent):
    """A heuristic Bali player; see the module docstring for the strategy.

    The keyword settings are the weights of the heuristic (in points), all tunable through
    ``make_agent("greedy:stone_high=1.0,...")``; the defaults were tuned against random opponents.
    """

    name = "greedy"
    batched = True  #: ``act_batch`` decides the whole batch in one Numba call (``agents.greedy_kernels``)

    def __init__(
        self,
        seed: int | None = None,
        rival_weight: float = 1.0,
        stone_high: float = 0.9,
        stone_low: float = 0.25,
        stone_mid: float = 0.8,
        shrine_bonus: float = 3.0,
        project: float = 1.0,
        stone_complete: float = 1.5,
        rival_stone: float = 0.4,
        tempo: float = 1.0,
        future_altar: float = 6.0,
        discount: float = 0.15,
    ) -> None:
        """Seed the tie-breaking generator and set the heuristic's weights (see each comment)."""
        super().__init__(seed)
        self.rival_weight = float(rival_weight)  # weight of the others' mean gain in every score
        self.stone_high = float(stone_high)  # value of a stone still needed for a shrine in hand
        self.stone_low = float(stone_low)  # value of any other stone (1 point per 5 at the end)
        self.stone_mid = float(stone_mid)  # value of a stone saved for a shrine still to come
        self.shrine_bonus = float(shrine_bonus)  # per shrine, on top of its points and altar gain
        self.rival_stone = float(rival_stone)  # what a stone is worth to the others
        self.project = float(project)  # weight of the farmer scorings to come in final holdings
        self.stone_complete = float(stone_complete)  # for the stone that pays a shrine in hand
        self.future_altar = float(future_altar)  # altar cards expected from shrines not yet seen
        self.tempo = float(tempo)  # per extra farmer played at once (one more market card)
        self.discount = float(discount)  # per farmer, per own turn left: cheaper phase-1 purchases

    # ------------------------------------------------------------------ entry point
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal action with the best heuristic score (ties broken by ``self.rng``)."""
        obs, masks = check_observations(observation, action_mask)
        if obs.shape[0] != 1:
            raise ValueError(f"act takes one observation, got {obs.shape[0]}")
        observation = obs[0]
        legal = [int(a) for a in np.flatnonzero(masks[0])]
        if len(legal) == 1:
            return legal[0]
        view = decode_observation(observation)
        scorer = _SCORERS.get(view.decision)
        if scorer is None:
            return legal[int(self.rng.integers(len(legal)))]
        scores = scorer(self, self._context(view), legal)
        best = max(scores.get(a, -np.inf) for a in legal)
        ties = [a for a in legal if scores.get(a, -np.inf) >= best - 1e-9]
        return ties[int(self.rng.integers(len(ties)))] if len(ties) > 1 else ties[0]

    def act_batch_keyed(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """``act_batch`` with row i's ties broken by a stream started at ``keys[i]``."""
        return self._decide(observations, action_masks, np.array(keys, dtype=np.uint64).reshape(-1))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per row, decided in one Numba call (``agents.greedy_kernels``) by the same
        heuristic as ``act``; ties are broken by a SplitMix64 stream seeded from ``self.rng`` (one
        draw per call). ``observations``: float32 [N, OBS_DIM]; ``action_masks``: int8 or bool
        [N, N_ACTIONS]; anything else raises ValueError. A row without a legal action gets -1."""
        return self._decide(observations, action_masks, None)

    def compile_kernels(self) -> None:
        """Compile (or load) ``greedy_decide_batch`` for the argument types ``act_batch`` passes."""
        from numba import typeof

        from .greedy_kernels import PARAM_NAMES, greedy_decide_batch

        args = (np.zeros((1, E.OBS_DIM), np.float32), np.zeros((1, E.N_ACTIONS), np.int8),
                np.zeros(len(PARAM_NAMES)), np.zeros(1, np.uint64), np.zeros(1, np.int64))
        greedy_decide_batch.compile(tuple(typeof(a) for a in args))

    def _decide(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray | None) -> np.ndarray:
        from .greedy_kernels import PARAM_NAMES, greedy_decide_batch

        obs = np.asarray(observations)
        masks = np.asarray(action_masks)
        if obs.ndim != 2 or obs.shape[1] != E.OBS_DIM or obs.dtype != np.float32:
            raise ValueError(f"observations must be float32 [N, {E.OBS_DIM}], got {obs.dtype} {obs.shape}")
        if masks.ndim != 2 or masks.shape[1] != E.N_ACTIONS or masks.dtype not in (np.int8, np.bool_):
            raise ValueError(f"action_masks must be int8 or bool [N, {E.N_ACTIONS}], got {masks.dtype} {masks.shape}")
        if masks.shape[0] != obs.shape[0]:
            raise ValueError(f"action_masks has {masks.shape[0]} rows for {obs.shape[0]} observations")
        if obs.shape[0]:
            check_observations(obs, masks, need_legal=False)  # values in range before the kernel reads them
        out = np.full(obs.shape[0], -1, dtype=np.int64)
        if obs.shape[0] == 0:
            return out
        params = np.array([getattr(self, name) for name in PARAM_NAMES], dtype=np.float64)
        if keys is not None and len(keys) != obs.shape[0]:
            raise ValueError(f"keys has {len(keys)} entries for {obs.shape[0]} observations")
        # one stream for the batch, or one per row (a single row's key is its own stream either way)
        rng_state = self.rng.integers(0, 2**64, size=1, dtype=np.uint64) if keys is None else keys.copy()
        greedy_decide_batch(np.ascontiguousarray(obs), np.ascontiguousarray(masks.view(np.int8)), params,
                            rng_state, out)
        return out

    # ------------------------------------------------------------------ shared estimates
    def _context(self, v: ObservationView) -> _Ctx:
        """Turns left, card-type shares, stone needs and the expected final category values."""
        n = v.num_players
        tabs = v.tableaus.tolist()
        offers = (v.offerings_min + v.offerings_max) / 2.0
        offers[0] = v.offerings_min[0]
        to_come = v.deck_cards[: E.N_CARD_TYPES].tolist()
        for col in v.market:
            for card in col:
                to_come[card] += 1
        total = max(1, sum(to_come))
        share = [k / total for k in to_come]
        # random play takes about one card a turn and the game ends about 10 cards before the deck
        # and market run out (measured); the current turn counts
        turns_left = max(1.0, (sum(to_come) - 10) / 1.05)
        my_turns = turns_left / n
        stones = int(v.stones[0])
        hand = v.hands[0].tolist()
        # shrines I can still afford: those in hand, paid by my stones and stonecutter income
        income = tabs[0][SC] * turns_left * share[SC]
        planned = min(hand[SH], int((stones + income) // E.SHRINE_COST)) if my_turns >= 1 else 0
        held = offers.copy()
        # the offering cards everybody will hold at the end: now plus the farmer scorings to come
        for c in range(4):
            rewards = self._rewards([t[FARMER + c] for t in tabs], FARMER + c)
            offers[:, c] += self.project * turns_left * share[FARMER + c] * np.asarray(rewards, dtype=np.float64)
        # the category I push onto the altar: the one I hold most of (farmers break ties)
        mine = offers[0].tolist()
        favourite = max(range(4), key=lambda c: (mine[c], tabs[0][FARMER + c] > 0, -c))
        # the others' future shrines (random-ish placements) and their face-up cards on mine
        others_sh = sum(min(int(v.hands[j, SH]), int((v.stones[j] + 2 * my_turns) // E.SHRINE_COST))
                        for j in range(1, n))
        unseen = self.future_altar * min(1.0, turns_left / 40.0)  # from shrines not in sight yet
        random_cards = int(v.altar_unknown + (n - 1) * planned + 0.5 * others_sh * (n + 1) + unseen)
        known = v.altar_known.tolist()
        now_values = _expected_values(tuple(known), int(v.altar_unknown))
        known[favourite] += 2 * planned
        ctx = _Ctx(
            view=v, n=n, tabs=tabs, hand=hand, stones=stones, held=held, offers=offers,
            turns_left=turns_left, my_turns=my_turns, share=share, plan=tuple(known),
            random_cards=random_cards, values=_expected_values(tuple(known), random_cards),
            now_values=now_values, favourite=favourite,
        )
        stone = max(self.stone_low, self._stone_delta(ctx, 5) / 5)
        ctx.units = [stone, 1.0, max(1.0, stone), *ctx.values]
        ctx.rival_units = [self.rival_stone, 1.0, 1.0, *ctx.values]
        ctx.rival_offers = offers[1:].tolist()
        return ctx

    def _stone_worth(self, ctx: _Ctx, stones: float, shrines: int) -> float:
        """What holding ``stones`` stones is worth with ``shrines`` shrines in hand: each stone
        that a shrine in hand still needs (7 per shrine, up to 2) is worth ``stone_high``, and one
        that completes a shrine ``stone_complete`` more; with no shrine in hand, 7 stones are saved
        at ``stone_mid`` for one to come; any other stone is worth ``stone_low``. The saving fades
        over my last 3 turns; in my last turn a stone counts exactly (1 point per 5)."""
        if ctx.my_turns < 1:
            return float(E.stone_points(int(stones)))
        target, high = 0, self.stone_low
        if shrines > 0:
            target, high = E.SHRINE_COST * min(shrines, 2), self.stone_high
        elif ctx.share[SH] > 0 and ctx.my_turns >= 3:
            target, high = E.SHRINE_COST, self.stone_mid
        urgency = min(1.0, ctx.my_turns / 3.0)
        high = self.stone_low + (high - self.stone_low) * urgency
        affordable = min(shrines, int(stones) // E.SHRINE_COST)  # shrines in hand I can pay for
        return (self.stone_low * stones + (high - self.stone_low) * min(stones, target)
                + self.stone_complete * urgency * affordable)

    def _stone_delta(self, ctx: _Ctx, delta: float, shrines_used: int = 0) -> float:
        """The value of gaining (or, negative, paying) ``delta`` stones now (``shrines_used``:
        shrines leaving my hand with the payment)."""
        return (self._stone_worth(ctx, ctx.stones + delta, ctx.hand[SH] - shrines_used)
                - self._stone_worth(ctx, ctx.stones, ctx.hand[SH]))

    def _rewards(self, counts: list[int], card: int) -> list[int]:
        """Rewards per player when ``card`` is scored, for their ``counts`` of that card: one per
        card (one in all for farmers), plus one for the strict majority of at least 2."""
        base = [int(k >= 1) for k in counts] if card >= FARMER else list(counts)
        bonus = E.majority_holder(np.asarray(counts, dtype=np.int64), len(counts))
        if bonus >= 0:
            base[bonus] += 1
        return base

    def _scoring_gain(self, ctx: _Ctx, card: int, counts: list[int] | None = None) -> float:
        """Relative value of one scoring of ``card`` (for the given counts, default the tableaus)."""
        if counts is None:
            counts = [t[card] for t in ctx.tabs]
        rewards = self._rewards(counts, card)
        mine = rewards[0] * ctx.units[card]
        return mine - self.rival_weight * ctx.rival_units[card] * sum(rewards[1:]) / (len(rewards) - 1)

    def _tableau_gain(self, ctx: _Ctx, card: int, k: int, turns: float) -> float:
        """Value of adding ``k`` cards of type ``card`` to my tableau with ``turns`` turns left: the
        change of its relative income (majorities included) plus, for farmers, cheaper phase-1
        purchases and, for a shrine, its 4 points and the altar control it brings."""
        before = [t[card] for t in ctx.tabs]
        after = [before[0] + k, *before[1:]]
        scorings = turns * ctx.share[card]
        gain = (self._scoring_gain(ctx, card, after) - self._scoring_gain(ctx, card, before)) * scorings
        if card >= FARMER:
            cheaper = E.offering_price(before[0]) - E.offering_price(before[0] + k)
            gain += cheaper * self.discount * (turns / ctx.n) * ctx.values[card - 3] / 3.0
        if card == SH:
            gain += E.SHRINE_POINTS + self.shrine_bonus + max(0.0, ctx.shrine_altar_gain(self))
        return gain

    def _altar_score(self, ctx: _Ctx, change, mine: np.ndarray, more_random: int = 0) -> float:
        """Relative final offering score (mine minus the weighted mean of the others', expected
        over the sampled altars) when the cards ``change`` (4 counts, may be negative) are added
        to the planned altar, ``more_random`` more random cards land there and I end up holding
        ``mine``. Linear in the expected category values, so those are all it needs (cached)."""
        known = tuple(max(0, int(p + d)) for p, d in zip(ctx.plan, change, strict=True))
        values = _expected_values(known, ctx.random_cards + more_random)
        own = sum(m * x for m, x in zip(mine.tolist(), values, strict=True))
        others = sum(sum(o * x for o, x in zip(row, values, strict=True)) for row in ctx.rival_offers) / (ctx.n - 1)
        return own - self.rival_weight * others

    # ------------------------------------------------------------------ decisions
    def score_take_offering(self, ctx: _Ctx, legal: list[int]) -> dict[int, float]:
        """Phase 1: buy a card when its expected final value beats the stones it costs (stones
        kept for a shrine in hand are dear, spare stones cheap). Passing scores 0."""
        scores = {PASS: 0.0}
        for a in legal:
            if a < 4:
                cost = E.offering_price(ctx.tabs[0][FARMER + a])
                scores[a] = ctx.values[a] + self._stone_delta(ctx, -cost)
        return scores

    def score_play(self, ctx: _Ctx, legal: list[int]) -> dict[int, float]:
        """Phase 2a: the card whose tableau income (with majorities) is worth most now; a shrine
        adds 4 points and altar control for its 7 stones (valued at their end worth: saving them
        was for this shrine); extra farmers played at once cost a stone each and bring one more
        market card each."""
        scores = {}
        for a in legal:
            if a == PLAY_SC:
                scores[a] = self._tableau_gain(ctx, SC, 1, ctx.turns_left)
            elif a == PLAY_PR:
                scores[a] = self._tableau_gain(ctx, PR, 1, ctx.turns_left)
            elif a == PLAY_SH:
                scores[a] = self._tableau_gain(ctx, SH, 1, ctx.turns_left) - E.SHRINE_COST * self.stone_low
            elif FARMERS0 <= a < DISCARD:
                c, k = divmod(a - FARMERS0, 3)
                k += 1
                scores[a] = (self._tableau_gain(ctx, FARMER + c, k, ctx.turns_left)
                             + self._stone_delta(ctx, -E.farmers_price(k)) + self.tempo * (k - 1))
            elif a == DISCARD:
                scores[a] = -10.0  # only legal when nothing else is
        return scores

    def score_offer_face_up(self, ctx: _Ctx, legal: list[int]) -> dict[int, float]:
        """Someone else's shrine: give up the card whose loss (and whose push on the altar) costs
        me least relative to the others: usually my least valuable card, or one of a category I
        hold many of when pushing it up pays."""
        scores = {}
        for a in legal:
            if OWN0 <= a < OWN0 + 4:
                push = _EYE[a - OWN0]
                scores[a] = self._altar_score(ctx, push, ctx.offers[0] - push)
        return scores

    def score_offer_face_down(self, ctx: _Ctx, legal: list[int]) -> dict[int, float]:
        """My shrine, my own card face down: the card that, together with the best supply card
        placed next, raises my categories most (both placements are tried together)."""
        supply = [_EYE[c] for c in range(4) if ctx.view.supply[c] > 0] or [_EYE[4]]
        scores = {}
        for a in legal:
            if OWN0 <= a < OWN0 + 4:
                push = _EYE[a - OWN0]
                scores[a] = max(self._altar_score(ctx, push + extra, ctx.offers[0] - push) for extra in supply)
        return scores

    def score_offer_supply(self, ctx: _Ctx, legal: list[int]) -> dict[int, float]:
        """My shrine, a supply card face up: the category whose push helps me most relative to
        the others."""
        return {a: self._altar_score(ctx, _EYE[a - SUPPLY0], ctx.offers[0])
                for a in legal if SUPPLY0 <= a < SUPPLY0 + 4}

    def score_oracle(self, ctx: _Ctx, legal: list[int]) -> dict[int, float]:
        """An oracle peek: take the window card that raises my relative final score most (it
        leaves the altar and joins my offerings), or none when every card would lower it."""
        scores = {PEEK_NONE: self._altar_score(ctx, _EYE[4], ctx.offers[0])}
        for a in legal:
            if PEEK0 <= a < PEEK0 + 4:
                c = int(ctx.view.altar_top[a - PEEK0])
                if c >= 0:  # always known during my own peek
                    scores[a] = self._altar_score(ctx, -_EYE[c], ctx.offers[0] + _EYE[c])
        return scores

    def score_shrine_reward(self, ctx: _Ctx, legal: list[int]) -> dict[int, float]:
        """Shrine scoring: stones while they are needed for a shrine in hand with time left to
        build it (then a stone is worth more than a VP), else VP (worth at least as much at the
        end: stones only count 1 per 5)."""
        amount = max(1, ctx.view.scoring_amount)
        return {STONES: self._stone_delta(ctx, amount), VP: float(amount)}

    def score_farmer_choice(self, ctx: _Ctx, legal: list[int]) -> dict[int, float]:
        """The scored category is empty: the category with the best expected final value."""
        return {a: ctx.values[a - CHOOSE0] for a in legal if CHOOSE0 <= a < CHOOSE0 + 4}

    def score_refill(self, ctx: _Ctx, legal: list[int]) -> dict[int, float]:
        """Phase 3: try every sequence of the takes still to make; a sequence scores its cards'
        hand values plus the relative scoring of the card its last take reveals (the scored type).
        Emptying a column with 4 or fewer cards in the deck ends the game: good only when ahead."""
        v = ctx.view
        takes = max(1, E.HAND_SIZE - sum(ctx.hand))
        columns = [a - COL0 for a in legal if COL0 <= a < COL0 + 4]
        allowed = [c for c in range(4) if c != v.demon_column]
        card_value = [self._hand_value(ctx, card) for card in range(E.N_CARD_TYPES)]
        scoring = [self._scoring_gain(ctx, card) for card in range(E.N_CARD_TYPES)]
        deck = v.deck_cards[: E.N_CARD_TYPES].tolist()
        in_deck = sum(deck)
        mean_card = sum(k * x for k, x in zip(deck, card_value, strict=True)) / in_deck if in_deck else 0.0
        mean_scoring = sum(k * x for k, x in zip(deck, scoring, strict=True)) / in_deck if in_deck else 0.0
        end_value = self._end_now_value(ctx) if v.deck_size <= E.COLUMN_SIZE else 0.0
        scores: dict[int, float] = {}
        for first in columns:
            best = -np.inf
            for rest in itertools.product(allowed, repeat=takes - 1):
                best = max(best, self._take_sequence(ctx, (first, *rest), card_value, scoring,
                                                     mean_card, mean_scoring, end_value))
            scores[COL0 + first] = best
        return scores

    def _take_sequence(self, ctx, seq, card_value, scoring, mean_card, mean_scoring, end_value) -> float:
        """Value of taking from the columns ``seq`` in order (see ``score_refill``)."""
        v = ctx.view
        taken = [0, 0, 0, 0]  # cards taken from each column so far
        fresh = [False] * 4  # column dealt anew: unknown cards, valued at the deck's mean
        total, shrines = 0.0, ctx.hand[SH]
        for col in seq:
            if fresh[col]:
                total += mean_card
                continue
            column = v.market[col]
            card = column[taken[col]]
            taken[col] += 1
            total += card_value[card]
            shrines += card == SH
            if taken[col] == len(column):
                if v.deck_size <= E.COLUMN_SIZE:
                    return end_value  # the game ends at once, without phase 4
                fresh[col] = True
        last = seq[-1]
        total += mean_scoring if fresh[last] else scoring[v.market[last][taken[last]]]
        if shrines >= E.HAND_SIZE and ctx.stones < E.SHRINE_COST:
            total -= 6.0  # a hand of three shrines forces a discard
        return total

    def _hand_value(self, ctx: _Ctx, card: int) -> float:
        """What a market card is worth in my hand: the tableau gain of playing it on my next turn;
        a shrine only as far as I can afford it, less for each shrine already waiting."""
        turns = max(0.0, ctx.turns_left - ctx.n)
        if card != SH:
            return self._tableau_gain(ctx, card, 1, turns) if ctx.my_turns > 1 else 0.0
        waiting = ctx.hand[SH] + 1
        income = ctx.tabs[0][SC] * ctx.turns_left * ctx.share[SC]
        afford = min(1.0, max(0.0, (ctx.stones + income - E.SHRINE_COST * (waiting - 1)) / (E.SHRINE_COST * waiting)))
        if ctx.my_turns <= 1:
            afford = 1.0 if ctx.stones >= E.SHRINE_COST * waiting else 0.0
        return afford * (self._tableau_gain(ctx, SH, 1, turns) - E.SHRINE_COST * self.stone_low)

    def _end_now_value(self, ctx: _Ctx) -> float:
        """Value of ending the game now: my estimated lead, plus 10 for a win (minus 10 else)."""
        v = ctx.view
        score = (v.vp_tokens + E.shrine_points(v.tableaus[:, SH]) + E.stone_points(v.stones)
                 + ctx.held @ np.asarray(ctx.now_values))
        lead = float(score[0] - score[1:].max())
        return lead + (10.0 if lead > 0 else -10.0)


# decision name (ObservationView.decision) -> the method scoring its legal actions
_SCORERS = {
    "take_offering": GreedyAgent.score_take_offering,
    "play": GreedyAgent.score_play,
    "offer_face_up": GreedyAgent.score_offer_face_up,
    "offer_face_down": GreedyAgent.score_offer_face_down,
    "offer_supply": GreedyAgent.score_offer_supply,
    "refill": GreedyAgent.score_refill,
    "oracle": GreedyAgent.score_oracle,
    "shrine_reward": GreedyAgent.score_shrine_reward,
    "farmer_choice": GreedyAgent.score_farmer_choice,
}
