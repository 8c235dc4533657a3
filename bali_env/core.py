"""The Bali rules engine: one flat int16 state per game and the Numba kernels over it.

This module is the functional core (in the style of pgx): a game is a plain ``np.int16``
array of ``STATE_SIZE`` slots (``STATE_SIZE * 2`` bytes), so a batch of games is a
``[N, STATE_SIZE]`` array. Every rule of ``RULES.md`` is a small ``@njit`` kernel named after
it; the public kernels are

- ``init_game(state, num_players, oracle, demon, seed, deck, starter_sets, altar)``: deal
  (set-up, RULES.md section 2). Empty option arrays mean "draw at random from ``seed``".
- ``legal_mask(state, mask)``: the 44 legal actions of the seat to move (RULES.md section 6).
- ``apply_action(state, action)``: one decision, then every automatic step until the next
  decision (phases 1-4 of section 3, both variants, the end of the game of section 4).
- ``step_checked(state, action)``: ``apply_action`` after a legality check; returns 0 when
  applied, 1 when the action is illegal (the state is then untouched).
- ``observe(state, seat, obs, mask)``: one player's observation (section 5) and mask.
- ``altar_values(counts)``, ``final_scores(state, out)``: the final scoring.
- ``batch_reset``, ``batch_step_parallel``/``batch_step_serial``: the batched environment (one
  call steps N games, writes observations, masks, rewards; finished games are dealt anew).
- ``rollout_states``, ``rollout_new_games``: whole games with the uniform random policy.
- ``determinize(obs, rng, state)``: a full state consistent with one observation (hidden parts
  sampled), and ``ismcts_iterate``: the search agent's information-set MCTS.

All kernels are compiled with Numba's on-disk cache (``cache=True``). Everything lives in this
single file on purpose: Numba's cache only notices changes to the file a kernel is defined in.

Randomness is used only when dealing, from a 64-bit ``seed`` through a SplitMix64 stream
(bit-for-bit reproducible on every platform and every API). After the deal the game is
deterministic: the deck order is part of the state.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# ----------------------------------------------------------------------------- ids (RULES.md 1)
STONECUTTER, PRIEST, SHRINE = 0, 1, 2
FARMER = 3  #: the farmer of category c is card id FARMER + c
ORACLE = 7
N_CARD_TYPES = 7  #: card ids 0..6 can be in hands and tableaus
N_CATEGORIES = 4  #: rice, peanuts, bananas, chilies
MAX_PLAYERS = 4
N_ACTIONS = 44
DECK_COUNTS = np.array([12, 9, 9, 5, 5, 5, 5, 8], dtype=np.int64)  #: copies per card id (7: oracle)
BASE_DECK_SIZE = 50
ORACLE_DECK_SIZE = 58
MARKET_SIZE = 16
SUPPLY_PER_CATEGORY = 25
SHRINE_COST = 7
ALTAR_MAX = 52  #: 4 starting cards + 9 shrines x at most 5 cards = 49

# ----------------------------------------------------------------------------- action ids (RULES.md 6)
A_TAKE_OFFERING = 0  # 0-3
A_PASS = 4
A_PLAY_STONECUTTER = 5
A_PLAY_PRIEST = 6
A_PLAY_SHRINE = 7
A_PLAY_FARMERS = 8  # 8 + 3c + (k - 1)
A_DISCARD_SHRINE = 20
A_OFFER_OWN = 21  # 21-24
A_OFFER_SUPPLY = 25  # 25-28
A_REFILL = 29  # 29-32
A_ORACLE_TAKE = 33  # 33-36, depth 0 = top
A_ORACLE_NONE = 37
A_SHRINE_STONES = 38
A_SHRINE_VP = 39
A_FARMER_CHOICE = 40  # 40-43

# ----------------------------------------------------------------------------- phases (RULES.md 8)
PH_TAKE_OFFERING = 0
PH_PLAY = 1
PH_OFFER_OWN = 2
PH_OFFER_SUPPLY = 3
PH_REFILL = 4
PH_ORACLE = 5
PH_SHRINE_REWARD = 6
PH_FARMER_CHOICE = 7
PH_GAME_OVER = 8
PHASE_NAMES = (
    "take_offering",
    "play",
    "offer_own",
    "offer_supply",
    "refill",
    "oracle",
    "shrine_reward",
    "farmer_choice",
    "game_over",
)

# ----------------------------------------------------------------------------- state layout
# One int16 slot each unless a size is given. Seat-indexed blocks are [MAX_PLAYERS, width].
S_NUM_PLAYERS = 0
S_ORACLE = 1  # 1 if the Oracle variant is on
S_DEMON = 2  # 1 if the Demon variant is on
S_PHASE = 3  # PH_*
S_ACTIVE = 4  # seat whose turn it is
S_TO_MOVE = 5  # seat that decides now, -1 after the end
S_DEMON_COL = 6  # column of the demon, -1 without the variant
S_DECK_POS = 7  # index in S_DECK of the next card to deal
S_DECK_LEN = 8  # 50 or 58
S_ALTAR_LEN = 9
S_OFFER_STEP = 10  # offering phase: k of seat (active + k) % n deciding; k == n is the active player
S_LAST_COL = 11  # column of the active player's last take this turn, -1 before
S_SCORED = 12  # card id scored this turn (phase 4), -1 outside phase 4
S_SCORE_STEP = 13  # phase 4: k of seat (active + k) % n being scored; k == n is the majority bonus
S_BONUS_SEAT = 14  # phase 4: the seat that earns the majority bonus, -1 if none
S_PEEKS = 15  # oracle peeks still owed this take (including the one being decided)
S_WINDOW = 16  # size of the altar window during an oracle decision, 0 otherwise
S_TURN = 17  # turns completed
S_DECISIONS = 18  # decisions taken (steps)
S_WINNERS = 19  # bit mask of winning seats after the end
HEADER_SIZE = 24
S_HANDS = HEADER_SIZE  # [4, 7] card counts
S_TABLEAUS = S_HANDS + MAX_PLAYERS * N_CARD_TYPES  # [4, 7]
S_STONES = S_TABLEAUS + MAX_PLAYERS * N_CARD_TYPES  # [4]
S_VP = S_STONES + MAX_PLAYERS  # [4] VP tokens
S_OFFERINGS = S_VP + MAX_PLAYERS  # [4, 4] true offering cards by category
S_KNOWN_MIN = S_OFFERINGS + MAX_PLAYERS * N_CATEGORIES  # [4, 4] what the others know: at least
S_KNOWN_MAX = S_KNOWN_MIN + MAX_PLAYERS * N_CATEGORIES  # [4, 4] what the others know: at most
S_STARTER = S_KNOWN_MAX + MAX_PLAYERS * N_CATEGORIES  # [4] starter set id per seat
S_SCORES = S_STARTER + MAX_PLAYERS  # [4] final scores
S_SUPPLY = S_SCORES + MAX_PLAYERS  # [4]
S_MARKET = S_SUPPLY + N_CATEGORIES  # [4 columns, 4 slots] card ids in take order
S_COL_POS = S_MARKET + 16  # [4] index of the first takeable card of each column
S_COL_LEN = S_COL_POS + 4  # [4] cards dealt into each column
S_DECK = S_COL_LEN + 4  # [58] the play deck, top first (dealt cards stay, see S_DECK_POS)
S_ALTAR = S_DECK + ORACLE_DECK_SIZE  # [52] altar categories, bottom first (top = S_ALTAR_LEN - 1)
S_ALTAR_KNOWN = S_ALTAR + ALTAR_MAX  # [52] bit p set: seat p knows that altar card's category
STATE_SIZE = S_ALTAR_KNOWN + ALTAR_MAX
STATE_DTYPE = np.int16

# ----------------------------------------------------------------------------- observation layout
# See OBS_SLOTS below for names and scales; every slot is >= 0.
O_DECISION = 0  # 10 one-hot: DECISION_NAMES
O_ACTIVE = 10  # 4 one-hot: relative seat of the active player
O_TO_MOVE = 14  # 4 one-hot: relative seat that decides now
O_SEATS = 18  # 4 blocks of SEAT_WIDTH, relative seats 0 (you), 1 (your left), ...
SEAT_WIDTH = 26
SO_PRESENT = 0
SO_HAND = 1  # 7, /3
SO_TABLEAU = 8  # 7, /5
SO_STONES = 15  # /10
SO_VP = 16  # /10
SO_OFF_MIN = 17  # 4, /10: offering cards by category, known at least (exact for yourself)
SO_OFF_MAX = 21  # 4, /10: known at most (exact for yourself)
SO_OFF_TOTAL = 25  # /10
O_SUPPLY = O_SEATS + MAX_PLAYERS * SEAT_WIDTH  # 4, /25
O_DECK = O_SUPPLY + 4  # /58
O_MARKET = O_DECK + 1  # [4 columns, 4 slots in take order, 7 card ids] one-hot
O_DEMON = O_MARKET + 4 * 4 * N_CARD_TYPES  # 4 one-hot (all 0 without the variant)
O_VARIANTS = O_DEMON + 4  # oracle, demon flags
O_NUM_PLAYERS = O_VARIANTS + 2  # 3 one-hot: 2, 3, 4 players
O_ALTAR = O_NUM_PLAYERS + 3  # size /10, known count per category (4, /10), unknown count /10
O_ALTAR_TOP = O_ALTAR + 6  # [4 depths (0 = top), 4 categories] one-hot where you know it
O_ORACLE = O_ALTAR_TOP + 16  # peeks owed /4, window size /4 (oracle decision)
O_SCORING = O_ORACLE + 2  # scored card id one-hot (7), reward amount /5, majority-bonus flag
O_DECK_CARDS = O_SCORING + 9  # 8, /12: cards left in the deck by card id 0..7 (public: every dealt card was seen)
O_LAST_COL = O_DECK_CARDS + 8  # 4 one-hot: column of the active player's last take this turn
OBS_DIM = O_LAST_COL + 4

DECISION_NAMES = (
    "take_offering",
    "play",
    "offer_face_up",
    "offer_face_down",
    "offer_supply",
    "refill",
    "oracle",
    "shrine_reward",
    "farmer_choice",
    "game_over",
)


# ============================================================================= random numbers
@njit(cache=True)
def _rng_next(rng):
    """SplitMix64: advance the one-element uint64 state ``rng`` and return 64 random bits."""
    rng[0] += np.uint64(0x9E3779B97F4A7C15)
    z = rng[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _rng_below(rng, k):
    """A random integer in [0, k)."""
    return np.int64(_rng_next(rng) % np.uint64(k))


@njit(cache=True)
def _shuffle(rng, arr, start, stop):
    """Fisher-Yates shuffle of arr[start:stop] in place."""
    for i in range(stop - 1, start, -1):
        j = start + _rng_below(rng, i - start + 1)
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t


# ============================================================================= small accessors
@njit(cache=True)
def _hand_size(s, seat):
    """Number of cards in a seat's hand."""
    t = 0
    for k in range(N_CARD_TYPES):
        t += s[S_HANDS + seat * N_CARD_TYPES + k]
    return t


@njit(cache=True)
def _offering_total(s, seat):
    """Number of offering cards in front of a seat."""
    t = 0
    for c in range(N_CATEGORIES):
        t += s[S_OFFERINGS + seat * N_CATEGORIES + c]
    return t


@njit(cache=True)
def _supply_total(s):
    """Offering cards left in the supply."""
    return s[S_SUPPLY] + s[S_SUPPLY + 1] + s[S_SUPPLY + 2] + s[S_SUPPLY + 3]


@njit(cache=True)
def offering_cost(s, seat, c):
    """Phase 1 price of a category-c offering card: max(0, 5 - c farmers in the tableau)."""
    f = s[S_TABLEAUS + seat * N_CARD_TYPES + FARMER + c]
    return max(0, 5 - f)


@njit(cache=True)
def _market_top(s, col):
    """The first takeable card of a column."""
    return s[S_MARKET + 4 * col + s[S_COL_POS + col]]


# ============================================================================= what others know of your offerings
@njit(cache=True)
def _tighten_knowledge(s, seat):
    """Keep the public bounds on a seat's offering cards consistent with their public total."""
    total = _offering_total(s, seat)
    base_min = S_KNOWN_MIN + seat * N_CATEGORIES
    base_max = S_KNOWN_MAX + seat * N_CATEGORIES
    sum_max = 0
    for c in range(N_CATEGORIES):
        if s[base_max + c] > total:
            s[base_max + c] = total
        sum_max += s[base_max + c]
    for c in range(N_CATEGORIES):
        lo = total - (sum_max - s[base_max + c])
        if s[base_min + c] < lo:
            s[base_min + c] = lo


@njit(cache=True)
def _gain_offering_public(s, seat, c):
    """A seat gains a category-c offering card that everybody sees (phase 1, farmer scoring)."""
    s[S_OFFERINGS + seat * N_CATEGORIES + c] += 1
    s[S_KNOWN_MIN + seat * N_CATEGORIES + c] += 1
    s[S_KNOWN_MAX + seat * N_CATEGORIES + c] += 1


@njit(cache=True)
def _lose_offering_public(s, seat, c):
    """A seat puts a category-c offering card face up on the altar."""
    s[S_OFFERINGS + seat * N_CATEGORIES + c] -= 1
    i = S_KNOWN_MIN + seat * N_CATEGORIES + c
    if s[i] > 0:
        s[i] -= 1
    s[S_KNOWN_MAX + seat * N_CATEGORIES + c] -= 1
    _tighten_knowledge(s, seat)


@njit(cache=True)
def _lose_offering_hidden(s, seat, c):
    """A seat puts a category-c card face down: the others only know one card left."""
    s[S_OFFERINGS + seat * N_CATEGORIES + c] -= 1
    for k in range(N_CATEGORIES):
        i = S_KNOWN_MIN + seat * N_CATEGORIES + k
        if s[i] > 0:
            s[i] -= 1
    _tighten_knowledge(s, seat)


@njit(cache=True)
def _gain_offering_hidden(s, seat, c):
    """A seat takes a category-c card in an oracle peek: the others only know one card came."""
    s[S_OFFERINGS + seat * N_CATEGORIES + c] += 1
    for k in range(N_CATEGORIES):
        s[S_KNOWN_MAX + seat * N_CATEGORIES + k] += 1
    _tighten_knowledge(s, seat)


# ============================================================================= set-up (RULES.md 2)
@njit(cache=True)
def _deal_market_column(s, col, start):
    """Deal the four deck cards from index ``start`` into a column (set-up: no oracle there)."""
    for j in range(4):
        s[S_MARKET + 4 * col + j] = s[S_DECK + start + j]
    s[S_COL_POS + col] = 0
    s[S_COL_LEN + col] = 4


@njit(cache=True)
def init_game(s, num_players, oracle, demon, seed, deck, starter_sets, altar):
    """Deal a new game into ``s``. ``deck``/``starter_sets``/``altar`` are the reset options
    (validated by the caller); an empty array means "draw it at random from ``seed``"."""
    s[:] = 0
    n = num_players
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(seed)
    s[S_NUM_PLAYERS] = n
    s[S_ORACLE] = 1 if oracle else 0
    s[S_DEMON] = 1 if demon else 0

    # starter sets: set k holds a stonecutter and the farmers of every category but k
    sets = np.arange(4)
    if starter_sets.size == 0:
        _shuffle(rng, sets, 0, 4)
    else:
        for i in range(n):
            sets[i] = starter_sets[i]
    for seat in range(n):
        s[S_STARTER + seat] = sets[seat]
        s[S_TABLEAUS + seat * N_CARD_TYPES + STONECUTTER] = 1
        for c in range(N_CATEGORIES):
            if c != sets[seat]:
                s[S_HANDS + seat * N_CARD_TYPES + FARMER + c] = 1
            s[S_OFFERINGS + seat * N_CATEGORIES + c] = 1
            s[S_KNOWN_MIN + seat * N_CATEGORIES + c] = 1
            s[S_KNOWN_MAX + seat * N_CATEGORIES + c] = 1
        s[S_STONES + seat] = 2 + seat
    for c in range(N_CATEGORIES):
        s[S_SUPPLY + c] = SUPPLY_PER_CATEGORY - n

    # the play deck: shuffle the 50 base cards; the oracles join after the market is dealt
    deck_len = ORACLE_DECK_SIZE if oracle else BASE_DECK_SIZE
    if deck.size == 0:
        cards = np.empty(deck_len, dtype=np.int64)
        k = 0
        for card in range(8):
            if card == ORACLE and not oracle:
                continue
            for _ in range(DECK_COUNTS[card]):
                cards[k] = card
                k += 1
        _shuffle(rng, cards, 0, BASE_DECK_SIZE)
        if oracle:
            _shuffle(rng, cards, MARKET_SIZE, deck_len)
        for i in range(deck_len):
            s[S_DECK + i] = cards[i]
    else:
        for i in range(deck_len):
            s[S_DECK + i] = deck[i]
    s[S_DECK_LEN] = deck_len
    for col in range(4):
        _deal_market_column(s, col, 4 * col)
    s[S_DECK_POS] = MARKET_SIZE

    # Oracle variant: one card of each category face down on the altar, order unknown to all
    if oracle:
        order = np.arange(4)  # top first
        if altar.size == 0:
            _shuffle(rng, order, 0, 4)
        else:
            for i in range(4):
                order[i] = altar[i]
        for i in range(4):
            s[S_ALTAR + i] = order[3 - i]
            s[S_ALTAR_KNOWN + i] = 0
            s[S_SUPPLY + i] -= 1
        s[S_ALTAR_LEN] = 4
    s[S_DEMON_COL] = 0 if demon else -1

    s[S_PHASE] = PH_TAKE_OFFERING
    s[S_ACTIVE] = 0
    s[S_TO_MOVE] = 0
    s[S_LAST_COL] = -1
    s[S_SCORED] = -1
    s[S_BONUS_SEAT] = -1


# ============================================================================= legal actions (RULES.md 6)
@njit(cache=True)
def legal_mask(s, mask):
    """Write the legal actions of the seat to move into ``mask`` (int8[44]); all 0 after the end."""
    mask[:] = 0
    ph = s[S_PHASE]
    p = s[S_TO_MOVE]
    if ph == PH_GAME_OVER:
        return
    if ph == PH_TAKE_OFFERING:
        stones = s[S_STONES + p]
        for c in range(N_CATEGORIES):
            if s[S_SUPPLY + c] > 0 and stones >= offering_cost(s, p, c):
                mask[A_TAKE_OFFERING + c] = 1
        mask[A_PASS] = 1
    elif ph == PH_PLAY:
        h = S_HANDS + p * N_CARD_TYPES
        stones = s[S_STONES + p]
        if s[h + STONECUTTER] > 0:
            mask[A_PLAY_STONECUTTER] = 1
        if s[h + PRIEST] > 0:
            mask[A_PLAY_PRIEST] = 1
        if s[h + SHRINE] > 0 and stones >= SHRINE_COST:
            mask[A_PLAY_SHRINE] = 1
        for c in range(N_CATEGORIES):
            for k in range(1, 4):
                if s[h + FARMER + c] >= k and stones >= k - 1:
                    mask[A_PLAY_FARMERS + 3 * c + k - 1] = 1
        if s[h + SHRINE] == 3 and stones < SHRINE_COST:
            mask[A_DISCARD_SHRINE] = 1
    elif ph == PH_OFFER_OWN:
        for c in range(N_CATEGORIES):
            if s[S_OFFERINGS + p * N_CATEGORIES + c] > 0:
                mask[A_OFFER_OWN + c] = 1
    elif ph == PH_OFFER_SUPPLY:
        for c in range(N_CATEGORIES):
            if s[S_SUPPLY + c] > 0:
                mask[A_OFFER_SUPPLY + c] = 1
    elif ph == PH_REFILL:
        for col in range(4):
            if col != s[S_DEMON_COL] and s[S_COL_POS + col] < s[S_COL_LEN + col]:
                mask[A_REFILL + col] = 1
    elif ph == PH_ORACLE:
        for d in range(s[S_WINDOW]):
            mask[A_ORACLE_TAKE + d] = 1
        mask[A_ORACLE_NONE] = 1
    elif ph == PH_SHRINE_REWARD:
        mask[A_SHRINE_STONES] = 1
        mask[A_SHRINE_VP] = 1
    elif ph == PH_FARMER_CHOICE:
        for c in range(N_CATEGORIES):
            if s[S_SUPPLY + c] > 0:
                mask[A_FARMER_CHOICE + c] = 1


# ============================================================================= end of game (RULES.md 4)
@njit(cache=True)
def altar_values(counts, values):
    """Value of each category: 3 - (number of distinct counts above its own), >= 0; 0 if absent."""
    for c in range(N_CATEGORIES):
        if counts[c] == 0:
            values[c] = 0
            continue
        above = 0
        for d in range(N_CATEGORIES):
            v = counts[d]
            if v > counts[c]:
                seen = False
                for e in range(d):
                    if counts[e] == v:
                        seen = True
                if not seen:
                    above += 1
        values[c] = max(0, 3 - above)


@njit(cache=True)
def final_scores(s, out):
    """Write each seat's final score (VP tokens, 4 per shrine, 1 per 5 stones, offerings) to out."""
    counts = np.zeros(N_CATEGORIES, dtype=np.int64)
    for i in range(s[S_ALTAR_LEN]):
        counts[s[S_ALTAR + i]] += 1
    values = np.zeros(N_CATEGORIES, dtype=np.int64)
    altar_values(counts, values)
    for seat in range(s[S_NUM_PLAYERS]):
        score = s[S_VP + seat] + 4 * s[S_TABLEAUS + seat * N_CARD_TYPES + SHRINE] + s[S_STONES + seat] // 5
        for c in range(N_CATEGORIES):
            score += s[S_OFFERINGS + seat * N_CATEGORIES + c] * values[c]
        out[seat] = score


@njit(cache=True)
def _end_game(s):
    """Stop the game at once: final scores, then winners by score, shrines, stones (ties share)."""
    n = s[S_NUM_PLAYERS]
    scores = np.zeros(MAX_PLAYERS, dtype=np.int64)
    final_scores(s, scores)
    best = -1
    mask = 0
    for seat in range(n):
        key = (scores[seat] * 64 + s[S_TABLEAUS + seat * N_CARD_TYPES + SHRINE]) * 100000 + s[S_STONES + seat]
        if key > best:
            best = key
            mask = 1 << seat
        elif key == best:
            mask |= 1 << seat
        s[S_SCORES + seat] = scores[seat]
    s[S_WINNERS] = mask
    s[S_PHASE] = PH_GAME_OVER
    s[S_TO_MOVE] = -1
    s[S_PEEKS] = 0
    s[S_WINDOW] = 0


# ============================================================================= phase 3: market columns
@njit(cache=True)
def _deal_column(s, col):
    """Deal a new column from the deck (oracles leave the game and owe a peek; an all-oracle
    group is replaced). Returns False when the game ended instead (deck too short or empty)."""
    while True:
        pos = s[S_DECK_POS]
        if s[S_DECK_LEN] - pos < 4:
            _end_game(s)
            return False
        k = 0
        had_oracle = False
        for i in range(4):
            card = s[S_DECK + pos + i]
            if card == ORACLE:
                had_oracle = True
            else:
                s[S_MARKET + 4 * col + k] = card
                k += 1
        s[S_DECK_POS] = pos + 4
        if had_oracle:
            s[S_PEEKS] += 1
        if k > 0:
            s[S_COL_POS + col] = 0
            s[S_COL_LEN + col] = k
            break
    if s[S_DECK_POS] == s[S_DECK_LEN]:
        _end_game(s)
        return False
    return True


# ============================================================================= phase 4: scoring
@njit(cache=True)
def _majority_seat(s, card):
    """The seat with strictly more ``card``s in its tableau than every other and at least 2, or -1."""
    best = -1
    best_v = -1
    tie = False
    for seat in range(s[S_NUM_PLAYERS]):
        v = s[S_TABLEAUS + seat * N_CARD_TYPES + card]
        if v > best_v:
            best_v = v
            best = seat
            tie = False
        elif v == best_v:
            tie = True
    if tie or best_v < 2:
        return -1
    return best


@njit(cache=True)
def _end_turn(s):
    """Pass the turn clockwise."""
    a = (s[S_ACTIVE] + 1) % s[S_NUM_PLAYERS]
    s[S_ACTIVE] = a
    s[S_TO_MOVE] = a
    s[S_PHASE] = PH_TAKE_OFFERING
    s[S_TURN] += 1
    s[S_LAST_COL] = -1
    s[S_SCORED] = -1
    s[S_SCORE_STEP] = 0
    s[S_BONUS_SEAT] = -1


@njit(cache=True)
def _score_per_card(s, card, reward_slot):
    """Stonecutter/priest scoring: 1 stone/VP per card in the tableau, +1 for the majority."""
    bonus = _majority_seat(s, card)
    for seat in range(s[S_NUM_PLAYERS]):
        v = s[S_TABLEAUS + seat * N_CARD_TYPES + card]
        if seat == bonus:
            v += 1
        s[reward_slot + seat] += v


@njit(cache=True)
def _next_shrine_reward(s):
    """Shrine scoring: ask the next seat (from the active one) that owns a shrine, or end the turn."""
    n = s[S_NUM_PLAYERS]
    a = s[S_ACTIVE]
    k = s[S_SCORE_STEP]
    while k < n:
        seat = (a + k) % n
        if s[S_TABLEAUS + seat * N_CARD_TYPES + SHRINE] > 0:
            s[S_SCORE_STEP] = k
            s[S_PHASE] = PH_SHRINE_REWARD
            s[S_TO_MOVE] = seat
            return
        k += 1
    _end_turn(s)


@njit(cache=True)
def shrine_reward_amount(s, seat):
    """Stones or VP a seat receives in shrine scoring: 1 per shrine, +1 for the majority."""
    v = s[S_TABLEAUS + seat * N_CARD_TYPES + SHRINE]
    if s[S_BONUS_SEAT] == seat:
        v += 1
    return v


@njit(cache=True)
def _next_farmer_card(s):
    """Farmer scoring: hand out one card per owner in turn order, then the majority bonus card;
    stop for a choice when the scored category is empty but the supply is not."""
    n = s[S_NUM_PLAYERS]
    a = s[S_ACTIVE]
    c = s[S_SCORED] - FARMER
    k = s[S_SCORE_STEP]
    while k <= n:
        if k < n:
            seat = (a + k) % n
            eligible = s[S_TABLEAUS + seat * N_CARD_TYPES + FARMER + c] > 0
        else:
            seat = s[S_BONUS_SEAT]
            eligible = seat >= 0
        if eligible:
            if s[S_SUPPLY + c] > 0:
                s[S_SUPPLY + c] -= 1
                _gain_offering_public(s, seat, c)
            elif _supply_total(s) > 0:
                s[S_SCORE_STEP] = k
                s[S_PHASE] = PH_FARMER_CHOICE
                s[S_TO_MOVE] = seat
                return
        k += 1
    _end_turn(s)


@njit(cache=True)
def _start_scoring(s):
    """Phase 4: score the first takeable card of the column of the last take."""
    t = _market_top(s, s[S_LAST_COL])
    s[S_SCORED] = t
    s[S_SCORE_STEP] = 0
    s[S_BONUS_SEAT] = _majority_seat(s, t)
    if t == STONECUTTER:
        _score_per_card(s, STONECUTTER, S_STONES)
        _end_turn(s)
    elif t == PRIEST:
        _score_per_card(s, PRIEST, S_VP)
        _end_turn(s)
    elif t == SHRINE:
        _next_shrine_reward(s)
    else:
        _next_farmer_card(s)


# ============================================================================= phase 3 flow and the oracle
@njit(cache=True)
def _continue_refill(s):
    """After a take: owed oracle peeks first, then more takes until the hand holds 3, then phase 4."""
    a = s[S_ACTIVE]
    if s[S_PEEKS] > 0:
        L = s[S_ALTAR_LEN]
        if L > 0:
            w = min(4, L)
            s[S_WINDOW] = w
            for d in range(w):
                s[S_ALTAR_KNOWN + L - 1 - d] |= 1 << a
            s[S_PHASE] = PH_ORACLE
            s[S_TO_MOVE] = a
            return
        s[S_PEEKS] = 0  # an empty altar: the peeks do nothing
    if _hand_size(s, a) < 3:
        s[S_PHASE] = PH_REFILL
        s[S_TO_MOVE] = a
        return
    _start_scoring(s)


@njit(cache=True)
def _take_from_column(s, col):
    """Take the first takeable card of a column; deal a new column if it empties."""
    a = s[S_ACTIVE]
    card = _market_top(s, col)
    s[S_HANDS + a * N_CARD_TYPES + card] += 1
    s[S_COL_POS + col] += 1
    s[S_LAST_COL] = col
    if s[S_COL_POS + col] == s[S_COL_LEN + col]:
        if not _deal_column(s, col):
            return
    _continue_refill(s)


@njit(cache=True)
def _oracle_take(s, depth):
    """The active player takes the altar card at ``depth`` of the peeked window (or none, -1).
    Everybody else forgets the categories of the rest of the window."""
    a = s[S_ACTIVE]
    if depth >= 0:
        L = s[S_ALTAR_LEN]
        w = s[S_WINDOW]
        idx = L - 1 - depth
        cat = s[S_ALTAR + idx]
        for i in range(idx, L - 1):
            s[S_ALTAR + i] = s[S_ALTAR + i + 1]
            s[S_ALTAR_KNOWN + i] = s[S_ALTAR_KNOWN + i + 1]
        L -= 1
        s[S_ALTAR + L] = 0
        s[S_ALTAR_KNOWN + L] = 0
        s[S_ALTAR_LEN] = L
        for i in range(L - (w - 1), L):
            s[S_ALTAR_KNOWN + i] &= 1 << a
        _gain_offering_hidden(s, a, cat)
    s[S_PEEKS] -= 1
    s[S_WINDOW] = 0
    _continue_refill(s)


# ============================================================================= phase 2b: offering
@njit(cache=True)
def _push_altar(s, cat, known):
    """Put a card on top of the altar; ``known`` is the bit mask of seats that see its category."""
    L = s[S_ALTAR_LEN]
    s[S_ALTAR + L] = cat
    s[S_ALTAR_KNOWN + L] = known
    s[S_ALTAR_LEN] = L + 1


@njit(cache=True)
def _start_refill(s):
    """Phase 3 begins."""
    s[S_PHASE] = PH_REFILL
    s[S_TO_MOVE] = s[S_ACTIVE]


@njit(cache=True)
def _next_offering(s):
    """Offering phase: the next seat clockwise from the active one that has offering cards puts
    one face up; the active player last, face down; then a supply card; then phase 3."""
    n = s[S_NUM_PLAYERS]
    a = s[S_ACTIVE]
    k = s[S_OFFER_STEP] + 1
    while k <= n:
        seat = (a + k) % n
        if _offering_total(s, seat) > 0:
            s[S_OFFER_STEP] = k
            s[S_PHASE] = PH_OFFER_OWN
            s[S_TO_MOVE] = seat
            return
        k += 1
    s[S_OFFER_STEP] = n
    if _supply_total(s) > 0:
        s[S_PHASE] = PH_OFFER_SUPPLY
        s[S_TO_MOVE] = a
        return
    _start_refill(s)


# ============================================================================= one decision
@njit(cache=True)
def apply_action(s, action):
    """Apply one legal decision of the seat to move and run the game on to the next decision.
    The action must be legal (see ``step_checked``)."""
    ph = s[S_PHASE]
    p = s[S_TO_MOVE]
    n = s[S_NUM_PLAYERS]
    s[S_DECISIONS] += 1
    if ph == PH_TAKE_OFFERING:
        if action < A_PASS:
            c = action - A_TAKE_OFFERING
            s[S_STONES + p] -= offering_cost(s, p, c)
            s[S_SUPPLY + c] -= 1
            _gain_offering_public(s, p, c)
        s[S_PHASE] = PH_PLAY
    elif ph == PH_PLAY:
        h = S_HANDS + p * N_CARD_TYPES
        t = S_TABLEAUS + p * N_CARD_TYPES
        if action == A_PLAY_SHRINE:
            s[h + SHRINE] -= 1
            s[t + SHRINE] += 1
            s[S_STONES + p] -= SHRINE_COST
            s[S_OFFER_STEP] = 0
            _next_offering(s)
            return
        if action == A_PLAY_STONECUTTER:
            s[h + STONECUTTER] -= 1
            s[t + STONECUTTER] += 1
        elif action == A_PLAY_PRIEST:
            s[h + PRIEST] -= 1
            s[t + PRIEST] += 1
            if s[S_DEMON] != 0:
                s[S_DEMON_COL] = (s[S_DEMON_COL] + 1) % 4
        elif action == A_DISCARD_SHRINE:
            s[h + SHRINE] -= 1
        else:
            c = (action - A_PLAY_FARMERS) // 3
            k = (action - A_PLAY_FARMERS) % 3 + 1
            s[h + FARMER + c] -= k
            s[t + FARMER + c] += k
            s[S_STONES + p] -= k - 1
        _start_refill(s)
    elif ph == PH_OFFER_OWN:
        c = action - A_OFFER_OWN
        if p == s[S_ACTIVE]:
            _lose_offering_hidden(s, p, c)
            _push_altar(s, c, 1 << p)
        else:
            _lose_offering_public(s, p, c)
            _push_altar(s, c, (1 << n) - 1)
        _next_offering(s)
    elif ph == PH_OFFER_SUPPLY:
        c = action - A_OFFER_SUPPLY
        s[S_SUPPLY + c] -= 1
        _push_altar(s, c, (1 << n) - 1)
        _start_refill(s)
    elif ph == PH_REFILL:
        _take_from_column(s, action - A_REFILL)
    elif ph == PH_ORACLE:
        if action == A_ORACLE_NONE:
            _oracle_take(s, -1)
        else:
            _oracle_take(s, action - A_ORACLE_TAKE)
    elif ph == PH_SHRINE_REWARD:
        v = shrine_reward_amount(s, p)
        if action == A_SHRINE_STONES:
            s[S_STONES + p] += v
        else:
            s[S_VP + p] += v
        s[S_SCORE_STEP] += 1
        _next_shrine_reward(s)
    elif ph == PH_FARMER_CHOICE:
        c = action - A_FARMER_CHOICE
        s[S_SUPPLY + c] -= 1
        _gain_offering_public(s, p, c)
        s[S_SCORE_STEP] += 1
        _next_farmer_card(s)


@njit(cache=True)
def is_legal(s, action):
    """True when ``action`` (0..43) is legal for the seat to move."""
    if action < 0 or action >= N_ACTIONS:
        return False
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    legal_mask(s, mask)
    return mask[action] != 0


@njit(cache=True)
def step_checked(s, action):
    """Apply ``action`` if it is legal and return 0; return 1 and change nothing if it is not."""
    if not is_legal(s, action):
        return 1
    apply_action(s, action)
    return 0


# ============================================================================= observation (RULES.md 5)
@njit(cache=True)
def _decision_index(s):
    """Index into DECISION_NAMES of the decision being taken now."""
    ph = s[S_PHASE]
    if ph == PH_TAKE_OFFERING:
        return 0
    if ph == PH_PLAY:
        return 1
    if ph == PH_OFFER_OWN:
        return 3 if s[S_TO_MOVE] == s[S_ACTIVE] else 2
    return ph + 1  # offer_supply 4, refill 5, oracle 6, shrine 7, farmer 8, game_over 9


@njit(cache=True)
def observe(s, p, obs, mask):
    """Write seat ``p``'s observation (float32[OBS_DIM]) and action mask (int8[44], all 0 unless
    ``p`` decides now). Only what ``p`` may know goes in: see the layout in ``bali_v0``."""
    obs[:] = 0.0
    n = s[S_NUM_PLAYERS]
    ph = s[S_PHASE]
    obs[O_DECISION + _decision_index(s)] = 1.0
    obs[O_ACTIVE + (s[S_ACTIVE] - p) % n] = 1.0
    if ph != PH_GAME_OVER:
        obs[O_TO_MOVE + (s[S_TO_MOVE] - p) % n] = 1.0
    for r in range(n):
        q = (p + r) % n
        b = O_SEATS + r * SEAT_WIDTH
        obs[b + SO_PRESENT] = 1.0
        for k in range(N_CARD_TYPES):
            obs[b + SO_HAND + k] = s[S_HANDS + q * N_CARD_TYPES + k] / 3.0
            obs[b + SO_TABLEAU + k] = s[S_TABLEAUS + q * N_CARD_TYPES + k] / 5.0
        obs[b + SO_STONES] = s[S_STONES + q] / 10.0
        obs[b + SO_VP] = s[S_VP + q] / 10.0
        for c in range(N_CATEGORIES):
            if r == 0:
                lo = s[S_OFFERINGS + q * N_CATEGORIES + c]
                hi = lo
            else:
                lo = s[S_KNOWN_MIN + q * N_CATEGORIES + c]
                hi = s[S_KNOWN_MAX + q * N_CATEGORIES + c]
            obs[b + SO_OFF_MIN + c] = lo / 10.0
            obs[b + SO_OFF_MAX + c] = hi / 10.0
        obs[b + SO_OFF_TOTAL] = _offering_total(s, q) / 10.0
    for c in range(N_CATEGORIES):
        obs[O_SUPPLY + c] = s[S_SUPPLY + c] / 25.0
    obs[O_DECK] = (s[S_DECK_LEN] - s[S_DECK_POS]) / 58.0
    for col in range(4):
        pos = s[S_COL_POS + col]
        for j in range(s[S_COL_LEN + col] - pos):
            card = s[S_MARKET + 4 * col + pos + j]
            obs[O_MARKET + (col * 4 + j) * N_CARD_TYPES + card] = 1.0
    if s[S_DEMON] != 0:
        obs[O_DEMON + s[S_DEMON_COL]] = 1.0
    obs[O_VARIANTS] = s[S_ORACLE]
    obs[O_VARIANTS + 1] = s[S_DEMON]
    obs[O_NUM_PLAYERS + n - 2] = 1.0
    L = s[S_ALTAR_LEN]
    bit = 1 << p
    known = np.zeros(N_CATEGORIES + 1, dtype=np.int64)  # by category, then unknown
    for i in range(L):
        if s[S_ALTAR_KNOWN + i] & bit:
            known[s[S_ALTAR + i]] += 1
        else:
            known[N_CATEGORIES] += 1
    obs[O_ALTAR] = L / 10.0
    for c in range(N_CATEGORIES + 1):
        obs[O_ALTAR + 1 + c] = known[c] / 10.0
    for d in range(min(4, L)):
        i = L - 1 - d
        if s[S_ALTAR_KNOWN + i] & bit:
            obs[O_ALTAR_TOP + 4 * d + s[S_ALTAR + i]] = 1.0
    obs[O_ORACLE] = s[S_PEEKS] / 4.0
    obs[O_ORACLE + 1] = s[S_WINDOW] / 4.0
    if ph == PH_SHRINE_REWARD or ph == PH_FARMER_CHOICE:
        obs[O_SCORING + s[S_SCORED]] = 1.0
        q = s[S_TO_MOVE]
        if ph == PH_SHRINE_REWARD:
            obs[O_SCORING + 7] = shrine_reward_amount(s, q) / 5.0
            obs[O_SCORING + 8] = 1.0 if s[S_BONUS_SEAT] == q else 0.0
        else:
            obs[O_SCORING + 7] = 1.0 / 5.0
            obs[O_SCORING + 8] = 1.0 if s[S_SCORE_STEP] == n else 0.0
    for i in range(s[S_DECK_POS], s[S_DECK_LEN]):
        obs[O_DECK_CARDS + s[S_DECK + i]] += 1.0
    for k in range(8):
        obs[O_DECK_CARDS + k] /= 12.0
    if s[S_LAST_COL] >= 0:
        obs[O_LAST_COL + s[S_LAST_COL]] = 1.0
    if p == s[S_TO_MOVE]:
        legal_mask(s, mask)
    else:
        mask[:] = 0


def _obs_slots():
    """(name, scale, high) for every observation slot, in order; the documented layout."""
    cards = ("stonecutter", "priest", "shrine", "rice_farmer", "peanut_farmer", "banana_farmer", "chili_farmer")
    cats = ("rice", "peanuts", "bananas", "chilies")
    slots = []
    slots += [(f"decision.{d}", 1.0, 1.0) for d in DECISION_NAMES]
    slots += [(f"active_seat.rel{r}", 1.0, 1.0) for r in range(MAX_PLAYERS)]
    slots += [(f"to_move_seat.rel{r}", 1.0, 1.0) for r in range(MAX_PLAYERS)]
    for r in range(MAX_PLAYERS):
        pre = f"seat.rel{r}."
        slots.append((pre + "present", 1.0, 1.0))
        slots += [(pre + f"hand.{c}", 3.0, 1.0) for c in cards]
        slots += [(pre + f"tableau.{c}", 5.0, 3.0) for c in cards]
        slots.append((pre + "stones", 10.0, 100.0))
        slots.append((pre + "vp_tokens", 10.0, 100.0))
        slots += [(pre + f"offerings_min.{c}", 10.0, 10.0) for c in cats]
        slots += [(pre + f"offerings_max.{c}", 10.0, 10.0) for c in cats]
        slots.append((pre + "offerings_total", 10.0, 10.0))
    slots += [(f"supply.{c}", 25.0, 1.0) for c in cats]
    slots.append(("deck_size", 58.0, 1.0))
    for col in range(4):
        for j in range(4):
            slots += [(f"market.col{col}.slot{j}.{c}", 1.0, 1.0) for c in cards]
    slots += [(f"demon.col{col}", 1.0, 1.0) for col in range(4)]
    slots += [("variant.oracle", 1.0, 1.0), ("variant.demon", 1.0, 1.0)]
    slots += [(f"num_players.{k}", 1.0, 1.0) for k in (2, 3, 4)]
    slots.append(("altar.size", 10.0, 6.0))
    slots += [(f"altar.known.{c}", 10.0, 6.0) for c in cats]
    slots.append(("altar.unknown", 10.0, 6.0))
    for d in range(4):
        slots += [(f"altar.depth{d}.{c}", 1.0, 1.0) for c in cats]
    slots += [("oracle.peeks_owed", 4.0, 4.0), ("oracle.window_size", 4.0, 1.0)]
    slots += [(f"scoring.type.{c}", 1.0, 1.0) for c in cards]
    slots += [("scoring.amount", 5.0, 2.0), ("scoring.majority_bonus", 1.0, 1.0)]
    slots += [(f"deck_cards.{c}", 12.0, 1.0) for c in cards + ("oracle",)]
    slots += [(f"last_take_column.col{col}", 1.0, 1.0) for col in range(4)]
    assert len(slots) == OBS_DIM, (len(slots), OBS_DIM)
    return slots


OBS_SLOTS = tuple(_obs_slots())
OBS_HIGH = np.array([h for _, _, h in OBS_SLOTS], dtype=np.float32)


def observation_slot_names() -> list[str]:
    """The name of every observation slot, index by index (length ``OBS_DIM``)."""
    return [name for name, _, _ in OBS_SLOTS]


# ============================================================================= rewards, seeds, random policy
@njit(cache=True)
def terminal_rewards(s, score_mode, out):
    """Rewards of a finished game per seat: +1 winners / -1 others, or with ``score_mode`` the own
    final score minus the mean final score of the others."""
    n = s[S_NUM_PLAYERS]
    total = 0
    for q in range(n):
        total += s[S_SCORES + q]
    for q in range(n):
        if score_mode:
            out[q] = s[S_SCORES + q] - (total - s[S_SCORES + q]) / (n - 1)
        elif (s[S_WINNERS] >> q) & 1:
            out[q] = 1.0
        else:
            out[q] = -1.0


@njit(cache=True)
def next_deal_seed(stream):
    """The next deal seed of an environment's seed stream (a one-element uint64 array)."""
    return _rng_next(stream)


@njit(cache=True)
def random_legal_action(rng, mask):
    """Uniform random legal action from ``mask`` using the SplitMix64 stream ``rng``."""
    count = 0
    for a in range(N_ACTIONS):
        count += mask[a]
    k = _rng_below(rng, count)
    for a in range(N_ACTIONS):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


# ============================================================================= batched kernels
@njit(cache=True)
def _batch_reset_one(states, i, streams, num_players, oracle, demon, deck, starters, altar, obs, masks, to_move):
    """Deal game i from the next seed of its stream and write its first observation."""
    s = states[i]
    init_game(s, num_players, oracle, demon, _rng_next(streams[i : i + 1]), deck, starters, altar)
    to_move[i] = s[S_TO_MOVE]
    observe(s, s[S_TO_MOVE], obs[i], masks[i])


@njit(cache=True, parallel=True)
def batch_reset(states, streams, num_players, oracle, demon, deck, starters, altar, obs, masks, to_move):
    """Deal every game of a batch (one Numba call, parallel over games)."""
    for i in prange(states.shape[0]):
        _batch_reset_one(states, i, streams, num_players, oracle, demon, deck, starters, altar, obs, masks, to_move)


@njit(cache=True)
def _batch_step_one(states, i, action, streams, num_players, oracle, demon, deck, starters, altar,
                    score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners):
    """Step game i (action -1: leave it as it is); if it ends, record its rewards, scores and
    winners and deal the next game."""
    s = states[i]
    rewards[i, :] = 0.0
    if action < 0:
        terminated[i] = False
        return
    apply_action(s, action)
    if s[S_PHASE] == PH_GAME_OVER:
        terminal_rewards(s, score_mode, rewards[i])
        for q in range(num_players):
            final_scores[i, q] = s[S_SCORES + q]
        winners[i] = s[S_WINNERS]
        terminated[i] = True
        init_game(s, num_players, oracle, demon, _rng_next(streams[i : i + 1]), deck, starters, altar)
    else:
        terminated[i] = False
    to_move[i] = s[S_TO_MOVE]
    observe(s, s[S_TO_MOVE], obs[i], masks[i])


@njit(cache=True)
def _first_illegal(states, actions):
    """Index of the first game whose action is illegal (-1 = skip the game is allowed), or -1."""
    for i in range(states.shape[0]):
        if actions[i] != -1 and not is_legal(states[i], actions[i]):
            return i
    return -1


@njit(cache=True, parallel=True)
def batch_step_parallel(states, actions, streams, num_players, oracle, demon, deck, starters, altar,
                        score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners):
    """Step every game of a batch (parallel over games). Returns -1, or the index of the first
    game whose action is illegal, in which case nothing was changed."""
    bad = _first_illegal(states, actions)
    if bad >= 0:
        return bad
    for i in prange(states.shape[0]):
        _batch_step_one(states, i, actions[i], streams, num_players, oracle, demon, deck, starters, altar,
                        score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners)
    return -1


@njit(cache=True)
def batch_step_serial(states, actions, streams, num_players, oracle, demon, deck, starters, altar,
                      score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners):
    """``batch_step_parallel`` on one thread (lower call overhead for small batches)."""
    bad = _first_illegal(states, actions)
    if bad >= 0:
        return bad
    for i in range(states.shape[0]):
        _batch_step_one(states, i, actions[i], streams, num_players, oracle, demon, deck, starters, altar,
                        score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners)
    return -1


# ============================================================================= rollouts
@njit(cache=True)
def _rollout_one(s, rng, mask):
    """Play the game in ``s`` to the end with uniform random legal actions; return the steps."""
    steps = 0
    while s[S_PHASE] != PH_GAME_OVER:
        legal_mask(s, mask)
        apply_action(s, random_legal_action(rng, mask))
        steps += 1
    return steps


@njit(cache=True, parallel=True)
def rollout_states(states, policy_seeds, scores, winners, steps):
    """Play copies of ``states`` to the end with the uniform random policy (game i draws from the
    SplitMix64 stream ``policy_seeds[i]``); write final scores [N, 4], winner masks [N] and
    decisions [N]. The input states are not modified."""
    for i in prange(states.shape[0]):
        s = states[i].copy()
        rng = policy_seeds[i : i + 1].copy()
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        steps[i] = _rollout_one(s, rng, mask)
        for q in range(MAX_PLAYERS):
            scores[i, q] = s[S_SCORES + q]
        winners[i] = s[S_WINNERS]


@njit(cache=True, parallel=True)
def rollout_new_games(streams, num_players, oracle, demon, scores, winners, steps):
    """Game i: deal from the first seed of the SplitMix64 stream ``streams[i]`` (as the AEC env's
    ``reset(seed=streams[i])`` does), then play it to the end with the uniform random policy
    drawing from the rest of that stream. Outputs as ``rollout_states``; ``streams`` unchanged."""
    empty = np.zeros(0, dtype=np.int64)
    for i in prange(streams.shape[0]):
        s = np.zeros(STATE_SIZE, dtype=np.int16)
        rng = streams[i : i + 1].copy()
        init_game(s, num_players, oracle, demon, _rng_next(rng), empty, empty, empty)
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        steps[i] = _rollout_one(s, rng, mask)
        for q in range(MAX_PLAYERS):
            scores[i, q] = s[S_SCORES + q]
        winners[i] = s[S_WINNERS]


# ============================================================================= information sets
@njit(cache=True)
def _argmax_range(obs, start, size):
    """Index (0..size-1) of the largest value in obs[start:start+size], -1 if all are 0."""
    best = -1
    best_v = 0.0
    for k in range(size):
        if obs[start + k] > best_v:
            best_v = obs[start + k]
            best = k
    return best


@njit(cache=True)
def _obs_int(obs, i, scale):
    """A count stored at obs[i] as count / scale."""
    return np.int64(np.rint(obs[i] * scale))


_DECISION_PHASE = np.array([PH_TAKE_OFFERING, PH_PLAY, PH_OFFER_OWN, PH_OFFER_OWN, PH_OFFER_SUPPLY, PH_REFILL,
                            PH_ORACLE, PH_SHRINE_REWARD, PH_FARMER_CHOICE, PH_GAME_OVER], dtype=np.int64)


@njit(cache=True)
def determinize(obs, rng, s):
    """Sample into ``s`` a full game state consistent with one player's observation ``obs``, using
    nothing else (so a search that plays such samples never peeks at hidden information).

    The observer becomes seat 0 (seats are relative, and seat numbers do not matter after the
    deal). Sampled: the deck order (uniform over the public deck composition), the other
    players' offering cards (within the public bounds and totals), the categories of the altar
    cards the observer does not know, and the order of the altar below the known top cards.
    Knowledge fields are set so that ``observe(s, 0)`` gives back ``obs`` exactly."""
    s[:] = 0
    n = _argmax_range(obs, O_NUM_PLAYERS, 3) + 2
    s[S_NUM_PLAYERS] = n
    s[S_ORACLE] = 1 if obs[O_VARIANTS] > 0.5 else 0
    s[S_DEMON] = 1 if obs[O_VARIANTS + 1] > 0.5 else 0
    ph = _DECISION_PHASE[_argmax_range(obs, O_DECISION, 10)]
    s[S_PHASE] = ph
    a = _argmax_range(obs, O_ACTIVE, 4)
    s[S_ACTIVE] = a
    p = _argmax_range(obs, O_TO_MOVE, 4)
    s[S_TO_MOVE] = p
    for q in range(n):
        b = O_SEATS + q * SEAT_WIDTH
        for k in range(N_CARD_TYPES):
            s[S_HANDS + q * N_CARD_TYPES + k] = _obs_int(obs, b + SO_HAND + k, 3.0)
            s[S_TABLEAUS + q * N_CARD_TYPES + k] = _obs_int(obs, b + SO_TABLEAU + k, 5.0)
        s[S_STONES + q] = _obs_int(obs, b + SO_STONES, 10.0)
        s[S_VP + q] = _obs_int(obs, b + SO_VP, 10.0)
        for c in range(N_CATEGORIES):
            s[S_KNOWN_MIN + q * N_CATEGORIES + c] = _obs_int(obs, b + SO_OFF_MIN + c, 10.0)
            s[S_KNOWN_MAX + q * N_CATEGORIES + c] = _obs_int(obs, b + SO_OFF_MAX + c, 10.0)
        s[S_STARTER + q] = q
    for c in range(N_CATEGORIES):
        s[S_SUPPLY + c] = _obs_int(obs, O_SUPPLY + c, 25.0)
    # market and deck
    for col in range(4):
        k = 0
        for j in range(4):
            card = _argmax_range(obs, O_MARKET + (col * 4 + j) * N_CARD_TYPES, N_CARD_TYPES)
            if card >= 0:
                s[S_MARKET + 4 * col + k] = card
                k += 1
        s[S_COL_POS + col] = 0
        s[S_COL_LEN + col] = k
    size = 0
    for card in range(8):
        for _ in range(_obs_int(obs, O_DECK_CARDS + card, 12.0)):
            s[S_DECK + size] = card
            size += 1
    _shuffle(rng, s[S_DECK : S_DECK + size], 0, size)
    s[S_DECK_POS] = 0
    s[S_DECK_LEN] = size
    s[S_DEMON_COL] = _argmax_range(obs, O_DEMON, 4) if s[S_DEMON] != 0 else -1
    s[S_PEEKS] = _obs_int(obs, O_ORACLE, 4.0)
    s[S_WINDOW] = _obs_int(obs, O_ORACLE + 1, 4.0)
    s[S_LAST_COL] = _argmax_range(obs, O_LAST_COL, 4)
    s[S_SCORED] = _argmax_range(obs, O_SCORING, 7)

    # offering cards: own exact, the others sampled within bounds; the rest go to the altar
    rest = np.zeros(N_CATEGORIES, dtype=np.int64)  # cards of each category not yet placed
    for c in range(N_CATEGORIES):
        own = s[S_KNOWN_MIN + c]
        s[S_OFFERINGS + c] = own
        rest[c] = SUPPLY_PER_CATEGORY - s[S_SUPPLY + c] - own - _obs_int(obs, O_ALTAR + 1 + c, 10.0)
        for q in range(1, n):
            s[S_OFFERINGS + q * N_CATEGORIES + c] = s[S_KNOWN_MIN + q * N_CATEGORIES + c]
            rest[c] -= s[S_KNOWN_MIN + q * N_CATEGORIES + c]
    base_rest = rest.copy()
    for attempt in range(33):  # random restarts; the last attempt ignores the category totals
        strict = attempt < 32
        rest[:] = base_rest
        ok = True
        for q in range(1, n):
            for c in range(N_CATEGORIES):
                s[S_OFFERINGS + q * N_CATEGORIES + c] = s[S_KNOWN_MIN + q * N_CATEGORIES + c]
            missing = _obs_int(obs, O_SEATS + q * SEAT_WIDTH + SO_OFF_TOTAL, 10.0) - _offering_total(s, q)
            for _ in range(missing):
                room = 0
                for c in range(N_CATEGORIES):
                    if s[S_OFFERINGS + q * N_CATEGORIES + c] < s[S_KNOWN_MAX + q * N_CATEGORIES + c] and (rest[c] > 0 or not strict):
                        room += 1
                if room == 0:
                    ok = False
                    break
                pick = _rng_below(rng, room)
                for c in range(N_CATEGORIES):
                    if s[S_OFFERINGS + q * N_CATEGORIES + c] < s[S_KNOWN_MAX + q * N_CATEGORIES + c] and (rest[c] > 0 or not strict):
                        if pick == 0:
                            s[S_OFFERINGS + q * N_CATEGORIES + c] += 1
                            rest[c] -= 1
                        pick -= 1
            if not ok:
                break
        if ok:
            break
    for c in range(N_CATEGORIES):
        if rest[c] < 0:
            rest[c] = 0
    # own knowledge bounds as the others hold them do not matter for the observer: exact
    for c in range(N_CATEGORIES):
        s[S_KNOWN_MAX + c] = s[S_KNOWN_MIN + c]

    # the altar: known top cards in place, the other positions from the known pool + the rest
    L = _obs_int(obs, O_ALTAR, 10.0)
    s[S_ALTAR_LEN] = L
    pool = np.zeros(N_CATEGORIES, dtype=np.int64)  # known-category cards not at a known depth
    for c in range(N_CATEGORIES):
        pool[c] = _obs_int(obs, O_ALTAR + 1 + c, 10.0)
    fixed = np.full(ALTAR_MAX, -1, dtype=np.int64)
    for d in range(min(4, L)):
        cat = _argmax_range(obs, O_ALTAR_TOP + 4 * d, 4)
        if cat >= 0:
            fixed[L - 1 - d] = cat
            pool[cat] -= 1
    free = 0
    cats = np.zeros(ALTAR_MAX, dtype=np.int64)
    known = np.zeros(ALTAR_MAX, dtype=np.int64)
    for c in range(N_CATEGORIES):
        for _ in range(pool[c]):
            cats[free] = c
            known[free] = 1
            free += 1
    n_unknown = _obs_int(obs, O_ALTAR + 5, 10.0)
    for _ in range(n_unknown):
        total_rest = rest[0] + rest[1] + rest[2] + rest[3]
        c = 0
        if total_rest > 0:
            k = _rng_below(rng, total_rest)
            while k >= rest[c]:
                k -= rest[c]
                c += 1
            rest[c] -= 1
        else:
            c = _rng_below(rng, N_CATEGORIES)
        cats[free] = c
        known[free] = 0
        free += 1
    # a top-4 depth whose category the observer does not know holds a card of unknown category
    n_known = free - n_unknown
    _shuffle(rng, cats, n_known, free)
    next_unknown = n_known
    for d in range(min(4, L)):
        i = L - 1 - d
        if fixed[i] < 0:
            fixed[i] = cats[next_unknown]
            known[next_unknown] = -1  # placed
            next_unknown += 1
    order = np.zeros(ALTAR_MAX, dtype=np.int64)
    m = 0
    for j in range(free):
        if known[j] >= 0:
            order[m] = j
            m += 1
    _shuffle(rng, order, 0, m)
    j = 0
    for i in range(L):
        if fixed[i] >= 0:
            s[S_ALTAR + i] = fixed[i]
            s[S_ALTAR_KNOWN + i] = 1 if i < L - 4 or _argmax_range(obs, O_ALTAR_TOP + 4 * (L - 1 - i), 4) >= 0 else 0
        else:
            s[S_ALTAR + i] = cats[order[j]]
            s[S_ALTAR_KNOWN + i] = known[order[j]]
            j += 1

    # where the pending decision stands
    s[S_BONUS_SEAT] = -1
    if ph == PH_OFFER_OWN:
        k = (p - a) % n
        s[S_OFFER_STEP] = n if k == 0 else k
    elif ph == PH_OFFER_SUPPLY:
        s[S_OFFER_STEP] = n
    elif ph == PH_SHRINE_REWARD or ph == PH_FARMER_CHOICE:
        s[S_BONUS_SEAT] = _majority_seat(s, s[S_SCORED])
        k = (p - a) % n
        if ph == PH_FARMER_CHOICE and obs[O_SCORING + 8] > 0.5:
            k = n
        s[S_SCORE_STEP] = k
    elif ph == PH_GAME_OVER:
        s[S_TO_MOVE] = -1


# ============================================================================= information-set MCTS
@njit(cache=True)
def _new_node(child, visits, avail, value, mover, n_nodes, seat):
    """Append a tree node (no children yet) moved into by ``seat``; return its index."""
    node = n_nodes[0]
    n_nodes[0] = node + 1
    child[node, :] = -1
    visits[node] = 0
    avail[node] = 1
    value[node] = 0.0
    mover[node] = seat
    return node


@njit(cache=True)
def ismcts_reset(child, visits, avail, value, mover, n_nodes):
    """Empty the tree: only the root (node 0) remains."""
    n_nodes[0] = 0
    _new_node(child, visits, avail, value, mover, n_nodes, -1)


@njit(cache=True)
def ismcts_iterate(obs, iterations, rng, c_uct, child, visits, avail, value, mover, n_nodes):
    """Run ``iterations`` of single-observer information-set MCTS from ``obs`` on the given tree.

    Each iteration samples a state consistent with the observation (``determinize``), descends
    the tree over the actions legal in that sample (UCB1 with availability counts, from the
    point of view of the seat to move), adds one node, finishes the game with uniform random
    moves and backs up each seat's share of the win. The observer is seat 0 of every sample."""
    s = np.zeros(STATE_SIZE, dtype=np.int16)
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    path = np.zeros(4096, dtype=np.int64)
    reward = np.zeros(MAX_PLAYERS, dtype=np.float64)
    capacity = child.shape[0]
    for _ in range(iterations):
        determinize(obs, rng, s)
        node = 0
        depth = 0
        while s[S_PHASE] != PH_GAME_OVER and depth < 4095:
            legal_mask(s, mask)
            seat = s[S_TO_MOVE]
            unexpanded = 0
            for act in range(N_ACTIONS):
                if mask[act]:
                    ch = child[node, act]
                    if ch < 0:
                        unexpanded += 1
                    else:
                        avail[ch] += 1
            if unexpanded > 0:
                if n_nodes[0] >= capacity:
                    break
                k = _rng_below(rng, unexpanded)
                for act in range(N_ACTIONS):
                    if mask[act] and child[node, act] < 0:
                        if k == 0:
                            new = _new_node(child, visits, avail, value, mover, n_nodes, seat)
                            child[node, act] = new
                            apply_action(s, act)
                            depth += 1
                            path[depth] = new
                            break
                        k -= 1
                break
            best = -1
            best_u = -1.0
            for act in range(N_ACTIONS):
                if mask[act]:
                    ch = child[node, act]
                    u = value[ch] / visits[ch] + c_uct * np.sqrt(np.log(avail[ch]) / visits[ch])
                    if u > best_u:
                        best_u = u
                        best = act
            node = child[node, best]
            apply_action(s, best)
            depth += 1
            path[depth] = node
        _rollout_one(s, rng, mask)
        n = s[S_NUM_PLAYERS]
        winners = 0
        for q in range(n):
            winners += (s[S_WINNERS] >> q) & 1
        for q in range(n):
            reward[q] = ((s[S_WINNERS] >> q) & 1) / winners
        for d in range(1, depth + 1):
            nd = path[d]
            visits[nd] += 1
            value[nd] += reward[mover[nd]]
