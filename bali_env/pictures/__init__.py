"""Pictures of Bali: the table as SVG, as pixels, as an HTML replay and as an animation.

| module | job |
|---|---|
| ``style.py`` | colours (Okabe-Ito), one icon per card kind and category, the shared SVG ``<defs>`` |
| ``text.py`` | the table as text (``render_view``), options and moves in words, the public view of a state |
| ``narrate.py`` | what happened, as one player saw it: each move, a turn's scoring, the final scoring |
| ``svg.py`` | ``render_svg(view)``: one picture of the table from a view (``table_parts``: its groups) |
| ``raster.py`` | the picture as pixels (resvg; the render extra): ``Rasterizer``, ``svg_to_png`` |
| ``frames.py`` | a game step by step as one viewer saw it: ``Spectator``, ``Frame``, ``record_frames`` |
| ``html.py`` | ``replay_html(record)``: one self-contained HTML replay page |
| ``gif.py`` | ``replay_gif(record, path)``: an animated picture of a whole game (the render extra) |
| ``fonts/``, ``assets/`` | the bundled DejaVu Sans subset (its licence), the replay page's script and style |

The picture is drawn from a view (a seat's decoded observation, or ``text.public_view``) and
nothing else, so it holds only what that viewer knows; the frames of a game add the moves as
that viewer saw them (``text.describe_move``) and, once the game is over, its result.
"""

from __future__ import annotations

from bali_env.pictures.svg import HEIGHT, WIDTH, render_svg, table_parts

__all__ = ["HEIGHT", "WIDTH", "render_svg", "table_parts"]
