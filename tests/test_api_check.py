"""The generic checker ``bali_env.envs.api_check.check_env`` itself: it passes on an environment that
is not Bali (PettingZoo's ``connect_four_v3``), its options follow that environment's conventions,
it knows no Bali rule, and it fails on environments broken in various ways."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from pettingzoo.utils.wrappers import BaseWrapper

import bali_env
from bali_env.envs import api_check
from bali_env.envs.api_check import CheckOptions, check_env, copy_env


def _connect_four():
    pytest.importorskip("pygame")
    from pettingzoo.classic import connect_four_v3

    return connect_four_v3


# ----------------------------------------------------------------------------- connect four
def test_check_env_passes_on_connect_four():
    """connect_four_v3 has no state_dict, legal_actions, reward_mode or illegal_action; it ends
    the game with -1 on an illegal move (TerminateIllegalWrapper), which the checker detects."""
    connect_four_v3 = _connect_four()
    summary = check_env(connect_four_v3.env, num_games=3, seed=0)
    assert summary["games"] == 3
    assert summary["steps"] >= 3 * 7
    assert summary["legal_checked"] >= summary["steps"]
    assert summary["illegal_action"] == "terminate"
    assert summary["illegal_checked"] > 0  # some column filled up in these games
    for rewards in summary["final_rewards"]:
        assert sorted(rewards.values()) in ([-1.0, 1.0], [0.0, 0.0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"illegal_action": "raise"}, "illegal action .* was accepted"),
        ({"final_mask_empty": True}, "non-empty mask after the end"),
    ],
    ids=["raise-on-illegal", "empty-masks-at-the-end"],
)
def test_bali_conventions_fail_on_connect_four(kwargs, message):
    """Two conventions of bali_v0 that connect_four_v3 does not follow are options, and they are
    really checked."""
    connect_four_v3 = _connect_four()
    with pytest.raises(AssertionError, match=message):
        check_env(connect_four_v3.env, num_games=3, seed=0, api_cycles=0, seed_cycles=0, **kwargs)


def test_copy_env_keeps_the_state_of_an_ezpickle_environment():
    """connect_four's raw_env is an EzPickle (deepcopy rebuilds it from its constructor
    arguments); copy_env keeps its game state, and the copy is independent."""
    connect_four_v3 = _connect_four()
    e = connect_four_v3.env()
    e.reset(seed=0)
    for a in (3, 3, 4):
        e.step(a)
    board = list(e.unwrapped.board)
    c = copy_env(e)
    assert c.unwrapped is not e.unwrapped
    assert c.unwrapped.board == board and c.agent_selection == e.agent_selection
    c.step(5)
    assert e.unwrapped.board == board and c.unwrapped.board != board


def test_the_checker_knows_no_bali_rule():
    """No Bali fact in the checker's code: no infos key, reward mode or card of the game."""
    source = inspect.getsource(api_check)
    code = source.split('"""', 2)[2]  # without the module docstring
    bali_words = ("final_scores", "winners", "score_breakdown", "reward_mode", "win_loss", "shrine", "stones")
    for word in (*bali_words, "tableau"):
        assert word not in code, word


# ----------------------------------------------------------------------------- broken environments
class WrongDtype(BaseWrapper):
    """Observations in float64 while the space says float32."""

    def observe(self, agent):
        out = super().observe(agent)
        return {"observation": out["observation"].astype(np.float64), "action_mask": out["action_mask"]}


class MaskAllowsIllegal(BaseWrapper):
    """The mover's mask allows one action that step() rejects."""

    def observe(self, agent):
        out = super().observe(agent)
        mask = out["action_mask"]
        if agent == self.agent_selection and 0 < mask.sum() < mask.size:
            mask[np.flatnonzero(mask == 0)[0]] = 1
        return out


class EarlyReward(BaseWrapper):
    """A non-zero reward before the end."""

    def step(self, action):
        super().step(action)
        if self.agents and not any(self.terminations.values()):
            self.unwrapped.rewards[self.agent_selection] = 0.5


class SharedCopy(BaseWrapper):
    """Copies share the underlying environment, so stepping a copy changes the original."""

    def __deepcopy__(self, memo):
        return SharedCopy(self.env)


@pytest.mark.parametrize(
    "wrapper, kwargs, message",
    [
        (WrongDtype, {}, "observation dtype float64"),
        # legal_fn=None: without it the mask would already disagree with legal_actions()
        (MaskAllowsIllegal, {"legal_fn": None}, "legal action .* was rejected"),
        (EarlyReward, {}, "before the end"),
        (SharedCopy, {}, "changed the original"),
    ],
    ids=["wrong-dtype", "mask-allows-illegal", "early-reward", "shared-copy"],
)
def test_check_env_fails_on_a_broken_environment(wrapper, kwargs, message):
    with pytest.raises(AssertionError, match=message):
        check_env(lambda: wrapper(bali_env.env(num_players=2, illegal_action="raise")), num_games=1, api_cycles=0,
                  seed_cycles=0, **kwargs)


def test_the_broken_wrappers_are_otherwise_harmless():
    """The same wrapper around the real environment, doing nothing, passes (so each failure above
    comes from its breakage)."""
    summary = check_env(lambda: BaseWrapper(bali_env.env(num_players=2, illegal_action="raise")), num_games=1,
                        api_cycles=0, seed_cycles=0)
    assert summary["games"] == 1 and summary["illegal_action"] == "raise"


def test_check_env_rejects_an_unknown_illegal_action_mode():
    with pytest.raises(ValueError, match="illegal_action"):
        check_env(lambda: bali_env.env(num_players=2), api_cycles=0, seed_cycles=0, illegal_action="ignore")


def test_the_options_are_one_record():
    """The options are the fields of ``CheckOptions`` (frozen, its defaults in one place): a
    record passed as ``options`` is used, a keyword changes one of its fields, and an unknown
    keyword is refused by name."""
    calls = []
    options = CheckOptions(api_cycles=0, seed_cycles=0, final_check=lambda env, where: calls.append(where))
    with pytest.raises(AttributeError):
        options.api_cycles = 5  # frozen
    summary = check_env(lambda: bali_env.env(num_players=2, illegal_action="raise"), 1, 3, options,
                        illegal_action="raise")
    assert summary["games"] == 1 and summary["illegal_action"] == "raise" and len(calls) == 1
    assert options.illegal_action == "auto"  # the keyword changed a copy
    with pytest.raises(TypeError, match="num_cycles"):
        check_env(lambda: bali_env.env(num_players=2), options=options, num_cycles=3)
    with pytest.raises(ValueError, match="illegal_action"):
        CheckOptions(illegal_action="ignore")
