"""What a first run shows while Numba compiles: the parts ready out of all, the kernels compiled so
far and the seconds, never a time left; the games' bar opens only when the games begin (a whole
first run: tests/test_tournament.py, test_the_compile_notice_is_said_once_and_only_when_kernels_compile)."""

from __future__ import annotations

import multiprocessing as mp

from bali_env.arena import compile_share
from bali_env.arena.run import _GameBar
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
    compile_share(["random", "random"], 2, False, False, 0, 1, said.append)
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
