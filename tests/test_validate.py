"""The one module of argument validators (``bali_env.engine.validate``): each names the argument,
TypeError for the wrong type (a bool is never an int or a number), ValueError out of range; the
argparse types built on them; a pydantic error as one line."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from pydantic import BaseModel, Field, StrictInt, ValidationError

from bali_env.engine import validate as V


@pytest.mark.parametrize("value", [3, np.int16(3), np.int64(3)])
def test_ints_of_every_kind_pass_as_python_ints(value):
    out = V.check_int("k", value, 0, 5)
    assert out == 3 and type(out) is int


@pytest.mark.parametrize("value, error, says", [
    (True, TypeError, "k must be an int, got bool True"),
    (np.bool_(False), TypeError, "k must be an int"),
    (2.0, TypeError, "k must be an int, got float 2.0"),
    ("2", TypeError, "k must be an int, got str '2'"),
    (None, TypeError, "k must be an int"),
    (-1, ValueError, "k must be 0..5, got -1"),
    (6, ValueError, "k must be 0..5, got 6"),
])
def test_a_bad_int_names_the_argument(value, error, says):
    with pytest.raises(error, match=says):
        V.check_int("k", value, 0, 5)


def test_one_sided_ranges_say_so():
    with pytest.raises(ValueError, match="games must be an int >= 1, got 0"):
        V.check_int("games", 0, 1)
    with pytest.raises(ValueError, match="depth must be an int <= 3, got 4"):
        V.check_int("depth", 4, None, 3)
    assert V.check_int("seed", -7) == -7


@pytest.mark.parametrize("value, error", [(True, TypeError), ("1.5", TypeError), (float("nan"), ValueError),
                                          (float("inf"), ValueError), (0.0, ValueError), (-1, ValueError),
                                          (86_401, ValueError)])
def test_numbers_are_finite_reals_in_range(value, error):
    with pytest.raises(error, match="move_time"):
        V.check_number("move_time", value, 0, 86_400, low_open=True)


def test_numbers_pass_as_floats():
    assert V.check_number("c", np.float32(0.5), 0) == 0.5 and V.check_number("c", 2, 0) == 2.0
    assert V.check_number("c", 0, 0) == 0.0  # a closed bound takes its end


def test_flags_choices_seats_and_player_counts():
    assert V.check_flag("oracle", np.bool_(True)) is True
    with pytest.raises(TypeError, match="oracle must be a bool"):
        V.check_flag("oracle", 1)
    assert V.check_choice("reward", "score", ("win_loss", "score")) == "score"
    with pytest.raises(ValueError, match="reward must be one of 'win_loss', 'score', got 'dense'"):
        V.check_choice("reward", "dense", ("win_loss", "score"))
    with pytest.raises(ValueError, match="reward must be one of"):
        V.check_choice("reward", ["score"], ("win_loss", "score"))
    assert [V.check_num_players(n) for n in (2, 3, 4)] == [2, 3, 4]
    with pytest.raises(ValueError, match="num_players must be 2..4, got 5"):
        V.check_num_players(5)
    with pytest.raises(ValueError, match="--seat must be 0..2, got 3"):
        V.check_seat(3, 3, "--seat")


def test_actions_and_seeds():
    assert V.check_action(np.array(43)) == 43
    with pytest.raises(TypeError, match="action must be an integer in 0..43"):
        V.check_action(True)
    with pytest.raises(ValueError, match="action 44 is out of range"):
        V.check_action(44)
    with pytest.raises(TypeError, match="seed must be an int or None"):
        V.check_seed(1.0)


def test_a_game_count_must_fit_in_memory():
    with pytest.raises(ValueError, match="num_envs=.*GiB"):
        V.check_game_count("num_envs", 2**40, 1000)
    assert V.check_game_count("num_games", 0, 1000, low=0) == 0


def test_argparse_types_are_the_validators():
    parser = argparse.ArgumentParser(prog="p", exit_on_error=False)
    parser.add_argument("--games", type=V.arg_type(V.check_int, 1))
    assert parser.parse_args(["--games", "3"]).games == 3
    for bad, says in (("0", "must be an int >= 1, got 0"), ("x", "not a number"), ("1.5", "must be an int")):
        with pytest.raises(argparse.ArgumentError, match=says):
            parser.parse_args(["--games", bad])


class _Settings(BaseModel):
    players: StrictInt = Field(2, ge=2, le=4, description="an integer in 2..4")
    names: list[str] = []


def test_a_model_error_is_one_line_naming_the_field():
    with pytest.raises(ValidationError) as info:
        _Settings.model_validate({"players": 7})
    assert V.model_problem(info.value, _Settings) == "players must be an integer in 2..4, got 7"
    with pytest.raises(ValidationError) as info:
        _Settings.model_validate({"names": ["a", 3]})
    assert V.model_problem(info.value, _Settings).startswith("names[1]: ")
