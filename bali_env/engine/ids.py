"""Ids, constants and names of the game (docs/rules.md sections 1, 3, 4 and 6).

Everything that names a card, a category, an action, a phase or a decision lives here, once:
the kernels use the ids, and every front end (renderers, ``bali play``, replays, docs, agents)
uses the names. Plain Python values: Numba reads them as compile-time constants.
"""

from __future__ import annotations

import numpy as np

# ----------------------------------------------------------------------------- cards (section 1)
STONECUTTER, PRIEST, SHRINE = 0, 1, 2
FARMER = 3  #: the farmer of category c is card id FARMER + c
ORACLE = 7  #: Oracle variant only; never in a hand or a tableau
N_CARD_TYPES = 7  #: card ids 0..6 can be in hands and tableaus
N_CARD_IDS = 8  #: card ids 0..7 can be in the deck
N_CATEGORIES = 4  #: rice, peanuts, bananas, chilies
MIN_PLAYERS = 2
MAX_PLAYERS = 4
N_PLAYER_COUNTS = MAX_PLAYERS - MIN_PLAYERS + 1  #: 2, 3 or 4 players
N_COLUMNS = 4  #: market columns
COLUMN_SIZE = 4  #: cards dealt into a column
DECK_COUNTS = np.array([12, 9, 9, 5, 5, 5, 5, 8], dtype=np.int64)  #: copies per card id (7: oracle)
BASE_DECK_SIZE = 50
ORACLE_DECK_SIZE = 58
MARKET_SIZE = N_COLUMNS * COLUMN_SIZE
SUPPLY_PER_CATEGORY = 25
ALTAR_MAX = 52  #: 4 starting cards + 9 shrines x at most 5 cards = 49
ORACLE_WINDOW = 4  #: an oracle peek shows at most the top 4 altar cards

# ----------------------------------------------------------------------------- prices and points
OFFERING_BASE_PRICE = 5  #: phase 1 price: max(0, 5 - farmers of that category in the tableau)
SHRINE_COST = 7  #: stones to play a shrine
SHRINE_POINTS = 4  #: final score per shrine in the tableau
STONES_PER_POINT = 5  #: final score: 1 point per full 5 stones
MAJORITY_MIN = 2  #: the majority bonus needs strictly more than every other player and at least 2
HAND_SIZE = 3  #: phase 3 refills the hand to 3 cards
START_STONES = 2  #: seat k starts with 2 + k stones

# ----------------------------------------------------------------------------- actions (section 6)
N_ACTIONS = 44
A_TAKE_OFFERING = 0  #: 0-3: take an offering card of category c
A_PASS = 4
A_PLAY_STONECUTTER = 5
A_PLAY_PRIEST = 6
A_PLAY_SHRINE = 7
A_PLAY_FARMERS = 8  #: 8 + 3c + (k - 1): play k farmers of category c
A_DISCARD_SHRINE = 20
A_OFFER_OWN = 21  #: 21-24
A_OFFER_SUPPLY = 25  #: 25-28
A_REFILL = 29  #: 29-32: take from column 0-3
A_ORACLE_TAKE = 33  #: 33-36: take the altar card at depth 0-3 (0 = top)
A_ORACLE_NONE = 37
A_SHRINE_STONES = 38
A_SHRINE_VP = 39
A_FARMER_CHOICE = 40  #: 40-43


def play_farmers_action(c: int, k: int) -> int:
    """The action id that plays ``k`` (1..3) farmers of category ``c``."""
    return A_PLAY_FARMERS + 3 * c + k - 1


# ----------------------------------------------------------------------------- phases (section 8)
PH_TAKE_OFFERING = 0
PH_PLAY = 1
PH_OFFER_OWN = 2
PH_OFFER_SUPPLY = 3
PH_REFILL = 4
PH_ORACLE = 5
PH_SHRINE_REWARD = 6
PH_FARMER_CHOICE = 7
PH_GAME_OVER = 8

# ----------------------------------------------------------------------------- decisions (observation)
# A decision is a phase as the mover sees it: phase 2b's own offering is face up for the others
# and face down for the active player.
D_TAKE_OFFERING, D_PLAY, D_OFFER_FACE_UP, D_OFFER_FACE_DOWN, D_OFFER_SUPPLY = 0, 1, 2, 3, 4
D_REFILL, D_ORACLE, D_SHRINE_REWARD, D_FARMER_CHOICE, D_GAME_OVER = 5, 6, 7, 8, 9
N_DECISIONS = 10

# ----------------------------------------------------------------------------- names
CATEGORY_NAMES = ("rice", "peanuts", "bananas", "chilies")
CARD_NAMES = ("stonecutter", "priest", "shrine", "rice farmer", "peanut farmer", "banana farmer",
              "chili farmer", "oracle")
#: card names as identifiers (observation slot names)
CARD_KEYS = ("stonecutter", "priest", "shrine", "rice_farmer", "peanut_farmer", "banana_farmer",
             "chili_farmer", "oracle")
CARD_SHORT = ("Stone", "Priest", "Shrine", "Rice", "Peanut", "Banana", "Chili", "Oracle")
PHASE_NAMES = ("take_offering", "play", "offer_own", "offer_supply", "refill", "oracle", "shrine_reward",
               "farmer_choice", "game_over")
DECISION_NAMES = ("take_offering", "play", "offer_face_up", "offer_face_down", "offer_supply", "refill",
                  "oracle", "shrine_reward", "farmer_choice", "game_over")
#: what each decision asks, for people (renderers, ``bali play``, replays)
DECISION_TEXT = {
    "take_offering": "phase 1: take an offering card (pay stones) or pass",
    "play": "phase 2a: play cards from hand",
    "offer_face_up": "phase 2b: put an offering card face up on the altar",
    "offer_face_down": "phase 2b: put an offering card FACE DOWN on the altar",
    "offer_supply": "phase 2b: put a supply card face up on the altar",
    "refill": "phase 3: take the first card of a market column",
    "oracle": "oracle: take one of the peeked altar cards, or none",
    "shrine_reward": "phase 4: shrine scoring, take stones or VP",
    "farmer_choice": "phase 4: the scored category is empty, choose another",
    "game_over": "game over",
}
TIEBREAK_NAMES = ("score", "shrines", "stones", "shared")  #: what decided the winner (section 4)


def _action_names() -> tuple[str, ...]:
    names = [f"take {CATEGORY_NAMES[c]}" for c in range(N_CATEGORIES)]
    names.append("pass")
    names += ["play stonecutter", "play priest", "play shrine"]
    for c in range(N_CATEGORIES):
        farmer = CARD_NAMES[FARMER + c]
        names += [f"play 1 {farmer}"] + [f"play {k} {farmer}s" for k in (2, 3)]
    names.append("discard shrine")
    names += [f"offer own {CATEGORY_NAMES[c]}" for c in range(N_CATEGORIES)]
    names += [f"offer supply {CATEGORY_NAMES[c]}" for c in range(N_CATEGORIES)]
    names += [f"take column {col}" for col in range(N_COLUMNS)]
    names += [f"oracle: take depth {d}" for d in range(ORACLE_WINDOW)]
    names.append("oracle: take none")
    names += ["shrine reward: stones", "shrine reward: VP"]
    names += [f"farmer reward: take {CATEGORY_NAMES[c]}" for c in range(N_CATEGORIES)]
    assert len(names) == N_ACTIONS
    return tuple(names)


ACTION_NAMES = _action_names()  #: e.g. ``ACTION_NAMES[9] == "play 2 rice farmers"``


def is_oracle_take(action: int) -> bool:
    """True for the actions that take a card during an oracle peek (hidden from the others)."""
    return A_ORACLE_TAKE <= action < A_ORACLE_TAKE + ORACLE_WINDOW

_NOT_EXPORTED = ('annotations', 'np')
__all__ = [name for name in list(globals()) if not name.startswith("_") and name not in _NOT_EXPORTED]
