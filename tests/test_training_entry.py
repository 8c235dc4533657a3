"""The shape both training commands share (``bali_env.trainers.entry``, ``bali_env.trainers.options``): exit codes
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

import bali_env.trainers.ppo_selfplay.train as train_module
from bali_env.trainers.entry import TrainingError, run_command
from bali_env.trainers.options import claim_out
from bali_env.trainers.progress import StopOnSignals
from bali_env.trainers.ppo_selfplay.train import parse_args
from bali_env.trainers.ppo_selfplay.train import run_argv as main

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
    """A folder that holds a run already: refused by the checks (one line, exit 2), and by the
    claim too (a run that started after the checks passed)."""
    out = tmp_path / "run"
    claim_out(parse_args(["--out", str(out)]), "bali")
    with pytest.raises(SystemExit) as exc:
        parse_args(["--out", str(out)])
    assert exc.value.code == 2
    assert f"--out {str(out)!r} holds an unfinished training run (config.json)" in capsys.readouterr().err
    args = parse_args(["--out", str(tmp_path / "other")]).with_out(out)
    with pytest.raises(TrainingError, match="already holds a training run"):
        claim_out(args, "bali")


def test_an_out_follows_the_rule_of_every_output_folder(tmp_path, capsys):
    """``bali train --out OUT`` (``bali_env.files.check_out_folder``): a finished run is never
    replaced without ``--overwrite``; an interrupted one is continued with ``--resume OUT``;
    ``--overwrite`` removes the earlier run's files, and only those (before: no ``--overwrite``)."""
    out = tmp_path / "run"
    claim_out(parse_args(["--out", str(out)]), "bali")
    (out / "summary.json").write_text(json.dumps({"interrupted": False}))
    (out / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit):
        parse_args(["--out", str(out)])
    assert "holds a finished training run (summary.json): give --overwrite" in capsys.readouterr().err
    (out / "summary.json").write_text(json.dumps({"interrupted": True}))
    (out / "resume.pt").write_bytes(b"x")
    with pytest.raises(SystemExit):
        parse_args(["--out", str(out)])
    assert f"continue it with --resume {str(out)!r}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--out", str(out), "--resume", str(out), "--overwrite"])
    args = parse_args(["--out", str(out), "--overwrite", "--seed", "5"])
    assert claim_out(args, "bali") == out
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "notes.txt"]
    assert json.loads((out / "config.json").read_text())["seed"] == 5


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
    are saved back as the same dict, with the fields added since at their defaults (``eval_rate``:
    not timed yet), so old checkpoints resume."""
    from bali_env.trainers.ppo_selfplay.loop import RunProgress

    old = {"due": {"snapshot": 2e5, "eval": 3e6}, "eval_rows": [{"steps": 1024, "opponent": "random"}],
           "steps": 1024, "elapsed": 12.5, "loop_seconds": 11.0, "eval_seconds": 2.0, "sessions": 1,
           "interrupted": True}
    progress = RunProgress.from_dict(old)
    assert progress.as_dict() == old | {"eval_rate": 0.0} and list(progress.as_dict())[:-1] == list(old)
    fresh = RunProgress.fresh(parse_args(["--snapshot-every", "500", "--eval-every", "1000"]))
    assert fresh.as_dict() == {"due": {"snapshot": 500, "eval": 1000, "eval_seconds": 0.0}, "eval_rows": [], "steps": 0,
                               "elapsed": 0.0,
                               "loop_seconds": 0.0, "eval_seconds": 0.0, "sessions": 0, "interrupted": False,
                               "eval_rate": 0.0}


def test_training_modules_do_not_import_each_other():
    """No two modules of ``bali_env.trainers`` import each other (``tests/test_imports.py`` finds
    circles of any length), and ``--framework rllib`` is handed one way only: ``bali train``'s
    module imports RLlib's command, never the reverse."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from test_imports import circles, import_graph, project_modules

    graph = import_graph(project_modules())
    trainers = {m: {t for t in ts if t.startswith("bali_env.trainers")} for m, ts in graph.items()
                if m.startswith("bali_env.trainers")}
    assert circles(trainers) == []
    assert "bali_env.trainers.rllib.launch" in trainers["bali_env.trainers.ppo_selfplay.train"]
    assert not any(t.startswith("bali_env.trainers.ppo_selfplay") for m, ts in trainers.items()
                   if m.startswith("bali_env.trainers.rllib") for t in ts)


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


@pytest.mark.parametrize(("flag", "value", "dest"), [("--final-eval-games", "0", "final_eval_games"),
                                                     ("--eval-every", "0", "eval_every")])
def test_evaluations_can_be_switched_off(flag, value, dest, tmp_path):
    """``--final-eval-games 0`` (no final evaluation) and ``--eval-every 0`` (none on the way) are
    accepted (before: refused as not positive); a negative count is still refused."""
    args = parse_args([flag, value, "--out", str(tmp_path / "run")])
    assert getattr(args, dest) == 0
    with pytest.raises(SystemExit):
        parse_args([flag, "-1", "--out", str(tmp_path / "run")])


def test_evaluations_default_to_several_points_a_run():
    """Without --eval-every a run evaluates every min(1e6, --steps/5) steps (before: every 1e6,
    more than a short run's steps: a curve of one point), and under --minutes also every fifth of
    the training time."""
    from bali_env.trainers.ppo_selfplay.loop import RunProgress
    from bali_env.trainers.options import eval_interval

    assert eval_interval(parse_args(["--steps", "3000"])) == 600
    assert eval_interval(parse_args([])) == 1e6
    assert eval_interval(parse_args(["--eval-every", "0"])) == float("inf")
    assert eval_interval(parse_args(["--eval-every", "5000"])) == 5000
    assert RunProgress.fresh(parse_args(["--steps", "3000"])).due["eval"] == 600


class _Fake:
    """Just enough of a model and env for ``Session``'s clock (no training)."""

    num_timesteps = 0
    episode_returns = [1.0, -1.0, 1.0, 1.0]
    policy = None


def _session(argv, **progress):
    from bali_env.trainers.ppo_selfplay.loop import RunProgress, Session

    args = parse_args(argv)
    run = RunProgress.fresh(args)
    for key, value in progress.items():
        setattr(run, key, value)
    return Session(args, _Fake(), _Fake(), None, run, ".zip")


def test_minutes_is_the_whole_run_the_final_evaluation_included():
    """With --minutes the training stops early enough for the final evaluation, timed by the latest
    evaluation, to end within the budget (before: training used all of --minutes and the final
    evaluation came after it, 65 s more in a 2-minute run); without a final evaluation, or
    without a time limit, nothing is kept."""
    session = _session(["--minutes", "2", "--final-eval-games", "1000"], eval_rate=0.01)
    assert session.final_seconds() == pytest.approx(20.0)  # 1,000 games against each of random and greedy
    assert session.train_until() == pytest.approx(120 - 20 - 2.0)
    assert _session(["--minutes", "2", "--final-eval-games", "0"], eval_rate=0.01).train_until() == 120
    assert _session(["--minutes", "2"], eval_rate=0.1).train_until() == 90  # training keeps 3/4 of the budget
    assert _session(["--steps", "1e4"], eval_rate=0.01).train_until() == float("inf")
    untimed = _session(["--minutes", "2"])
    assert untimed.first_evaluation()  # times the evaluation before training, as the curve's first point
    assert not _session(["--steps", "1e4", "--eval-every", "0", "--final-eval-games", "0"]).first_evaluation()
    assert not _session(["--minutes", "2"], eval_rate=0.01, steps=5000, eval_rows=[{"steps": 0}]).first_evaluation()


def test_the_clock_schedule_gives_five_points_under_minutes():
    """Without --eval-every, a --minutes run evaluates every fifth of its training time."""
    session = _session(["--minutes", "2", "--final-eval-games", "1000"], eval_rate=0.01)
    session.clock_schedule()
    assert session.every == pytest.approx((120 - 22) / 5, abs=0.5)
    assert session.progress.due["eval_seconds"] == pytest.approx(session.every, abs=0.5)
    slow = _session(["--minutes", "2"], eval_rate=0.05)  # an evaluation takes 20 s: at most every 80 s
    slow.clock_schedule()
    assert slow.every == pytest.approx(80)
    fixed = _session(["--minutes", "2", "--eval-every", "1e5"], eval_rate=0.01)
    fixed.clock_schedule()
    assert fixed.every == 0  # --eval-every given: by steps only
    by_clock = _session(["--minutes", "2", "--eval-minutes", "0.5"])
    by_clock.clock_schedule()
    assert by_clock.every == 30


def test_the_bar_shows_the_return_and_the_latest_win_rates():
    """The training bar's postfix: steps, the mean return of the recent games, the latest
    evaluation's win rates (before: steps only)."""
    from bali_env.trainers.console import bar_postfix

    rows = [{"steps": 0, "opponent": "random", "win_rate": 0.5}, {"steps": 0, "opponent": "greedy", "win_rate": 0.0},
            {"steps": 512, "opponent": "random", "win_rate": 0.875}, {"steps": 512, "opponent": "greedy",
                                                                       "win_rate": 0.25}]
    assert bar_postfix(1024, [1.0, -1.0, 1.0, 1.0], rows) == "1,024 steps, return +0.50, 88% vs random, 25% vs greedy"
    assert bar_postfix(10, [], []) == "10 steps"
    assert _session(["--steps", "1e4"]).describe() == "0 steps, return +0.50"


@pytest.mark.parametrize("players", [2, 4])
def test_a_run_ends_saying_what_it_made_and_how_to_play_it(players, tmp_path):
    """The last lines: what was written, the key figures in words, the command that plays the
    policy (before: summary.json printed raw); an interrupted run says how to go on."""
    from bali_env.trainers.console import end_lines

    (tmp_path / "final.npz").write_bytes(b"x")
    (tmp_path / "summary.json").write_text("{}")
    final = [{"steps": 1000, "opponent": "random", "win_rate": 0.885, "ci_low": 0.864, "ci_high": 0.904,
              "games": 1000}, {"steps": 1000, "opponent": "greedy", "win_rate": 0.188, "ci_low": 0.165,
                               "ci_high": 0.213, "games": 1000}]
    summary = {"env_steps": 762368, "train_seconds": 60.0, "wall_seconds": 107.0, "env_steps_per_s": 12706.1,
               "final": final, "interrupted": True}
    lines = end_lines(summary, tmp_path, players=players, files=("final.npz", "learning_curve.png", "summary.json"),
                      returns=[1.0, -1.0], resume=f"bali train --resume {tmp_path}")
    assert lines[0] == f"wrote: {tmp_path} (final.npz, summary.json)"
    assert lines[1] == ("762,368 env steps in 1 min of training (12,706 steps/s), 1 min 47 s in all; mean return "
                        "of the last 2 training games +0.00")
    assert lines[2] == (f"the final policy won 88.5% [86.4%, 90.4%] against random and 18.8% [16.5%, 21.3%] against "
                        f"greedy (1,000 games each; equal share {1 / players:.0%})")
    assert lines[3] == f"interrupted: continue it with bali train --resume {tmp_path}"
    greedy = " greedy" * (players - 1)
    assert lines[4] == (f"play it: bali tournament --agents ppo:path={tmp_path / 'final.npz'}{greedy} "
                        f"--players {players} --games 400")
    assert not any(line.lstrip().startswith("{") for line in lines)
    quiet = end_lines(summary | {"final": [], "interrupted": False}, tmp_path, players=players, files=(),
                      returns=[], resume="")
    assert quiet[2].startswith("no final evaluation (--final-eval-games 0)") and len(quiet) == 4


def test_the_plan_says_what_the_final_evaluation_adds():
    """Before training the run says its plan: the budget, the evaluations, the final one with its
    estimate and how to skip it."""
    from bali_env.trainers.console import Budget, FinalEval, duration, plan_line, short_of_budget, spent

    line = plan_line(Budget(minutes=2, steps=1e8, train_seconds=99),
                     FinalEval(games=1000, opponents=["random", "greedy"], seconds=20), eval_seconds=19.8,
                     eval_steps=1e6)
    assert line == ("2 min in all (--minutes 2); training for about 1 min 39 s; evaluating every 20 s and every "
                    "1,000,000 env steps of it; then the final evaluation (1,000 games against each of random and "
                    "greedy, up to about 20 s), within the budget (--final-eval-games 0 skips it)")
    off = plan_line(Budget(minutes=0, steps=3000, train_seconds=None), FinalEval(games=0, opponents=["greedy"],
                                                                                 seconds=None))
    assert off == ("training for 3,000 env steps (--steps; no time limit); no evaluation on the way (--eval-every 0); "
                   "no final evaluation (--final-eval-games 0)")
    assert short_of_budget(0.5, 7) is None and "more than 25% of --minutes 0.5" in short_of_budget(0.5, 8)
    assert spent(2, 10, 100) is None and "so about 20 s are left for training" in spent(2, 90, 20)
    assert [duration(s) for s in (0.4, 59.6, 60, 107, 3900)] == ["0 s", "1 min", "1 min", "1 min 47 s", "1 h 05 min"]


def test_distil_self_play_has_a_bar(monkeypatch):
    """``bali distil``'s first phase, self-play of ``--games`` games (10,000 in the docs' command),
    shows a bar with ``--progress`` (before: a minute or more without a word)."""
    import numpy as np

    import bali_env.trainers.finetune.fit_value as value
    from bali_env.trainers.finetune.distil import positions

    seen = {}

    def self_play(policy, num_players, games, seed, keep=0.25, envs=256, progress=False, raw=False):
        seen["progress"] = progress
        return {"action_mask": np.ones((2, 3), dtype=bool)}

    monkeypatch.setattr(value, "self_play", self_play)
    assert len(positions(None, 2, 10, 0, 0.5, progress=True)["key"]) == 2
    assert seen["progress"] is True


def test_the_plan_and_the_bar_say_the_same_training_time(capsys):
    """Under --minutes the training bar counts seconds from the run's start up to when training
    stops; the plan names that same moment (before: it said only the time left from now, 1 min 04 s,
    while the bar counted to 90 s)."""
    import time

    from bali_env.trainers.console import duration

    session = _session(["--minutes", "2"], eval_rate=0.1)  # the final evaluation keeps a quarter: 90 s of training
    session.start = time.time() - 26  # 26 s of starting (the model, the first evaluation)
    session.announce()
    plan = capsys.readouterr().err
    assert session.bar_total() == pytest.approx(90)
    assert f"training until {duration(session.bar_total())} into the run (about 1 min 04 s from now)" in plan


def test_a_bad_train_flag_is_one_line_of_usage_and_one_of_error(tmp_path, capsys):
    """``bali train --minutes -1``: the short usage and the error, two lines (before: the whole
    17-line usage, from bali train's own parser)."""
    from bali_env.apps.cli import main as bali

    with pytest.raises(SystemExit) as exc:
        bali(["train", "--minutes", "-1", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.splitlines()
    assert exc.value.code == 2 and len(err) == 2, err
    assert err[0] == "usage: bali train [options]; see 'bali train --help'"
    assert err[1].startswith("bali train: error: --minutes must be >= 0")
    assert not (tmp_path / "run").exists()


def test_the_help_shows_whole_number_defaults_as_integers(capsys):
    """``bali train --help``: ``--steps``' default is 100000000, not 100000000.0 (read as a float, 1e8)."""
    from bali_env.apps.cli import main as bali

    assert bali(["train", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "total learner env steps (default: 100000000)" in text and "100000000.0" not in text
    assert "(default: 0.0003)" in text and not any(f"{n}.0)" in text for n in ("100000", " 0"))
