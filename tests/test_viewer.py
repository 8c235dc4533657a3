"""The picture of the table (``bali_env.pictures.render_svg``): well-formed SVG for every
configuration; exact numbers on exact positions built with the ``reset`` options (the market
column by column in take order, the supply, the deck, stones, hands, tableaus); bounds where the
view only bounds; the demon, the oracles, the final scores; labels escaped; colours that
colour-blind readers tell apart; bad arguments refused."""

from __future__ import annotations

import dataclasses
import itertools
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import bali_env
from bali_env.envs.api_check import config_id
from bali_env.engine.contract import final_result
from bali_env.pictures.text import public_view
from bali_env.engine.decode import decode_observation
from bali_env.pictures import render_svg
from bali_env.pictures.style import CARD_COLOURS, CATEGORY_COLOURS
from scenario import CF, PF, PR, RF, SC, SH, BF, Game, market

NS = "{http://www.w3.org/2000/svg}"
CONFIGS = [(n, o, d) for n in (2, 3, 4) for o in (False, True) for d in (False, True)]


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def group(root: ET.Element, name: str) -> ET.Element:
    """The picture's group ``bali-NAME``."""
    gid = f"bali-{name}"
    found = [g for g in root.iter(f"{NS}g") if g.get("id") == gid]
    assert len(found) == 1, f"one group {gid!r} expected, found {len(found)}"
    return found[0]


def texts(g: ET.Element) -> list[str]:
    return [t.text or "" for t in g.iter(f"{NS}text")]


def uses(g: ET.Element) -> list[tuple[str, float, float]]:
    return [(u.get("href")[1:], float(u.get("x")), float(u.get("y"))) for u in g.iter(f"{NS}use")]


def play_random(env, steps: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if all(env.terminations.values()):
            return
        env.step(int(rng.choice(env.legal_actions())))


def seat_svg(env, seat: int, labels=None) -> str:
    view = decode_observation(env.observe(env.possible_agents[seat])["observation"])
    final = final_result(env._state) if all(env.terminations.values()) else None
    return render_svg(view, seat, labels, final)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_every_configuration_draws_well_formed_svg(config):
    """Mid-game and at the end, public and every seat: valid XML, 1280 x 720, one panel per seat."""
    n, oracle, demon = config
    env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
    env.reset(seed=n * 10 + oracle * 2 + demon)
    for steps in (25, 5000):
        play_random(env, steps, seed=steps)
        final = final_result(env._state) if all(env.terminations.values()) else None
        pictures = [render_svg(public_view(env._state), None, None, final)]
        pictures += [seat_svg(env, q) for q in range(n)]
        for svg in pictures:
            root = parse(svg)
            assert root.get("viewBox") == "0 0 1280 720"
            ids = [g.get("id") for g in root.iter(f"{NS}g") if g.get("id")]
            assert ids == ["bali-header", "bali-status", "bali-final-scoring" if final else "bali-market",
                           "bali-supply-deck-altar", *(f"bali-seat-{q}" for q in range(n))]
            hrefs = {u.get("href") for u in root.iter(f"{NS}use")}
            defined = {"#" + s.get("id") for s in root.iter(f"{NS}symbol")}
            assert hrefs <= defined, hrefs - defined
    assert final is not None


def test_exact_position_market_supply_deck_seats():
    """A 2-player deal with a chosen market and starter sets: every number drawn is the one dealt."""
    columns = ([SC, PR, SH, RF], [CF, CF, SC, PR], [SH, PF, BF, SC], [PR, SC, SC, SH])
    g = Game(2, prefix=market(*columns), starters=[0, 1])
    root = parse(render_svg(public_view(g.env._state)))
    cards = [(href, x, y) for href, x, y in uses(group(root, "market")) if href.startswith("c")]
    by_column: dict[float, list[tuple[float, int]]] = {}
    for href, x, y in cards:
        by_column.setdefault(x, []).append((y, int(href[1:])))
    drawn = [[card for _, card in sorted(col)] for _, col in sorted(by_column.items())]
    assert drawn == [list(c) for c in columns]
    area = texts(group(root, "supply-deck-altar"))
    assert area[:5] == ["Supply", "23", "23", "23", "23"]  # 25 per category minus one per seat
    assert area[5:7] == ["Deck", "34"]  # 50 cards, 16 in the market
    assert "oracles in the deck" not in area
    for q, (stones, hand) in enumerate(((2, {"m4", "m5", "m6"}), (3, {"m3", "m5", "m6"}))):
        seat = group(root, f"seat-{q}")
        words = texts(seat)
        assert words[0] == f"player_{q}"
        assert words[words.index("tableau") - 1] == str(stones)  # the stones count, then the tableau
        tableau_y = min(y for href, _, y in uses(seat) if href == "m0")
        hand_cards = {href for href, _, y in uses(seat) if href.startswith("m") and y > tableau_y}
        assert hand_cards == hand
    status = texts(group(root, "status"))[0]
    assert status.endswith("To decide: player_0: phase 1: take an offering card (pay stones) or pass")


def test_the_seat_to_decide_and_the_viewer_are_marked():
    g = Game(3, prefix=market([SC, PR, SH, RF], [CF, CF, SC, PR], [SH, PF, BF, SC], [PR, SC, SC, SH]),
             starters=[0, 1, 2])
    g.act(4)  # seat 0 passes phase 1; seat 0 still decides (phase 2a)
    root = parse(seat_svg(g.env, 1))
    assert "you" in texts(group(root, "seat-1")) and "you" not in texts(group(root, "seat-0"))
    assert "to decide" in texts(group(root, "seat-0")) and "active" in texts(group(root, "seat-0"))
    assert "to decide" not in texts(group(root, "seat-1"))
    own = parse(seat_svg(g.env, 0))
    assert texts(group(own, "status"))[0].endswith("You: phase 2a: play cards from hand")


def test_demon_and_oracles_are_drawn_only_in_their_variants():
    for oracle, demon in itertools.product((False, True), repeat=2):
        env = bali_env.raw_env(num_players=2, oracle=oracle, demon=demon)
        env.reset(seed=4)
        root = parse(render_svg(public_view(env._state)))
        demons = [(x, y) for href, x, y in uses(group(root, "market")) if href == "demon"]
        assert len(demons) == int(demon)
        area = texts(group(root, "supply-deck-altar"))
        assert ("oracles in the deck" in area) == oracle
        if oracle:
            assert "\N{MULTIPLICATION SIGN}8" in area and "4 cards" in area  # 8 oracles; the altar's 4
        if demon:  # the demon stands on column 0: drawn right of that column's name
            header = [t for t in group(root, "market").iter(f"{NS}text") if t.text == "column 0"][0]
            assert abs(demons[0][0] - float(header.get("x"))) < 146


def test_offering_bounds_are_ranges_for_others_and_exact_for_oneself():
    """After someone's face-down offering, the others see a-b for their cards, the owner exact."""
    seen = 0
    for seed in range(40):
        env = bali_env.raw_env(num_players=3)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()) and seen < 3:
            for q in range(3):
                view = decode_observation(env.observe(env.possible_agents[q])["observation"])
                for r in range(1, 3):
                    lo, hi = view.offerings_min[r], view.offerings_max[r]
                    c = int(np.argmax(hi - lo))
                    if hi[c] > lo[c]:
                        other = (q + r) % 3
                        words = texts(group(parse(seat_svg(env, q)), f"seat-{other}"))
                        assert f"{lo[c]}\N{EN DASH}{hi[c]}" in words
                        mine = texts(group(parse(seat_svg(env, other)), f"seat-{other}"))
                        assert not any("\N{EN DASH}" in w for w in mine)
                        exact = env.state_dict()["offerings"][other]
                        offered = mine[mine.index("offerings") + 1 :][:4]
                        assert offered == [str(x) for x in exact]
                        seen += 1
                        break
            env.step(int(rng.choice(env.legal_actions())))
    assert seen >= 3


def test_the_end_shows_scores_winner_and_the_breakdown():
    env = bali_env.raw_env(num_players=3, oracle=True)
    env.reset(seed=8)
    play_random(env, 5000)
    final = final_result(env._state)
    labels = ["ann", "bob", "cy"]
    root = parse(render_svg(public_view(env._state), None, labels, final))
    for q in range(3):
        words = texts(group(root, f"seat-{q}"))
        assert f"{final['final_scores'][q]} pts" in words
        assert ("winner" in words) == (q in final["winners"])
        cells = texts(group(root, "final-scoring"))
        row = cells[cells.index(labels[q]) + 1 :][:8]
        b = final["score_breakdown"][q]
        assert row == [str(v) for v in (b["vp_tokens"], b["shrines"], b["stones"], *b["offerings"].values(),
                                         b["total"])]
    status = texts(group(root, "status"))[0]
    assert status.startswith("Game over") and labels[final["winners"][0]] in status


def test_labels_are_escaped():
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=1)
    nasty = ['<script>alert("x")</script>', "a & b"]
    svg = render_svg(public_view(env._state), None, nasty)
    assert "<script" not in svg
    root = parse(svg)  # well-formed
    assert texts(group(root, "seat-1"))[0] == "a & b"
    assert texts(group(root, "seat-0"))[0].startswith('<script>alert("x")')


def test_bad_arguments_are_refused():
    env = bali_env.raw_env(num_players=3)
    env.reset(seed=1)
    view = public_view(env._state)
    with pytest.raises(ValueError, match="labels"):
        render_svg(view, None, ["a", "b"])
    with pytest.raises(ValueError, match="seat"):
        render_svg(view, 3)


# ----------------------------------------------------------------------------- colours
_CVD = {  # Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
    "typical": np.eye(3).tolist(),
}


def _lab(colour: str, matrix) -> np.ndarray:
    c = np.array([int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    linear = np.clip(np.array(matrix) @ np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4), 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def min_distance(colours, matrix) -> float:
    labs = [_lab(c, matrix) for c in colours]
    return min(float(np.linalg.norm(a - b)) for a, b in itertools.combinations(labs, 2))


@pytest.mark.parametrize("vision", sorted(_CVD))
def test_colours_stay_apart_for_colour_blind_readers(vision):
    """Every pair of category colours, and of card colours, stays at least 15 CIELAB units apart
    under simulated protanopia, deuteranopia and tritanopia (each also has its own icon)."""
    assert min_distance(CATEGORY_COLOURS, _CVD[vision]) >= 15
    assert min_distance(sorted(set(CARD_COLOURS)), _CVD[vision]) >= 15


def test_the_colour_check_catches_a_red_green_palette():
    assert min_distance(("#d62728", "#2ca02c", "#ff7f0e", "#8c564b"), _CVD["deuteranopia"]) < 15


# ---------------------------------------------------------------------------- no text clipped or overlapping
def _text_boxes(part: str):
    """The texts of one group of ``table_parts`` with their boxes measured in the bundled font
    (Pillow's FreeType), the icons' boxes, and the count badges' circles."""
    import re
    from html import unescape

    from PIL import ImageFont

    from bali_env.pictures.raster import FONT_FILES
    from bali_env.pictures.svg import svg_elements

    def attr(e, name, default=None):
        m = re.search(rf'\b{name}="([^"]*)"', e[: e.index(">")])
        return m.group(1) if m else default

    texts_, icons, circles = [], [], []
    for e in svg_elements(part):
        if e.startswith("<text"):
            text = unescape(e[e.index(">") + 1 : e.rindex("<")])
            size, x, y = float(attr(e, "font-size", 16)), float(attr(e, "x")), float(attr(e, "y"))
            font = _FONTS.setdefault(attr(e, "font-weight") == "bold",
                                     ImageFont.truetype(FONT_FILES[attr(e, "font-weight") == "bold"], 100))
            w = font.getlength(text) * size / 100
            anchor = attr(e, "text-anchor", "start")
            x0 = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
            texts_.append((text, (x0, y - 0.73 * size, x0 + w, y + 0.2 * size)))
        elif e.startswith("<use"):
            x, y, w, h = (float(attr(e, k, 0)) for k in ("x", "y", "width", "height"))
            icons.append((attr(e, "href"), (x, y, x + w, y + h)))
        elif e.startswith("<circle"):
            cx, cy, r = (float(attr(e, k)) for k in ("cx", "cy", "r"))
            circles.append((cx - r, cy - r, cx + r, cy + r))
    texts_ = [(t, b) for t, b in texts_ if not any(_inside(b, c, 2) for c in circles)]  # a badge's number
    return texts_, icons


_FONTS: dict = {}


def _overlap(a, b, tol=0.5) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > tol and min(a[3], b[3]) - max(a[1], b[1]) > tol


def _inside(a, b, tol=0.5) -> bool:
    return a[0] >= b[0] - tol and a[1] >= b[1] - tol and a[2] <= b[2] + tol and a[3] <= b[3] + tol


def layout_problems(parts: list[str]) -> list[str]:
    """Every text of a picture that leaves its group's box, is cut (an ellipsis), half covers an
    icon, or overlaps another text."""
    from bali_env.pictures.svg import part_boxes

    out, every = [], []
    for part, (bx, by, bw, bh) in zip(parts, part_boxes(len(parts) - 4), strict=True):
        found, icons = _text_boxes(part)
        for text, box in found:
            if not _inside(box, (bx, by, bx + bw, by + bh)):
                out.append(f"{text!r} leaves its group")
            if "\N{HORIZONTAL ELLIPSIS}" in text:
                out.append(f"{text!r} is cut")
            out += [f"{text!r} covers part of {name}" for name, icon in icons
                    if _overlap(box, icon) and not _inside(box, icon)]
        every += found
    for i, (text, box) in enumerate(every):
        out += [f"{text!r} overlaps {other!r}" for other, box2 in every[i + 1 :] if _overlap(box, box2)]
    return out


LABELS = ["player_0 (greedy)", "player_1 (mcts:sims=200)", "player_2 (random)", "player_3 (ppo)"]


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4])
def test_no_text_is_cut_or_overlaps_in_any_frame(n):
    """Every frame of whole games (every seat's view and the public one, the final scoring
    included), measured in the bundled font: no text leaves its panel, is cut short, half covers
    an icon or overlaps another text. (Offering ranges such as ``10-11`` once ran into the next
    icon, the final scoring cut the players' names, two-digit altar counts left the panel.)"""
    pytest.importorskip("PIL")
    from bali_env.bots.greedy import GreedyAgent
    from bali_env.pictures.frames import Spectator, frame_parts, record_frames

    env = bali_env.raw_env(num_players=n, oracle=True, demon=True)
    env.reset(seed=n)
    bots = [GreedyAgent(seed=q) for q in range(n)]
    rng = np.random.default_rng(n)
    while not all(env.terminations.values()):  # seat 0 plays at random: ranges on the others' offerings
        o = env.observe(env.agent_selection)
        q = env.agent_name_mapping[env.agent_selection]
        env.step(int(bots[q].act(o["observation"], o["action_mask"]) if q else rng.choice(env.legal_actions())))
    record = env.game_record(LABELS[:n])
    problems: dict[str, str] = {}
    for seat in (None, 1):
        spectator = Spectator(LABELS[:n], seat)
        for f in record_frames(record, seat):
            for p in layout_problems(frame_parts(f, spectator, caption=f"move {f.step} of 999")):
                problems.setdefault(p, f"step {f.step}, seat {seat}")
    assert not problems, problems


def test_wide_numbers_fit_their_places():
    """The widest numbers a game can reach: offering ranges of two digits, two-digit stones,
    VP and altar counts, three-digit scores with the winner's crown."""
    pytest.importorskip("PIL")
    env = bali_env.raw_env(num_players=4, oracle=True)
    env.reset(seed=8)
    play_random(env, 5000)
    final = final_result(env._state)
    final["final_scores"] = [113, 98, 100, 7]
    final["winners"] = [0]
    view = public_view(env._state)
    wide = dataclasses.replace(view, stones=np.full(4, 19), vp_tokens=np.full(4, 29), decision="play",
                               altar_known=np.array([12, 11, 10, 13]), altar_unknown=14,
                               offerings_min=np.full((4, 4), 10), offerings_max=np.full((4, 4), 13))
    from bali_env.pictures import table_parts

    for v, f in ((wide, None), (dataclasses.replace(wide, decision="game_over"), final)):
        assert not layout_problems(table_parts(v, None, LABELS, f)), layout_problems(table_parts(v, None, LABELS, f))


def test_the_width_estimate_is_the_fonts():
    """``svg.text_width`` (used to fit and wrap text without the render extra) is within 1% of
    the bundled font's own advance widths."""
    pytest.importorskip("PIL")
    from PIL import ImageFont

    from bali_env.pictures.raster import FONT_FILES
    from bali_env.pictures.svg import text_width

    for bold in (False, True):
        font = ImageFont.truetype(FONT_FILES[bold], 100)
        for text in ("player_1 (mcts:sims=200)'s view", "10\N{EN DASH}13 \N{MIDDLE DOT} =31 \N{MULTIPLICATION SIGN}4",
                     "To decide: player_3: phase 2b: put a supply card face up on the altar"):
            assert text_width(text, 100, bold) == pytest.approx(font.getlength(text), rel=0.01)
