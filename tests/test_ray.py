"""The Ray tournament backend (``bali_env.arena.ray_backend``): the same results as local workers whatever
the backend, worker count, batch or chunk size; a Ray worker killed mid-run costs nothing (its
chunk is retried, no game lost or counted twice); bad settings fail before any game."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import threading
import time

import pytest

from bali_env.arena import TournamentError, run_tournament
from bali_env.apps.cli import main as cli_main

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance of 2 CPUs for the module (run_tournament joins it and leaves it up)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def _stats(result) -> list[dict]:
    return [{k: v for k, v in p.items()} for p in result.participants]


@pytest.mark.slow
def test_results_are_identical_across_backends_workers_and_chunks(local_ray, tmp_path):
    """Local with 1 and 2 workers and two batch sizes, Ray with two chunk sizes: the same
    statistics and the same game records (scores, winners, decisions) for the same seed."""
    setup = {"agents": ["greedy", "random", "mcts:sims=20"], "num_players": 3, "games": 12, "seed": 5,
             "oracle": True, "progress": False}
    runs = {
        "local w1": run_tournament(workers=1, **setup),
        "local w2 batch 2": run_tournament(workers=2, batch_size=2, **setup),
        "ray chunk 3": run_tournament(backend="ray", chunk_size=3, out_dir=tmp_path / "a", **setup),
        "ray chunk 7": run_tournament(backend="ray", chunk_size=7, **setup),
    }
    first = runs["local w1"]
    assert [r.config["played"] for r in runs.values()] == ["in-process", "2 worker processes", "ray", "ray"]
    for name, result in runs.items():
        assert _stats(result) == _stats(first), name
        assert result.games == first.games, name
    journal = (tmp_path / "a" / "journal.jsonl").read_text().splitlines()
    assert len(journal) == 1 + 12  # the header, then every game once


SLOW_BOT = textwrap.dedent('''
    import os, time
    from pathlib import Path
    import numpy as np
    from bali_env.bots.base import Agent

    class SlowRandom(Agent):
        """A random player that takes 5 ms a decision and leaves its process id in ``marks``."""
        batched = False
        def __init__(self, seed=None, marks="."):
            super().__init__(seed)
            self.marks = Path(marks)
        def act(self, observation, action_mask):
            (self.marks / str(os.getpid())).touch()
            time.sleep(0.005)
            legal = np.flatnonzero(action_mask)
            return int(legal[self.rng.integers(len(legal))])
''')


@pytest.mark.slow
def test_a_ray_worker_killed_mid_run_costs_nothing(local_ray, tmp_path):
    """SIGKILL one Ray worker while it plays a chunk: Ray retries the chunk, and the tournament
    ends with exactly the results of an undisturbed local run (no game lost, none twice)."""
    bot = tmp_path / "slow_bot.py"
    bot.write_text(SLOW_BOT)
    marks = tmp_path / "marks"
    marks.mkdir()
    spec = f"{bot}:SlowRandom:marks={marks}"
    setup = {"agents": [spec, "greedy"], "num_players": 2, "games": 12, "seed": 2, "progress": False}
    killed: list[int] = []

    def kill_first_worker() -> None:
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            pids = [int(p.name) for p in marks.iterdir() if int(p.name) != os.getpid()]
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.05)

    killer = threading.Thread(target=kill_first_worker, daemon=True)
    killer.start()
    result = run_tournament(backend="ray", chunk_size=2, out_dir=tmp_path / "run", **setup)
    killer.join(timeout=5)
    assert killed, "no Ray worker was seen playing"
    reference = run_tournament(workers=1, **setup)
    assert _stats(result) == _stats(reference)
    assert [g["game"] for g in result.games] == list(range(12))
    assert result.games == reference.games


def test_bad_ray_settings_fail_before_any_game(tmp_path, capsys, monkeypatch):
    """An unreachable --ray-address fails in seconds with one line; --backend takes only the
    listed values; Ray options need the ray backend; a missing Ray names the extra."""
    t0 = time.time()
    with pytest.raises(TournamentError, match="cannot reach the Ray cluster at 127.0.0.1:1"):
        run_tournament(["greedy", "random"], num_players=2, games=2, backend="ray", ray_address="127.0.0.1:1",
                       out_dir=tmp_path / "x", progress=False)
    assert time.time() - t0 < 10 and not (tmp_path / "x").exists()
    with pytest.raises(TournamentError, match="HOST:PORT"):
        run_tournament(["greedy", "random"], num_players=2, games=2, backend="ray", ray_address="nowhere")
    with pytest.raises(TournamentError, match="backend must be one of 'local', 'ray'"):
        run_tournament(["greedy", "random"], num_players=2, games=2, backend="dask")
    with pytest.raises(TournamentError, match="need backend='ray'"):
        run_tournament(["greedy", "random"], num_players=2, games=2, chunk_size=4)
    with pytest.raises(TournamentError, match="chunk_size"):
        run_tournament(["greedy", "random"], num_players=2, games=2, backend="ray", chunk_size=0)
    assert cli_main(["tournament", "--agents", "greedy", "random", "--players", "2", "--backend", "ray",
                     "--ray-address", "127.0.0.1:1", "--out", str(tmp_path / "y")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("bali tournament: error: cannot reach the Ray cluster")
    with pytest.raises(SystemExit):
        cli_main(["tournament", "--agents", "greedy", "random", "--backend", "dask"])
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(TournamentError, match=r'pip install "bali-env\[ray\]"'):
        run_tournament(["greedy", "random"], num_players=2, games=2, backend="ray")


@pytest.mark.slow
def test_bot_programs_on_ray(local_ray, tmp_path):
    """A cmd: bot (seeded from its keys) and a bot that crashes in every third game play on Ray
    as on local workers: the same games, the same forfeits, the bots' logs in the results."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bot = f"cmd:{sys.executable} {os.path.join(root, 'agents', 'random_bot.py')}"
    faulty = f"cmd:{sys.executable} {os.path.join(root, 'tests', 'faulty_bot.py')} crash 5 3"
    setup = {"agents": [bot, faulty, "greedy"], "num_players": 2, "games": 12, "seed": 3, "progress": False}
    local = run_tournament(workers=2, **setup)
    on_ray = run_tournament(backend="ray", chunk_size=4, out_dir=tmp_path / "r", **setup)
    assert on_ray.games == local.games and _stats(on_ray) == _stats(local)
    assert any(g.get("forfeit", {}).get("reason") == "crash" for g in on_ray.games)
    assert sorted(p.name for p in (tmp_path / "r" / "logs").iterdir()) == ["faulty-crash.log", "random-py.log"]
