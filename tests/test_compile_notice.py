"""What a first run shows while Numba compiles: the parts ready out of all, the kernels compiled so
far and the seconds, never a time left; the games' bar opens only when the games begin (a whole
first run: tests/test_tournament.py, test_the_compile_notice_is_said_once_and_only_when_kernels_compile)."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from bali_env.arena import compile_share
from bali_env.engine import GameConfig
from bali_env.arena.tournament import _GameBar
from bali_env.arena.workers import CompileNotice, _next_parts, compile_parts, part_label


def test_the_notice_says_how_far_on_a_log_file(capsys):
    notice = CompileNotice(parts=3)
    notice.part_ready("the game")  # ready before any compile: said nowhere (the notice is not shown)
    notice.show()
    notice.kernels(0, 40)
    notice.kernels(1, 17)
    notice.kernels(1, 12)  # an older count of the same worker changes nothing
    notice.part_ready("mcts")
    assert "2/3 parts ready, 57 kernels compiled" in notice.text()
    notice.stop()
    notice.part_ready("ppo")  # after stop: silent
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "compiling the game kernels (first run only; cached afterwards)"
    assert err[1].startswith("  ready: mcts (2/3 parts ready, 57 kernels compiled, ") and err[1].endswith(" s)")
    assert len(err) == 2 and not any("left" in line or "<" in line for line in err)


def test_a_disabled_notice_says_nothing(capsys):
    notice = CompileNotice(enabled=False, parts=2)
    notice.show()
    notice.part_ready("the game")
    notice.stop()
    assert capsys.readouterr().err == ""


def test_the_bar_opens_when_the_games_begin():
    made = []
    bar = _GameBar(lambda: made.append(object()) or _Counter())
    with bar:
        assert made == []  # compiling: no bar, no rate
        bar.open()
        bar.open()
        bar.update(3)
    assert len(made) == 1 and bar._bar.n == 3 and bar._bar.closed


class _Counter:
    def __init__(self):
        self.n, self.closed = 0, False

    def update(self, k):
        self.n += k

    def close(self):
        self.closed = True


def test_parts_go_to_the_first_free_worker():
    counter = mp.get_context("spawn").Value("i", 0)
    first = _next_parts(5, 0, 2, counter)
    second = _next_parts(5, 1, 2, counter)
    taken = [next(first), next(second), next(second), next(first), next(second)]
    assert taken == [0, 1, 2, 3, 4] and list(first) == [] and list(second) == []
    assert list(_next_parts(5, 1, 2)) == [1, 3]  # no counter: round-robin
    assert [part_label(p) for p in compile_parts(["ppo", "mcts", "ppo"])] == ["the game", "ppo", "mcts"]


def test_compile_share_says_each_part_ready():
    said = []
    compile_share(["random", "random"], GameConfig(2), 0, 1, said.append)
    assert said == ["the game", "random"]


def test_the_notice_stops_when_every_worker_is_past_the_barrier(capsys):
    """A worker's messages arrive in order, but not in order with another's: a part said ready by
    worker 0 after worker 1 passed the barrier is still shown, and the bar opens once, at the end."""
    from bali_env.arena.workers import _take

    notice, opened, ready = CompileNotice(parts=2), [], (set(), 2)
    for message in [("compiling", 0, 1), ("part", 1, "greedy"), ("ready", 1, None), ("part", 0, "the game"),
                    ("ready", 0, None)]:
        _take(message, set(), lambda recs: None, notice, lambda: opened.append(1), ready)
        assert opened == ([1] if message == ("ready", 0, None) else [])
    err = capsys.readouterr().err
    assert "  ready: greedy (1/2" in err and "  ready: the game (2/2 parts ready" in err


LIBRARY_PROBE = ("import numpy as np; from bali_env import engine as E; "
                 "rng = np.zeros(1, np.uint64); E.rng_next(rng); E.shuffle(rng, np.arange(5), 0, 5); print('ok')")


def _library_run(cache: str) -> str:
    """Use two kernels of the engine in a fresh process with Numba's cache in ``cache``: its stderr."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", LIBRARY_PROBE], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    return out.stderr


@pytest.mark.slow
def test_the_library_says_once_that_it_compiles_and_nothing_once_cached(tmp_path):
    """Used from Python (no ``bali`` command), a first use that compiles says so in one line on
    stderr, once however many kernels compile (before: two minutes without a word); the next
    process loads the kernels from the cache and says nothing."""
    from bali_env.engine.compile_notice import NOTICE

    first = _library_run(str(tmp_path))
    assert first.splitlines().count(NOTICE) == 1 and "compiling" not in first.replace(NOTICE, ""), first
    assert "compiling" not in _library_run(str(tmp_path))


def test_a_tournament_notice_quiets_the_librarys(caplog):
    """A tournament's notice (with its progress; or nothing, without) speaks for the process: the
    library's own line is not said beside it. The line is for ``bali_env``'s kernels only."""
    import logging

    import bali_env.engine.compile_notice as library
    from bali_env.engine import rng_next

    ours = type("Event", (), {"data": {"dispatcher": rng_next}})()
    theirs = type("Event", (), {"data": {"dispatcher": type("D", (), {"py_func": len})()}})()
    said = library._state["said"]
    caplog.set_level(logging.WARNING, logger="bali_env.compile")
    try:
        library._state["said"] = False
        library._compiling(theirs)  # another library's kernel: not ours to announce
        assert caplog.text == ""
        library._compiling(ours)
        library._compiling(ours)
        assert caplog.text.count(library.NOTICE) == 1
        caplog.clear()
        for enabled in (True, False):
            library._state["said"] = False
            CompileNotice(enabled=enabled, parts=2)
            library._compiling(ours)
            assert caplog.text == ""
    finally:
        library._state["said"] = said
