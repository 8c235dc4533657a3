"""Pictures of Bali: the table as SVG, as pixels, as an HTML replay and as an animation.

| module | job |
|---|---|
| ``style.py`` | colours (Okabe-Ito), one icon per card kind and category, the shared SVG ``<defs>`` |
| ``table.py`` | ``render_svg(view)``: one picture of the table from a view (``table_parts``: its groups) |
"""

from __future__ import annotations

from .table import HEIGHT, WIDTH, render_svg, table_parts

__all__ = ["HEIGHT", "WIDTH", "render_svg", "table_parts"]
