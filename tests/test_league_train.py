"""``bali league-train``: the settings are checked once (a bad flag is one line, exit 2, nothing
written), the PFSP weights are AlphaStar's "hard" weighting with a floor, a generation writes
its networks, league.json and pictures, and the run is the same bit for bit when resumed after a
stop, on two workers, and on Ray."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bali_env.apps.cli import main as cli_main
from bali_env.trainers.league_training import job_pool
from bali_env.trainers.league_training.candidates import best_candidate, reference_baseline
from bali_env.trainers.league_training.league_jobs import job_seed
from bali_env.trainers.league_training.league_plots import payoff_matrix
from bali_env.trainers.league_training.league_settings import LeagueTrainSettings
from bali_env.trainers.league_training.payoff import PAYOFF_SEEDS, payoff_seed, pooled
from bali_env.trainers.league_training.pfsp import SELF, opponents_text, pfsp_weights

pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parent.parent
#: a run as small as a run gets: 1,024 env steps a job (one rollout of 16 games), 4 games a match, an anchor
TINY = ["--main-steps", "1024", "--exploiter-steps", "1024", "--envs", "16", "--batch-size", "256",
        "--eval-games", "4", "--anchors", "random", "--no-progress"]
YARDSTICK = ["--yardstick-steps", "1024", "--yardstick-games", "4"]


def league(*argv: str) -> int:
    """``bali league-train ARGV``'s exit code (SystemExit(2) for a bad argument)."""
    return cli_main(["league-train", *argv])


def fingerprint(folder: Path) -> dict[str, object]:
    """What a run computed: every network's arrays, the payoff rows, each job's figures (not its
    seconds) and league.csv."""
    found: dict[str, object] = {}
    for path in sorted(folder.glob("*.npz")):
        with np.load(path) as z:
            found[path.name] = {k: z[k].tobytes() for k in z.files if k != "meta"}
    data = json.loads((folder / "league.json").read_text())
    found["payoff"] = data["payoff"]
    found["jobs"] = {name: {k: v for k, v in job.items() if k != "seconds"} for name, job in data["jobs"].items()}
    found["league.csv"] = (folder / "league.csv").read_text()
    return found


@pytest.fixture(scope="module")
def one_generation(tmp_path_factory) -> Path:
    """A finished 1-generation run in this process (the shipped 2-player policy as main_0)."""
    out = tmp_path_factory.mktemp("league") / "one"
    assert league("--generations", "1", "--workers", "1", "--out", str(out), *TINY, *YARDSTICK) == 0
    return out


# ---------------------------------------------------------------------------------------- the settings
@pytest.mark.parametrize(("argv", "says"), [
    (["--generations", "0"], "--generations must be a whole number of at least 1"),
    (["--main-steps", "1.5"], "--main-steps must be a whole number"),
    (["--exploiters", "0"], "--exploiters must be a whole number of at least 1"),
    (["--pfsp-floor", "1.5"], "--pfsp-floor must be a number in [0, 1)"),
    (["--pfsp", "soft"], "argument --pfsp: invalid choice"),
    (["--exploiter-start", "old"], "argument --exploiter-start: invalid choice"),
    (["--init", "nowhere.npz"], "--init 'nowhere.npz': no such file"),
    (["--init", "README.md"], "--init 'README.md'"),
    (["--baselines", "greedy,nobody"], "--baselines 'nobody'"),
    (["--baselines", "greedy,greedy"], "--baselines must name agents, each once"),
    (["--anchors", "random,nobody"], "--anchors 'nobody'"),
    (["--anchors", "random,greedy"], "--anchors 'greedy': already a baseline"),
    (["--torch-threads", "0"], "--torch-threads must be a whole number of at least 1"),
    (["--resume", "nowhere"], "no readable league.json"),
])
def test_bad_flags_are_one_line_exit_2_and_write_nothing(tmp_path, capsys, monkeypatch, argv, says):
    monkeypatch.chdir(ROOT if "README.md" in argv else tmp_path)
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exc:
        league(*(argv if "--resume" in argv else ["--out", str(out), *argv]))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not out.exists() and not (tmp_path / "runs").exists()


def test_the_record_checks_each_field_naming_its_flag():
    with pytest.raises(ValueError, match="--players must be 2, 3 or 4"):
        LeagueTrainSettings(players=5)
    with pytest.raises(ValueError, match="--backend must be one of local, ray"):
        LeagueTrainSettings(backend="cluster")
    with pytest.raises(ValueError, match="--yardstick-steps must be a whole number of at least 0"):
        LeagueTrainSettings(yardstick_steps=-1)
    s = LeagueTrainSettings(main_steps=2e6, baselines=["greedy", "random"], anchors=["mcts:sims=100", "ppo"])
    assert s.main_steps == 2_000_000 and isinstance(s.main_steps, int) and s.baselines == ("greedy", "random")
    assert s.anchors == ("mcts:sims=100", "ppo") and LeagueTrainSettings().anchors == ()
    assert LeagueTrainSettings.from_saved(s.as_saved()) == s
    with pytest.raises(ValueError, match="--main-steps: --resume OUT takes the run's settings"):
        LeagueTrainSettings.from_saved(s.as_saved(), main_steps=10)
    assert LeagueTrainSettings.from_saved(s.as_saved(), generations=9, workers=1).generations == 9
    shipped = LeagueTrainSettings(players=4).settled().init
    assert shipped is not None and shipped.endswith("bali_4p.npz") and Path(shipped).is_absolute()


@pytest.mark.slow  # a whole (tiny) run: about 10 s
def test_a_resumed_run_refuses_a_setting_that_changes_what_it_computes(one_generation, capsys):
    with pytest.raises(SystemExit) as exc:
        league("--resume", str(one_generation), "--main-steps", "2048")
    assert exc.value.code == 2 and "only --generations, --workers, --backend, --ray-address may change" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        league("--resume", str(one_generation), "--seed", "3")
    assert exc.value.code == 2 and "--seed" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # a finished run is never replaced without --overwrite
        league("--generations", "1", "--out", str(one_generation), *TINY)
    assert exc.value.code == 2 and "--overwrite" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------- PFSP, seeds, the rule
def test_pfsp_hard_weights_are_the_squared_chance_of_not_winning_with_a_floor():
    w = pfsp_weights({"main_0": 0.7, "exploiter_0": 0.2}, players=2)
    raw = {SELF: 0.25, "main_0": 0.09, "exploiter_0": 0.64}  # (1 - 1/2)², (1 - 0.7)², (1 - 0.2)²
    assert list(w) == [SELF, "main_0", "exploiter_0"]
    assert w == pytest.approx({k: v / 0.98 for k, v in raw.items()}, abs=1e-12)
    floored = pfsp_weights({"main_0": 1.0, "main_1": 0.5}, players=2, floor=0.05)  # main_0 always beaten: the floor
    assert floored == pytest.approx({SELF: 0.25 / 0.55, "main_0": 0.05 / 0.55, "main_1": 0.25 / 0.55}, abs=1e-12)
    four = pfsp_weights({"main_0": 0.25}, players=4)  # a fair share in 4 players: as often as its own self-play
    assert four == pytest.approx({SELF: 0.5, "main_0": 0.5})
    assert pfsp_weights({"a": 0.9, "b": 0.4}, 2, "linear", 0.0) == pytest.approx({SELF: 0.5 / 1.2, "a": 0.1 / 1.2,
                                                                                   "b": 0.6 / 1.2})
    assert pfsp_weights({"a": 0.9}, 2, "even") == pytest.approx({SELF: 0.5, "a": 0.5})
    with pytest.raises(ValueError, match="win rate against 'a'"):
        pfsp_weights({"a": 1.5}, 2)


def test_the_weights_are_a_bali_train_opponents_spec():
    from bali_env.bots.ppo import shipped_policy
    from bali_env.versus.opponents import opponent_weights

    specs = {SELF: f"ppo:path={shipped_policy(2)}", "greedy": "greedy", "random": "random"}
    text = opponents_text({SELF: 0.5, "greedy": 0.3, "random": 0.2}, specs)
    assert opponent_weights(text) == {f"ppo:path={shipped_policy(2)}": 0.5, "greedy": 0.3, "random": 0.2}


def test_each_job_has_its_own_seed_and_the_yardstick_one_seed():
    seeds = {job_seed(0, kind, g, k) for kind in ("main", "exploiter") for g in range(3) for k in range(2)}
    assert len(seeds) == 12 and all(0 <= s < 2**31 for s in seeds)
    assert job_seed(0, "main", 1) == job_seed(0, "main", 1) != job_seed(1, "main", 1)
    assert payoff_seed(0) == PAYOFF_SEEDS[0] == 20_000 and payoff_seed(3) == 20_003
    from bali_env.trainers.evaluation.evaluate import EVAL_SEEDS

    assert not set(PAYOFF_SEEDS) & set(EVAL_SEEDS)  # the payoff matches never deal bali train's evaluations


def test_the_best_main_is_the_least_exploitable_of_those_not_weaker_against_greedy():
    def e(p, low, high):
        return {"win_rate": p, "ci_low": low, "ci_high": high}

    exploitability = {0: e(0.8, 0.75, 0.85), 1: e(0.6, 0.55, 0.65), 2: e(0.5, 0.45, 0.55)}
    greedy = {0: e(0.7, 0.65, 0.75), 1: e(0.72, 0.66, 0.78), 2: e(0.5, 0.44, 0.56)}  # main_2 weaker: left out
    best = best_candidate(exploitability, greedy, last=2, baseline="greedy")
    assert best["generation"] == 1 and best["eligible"] == [0, 1] and "not weaker against greedy" in best["reason"]
    greedy[2] = e(0.68, 0.62, 0.74)  # now within the others' intervals: eligible, and the least exploitable
    assert best_candidate(exploitability, greedy, last=2, baseline="greedy")["generation"] == 2
    assert best_candidate({}, greedy, last=2)["generation"] == 2  # no yardstick: the last main
    assert reference_baseline(("random", "greedy")) == "greedy" and reference_baseline(("random",)) == "random"
    assert reference_baseline(()) is None


def test_the_payoff_matrix_has_a_column_per_opponent_and_pools_the_population():
    rows = [{"main": "main_0", "opponent": "greedy", "kind": "baseline", "win_rate": 0.5, "games": 4},
            {"main": "main_1", "opponent": "main_0", "kind": "main", "win_rate": 0.75, "games": 4},
            {"main": "main_1", "opponent": "exploiter_0", "kind": "exploiter", "win_rate": 0.25, "games": 4},
            {"main": "main_1", "opponent": "greedy", "kind": "baseline", "win_rate": 1.0, "games": 4},
            {"main": "main_1", "opponent": "mcts:sims=100", "kind": "anchor", "win_rate": 0.5, "games": 4}]
    mains, columns, cells = payoff_matrix(rows)
    assert mains == ["main_0", "main_1"] and columns == ["main_0", "exploiter_0", "mcts:sims=100", "greedy"]
    assert cells[0][:2] == [None, None] and cells[1][1]["win_rate"] == 0.25
    population = pooled(rows[1:3])
    assert population is not None and population["games"] == 8 and population["win_rate"] == 0.5
    assert population["ci_low"] < 0.5 < population["ci_high"]


# ---------------------------------------------------------------------------------------- a run
@pytest.mark.slow  # a whole (tiny) run: about 10 s
def test_one_generation_writes_its_networks_league_json_and_pictures(one_generation):
    out = one_generation
    for name in ("main_0.npz", "main_1.npz", "exploiter_0.npz", "best.npz", "league.json", "league.csv",
                 "league.png", "payoff.png", "summary.json", "logs/main_1.log", "jobs/exploiter_0/final.npz"):
        assert (out / name).is_file(), name
    assert not list(out.rglob(".*.tmp"))  # every file moved into place
    data = json.loads((out / "league.json").read_text())
    assert data["settings"]["generations"] == 1 and data["settings"]["main_steps"] == 1024
    assert sorted(data["jobs"]) == ["exploiter_0", "main_1", "yardstick_0", "yardstick_1"]
    assert data["jobs"]["exploiter_0"]["vs_target"]["games"] == 4  # its final evaluation against main_0
    # generation 0: the main's self-play and the anchor, weighed by main_0's row against the anchor
    first = {e["opponent"]: e for e in data["payoff"]["0"]}
    assert [(e["opponent"], e["kind"]) for e in data["payoff"]["0"]] == [("random", "anchor"), ("greedy", "baseline")]
    weights = pfsp_weights({"random": first["random"]["win_rate"]}, players=2)
    assert data["jobs"]["main_1"]["opponents"] == pytest.approx({"main_0": weights[SELF], "random": weights["random"]})
    row = {e["opponent"]: e for e in data["payoff"]["1"]}
    assert sorted(row) == ["exploiter_0", "greedy", "main_0", "random"] and all(e["games"] == 4 for e in row.values())
    assert row["random"]["kind"] == "anchor"
    log = (out / "logs" / "main_1.log").read_text()
    assert f"--init {out.resolve() / 'main_0.npz'}" in log and "--steps 1024" in log
    assert f"--opponents ppo:path={out.resolve() / 'main_0.npz'}:{weights[SELF]:.6g},random:{weights['random']:.6g}" \
        in log
    summary = json.loads((out / "summary.json").read_text())
    exploitability = {g: data["jobs"][f"yardstick_{g}"]["exploitability"] for g in (0, 1)}
    assert summary["best"] in ("main_0", "main_1") and "exploitab" in summary["reason"], (summary, exploitability)
    with np.load(out / "best.npz") as best, np.load(out / f"{summary['best']}.npz") as chosen, \
            np.load(out / "main_1.npz") as main_1, np.load(out / "main_0.npz") as start:
        assert np.array_equal(best["w0"], chosen["w0"]) and not np.array_equal(main_1["w0"], start["w0"])
    assert "population" in (out / "league.csv").read_text()


def test_an_interrupted_job_ends_the_run_with_130_and_keeps_nothing_of_it(tmp_path, monkeypatch, capsys):
    def stopped(job):
        return {"code": 130, "seconds": 0.0}

    monkeypatch.setattr(job_pool, "run_job", stopped)
    out = tmp_path / "run"
    assert league("--generations", "1", "--workers", "1", "--out", str(out), *TINY) == 130
    assert f"--resume {out}" in capsys.readouterr().err
    data = json.loads((out / "league.json").read_text())
    assert data["jobs"] == {} and list(data["payoff"]) == ["0"]  # main_0's row is kept; no job is
    assert not (out / "summary.json").exists()


def test_the_help_stays_light():
    code = ("import contextlib, io, sys\n"
            "from bali_env.apps.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as f:\n"
            "    assert main(['league-train', '--help']) == 0\n"
            "assert '--yardstick-steps' in f.getvalue()\n"
            "print(sorted(m for m in ('torch', 'ray', 'matplotlib', 'stable_baselines3') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_a_run_stopped_after_a_job_and_resumed_is_the_run_not_stopped(one_generation, tmp_path, monkeypatch):
    """A run whose second job stops midway (exit 130), then resumed: every network, payoff row and
    figure is the uninterrupted run's, bit for bit."""
    out = tmp_path / "stopped"
    run_job, ran = job_pool.run_job, []

    def second_stops(job):
        ran.append(job.name)
        return run_job(job) if len(ran) == 1 else {"code": 130, "seconds": 0.0}

    monkeypatch.setattr(job_pool, "run_job", second_stops)
    assert league("--generations", "1", "--workers", "1", "--out", str(out), *TINY, *YARDSTICK) == 130
    assert len(ran) == 2 and len(json.loads((out / "league.json").read_text())["jobs"]) == 1
    monkeypatch.setattr(job_pool, "run_job", run_job)
    assert league("--resume", str(out), "--no-progress") == 0
    mine = fingerprint(out)
    assert mine == fingerprint(one_generation)
    assert sorted(k for k in mine if k.endswith(".npz")) == ["best.npz", "exploiter_0.npz", "main_0.npz", "main_1.npz"]
    assert "exploitability" in mine["jobs"]["yardstick_1"]  # type: ignore[index]


@pytest.mark.slow
def test_two_workers_give_the_run_of_one_process(one_generation, tmp_path):
    """The exploiter and the main job of a generation on two worker processes at once."""
    out = tmp_path / "two"
    assert league("--generations", "1", "--workers", "2", "--out", str(out), *TINY, *YARDSTICK) == 0
    assert fingerprint(out) == fingerprint(one_generation)


@pytest.mark.slow
def test_ray_gives_the_run_of_one_process(one_generation, tmp_path):
    pytest.importorskip("ray")
    out = tmp_path / "ray"
    assert league("--generations", "1", "--workers", "2", "--backend", "ray", "--out", str(out), *TINY,
                  *YARDSTICK) == 0
    assert fingerprint(out) == fingerprint(one_generation)


@pytest.mark.slow  # a whole (tiny) run: about 10 s
def test_overwrite_replaces_an_earlier_run(one_generation, tmp_path):
    out = tmp_path / "again"
    shutil.copytree(one_generation, out)
    (out / "exploiter_5.npz").write_bytes(b"left over")
    assert league("--generations", "1", "--workers", "1", "--out", str(out), "--overwrite", *TINY, *YARDSTICK) == 0
    assert not (out / "exploiter_5.npz").exists()
    assert fingerprint(out) == fingerprint(one_generation)
