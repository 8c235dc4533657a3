"""An animated picture of a whole game: ``replay_gif(record, path)`` writes a GIF (Pillow) of every
step as one viewer saw it, each move captioned ``move i of N`` and the last frame held longer.

The frames are the same pictures as everywhere (``frames.frame_parts``), drawn to pixels by
``raster.Rasterizer`` at ``scale`` (0.75: 960 x 540, where the small labels stay legible), all
mapped to one palette made from the game's own colours so that consecutive frames differ only
where the table changed (which GIF stores compactly). Needs the render extra.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bali_env.pictures.frames import Spectator, frame_parts, labels_for, record_frames
from bali_env.pictures.raster import Rasterizer

FIRST_MS, MOVE_MS, LAST_MS = 1500, 700, 6000  #: how long the first frame, each move and the end show


def replay_gif(record: dict[str, Any], path: str | Path, seat: int | None = None, reveal: bool = False,
               scale: float = 0.75, on_frame: Callable[[int, int], None] | None = None) -> Path:
    """Write the GIF of a game record as ``seat`` (None: the public; ``reveal``: everything) saw
    it; ``on_frame(i, total)`` is called after each frame is drawn (a progress bar). The file
    appears only once complete."""
    from PIL import Image

    from bali_env.files import replace_when_done

    spectator = Spectator(labels_for(record["num_players"], record.get("agents")), seat, reveal)
    frames = record_frames(record, seat, reveal)
    raster = Rasterizer(scale)
    total = len(frames) - 1
    images = []
    for i, frame in enumerate(frames):
        caption = "start of the game" if i == 0 else f"move {i} of {total}"
        images.append(Image.fromarray(raster.frame(frame_parts(frame, spectator, caption))))
        if on_frame is not None:
            on_frame(i + 1, len(frames))
    palette = _palette(images)
    indexed = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in images]
    durations = [FIRST_MS] + [MOVE_MS] * (len(indexed) - 2) + [LAST_MS] if len(indexed) > 1 else [LAST_MS]
    with replace_when_done(path) as tmp:
        indexed[0].save(tmp, format="GIF", save_all=True, append_images=indexed[1:], duration=durations, loop=0,
                        disposal=1)
    return Path(path)


def _palette(images: list[Any]) -> Any:
    """One 256-colour palette for all frames, from a strip of frames across the game."""
    from PIL import Image

    picks = images[:: max(1, len(images) // 6)][:6] + [images[-1]]
    w, h = picks[0].size
    strip = Image.new("RGB", (w, h * len(picks)))
    for k, im in enumerate(picks):
        strip.paste(im, (0, k * h))
    return strip.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)


__all__ = ["FIRST_MS", "LAST_MS", "MOVE_MS", "replay_gif"]
