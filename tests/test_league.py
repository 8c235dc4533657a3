"""``bali league``: every pair in 2-player matches plus the free-for-all, one folder; the matrix
is each pair's own games (complementary cells, the right counts), the ratings are fitted to all
games, the pages link every part, an interrupted league resumes, bad input is refused first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bali_env.arena import TournamentError
from bali_env.arena.league import run_league


def test_a_small_league(tmp_path):
    out = tmp_path / "league"
    specs = ["greedy", "random", "random"]
    result = run_league(specs, games=4, seed=1, workers=1, out_dir=out, sizes=(2, 3), progress=False)
    assert result.names == ["greedy", "random#1", "random#2"]
    assert sorted(result.parts) == ["ffa-3p", "pairs/0-1", "pairs/0-2", "pairs/1-2"]
    for p in range(3):
        assert result.matrix[p][p] is None
        for q in range(3):
            if p != q:
                a, b = result.matrix[p][q], result.matrix[q][p]
                assert a["games"] == b["games"] == 4
                assert a["wins"] + b["wins"] == pytest.approx(4)
                assert a["ci95"][0] <= a["win_rate"] <= a["ci95"][1]
    # the cells are the pairs' own results: greedy's wins against random#1 are those of pairs/0-1
    pair = json.loads((out / "pairs" / "0-1" / "results.json").read_text())
    greedy = next(x for x in pair["participants"] if x["name"] == "greedy")
    assert result.matrix[0][1]["wins"] == greedy["wins"]
    # the ratings see every game: 2 pairs x 4 games + the free-for-all's 6 games each
    assert [r["games"] for r in result.ratings] == [4 + 4 + 6] * 3
    assert result.ratings[0]["elo"] > max(result.ratings[1]["elo"], result.ratings[2]["elo"])
    saved = json.loads((out / "league.json").read_text())
    assert saved["pairwise"] == json.loads(json.dumps(result.matrix)) and saved["participants"] == result.names
    index = (out / "index.html").read_text()
    for part in result.parts:
        assert f'href="{part}/index.html"' in index and (out / part / "index.html").is_file()
    assert (out / "league.png").read_bytes()[:4] == b"\x89PNG"
    table = result.table()
    assert "greedy" in table and "2-player win rate of the row against the column" in table


def test_a_free_for_all_an_agent_cannot_play_is_left_out(tmp_path, capsys, monkeypatch):
    import bali_env.bots.ppo as ppo

    (tmp_path / "bali_2p.npz").write_bytes(ppo.shipped_policy(2).read_bytes())
    monkeypatch.setattr(ppo, "POLICY_DIR", tmp_path)  # a ppo with only its 2-player policy
    result = run_league(["ppo", "greedy", "random"], games=2, seed=1, workers=1, sizes=(2, 3), progress=False)
    assert sorted(result.parts) == ["pairs/0-1", "pairs/0-2", "pairs/1-2"]
    assert "ffa-3p" in result.config["skipped"] and "no 3-player free-for-all" in capsys.readouterr().err
    with pytest.raises(TournamentError, match="nothing to play"):
        run_league(["ppo", "greedy", "random"], games=2, sizes=(3,), progress=False)


def test_a_league_resumes(tmp_path):
    out = tmp_path / "league"
    specs = ["greedy", "random"]
    first = run_league(specs, games=6, seed=2, workers=1, out_dir=out, sizes=(2,), progress=False)
    journal = out / "pairs" / "0-1" / "journal.jsonl"
    journal.write_text("\n".join(journal.read_text().splitlines()[:3]) + "\n")  # as if stopped early
    again = run_league(specs, games=6, seed=2, workers=1, out_dir=out, sizes=(2,), progress=False, resume=True)
    assert again.to_dict() == first.to_dict()


@pytest.mark.parametrize("kwargs, says", [
    ({"agents": ["greedy"]}, "at least 2 agents"),
    ({"sizes": (5,)}, "players must be among"),
    ({"games": 0}, "games must be an int >= 1"),
    ({"move_time": -1}, "--move-time"),
    ({"agents": ["greedy", "nosuchagent"]}, "unknown agent"),
])
def test_bad_leagues_are_refused_before_any_game(tmp_path, kwargs, says):
    args = {"agents": ["greedy", "random"], "games": 2, "out_dir": tmp_path / "out", "progress": False} | kwargs
    with pytest.raises(TournamentError, match=says):
        run_league(args.pop("agents"), **args)
    assert not (tmp_path / "out").exists()


def test_the_command_line(tmp_path, capsys):
    from bali_env.apps.cli import main

    out = tmp_path / "l"
    assert main(["league", "--agents", "greedy", "random", "--games", "2", "--players", "2", "--workers", "1",
                 "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "Bali league: 2 participants" in printed and (out / "league.json").is_file()
    assert main(["league", "--agents", "greedy", "--games", "2", "--out", str(tmp_path / "x")]) == 2
    assert "at least 2 agents" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_a_refused_league_makes_no_folder(tmp_path, monkeypatch, capsys):
    """Without --out, every check runs before the new folder is made: a bad league prints one
    line and leaves nothing (before: ``writing to results/league/...``, then the error, and the
    empty folder stayed)."""
    from bali_env.apps.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["league", "--agents", "greedy", "--games", "4", "--no-progress"]) == 2
    assert capsys.readouterr().err == "bali league: error: a league needs at least 2 agents\n"
    assert main(["league", "--agents", "greedy", "nosuchagent", "--games", "4", "--no-progress"]) == 2
    assert "unknown agent" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    assert main(["league", "--agents", "greedy", "random", "--games", "2", "--players", "2", "--workers", "1",
                 "--no-progress"]) == 0
    (folder,) = (tmp_path / "results" / "league").iterdir()
    assert f"writing to {Path('results/league') / folder.name}" in capsys.readouterr().err
    assert (folder / "league.json").is_file() and not (folder / ".lock").exists()


@pytest.mark.slow
def test_a_finished_league_is_replaced_only_with_overwrite(tmp_path, capsys):
    """The one rule for --out: a finished league is refused (nothing touched), --overwrite
    replaces it whole, an unfinished one continues with --resume OUT."""
    from bali_env.apps.cli import main

    out = tmp_path / "l"
    argv = ["league", "--agents", "greedy", "random", "--games", "2", "--players", "2", "--workers", "1",
            "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    before = (out / "league.json").read_bytes()
    capsys.readouterr()
    assert main([*argv, "--seed", "5"]) == 2
    assert "holds a finished league (league.json): give --overwrite" in capsys.readouterr().err
    assert (out / "league.json").read_bytes() == before
    assert main([*argv, "--seed", "5", "--overwrite"]) == 0
    assert json.loads((out / "league.json").read_text())["config"]["seed"] == 5
    (out / "league.json").unlink()
    assert main(argv[:-2] + ["--seed", "5"] + argv[-2:]) == 2
    assert "holds an unfinished league" in (err := capsys.readouterr().err) and f"--resume '{out}'" in err
    assert main([*argv[:-2], "--seed", "5", "--resume", str(out)]) == 0 and (out / "league.json").is_file()
    with pytest.raises(TournamentError, match="nothing to resume"):
        run_league(["greedy", "random"], games=2, sizes=(2,), out_dir=tmp_path / "none", resume=True, progress=False)
    assert not (tmp_path / "none").exists()
