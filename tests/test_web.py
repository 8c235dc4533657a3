"""The web app (``bali serve``, web extra) through Starlette's test client: a whole game against a
bot through the API, the human's view only, bad requests answered with a 4xx (and the server
going on), a failing bot ending its own game only, several games at once, the results folder
browsed without leaving it, and ``bali serve``'s option checks."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra (Starlette, uvicorn) is not installed")

from starlette.testclient import TestClient  # noqa: E402

from bali_env.apps.web.app import create_app  # noqa: E402
from bali_env.apps.cli import parse_command  # noqa: E402
from bali_env.apps.web import serve  # noqa: E402

FAILING_BOT = '''
from bali_env.bots.base import Agent

class Failing(Agent):
    name = "failing"

    def act(self, observation, action_mask):
        raise RuntimeError("out of ideas")
'''


@pytest.fixture()
def client():
    return TestClient(create_app())


def play_through(client: TestClient, state: dict, rng) -> dict:
    """Play a game to its end: the human picks random legal options, bots move on request."""
    for _ in range(2000):
        if state["status"] != "playing":
            return state
        if state["your_turn"]:
            option = state["options"][int(rng.integers(len(state["options"])))]
            r = client.post(f"/api/games/{state['id']}/move", json={"action": option["action"]})
        else:
            r = client.post(f"/api/games/{state['id']}/advance")
        assert r.status_code == 200, r.text
        state = r.json()
    raise AssertionError("the game did not end")


def test_a_whole_game_through_the_api(client):
    r = client.post("/api/games", json={"players": 2, "seat": 1, "opponents": ["greedy"], "seed": 5})
    assert r.status_code == 201
    state = r.json()
    assert state["labels"] == ["player_0 (greedy)", "player_1 (you)"] and state["seat"] == 1
    assert not state["your_turn"] and state["options"] == []  # seat 0 (the bot) starts
    assert state["svg"].startswith("<svg") and ">your view (player_1)<" in state["svg"]
    final = play_through(client, state, np.random.default_rng(0))
    assert final["status"] == "over" and final["result"].startswith("Final scores: player_0 (greedy) ")
    assert "=== Final scoring ===" in final["scoring"]
    record = final["record"]
    assert record["agents"] == ["greedy", "human"] and record["final_scores"] is not None
    from bali_env.envs.records import validate_record

    validate_record(record)
    assert len(final["log"]) == len(record["actions"])
    again = client.get(f"/api/games/{state['id']}").json()
    assert again["status"] == "over" and again["svg"] == final["svg"]


def test_the_badge_says_your_view_in_words(client):
    """The header's badge names the person's seat as "your view (player_0)" (before: "player_0
    (you)'s view"); a bot's seat keeps "player_1 (greedy)'s view"."""
    from bali_env.pictures.svg import viewpoint_text

    state = client.post("/api/games", json={"players": 2, "seat": 0, "opponents": ["greedy"], "seed": 2}).json()
    assert ">your view (player_0)<" in state["svg"] and "(you)&#x27;s view" not in state["svg"]
    labels = ["player_0 (you)", "player_1 (greedy)"]
    assert [viewpoint_text(q, labels) for q in (0, 1, None)] == ["your view (player_0)", "player_1 (greedy)'s view",
                                                                "public table"]


def test_options_say_what_they_cost_and_the_log_hides_the_bots_secrets(client):
    seen_face_down = False
    for seed in range(12):
        state = client.post("/api/games", json={"players": 3, "opponents": ["greedy"], "seed": seed}).json()
        rng = np.random.default_rng(seed)
        while state["status"] == "playing":
            if state["your_turn"]:
                texts = [o["text"] for o in state["options"]]
                assert all(isinstance(t, str) and t for t in texts)
                if any(t.startswith("take ") and "stone" in t for t in texts):
                    assert any(t.endswith("stones)") or "(free)" in t or "stone)" in t for t in texts)
                choice = state["options"][int(rng.integers(len(state["options"])))]["action"]
                state = client.post(f"/api/games/{state['id']}/move", json={"action": choice}).json()
            else:
                state = client.post(f"/api/games/{state['id']}/advance").json()
        bots = [e["text"] for e in state["log"] if not e["text"].startswith("player_0 (you)")]
        assert not any(t.split(": ", 1)[1].startswith("offer own") and "face" in t for t in bots)
        seen_face_down |= any(t.endswith("offer a card face down") for t in bots)
        if seen_face_down:
            break
    assert seen_face_down


@pytest.mark.parametrize("method, url, body, status, says", [
    ("post", "/api/games", "not json", 400, "not JSON"),
    ("post", "/api/games", {"players": 5}, 400, "players must be"),
    ("post", "/api/games", {"players": 2, "seat": 2}, 400, "seat must be"),
    ("post", "/api/games", {"players": 2, "opponents": ["mybot.py:Bot"]}, 400, "unknown opponent"),
    ("post", "/api/games", {"players": 2, "oracle": "yes"}, 400, "oracle must be true or false"),
    ("post", "/api/games", [1, 2], 400, "JSON object"),
    ("get", "/api/games/nope", None, 404, "no such game"),
    ("post", "/api/games/nope/move", {"action": 4}, 404, "no such game"),
    ("get", "/nothing/here", None, 404, "not found"),
    ("get", "/static/../../pyproject.toml", None, 404, "not found"),
    ("get", "/static/index.html", None, 404, "not found"),
    ("delete", "/api/games", None, 405, ""),
    ("get", "/results/", None, 404, "no results folder"),
])
def test_bad_requests_get_a_4xx_and_the_server_goes_on(client, method, url, body, status, says):
    kwargs = {"content": body} if isinstance(body, str) else {"json": body} if body is not None else {}
    r = getattr(client, method)(url, **kwargs)
    assert r.status_code == status
    assert says in r.json()["error"]
    assert client.get("/api/setup").status_code == 200


def test_moves_out_of_turn_or_illegal_are_refused(client):
    state = client.post("/api/games", json={"players": 2, "seat": 0, "opponents": ["random"], "seed": 3}).json()
    gid = state["id"]
    assert state["your_turn"]
    legal = [o["action"] for o in state["options"]]
    illegal = next(a for a in range(44) if a not in legal)
    for body, status, says in (({"action": illegal}, 400, "not legal"), ({"action": "4"}, 400, "integer"),
                               ({"action": True}, 400, "integer"), ({}, 400, "action"),
                               (None, 400, "action")):
        r = client.post(f"/api/games/{gid}/move", json=body)
        assert r.status_code == status and says in r.json()["error"], (body, r.text)
    r = client.post(f"/api/games/{gid}/advance")
    assert r.status_code == 409 and "your turn" in r.json()["error"]
    state = client.post(f"/api/games/{gid}/move", json={"action": legal[0]}).json()
    while state["your_turn"]:
        state = client.post(f"/api/games/{gid}/move", json={"action": state["options"][0]["action"]}).json()
    r = client.post(f"/api/games/{gid}/move", json={"action": 4})
    assert r.status_code == 409 and "not your turn" in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json()["step"] == state["step"]  # nothing changed


def test_too_large_a_body_and_a_foreign_host_are_refused(client):
    r = client.post("/api/games", content=b"[" * 70_000)
    assert r.status_code == 413
    r = client.get("/", headers={"host": "evil.example"})
    assert r.status_code == 400
    assert client.get("/").status_code == 200


def test_a_failing_bot_ends_its_game_only(tmp_path):
    bot = tmp_path / "failing.py"
    bot.write_text(FAILING_BOT)
    spec = f"{bot}:Failing"
    client = TestClient(create_app([spec]))
    assert spec in client.get("/api/setup").json()["opponents"]
    bad = client.post("/api/games", json={"players": 2, "seat": 1, "opponents": [spec], "seed": 1}).json()
    good = client.post("/api/games", json={"players": 2, "seat": 1, "opponents": ["greedy"], "seed": 1}).json()
    r = client.post(f"/api/games/{bad['id']}/advance")
    assert r.status_code == 200
    state = r.json()
    assert state["status"] == "failed" and "out of ideas" in state["message"] and "player_0" in state["message"]
    assert client.post(f"/api/games/{bad['id']}/advance").status_code == 409
    assert client.post(f"/api/games/{good['id']}/advance").json()["status"] == "playing"


@pytest.mark.slow
def test_several_games_at_once():
    client = TestClient(create_app())
    outcomes = []

    def one(seed: int) -> None:
        state = client.post("/api/games", json={"players": 2, "opponents": ["greedy"], "seed": seed}).json()
        outcomes.append(play_through(client, state, np.random.default_rng(seed))["record"])

    threads = [threading.Thread(target=one, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outcomes) == 4 and all(o["final_scores"] for o in outcomes)
    # the same seed and moves give the same game: games do not disturb each other
    again = TestClient(create_app())
    state = again.post("/api/games", json={"players": 2, "opponents": ["greedy"], "seed": 0}).json()
    mine = play_through(again, state, np.random.default_rng(0))["record"]
    assert mine in outcomes


def test_results_are_browsed_inside_their_folder(tmp_path):
    from bali_env.arena import run_tournament

    root = tmp_path / "results"
    run_tournament(["greedy", "random"], num_players=2, games=2, seed=1, workers=1, out_dir=root / "run1",
                   progress=False, save_records=True)
    (tmp_path / "secret.txt").write_text("not for the web")
    outside = tmp_path / "outside"  # a run-like folder next to the results folder: never served
    (outside / "replays").mkdir(parents=True)
    (outside / "results.json").write_text((root / "run1" / "results.json").read_text())
    (outside / "ratings.png").write_text("not for the web")
    (outside / "replays" / "game_00000.html").write_text("not for the web")
    client = TestClient(create_app(results=root))
    assert "run1" in client.get("/results/").text
    index = client.get("/results/run1/")
    assert index.status_code == 200 and 'href="replays/game_00000.html"' in index.text
    assert client.get("/results/run1").status_code in (200, 307)
    assert client.get("/results/run1/ratings.png").headers["content-type"] == "image/png"
    (root / "run1" / "replays" / "game_00001.html").unlink()  # drawn from its record instead
    for game in ("game_00000", "game_00001"):
        page = client.get(f"/results/run1/replays/{game}.html")
        assert page.status_code == 200 and "replay-data" in page.text
        assert 'href="/"' in page.text and 'href="/results/"' in page.text  # the way back
    # every results page links back to the play page (home) and the list of runs
    for url in ("/results/", "/results/run1/"):
        text = client.get(url).text
        assert 'href="/"' in text and 'href="/results/"' in text, url
    for url in ("/results/../secret.txt", "/results/run1/../../secret.txt", "/results/%2e%2e/secret.txt",
                "/results/run1/records/game_00000.json", "/results/run1/replays/game_9.html",
                "/results/run1/replays/../../../secret.txt", "/results//etc/passwd/", "/results/run2/",
                "/results/%2e%2e/outside/", "/results/%2e%2e/outside/ratings.png",
                "/results/%2e%2e/outside/replays/game_00000.html", "/results/run1/%2e%2e/%2e%2e/outside/"):
        r = client.get(url)
        assert r.status_code == 404 and "not for the web" not in r.text, url


@pytest.mark.parametrize("argv, says", [
    (["--port", "70000"], "--port must be"),
    (["--host", "not a host"], "--host must be"),
    (["--results", "no/such/folder"], "is not a folder"),
    (["--agents", "nosuchbot"], "--agents 'nosuchbot'"),
])
def test_serve_checks_its_options(capsys, argv, says):
    assert serve.run(parse_command(["serve", *argv])) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_the_page_and_its_assets():
    client = TestClient(create_app())
    page = client.get("/")
    assert page.status_code == 200 and '<script src="/static/app.js">' in page.text
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/app.css").headers["content-type"].startswith("text/css")
    setup = client.get("/api/setup").json()
    assert setup["players"] == [2, 3, 4] and "greedy" in setup["opponents"] and setup["results"] is False
    assert json.loads(json.dumps(setup)) == setup


def test_a_single_option_says_why(client):
    """When the human has one legal option, the answer says why: a pass that is forced says that
    no take is affordable (or that the supply is empty); with several options nothing is said."""
    from bali_env.engine.ids import A_PASS

    said: dict[int, str] = {}
    rng = np.random.default_rng(3)
    for seed in range(6):
        state = client.post("/api/games", json={"players": 2, "opponents": ["greedy"], "seed": seed}).json()
        for _ in range(2000):
            if state["status"] != "playing":
                break
            if state["your_turn"]:
                assert bool(state["only"]) == (len(state["options"]) == 1), state["options"]
                if len(state["options"]) == 1:
                    said[state["options"][0]["action"]] = state["only"]
                option = state["options"][int(rng.integers(len(state["options"])))]
                state = client.post(f"/api/games/{state['id']}/move", json={"action": option["action"]}).json()
            else:
                state = client.post(f"/api/games/{state['id']}/advance").json()
        if A_PASS in said:
            break
    assert A_PASS in said, said
    assert "cannot afford a take" in said[A_PASS] or "supply is empty" in said[A_PASS]
    assert all(why.strip() for why in said.values()), said


def test_the_how_to_play_panel_quotes_the_engines_numbers(client):
    """The page's rules summary says what the engine does (prices, points, the hand size) and
    explains the ranges of hidden offering cards; no text assumes where the options are."""
    import re

    from bali_env import engine as E

    page = client.get("/").text
    help_text = " ".join(re.sub(r"<[^>]+>", " ", page[page.index('<details id="help">'):
                                                        page.index("</details>")]).split())
    for quoted in (f"it costs {E.OFFERING_BASE_PRICE} stones minus your farmers", f"a shrine ({E.SHRINE_COST} stones)",
                   f"{E.SHRINE_POINTS} per shrine", f"1 per {E.STONES_PER_POINT} stones",
                   f"Refill your hand to {E.HAND_SIZE} cards", "0\u20131 = at least 0, at most 1"):
        assert quoted.replace("\u2013", "&ndash;") in help_text or quoted in help_text, quoted
    script = client.get("/static/app.js").text
    assert "on the right" not in page + script and "below" not in script
