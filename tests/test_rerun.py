"""``python -m benchmarks.rerun``: a kept result file is replayed from its own config, game for
game, and replaced whole; bad patterns stop before anything is played."""

from __future__ import annotations

import json

import pytest

from bali_env.arena.tournament import run_tournament
from benchmarks import figures, rerun


@pytest.fixture
def kept(tmp_path):
    """A results folder with one small kept tournament (greedy vs random, 2 players, 8 games) whose
    wins were edited afterwards, and one file that is no tournament."""
    results = tmp_path / "results"
    results.mkdir()
    doc = run_tournament(["greedy", "random"], num_players=2, games=8, seed=5, workers=1, progress=False).to_dict()
    stale = json.loads(json.dumps(doc))
    stale["participants"][0]["wins"] = 0.0
    stale["participants"][0]["win_rate"] = 0.0
    (results / "2p-greedy-random-seed5.json").write_text(json.dumps(stale))
    (results / "bench.json").write_text(json.dumps({"rows": []}))
    return results, doc


def test_a_rerun_replays_the_config_and_replaces_the_file(kept, tmp_path, monkeypatch):
    """The replayed file is the tournament its config describes (the same games, seats and scores),
    the edited wins are gone, and the run's folder is removed afterwards."""
    results, doc = kept
    monkeypatch.setattr(figures, "RESULTS_DIR", results)
    files = rerun.matching(["2p-*"], results)
    assert [f.name for f in files] == ["2p-greedy-random-seed5.json"]
    before, after = rerun.rerun(files[0], tmp_path / "work", progress=False)
    assert before.startswith("greedy 0.0% [")
    assert after == rerun.first_win_rate(doc)
    assert json.loads(files[0].read_text()) == json.loads(json.dumps(doc))
    assert not (tmp_path / "work" / "2p-greedy-random-seed5").exists()
    assert not [p for p in results.iterdir() if p.name.startswith(".")], "no temporary file left behind"


def test_the_arguments_are_the_configs():
    """Every kept file's config gives run_tournament exactly its own agents, size, seed and variants."""
    for f in rerun.matching(["*"]):
        config = json.loads(f.read_text())["config"]
        kw = rerun.tournament_args(config)
        assert (kw["agents"], kw["num_players"], kw["games"], kw["seed"], kw["workers"]) == (
            config["agents"], config["num_players"], config["games_requested"], config["seed"], config["workers"])


@pytest.mark.parametrize("pattern", ["zz*", "bench"])
def test_a_pattern_that_matches_no_tournament_stops_with_exit_2(kept, monkeypatch, capsys, pattern):
    """A pattern matching nothing, or only files that are no tournament, is named; nothing is played."""
    results, _ = kept
    monkeypatch.setattr(figures, "RESULTS_DIR", results)
    before = sorted((p.name, p.read_text()) for p in results.iterdir())
    assert rerun.main(["2p-*", pattern, "--work", str(results / "work")]) == 2
    assert repr(pattern) in capsys.readouterr().err
    assert sorted((p.name, p.read_text()) for p in results.iterdir()) == before


def test_dry_run_lists_the_commands_and_plays_nothing(kept, monkeypatch, capsys):
    """--dry-run prints each file's tournament command and leaves the files as they are."""
    results, _ = kept
    monkeypatch.setattr(figures, "RESULTS_DIR", results)
    before = (results / "2p-greedy-random-seed5.json").read_text()
    assert rerun.main(["*", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out == ("2p-greedy-random-seed5: bali tournament --agents greedy random --players 2 --games 8 --seed 5 "
                   "--workers 1\n")
    assert (results / "2p-greedy-random-seed5.json").read_text() == before
