"""A compact text picture of the Bali table (public information only: no deck order, no altar
categories, offering cards shown as counts), used by ``render_mode="ansi"`` and ``"human"``."""

from __future__ import annotations

import numpy as np

from . import core as C
from .contract import CATEGORY_NAMES

_SHORT = ("Stone", "Priest", "Shrine", "Rice", "Peanut", "Banana", "Chili")
_CAT_SHORT = ("rice", "pean", "bana", "chil")
_DECISION_TEXT = {
    "take_offering": "phase 1: take an offering card or pass",
    "play": "phase 2a: play cards",
    "offer_face_up": "phase 2b: offer a card face up",
    "offer_face_down": "phase 2b: offer own card face down",
    "offer_supply": "phase 2b: offer a supply card",
    "refill": "phase 3: take a market card",
    "oracle": "oracle: take an altar card or none",
    "shrine_reward": "phase 4: shrine reward, stones or VP",
    "farmer_choice": "phase 4: scored category empty, choose another",
    "game_over": "game over",
}


def _counts(row: np.ndarray) -> str:
    parts = [f"{int(v)} {_SHORT[k]}" for k, v in enumerate(row) if v]
    return ", ".join(parts) if parts else "-"


def render_ansi(s: np.ndarray) -> str:
    """Return the table as text: header, market columns, altar/supply/deck, one line per seat."""
    n = int(s[C.S_NUM_PLAYERS])
    over = int(s[C.S_PHASE]) == C.PH_GAME_OVER
    variants = [v for v, on in (("oracle", s[C.S_ORACLE]), ("demon", s[C.S_DEMON])) if on]
    decision = C.DECISION_NAMES[C._decision_index(s)]
    who = "" if over else f"player_{int(s[C.S_TO_MOVE])} to decide, "
    lines = [
        f"Bali, {n} players{', ' + '+'.join(variants) if variants else ''} | turn {int(s[C.S_TURN]) + 1}, "
        f"active player_{int(s[C.S_ACTIVE])} | {who}{_DECISION_TEXT[decision]}"
    ]
    heads, cols = [], []
    for col in range(4):
        demon = " (demon)" if s[C.S_DEMON] and s[C.S_DEMON_COL] == col else ""
        heads.append(f"col {col}{demon}")
        pos, length = int(s[C.S_COL_POS + col]), int(s[C.S_COL_LEN + col])
        cols.append([_SHORT[int(s[C.S_MARKET + 4 * col + j])] for j in range(pos, length)])
    lines.append("Market  " + "".join(f"{h:<15}" for h in heads))
    for j in range(4):
        cells = [(c[j] if j < len(c) else "") + (" <" if j == 0 and c else "") for c in cols]
        lines.append("        " + "".join(f"{x:<15}" for x in cells))
    L = int(s[C.S_ALTAR_LEN])
    if L == 0:
        top = "empty"
    elif s[C.S_ALTAR_KNOWN + L - 1] == (1 << n) - 1:
        top = f"top {CATEGORY_NAMES[int(s[C.S_ALTAR + L - 1])]} (face up)"
    else:
        top = "top face down"
    supply = " ".join(f"{_CAT_SHORT[c]} {int(s[C.S_SUPPLY + c])}" for c in range(4))
    deck = int(s[C.S_DECK_LEN] - s[C.S_DECK_POS])
    lines.append(f"Altar {L} cards, {top} | Supply {supply} | Deck {deck}")
    if s[C.S_PHASE] == C.PH_ORACLE:
        lines.append(f"Oracle: player_{int(s[C.S_ACTIVE])} peeks at the top {int(s[C.S_WINDOW])} altar cards")
    for q in range(n):
        mark = ">" if (not over and q == s[C.S_TO_MOVE]) else " "
        hand = _counts(s[C.S_HANDS + q * 7 : C.S_HANDS + q * 7 + 7])
        tab = _counts(s[C.S_TABLEAUS + q * 7 : C.S_TABLEAUS + q * 7 + 7])
        offer = int(s[C.S_OFFERINGS + q * 4 : C.S_OFFERINGS + q * 4 + 4].sum())
        line = (
            f"{mark}player_{q}: stones {int(s[C.S_STONES + q]):>2} VP {int(s[C.S_VP + q]):>2} "
            f"offerings {offer:>2} | hand {hand} | tableau {tab}"
        )
        if over:
            won = " WINNER" if int(s[C.S_WINNERS]) >> q & 1 else ""
            line += f" | score {int(s[C.S_SCORES + q])}{won}"
        lines.append(line)
    return "\n".join(lines)
