"""The ``ppo`` agent's errors say what to do, in one line: a player count without a shipped policy
names ``bali train --players N`` and ``ppo:path=FILE``; a ``ppo:path=`` that is not the ``.npz``
``bali train`` writes (a Python file, a pickle, junk, an .npz of something else) is refused
without unpickling anything; the shipped policies play legal moves."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import bali_env
from bali_env.agents.base import make_agent
from bali_env.agents.ppo import ExportedPolicy, shipped_policy

NOT_A_POLICY = "not a policy file: expected the .npz that bali train writes"


def _observation(num_players: int) -> tuple[np.ndarray, np.ndarray]:
    env = bali_env.raw_env(num_players=num_players)
    env.reset(seed=0)
    o = env.observe(env.agent_selection)
    return o["observation"], o["action_mask"]


def test_a_player_count_without_a_shipped_policy_says_how_to_train_one():
    """The shipped ppo has policies for 2 and 4 players: for 3, check_players (what bali play calls
    on its bots) and the first move both raise one line naming the command and the setting."""
    assert shipped_policy(2).is_file() and not shipped_policy(3).is_file()
    agent = make_agent("ppo", seed=0)
    agent.check_players(2)
    obs, mask = _observation(2)
    assert mask[agent.act(obs, mask)] == 1
    with pytest.raises(ValueError) as exc:
        agent.check_players(3)
    message = str(exc.value)
    assert "\n" not in message
    assert "train a 3-player policy with bali train --players 3" in message and "ppo:path=FILE" in message
    obs, mask = _observation(3)
    with pytest.raises(ValueError, match="bali train --players 3"):
        agent.act(obs, mask)


class _Boom:
    """Unpickling this would run code: the test fails if it ever is."""

    def __reduce__(self):
        return (pytest.fail, ("a pickle was loaded",))


@pytest.mark.parametrize("content", ["python", "pickle", "junk", "empty", "npy", "npz_other", "npz_object"])
def test_a_file_that_is_not_a_policy_is_refused_in_one_line(tmp_path, content):
    """ExportedPolicy and make_agent("ppo:path=...") refuse anything but a policy export with the
    same one line, and never unpickle (an object array or a pickle is not loaded)."""
    path = tmp_path / "bot.npz"
    if content == "python":
        path = tmp_path / "my_bot.py"
        path.write_text("from bali_env.agents import Agent\n\nclass MyBot(Agent):\n    pass\n")
    elif content == "pickle":
        path.write_bytes(pickle.dumps(_Boom()))
    elif content == "junk":
        path.write_bytes(bytes(range(256)) * 4)
    elif content == "empty":
        path.write_bytes(b"")
    elif content == "npy":
        np.save(path.with_suffix(".npy"), np.zeros(3))
        path = path.with_suffix(".npy")
    elif content == "npz_other":
        np.savez(path, weights=np.zeros(3))
    else:
        np.savez(path, meta=np.array([_Boom()], dtype=object))
    with pytest.raises(ValueError) as exc:
        ExportedPolicy(path)
    assert str(exc.value) == f"{NOT_A_POLICY}, got {str(path)!r}"
    with pytest.raises(ValueError, match=NOT_A_POLICY):
        make_agent(f"ppo:path={path}")


def test_bali_play_reports_a_bad_ppo_opponent_in_one_line(tmp_path, capsys):
    """`bali play --opponents ppo:path=my_bot.py` and the shipped ppo at 3 players: exit code 2,
    one line on stderr saying what to do, nothing printed on stdout and nothing saved."""
    from bali_env.apps.terminal import main

    bot = tmp_path / "my_bot.py"
    bot.write_text("print('hello')\n")
    save = tmp_path / "game.json"
    for argv, says in ((["--players", "2", "--opponents", f"ppo:path={bot}"], NOT_A_POLICY),
                       (["--players", "3", "--opponents", "ppo", "greedy"], "bali train --players 3")):
        assert main([*argv, "--save", str(save)], input_fn=lambda prompt: "q") == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        [line] = captured.err.strip().splitlines()
        assert line.startswith("bali play: error: opponent 'ppo") and says in line
    assert not save.exists()
