"""How Bali looks: the colours (the Okabe-Ito palette, which colour-blind readers tell apart), one
vector icon per offering category and card kind, and the SVG ``<defs>`` every picture shares.

Every card kind and offering category has a colour *and* an icon of its own, so no reader has to
rely on colour alone. The defs are one constant string: a picture references its symbols with
``<use href="#c3" .../>`` (a rice farmer card; ``#m3`` small, without its name), ``#t0`` (a rice
offering card), ``#stone``, ``#vp``, ``#demon``, ``#crown``, ``#back`` (the deck) and ``#hidden``
(a face-down altar card), so an HTML replay holds them once for all its frames.
"""

from __future__ import annotations

from bali_env.engine.ids import CATEGORY_NAMES, FARMER, N_CARD_IDS, N_CATEGORIES

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"  #: the bundled font first (``raster.FONT_FILES``)

INK = "#22231f"  #: text and outlines
PAPER = "#efe7d4"  #: the table
PANEL = "#fffdf6"  #: panels on the table
EDGE = "#cbbd9c"  #: panel borders
MUTED = "#6b6457"  #: secondary text
HEADER = "#23382c"  #: the header band
HIGHLIGHT = "#fff1b8"  #: the panel of the seat that decides now

#: offering categories 0..3: rice, peanuts, bananas, chilies (Okabe-Ito: bluish green, orange,
#: yellow, vermillion), with the ink that reads on each
CATEGORY_COLOURS = ("#009E73", "#E69F00", "#F0E442", "#D55E00")
CATEGORY_INKS = ("#ffffff", INK, INK, "#ffffff")

#: card ids 0..7: stonecutter (grey), priest (reddish purple), shrine (blue), the four farmers
#: (their category's colour), oracle (black)
CARD_COLOURS = ("#c4c4c4", "#CC79A7", "#0072B2", *CATEGORY_COLOURS, "#1b1b1b")
CARD_INKS = (INK, INK, "#ffffff", *CATEGORY_INKS, "#ffffff")
#: the name on a card, one or two lines
CARD_LABELS = (("Stone-", "cutter"), ("Priest",), ("Shrine",), ("Rice", "farmer"), ("Peanut", "farmer"),
               ("Banana", "farmer"), ("Chili", "farmer"), ("Oracle",))

#: icons in a 40 x 40 box, filled with the colour of the ``<use>`` that draws them
ICONS = {
    "cutter": '<rect x="16" y="16" width="5" height="22" rx="2" transform="rotate(45 18.5 27)"/>'
              '<rect x="18" y="13" width="20" height="8" rx="2" transform="rotate(45 28 17)"/>',
    "priest": '<path d="M15 6.5 L20 1 L25 6.5 Z"/><circle cx="20" cy="11.5" r="5.5"/>'
              '<path d="M8 38 L13 20 Q20 16 27 20 L32 38 Z"/>',
    "shrine": '<path d="M19 1 h2 v5 h-2 z M10 12 L20 5.5 L30 12 Z M5 20.5 L20 12.5 L35 20.5 Z '
              'M11 22 h18 v8 h-18 z M6 31 h28 v6 h-28 z"/>',
    "oracle": '<path fill-rule="evenodd" d="M2 20 Q20 4 38 20 Q20 36 2 20 Z M27 20 A7 7 0 1 0 13 20 '
              'A7 7 0 1 0 27 20 Z"/><circle cx="20" cy="20" r="3.6"/>',
    "rice": '<path d="M8 21 Q20 6 32 21 Z"/><path d="M3 23.5 H37 Q36 36 20 37 Q4 36 3 23.5 Z"/>',
    "peanuts": '<path transform="rotate(35 20 20)" d="M20 2 C28 2 30 9 27 15 C25 18 25 22 27 25 C30 31 '
               '27 38 20 38 C13 38 10 31 13 25 C15 22 15 18 13 15 C10 9 12 2 20 2 Z"/>',
    "bananas": '<path d="M7 7 Q5 24 17 32 Q27 38 36 33 Q37 30 34 30 Q23 31 16.5 23.5 Q11 16 12 7 Q10 4 7 7 Z"/>'
               '<path d="M7 7 L6 2.5 L10.5 3.5 Z"/>',
    "chilies": '<path d="M30 7 Q36 9 33 15 Q27 29 9 36 Q4 37 5.5 33 Q20 25 24.5 13 Q26 8 30 7 Z"/>'
               '<path d="M29 8 Q29 2 35 1.5 L35.5 4 Q32 4 32 8.5 Z"/>',
    "hat": '<path d="M1 15 L20 3 L39 15 Q20 20 1 15 Z"/>',
}
CATEGORY_ICONS = ("rice", "peanuts", "bananas", "chilies")
CARD_ICONS = ("cutter", "priest", "shrine", *CATEGORY_ICONS, "oracle")


Box = tuple[float, float, float, float]


def _card_art(k: int, hat: Box, farmer_icon: Box, icon: Box) -> str:
    """Card id ``k``'s picture: its icon in ``icon``, or for a farmer the hat in ``hat`` over its
    category's icon in ``farmer_icon`` (boxes: x, y, width, height), in the card's ink."""
    ink = CARD_INKS[k]

    def use(name: str, box: Box) -> str:
        x, y, w, h = box
        return f'<use href="#i-{name}" x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="{ink}"/>'

    if FARMER <= k < FARMER + N_CATEGORIES:
        return use("hat", hat) + use(CARD_ICONS[k], farmer_icon)
    return use(CARD_ICONS[k], icon)


def _card_symbol(k: int) -> str:
    """The face of card id ``k`` (100 x 50): its colour, its icon (a farmer: the hat over the
    category), its name."""
    bg, ink = CARD_COLOURS[k], CARD_INKS[k]
    art = _card_art(k, (5, 2, 38, 19), (10, 16, 29, 29), (4, 5, 40, 40))
    lines = CARD_LABELS[k]
    ys = (31,) if len(lines) == 1 else (23, 40)
    text = "".join(f'<text x="71" y="{y}" font-size="{15 if len(lines) == 1 else 13.5}" font-weight="bold" '
                   f'text-anchor="middle" fill="{ink}">{line}</text>' for line, y in zip(lines, ys, strict=True))
    return (f'<symbol id="c{k}" viewBox="0 0 100 50"><rect x="1" y="1" width="98" height="48" rx="7" '
            f'fill="{bg}" stroke="{INK}" stroke-width="2"/>{art}{text}</symbol>')


def _mini_symbol(k: int) -> str:
    """Card id ``k`` small (44 x 34): colour and icon, no name (hands and tableaus)."""
    art = _card_art(k, (8, 1, 28, 14), (11, 10, 22, 22), (8, 3, 28, 28))
    return (f'<symbol id="m{k}" viewBox="0 0 44 34"><rect x="1" y="1" width="42" height="32" rx="5" '
            f'fill="{CARD_COLOURS[k]}" '
            f'stroke="{INK}" stroke-width="1.5"/>{art}</symbol>')


def _tile_symbol(c: int) -> str:
    """An offering card of category ``c`` (40 x 40)."""
    return (f'<symbol id="t{c}" viewBox="0 0 40 40"><rect x="1" y="1" width="38" height="38" rx="6" '
            f'fill="{CATEGORY_COLOURS[c]}" stroke="{INK}" stroke-width="2"/>'
            f'<use href="#i-{CATEGORY_ICONS[c]}" x="6" y="6" width="28" height="28" fill="{CATEGORY_INKS[c]}"/>'
            '</symbol>')


_TOKENS = (
    '<symbol id="stone" viewBox="0 0 40 40"><ellipse cx="20" cy="22" rx="17" ry="12.5" fill="#8e8e8e" '
    f'stroke="{INK}" stroke-width="2"/><ellipse cx="14" cy="17" rx="6" ry="3" fill="#c9c9c9"/></symbol>',
    '<symbol id="vp" viewBox="0 0 40 40"><path d="M20 2 L25 14 L38 15 L28 24 L31 37 L20 30 L9 37 L12 24 '
    'L2 15 L15 14 Z" fill="#f2c200" stroke="#5c4a00" stroke-width="2" stroke-linejoin="round"/></symbol>',
    '<symbol id="crown" viewBox="0 0 40 40"><path d="M4 32 L7 10 L15 20 L20 5 L25 20 L33 10 L36 32 Z" '
    'fill="#f2c200" stroke="#5c4a00" stroke-width="2" stroke-linejoin="round"/></symbol>',
    '<symbol id="demon" viewBox="0 0 40 40"><path d="M6 3 L15 15 L9 18 Z M34 3 L25 15 L31 18 Z" '
    'fill="#7a0b0b"/><circle cx="20" cy="24" r="14" fill="#c0392b" stroke="#4a0606" stroke-width="2"/>'
    '<path d="M12 20 L18 23 L12 25 Z M28 20 L22 23 L28 25 Z" fill="#fff6cc"/>'
    '<path d="M13 31 Q20 35 27 31" stroke="#4a0606" stroke-width="2" fill="none"/></symbol>',
    f'<symbol id="back" viewBox="0 0 60 84"><rect x="1" y="1" width="58" height="82" rx="7" fill="{HEADER}" '
    f'stroke="{INK}" stroke-width="2"/><rect x="7" y="7" width="46" height="70" rx="4" fill="none" '
    'stroke="#c9a227" stroke-width="2"/><path d="M30 14 L46 42 L30 70 L14 42 Z" fill="none" stroke="#c9a227" '
    'stroke-width="2"/></symbol>',
    '<symbol id="hidden" viewBox="0 0 40 40"><rect x="1" y="1" width="38" height="38" rx="6" fill="#6d5b47" '
    f'stroke="{INK}" stroke-width="2"/><text x="20" y="29" font-size="24" font-weight="bold" '
    'text-anchor="middle" fill="#f3e9d2">?</text></symbol>',
)


def _defs() -> str:
    icons = "".join(f'<symbol id="i-{name}" viewBox="0 0 40 {20 if name == "hat" else 40}">{body}</symbol>'
                    for name, body in ICONS.items())
    cards = "".join(_card_symbol(k) + _mini_symbol(k) for k in range(N_CARD_IDS))
    tiles = "".join(_tile_symbol(c) for c in range(N_CATEGORIES))
    # symbols do not clip to their box (faster to draw, and the same in a browser and in resvg)
    return f"<defs>{icons}{cards}{tiles}{''.join(_TOKENS)}</defs>".replace("<symbol ", '<symbol overflow="visible" ')


DEFS = _defs()  #: the ``<defs>`` every picture uses (symbols only: nothing here depends on a game)

assert len(CATEGORY_NAMES) == N_CATEGORIES == len(CATEGORY_COLOURS)
