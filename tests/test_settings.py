"""Every game setting one object: ``GameConfig`` (the player count and the variants, checked
once), the tournament's and the league's settings records (every option with its default in one
place, checked when made, with the errors the checks always gave), and the player count checked
once per tournament (the shape of every function, its parameters and its complexity:
``tests/test_structure.py``)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import sys

import numpy as np
import pytest

from bali_env.arena import (
    DEFAULT_BATCH_SIZE,
    GameJob,
    LeagueSettings,
    TournamentError,
    TournamentSettings,
    check_tournament,
    play_games,
    run_tournament,
)
from bali_env.arena.league import run_league
from bali_env.arena.schedule import check_sizes
from bali_env.engine import GameConfig



# --- GameConfig ------------------------------------------------------------------------------------


def test_a_game_config_is_frozen_and_checked_once_when_made():
    game = GameConfig(np.int64(3), oracle=np.bool_(True))
    assert (game.num_players, game.oracle, game.demon) == (3, True, False)
    assert type(game.num_players) is int and type(game.oracle) is bool  # plain Python values, checked
    assert GameConfig() == GameConfig(4, False, False) and hash(GameConfig(2)) == hash(GameConfig(2))
    assert GameConfig(**game.as_dict()) == game
    with pytest.raises(dataclasses.FrozenInstanceError):
        game.num_players = 4  # type: ignore[misc]


@pytest.mark.parametrize("kwargs, error, says", [
    ({"num_players": 5}, ValueError, "num_players must be 2..4, got 5"),
    ({"num_players": 1}, ValueError, "num_players must be 2..4, got 1"),
    ({"num_players": 4.0}, TypeError, "num_players must be an int, got float 4.0"),
    ({"num_players": True}, TypeError, "num_players must be an int"),
    ({"oracle": "no"}, TypeError, "oracle must be a bool"),
    ({"demon": 1}, TypeError, "demon must be a bool"),
])
def test_a_bad_game_config_names_the_argument(kwargs, error, says):
    with pytest.raises(error, match=says):
        GameConfig(**kwargs)


# --- the settings records --------------------------------------------------------------------------


def test_the_defaults_live_in_the_records():
    """``run_tournament``, ``check_tournament`` and ``run_league`` take the records' defaults:
    they declare none of their own, and the command line's are the records' too."""
    for function in (run_tournament, check_tournament, run_league):
        defaults = {k: p.default for k, p in inspect.signature(function).parameters.items()
                    if p.default is not inspect.Parameter.empty}
        assert defaults == {"settings": None}, function.__name__
    t = TournamentSettings()
    assert (t.game, t.games, t.seed, t.workers, t.batch_size, t.backend) == (GameConfig(4), 1000, 0, 2,
                                                                              DEFAULT_BATCH_SIZE, "local")
    assert LeagueSettings().games == 200 and LeagueSettings().sizes == (2, 3, 4)
    from bali_env.apps.cli import build_parser

    parser = build_parser()
    tournament = parser.parse_args(["tournament", "--agents", "random", "random"])
    assert (tournament.players, tournament.games, tournament.seed, tournament.workers, tournament.batch_size,
            tournament.backend) == (t.game.num_players, t.games, t.seed, t.workers, t.batch_size, t.backend)
    league = parser.parse_args(["league", "--agents", "random", "greedy"])
    assert (tuple(league.players), league.games, league.workers) == (LeagueSettings().sizes, 200, 2)


def test_keyword_fields_make_the_record_and_override_a_given_one():
    made = TournamentSettings.make(num_players=2, games=10, oracle=True)
    assert made == TournamentSettings(game=GameConfig(2, oracle=True), games=10)
    assert TournamentSettings.make(made) is made  # no fields: the record as it is
    changed = TournamentSettings.make(made, seed=7, demon=True)
    assert changed.seed == 7 and changed.game == GameConfig(2, True, True) and changed.games == 10
    assert made.replace(workers=1).workers == 1 and made.workers == 2
    with pytest.raises(TypeError, match="TournamentSettings has no setting 'gmaes'"):
        TournamentSettings.make(gmaes=10)
    with pytest.raises(TypeError, match="no setting 'sizes'"):
        run_tournament(["random", "random"], sizes=(2,))
    with pytest.raises(TypeError, match="expected a LeagueSettings"):
        run_league(["random", "greedy"], made)


@pytest.mark.parametrize("fields, says", [
    ({"num_players": 5}, "num_players must be 2..4, got 5"),
    ({"num_players": "4"}, "num_players must be an int, got str '4'"),
    ({"games": 0}, "games must be an int >= 1, got 0"),
    ({"workers": 0}, "workers must be an int >= 1, got 0"),
    ({"batch_size": 0}, "batch_size must be an int >= 1, got 0"),
    ({"seed": 1.5}, "seed must be an int"),
    ({"backend": "dask"}, "backend must be one of 'local', 'ray', got 'dask'"),
    ({"chunk_size": 4}, "ray_address and chunk_size need backend='ray'"),
    ({"move_time": -1}, r"move_time \(--move-time, seconds\) must be > 0"),
    ({"oracle": "yes"}, "oracle must be a bool"),
    ({"save_records": True}, "save_records needs out_dir"),
    ({"resume": True}, "resume needs out_dir"),
    ({"progress": "yes"}, "progress must be a bool or a function"),
])
def test_a_bad_setting_is_a_tournament_error_before_anything_is_made(tmp_path, monkeypatch, fields, says):
    """Made from keywords or by ``run_tournament``, a record with a bad value raises the error
    the checks always raised (TournamentError, a ValueError, naming the setting), and nothing
    is played or written."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TournamentError, match=says):
        TournamentSettings.make(**fields)
    with pytest.raises(TournamentError, match=says):
        run_tournament(["random", "random"], **{"num_players": 2, "games": 2, "progress": False} | fields)
    assert list(tmp_path.iterdir()) == []


def test_a_league_checks_its_settings_before_it_makes_a_folder(tmp_path):
    """The backend, the workers and the variants of a league are checked with the rest, before
    its folder is made (they were checked only when the first part started)."""
    for fields, says in (({"ray_address": "10.0.0.1:6379"}, "ray_address and chunk_size need backend='ray'"),
                         ({"workers": 0}, "workers must be an int >= 1"), ({"demon": "no"}, "demon must be a bool"),
                         ({"sizes": (2, 5)}, r"players must be among \(2, 3, 4\), got \[2, 5\]")):
        with pytest.raises(TournamentError, match=says):
            run_league(["greedy", "random"], games=2, out_dir=tmp_path / "out", progress=False, **fields)
        assert not (tmp_path / "out").exists()
    part = LeagueSettings(games=6, seed=3, oracle=True, move_time=2.0).part(3, tmp_path / "ffa", True)
    assert part == TournamentSettings(game=GameConfig(3, oracle=True), games=6, seed=3, move_time=2.0,
                                      out_dir=tmp_path / "ffa", resume=True)


def test_a_record_plays_the_same_tournament_as_its_fields():
    fields = {"num_players": 2, "games": 4, "seed": 3, "workers": 1, "progress": False}
    by_fields = run_tournament(["greedy", "random"], **fields).to_dict()
    by_record = run_tournament(["greedy", "random"], TournamentSettings.make(**fields)).to_dict()
    overridden = run_tournament(["greedy", "random"], TournamentSettings.make(**fields | {"seed": 9}), seed=3)
    assert by_record == by_fields == overridden.to_dict()


def test_a_league_record_plays_the_same_league_as_its_fields():
    fields = {"games": 2, "seed": 4, "workers": 1, "sizes": (2,), "progress": False}
    by_fields = run_league(["greedy", "random"], **fields).to_dict()
    assert run_league(["greedy", "random"], LeagueSettings(**fields)).to_dict() == by_fields
    assert run_league(["greedy", "random"], LeagueSettings(**fields | {"seed": 1}), seed=4).to_dict() == by_fields


def test_a_job_travels_whole_and_plays_as_its_keywords():
    """``play_games`` takes a ``GameJob`` (what the workers and Ray tasks are sent, pickled) or
    its fields as keywords, and plays the same games either way."""
    job = GameJob(game=GameConfig(2), seed=5, keep_actions=True, names=["a", "b"])
    assert pickle.loads(pickle.dumps(job)) == job and job.names == ("a", "b")
    by_job = play_games(["greedy", "random"], range(3), job)
    by_keywords = play_games(["greedy", "random"], range(3), num_players=2, seed=5, keep_actions=True)
    assert [{k: v for k, v in r.items() if k != "move_times"} for r in by_job] == \
        [{k: v for k, v in r.items() if k != "move_times"} for r in by_keywords]
    with pytest.raises(TypeError, match="seed"):
        GameJob.make(num_players=2)


# --- one check of the player count -----------------------------------------------------------------


def _count_player_checks(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Count the calls of ``check_num_players`` from the arena and ``GameConfig`` (every module
    that imported it by name), from now on."""
    import bali_env.engine.config
    import bali_env.engine.validate as validate

    calls: list[object] = []
    real = validate.check_num_players

    def counting(*args: object, **kwargs: object) -> int:
        calls.append(args)
        return real(*args, **kwargs)

    patched = [name for name, module in list(sys.modules.items())
               if (name.startswith("bali_env.arena") or name == "bali_env.engine.config")
               and getattr(module, "check_num_players", None) is real]
    assert {"bali_env.engine.config", "bali_env.arena.schedule"} <= set(patched)
    for name in patched:
        monkeypatch.setattr(sys.modules[name], "check_num_players", counting)
    assert bali_env.engine.config.check_num_players is counting
    return calls


def test_the_player_count_is_checked_once_per_tournament(monkeypatch):
    calls = _count_player_checks(monkeypatch)
    check_sizes(3, 2)  # a player count given as an int is checked where it is given
    assert len(calls) == 1
    calls.clear()
    result = run_tournament(["random", "random"], num_players=2, games=2, seed=0, workers=1, progress=False)
    assert len(result.games) == 2
    assert calls == [(2,)]  # when the record's GameConfig was made, and never again in the arena
    calls.clear()
    settings = TournamentSettings.make(num_players=2, games=2, workers=1, progress=False)
    assert calls == [(2,)]
    check_tournament(["random", "random"], settings)
    run_tournament(["random", "random"], settings)
    assert calls == [(2,)]
