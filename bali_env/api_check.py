"""A generic API checker for action-masked PettingZoo AEC environments (in the style of pgx's
``api_test``), used by the test suite on every ``bali_v0`` configuration.

``check_env(env_fn)`` does two things:

1. It runs PettingZoo's own ``api_test`` and ``seed_test`` on fresh environments.
2. It plays ``num_games`` games with uniformly random *legal* actions (seeded) and checks at
   every step that

   - every live agent's observation lies in its observation space, with the documented
     dtypes and shapes (``{"observation": float, "action_mask": int8}``);
   - ``observation_space(agent)`` / ``action_space(agent)`` return the same object every call;
   - the action mask of every agent that is not to move is all 0, and the mask of the agent to
     move is never empty before the end (and agrees with ``unwrapped.legal_actions()`` when the
     environment has it);
   - every legal action is accepted (each on its own ``copy.deepcopy`` of the environment) and
     every illegal action is rejected with ``ValueError`` on a copy, leaving
     ``unwrapped.state_dict()`` unchanged (with ``illegal_action="terminate"``: the copy ends
     the game instead, the offender gets -1 and the others 0);
   - stepping the copies never changes the original environment;
   - rewards are 0 before the end; at the end every agent terminates at once (no truncation),
     the rewards follow the documented reward mode (``"win_loss"``: +1 to each winner, -1 to
     every other agent; ``"score"``: own score minus the mean of the others', summing to 0) and
     every agent's ``infos`` holds ``final_scores``, ``winners`` and ``score_breakdown`` that
     agree with ``state_dict()``;
   - after the end, every agent leaves with ``step(None)``.

The environment-specific parts (``state_dict``, ``legal_actions``, ``reward_mode``,
``illegal_action``) are used only when ``env.unwrapped`` provides them, so the checker also runs
on other masked AEC environments. Any failed check raises ``AssertionError`` with the game,
step and agent in the message; on success ``check_env`` returns a small summary dict.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from pettingzoo.utils.env import AECEnv

__all__ = ["CONFIGURATIONS", "check_env", "config_id"]

#: The 12 configurations of ``bali_v0``: (num_players, oracle, demon).
CONFIGURATIONS: tuple[tuple[int, bool, bool], ...] = tuple(
    (n, oracle, demon) for n in (2, 3, 4) for oracle in (False, True) for demon in (False, True)
)


def config_id(config: tuple[int, bool, bool]) -> str:
    """A short readable id for a configuration, e.g. ``"3p-oracle-demon"`` (for pytest ids)."""
    n, oracle, demon = config
    parts = [f"{n}p"] + (["oracle"] if oracle else []) + (["demon"] if demon else [])
    return "-".join(parts) if (oracle or demon) else f"{n}p-base"


def _state(env: AECEnv) -> dict[str, Any] | None:
    """``env.unwrapped.state_dict()`` when the environment has one, else None."""
    fn = getattr(env.unwrapped, "state_dict", None)
    return fn() if callable(fn) else None


def _check_observation(env: AECEnv, agent: str, obs: Any, where: str) -> np.ndarray:
    """Check one observation against its space, dtypes and shapes; return its action mask."""
    space = env.observation_space(agent)
    assert isinstance(obs, dict), f"{where}: observation of {agent} is {type(obs).__name__}, not a dict"
    assert set(obs) == {"observation", "action_mask"}, f"{where}: observation keys {sorted(obs)}"
    o, m = obs["observation"], obs["action_mask"]
    assert isinstance(o, np.ndarray) and isinstance(m, np.ndarray), f"{where}: arrays expected"
    assert o.dtype == space["observation"].dtype, f"{where}: observation dtype {o.dtype}"
    assert o.shape == space["observation"].shape, f"{where}: observation shape {o.shape}"
    assert m.dtype == np.int8, f"{where}: action_mask dtype {m.dtype}, expected int8"
    assert m.shape == (env.action_space(agent).n,), f"{where}: action_mask shape {m.shape}"
    assert np.all(np.isfinite(o)), f"{where}: non-finite observation values for {agent}"
    if not space.contains(obs):
        low, high = space["observation"].low, space["observation"].high
        bad = np.flatnonzero((o < low) | (o > high))
        raise AssertionError(f"{where}: observation of {agent} outside its space at indices {bad.tolist()}: {o[bad].tolist()}")
    assert set(np.unique(m).tolist()) <= {0, 1}, f"{where}: action mask values {np.unique(m).tolist()}"
    return m


def _check_final(env: AECEnv, where: str, summary: dict[str, Any]) -> None:
    """End-of-game checks: everyone terminated at once, rewards as documented, infos complete."""
    agents = list(env.agents)
    assert all(env.terminations[a] for a in agents), f"{where}: not every agent terminated at the end"
    assert not any(env.truncations[a] for a in agents), f"{where}: an agent was truncated"
    rewards = {a: float(env.unwrapped._cumulative_rewards[a]) for a in agents}
    for a in agents:
        mask = env.observe(a)["action_mask"]
        assert not mask.any(), f"{where}: {a} has a non-empty mask after the end"
    legal = getattr(env.unwrapped, "legal_actions", None)
    if callable(legal):
        assert legal() == [], f"{where}: legal_actions() after the end is {legal()}"
    info = env.infos[agents[0]]
    for key in ("final_scores", "winners", "score_breakdown"):
        for a in agents:
            assert key in env.infos[a], f"{where}: infos[{a}] lacks {key!r} at the end"
            assert env.infos[a][key] == info[key], f"{where}: infos[{a}][{key!r}] differs between agents"
    scores, winners = info["final_scores"], info["winners"]
    n = len(agents)
    assert len(scores) == n and len(info["score_breakdown"]) == n, f"{where}: wrong number of scores"
    assert winners and set(winners) <= set(range(n)), f"{where}: winners {winners}"
    for q, row in enumerate(info["score_breakdown"]):
        assert row["total"] == scores[q], f"{where}: score_breakdown total {row['total']} != final score {scores[q]}"
        parts = row["vp_tokens"] + row["shrines"] + row["stones"] + sum(row["offerings"].values())
        assert parts == row["total"], f"{where}: score_breakdown parts {parts} != total {row['total']}"
    state = _state(env)
    if state is not None:
        assert state["phase"] == "game_over" and state["to_move"] is None, f"{where}: state_dict not over"
        assert state["scores"] == scores, f"{where}: infos scores {scores} != state_dict {state['scores']}"
        assert state["winners"] == winners, f"{where}: infos winners {winners} != state_dict {state['winners']}"
        # RULES.md 4: highest score, then most shrines, then most stones; ties share the win
        keys = [(scores[q], state["tableaus"][q][2], state["stones"][q]) for q in range(n)]
        best = max(keys)
        assert winners == [q for q in range(n) if keys[q] == best], f"{where}: winners {winners} for keys {keys}"
    mode = getattr(env.unwrapped, "reward_mode", "win_loss")
    seat = {a: q for q, a in enumerate(env.possible_agents)}
    for a in agents:
        q = seat[a]
        if mode == "win_loss":
            want = 1.0 if q in winners else -1.0
        else:
            want = scores[q] - (sum(scores) - scores[q]) / (n - 1)
        assert abs(rewards[a] - want) < 1e-9, f"{where}: reward of {a} is {rewards[a]}, expected {want} ({mode})"
    total = sum(rewards.values())
    if mode == "win_loss":
        assert total == len(winners) - (n - len(winners)), f"{where}: win_loss rewards sum to {total}"
    else:
        assert abs(total) < 1e-6, f"{where}: score rewards sum to {total}, expected 0"
    summary["final_rewards"].append(rewards)
    summary["winners"].append(list(winners))


def _check_actions_on_copies(env: AECEnv, agent: str, mask: np.ndarray, where: str, summary: dict[str, Any]) -> None:
    """Every legal action is accepted on its own copy; every illegal one is rejected on a copy."""
    before = _state(env)
    mode = getattr(env.unwrapped, "illegal_action", "raise")
    n_actions = mask.shape[0]
    for a in np.flatnonzero(mask):
        c = copy.deepcopy(env)
        c.step(int(a))  # must not raise
        after = _state(c)
        if before is not None:
            assert after != before, f"{where}: legal action {a} of {agent} changed nothing"
        summary["legal_checked"] += 1
    illegal = [int(a) for a in range(n_actions) if not mask[a]]
    if not illegal:
        return
    if mode == "raise":
        c = copy.deepcopy(env)
        for a in illegal:
            try:
                c.step(a)
            except ValueError as exc:
                assert str(a) in str(exc), f"{where}: the error for illegal action {a} does not name it: {exc}"
            else:
                raise AssertionError(f"{where}: illegal action {a} of {agent} was accepted")
            assert c.agent_selection == agent, f"{where}: illegal action {a} moved the turn"
            summary["illegal_checked"] += 1
        if before is not None:
            assert _state(c) == before, f"{where}: rejected illegal actions changed state_dict()"
    else:  # "terminate": one illegal action ends the game on the copy
        c = copy.deepcopy(env)
        a = illegal[len(illegal) // 2]
        c.step(a)
        assert all(c.terminations.values()), f"{where}: illegal action {a} did not end the game"
        rew = {x: float(c.unwrapped._cumulative_rewards[x]) for x in c.agents}
        want = {x: (-1.0 if x == agent else 0.0) for x in c.agents}
        assert rew == want, f"{where}: rewards after illegal action {a}: {rew}, expected {want}"
        assert c.infos[agent].get("illegal_action") is True, f"{where}: infos lacks illegal_action"
        summary["illegal_checked"] += 1
    if before is not None:
        assert _state(env) == before, f"{where}: stepping a deep copy changed the original environment"


def check_env(
    env_fn: Callable[[], AECEnv],
    num_games: int = 2,
    seed: int = 0,
    *,
    api_cycles: int = 1000,
    seed_cycles: int = 500,
    check_every: int = 1,
    max_steps: int = 100_000,
) -> dict[str, Any]:
    """Run PettingZoo's ``api_test``/``seed_test`` on ``env_fn()`` and play ``num_games`` random
    masked games with the checks listed in the module docstring.

    Args:
        env_fn: builds a fresh environment (called several times).
        num_games: number of random games to play and check.
        seed: game ``g`` is reset with ``seed + g`` and picks its actions from a generator seeded
            the same way, so the run is reproducible.
        api_cycles, seed_cycles: ``num_cycles`` of ``api_test`` and ``seed_test``.
        check_every: try every action on copies only at every ``check_every``-th step (1 = all).
        max_steps: a game longer than this fails the check (it must end).

    Returns:
        ``{"games", "steps", "legal_checked", "illegal_checked", "final_rewards", "winners",
        "api_test_warnings"}``: counts, per game the final rewards by agent and the winning
        seats, and the distinct messages of the warnings ``api_test`` raised.
    """
    # imported here: pettingzoo.test pulls in PettingZoo's own example environments
    from pettingzoo.test import api_test, seed_test

    summary: dict[str, Any] = {
        "games": 0,
        "steps": 0,
        "legal_checked": 0,
        "illegal_checked": 0,
        "final_rewards": [],
        "winners": [],
        "api_test_warnings": [],
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env_fn(), num_cycles=api_cycles)
    summary["api_test_warnings"] = list(dict.fromkeys(str(w.message) for w in caught))
    seed_test(env_fn, num_cycles=seed_cycles)

    for g in range(num_games):
        env = env_fn()
        env.reset(seed=seed + g)
        rng = np.random.default_rng(seed + g)
        obs_spaces = {a: env.observation_space(a) for a in env.possible_agents}
        act_spaces = {a: env.action_space(a) for a in env.possible_agents}
        assert env.agents == env.possible_agents, f"game {g}: agents after reset {env.agents}"
        steps = 0
        finished = False
        while env.agents:
            agent = env.agent_selection
            where = f"game {g} (seed {seed + g}), step {steps}, {agent}"
            for a in env.possible_agents:
                assert env.observation_space(a) is obs_spaces[a], f"{where}: a new observation space object"
                assert env.action_space(a) is act_spaces[a], f"{where}: a new action space object"
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                if not finished:
                    _check_final(env, where, summary)
                    finished = True
                env.step(None)
                continue
            assert not finished, f"{where}: a live agent after the end"
            assert steps < max_steps, f"{where}: the game did not end within {max_steps} steps"
            assert reward == 0.0, f"{where}: reward {reward} before the end"
            assert all(r == 0 for r in env.rewards.values()), f"{where}: rewards {env.rewards} before the end"
            mask = _check_observation(env, agent, obs, where)
            assert mask.any(), f"{where}: empty action mask before the end"
            for other in env.agents:
                o = env.observe(other)
                m = _check_observation(env, other, o, where)
                if other == agent:
                    assert np.array_equal(m, mask), f"{where}: observe() and last() masks differ"
                    assert np.array_equal(o["observation"], obs["observation"]), f"{where}: observe() and last() differ"
                else:
                    assert not m.any(), f"{where}: {other} is not to move but has mask {np.flatnonzero(m).tolist()}"
            legal = getattr(env.unwrapped, "legal_actions", None)
            if callable(legal):
                assert legal() == np.flatnonzero(mask).tolist(), f"{where}: legal_actions() {legal()} != mask"
            if steps % check_every == 0:
                _check_actions_on_copies(env, agent, mask, where, summary)
            env.step(int(rng.choice(np.flatnonzero(mask))))
            steps += 1
        assert finished, f"game {g}: the agents left without a final step"
        summary["games"] += 1
        summary["steps"] += steps
    return summary
