"""``bali replay --html`` and ``--gif``, and the tournament's ``index.html``: one self-contained page
(nothing from the network), a frame per step, the move log as the viewer saw it, the result at
the end; the GIF has a frame per step; bad options are refused before anything is written."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import bali_env
from scenario import random_game
from bali_env.envs.records import save_record
from bali_env.apps import replay
from bali_env.apps.cli import parse_command
from bali_env.pictures.html import replay_data, replay_html
from bali_env.pictures.frames import Spectator, labels_for, record_frames


def run(argv, **kwargs):
    """``bali replay ARGV`` (``input_fn``, ``print_fn`` as ``replay.run`` takes them): its exit code."""
    return replay.run(parse_command(["replay", *argv]), **kwargs)


def finished_record(n=3, seed=2, oracle=True, demon=True):
    env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    return env.game_record([f"bot{q}" for q in range(n)])


def page_data(page: str) -> dict:
    payload = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S).group(1)
    return json.loads(payload)


def test_the_page_is_self_contained_with_a_frame_per_step(tmp_path):
    record = finished_record()
    path = save_record(record, tmp_path / "game.json")
    out = tmp_path / "sub" / "game.html"
    assert run([str(path), "--html", str(out)], print_fn=lambda *a: None) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<title>Bali replay: game.json (public table)</title>" in page
    # nothing is fetched: no external script, style, image or font, no URL but the SVG namespace
    loads = re.findall(r'<(?:script|link|img|iframe)[^>]+(?:src|href)="([^"]*)"', page)
    assert all(url.startswith("data:") for url in loads), loads
    urls = set(re.findall(r"https?://[A-Za-z0-9./_-]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    data = page_data(page)
    steps = len(record["actions"])
    assert len(data["frames"]) == steps + 1 and len(data["log"]) == steps
    # every frame puts together a whole picture: its groups, in order, give back the SVG groups
    frames = record_frames(record)
    spectator = Spectator(labels_for(3, record["agents"]), None)
    from bali_env.pictures.frames import frame_parts

    for i in (0, steps // 2, steps):
        built = "".join(data["elements"][e] for g in data["frames"][i] for e in data["groups"][g])
        assert built == "".join(frame_parts(frames[i], spectator))
    assert data["result"].startswith("Final scores: player_0 (bot0) ")
    assert "Winner" in data["result"] or "Shared win" in data["result"]


def test_the_log_tells_turns_and_hides_what_the_public_did_not_see():
    for seed in range(40):  # a game with a face-down offering
        record = finished_record(n=4, seed=seed)
        public = replay_data(record_frames(record), Spectator(labels_for(4, record["agents"])))
        if any(e["text"].endswith("offer a card face down") for e in public["log"]):
            break
    else:
        raise AssertionError("no face-down offering in 40 games")
    revealed = replay_data(record_frames(record, reveal=True), Spectator(labels_for(4, record["agents"]), reveal=True))
    assert not any("offer a card face down" in e["text"] for e in revealed["log"])
    turns = [e["turn"] for e in public["log"]]
    assert turns[0] == 1 and turns == sorted(turns) and turns[-1] > 10
    first_turn = [e for e in public["log"] if e["turn"] == 1]
    assert all(e["active"] == "player_0 (bot0)" and e["text"].startswith("player_0 (bot0): ") for e in first_turn)
    assert any(ev.startswith("scoring ") for e in public["log"] for ev in e["events"])


def test_an_unfinished_game_says_so():
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=1)
    for _ in range(9):
        env.step(env.legal_actions()[0])
    data = page_data(replay_html(env.game_record()))
    assert data["result"] == "The game was left unfinished after 9 moves."
    assert data["scoring"] == ""


@pytest.mark.parametrize("seat", [None, 1])
def test_the_end_of_a_replay_explains_the_final_scoring_as_bali_play_does(seat):
    """The last step of a replay (any viewer) explains the final scoring item by item, in the
    same words as ``bali play`` and the web app (``explain_final_scoring`` of the true end), and
    the page shows it at the last step only."""
    from bali_env.pictures.narrate import explain_final_scoring

    env = random_game(2, 3, oracle=True, demon=True)
    record = env.game_record(["bot0", "bot1", "bot2"])
    labels = labels_for(3, record["agents"])
    expected = explain_final_scoring(env.state_dict(), env.infos["player_0"], labels)
    page = replay_html(record, seat, title="g")
    data = page_data(page)
    assert data["scoring"] == expected
    assert "=== Final scoring ===" in expected and all(f"{label}:" in expected for label in labels)
    assert '<pre id="scoring" hidden>' in page and "scoring.hidden = step !== last" in page


@pytest.mark.slow
def test_small_text_in_a_gif_is_spaced_as_the_svg_says():
    """At the GIF's scales the text is drawn large and scaled down, so that glyphs keep the
    font's spacing (hinted whole-pixel advances drew "colum n"): a frame at half size stays close
    to resvg's render of the whole picture."""
    pytest.importorskip("resvg_py", reason="the render extra is not installed")
    from bali_env.pictures.raster import Rasterizer, _rgba
    from bali_env.pictures.style import DEFS
    from bali_env.pictures.svg import SVG_CLOSE, SVG_OPEN
    from bali_env.pictures.frames import frame_parts

    record = finished_record(n=4, seed=3)
    spectator = Spectator(labels_for(4, record["agents"]))
    frames = record_frames(record)
    for scale in (0.5, 0.75):
        raster = Rasterizer(scale)
        for f in (frames[0], frames[60], frames[-1]):
            parts = frame_parts(f, spectator, f"move {f.step}")
            whole = _rgba(SVG_OPEN + DEFS + "".join(parts) + SVG_CLOSE, scale)[..., :3]
            diff = np.abs(raster.frame(parts).astype(np.int16) - whole).max(axis=2)
            # misspaced text: mean 2.5 to 4.3 and 1.5% to 2.2% of the pixels off by more than 64 levels
            assert diff.mean() < {0.5: 1.5, 0.75: 2.6}[scale] and (diff > 64).mean() < 0.006, \
                (scale, f.step, diff.mean(), (diff > 64).mean())


@pytest.mark.parametrize("argv, says", [
    (["--html", "x.html", "--seat", "0", "--reveal"], "--seat and --reveal cannot be combined"),
    (["--html", "x.html", "--all"], "--all prints text"),
    (["--html", "."], "is a folder"),
    (["--gif", "x.gif", "--seat", "7"], "--seat must be 0..2"),
])
def test_bad_picture_options_are_refused(tmp_path, capsys, monkeypatch, argv, says):
    path = save_record(finished_record(), tmp_path / "game.json")
    monkeypatch.chdir(tmp_path)
    assert run([str(path), *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.json"]


def test_seat_page_holds_that_seats_view(tmp_path):
    record = finished_record(n=2, seed=4)
    page = replay_html(record, seat=1, title="g")
    assert "player_1 (bot1)&#x27;s view" in page or "player_1 (bot1)'s view" in page
    data = page_data(page)
    first = "".join(data["elements"][e] for g in data["frames"][0] for e in data["groups"][g])
    assert ">you<" in first


@pytest.mark.slow
def test_gif_has_a_frame_per_step(tmp_path):
    pytest.importorskip("resvg_py", reason="the render extra is not installed")
    from PIL import Image

    record = finished_record(n=2, seed=3, oracle=False, demon=False)
    path = save_record(record, tmp_path / "game.json")
    out = tmp_path / "game.gif"
    assert run([str(path), "--gif", str(out), "--seat", "0"], print_fn=lambda *a: None) == 0
    with Image.open(out) as gif:
        assert gif.n_frames == len(record["actions"]) + 1 and gif.size == (960, 540)
        assert gif.info.get("loop") == 0
    assert not list(tmp_path.glob(".*tmp"))  # written to a temporary file, then moved


def test_tournament_writes_an_index_and_a_replay_per_game(tmp_path):
    from bali_env.arena import run_tournament

    out = tmp_path / "t"
    run_tournament(["greedy", "random"], num_players=2, games=4, seed=1, workers=1, out_dir=out, progress=False,
                   save_records=True)
    index = (out / "index.html").read_text()
    links = re.findall(r'href="(replays/game_\d+\.html)"', index)
    assert len(links) == 4 and all((out / link).is_file() for link in links)
    assert 'src="ratings.png"' in index and (out / "ratings.png").is_file()
    results = json.loads((out / "results.json").read_text())
    for p in results["participants"]:
        assert f"<td>{p['name']}</td><td>{p['games']}</td>" in index
    replay = (out / links[0]).read_text()
    assert page_data(replay)["frames"] and "<title>Bali replay: game_00000.json (public table)</title>" in replay
    assert 'href="../index.html"' in replay  # back to the list of games


def test_tournament_without_records_writes_an_index_without_links(tmp_path):
    from bali_env.arena import run_tournament

    out = tmp_path / "t"
    run_tournament(["greedy", "random"], num_players=2, games=2, seed=1, workers=1, out_dir=out, progress=False)
    index = (out / "index.html").read_text()
    assert "replays/" not in index and "--save-records" in index
    assert not (out / "replays").exists()


@pytest.mark.parametrize("seat", [None, 1])
def test_the_text_replay_ends_with_the_altar_counted_and_the_final_scoring(tmp_path, seat):
    """``bali replay``'s last step: the altar counted (no unknown card left), every offering card
    exact, and the final scoring item by item as ``bali play`` prints it."""
    record = finished_record(n=2, seed=3)
    path = save_record(record, tmp_path / "game.json")
    out: list[str] = []
    argv = [str(path), "--step", str(len(record["actions"])), "--all"] + ([] if seat is None else ["--seat", "1"])
    assert run(argv, print_fn=out.append) == 0
    last = "\n".join(out).split(f"--- step {len(record['actions'])}/")[-1]
    assert "Altar, counted at the final scoring:" in last and "unknown" not in last
    assert "=== Final scoring ===" in last and "-" not in last.split("offerings", 1)[1].split("\n")[0]
