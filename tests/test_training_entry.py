"""The shape both training commands share (``bali_env.training.entry``, ``bali_env.training.options``): exit codes
(2 for bad input, 130 for an interrupt, 0 otherwise), nothing created by a rejected command line,
one output folder per run (a new one without ``--out``; an ``--out`` claimed exclusively, so two
runs started at once never share a folder), the clean stop's flag, and the run's counters as the
checkpoint saves them (old checkpoints still load)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import bali_env.training.train as train_module
from bali_env.training.entry import TrainingError, run_command
from bali_env.training.options import claim_out
from bali_env.training.progress import StopOnSignals
from bali_env.training.train import parse_args
from bali_env.training.train import run_argv as main

ROOT = Path(__file__).resolve().parent.parent


def _at_once(count: int, job) -> list:
    """Run ``job()`` in ``count`` threads released together; each one's result or exception."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = job()
        except Exception as exc:  # noqa: BLE001 - the test looks at what each thread got
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_runs_without_out_get_a_new_folder_each(tmp_path, monkeypatch):
    """Without --out, runs started at once each get their own new folder runs/bali-DATE-TIME[-N]
    holding their own complete config.json."""
    monkeypatch.chdir(tmp_path)
    folders = _at_once(4, lambda: claim_out(parse_args(["--seed", "3"]), "bali"))
    assert all(isinstance(f, Path) for f in folders), folders
    assert len(set(folders)) == 4
    for folder in folders:
        assert folder.parent == Path("runs") and folder.name.startswith("bali-")
        config = json.loads((folder / "config.json").read_text())
        assert config["out"] == str(folder) and config["seed"] == 3
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted(f.name for f in folders)


def test_two_runs_into_the_same_new_out_one_wins(tmp_path):
    """Two runs given the same new --out at once: both pass the checks (nothing is there yet), one
    claims the folder, the other stops with one line naming --resume, having written nothing."""
    for k in range(10):
        out = tmp_path / f"run{k}"
        both = iter([parse_args(["--out", str(out)]) for _ in range(2)])
        results = _at_once(2, lambda both=both: claim_out(next(both), "bali"))
        won = [r for r in results if isinstance(r, Path)]
        lost = [r for r in results if isinstance(r, TrainingError)]
        assert len(won) == 1 and len(lost) == 1, results
        assert "already holds a training run" in str(lost[0]) and "--resume" in str(lost[0])
        assert sorted(p.name for p in out.iterdir()) == ["config.json"]
        assert json.loads((out / "config.json").read_text())["out"] == str(out)


def test_an_out_holding_a_run_keeps_its_message(tmp_path, capsys):
    """A folder that holds a run already: refused by the checks (usage and one line, exit 2), and
    by the claim too (a run that started after the checks passed)."""
    out = tmp_path / "run"
    claim_out(parse_args(["--out", str(out)]), "bali")
    with pytest.raises(SystemExit) as exc:
        parse_args(["--out", str(out)])
    assert exc.value.code == 2
    assert f"--out {str(out)!r} already holds a training run" in capsys.readouterr().err
    args = parse_args(["--out", str(tmp_path / "other")])
    args.out = out
    with pytest.raises(TrainingError, match="already holds a training run"):
        claim_out(args, "bali")


@pytest.mark.parametrize("argv", [["--steps", "0"], ["--opponents", "wizard"], ["--gamma", "2"],
                                  ["--framework", "rllib", "--self-share", "3"]])
def test_a_rejected_command_line_creates_nothing(argv, tmp_path, monkeypatch, capsys):
    """A bad flag, with or without --out: exit 2 naming it, and no folder created (runs/ neither)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and argv[-2] in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*argv, "--out", str(tmp_path / "run")])
    assert list(tmp_path.iterdir()) == []


def test_missing_packages_create_nothing(tmp_path, monkeypatch, capsys):
    """The packages are checked after the flags, before the run claims a folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(train_module, "missing_packages", lambda trainer: ["sb3_contrib"])
    assert main(["--steps", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sb3_contrib not installed" in err[0] and "pip install" in err[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("outcome", "code"), [({"interrupted": False}, 0), ({"interrupted": True}, 130),
                                               (TrainingError("the folder is taken"), 2), (KeyboardInterrupt(), 130)])
def test_exit_codes_of_a_run(outcome, code, tmp_path, monkeypatch, capsys):
    """0 for a run that ended, 130 for one a signal stopped cleanly or a second interrupt ended at
    once, 2 for one that cannot start; an error or an interrupt is one line on stderr."""

    def run(args):
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    monkeypatch.setattr(train_module, "train", run)
    assert main(["--out", str(tmp_path / "run")]) == code
    err = capsys.readouterr().err.strip()
    if isinstance(outcome, TrainingError):
        assert err == "bali train: error: the folder is taken"
    elif isinstance(outcome, KeyboardInterrupt):
        assert err == "bali train: interrupted"


def test_sigterm_outside_the_clean_stop_exits_130(tmp_path, monkeypatch, capsys):
    """SIGTERM while the run starts (before the training loop stops cleanly on it) ends the
    command like Ctrl-C: one line, exit 130, the previous handler back afterwards."""
    before = signal.getsignal(signal.SIGTERM)

    def run(args):
        os.kill(os.getpid(), signal.SIGTERM)
        return {"interrupted": False}

    monkeypatch.setattr(train_module, "train", run)
    assert main(["--out", str(tmp_path / "run")]) == 130
    assert capsys.readouterr().err.strip() == "bali train: interrupted"
    assert signal.getsignal(signal.SIGTERM) is before


def test_run_command_parses_checks_packages_then_runs():
    """``run_command`` calls its pieces in order and stops at the first that fails."""
    calls: list[str] = []

    def step(name, result):
        def call(arg):
            calls.append(name)
            return result
        return call

    assert run_command(["x"], name="t", parse=step("parse", "args"), missing=step("missing", ["torch"]),
                       install="x extra", train=step("train", {})) == 2
    assert calls == ["parse", "missing"]
    calls.clear()
    assert run_command(["x"], name="t", parse=step("parse", "args"), missing=step("missing", []),
                       install="x extra", train=step("train", {})) == 0
    assert calls == ["parse", "missing", "train"]


def test_stop_on_signals_first_signal_stops_second_quits():
    """The first SIGTERM (or SIGINT) sets the flag the loop checks; a second raises
    KeyboardInterrupt; the handlers are put back after the block and the flag stays set."""
    before = signal.getsignal(signal.SIGTERM)
    with StopOnSignals() as stop:
        assert stop.now is False
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.now is True
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert stop.now is True and signal.getsignal(signal.SIGTERM) is before


def test_run_progress_reads_and_writes_the_checkpoint_format():
    """The counters a checkpoint saved before ``RunProgress`` (a plain dict) load unchanged and
    are saved back as the same dict, so old checkpoints resume and new ones look the same."""
    from bali_env.training.loop import RunProgress

    old = {"due": {"snapshot": 2e5, "eval": 3e6}, "eval_rows": [{"steps": 1024, "opponent": "random"}],
           "steps": 1024, "elapsed": 12.5, "loop_seconds": 11.0, "eval_seconds": 2.0, "sessions": 1,
           "interrupted": True}
    progress = RunProgress.from_dict(old)
    assert progress.as_dict() == old and list(progress.as_dict()) == list(old)
    fresh = RunProgress.fresh(parse_args(["--snapshot-every", "500", "--eval-every", "1000"]))
    assert fresh.as_dict() == {"due": {"snapshot": 500, "eval": 1000, "eval_seconds": 0.0}, "eval_rows": [], "steps": 0,
                               "elapsed": 0.0,
                               "loop_seconds": 0.0, "eval_seconds": 0.0, "sessions": 0, "interrupted": False}


def test_training_modules_do_not_import_each_other():
    """No two modules of ``bali_env.training`` import each other, counting imports inside functions."""
    import ast

    folder = ROOT / "bali_env" / "training"
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                deps.add(node.module)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bali_env.training."):
                deps.add(node.module.split(".")[2])
        graph[path.stem] = deps
    pairs = [(a, b) for a in graph for b in graph[a] if a < b and a in graph.get(b, ())]
    assert pairs == []
    assert "train" not in graph["rllib"] and "rllib" in graph["train"]  # --framework rllib: one way only


@pytest.mark.slow
def test_two_training_runs_started_at_once_write_two_complete_folders(tmp_path):
    """Two ``bali train`` processes started together without --out: each writes its own complete
    run folder under runs/ (summary.json, final.npz, config.json naming that folder)."""
    tiny = ["--steps", "256", "--envs", "4", "--n-steps", "64", "--batch-size", "128", "--net", "8",
            "--eval-every", "1e9", "--final-eval-games", "2", "--opponents", "random:1", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "bali_env.apps.cli", "train", *tiny, "--seed", str(k)],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
    folders = sorted((tmp_path / "runs").iterdir())
    assert len(folders) == 2
    for folder in folders:
        assert folder.name.startswith("bali-")
        assert (folder / "final.npz").is_file() and (folder / "eval.csv").is_file()
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["env_steps"] >= 256 and summary["policy"] == str(Path("runs") / folder.name / "final.npz")
        assert json.loads((folder / "config.json").read_text())["out"] == str(Path("runs") / folder.name)
    assert {json.loads((f / "config.json").read_text())["seed"] for f in folders} == {0, 1}
