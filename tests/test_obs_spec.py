"""The observation spec (``bali_env.engine.obs_spec``) is the one description of the layout: the
encoder writes what it declares, and every consumer reads through it."""

from __future__ import annotations

import numpy as np
import pytest

import bali_env
from bali_env import engine as E
from bali_env.envs.api_check import CONFIGURATIONS, config_id
from bali_env.engine import obs_spec as spec


def test_fields_tile_the_observation():
    """Fields are contiguous, in order, and cover exactly OBS_DIM slots with unique names."""
    end = 0
    for f in spec.OBS_FIELDS:
        assert spec.OFFSET[f.key] == end
        end += f.width
    assert end == spec.OBS_DIM == E.OBS_DIM == len(spec.OBS_SLOTS)
    names = bali_env.observation_slot_names()
    assert len(set(names)) == len(names) == spec.OBS_DIM
    assert spec.FIELDS["seats"].width == spec.SEAT_WIDTH * E.MAX_PLAYERS


def _positions(config, games=2, every=3):
    """Every seat's observation at every few steps of random games."""
    n, oracle, demon = config
    env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
    for g in range(games):
        env.reset(seed=100 + g)
        rng = np.random.default_rng(g)
        step = 0
        while not all(env.terminations.values()):
            if step % every == 0:
                for agent in env.possible_agents:
                    yield env.observe(agent)["observation"]
            env.step(int(rng.choice(env.legal_actions())))
            step += 1


@pytest.mark.parametrize("config", CONFIGURATIONS[::3], ids=config_id)
def test_encoder_uses_the_declared_scales_and_bounds(config):
    """Every slot times its declared scale is a whole count, and lies in [0, high] of the space:
    an encoder that divided by another number than the spec says would fail here."""
    seen = 0
    for obs in _positions(config):
        counts = obs.astype(np.float64) * spec.OBS_SCALE
        assert np.allclose(counts, np.rint(counts), atol=1e-3), np.flatnonzero(~np.isclose(counts, np.rint(counts)))
        assert (obs >= 0).all() and (obs <= spec.OBS_HIGH).all()
        seen += 1
    assert seen > 50


def test_markdown_table_names_every_field():
    """The generated docs table has one row per field (seat fields as sub-rows) and the right spans."""
    table = spec.markdown_table()
    for f in spec.OBS_FIELDS:
        start = spec.OFFSET[f.key]
        span = str(start) if f.width == 1 else f"{start}-{start + f.width - 1}"
        assert f"| {span} |" in table, f.key
    assert table.count("\n| | +") == len(spec.SEAT_FIELDS)
