"""The tournament runner: BaliVectorEnv.reset_game, seat rotation, game k dealt from deal_seed(seed, k),
determinism, the statistics on hand-made records, the outputs and the ``bali tournament`` CLI."""

from __future__ import annotations

import csv
import json
import math
import os
import time
from collections import Counter

import numpy as np
import pytest

import bali_env
from bali_env.bots.base import Agent
from bali_env.bots.registry import make_agent, register_agent
from bali_env.arena import (
    TournamentError,
    TournamentResult,
    compute_stats,
    cycle_length,
    deal_seed,
    game_ranks,
    lineup,
    participant_names,
    rating_fit,
    rounded_games,
    run_tournament,
    validate_agents,
    wilson_interval,
)
from bali_env.apps.cli import main as cli_main
from bali_env.envs.batched import BaliVectorEnv


class FirstLegal(Agent):
    """Deterministic test agent: the lowest legal action id."""

    name = "test_first"

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


class LastLegal(Agent):
    """Deterministic test agent: the highest legal action id."""

    name = "test_last"

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[-1])


register_agent("test_first", FirstLegal)
register_agent("test_last", LastLegal)
POLICIES = {"test_first": FirstLegal(), "test_last": LastLegal()}


# ------------------------------------------------------------------------------------- reset_game
@pytest.mark.parametrize("num_players,oracle,demon", [(2, False, False), (3, True, False), (4, True, True)])
def test_reset_game_deals_what_the_aec_env_deals(num_players, oracle, demon):
    env = BaliVectorEnv(3, num_players=num_players, oracle=oracle, demon=demon, seed=100)
    env.reset()
    others = [env.state_dict(0), env.state_dict(2)]
    for s in (12345, -7, 2**70 + 3):
        env.reset_game(1, s)
        aec = bali_env.raw_env(num_players=num_players, oracle=oracle, demon=demon)
        aec.reset(seed=s)
        assert env.state_dict(1) == aec.state_dict()
        seat = int(env.to_move[1])
        view = aec.observe(f"player_{seat}")
        np.testing.assert_array_equal(env.obs[1], view["observation"])
        np.testing.assert_array_equal(env.action_masks[1], view["action_mask"])
    assert [env.state_dict(0), env.state_dict(2)] == others  # the other games are untouched


def test_reset_game_autoreset_continues_the_stream():
    """After reset_game(i, s), game i's next deal is the AEC env's next seedless reset()."""
    env = BaliVectorEnv(2, num_players=2, seed=0)
    env.reset()
    env.reset_game(0, 77)
    while True:
        acts = np.argmax(env.action_masks, axis=1)
        _, _, term, _, _ = env.step(acts)
        if term[0]:
            break
    aec = bali_env.raw_env(num_players=2)
    aec.reset(seed=77)
    aec.reset()
    assert env.state_dict(0) == aec.state_dict()


def test_reset_game_rejects_bad_index_and_seed():
    env = BaliVectorEnv(2, num_players=2, seed=0)
    env.reset()
    with pytest.raises(IndexError):
        env.reset_game(2, 0)
    with pytest.raises(IndexError):
        env.reset_game(-1, 0)
    with pytest.raises(TypeError):
        env.reset_game(0, 1.5)


# ------------------------------------------------------------------------------------- lineups
@pytest.mark.parametrize("m,n", [(2, 2), (3, 3), (4, 4), (3, 2), (5, 4), (6, 3), (5, 2)])
def test_every_participant_plays_every_seat_equally(m, n):
    cycle = cycle_length(m, n)
    assert cycle == math.comb(m, n) * n
    for cycles in (1, 3):
        seats = Counter()
        for k in range(cycle * cycles):
            players = lineup(k, m, n)
            assert len(players) == n and len(set(players)) == n
            for s, p in enumerate(players):
                seats[(p, s)] += 1
        expected = cycles * math.comb(m - 1, n - 1)
        assert seats == {(p, s): expected for p in range(m) for s in range(n)}


def test_lineup_scheme_is_the_documented_one():
    assert [lineup(k, 4, 4) for k in range(5)] == [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2), (0, 1, 2, 3)]
    # 3 participants, 2 seats: combinations (0,1), (0,2), (1,2), each in its 2 rotations
    assert [lineup(k, 3, 2) for k in range(7)] == [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1), (0, 1)]


def test_games_round_up_to_whole_rotations_and_too_few_participants_fail():
    assert rounded_games(1000, 4, 4) == 1000
    assert rounded_games(1001, 4, 4) == 1004
    assert rounded_games(1, 5, 4) == 20
    assert rounded_games(21, 5, 4) == 40
    with pytest.raises(TournamentError, match="at least 4"):
        cycle_length(2, 4)
    with pytest.raises(TournamentError):
        rounded_games(0, 2, 2)
    with pytest.raises(TournamentError, match="at least 4"):
        run_tournament(["random", "random"], num_players=4, games=4, workers=1, progress=False)


def test_participant_names_number_repeated_specs():
    assert participant_names(["greedy", "random", "random", "random"]) == ["greedy", "random#1", "random#2", "random#3"]
    assert participant_names(["a", "b"]) == ["a", "b"]


def test_rounded_tournament_is_seat_balanced():
    result = run_tournament(["random"] * 3, num_players=2, games=5, seed=1, workers=1, progress=False)
    assert result.config["games_requested"] == 5 and result.config["games"] == 6
    assert "rounded up to 6" in result.table()
    for p in result.participants:
        assert p["games"] == 4 and p["seat_games"] == [2, 2]


# ----------------------------------------------------------------------------- game k = deal_seed(seed, k)
@pytest.mark.parametrize("specs,num_players", [(["test_first", "test_last"], 2),
                                               (["test_first", "test_last", "test_first"], 2),
                                               (["test_last", "test_first", "test_last", "test_first"], 3)])
def test_recorded_games_replay_in_the_aec_env(specs, num_players):
    """Deterministic agents: replaying game k from reset(seed=deal_seed(seed, k)) with the recorded lineup
    gives the recorded scores, winners and number of decisions (slots are refilled: batch 3)."""
    seed = 40
    result = run_tournament(specs, num_players=num_players, games=10, seed=seed, workers=1, progress=False,
                            batch_size=3)
    names = participant_names(specs)
    spec_of = dict(zip(names, specs, strict=True))
    assert [g["game"] for g in result.games] == list(range(result.config["games"]))
    for g in result.games:
        k = g["game"]
        assert g["seed"] == deal_seed(seed, k)
        assert g["lineup"] == [names[p] for p in lineup(k, len(specs), num_players)]
        env = bali_env.raw_env(num_players=num_players)
        env.reset(seed=g["seed"])
        decisions = 0
        while not all(env.terminations.values()):
            seat = int(env.agent_selection.split("_")[1])
            policy = POLICIES[spec_of[g["lineup"][seat]]]
            env.step(policy.act(None, env.observe(env.agent_selection)["action_mask"]))
            decisions += 1
        final = env.state_dict()
        assert (g["scores"], g["winners"], g["decisions"]) == (final["scores"], final["winners"], decisions)


# ------------------------------------------------------------------------------------- determinism
def test_same_seed_same_results_different_seed_different_results():
    kw = dict(num_players=2, games=24, workers=1, progress=False, batch_size=8)
    a = run_tournament(["random", "random"], seed=5, **kw).to_dict()
    b = run_tournament(["random", "random"], seed=5, **kw).to_dict()
    c = run_tournament(["random", "random"], seed=6, **kw).to_dict()
    assert json.dumps(a) == json.dumps(b)
    assert a["games"] != c["games"]


@pytest.mark.slow
def test_determinism_with_two_workers():
    kw = dict(num_players=4, games=16, seed=9, progress=False)
    a = run_tournament(["random"] * 5, workers=2, **kw).to_dict()
    b = run_tournament(["random"] * 5, workers=2, **kw).to_dict()
    assert json.dumps(a) == json.dumps(b)
    assert a["config"]["workers"] == 2 and len(a["games"]) == 20
    # the game list (deal seeds, lineups) does not depend on how games are split over workers
    one = run_tournament(["random"] * 5, workers=1, **kw).to_dict()
    assert [(g["seed"], g["lineup"]) for g in one["games"]] == [(g["seed"], g["lineup"]) for g in a["games"]]


# ------------------------------------------------------------------------------------- statistics
def test_wilson_interval_known_case():
    z = 1.959963984540054
    n, p = 10, 0.7
    center = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    lo, hi = wilson_interval(7, 10)
    assert lo == pytest.approx(center - half, abs=1e-12) and hi == pytest.approx(center + half, abs=1e-12)
    assert (lo, hi) == (pytest.approx(0.3968, abs=1e-4), pytest.approx(0.8922, abs=1e-4))
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_game_ranks_share_ties():
    assert game_ranks([10, 8, 8], [0]) == [1, 2.5, 2.5]
    assert game_ranks([9, 9, 5], [0, 1]) == [1.5, 1.5, 3]
    assert game_ranks([7, 7, 3], [1]) == [2, 1, 3]  # seat 1 won the tie-break on equal score
    assert game_ranks([4, 6, 6, 1], [1, 2]) == [3, 1.5, 1.5, 4]


RECORDS = [
    {"game": 0, "lineup": [0, 1, 2], "scores": [10, 8, 8], "winners": [0], "decisions": 100},
    {"game": 1, "lineup": [1, 2, 0], "scores": [9, 9, 5], "winners": [0, 1], "decisions": 110},
    {"game": 2, "lineup": [2, 0, 1], "scores": [7, 7, 3], "winners": [1], "decisions": 120},
]


def test_statistics_on_hand_made_records():
    stats = compute_stats(RECORDS, ["a", "b", "c"], 3)
    a, b, c = stats["participants"]
    assert (a["wins"], b["wins"], c["wins"]) == (2, 0.5, 0.5)  # the shared win counts 1/2 each
    assert [p["games"] for p in (a, b, c)] == [3, 3, 3]
    assert a["win_rate"] == pytest.approx(2 / 3)
    assert a["win_rate_ci95"] == pytest.approx(list(wilson_interval(2, 3)))
    assert (a["mean_rank"], b["mean_rank"], c["mean_rank"]) == (pytest.approx(5 / 3), pytest.approx(7 / 3),
                                                                pytest.approx(2.0))
    assert (a["mean_score"], b["mean_score"], c["mean_score"]) == (pytest.approx(22 / 3), pytest.approx(20 / 3),
                                                                   pytest.approx(8.0))
    assert a["seat_win_rate"] == [1.0, 1.0, 0.0] and c["seat_win_rate"] == [0.0, 0.5, 0.0]
    assert stats["seat_win_share"] == pytest.approx([0.5, 0.5, 0.0])
    assert stats["mean_decisions"] == pytest.approx(110)
    assert a["rating"]["elo"] > max(b["rating"]["elo"], c["rating"]["elo"])
    # names work as lineups, and the order of the records does not matter
    shuffled = [dict(rec, lineup=[["a", "b", "c"][p] for p in rec["lineup"]]) for rec in RECORDS[::-1]]
    assert compute_stats(shuffled, ["a", "b", "c"], 3) == stats


def test_the_rating_fit_is_the_bradley_terry_maximum_likelihood():
    """Two players, A wins 3 of 4: the maximum-likelihood strengths differ by ln 3, i.e. 400 log10 3
    = 190.8 Elo (the fit's small regularisation shrinks it by less than 1); the field mean is 0;
    the interval is the inverse Fisher information: 1.96 x 400/ln 10 / sqrt(4 x 3/16)."""
    games = [([0, 1], [1.0, 2.0])] * 3 + [([1, 0], [1.0, 2.0])]
    fit = rating_fit(games, 2)
    assert fit["rating"][0] - fit["rating"][1] == pytest.approx(400 * math.log10(3), abs=1.0)
    assert sum(fit["rating"]) == pytest.approx(0.0, abs=1e-9)
    # both ratings move together: each one's interval is half the difference's, sqrt(1 / (4 p (1-p))) / 2
    se_diff = 1 / math.sqrt(4 * 0.75 * 0.25)
    assert fit["ci95"][0] == pytest.approx(1.959964 * 400 / math.log(10) * se_diff / 2, rel=0.02)
    # a shared win counts as both orders, half each: one win and one tie equal 1.5 wins of 2
    tie = rating_fit([([0, 1], [1.0, 2.0]), ([0, 1], [1.5, 1.5])], 2)
    assert tie["rating"][0] - tie["rating"][1] == pytest.approx(400 * math.log10(3), abs=2.0)


def _random_records(rng, m, n, games):
    """Seat-rotated games between m participants with random scores and winners."""
    records = []
    for k in range(games):
        scores = [int(v) for v in rng.integers(30, 40, n)]
        best = max(scores)
        winners = [q for q in range(n) if scores[q] == best]
        records.append({"game": k, "lineup": list(lineup(k, m, n)), "scores": scores, "winners": winners,
                        "decisions": 100})
    return records


@pytest.mark.parametrize("seed", range(4))
def test_shuffling_the_games_leaves_the_table_identical(seed):
    """The statistics and the table depend on the games, not on the order they finished in."""
    rng = np.random.default_rng(seed)
    m, n = (4, 2) if seed % 2 else (5, 4)
    names = [f"p{p}" for p in range(m)]
    records = _random_records(rng, m, n, cycle_length(m, n) * 3)
    base = compute_stats(records, names, n)
    shuffled = [dict(r, game=i) for i, r in enumerate(rng.permutation(np.array(records, dtype=object)))]
    again = compute_stats(shuffled, names, n)
    assert again["participants"] == base["participants"]
    config = {"num_players": n, "games": len(records), "games_requested": len(records), "seed": 0,
              "oracle": False, "demon": False, "workers": 1, "cycle_length": cycle_length(m, n)}
    tables = [TournamentResult(config=config, participants=s["participants"], seat_win_share=s["seat_win_share"],
                               mean_decisions=s["mean_decisions"], games=[]).table(width=120) for s in (base, again)]
    assert tables[0] == tables[1]


@pytest.mark.parametrize("seed", range(6))
def test_in_a_balanced_round_robin_more_wins_never_rank_lower(seed):
    """Every pair meets equally often (2 players, seats rotated): the fitted ratings order the
    participants as their wins do (equal wins: equal ratings), so the table does too."""
    rng = np.random.default_rng(100 + seed)
    m = 4 + seed % 3
    records = _random_records(rng, m, 2, cycle_length(m, 2) * (2 + seed))
    names = [f"p{p}" for p in range(m)]
    stats = compute_stats(records, names, 2)["participants"]
    for a in stats:
        for b in stats:
            if a["wins"] > b["wins"]:
                assert a["rating"]["elo"] > b["rating"]["elo"], (a, b)
            elif a["wins"] == b["wins"]:
                assert a["rating"]["elo"] == pytest.approx(b["rating"]["elo"], abs=1e-3)


@pytest.mark.slow
def test_a_real_round_robin_ranks_by_wins():
    """The newcomer's case: a balanced 2-player round robin of four agents; the table's order
    never puts more wins below fewer."""
    result = run_tournament(["random", "greedy", "greedy:rival_weight=0", "mcts:sims=30"], num_players=2, games=36,
                            seed=14, workers=1, progress=False)
    wins = [p["wins"] for p in result.ranked()]
    assert all(wins[i] >= wins[i + 1] for i in range(len(wins) - 1)), result.table()
    rows = [line.split()[0] for line in result.table(width=200).splitlines()[2:2 + len(wins)]]
    assert rows == [p["name"] for p in result.ranked()]


def _placed(places: list[dict[int, int]], m: int, n: int) -> list[dict]:
    """Game records from each game's place of every participant (1 = first, the winner)."""
    records = []
    for k, where in enumerate(places):
        seats = list(lineup(k, m, n))
        records.append({"game": k, "seed": k, "lineup": seats, "scores": [100 - 10 * where[p] for p in seats],
                        "winners": [s for s, p in enumerate(seats) if where[p] == 1], "decisions": 10})
    return records


def _result_of(records: list[dict], names: list[str], n: int) -> TournamentResult:
    """The TournamentResult of hand-made records (as ``run_tournament`` would build it)."""
    stats = compute_stats(records, names, n)
    config = {"agents": names, "participants": names, "num_players": n, "games": len(records),
              "games_requested": len(records), "cycle_length": n, "seed": 0, "workers": 1, "oracle": False,
              "demon": False}
    games = [dict(r, lineup=[names[p] for p in r["lineup"]]) for r in records]
    return TournamentResult(config=config, participants=stats["participants"],
                            seat_win_share=stats["seat_win_share"], mean_decisions=stats["mean_decisions"],
                            games=games)


def test_the_table_the_page_and_the_chart_rank_by_wins(tmp_path, monkeypatch):
    """The fitted rating sees second places too, so with few games one with fewer wins can rate
    higher (here b: 2 wins, +95; a: 3 wins, -29): the table, the index page and ratings.png list
    the participants by win rate, the figure shown with its interval (before: by rating, b first
    with fewer wins), the rating kept as a column."""
    a, b, c = 0, 1, 2
    places = [{a: 1, b: 2, c: 3}] * 3 + [{a: 3, b: 1, c: 2}] * 2 + [{a: 3, b: 2, c: 1}]
    result = _result_of(_placed(places, 3, 3), ["a", "b", "c"], 3)
    by_name = {p["name"]: p for p in result.participants}
    assert by_name["b"]["rating"]["elo"] > by_name["a"]["rating"]["elo"] and by_name["a"]["wins"] == 3
    assert [p["name"] for p in result.ranked()] == ["a", "b", "c"]
    rows = [line.split()[0] for line in result.table(width=200).splitlines()[1:5]]
    assert rows == ["participant", "a", "b", "c"]
    from bali_env.arena.pages import index_html

    page = index_html(result.to_dict())
    assert page.index("<td>a</td>") < page.index("<td>b</td>") < page.index("<td>c</td>")
    import matplotlib.pyplot as plt

    from bali_env.arena import plot_ratings

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    plot_ratings(result, tmp_path / "ratings.png")
    bars = [t.get_text() for t in figures[0].axes[0].get_yticklabels()]
    assert bars[::-1] == ["a", "b", "c"]  # top to bottom


def test_a_rating_no_games_pin_down_reads_n_a(tmp_path):
    """A clean sweep (4-0) has no finite rating: the fit's ±3810 is its regularisation's, so the
    table and the page say ``n/a`` with a note saying why (before: ``+660 ±3810``); the files
    keep the numbers; a rating the games pin down reads ``+95 ±88``."""
    sweep = _result_of(_placed([{0: 1, 1: 2}] * 4, 2, 2), ["greedy", "random"], 2)
    assert sweep.participants[0]["rating"]["ci95"] > 1000
    table = sweep.table(width=200)
    assert "±" not in table.splitlines()[2] and table.splitlines()[2].split()[-3] == "n/a"
    assert "rating n/a: its 95% interval is wider than ±400" in table
    from bali_env.arena.pages import index_html

    assert "<td>n/a</td>" in index_html(sweep.to_dict()) and "\u00b13810" not in index_html(sweep.to_dict())
    sweep.save(tmp_path)
    assert json.loads((tmp_path / "results.json").read_text())["participants"][0]["rating"]["ci95"] > 1000
    close = _result_of(_placed([{0: 1, 1: 2}] * 15 + [{0: 2, 1: 1}] * 5, 2, 2), ["greedy", "random"], 2)
    assert "+95 ±88" in close.table(width=200) and "n/a" not in close.table(width=200)


# ------------------------------------------------------------------------------------- outputs and CLI
def test_cli_end_to_end_writes_the_outputs(tmp_path, capsys):
    out = tmp_path / "t"
    rc = cli_main(["tournament", "--agents", "random", "random", "--players", "2", "--games", "8", "--seed", "3",
                   "--workers", "1", "--out", str(out), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "random#1" in text and "random#2" in text and "95% CI" in text
    doc = json.loads((out / "results.json").read_text())
    assert doc["config"]["games"] == 8 and doc["config"]["seed"] == 3
    assert [g["seed"] for g in doc["games"]] == [deal_seed(3, k) for k in range(8)]
    assert all(sorted(g["lineup"]) == ["random#1", "random#2"] for g in doc["games"])
    assert sum(p["wins"] for p in doc["participants"]) == pytest.approx(8)
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [r["participant"] for r in rows] == ["random#1", "random#2"]
    assert float(rows[0]["wins"]) + float(rows[1]["wins"]) == pytest.approx(8)
    assert (out / "ratings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_variants_and_run_tournament_out_dir(tmp_path):
    result = run_tournament(["random"] * 3, num_players=3, games=3, seed=2, workers=1, oracle=True, demon=True,
                            out_dir=tmp_path, progress=False)
    assert result.config["oracle"] and result.config["demon"]
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc == json.loads(json.dumps(result.to_dict()))
    assert len(doc["games"]) == 3


def test_cli_errors_exit_2(tmp_path, capsys):
    rc = cli_main(["tournament", "--agents", "nosuchagent", "random", "--players", "2", "--games", "2",
                   "--workers", "1", "--out", str(tmp_path), "--no-progress"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "nosuchagent" in err and "random" in err and "known" in err
    assert cli_main(["tournament", "--agents", "random", "--players", "2", "--out", str(tmp_path)]) == 2
    assert not (tmp_path / "results.json").exists()
    with pytest.raises(SystemExit) as exc:
        cli_main(["tournament", "--agents", "random", "random", "--players", "5"])
    assert exc.value.code == 2


@pytest.mark.parametrize("bad", [["--agents", "greedy", "nosuch"], ["--agents", "greedy", "random", "--games", "0"],
                                 ["--agents", "greedy"], ["--agents", "a.py", "random"],
                                 ["--agents", "greedy", "random", "--workers", "0"],
                                 ["--agents", "ppo", "greedy", "random", "--players", "3"],
                                 ["--agents", "ppo:path=agents/my_bot.py", "greedy"]])
def test_a_rejected_command_prints_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys, bad):
    """Tried as a new user would: every argument is checked before anything is printed or
    created, so a refused run writes no "writing to" line and no results folder."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    bad = [a.replace("path=agents/", f"path={root}/agents/") for a in bad]
    monkeypatch.chdir(tmp_path)
    if "--players" in bad:  # a policies folder without the 3-player file
        import bali_env.bots.ppo as ppo

        monkeypatch.setattr(ppo, "POLICY_DIR", tmp_path / "no-policies")
    args = bad if "--players" in bad else [*bad, "--players", "2"]
    assert cli_main(["tournament", *args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bali tournament: error: ") and err.count("\n") == 1 and "writing to" not in err
    assert list(tmp_path.iterdir()) == []
    if "--players" in bad:
        assert "train a 3-player policy with bali train --players 3" in err
    if any("my_bot.py" in a for a in bad):
        assert "not a policy file: expected the .npz that bali train writes" in err


@pytest.mark.slow
def test_two_runs_started_at_once_write_two_complete_folders(tmp_path):
    """Two tournaments started together in the same folder (same second): each gets its own
    results folder (a -2 suffix on collision), both complete."""
    import subprocess
    import sys

    args = [sys.executable, "-m", "bali_env.apps.cli", "tournament", "--agents", "random", "random", "--players", "2",
            "--games", "4", "--workers", "1", "--no-progress"]
    procs = [subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    folders = sorted((tmp_path / "results" / "tournament").iterdir())
    assert len(folders) == 2
    for folder in folders:
        assert json.loads((folder / "results.json").read_text())["config"]["games"] == 4
        assert (folder / "results.csv").exists() and (folder / "journal.jsonl").exists()


def test_a_second_run_into_the_same_folder_at_once_is_refused(tmp_path, capsys):
    """While a run writes to OUT, another run given the same --out stops at once (exit 2)
    instead of mixing its files into the first one's; the lock is on the folder itself, so no
    lock file is left in it (before: an empty ``.lock`` stayed in every results folder)."""
    from bali_env.arena.journal import claim_out_dir

    with claim_out_dir(tmp_path / "out"):
        rc = cli_main(["tournament", "--agents", "random", "random", "--players", "2", "--games", "2", "--workers",
                       "1", "--no-progress", "--out", str(tmp_path / "out")])
        assert rc == 2 and "another run is writing to it now" in capsys.readouterr().err
        with pytest.raises(TournamentError, match="another tournament is writing"), claim_out_dir(tmp_path / "out"):
            pass
    assert list((tmp_path / "out").iterdir()) == []
    assert cli_main(["tournament", "--agents", "random", "random", "--players", "2", "--games", "2", "--workers",
                     "1", "--no-progress", "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["index.html", "journal.jsonl", "ratings.png",
                                                                   "results.csv", "results.json", "timing.json"]


def test_new_output_dir_takes_a_suffix_on_collision(tmp_path):
    """The folder of a run is created exclusively: the same name twice gives NAME and NAME-2."""
    from bali_env.files import new_output_dir

    assert [new_output_dir(tmp_path, "run").name for _ in range(3)] == ["run", "run-2", "run-3"]


BOT = '''
"""A user's bot: always the first legal action."""
import numpy as np
from bali_env.bots import Agent


class FirstLegal(Agent):
    def __init__(self, seed=None, offset=0):
        super().__init__(seed)
        self.offset = offset

    def act(self, observation, action_mask):
        legal = np.flatnonzero(action_mask)
        return int(legal[min(self.offset, len(legal) - 1)])
'''


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_your_own_bot_from_a_file_plays_a_tournament(tmp_path, workers):
    """--agents FILE.py:Class[:settings] builds the class from the file, in worker processes too."""
    (tmp_path / "mybot.py").write_text(BOT)
    spec = f"{tmp_path / 'mybot.py'}:FirstLegal:offset=1"
    bot = make_agent(spec, seed=0)
    assert bot.offset == 1 and bot.name.endswith("mybot:FirstLegal")
    res = run_tournament([spec, "random"], num_players=2, games=4, seed=0, workers=workers, progress=False)
    assert sum(p["games"] for p in res.participants) == 8
    # not the file's full path; the settings shown
    assert [p["name"] for p in res.participants] == ["mybot:FirstLegal:offset=1", "random"]
    bot_file = tmp_path / "mybot.py"
    for bad, says in ((f"{tmp_path / 'nope.py'}:X", "not found"), (f"{bot_file}:Missing", "no agent class"),
                      (f"{bot_file}", "class name")):
        with pytest.raises(ValueError, match=says):
            make_agent(bad)


THREAD_BOT = BOT + '''

class OneThread(FirstLegal):
    """Plays only where each BLAS pool has one thread (raises otherwise: a crash forfeit)."""

    def act(self, observation, action_mask):
        import os

        pools = {name: os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        if set(pools.values()) != {"1"}:
            raise RuntimeError(f"BLAS threads in this worker: {pools}")
        return super().act(observation, action_mask)
'''


@pytest.mark.slow
def test_worker_processes_keep_one_blas_thread_each(tmp_path, monkeypatch):
    """Two workers on two cores: each worker's BLAS pool has one thread (two pools spinning made the
    network agents 8x slower), and the parent's environment is left as it was."""
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    (tmp_path / "threadbot.py").write_text(THREAD_BOT)
    spec = f"{tmp_path / 'threadbot.py'}:OneThread"
    res = run_tournament([spec, "random"], num_players=2, games=4, seed=0, workers=2, progress=False)
    assert [p.get("forfeits", {}).get("crash", 0) for p in res.participants] == [0, 0]
    assert sum(p["games"] for p in res.participants) == 8
    assert os.environ["OPENBLAS_NUM_THREADS"] == "2" and "MKL_NUM_THREADS" not in os.environ


@pytest.mark.slow
def test_a_script_without_the_main_guard_fails_with_pythons_explanation(tmp_path):
    """A script that starts a 2-worker tournament at import time (no ``if __name__ == "__main__":``):
    each spawned worker imports it again and cannot start workers of its own. The run fails with
    the dead worker named, and the worker's error is Python's explanation of the guard, not an
    error of our own clean-up (which joined workers that never started)."""
    import subprocess
    import sys

    (tmp_path / "bot.py").write_text(BOT)  # not batched: the games go to worker processes
    script = tmp_path / "unguarded.py"
    script.write_text("from bali_env.arena import run_tournament\n"
                      f"run_tournament([{str(tmp_path / 'bot.py:FirstLegal')!r}, 'random'], num_players=2, games=4, "
                      "seed=0, workers=2, progress=False)\n")
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    assert "died (exit code 1)" in out.stderr
    assert "if __name__ == '__main__'" in out.stderr
    assert "can only join a started process" not in out.stderr


NAMED_BOT = BOT.replace("class FirstLegal(Agent):", "class FirstLegal(Agent):\n    name = 'firstbot'")


def test_a_bot_is_listed_by_its_own_name_and_its_settings(tmp_path):
    """A file bot's row shows its ``name`` (docs/bots.md) and its settings, as ``mcts:sims=200``
    shows its own (before: two bots of one class with different settings read ``firstbot#1``,
    ``firstbot#2``); one name from two different specs is followed by the spec; only the same
    spec twice is numbered."""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "bot.py").write_text(NAMED_BOT)
    a, b = f"{tmp_path / 'a' / 'bot.py'}:FirstLegal", f"{tmp_path / 'b' / 'bot.py'}:FirstLegal"
    specs = [f"{a}:offset=0", f"{a}:offset=1", "random"]
    res = run_tournament(specs, num_players=2, games=6, seed=0, workers=1, progress=False)
    assert [p["name"] for p in res.participants] == ["firstbot:offset=0", "firstbot:offset=1", "random"]
    assert res.config["agents"] == specs and "firstbot:offset=1" in res.table()
    assert participant_names(validate_agents([a, b, a], 2)) == [f"firstbot ({a})#1", f"firstbot ({b})",
                                                                f"firstbot ({a})#2"]


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, 4])
def test_results_do_not_depend_on_workers_or_batching(num_players):
    """Agents draw their randomness per decision (seed, game, seat, decision number), so the same
    seed gives the same games and statistics with 1 or 2 workers and any batch size."""
    specs = ["mcts:sims=20", "greedy", "random", "random"][: max(num_players, 3)]
    runs = [run_tournament(specs, num_players=num_players, games=12, seed=5, workers=w, batch_size=b,
                           progress=False) for w, b in ((1, 128), (1, 2), (2, 3))]
    first = runs[0].to_dict()
    for other in runs[1:]:
        d = other.to_dict()
        assert d["games"] == first["games"]
        assert d["participants"] == first["participants"]


def _stats(out):
    data = json.loads((out / "results.json").read_text())
    return data["participants"], data["games"]


@pytest.mark.slow
def test_resume_plays_only_the_missing_games_and_gives_the_same_results(tmp_path, capsys):
    """Finished games go to OUT/journal.jsonl; a journal cut short (a last line half written
    included) resumes to exactly the results of the uninterrupted run."""
    from bali_env.arena import read_journal

    specs = ["greedy", "random", "mcts:sims=10"]
    full = run_tournament(specs, num_players=2, games=12, seed=4, workers=1, out_dir=tmp_path / "a", progress=False)
    header, games = read_journal(tmp_path / "a" / "journal.jsonl")
    assert header["seed"] == 4 and sorted(games) == list(range(12))
    cut = tmp_path / "b"
    cut.mkdir()
    lines = (tmp_path / "a" / "journal.jsonl").read_text().splitlines()
    (cut / "journal.jsonl").write_text("\n".join(lines[:6]) + "\n" + lines[6][:20])  # 5 games and half a line
    resumed = run_tournament(specs, num_players=2, games=12, seed=4, workers=1, out_dir=cut, progress=False,
                             resume=True)
    journal = (cut / "journal.jsonl").read_text().splitlines()
    done_before = [json.loads(line)["game"] for line in lines[1:6]]
    played = [json.loads(line)["game"] for line in journal[6:]]  # what the resumed run added
    assert journal[:6] == lines[:6] and sorted(played) == sorted(set(range(12)) - set(done_before))
    assert resumed.participants == full.participants and _stats(cut) == _stats(tmp_path / "a")
    assert len(read_journal(cut / "journal.jsonl")[1]) == 12
    with pytest.raises(TournamentError, match="other settings"):
        run_tournament(specs, num_players=2, games=12, seed=5, workers=1, out_dir=cut, progress=False, resume=True)
    with pytest.raises(TournamentError, match="nothing to resume"):
        run_tournament(specs, num_players=2, games=12, seed=4, out_dir=tmp_path / "c", progress=False, resume=True)
    assert not (tmp_path / "c").exists()  # a refused run leaves nothing behind


@pytest.mark.slow
def test_a_finished_run_is_replaced_only_with_overwrite(tmp_path, capsys):
    """One rule for --out (``bali_env.files.check_out_folder``): a folder holding a finished run
    is refused (exit 2, one line naming --overwrite, nothing touched; before: replaced, with a
    line on stderr); --overwrite replaces it whole (no stale records or replays); an unfinished
    run is continued with --resume OUT or replaced with --overwrite; both at once are refused."""
    out = tmp_path / "t"
    run_tournament(["random", "random"], num_players=2, games=6, seed=0, workers=1, out_dir=out, progress=False,
                   save_records=True)
    kept = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(TournamentError, match="holds a finished tournament .results.json.: give --overwrite"):
        run_tournament(["random", "random"], num_players=2, games=2, seed=1, workers=1, out_dir=out, progress=False)
    argv = ["tournament", "--agents", "random", "random", "--players", "2", "--games", "2", "--seed", "1",
            "--workers", "1", "--no-progress", "--save-records", "--out", str(out)]
    capsys.readouterr()
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bali tournament: error: --out") and "--overwrite" in err and len(err.splitlines()) == 1
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == kept
    assert len(list((out / "records").glob("game_*.json"))) == 6
    assert cli_main([*argv, "--overwrite"]) == 0
    assert "--overwrite: replaced the earlier run" in capsys.readouterr().err
    assert len(list((out / "records").glob("game_*.json"))) == 2
    assert len(list((out / "replays").glob("game_*.html"))) == 2  # the earlier run's replays went too
    (out / "results.json").unlink()  # as if interrupted: a journal, no results
    assert cli_main(argv) == 2
    assert "holds an unfinished tournament (results.csv" in (err := capsys.readouterr().err) and \
        f"--resume '{out}'" in err and "--overwrite" in err
    assert cli_main([*argv, "--resume", "--overwrite"]) == 2
    assert "give one" in capsys.readouterr().err
    assert cli_main([*argv, "--resume"]) == 0 and (out / "results.json").is_file()


def test_an_out_holding_other_files_is_used_and_they_are_kept(tmp_path):
    """An --out holding none of a tournament's files (a folder of notes) is used; --overwrite
    removes only a tournament's own files, never anything else."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    run_tournament(["random", "random"], num_players=2, games=2, workers=1, out_dir=out, progress=False)
    run_tournament(["random", "random"], num_players=2, games=2, workers=1, out_dir=out, progress=False,
                   overwrite=True)
    assert (out / "notes.txt").read_text() == "keep me" and (out / "results.json").is_file()


def test_out_is_checked_before_any_game(tmp_path):
    """An --out that cannot be written is refused before anything is played."""
    (tmp_path / "file").write_text("x")
    with pytest.raises(TournamentError, match="cannot write to the output folder"):
        run_tournament(["random", "random"], num_players=2, games=2, out_dir=tmp_path / "file" / "out", progress=False)
    with pytest.raises(TournamentError, match="unknown agent"):
        run_tournament(["random", "nosuch"], num_players=2, games=2, out_dir=tmp_path / "new", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def _children(pid):
    import subprocess as sp

    out = sp.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["kill_worker", "sigterm_parent"])
def test_fault_then_resume_matches_an_uninterrupted_run(tmp_path, fault):
    """Kill one worker mid-run (reported in one line within about a second) or SIGTERM the
    parent (workers stopped, journal kept, the resume command printed); --resume then finishes
    with the results of an uninterrupted run of the same seed."""
    import os
    import signal
    import subprocess as sp
    import sys
    import time

    args = ["--agents", "greedy", "random", "--players", "2", "--games", "3000", "--seed", "2", "--workers", "2",
            "--batch-size", "16", "--no-progress"]
    root = os.path.dirname(os.path.dirname(__file__))
    cmd = [sys.executable, "-m", "bali_env.apps.cli", "tournament", *args]
    proc = sp.Popen([*cmd, "--out", str(tmp_path / "cut")], cwd=root, stdout=sp.PIPE, stderr=sp.PIPE, text=True)
    journal = tmp_path / "cut" / "journal.jsonl"
    deadline = time.time() + 300
    while not journal.exists() or journal.read_text().count("\n") < 100:
        assert proc.poll() is None and time.time() < deadline, proc.communicate()
        time.sleep(0.1)
    workers = [p for p in _children(proc.pid) if p != proc.pid]
    if fault == "kill_worker":
        os.kill(max(workers), signal.SIGKILL)
    else:
        proc.send_signal(signal.SIGTERM)
    t0 = time.time()
    _, err = proc.communicate(timeout=60)
    assert time.time() - t0 < 10
    assert proc.returncode == (1 if fault == "kill_worker" else 130), err
    assert "--resume" in err and ("died" in err if fault == "kill_worker" else "interrupted" in err)
    from pathlib import Path

    def alive():
        return [p for p in workers if Path(f"/proc/{p}").exists() and ") Z " not in Path(f"/proc/{p}/stat").read_text()]

    deadline = time.time() + 10
    while alive() and time.time() < deadline:
        time.sleep(0.05)
    assert not alive(), "workers outlived the tournament"
    finished = journal.read_text().count("\n") - 1
    assert 100 <= finished < 3000
    sp.run([*cmd, "--out", str(tmp_path / "cut"), "--resume"], cwd=root, check=True, capture_output=True)
    sp.run([*cmd, "--out", str(tmp_path / "whole")], cwd=root, check=True, capture_output=True)
    assert _stats(tmp_path / "cut") == _stats(tmp_path / "whole")


@pytest.mark.parametrize("num_players", [2, 4])
def test_compiled_kernel_shares_are_the_ones_the_games_use(num_players):
    """compile_share compiles, by argument types, exactly the overloads play_games then calls: no
    game step compiles a new signature (else the workers' shared-out first compile is wasted),
    and every job is given to exactly one worker."""
    from bali_env.bots.greedy.decide import greedy_decide_batch
    from bali_env.arena import compile_share, play_games
    from bali_env import engine as C

    kernels = (C.batch_reset_one, C.batch_step_serial, greedy_decide_batch)
    for w in range(2):
        compile_share(["greedy", "random", "greedy"], C.GameConfig(num_players, True, num_players == 4), w, 2)
    compiled = [set(k.signatures) for k in kernels]
    play_games(["greedy", "random"] * (num_players // 2), range(4), num_players=num_players, seed=3, oracle=True,
               demon=num_players == 4)
    assert [set(k.signatures) for k in kernels] == compiled


@pytest.mark.slow
def test_the_example_bot_follows_the_guide_and_beats_random():
    """agents/my_bot.py (docs/bots.md's worked example) plays from its file spec in 2 worker
    processes, with a setting, and beats random."""
    from pathlib import Path

    bot = Path(__file__).resolve().parent.parent / "agents" / "my_bot.py"
    result = run_tournament([f"{bot}:PriestFirst:take_offerings=1", "random"], num_players=2, games=40, seed=0,
                            workers=2, progress=False)
    mine = result.participants[0]
    assert mine["games"] == 40 and mine["win_rate"] > 0.5


@pytest.mark.slow
def test_a_short_run_of_fast_agents_plays_in_process_once_compiled(capsys):
    """At most QUICK_GAMES games of batched agents with their kernels compiled play in this
    process (starting workers would take longer than the games), and say nothing of compiling;
    slow agents and long runs go to the workers."""
    from bali_env.arena import QUICK_GAMES
    from bali_env.envs import batched as vector

    vector.compile_kernels(2, False, False)
    assert vector.kernels_cached(2, False, False)
    result = run_tournament(["greedy", "random"], num_players=2, games=8, seed=0, workers=2)
    assert result.participants[0]["games"] == 8
    assert result.config["played"] == "in-process" and ", in-process, " in result.table(width=200).splitlines()[0]
    assert "compiling" not in capsys.readouterr().err
    for agents, games in ((["mcts:sims=5", "random"], 4), (["greedy", "random"], QUICK_GAMES + 2)):
        result = run_tournament(agents, num_players=2, games=games, seed=0, workers=2, progress=False)
        assert result.config["played"] == "2 worker processes"


@pytest.mark.slow
def test_kernels_cached_reads_the_disk_cache(tmp_path):
    """kernels_cached is False in a fresh process with an empty cache and True once another
    process compiled the kernels into that cache (nothing loaded to answer)."""
    import os
    import subprocess
    import sys

    probe = "from bali_env.envs import batched; print(batched.kernels_cached(3, True, False))"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    run = [sys.executable, "-c"]
    assert subprocess.run([*run, probe], env=env, capture_output=True, text=True).stdout.strip() == "False"
    compile_them = "from bali_env.envs import batched; batched.compile_kernels(3, True, False)"
    subprocess.run([*run, compile_them], env=env, check=True)
    assert subprocess.run([*run, probe], env=env, capture_output=True, text=True).stdout.strip() == "True"


def _bali(args, cwd, cache=None, **kwargs):
    """Run ``bali ARGS`` in a new process (with an empty Numba cache in ``cache``)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, **({"NUMBA_CACHE_DIR": str(cache)} if cache else {}))
    return subprocess.run([sys.executable, "-m", "bali_env.apps.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("agents, games", [(["mcts:sims=5", "random"], 4), (["greedy", "random"], 66)])
def test_the_compile_notice_is_said_once_and_only_when_kernels_compile(tmp_path, agents, games):
    """From an empty cache, a run that compiles (search agents, long runs: not interpreted) says
    so in one line when stderr is not a terminal; the same run again, cached, does not."""
    args = ["tournament", "--agents", *agents, "--players", "2", "--games", str(games), "--workers", "2",
            "--out", str(tmp_path / "out")]
    first = _bali(args, tmp_path, cache=tmp_path / "cache", timeout=600)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("compiling the game kernels") == 1, first.stderr
    assert "interpreted" not in first.stdout
    # a line per part ready, then the games' bar (its rate counts games, not compiling)
    ready = [line for line in first.stderr.splitlines() if line.startswith("  ready: ")]
    assert sorted(line.split(" (")[0][len("  ready: "):] for line in ready) == sorted(["the game", *set(agents)])
    assert ready[-1].split(" (")[1].startswith(f"{len(ready)}/{len(ready)} parts ready")
    err = first.stderr
    assert err.index("compiling the game kernels") < err.index("  ready: ") < err.index("tournament:")
    again = _bali([*args, "--overwrite"], tmp_path, cache=tmp_path / "cache", timeout=600)
    assert again.returncode == 0 and "compiling" not in again.stderr, again.stderr


@pytest.mark.parametrize("num_players, oracle, demon, lineup", [
    pytest.param(2, False, False, ["greedy", "ppo"], marks=pytest.mark.slow),
    pytest.param(3, True, False, ["greedy", "random", "greedy"], marks=pytest.mark.slow),
    pytest.param(4, True, True, ["greedy", "ppo", "random", "greedy"], marks=pytest.mark.slow),
])
def test_a_first_run_played_interpreted_gives_the_compiled_games(tmp_path, num_players, oracle, demon, lineup):
    """A short first run of cheap agents (empty cache) plays interpreted in worker processes
    with Numba's JIT off, without a compile notice, and plays the very games compiled kernels
    play: same deals, same moves, same scores and winners."""
    setup = {"num_players": num_players, "games": 8, "seed": 7, "oracle": oracle, "demon": demon,
             "progress": False, "save_records": True}
    compiled = run_tournament(lineup, workers=1, out_dir=tmp_path / "compiled", **setup)
    args = ["tournament", "--agents", *lineup, "--players", str(num_players), "--games", "8", "--seed", "7",
            "--workers", "2", "--no-progress", "--save-records", "--out", str(tmp_path / "interpreted")]
    args += ["--oracle"] * oracle + ["--demon"] * demon
    run = _bali(args, tmp_path, cache=tmp_path / "cache", timeout=600)
    assert run.returncode == 0, run.stderr
    interpreted = json.loads((tmp_path / "interpreted" / "results.json").read_text())
    assert interpreted["config"]["played"] == "2 worker processes, interpreted: kernels not compiled yet"
    assert "interpreted: kernels not compiled yet" in " ".join(run.stdout.split())  # the header says so
    assert "compiling" not in run.stderr
    assert compiled.config["played"] == "in-process"
    assert interpreted["games"] == compiled.games and interpreted["participants"] == compiled.participants
    records = sorted((tmp_path / "compiled" / "records").glob("game_*.json"))
    assert len(records) == len(compiled.games) >= 8
    for path in records:  # every move of every game
        assert (tmp_path / "interpreted" / "records" / path.name).read_text() == path.read_text()


def _outlive_sigterm() -> None:
    """A worker that ignores SIGTERM and sleeps (the case ``_stop`` must still end)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(600)


@pytest.mark.slow
def test_stopping_the_workers_kills_one_that_outlives_sigterm():
    """``_stop`` terminates the workers, then kills one still there after 5 s: multiprocessing
    joins its children at exit with no time limit, so it would hold the tournament's exit."""
    import multiprocessing as mp

    from bali_env.arena.workers import _stop

    proc = mp.get_context("fork").Process(target=_outlive_sigterm, daemon=True)
    proc.start()
    time.sleep(0.5)  # its handler is in place
    _stop([proc])
    assert not proc.is_alive() and proc.exitcode == -9  # killed, after SIGTERM did nothing
