"""The one text renderer of the table: ``render_view`` draws what one player knows (their
decoded observation) or what everybody knows (``public_view``).

It serves ``render_mode="ansi"``/``"human"`` (the public table, ``render_ansi``), ``bali play``
(the human's own view) and ``bali replay`` (either). Nothing here reads hidden information:
``public_view`` keeps of the true state only what every player knows (docs/rules.md section 5).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import engine as E
from .contract import final_result
from .engine.ids import CARD_NAMES, CARD_SHORT, CATEGORY_NAMES, DECISION_TEXT
from .view import ObservationView, decode_observation


def _cards(row: np.ndarray) -> str:
    parts = [f"{int(v)} {CARD_NAMES[k]}" for k, v in enumerate(row) if v]
    return ", ".join(parts) if parts else "-"


def _offerings(view: ObservationView, r: int) -> str:
    lo, hi, total = view.offerings_min[r], view.offerings_max[r], int(view.offerings_total[r])
    parts = []
    for c in range(E.N_CATEGORIES):
        a, b = int(lo[c]), int(hi[c])
        parts.append(f"{CATEGORY_NAMES[c]} {a}" if a == b else f"{CATEGORY_NAMES[c]} {a}-{b}")
    tail = "" if np.array_equal(lo, hi) else " (at least-at most)"
    return f"{total} cards: " + ", ".join(parts) + tail


def _market(view: ObservationView) -> list[str]:
    """The four columns side by side, in take order; ``<`` marks the card a take gets."""
    heads = [f"col {col}" + (" (demon)" if view.demon_column == col else "") for col in range(E.N_COLUMNS)]
    lines = [("Market  " + "".join(f"{h:<15}" for h in heads)).rstrip()]
    for j in range(E.COLUMN_SIZE):
        cells = [(CARD_SHORT[c[j]] if j < len(c) else "") + (" <" if j == 0 and c else "") for c in view.market]
        lines.append(("        " + "".join(f"{x:<15}" for x in cells)).rstrip())
    return lines


def render_view(view: ObservationView, seat: int | None, labels: list[str], final: dict | None = None) -> str:
    """The table as the player in absolute ``seat`` knows it, from their decoded observation
    ``view`` (relative seats are turned back into ``labels[absolute]``); ``seat=None`` for the
    public table (``public_view``). ``final`` (``contract.final_result``) adds the scores."""
    n = view.num_players
    me = 0 if seat is None else seat

    def name(rel: int) -> str:
        return labels[(me + rel) % n]

    variants = [v for v, on in (("oracle", view.oracle), ("demon", view.demon)) if on]
    who = "public table" if seat is None else f"you are player_{seat}"
    lines = [f"=== Bali, {n} players{' (' + ', '.join(variants) + ')' if variants else ''} | {who} ==="]
    if view.decision == "game_over":
        lines.append("--- game over ---")
    else:
        lines.append(f"Active: {name(view.active)} | to decide: {name(view.to_move)}: {DECISION_TEXT[view.decision]}")
    lines += _market(view)
    lines.append("Supply: " + ", ".join(f"{CATEGORY_NAMES[c]} {int(view.supply[c])}" for c in range(4))
                 + f" | deck: {view.deck_size} cards")
    known = ", ".join(f"{CATEGORY_NAMES[c]} {int(view.altar_known[c])}" for c in range(4) if view.altar_known[c])
    top = ", ".join(f"depth {d}: {CATEGORY_NAMES[int(c)] if c >= 0 else '?'}"
                    for d, c in enumerate(view.altar_top) if d < view.altar_size)
    altar = f"Altar: {view.altar_size} cards"
    if view.altar_size:
        altar += f" | known: {known or 'none'} | unknown: {view.altar_unknown} | top (0 = top): {top}"
    lines.append(altar)
    if view.decision == "oracle":
        if seat is not None and view.to_move == 0:
            window = ", ".join(f"depth {d}: {CATEGORY_NAMES[int(view.altar_top[d])] if view.altar_top[d] >= 0 else '?'}"
                               for d in range(view.oracle_window))
            lines.append(f"Oracle: you peek at the top {view.oracle_window} altar cards: {window} "
                         f"({view.peeks_owed} peek(s) owed, this one included)")
        else:
            lines.append(f"Oracle: {name(view.to_move)} peeks at the top {view.oracle_window} altar cards")
    if view.scored_type >= 0 and view.decision in ("shrine_reward", "farmer_choice"):
        bonus = " (majority bonus)" if view.scoring_bonus else ""
        what = "stones or VP" if view.decision == "shrine_reward" else "offering card(s)"
        lines.append(f"Scoring {CARD_NAMES[view.scored_type]}: {name(view.to_move)} receives "
                     f"{view.scoring_amount} {what}{bonus}")
    lines.append("Players (hands are public):")
    over = view.decision == "game_over"
    for q in range(n):
        r = (q - me) % n
        mark = ">" if not over and r == view.to_move else " "
        act = " [active]" if not over and r == view.active else ""
        line = f" {mark}{labels[q]}{act}: stones {int(view.stones[r])}, VP {int(view.vp_tokens[r])}"
        if final is not None:
            line += f" | score {final['final_scores'][q]}" + (" WINNER" if q in final["winners"] else "")
        lines.append(line)
        lines.append(f"     hand:      {_cards(view.hands[r])}")
        lines.append(f"     tableau:   {_cards(view.tableaus[r])}")
        lines.append(f"     offerings: {_offerings(view, r)}")
    return "\n".join(lines)


def describe_move(decision: str, action: int) -> str:
    """A move as the players who did not make it see it: the action's name, except that a
    face-down offering hides its category and an oracle take hides which card was taken
    (docs/rules.md section 5). ``decision`` is the decision's name (``ids.DECISION_NAMES``)."""
    if decision == "offer_face_down":
        return "offer a card face down"
    if decision == "oracle" and E.is_oracle_take(action):
        return "oracle: take a card"
    return E.ACTION_NAMES[action]


def public_view(s: np.ndarray) -> ObservationView:
    """What every player knows of the state ``s``, as an ``ObservationView`` from seat 0's
    chair: seat 0's observation with its private knowledge (its exact offering cards, the altar
    cards only it saw) replaced by the public knowledge."""
    obs = np.zeros(E.OBS_DIM, dtype=np.float32)
    mask = np.zeros(E.N_ACTIONS, dtype=np.int8)
    E.observe(s, 0, obs, mask)
    view = decode_observation(obs)
    v = E.view(s)
    n = view.num_players
    everyone = (1 << n) - 1
    top = int(s[E.S_ALTAR_LEN])
    known = np.zeros(E.N_CATEGORIES, dtype=np.int64)
    for i in range(top):
        if int(v.altar_known[i]) == everyone:
            known[int(v.altar[i])] += 1
    altar_top = np.full(E.ORACLE_WINDOW, -1, dtype=np.int64)
    for d in range(min(E.ORACLE_WINDOW, top)):
        i = top - 1 - d
        if int(v.altar_known[i]) == everyone:
            altar_top[d] = int(v.altar[i])
    lo, hi = view.offerings_min.copy(), view.offerings_max.copy()
    lo[0], hi[0] = v.known_min[0], v.known_max[0]
    return dataclasses.replace(view, offerings_min=lo, offerings_max=hi, altar_known=known,
                               altar_unknown=top - int(known.sum()), altar_top=altar_top)


def render_ansi(s: np.ndarray) -> str:
    """The public table of the state ``s`` as text (``render_mode="ansi"``); the scores once over."""
    n = int(s[E.S_NUM_PLAYERS])
    final = final_result(s) if int(s[E.S_PHASE]) == E.PH_GAME_OVER else None
    return render_view(public_view(s), None, [f"player_{q}" for q in range(n)], final)
