"""As a person uses them, in a real browser (Playwright driving the system's Chromium, headless):
a whole 2-player game against ``greedy`` in the web app, played to the end by clicking, and an
HTML replay stepped through from disk with the buttons, the keys, the slider, the move log and
autoplay. Screenshots go to ``test-output/screenshots/``.

Needs ``playwright`` (the dev extra; its own browser downloads are not used) and Chromium from the
system's package manager (``apt-get install chromium``); without them these tests skip with the
reason, unless ``BALI_NO_SKIPS=1`` (set by ``.ci/run``, see ``conftest.py``) makes that a failure.
"""

from __future__ import annotations

import re
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from scenario import random_game

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    if not Path(CHROMIUM).exists():
        return "no system Chromium (apt-get install chromium)"
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        return "the web extra is not installed (pip install -e '.[web]')"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server():
    """The web app on a free loopback port, in a thread."""
    if _missing():
        pytest.skip(_missing())
    import uvicorn

    from bali_env.apps.web.app import create_app

    config = uvicorn.Config(create_app(), host="127.0.0.1", port=0, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not srv.started and time.time() < deadline:
        time.sleep(0.05)
    assert srv.started, "the server did not start"
    port = srv.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


def _page(browser, width=1400, height=900):
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    return page, errors


@pytest.mark.slow
def test_play_a_whole_game_against_greedy_by_clicking(browser, server):
    page, errors = _page(browser)
    page.goto(server + "/")
    page.select_option("#players", "2")
    page.wait_for_selector("select.opponent")
    page.select_option("select.opponent", "greedy")
    page.fill("#seed", "11")
    page.click("#start")
    page.wait_for_selector("#board svg")
    page.select_option("#speed", "150")
    page.screenshot(path=str(SHOTS / "web-start.png"))
    rng = np.random.default_rng(11)
    clicks, log_sizes = 0, []
    for _ in range(400):
        page.wait_for_function("() => !document.querySelector('#end').hidden || "
                               "document.querySelectorAll('#options button:not([disabled])').length > 0",
                               timeout=60_000)
        log_sizes.append(page.locator("#log > li").count())
        if page.locator("#end").is_visible():
            break
        buttons = page.locator("#options button:not([disabled])")
        buttons.nth(int(rng.integers(buttons.count()))).click()
        clicks += 1
        if clicks == 30:
            page.screenshot(path=str(SHOTS / "web-mid-game.png"))
    else:
        raise AssertionError("the game did not end")
    assert clicks > 30
    result = page.inner_text("#result")
    assert re.match(r"Final scores: player_0 \(you\) \d+, player_1 \(greedy\) \d+\.", result)
    assert "Game over" in page.text_content("#board")
    assert page.get_attribute("#download", "href").startswith("blob:")
    # the bots' moves were shown one after another: between two of the human's turns the log grew
    # by the bot's several moves (a turn is 3 or more), each drawn on its own
    assert max(b - a for a, b in zip(log_sizes, log_sizes[1:], strict=False)) >= 3
    page.screenshot(path=str(SHOTS / "web-game-over.png"), full_page=True)
    assert not errors, errors
    page.close()


def test_choosing_the_players_before_the_setup_arrives_is_kept_without_an_error(browser, server):
    """A player count chosen while /api/setup is still on its way: no script error, and the
    opponents' choices drawn when it arrives are for that count."""
    page, errors = _page(browser)
    held = []
    page.route("**/api/setup", lambda route: held.append(route))  # hold the answer until the players are chosen
    page.goto(server + "/")
    while not held:
        page.wait_for_timeout(20)
    page.select_option("#players", "3")
    held[0].continue_()
    page.wait_for_selector("select.opponent")
    assert page.locator("select.opponent").count() == 2
    assert not errors, errors
    page.close()


def test_an_illegal_request_shows_an_error_and_the_page_goes_on(browser, server):
    page, _ = _page(browser)
    page.goto(server + "/")
    page.wait_for_selector("select.opponent")
    status = page.evaluate("""async () => (await fetch('/api/games/nope/move', {method: 'POST',
        headers: {'content-type': 'application/json'}, body: '{"action": 4}'})).status""")
    assert status == 404
    page.click("#start")
    page.wait_for_selector("#board svg")
    page.close()


def test_step_through_an_html_replay(browser, tmp_path):
    from bali_env.envs.records import save_record
    from bali_env.apps.cli import parse_command
    from bali_env.apps.replay import run

    env = random_game(21, 3, oracle=True, demon=True)
    record = env.game_record(["greedy", "mcts", "random"])
    moves = len(record["actions"])
    path = save_record(record, tmp_path / "game.json")
    out = tmp_path / "game.html"
    assert run(parse_command(["replay", str(path), "--html", str(out), "--seat", "1"]), print_fn=lambda *a: None) == 0

    page, errors = _page(browser)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(out.as_uri())
    counter = page.locator("#counter")
    assert counter.inner_text() == "start of the game"
    first = page.inner_html("#stage")
    page.click("#next")
    assert counter.inner_text() == f"move 1 of {moves}"
    assert page.inner_html("#stage") != first
    assert page.locator("#log button.current").inner_text().startswith("1. player_0 (greedy): ")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert counter.inner_text() == f"move 3 of {moves}"
    page.keyboard.press("ArrowLeft")
    assert counter.inner_text() == f"move 2 of {moves}"
    page.locator("#slider").fill("40")
    assert counter.inner_text() == f"move 40 of {moves}"
    page.locator("#log button").nth(9).click()
    assert counter.inner_text() == f"move 10 of {moves}"
    assert page.locator("#log button.current").inner_text().startswith("10. ")
    page.screenshot(path=str(SHOTS / "replay-move-10.png"))
    page.locator("#slider").fill(str(moves - 4))
    page.select_option("#speed", "10")
    page.click("#play")
    page.wait_for_function(f"() => document.querySelector('#counter').textContent === 'move {moves} of {moves}'",
                           timeout=10_000)
    assert "play" in page.inner_text("#play")  # autoplay stops at the end
    assert page.inner_text("#announce").count("Final scores") == 1
    assert "Game over" in page.text_content("#stage")
    assert _shown(page, "#scoring") and "=== Final scoring ===" in page.inner_text("#scoring")  # item by item
    assert 'href="#hidden"' not in page.inner_html("#bali-supply-deck-altar")  # the altar is counted: no "?"
    page.keyboard.press("Home")
    assert counter.inner_text() == "start of the game"
    assert not _shown(page, "#scoring")
    page.keyboard.press("End")
    page.screenshot(path=str(SHOTS / "replay-end.png"))
    assert all(url.startswith("file://") for url in requests), requests  # nothing from the network
    assert not errors, errors
    page.close()


def _shown(page, selector: str) -> bool:
    """Whether ``selector`` is seen: displayed, not hidden by an ancestor, and with a box that
    lies (at least partly) inside the page's width."""
    loc = page.locator(selector)
    if not loc.is_visible():
        return False
    box = loc.bounding_box()
    return box is not None and box["width"] > 0 and box["height"] > 0 and box["x"] < page.viewport_size["width"]


def _within_width(page, selector: str) -> None:
    """Every element of ``selector`` lies inside the window's width (no sideways scrolling)."""
    width = page.viewport_size["width"]
    for k in range(page.locator(selector).count()):
        box = page.locator(selector).nth(k).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (selector, k, box, width)


@pytest.mark.parametrize("size", [(1400, 900), (420, 860)], ids=["wide", "narrow"])
def test_each_page_shows_only_what_it_should(browser, server, size):
    """What a person sees, at a wide and a narrow window: the setup page shows the form and the
    help, not the game panel (``#game { display: grid }`` once overrode its ``hidden``); a game
    shows the board and the options inside the window, not the form; "New game" shows the form
    again and no old board. The help opens and explains the offering ranges; nothing on the page
    says where the options are ("on the right" is below in a narrow window)."""
    page, errors = _page(browser, *size)
    page.goto(server + "/")
    page.wait_for_selector("select.opponent")
    assert _shown(page, "#setup") and _shown(page, "#start") and _shown(page, "#help summary")
    assert not _shown(page, "#game") and not _shown(page, "#board") and not _shown(page, "#end")
    assert not _shown(page, "#help .help-body")
    page.click("#help summary")
    assert _shown(page, "#help .help-body") and "at least 0, at most 1" in page.inner_text("#help")
    _within_width(page, "#help li")
    page.click("#help summary")
    page.select_option("#players", "2")
    page.fill("#seed", "3")
    page.click("#start")
    page.wait_for_selector("#options button", state="visible")
    assert _shown(page, "#game") and _shown(page, "#board svg") and not _shown(page, "#setup")
    assert not _shown(page, "#end") and not _shown(page, "#error")
    _within_width(page, "#options button")
    _within_width(page, "#board svg")
    body = page.inner_text("body")
    assert "on the right" not in body and "below" not in body
    assert page.inner_text("#status") in ("Your move: choose one of the options (or press its number).",
                                          "Your move: only one option is legal (the options say why).")
    page.screenshot(path=str(SHOTS / f"web-game-{size[0]}.png"), full_page=True)
    page.click("#new-game")
    assert _shown(page, "#setup") and not _shown(page, "#game") and not _shown(page, "#board svg")
    assert not errors, errors
    page.close()


def test_hidden_never_loses_to_a_display_rule(browser, server, tmp_path):
    """The class of the bug above: every element of the play page and of an HTML replay that
    carries ``hidden`` is not displayed, whatever the style sheet says."""
    from bali_env.pictures.html import replay_html

    page, errors = _page(browser)
    page.goto(server + "/")
    page.wait_for_selector("select.opponent")
    shown_hidden = page.evaluate("""() => Array.from(document.querySelectorAll('[hidden]'))
        .filter((e) => getComputedStyle(e).display !== 'none').map((e) => e.id || e.tagName)""")
    assert shown_hidden == [], shown_hidden
    env = __import__("bali_env").raw_env(num_players=2)
    env.reset(seed=1)
    for _ in range(5):
        env.step(env.legal_actions()[0])
    out = tmp_path / "r.html"
    out.write_text(replay_html(env.game_record()))
    page.goto(out.as_uri())
    shown_hidden = page.evaluate("""() => Array.from(document.querySelectorAll('[hidden]'))
        .filter((e) => getComputedStyle(e).display !== 'none').map((e) => e.id || e.tagName)""")
    assert shown_hidden == [] and page.locator("[hidden]").count() >= 1, shown_hidden
    assert not errors, errors
    page.close()


def test_a_single_option_shows_why(browser, server):
    """A decision with one legal option shows, with the option, why it is the only one."""
    page, errors = _page(browser, 420, 860)
    page.goto(server + "/")
    page.select_option("#players", "2")
    page.wait_for_selector("select.opponent")
    page.fill("#seed", "11")
    page.click("#start")
    page.wait_for_selector("#board svg")
    page.select_option("#speed", "150")
    for _ in range(400):
        page.wait_for_function("() => !document.querySelector('#end').hidden || "
                               "document.querySelectorAll('#options button:not([disabled])').length > 0",
                               timeout=60_000)
        if page.locator("#end").is_visible():
            raise AssertionError("no single-option decision in this game")
        buttons = page.locator("#options button:not([disabled])")
        if buttons.count() == 1:
            assert _shown(page, "#only") and page.inner_text("#only").startswith("Only one option: ")
            assert "only one option is legal" in page.inner_text("#status")
            break
        assert not _shown(page, "#only")
        buttons.last.click()
    assert not errors, errors
    page.close()
