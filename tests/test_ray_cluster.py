"""A Ray cluster started with ``ray start --head`` (as the README's "Scaling out" section says),
joined with ``--ray-address``: a tournament gives the local backend's results and an RLlib run
trains on it; without the cluster's token the run stops with one line saying what to export.
(Its own module: ``ray stop`` ends every Ray process of this user, so nothing else may use Ray
meanwhile.)"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parent.parent
RLLIB = [sys.executable, "-m", "bali_env.apps.cli", "train", "--framework", "rllib"]  #: the RLlib trainer
RAY = str(Path(sys.executable).parent / "ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_tournament_and_rllib_training_on_a_started_cluster(tmp_path):
    from bali_env.arena import run_tournament

    port = _free_port()
    subprocess.run([RAY, "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
                    "--disable-usage-stats"], check=True, capture_output=True, text=True, timeout=120)
    try:
        token = subprocess.run([RAY, "get-auth-token"], capture_output=True, text=True, timeout=60)
        lines = token.stdout.strip().splitlines()
        env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=lines[-1]) if token.returncode == 0 and lines \
            else dict(os.environ)
        address = f"127.0.0.1:{port}"
        setup = ["--agents", "greedy", "random", "--players", "2", "--games", "12", "--seed", "3", "--no-progress"]
        played = subprocess.run([sys.executable, "-m", "bali_env.apps.cli", "tournament", *setup, "--backend", "ray",
                                 "--ray-address", address, "--out", str(tmp_path / "t")],
                                cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert played.returncode == 0, played.stderr[-3000:]
        on_cluster = json.loads((tmp_path / "t" / "results.json").read_text())
        assert on_cluster["config"]["played"] == "ray"
        local = run_tournament(["greedy", "random"], num_players=2, games=12, seed=3, workers=1, progress=False)
        assert on_cluster["participants"] == json.loads(json.dumps(local.participants))
        assert on_cluster["games"] == json.loads(json.dumps(local.games))

        trained = subprocess.run([*RLLIB, "--ray-address", address, "--steps", "1500",
                                  "--envs-per-runner", "8", "--batch-size", "1000", "--minibatch-size", "250",
                                  "--net", "16", "--eval-every", "1e9", "--final-eval-games", "2", "--no-progress",
                                  "--out", str(tmp_path / "r")], cwd=ROOT, env=env, capture_output=True, text=True,
                                 timeout=600)
        assert trained.returncode == 0, trained.stderr[-3000:]
        assert json.loads((tmp_path / "r" / "summary.json").read_text())["env_steps"] >= 1500

        if "RAY_AUTH_TOKEN" in env:  # the same run without the token: one line naming what to export
            bare = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
            refused = subprocess.run([*RLLIB, "--ray-address", address,
                                      "--out", str(tmp_path / "refused")], cwd=ROOT, env=bare, capture_output=True,
                                     text=True, timeout=300)
            assert refused.returncode == 2
            assert "RAY_AUTH_TOKEN" in refused.stderr and "Traceback" not in refused.stderr
            assert not (tmp_path / "refused").exists()
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)
