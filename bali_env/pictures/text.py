"""The one text renderer of the table: ``render_view`` draws what one player knows (their
decoded observation) or what everybody knows (``public_view``).

It serves ``render_mode="ansi"``/``"human"`` (the public table, ``render_ansi``), ``bali play``
(the human's own view) and ``bali replay`` (either). Nothing here reads hidden information:
``public_view`` keeps of the true state only what every player knows (docs/rules.md section 5),
and once the game is over what the final scoring shows everyone (``scored_view``). A single
legal option comes with why it is the only one (``only_option_reason``).
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable

import numpy as np

from bali_env import engine as E
from bali_env.engine.contract import final_result
from bali_env.engine.ids import CARD_NAMES, CARD_SHORT, CATEGORY_NAMES, DECISION_TEXT
from bali_env.engine.state import absolute_seat, relative_seat
from bali_env.engine.decode import ObservationView, decode_observation


WIDTH = 80  #: every line ``bali play`` and ``bali replay`` print fits in this many columns


def fit(text: str, width: int = WIDTH) -> str:
    """``text`` with every line longer than ``width`` wrapped, continuation lines indented."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * min(len(line) - len(line.lstrip()) + 4, 12)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False) or [""]
    return "\n".join(out)


def _cards(row: np.ndarray) -> str:
    """Cards by short name with counts above 1: ``2 Rice, Stone`` (farmers by their category)."""
    parts = [(f"{int(v)} " if v > 1 else "") + CARD_SHORT[k] for k, v in enumerate(row) if v]
    return ", ".join(parts) if parts else "-"


def _offerings(view: ObservationView, r: int) -> str:
    lo, hi, total = view.offerings_min[r], view.offerings_max[r], int(view.offerings_total[r])
    parts = []
    for c in range(E.N_CATEGORIES):
        a, b = int(lo[c]), int(hi[c])
        if b:
            parts.append(f"{CATEGORY_NAMES[c]} {a}" if a == b else f"{CATEGORY_NAMES[c]} {a}-{b}")
    return f"{total}" + (": " + ", ".join(parts) if parts else "")


def _market(view: ObservationView) -> list[str]:
    """One line per column, in take order; ``<`` marks the card a take gets."""
    lines = []
    for col, cards in enumerate(view.market):
        head = ("Market " if col == 0 else "       ") + f"col {col}" + (" (demon)" if view.demon_column == col else "")
        body = ", ".join(CARD_SHORT[c] + (" <" if j == 0 else "") for j, c in enumerate(cards)) or "(empty)"
        lines.append(f"{head}: {body}")
    return lines


def render_view(view: ObservationView, seat: int | None, labels: list[str], final: dict | None = None) -> str:
    """The table as the player in absolute ``seat`` knows it, from their decoded observation
    ``view`` (relative seats are turned back into ``labels[absolute]``); ``seat=None`` for the
    public table (``public_view``). ``final`` (``contract.final_result``) adds the scores. Lines
    fit in ``WIDTH`` columns; a 4-player table takes about 20 lines."""
    n = view.num_players
    me = 0 if seat is None else seat

    def name(rel: int) -> str:
        return labels[absolute_seat(me, rel, n)]

    variants = [v for v, on in (("oracle", view.oracle), ("demon", view.demon)) if on]
    who = "public table" if seat is None else f"you are player_{seat}"
    lines = [f"=== Bali, {n} players{' (' + ', '.join(variants) + ')' if variants else ''} | {who} ==="]
    status, details = pending_decision(view, seat, name)
    lines.append(status)
    lines += _market(view)
    lines.append("Supply: " + ", ".join(f"{CATEGORY_NAMES[c]} {int(view.supply[c])}" for c in range(4))
                 + f" | deck: {view.deck_size} | altar: {view.altar_size}")
    lines += _altar(view)
    if seat is None or view.to_move != 0:  # the mover's own menu says the rest
        lines += details
    for q in range(n):
        lines += _seat(view, q, relative_seat(me, q, n), labels, final)
    return fit("\n".join(lines))


def _altar(view: ObservationView) -> list[str]:
    """The altar's line (none while it is empty): counted by category at the final scoring, else
    the known cards by category, the unknown ones and the top cards as known."""
    if view.altar_size and view.decision == "game_over" and not view.altar_unknown:
        return ["Altar, counted at the final scoring: "
                + ", ".join(f"{CATEGORY_NAMES[c]} {int(view.altar_known[c])}" for c in range(4))]
    if not view.altar_size:
        return []
    known = [f"{CATEGORY_NAMES[c]} {int(view.altar_known[c])}" for c in range(4) if view.altar_known[c]]
    top = ", ".join(CATEGORY_NAMES[int(c)] if c >= 0 else "?"
                    for d, c in enumerate(view.altar_top) if d < view.altar_size)
    return [f"Altar: {', '.join([*known, f'{view.altar_unknown} unknown'])} | top: {top}"]


def _seat(view: ObservationView, q: int, r: int, labels: list[str], final: dict | None) -> list[str]:
    """The lines of absolute seat ``q`` (relative seat ``r`` in the view): who decides and who is
    active, stones, VP, hand (the score at the end), offerings and tableau."""
    over = view.decision == "game_over"
    mark = ">" if not over and r == view.to_move else " "
    act = " [active]" if not over and r == view.active else ""
    line = f" {mark}{labels[q]}{act}: stones {int(view.stones[r])}, VP {int(view.vp_tokens[r])}"
    if final is not None:
        line += f" | score {final['final_scores'][q]}" + (" WINNER" if q in final["winners"] else "")
        lines = [line, f"     hand: {_cards(view.hands[r])}"]
    else:
        lines = [line + f", hand: {_cards(view.hands[r])}"]
    return [*lines, f"     offerings {_offerings(view, r)}", f"     tableau: {_cards(view.tableaus[r])}"]


def pending_decision(view: ObservationView, seat: int | None, name: Callable[[int], str]) -> tuple[str, list[str]]:
    """The decision being taken, in words, as the viewer in absolute ``seat`` (None: the public)
    knows it: a status line (``You: phase 2a: play cards from hand`` or ``To decide: player_2:
    ...``, ``--- game over ---`` at the end) and the details of an oracle peek or a scoring
    reward (``player_2 peeks at the top 3 altar cards``). ``name(rel)`` names a relative seat.
    One copy for the text table, the SVG picture and the web app."""
    if view.decision == "game_over":
        return "--- game over ---", []
    mine = seat is not None and view.to_move == 0
    status = f"{'You' if mine else 'To decide: ' + name(view.to_move)}: {DECISION_TEXT[view.decision]}"
    if mine and view.decision == "oracle":
        status += f" ({view.peeks_owed} peek{'s' if view.peeks_owed > 1 else ''} left)"
    details = []
    if view.decision == "oracle":
        details.append(f"Oracle: {name(view.to_move)} peeks at the top {view.oracle_window} altar cards")
    if view.scored_type >= 0 and view.decision in ("shrine_reward", "farmer_choice"):
        bonus = " (majority bonus)" if view.scoring_bonus else ""
        what = "stones or VP" if view.decision == "shrine_reward" else "offering card(s)"
        details.append(f"Scoring {CARD_NAMES[view.scored_type]}: {name(view.to_move)} receives "
                       f"{view.scoring_amount} {what}{bonus}")
    return status, details


def option_text(view: ObservationView, action: int) -> str:
    """A legal action as the player to move sees it in a menu: its name plus what it costs or
    gives, from their own view (prices from the engine's rules): ``take rice (4 stones)``,
    ``take column 2: Shrine``, ``oracle: take depth 1 (rice)``..."""
    name = E.ACTION_NAMES[action]
    if E.A_TAKE_OFFERING <= action < E.A_TAKE_OFFERING + E.N_CATEGORIES:
        price = int(E.offering_price.py_func(int(view.tableaus[0][E.FARMER + action - E.A_TAKE_OFFERING])))
        return f"{name} ({_stones(price)})"
    if action == E.A_PLAY_SHRINE:
        return f"{name} ({_stones(E.SHRINE_COST)})"
    if E.A_PLAY_FARMERS <= action < E.A_PLAY_FARMERS + 3 * E.N_CATEGORIES:
        return f"{name} ({_stones(int(E.farmers_price.py_func((action - E.A_PLAY_FARMERS) % 3 + 1)))})"
    if E.A_REFILL <= action < E.A_REFILL + E.N_COLUMNS and view.market[action - E.A_REFILL]:
        return f"{name}: {CARD_SHORT[view.market[action - E.A_REFILL][0]]}"
    if E.is_oracle_take(action) and view.altar_top[action - E.A_ORACLE_TAKE] >= 0:
        return f"{name.removeprefix('oracle: ')} ({CATEGORY_NAMES[int(view.altar_top[action - E.A_ORACLE_TAKE])]})"
    if action == E.A_ORACLE_NONE:
        return name.removeprefix("oracle: ")
    if view.decision == "offer_face_down":
        return f"{name} (face down)"
    if action in (E.A_SHRINE_STONES, E.A_SHRINE_VP):
        return f"{name} (+{view.scoring_amount}{', majority bonus included' if view.scoring_bonus else ''})"
    if E.farmer_choice_category.py_func(action) >= 0:
        return f"{name} (scoring {CARD_NAMES[view.scored_type]}, +{view.scoring_amount})"
    return name


def only_option_reason(view: ObservationView, action: int) -> str:
    """Why ``action`` is the only legal move of the player to move (their own ``view``), in words:
    ``you cannot afford a take: the cheapest costs 5 stones and you have 2``; where the reason
    takes more than the view's counts to say, ``this is your only legal move``."""
    stones = int(view.stones[0])
    if view.decision == "take_offering" and action == E.A_PASS:
        prices = [int(E.offering_price.py_func(int(view.tableaus[0][E.FARMER + c])))
                  for c in range(E.N_CATEGORIES) if view.supply[c] > 0]
        if not prices:
            return "the supply is empty: there is no offering card to take, so you pass"
        return (f"you cannot afford a take: the cheapest costs {_stones(min(prices))} "
                f"({E.OFFERING_BASE_PRICE} stones minus your farmers of that category) and you have "
                f"{_count(stones)}, so you pass")
    shrine = _stones(E.SHRINE_COST)
    if action == E.A_DISCARD_SHRINE:
        return (f"your hand holds only shrines and a shrine costs {shrine} (you have {_count(stones)}): "
                "you must discard one")
    if view.decision == "play" and view.hands[0][E.SHRINE] and stones < E.SHRINE_COST:
        return f"it is the only card you can play: a shrine costs {shrine} and you have {_count(stones)}"
    if view.decision in ("offer_face_up", "offer_face_down"):
        return "it is the only category of offering card you hold"
    if view.decision in ("offer_supply", "farmer_choice"):
        return "it is the only category left in the supply"
    if view.decision == "refill":
        return "it is the only column you may take from" + (" (the demon blocks its column)" if view.demon else "")
    return "this is your only legal move"


def _stones(n: int) -> str:
    return "free" if n == 0 else _count(n)


def _count(n: int) -> str:
    """``n stones`` (what a player has: 0 stones, 1 stone, 2 stones)."""
    return f"{n} stone" + ("" if n == 1 else "s")


def options_text(view: ObservationView, legal: list[int], width: int = WIDTH) -> str:
    """The numbered menu of the legal actions (``option_text``), packed into lines of ``width``."""
    lines, line = [], "Options:"
    for k, a in enumerate(legal, 1):
        item = f"{k}) {option_text(view, a)}"
        if len(line) + 3 + len(item) > width and line.strip():
            lines.append(line)
            line = "        "
        line += ("   " if line.strip() not in ("", "Options:") else " ") + item
    lines.append(line)
    return fit("\n".join(lines), width)


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
    v = E.state_blocks(s)
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
    view = dataclasses.replace(view, offerings_min=lo, offerings_max=hi, altar_known=known,
                               altar_unknown=top - int(known.sum()), altar_top=altar_top)
    return scored_view(view, s, 0)


def scored_view(view: ObservationView, s: np.ndarray, seat: int) -> ObservationView:
    """``view`` (seen from absolute ``seat``) with what the final scoring shows everyone once the
    game in ``s`` is over (docs/rules.md section 4): the altar is counted, so the category of
    every altar card (not their order: the top row keeps only what was known), and every player's
    offering cards are scored, so their exact counts. Before the end, ``view`` unchanged."""
    if int(s[E.S_PHASE]) != E.PH_GAME_OVER:
        return view
    final = final_result(s)
    n = view.num_players
    exact = np.array([final["offering_cards"][absolute_seat(seat, r, n)] for r in range(n)], dtype=np.int64)
    lo, hi = view.offerings_min.copy(), view.offerings_max.copy()
    lo[:n], hi[:n] = exact, exact
    return dataclasses.replace(view, offerings_min=lo, offerings_max=hi,
                               altar_known=np.asarray(final["altar_counts"], dtype=np.int64), altar_unknown=0)


def revealed_view(s: np.ndarray) -> ObservationView:
    """Everything of the state ``s`` but the deck order, as an ``ObservationView`` from seat 0's
    chair: every seat's exact offering cards and the category of every altar card. For looking
    back at a finished game (``bali replay --reveal``), never for a player during one."""
    view = public_view(s)
    v = E.state_blocks(s)
    n, top = view.num_players, int(s[E.S_ALTAR_LEN])
    exact = v.offerings[:n].astype(np.int64)
    altar = v.altar[:top][::-1].astype(np.int64)  # top first
    altar_top = np.full(E.ORACLE_WINDOW, -1, dtype=np.int64)
    altar_top[: min(E.ORACLE_WINDOW, top)] = altar[: E.ORACLE_WINDOW]
    return dataclasses.replace(view, offerings_min=exact, offerings_max=exact.copy(),
                               altar_known=np.bincount(altar, minlength=E.N_CATEGORIES)[: E.N_CATEGORIES],
                               altar_unknown=0, altar_top=altar_top)


def render_ansi(s: np.ndarray) -> str:
    """The public table of the state ``s`` as text (``render_mode="ansi"``); the scores once over."""
    n = int(s[E.S_NUM_PLAYERS])
    final = final_result(s) if int(s[E.S_PHASE]) == E.PH_GAME_OVER else None
    return render_view(public_view(s), None, [f"player_{q}" for q in range(n)], final)
