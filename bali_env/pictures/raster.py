"""The picture as pixels: ``svg_to_png`` and ``Rasterizer`` (HxWx3 ``uint8`` frames for
``render_mode="rgb_array"``, GIFs and video recorders).

The pixels come from resvg (``resvg-py``, a Rust SVG renderer with wheels for every platform:
``pip install -e ".[render]"``, no system library) with the bundled DejaVu Sans fonts and no
system font, so a picture has the same pixels on every machine; Pillow decodes resvg's PNG.

resvg draws a whole 1280 x 720 table in about 150 ms on a small machine, most of it text (about
0.1 ms a glyph), while consecutive positions of a game repeat nearly everything. ``Rasterizer``
therefore caches twice: each group of the picture (``svg.table_parts``: the status, the
market, a seat's panel...) as the pixels of its box, and inside a group that changed, each
element (a card, a panel, a line of text) as a small RGBA sprite drawn once and blended in
document order (source-over, as resvg blends). Shapes are drawn by resvg; a ``<text>`` element
by Pillow's FreeType with the same bundled font, size, weight, colour and anchor (the glyphs'
edges differ from resvg's by hinting, nothing else). A group holding something the sprites
cannot place (a transform, a path of its own) is drawn by resvg whole. Tested against resvg's
render of the whole SVG.
"""

from __future__ import annotations

import io
import math
import re
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from html import unescape
from importlib import resources
from typing import Any

import numpy as np

from bali_env.pictures.style import DEFS, FONT, INK, PAPER
from bali_env.pictures.svg import HEIGHT, WIDTH, part_boxes, svg_elements

#: the fonts resvg draws with (no system font: the same pixels everywhere); licence in fonts/
FONT_FILES = tuple(str(resources.files(__package__) / "fonts" / name)
                   for name in ("DejaVuSans-subset.ttf", "DejaVuSans-Bold-subset.ttf"))

#: pixels: in a picture drawn smaller than 1280 x 720, text is drawn at least this large (and at least twice
#: its size) and scaled down: FreeType's whole-pixel advances misspace small text
SHARP_TEXT = 28.0
_PLAIN_GROUP = re.compile(r'^<g(?: id="[^"]*")?>$|^</g>$')  #: a group that only groups (no transform, no style)
_NUMBER = {name: re.compile(rf'\b{name}="(-?[0-9.]+)"') for name in
           ("x", "y", "width", "height", "cx", "cy", "r", "font-size", "stroke-width")}


def _resvg():
    try:
        import resvg_py
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - the message is the test
        raise ImportError("pictures as pixels need the render extra: pip install -e '.[render]' "
                          f"(resvg-py and Pillow): {exc}") from None
    return resvg_py, Image


@lru_cache(maxsize=64)
def _font(bold: bool, size: float) -> Any:
    """The bundled DejaVu Sans (bold or not) at ``size`` pixels, for Pillow."""
    from PIL import ImageFont

    return ImageFont.truetype(FONT_FILES[1 if bold else 0], size)


def svg_to_png(svg: str, scale: float = 1.0) -> bytes:
    """PNG bytes of an SVG (any SVG; ``scale`` times its size), drawn by resvg with the bundled
    fonts."""
    resvg_py, _ = _resvg()
    return bytes(resvg_py.svg_to_bytes(svg_string=svg, zoom=scale if scale != 1.0 else None,
                                       skip_system_fonts=True, font_files=list(FONT_FILES)))


def _rgba(svg: str, scale: float) -> np.ndarray:
    """resvg's pixels of ``svg`` as an HxWx4 uint8 array (straight alpha)."""
    _, image = _resvg()
    return np.asarray(image.open(io.BytesIO(svg_to_png(svg, scale))).convert("RGBA"))


def _box_of(element: str) -> tuple[float, float, float, float] | None:
    """The box an element draws in (a margin for strokes and glyph overhang), or None."""
    def num(name: str, default: float | None = None) -> float | None:
        m = _NUMBER[name].search(element)
        return float(m.group(1)) if m else default

    stroke = num("stroke-width", 0.0) or 0.0
    if element.startswith(("<rect", "<use")):
        x, y, w, h = num("x", 0.0), num("y", 0.0), num("width"), num("height")
        if w is None or h is None:
            return None
        pad = stroke + 2
        return x - pad, y - pad, w + 2 * pad, h + 2 * pad
    if element.startswith("<circle"):
        cx, cy, r = num("cx", 0.0), num("cy", 0.0), num("r")
        if r is None:
            return None
        pad = r + stroke + 2
        return cx - pad, cy - pad, 2 * pad, 2 * pad
    if not element.startswith("<text"):
        return None
    # text: the anchor point, the size, and a generous width for the characters
    x, y, size = num("x", 0.0), num("y", 0.0), num("font-size", 16.0)
    chars = len(element[element.index(">") + 1 : element.rindex("<")])
    w = 0.75 * size * (chars + 2)
    left = x - w / 2 if 'text-anchor="middle"' in element else x - w if 'text-anchor="end"' in element else x - size
    return left, y - 1.3 * size, w + size, 1.8 * size


class Rasterizer:
    """SVG pictures of the table (``table_parts``) as HxWx3 ``uint8`` arrays, at ``scale`` times
    1280 x 720, with the caches described in the module docstring (``max_sprites`` elements,
    ``max_groups`` groups; the oldest go first)."""

    def __init__(self, scale: float = 1.0, max_sprites: int = 20_000, max_groups: int = 2_000) -> None:
        if not isinstance(scale, (int, float)) or not 0.1 <= scale <= 4:
            raise ValueError(f"scale must be a number in 0.1..4, got {scale!r}")
        self.scale = float(scale)
        self.width, self.height = round(WIDTH * self.scale), round(HEIGHT * self.scale)
        self._sprites: OrderedDict[str, _Sprite | _Empty] = OrderedDict()
        self._groups: OrderedDict[tuple[str, tuple[int, int, int, int]], np.ndarray] = OrderedDict()
        self.max_sprites, self.max_groups = max_sprites, max_groups
        self._paper = np.array([int(PAPER[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)
        self._last: tuple[list[object], np.ndarray] | None = None  # the groups and pixels of the last frame

    def frame(self, parts: Sequence[str]) -> np.ndarray:
        """The picture of ``parts`` (``table_parts`` of one view) as a fresh HxWx3 uint8 array."""
        boxes = part_boxes(len(parts) - 4)
        if len(boxes) != len(parts) or not all(isinstance(p, str) for p in parts):
            raise ValueError(f"parts: the {len(boxes)} groups (strings) of table_parts, got {len(parts)}")
        keys = [(part, self._pixels(box)) for part, box in zip(parts, boxes, strict=True)]
        if self._last is not None and len(self._last[0]) == len(keys):
            out = self._last[1].copy()  # groups equal to the last frame's are in place already
            same = self._last[0]
        else:
            out = np.empty((self.height, self.width, 3), dtype=np.uint8)
            out[:] = self._paper
            same = []
        for i, key in enumerate(keys):
            if i < len(same) and same[i] == key:
                continue
            x, y, w, h = key[1]
            out[y : y + h, x : x + w] = self._group(*key)
        self._last = (keys, out.copy())
        return out

    def _pixels(self, box: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        """A group's box in whole pixels at this scale, inside the picture."""
        s = self.scale
        x0, y0 = max(0, int(box[0] * s)), max(0, int(box[1] * s))
        x1 = min(self.width, int(np.ceil((box[0] + box[2]) * s)))
        y1 = min(self.height, int(np.ceil((box[1] + box[3]) * s)))
        return x0, y0, x1 - x0, y1 - y0

    def _group(self, part: str, box: tuple[int, int, int, int]) -> np.ndarray:
        key = (part, box)
        hit = self._groups.get(key)
        if hit is not None:
            self._groups.move_to_end(key)
            return hit
        x, y, w, h = box
        acc = _resvg()[1].new("RGB", (w, h), tuple(int(v) for v in self._paper))
        elements = svg_elements(part)
        groups = [bool(_PLAIN_GROUP.match(e)) for e in elements]  # no drawing of their own
        drawable = all(g or e.endswith("/>") or e.endswith("</text>") for g, e in zip(groups, elements, strict=True))
        sprites = [self._sprite(e) for g, e in zip(groups, elements, strict=True) if not g] if drawable else [None]
        if all(sprites):
            for sprite in sprites:
                sprite.blend(acc, x, y)  # type: ignore[union-attr]
        else:  # something the sprites cannot place: resvg draws the group whole
            s = self.scale
            svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{x / s:g} {y / s:g} {w / s:g} {h / s:g}" '
                   f'width="{w / s:g}" height="{h / s:g}" font-family="{FONT}">{DEFS}{part}</svg>')
            whole = _Sprite.of(x, y, _rgba(svg, s))
            if whole is not None:
                whole.blend(acc, x, y)
        pixels = np.asarray(acc)
        self._groups[key] = pixels
        if len(self._groups) > self.max_groups:
            self._groups.popitem(last=False)
        return pixels

    def _sprite(self, element: str) -> _Sprite | _Empty | None:
        """An element drawn alone (``_EMPTY`` when it draws nothing), or None when it cannot be
        placed."""
        if element in self._sprites:
            self._sprites.move_to_end(element)
            return self._sprites[element]
        box = _box_of(element)
        if box is None:
            return None
        s = self.scale
        x0, y0 = int(np.floor(box[0] * s)), int(np.floor(box[1] * s))
        x1, y1 = int(np.ceil((box[0] + box[2]) * s)), int(np.ceil((box[1] + box[3]) * s))
        if element.startswith("<text"):
            sprite = self._text_sprite(element, x0, y0, x1 - x0, y1 - y0) or _EMPTY
            self._remember(element, sprite)
            return sprite
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{x0 / s:g} {y0 / s:g} {(x1 - x0) / s:g} '
               f'{(y1 - y0) / s:g}" width="{(x1 - x0) / s:g}" height="{(y1 - y0) / s:g}" font-family="{FONT}">'
               f'{DEFS if "<use" in element else ""}{element}</svg>')
        sprite = _Sprite.of(x0, y0, _rgba(svg, s)) or _EMPTY
        self._remember(element, sprite)
        return sprite

    def _remember(self, element: str, sprite: _Sprite | _Empty) -> None:
        self._sprites[element] = sprite
        if len(self._sprites) > self.max_sprites:
            self._sprites.popitem(last=False)

    def _text_sprite(self, element: str, x0: int, y0: int, w: int, h: int) -> _Sprite | None:
        """A ``<text>`` element drawn by Pillow's FreeType with the same bundled font, size,
        weight, colour and anchor (resvg spends about 0.1 ms a glyph; this, a few microseconds)."""
        _, image = _resvg()
        from PIL import ImageDraw

        def attr(name: str, default: str) -> str:
            m = re.search(rf'\b{name}="([^"]*)"', element[: element.index(">")])
            return m.group(1) if m else default

        s = self.scale
        size = float(attr("font-size", "16")) * s
        # scaled-down text is drawn larger and scaled down: FreeType's hinting rounds each glyph's
        # advance to whole pixels, which at a few pixels a letter spaces words wrongly ("colum n")
        k = 1 if s >= 1 else max(2, math.ceil(SHARP_TEXT / size))
        bold = attr("font-weight", "normal") == "bold"
        font = _font(bold, round(size * k * 4) / 4)
        anchor = {"middle": "ms", "end": "rs"}.get(attr("text-anchor", "start"), "ls")
        text = unescape(element[element.index(">") + 1 : element.rindex("<")])
        fill = image.new("RGBA", (1, 1), attr("fill", INK)).getpixel((0, 0))
        canvas = image.new("RGBA", (max(1, w * k), max(1, h * k)), (*fill[:3], 0))  # one colour: no dark fringe
        x, y = float(attr("x", "0")) * s - x0, float(attr("y", "0")) * s - y0
        ImageDraw.Draw(canvas).text((x * k, y * k), text, font=font, fill=fill, anchor=anchor)
        if k > 1:
            canvas = canvas.resize((max(1, w), max(1, h)), image.Resampling.BOX)
        return _Sprite.of(x0, y0, np.asarray(canvas))


class _Sprite:
    """An element's pixels (Pillow images: colour and, unless opaque, alpha), cropped to the
    pixels it covers, its top-left corner at picture pixel (left, top)."""

    __slots__ = ("left", "top", "colour", "alpha")

    def __init__(self, left: int, top: int, colour: Any, alpha: Any) -> None:
        self.left, self.top, self.colour, self.alpha = left, top, colour, alpha

    @classmethod
    def of(cls, left: int, top: int, rgba: np.ndarray) -> _Sprite | None:
        """The sprite of straight-alpha RGBA pixels (None when they are all transparent)."""
        _, image = _resvg()
        rows, cols = np.flatnonzero(rgba[..., 3].any(axis=1)), np.flatnonzero(rgba[..., 3].any(axis=0))
        if rows.size == 0:
            return None
        px = np.ascontiguousarray(rgba[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1])
        alpha = None if (px[..., 3] == 255).all() else image.fromarray(px[..., 3], "L")
        return cls(left + int(cols[0]), top + int(rows[0]), image.fromarray(px[..., :3], "RGB"), alpha)

    def blend(self, acc: Any, x: int, y: int) -> None:
        """Blend over ``acc``, the Pillow RGB image of the box whose top-left pixel is (x, y)
        (source-over; what falls outside the box is cut off)."""
        acc.paste(self.colour, (self.left - x, self.top - y), self.alpha)


class _Empty:
    """An element that draws nothing."""

    def blend(self, acc: Any, x: int, y: int) -> None:
        """Nothing to blend."""


_EMPTY = _Empty()


def rgb_frames(parts_list: Sequence[Sequence[str]], scale: float = 1.0) -> list[np.ndarray]:
    """Several pictures (``table_parts`` each) as HxWx3 uint8 arrays, sharing one cache."""
    raster = Rasterizer(scale)
    return [raster.frame(parts) for parts in parts_list]


__all__ = ["FONT_FILES", "SHARP_TEXT", "Rasterizer", "rgb_frames", "svg_to_png"]
