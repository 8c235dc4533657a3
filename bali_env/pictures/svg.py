"""The picture of the table: ``render_svg(view)`` draws one 1280 x 720 SVG from an
``ObservationView``, a seat's decoded observation or the public view (``text.public_view``),
the same views the text renderer draws. It reads nothing else, so it can show only what that
view knows.

What it shows: the header (player count, variants, whose view), the pending decision in words
(and the oracle window or scoring reward it is about), the last move and what it caused, the
market column by column in take order (the first card of each column is the one a take gets;
the demon's column is marked), the supply, the deck (size, oracles left), the altar as known
(its size, the top four cards where known, the known cards by category and the unknown ones),
and per seat: stones, VP tokens, tableau, hand, offering cards (an exact count, or ``a-b``
where the view only bounds them), who is active and who decides; at the end, the scores, the
winner(s) and what decided. ``table_parts`` gives the same picture as a list of groups (the
header, the status, the market, the supply and altar, one per seat) so that an HTML replay can
store a group once for all the frames that repeat it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from html import escape
from typing import Any

from bali_env.engine.ids import COLUMN_SIZE, N_CARD_TYPES, N_CATEGORIES, ORACLE, SHRINE_POINTS, STONES_PER_POINT
from bali_env.engine.state import absolute_seat, relative_seat
from bali_env.pictures.text import pending_decision
from bali_env.engine.decode import ObservationView
from bali_env.pictures.style import DEFS, EDGE, FONT, HEADER, HIGHLIGHT, INK, MUTED, PANEL, PAPER

WIDTH, HEIGHT = 1280, 720  #: the picture's size in SVG units (and pixels at scale 1)
#: every picture starts with this: the root element and the table's colour
SVG_OPEN = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
            f'height="{HEIGHT}" font-family="{FONT}"><rect width="{WIDTH}" height="{HEIGHT}" fill="{PAPER}"/>')
SVG_CLOSE = "</svg>"

#: one element of a picture: a leaf (``<rect/>``, ``<use/>``, ``<circle/>``, ``<text>..</text>``), a
#: group's start or end, or any other tag (``svg_elements``)
_ELEMENT = re.compile(r"<(?:rect|circle|use)\b[^>]*/>|<text\b[^>]*>[^<]*</text>|<[^>]+>")


def svg_elements(part: str) -> list[str]:
    """A group of ``table_parts`` split into its elements, in order (``"".join`` gives it back)."""
    elements = _ELEMENT.findall(part)
    if sum(map(len, elements)) != len(part):
        raise ValueError("not a group of table_parts: text outside its elements")
    return elements


_DECIDED = {
    "score": "",
    "shrines": "tie on points, broken by shrines",
    "stones": "tie on points and shrines, broken by stones",
    "shared": "tie on points, shrines and stones: shared win",
}


def _t(x: float, y: float, text: str, size: float = 16, weight: str = "normal", fill: str = INK,
       anchor: str = "start") -> str:
    """A line of text (escaped)."""
    bold = ' font-weight="bold"' if weight == "bold" else ""
    end = f' text-anchor="{anchor}"' if anchor != "start" else ""
    return f'<text x="{x:g}" y="{y:g}" font-size="{size:g}"{bold}{end} fill="{fill}">{escape(text)}</text>'


#: advance widths of the bundled DejaVu Sans (``raster.FONT_FILES``), in hundredths of the font
#: size, for the characters 32..126 (regular, bold); other characters count as one font size
_ADVANCE = {
    False: (32, 40, 46, 84, 64, 95, 78, 27, 39, 39, 50, 84, 32, 36, 32, 34, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
            34, 34, 84, 84, 84, 53, 100, 68, 69, 70, 77, 63, 58, 77, 75, 29, 29, 66, 56, 86, 75, 79, 60, 79, 69, 63,
            61, 73, 68, 99, 69, 61, 69, 39, 34, 39, 84, 50, 50, 61, 63, 55, 63, 62, 35, 63, 63, 28, 28, 58, 28, 97,
            63, 61, 63, 63, 41, 52, 39, 63, 59, 82, 59, 59, 52, 64, 34, 64, 84),
    True: (35, 46, 52, 84, 70, 100, 87, 31, 46, 46, 52, 84, 38, 42, 38, 37, 70, 70, 70, 70, 70, 70, 70, 70, 70, 70,
           40, 40, 84, 84, 84, 58, 100, 77, 76, 73, 83, 68, 68, 82, 84, 37, 37, 77, 64, 100, 84, 85, 73, 85, 77, 72,
           68, 81, 77, 110, 77, 72, 73, 46, 37, 46, 84, 50, 50, 67, 72, 59, 72, 68, 44, 72, 71, 34, 34, 67, 34, 104,
           71, 69, 72, 72, 49, 60, 48, 71, 65, 92, 65, 65, 58, 71, 37, 71, 84),
}
_OTHER_ADVANCE = {"\N{EN DASH}": 50, "\N{MIDDLE DOT}": 35, "\N{MULTIPLICATION SIGN}": 84}


def text_width(text: str, size: float, bold: bool = False) -> float:
    """How wide ``text`` is drawn in the bundled font at ``size`` (SVG units; kerning aside)."""
    table = _ADVANCE[bold]
    return size / 100 * sum(table[o - 32] if 32 <= (o := ord(ch)) < 127 else _OTHER_ADVANCE.get(ch, 100)
                            for ch in text)


def _fit(text: str, width: float, size: float, bold: bool = False, smallest: float | None = None) -> tuple[str, float]:
    """``text`` and a font size at which it fits in ``width``: ``size``, else smaller down to
    ``smallest`` (default: 80% of ``size``), else cut with an ellipsis at ``smallest``."""
    low = smallest if smallest is not None else 0.8 * size
    w = text_width(text, size, bold)
    if w <= width:
        return text, size
    if w * low / size <= width:
        return text, max(low, math.floor(10 * size * width / w) / 10)
    while len(text) > 1 and text_width(text + "\N{HORIZONTAL ELLIPSIS}", low, bold) > width:
        text = text[:-1]
    return text.rstrip() + "\N{HORIZONTAL ELLIPSIS}", low


def _wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """``text`` broken at spaces into lines no wider than ``width`` (a word wider than that stays
    whole on its own line)."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if line and text_width(candidate, size, bold) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    return [*lines, line] if line or not lines else lines


def _use(symbol: str, x: float, y: float, w: float, h: float) -> str:
    return f'<use href="#{symbol}" x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}"/>'


def _panel(x: float, y: float, w: float, h: float, fill: str = PANEL, stroke: str = EDGE, width: float = 1.5) -> str:
    return (f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="10" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{width:g}"/>')


def _badge(x: float, y: float, text: str, fill: str = INK, ink: str = "#ffffff", size: float = 13) -> str:
    """A pill with ``text``, its left end at ``x``, its baseline near ``y``; returns the markup.
    Its width is estimated from the text (``_badge_width``)."""
    w = _badge_width(text, size)
    return (f'<rect x="{x:g}" y="{y - size - 1:g}" width="{w:g}" height="{size + 8:g}" rx="{(size + 8) / 2:g}" '
            f'fill="{fill}"/>' + _t(x + w / 2, y + 1, text, size, "bold", ink, "middle"))


def _badge_width(text: str, size: float = 13) -> float:
    return text_width(text, size, True) + 16


def _range(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}\N{EN DASH}{hi}"


# ---------------------------------------------------------------------------- the groups
def _header(view: ObservationView, viewpoint: str, caption: str | None) -> str:
    variants = [v for v, on in (("Oracle", view.oracle), ("Demon", view.demon)) if on]
    config = f"{view.num_players} players" + "".join(f" \N{MIDDLE DOT} {v}" for v in variants)
    parts = [f'<rect width="{WIDTH}" height="52" fill="{HEADER}"/>',
             _t(20, 36, "Bali", 27, "bold", "#ffffff"), _t(96, 34, config, 17, fill="#d5e3d8")]
    if caption:
        parts.append(_t(640, 34, *_fit(caption, 300, 16), fill="#d5e3d8", anchor="middle"))
    pill, size = _fit(viewpoint, 330, 15, True, smallest=12)
    w = _badge_width(pill, size)
    parts.append(_badge(WIDTH - 20 - w, 32, pill, "#f3e9d2", HEADER, size))
    return '<g id="bali-header">' + "".join(parts) + "</g>"


def _status(view: ObservationView, seat: int | None, name: Any, final: dict[str, Any] | None,
            notes: Sequence[str]) -> str:
    status, details = _status_words(view, seat, name, final)
    room = WIDTH - 16 - 14 - 30
    text, size = _fit(status, room, 20, True)
    lines = [_t(30, 82, text, size, "bold")]
    rows = [(row, INK) for d in details for row in _wrap(d, room, 15)]
    rows += [(row, MUTED) for n in notes for row in _wrap(n, room, 15)]
    for k, (row, fill) in enumerate(rows[:3]):
        if k == 2 and len(rows) > 3:
            row = _fit(row + " " + " ".join(r for r, _ in rows[3:]), room, 15, smallest=15)[0]
        lines.append(_t(30, 104 + 19.5 * k, row, 15, fill=fill))
    return '<g id="bali-status">' + _panel(16, 60, WIDTH - 32, 88) + "".join(lines) + "</g>"


def _status_words(view: ObservationView, seat: int | None, name: Any,
                  final: dict[str, Any] | None) -> tuple[str, list[str]]:
    """The status panel's headline and its detail lines: the pending decision, or at the end
    the winner(s) and what decided."""
    status, details = pending_decision(view, seat, name)
    if final is not None:
        me = 0 if seat is None else seat
        winners = [name(relative_seat(me, q, view.num_players)) for q in final["winners"]]
        best = max(final["final_scores"])
        status = (f"Game over \N{EM DASH} winner: {winners[0]} with {best} points" if len(winners) == 1 else
                  f"Game over \N{EM DASH} shared win: {' and '.join(winners)} with {best} points")
        return status, [_DECIDED[final["decided_by"]]] if _DECIDED[final["decided_by"]] else []
    if view.decision == "game_over":
        return "Game over", details
    return "\N{BLACK RIGHT-POINTING TRIANGLE} " + status, details


def _market(view: ObservationView) -> str:
    x0, y0 = 16, 156
    parts = [_panel(x0, y0, 600, 330), _t(x0 + 14, y0 + 26, "Market", 18, "bold"),
             _t(x0 + 96, y0 + 26, "each column in take order: the top card is the one a take gets", 13, fill=MUTED)]
    for col in range(4):
        x = x0 + 14 + col * 146
        head = f"column {col}"
        parts.append(_t(x + 4, y0 + 56, head, 14, "bold", MUTED))
        if view.demon_column == col:
            parts.append(_use("demon", x + 90, y0 + 33, 30, 30))
        cards = view.market[col]
        for j in range(COLUMN_SIZE):
            y = y0 + 66 + j * 64
            if j < len(cards):
                parts.append(_use(f"c{cards[j]}", x, y, 120, 60))
                if j == 0:
                    parts.append(f'<rect x="{x - 3}" y="{y - 3}" width="126" height="66" rx="9" fill="none" '
                                 f'stroke="{INK}" stroke-width="3"/>')
            elif j == 0:
                parts.append(f'<rect x="{x}" y="{y}" width="120" height="60" rx="8" fill="none" stroke="{EDGE}" '
                             'stroke-width="2" stroke-dasharray="6 4"/>' + _t(x + 60, y + 36, "empty", 14,
                                                                               fill=MUTED, anchor="middle"))
    return '<g id="bali-market">' + "".join(parts) + "</g>"


def _supply_deck_altar(view: ObservationView) -> str:
    y0 = 494
    parts = [_panel(16, y0, 600, 218), *_supply(view, y0), *_deck(view, y0)]
    x0 = 340
    parts.append(_t(x0, y0 + 26, "Altar", 18, "bold"))
    parts.append(_t(x0 + 56, y0 + 26, f"{view.altar_size} card{'s' if view.altar_size != 1 else ''}", 16, fill=MUTED))
    if view.decision == "game_over":  # turned over and counted at the final scoring: every card's category
        parts += _altar_counted(view, x0, y0)
    else:
        parts += _altar_top(view, x0, y0) + _altar_as_known(view, x0, y0)
    return '<g id="bali-supply-deck-altar">' + "".join(parts) + "</g>"


def _supply(view: ObservationView, y0: float) -> list[str]:
    """The supply: one pile of offering tiles per category, with its size."""
    parts = [_t(30, y0 + 26, "Supply", 18, "bold")]
    for c in range(N_CATEGORIES):
        x, y = 30 + (c % 2) * 92, y0 + 42 + (c // 2) * 60
        parts.append(_use(f"t{c}", x, y, 44, 44))
        parts.append(_t(x + 50, y + 32, str(int(view.supply[c])), 24, "bold"))
    return parts


def _deck(view: ObservationView, y0: float) -> list[str]:
    """The deck: its size on a card back, and with the Oracle the oracles left in it."""
    parts = [_t(222, y0 + 26, "Deck", 18, "bold"), _use("back", 222, y0 + 40, 66, 92),
             _t(255, y0 + 96, str(view.deck_size), 26, "bold", "#ffffff", "middle")]
    if view.oracle:
        oracles = int(view.deck_cards[ORACLE])
        parts.append(_use("c7", 222, y0 + 146, 64, 32))
        parts.append(_t(292, y0 + 168, f"\N{MULTIPLICATION SIGN}{oracles}", 17, "bold"))
        parts.append(_t(222, y0 + 200, "oracles in the deck", 12, fill=MUTED))
    return parts


def _altar_counted(view: ObservationView, x0: float, y0: float) -> list[str]:
    """The altar at the end, turned over and counted at the final scoring: every card's category."""
    parts = [_t(x0, y0 + 50, "all of it, counted at the final scoring", 13, fill=MUTED)]
    for c in range(N_CATEGORIES):
        x = x0 + c * 66
        parts.append(_use(f"t{c}", x, y0 + 58, 34, 34))
        parts.append(_t(x + 38, y0 + 84, str(int(view.altar_known[c])), 20, "bold"))
    if view.altar_unknown:  # a view that was not given the final scoring (never drawn by the frames)
        parts.append(_use("hidden", x0, y0 + 106, 28, 28))
        parts.append(_t(x0 + 32, y0 + 127, f"{view.altar_unknown} unknown", 15, "bold"))
    return parts


def _altar_top(view: ObservationView, x0: float, y0: float) -> list[str]:
    """The altar's top four cards, top first, where known; during an oracle decision the
    cards the oracle peeked at are outlined."""
    peek = view.decision == "oracle" and view.oracle_window > 0
    parts = [_t(x0, y0 + 50, "top 4, top first" + (f" \N{EM DASH} peeked: {view.oracle_window}" if peek else ""),
                13, fill=MUTED)]
    for d in range(min(4, view.altar_size)):
        x = x0 + d * 52
        c = int(view.altar_top[d])
        parts.append(_use(f"t{c}" if c >= 0 else "hidden", x, y0 + 58, 44, 44))
        if peek and d < view.oracle_window:
            parts.append(f'<rect x="{x - 3}" y="{y0 + 55}" width="50" height="50" rx="8" fill="none" '
                         f'stroke="{INK}" stroke-width="3" stroke-dasharray="5 3"/>')
    if view.altar_size == 0:
        parts.append(_t(x0, y0 + 86, "empty", 15, fill=MUTED))
    return parts


def _altar_as_known(view: ObservationView, x0: float, y0: float) -> list[str]:
    """The whole altar as the view knows it: the known cards by category, the unknown ones, and
    the oracle peeks owed."""
    parts = [_t(x0, y0 + 128, "all of it, as known", 13, fill=MUTED)]
    for c in range(N_CATEGORIES):
        x = x0 + c * 54
        parts.append(_use(f"t{c}", x, y0 + 136, 28, 28))
        parts.append(_t(x + 31, y0 + 157, str(int(view.altar_known[c])), 16, "bold"))
    parts.append(_use("hidden", x0 + 216, y0 + 136, 28, 28))
    parts.append(_t(x0 + 247, y0 + 157, str(view.altar_unknown), 16, "bold"))
    if view.oracle and view.peeks_owed:
        parts.append(_t(x0, y0 + 196, f"oracle peeks owed: {view.peeks_owed}", 14, "bold"))
    return parts


def _seat(view: ObservationView, q: int, seat: int | None, labels: Sequence[str], final: dict[str, Any] | None,
          box: tuple[float, float, float, float]) -> str:
    """Seat ``q``'s panel (absolute seat; the view's relative seat is ``relative_seat(me, q, n)``): name
    and badges, stones and VP (the score at the end), tableau, hand and offering cards."""
    me = 0 if seat is None else seat
    r = relative_seat(me, q, view.num_players)
    x0, y0, w, h = box
    deciding = view.decision != "game_over" and r == view.to_move
    parts = [_panel(x0, y0, w, h, HIGHLIGHT if deciding else PANEL, INK if deciding else EDGE,
                    3 if deciding else 1.5)]
    if deciding:
        parts.append(f'<rect x="{x0}" y="{y0 + 8}" width="7" height="{h - 16}" rx="3" fill="{HEADER}"/>')
    parts.append(_seat_title(view, q, r, seat, labels, final, x0, y0, w))
    k = 1.0 if h < 160 else 1.25  # card size: taller panels (2 or 3 players) draw larger cards
    cw, ch = 44 * k, 34 * k
    ty, hy = y0 + 42 + 0.3 * (h - 133), y0 + h - 42
    tableau, kinds = _tableau(view, r, x0, ty, cw, ch)
    hand, cards = _hand(view, r, x0, hy)
    parts += tableau + hand
    for x, y, row in ((x0 + 78, ty + ch / 2 - 17, kinds), (x0 + 58, hy, cards)):
        if not row:
            parts.append(_t(x, y + 23, "none", 14, fill=MUTED))
    parts.append(_offerings(view, q, r, final, x0 + w - 14, hy))
    return f'<g id="bali-seat-{q}">' + "".join(parts) + "</g>"


def _tableau(view: ObservationView, r: int, x0: float, ty: float, cw: float, ch: float) -> tuple[list[str], list[int]]:
    """The relative seat ``r``'s tableau row at height ``ty`` (cards ``cw`` x ``ch``, a count on
    each kind), and the kinds it holds."""
    parts = [_t(x0 + 18, ty + ch / 2 + 5, "tableau", 13, fill=MUTED)]
    kinds = [kind for kind in range(N_CARD_TYPES) if view.tableaus[r][kind]]
    for i, kind in enumerate(kinds):
        x = x0 + 78 + i * (cw + 20)
        parts.append(_use(f"m{kind}", x, ty, cw, ch) + _count(x + cw, ty + 3, int(view.tableaus[r][kind])))
    return parts, kinds


def _hand(view: ObservationView, r: int, x0: float, hy: float) -> tuple[list[str], list[int]]:
    """The relative seat ``r``'s hand row at height ``hy`` (the first three cards, ``+N`` for
    the rest), and its cards."""
    parts = [_t(x0 + 18, hy + 22, "hand", 13, fill=MUTED)]
    cards = [kind for kind in range(N_CARD_TYPES) for _ in range(int(view.hands[r][kind]))]
    parts += [_use(f"m{kind}", x0 + 58 + i * 50, hy, 44, 34) for i, kind in enumerate(cards[:3])]
    if len(cards) > 3:
        parts.append(_t(x0 + 58 + 3 * 50, hy + 23, f"+{len(cards) - 3}", 15, "bold"))
    return parts, cards


def _seat_title(view: ObservationView, q: int, r: int, seat: int | None, labels: Sequence[str],
                final: dict[str, Any] | None, x0: float, y0: float, w: float) -> str:
    """A seat panel's first row: name, badges (you, to decide, active, winner), stones, VP, and
    at the end the score."""
    parts, right = _seat_score(q, final, x0 + w - 14, y0)
    for symbol, value in (("vp", int(view.vp_tokens[r])), ("stone", int(view.stones[r]))):
        parts.append(_t(right, y0 + 30, str(value), 22, "bold", anchor="end"))
        right -= max(text_width(str(value), 22, True), 26) + 6
        parts.append(_use(symbol, right - 28, y0 + 8, 28, 28))
        right -= 50
    pills = _seat_pills(view, q, r, seat, final)

    def room() -> float:
        return right + 28 - (x0 + 18) - sum(_badge_width(text) + 6 for text, _, _ in pills) - 10

    if pills and pills[-1][0] == "winner" and text_width(labels[q], 14, True) > room():
        pills.pop()  # no room for a long name and the pill: the crown by the score says it
    label, size = _fit(labels[q], room(), 18, True, smallest=13)
    left = [_t(x0 + 18, y0 + 28, label, size, "bold")]
    bx = x0 + 28 + text_width(label, size, True)
    for text, fill, ink in pills:
        left.append(_badge(bx, y0 + 27, text, fill, ink))
        bx += _badge_width(text) + 6
    return "".join(left + parts)


def _seat_score(q: int, final: dict[str, Any] | None, right: float, y0: float) -> tuple[list[str], float]:
    """At the end, seat ``q``'s score right-aligned at ``right`` (and a crown for a winner);
    returns the markup and where the row's next item ends."""
    if final is None:
        return [], right
    score = f"{final['final_scores'][q]} pts"
    parts = [_t(right, y0 + 30, score, 22, "bold", anchor="end")]
    right -= text_width(score, 22, True) + 8
    if q in final["winners"]:
        parts.append(_use("crown", right - 30, y0 + 6, 30, 30))
        right -= 34
    return parts, right - 18


def _seat_pills(view: ObservationView, q: int, r: int, seat: int | None,
                final: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """The badges by a seat's name (text, fill, ink): you, to decide, active, winner."""
    over = view.decision == "game_over"
    pills = [("you", "#0072B2", "#ffffff")] if seat is not None and q == seat else []
    if not over and r == view.to_move:
        pills.append(("to decide", HEADER, "#ffffff"))
    if not over and r == view.active:
        pills.append(("active", "#e2d6b8", INK))
    if final is not None and q in final["winners"]:
        pills.append(("winner", "#f2c200", INK))
    return pills


def _offerings(view: ObservationView, q: int, r: int, final: dict[str, Any] | None, right: float, y: float) -> str:
    """Seat ``q``'s offering cards by category, right-aligned at ``right``: exact counts, ``a-b``
    where the view only bounds them, all exact once the game is over (shown at the scoring)."""
    if final is not None:
        lo = hi = final["offering_cards"][q]
    else:
        lo, hi = view.offerings_min[r], view.offerings_max[r]
    x0 = right - 334
    parts = [_t(x0 - 8, y + 22, "offerings", 13, fill=MUTED, anchor="end")]
    for c in range(N_CATEGORIES):
        x = x0 + c * 76
        parts.append(_use(f"t{c}", x, y + 5, 25, 25))
        text, size = _fit(_range(int(lo[c]), int(hi[c])), 44, 17, True, smallest=11)
        parts.append(_t(x + 28, y + 24, text, size, "bold"))
    parts.append(_t(right, y + 24, f"={int(view.offerings_total[r])}", 15, "bold", MUTED, "end"))
    return "".join(parts)


def _final_scoring(view: ObservationView, labels: Sequence[str], final: dict[str, Any]) -> str:
    """At the end, in the market's place: the altar's value per category and every seat's score
    by part, the winner's row marked."""
    x0, y0 = 16, 156
    parts = [_panel(x0, y0, 600, 330), _t(x0 + 14, y0 + 26, "Final scoring", 18, "bold")]
    counts, values = final["altar_counts"], final["altar_values"]
    cols = [x0 + 168 + 57 * i for i in range(8)]  # VP, shrines, stones, the 4 categories, total
    for x, text in zip(cols, ("VP", "shrines", "stones"), strict=False):
        parts.append(_t(x, y0 + 100, text, 13, "bold", MUTED, "middle"))
    for c in range(N_CATEGORIES):
        x = cols[3 + c]
        parts.append(_use(f"t{c}", x - 15, y0 + 40, 30, 30))
        parts.append(_t(x, y0 + 86, f"{counts[c]} on altar", 10.5, fill=MUTED, anchor="middle"))
        parts.append(_t(x, y0 + 100, f"{values[c]} each", 13, "bold", MUTED, "middle"))
    parts.append(_t(cols[7], y0 + 100, "total", 13, "bold", MUTED, "middle"))
    row_h = min(52, 204 / len(labels))
    for q, label in enumerate(labels):
        y = y0 + 132 + q * row_h
        b = final["score_breakdown"][q]
        if q in final["winners"]:
            parts.append(f'<rect x="{x0 + 8}" y="{y - 22}" width="584" height="32" rx="8" fill="#fbe9a6"/>')
        name, size = _fit(label, 138, 15, True, smallest=12)
        if name != label and " (" in label:  # too long: the seat on this line, the agent under it
            seat_name, agent = label.split(" (", 1)
            name, size = _fit(seat_name, 138, 15, True, smallest=12)
            parts.append(_t(x0 + 16, y + 14, *_fit("(" + agent, 138, 10.5, smallest=8), fill=MUTED))
        parts.append(_t(x0 + 16, y, name, size, "bold"))
        cells = [b["vp_tokens"], b["shrines"], b["stones"], *b["offerings"].values(), b["total"]]
        for i, (x, value) in enumerate(zip(cols, cells, strict=True)):
            parts.append(_t(x, y, str(value), 17 if i == 7 else 15, "bold" if i == 7 else "normal", anchor="middle"))
        cards = final["offering_cards"][q]
        for c in range(N_CATEGORIES):
            parts.append(_t(cols[3 + c], y + 14, f"{cards[c]}\N{MULTIPLICATION SIGN}{values[c]}", 10.5, fill=MUTED,
                            anchor="middle"))
    parts.append(_t(x0 + 14, y0 + 318, f"a shrine scores {SHRINE_POINTS}, every {STONES_PER_POINT} stones 1, an "
                                       "offering card its category's worth", 11.5, fill=MUTED))
    return '<g id="bali-final-scoring">' + "".join(parts) + "</g>"


def _count(x: float, y: float, k: int) -> str:
    """A count badge at a card's top-right corner."""
    return (f'<circle cx="{x:g}" cy="{y:g}" r="11" fill="{INK}" stroke="#ffffff" stroke-width="1.5"/>'
            + _t(x, y + 5, str(k), 14, "bold", "#ffffff", "middle"))


def _seat_boxes(n: int) -> list[tuple[float, float, float, float]]:
    """Where the seat panels go: stacked on the right, as tall as fits (at most 170)."""
    top, bottom, gap = 156, 712, 8
    h = min(170.0, (bottom - top - gap * (n - 1)) / n)
    return [(632, top + q * (h + gap), WIDTH - 16 - 632, h) for q in range(n)]


def part_boxes(n: int) -> list[tuple[float, float, float, float]]:
    """The box (x, y, width, height) each group of ``table_parts`` draws in, for ``n`` players:
    disjoint, with a margin for the panels' outlines (``raster.Rasterizer`` caches by group)."""
    fixed = [(0, 0, WIDTH, 56), (12, 56, WIDTH - 24, 96), (12, 152, 608, 338), (12, 490, 608, 226)]
    return fixed + [(x - 4, y - 4, w + 8, h + 8) for x, y, w, h in _seat_boxes(n)]


# ---------------------------------------------------------------------------- the picture
YOU = " (you)"  #: the end of the label of the seat a person plays (the web app's ``player_0 (you)``)


def viewpoint_text(seat: int | None, labels: Sequence[str], revealed: bool = False) -> str:
    """Whose picture it is: ``player_1 (greedy)'s view``, ``your view (player_0)`` (a label ending
    in ``YOU``), ``public table``, ``everything revealed``."""
    if revealed:
        return "everything revealed"
    if seat is None:
        return "public table"
    label = labels[seat]
    return f"your view ({label[: -len(YOU)]})" if label.endswith(YOU) else f"{label}'s view"


def table_parts(view: ObservationView, seat: int | None = None, labels: Sequence[str] | None = None,
                final: dict[str, Any] | None = None, notes: Sequence[str] = (), viewpoint: str | None = None,
                caption: str | None = None) -> list[str]:
    """The groups of ``render_svg``'s picture, in drawing order (header, status, market, supply
    and altar, one panel per seat): ``SVG_OPEN + DEFS + "".join(parts) + SVG_CLOSE`` is the
    picture."""
    n = view.num_players
    labels = list(labels) if labels is not None else [f"player_{q}" for q in range(n)]
    if len(labels) != n:
        raise ValueError(f"labels: one per seat ({n}), got {len(labels)}")
    if seat is not None and not 0 <= seat < n:
        raise ValueError(f"seat must be None (the public table) or 0..{n - 1}, got {seat}")
    me = 0 if seat is None else seat

    def name(rel: int) -> str:
        return labels[absolute_seat(me, rel, n)]

    viewpoint = viewpoint if viewpoint is not None else viewpoint_text(seat, labels)
    parts = [_header(view, viewpoint, caption), _status(view, seat, name, final, notes),
             _market(view) if final is None else _final_scoring(view, labels, final), _supply_deck_altar(view)]
    parts += [_seat(view, q, seat, labels, final, box) for q, box in enumerate(_seat_boxes(n))]
    return parts


def render_svg(view: ObservationView, seat: int | None = None, labels: Sequence[str] | None = None,
               final: dict[str, Any] | None = None, notes: Sequence[str] = (), viewpoint: str | None = None,
               caption: str | None = None) -> str:
    """One SVG picture (1280 x 720) of the table as ``view`` knows it.

    - ``view``: a seat's decoded observation (``decode_observation``) with ``seat`` its absolute
      seat, or the public view (``text.public_view``) with ``seat=None``; seats are drawn in
      absolute order, named by ``labels`` (default ``player_K``).
    - ``final``: at the end of a game, ``contract.final_result`` (scores, winners, what decided,
      the score breakdown; all public once the game is over).
    - ``notes``: up to two lines under the decision, e.g. the last move and what it caused.
    - ``viewpoint``: the header's pill (default: ``public table`` or ``LABEL's view``);
      ``caption``: a short text in the header's middle (e.g. ``move 12 of 180``).
    """
    return SVG_OPEN + DEFS + "".join(table_parts(view, seat, labels, final, notes, viewpoint, caption)) + SVG_CLOSE


__all__ = ["HEIGHT", "SVG_CLOSE", "SVG_OPEN", "WIDTH", "YOU", "part_boxes", "render_svg", "svg_elements", "table_parts",
           "viewpoint_text"]
