"""The edges a learner's training loop meets, the same in every way in: an action id outside 0..43
(``-1`` included) is an input error in the AEC env, the single-agent env, the Gymnasium vector env
and the SB3 VecEnv alike, with the AEC env's message; asking for the masks before ``reset()`` is a
clear error, as stepping is."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import bali_env
from bali_env.versus.single import BaliSingleAgentEnv
from bali_env.versus.vector import BaliGymVectorEnv


def _aec_error(action: int) -> str:
    env = bali_env.env(num_players=2)
    env.reset(seed=0)
    with pytest.raises(ValueError) as err:
        env.step(action)
    return str(err.value)


@pytest.mark.parametrize("action", [-1, -5, 44])
def test_an_action_id_out_of_range_is_the_same_input_error_everywhere(action):
    """-1, -5 and 44: ValueError with the AEC env's words from the single env, the vector env and
    the SB3 VecEnv; nothing is played (a vector env's games stand where they were)."""
    said = _aec_error(action)
    single = BaliSingleAgentEnv(opponents="random")
    single.reset(seed=0)
    with pytest.raises(ValueError) as err:
        single.step(action)
    assert str(err.value) == said
    vec = BaliGymVectorEnv(4, opponents="random")
    vec.reset(seed=0)
    before = vec.games.states.copy()
    actions = vec.action_masks().argmax(axis=1)
    actions[2] = action
    with pytest.raises(ValueError) as err:
        vec.step(actions)
    assert str(err.value) == said
    np.testing.assert_array_equal(vec.games.states, before)
    sb3 = pytest.importorskip("bali_env.versus.sb3_vecenv")
    venv = sb3.BaliSB3VecEnv(2, opponents="random")
    venv.reset()
    with pytest.raises(ValueError) as err:
        venv.step(np.array([venv.action_masks()[0].argmax(), action]))
    assert str(err.value) == said


def test_masks_before_reset_are_a_clear_error():
    """``action_masks()`` before the first ``reset()``: RuntimeError saying to reset, from the
    single env and the vector env (made by Gymnasium too)."""
    for env in (BaliSingleAgentEnv(opponents="random"), BaliGymVectorEnv(2, opponents="random"),
                gymnasium.make_vec("bali_env/Bali-v0", num_envs=2).unwrapped):
        with pytest.raises(RuntimeError, match=r"call reset\(\) before action_masks\(\)"):
            env.action_masks()


def test_the_documented_player_count_defaults_are_the_constructors():
    """docs/environment.md says which way in deals how many players by default; the constructors
    agree (the AEC env and the batched env 4, the Gymnasium envs and the SB3 VecEnv 2)."""
    import inspect
    import re
    from pathlib import Path

    BaliSB3VecEnv = pytest.importorskip("bali_env.versus.sb3_vecenv").BaliSB3VecEnv  # noqa: N806 - a class
    page = (Path(__file__).resolve().parent.parent / "docs" / "environment.md").read_text()
    said = re.search(r"Player count by default: (\d) for `bali_env.env\(\)` and `BaliVectorEnv`, (\d) for the "
                     r"Gymnasium ids\nand the SB3 VecEnv", page)
    assert said, "the sentence on the default player counts is gone from docs/environment.md"

    def default(f):
        return inspect.signature(f).parameters["num_players"].default

    assert {default(bali_env.raw_env), default(bali_env.BaliVectorEnv)} == {int(said.group(1))}
    assert {default(BaliSingleAgentEnv), default(BaliGymVectorEnv), default(BaliSB3VecEnv)} == {int(said.group(2))}
    assert gymnasium.make("bali_env/Bali-v0").unwrapped.num_players == int(said.group(2))
