"""The picture as pixels (render extra): ``render_mode="rgb_array"`` gives the HxWx3 ``uint8`` frame
video recorders expect; the cached sprite path draws what resvg draws of the whole SVG (up to
rounding); frames are the same on every call and every cache size; the GIF holds every step."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

pytest.importorskip("resvg_py", reason="the render extra (resvg-py, Pillow) is not installed")
Image = pytest.importorskip("PIL.Image", reason="the render extra (resvg-py, Pillow) is not installed")

import bali_env  # noqa: E402
from bali_env.pictures.text import public_view  # noqa: E402
from bali_env.pictures.raster import Rasterizer, svg_to_png  # noqa: E402
from bali_env.pictures.style import DEFS  # noqa: E402
from bali_env.pictures.svg import SVG_CLOSE, SVG_OPEN, table_parts  # noqa: E402


def _positions(n=4, oracle=True, demon=True, seed=5, every=7):
    """Table parts of a random game, every ``every`` steps, to the end."""
    env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out, k = [], 0
    while not all(env.terminations.values()):
        if k % every == 0:
            out.append(env._picture_parts())
        env.step(int(rng.choice(env.legal_actions())))
        k += 1
    out.append(env._picture_parts())
    return out


def _whole(parts) -> np.ndarray:
    png = svg_to_png(SVG_OPEN + DEFS + "".join(parts) + SVG_CLOSE)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(np.int16)


def test_rgb_array_is_what_video_recorders_expect():
    env = bali_env.env(num_players=3, render_mode="rgb_array")
    env.reset(seed=3)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == (720, 1280, 3)
    assert frame.std() > 10  # a picture, not a blank
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert not np.array_equal(env.render(), frame)


@pytest.mark.slow
def test_sprites_draw_what_resvg_draws_whole():
    """Every compared frame, drawn from cached sprites and groups, matches resvg's render of the
    whole SVG: the shapes within the rounding of blending edges one by one (mean difference under
    0.1 levels, fewer than 1 pixel in 1,000 off by more than 4 levels, none by more than 32);
    with the text, which Pillow's FreeType draws in the same font, within a mean of 2 levels and
    fewer than 1 pixel in 100 off by more than 64."""
    raster, shapes = Rasterizer(), Rasterizer()
    for parts in _positions()[::3]:
        diff = np.abs(raster.frame(parts).astype(np.int16) - _whole(parts)).max(axis=2)
        assert diff.mean() < 2 and (diff > 64).mean() < 0.01, (diff.mean(), (diff > 64).mean())
        bare = [re.sub(r"<text\b[^>]*>[^<]*</text>", "", p) for p in parts]
        diff = np.abs(shapes.frame(bare).astype(np.int16) - _whole(bare)).max(axis=2)
        assert diff.mean() < 0.1 and (diff > 4).mean() < 1e-3 and diff.max() <= 32, (diff.mean(), diff.max())


@pytest.mark.slow
def test_frames_do_not_depend_on_the_cache():
    positions = _positions(n=2, oracle=False, demon=True, seed=9, every=5)[::4]
    big = [Rasterizer().frame(p) for p in positions]
    tiny = Rasterizer(max_sprites=5, max_groups=1)
    assert all(np.array_equal(tiny.frame(p), f) for p, f in zip(positions, big, strict=True))
    again = Rasterizer()
    assert all(np.array_equal(again.frame(p), f) for p, f in zip(reversed(positions), reversed(big), strict=True))


def test_a_changed_group_is_redrawn():
    positions = _positions(n=2, seed=2)
    raster = Rasterizer()
    a, b = raster.frame(positions[0]), raster.frame(positions[1])
    assert not np.array_equal(a, b)
    assert np.array_equal(raster.frame(positions[0]), a)


def test_unknown_elements_fall_back_to_resvg():
    """A group the sprites cannot place (here: a transform) is drawn by resvg whole, as in the
    whole picture (up to 1 level), and moved as the transform says."""
    parts = _positions(n=2, seed=4)[0]
    moved = list(parts)
    moved[2] = moved[2].replace('<g id="bali-market">', '<g id="bali-market" transform="translate(3 0)">', 1)
    frame, whole = Rasterizer().frame(moved).astype(np.int16), _whole(moved)
    market = (slice(152, 490), slice(12, 620))
    assert np.abs(frame[market] - whole[market]).max() <= 1
    assert not np.array_equal(frame[market], Rasterizer().frame(parts)[market])


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="scale"):
        Rasterizer(scale=0)
    with pytest.raises(ValueError, match="parts"):
        Rasterizer().frame(["<g/>"])
    env = bali_env.raw_env(num_players=2, render_mode="rgb_array")
    with pytest.raises(RuntimeError, match="reset"):
        env.render()


def test_scaled_frames():
    frame = Rasterizer(scale=0.5).frame(table_parts(public_view(_dealt())))
    assert frame.shape == (360, 640, 3)


def _dealt():
    env = bali_env.raw_env(num_players=4)
    env.reset(seed=0)
    return env._state
