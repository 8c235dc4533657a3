"""A generic API checker for action-masked PettingZoo AEC environments (in the style of pgx's
``api_test``). The test suite runs it on every ``bali_v0`` configuration and on PettingZoo's
``connect_four_v3`` (``tests/test_api_check.py``); it knows no rule of any game.

``check_env(env_fn)`` does two things:

1. It runs PettingZoo's own ``api_test`` and ``seed_test`` on fresh environments.
2. It plays ``num_games`` games with uniformly random *legal* actions (seeded) and checks at
   every step that

   - every action space is ``Discrete``; every live agent's observation is a dict
     ``{"observation", "action_mask"}`` that lies in its observation space, with the space's
     dtypes and shapes, finite values and a 0/1 mask with one entry per action;
   - ``observation_space(agent)`` / ``action_space(agent)`` return the same object every call;
   - the mask of the agent to move is never empty before the end; with
     ``waiting_mask_empty=True`` (the default) the mask of every other live agent is all 0;
   - every legal action is accepted (each on its own copy of the environment, made by
     ``copy_fn``) and every illegal action is handled as ``illegal_action`` says (below);
   - a copy starts equal to the original, and stepping copies never changes the original;
   - rewards are 0 before the end; at the end every agent terminates at once (no truncation);
     after the end every agent leaves with ``step(None)``.

What "equal" and "changed" mean: the agent to move, every agent's observation, the rewards, the
terminations and truncations, and ``state_fn(env)`` when there is one.

Conventions that differ between environments are keyword options:

- ``illegal_action``: ``"raise"`` (``step`` raises ``ValueError`` naming the action and changes
  nothing, the turn included; every illegal action is tried on one copy), ``"terminate"``
  (PettingZoo's ``TerminateIllegalWrapper`` convention: on a copy, one illegal action ends the
  game, every agent is terminated or truncated, the offender gets ``illegal_reward`` and the
  others 0, then every agent leaves with ``step(None)``), ``None`` (not checked) or ``"auto"``
  (the default: ``env.unwrapped.illegal_action`` when it is ``"raise"`` or ``"terminate"``,
  else detected from the first illegal action tried: ``ValueError`` means ``"raise"``, the end
  of the game means ``"terminate"``, anything else fails). ``bali_v0`` has the attribute;
  ``connect_four_v3`` has not and is detected as ``"terminate"``.
- ``waiting_mask_empty`` (default True): agents not to move have an all-0 mask (``bali_v0`` and
  ``connect_four_v3`` both do this during play).
- ``final_mask_empty`` (default False): after the end (also after an illegal-action end) every
  mask is all 0 and ``legal_fn`` returns ``[]``. ``bali_v0`` does this; ``connect_four_v3``
  does not (the agent selected after the end still sees the free columns).

Environment-specific checks are hooks supplied by the caller:

- ``state_fn(env)``: the full state, compared with ``==`` (default ``env.unwrapped.state_dict()``
  when the environment has it). Also required: every legal action changes it.
- ``legal_fn(env)``: the legal action ids of the agent to move, which must equal the mask
  (default ``env.unwrapped.legal_actions()`` when the environment has it).
- ``copy_fn(env)``: an independent copy (default ``copy_env``: ``copy.deepcopy`` that keeps the
  game state of ``EzPickle`` environments such as PettingZoo's classic games).
- ``final_check(env, where)``: called once at the end of each game, before anyone leaves (e.g.
  the game's ``infos`` and reward definitions; ``tests/test_api.py`` has the one of ``bali_v0``).
- ``illegal_check(env, agent, action, where)``: called on the copy after an illegal action ended
  the game in ``"terminate"`` mode.

Pass ``None`` for ``state_fn``/``legal_fn`` to skip those checks. Any failed check raises
``AssertionError`` with the game, step and agent in the message; on success ``check_env``
returns a small summary dict.

``CONFIGURATIONS`` and ``config_id`` (the 12 ``bali_v0`` configurations and their pytest ids)
live here for the test suite; the checker does not use them.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium.utils import EzPickle
from pettingzoo.utils.env import AECEnv

__all__ = ["CONFIGURATIONS", "check_env", "config_id", "copy_env"]

#: The 12 configurations of ``bali_v0``: (num_players, oracle, demon).
CONFIGURATIONS: tuple[tuple[int, bool, bool], ...] = tuple(
    (n, oracle, demon) for n in (2, 3, 4) for oracle in (False, True) for demon in (False, True)
)

IllegalMode = Literal["auto", "raise", "terminate"]
StateFn = Callable[[AECEnv], Any]
LegalFn = Callable[[AECEnv], list[int]]


def config_id(config: tuple[int, bool, bool]) -> str:
    """A short readable id for a configuration, e.g. ``"3p-oracle-demon"`` (for pytest ids)."""
    n, oracle, demon = config
    parts = [f"{n}p"] + (["oracle"] if oracle else []) + (["demon"] if demon else [])
    return "-".join(parts) if (oracle or demon) else f"{n}p-base"


def copy_env(env: AECEnv) -> AECEnv:
    """An independent copy of ``env`` with its current game state.

    This is ``copy.deepcopy``, except for the layers of the wrapper chain that are gymnasium
    ``EzPickle`` objects (PettingZoo's classic environments): ``deepcopy`` would rebuild those
    from their constructor arguments, i.e. as new unreset environments, so they are copied
    attribute by attribute instead.
    """
    memo: dict[int, Any] = {}
    pending: list[tuple[Any, Any]] = []
    layer: Any = env
    while layer is not None and id(layer) not in memo:
        if isinstance(layer, EzPickle):
            new = object.__new__(type(layer))
            memo[id(layer)] = new
            pending.append((layer, new))
        layer = vars(layer).get("env")  # the wrapped environment, without __getattr__ forwarding
    for old, new in pending:
        new.__dict__.update(copy.deepcopy(vars(old), memo))
    return copy.deepcopy(env, memo)


def _method_hook(env: AECEnv, name: str) -> Callable[[AECEnv], Any] | None:
    """``lambda e: e.unwrapped.<name>()`` when ``env.unwrapped`` has that method, else None."""
    if not callable(getattr(env.unwrapped, name, None)):
        return None
    return lambda e: getattr(e.unwrapped, name)()


class _Options:
    """The settings of one ``check_env`` run (hooks resolved against the first environment)."""

    def __init__(
        self,
        env: AECEnv,
        illegal_action: IllegalMode | None,
        illegal_reward: float,
        waiting_mask_empty: bool,
        final_mask_empty: bool,
        state_fn: StateFn | Literal["auto"] | None,
        legal_fn: LegalFn | Literal["auto"] | None,
        copy_fn: Callable[[AECEnv], AECEnv],
        final_check: Callable[[AECEnv, str], None] | None,
        illegal_check: Callable[[AECEnv, str, int, str], None] | None,
    ) -> None:
        if illegal_action == "auto":
            declared = getattr(env.unwrapped, "illegal_action", None)
            illegal_action = declared if declared in ("raise", "terminate") else "auto"
        self.illegal_mode: str | None = illegal_action  # "auto" until detected
        self.illegal_reward = float(illegal_reward)
        self.waiting_mask_empty = waiting_mask_empty
        self.final_mask_empty = final_mask_empty
        if state_fn == "auto":
            state_fn = _method_hook(env, "state_dict")
        if legal_fn == "auto":
            legal_fn = _method_hook(env, "legal_actions")
        self.state_fn: StateFn | None = state_fn
        self.legal_fn: LegalFn | None = legal_fn
        self.copy_fn = copy_fn
        self.final_check = final_check
        self.illegal_check = illegal_check


def _obs_key(obs: Any) -> Any:
    """A value comparable with ``==`` for an observation (arrays by dtype, shape and bytes)."""
    if isinstance(obs, dict):
        return tuple((k, _obs_key(v)) for k, v in sorted(obs.items()))
    if isinstance(obs, np.ndarray):
        return (obs.dtype.str, obs.shape, obs.tobytes())
    return obs


def _snapshot(env: AECEnv, opts: _Options) -> dict[str, Any]:
    """Everything the checker compares between an environment and its copies."""
    u = env.unwrapped
    return {
        "agents": list(env.agents),
        "agent_selection": env.agent_selection,
        "observations": {a: _obs_key(env.observe(a)) for a in env.agents},
        "rewards": {a: float(r) for a, r in u.rewards.items()},
        "cumulative_rewards": {a: float(r) for a, r in u._cumulative_rewards.items()},
        "terminations": dict(u.terminations),
        "truncations": dict(u.truncations),
        "state": opts.state_fn(env) if opts.state_fn is not None else None,
    }


def _diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The keys of two snapshots that differ."""
    return [k for k in a if a[k] != b[k]]


def _check_observation(env: AECEnv, agent: str, obs: Any, where: str) -> np.ndarray:
    """Check one observation against its space, dtypes and shapes; return its action mask."""
    space = env.observation_space(agent)
    assert isinstance(obs, dict), f"{where}: observation of {agent} is {type(obs).__name__}, not a dict"
    assert set(obs) == {"observation", "action_mask"}, f"{where}: observation keys {sorted(obs)}"
    o, m = obs["observation"], obs["action_mask"]
    assert isinstance(o, np.ndarray) and isinstance(m, np.ndarray), f"{where}: arrays expected"
    o_space, m_space = space["observation"], space["action_mask"]
    assert o.dtype == o_space.dtype, f"{where}: observation dtype {o.dtype}, space {o_space.dtype}"
    assert o.shape == o_space.shape, f"{where}: observation shape {o.shape}, space {o_space.shape}"
    assert m.dtype == m_space.dtype, f"{where}: action_mask dtype {m.dtype}, space {m_space.dtype}"
    assert m.shape == (env.action_space(agent).n,), f"{where}: action_mask shape {m.shape}"
    assert np.all(np.isfinite(o)), f"{where}: non-finite observation values for {agent}"
    if not space.contains(obs):
        if isinstance(o_space, gymnasium.spaces.Box):
            bad = np.flatnonzero((o < o_space.low) | (o > o_space.high))
            values = o.flat[bad].tolist()
            raise AssertionError(f"{where}: observation of {agent} outside its space at {bad.tolist()}: {values}")
        raise AssertionError(f"{where}: observation of {agent} outside its space")
    assert set(np.unique(m).tolist()) <= {0, 1}, f"{where}: action mask values {np.unique(m).tolist()}"
    return m


def _check_masks_empty(env: AECEnv, opts: _Options, where: str) -> None:
    """``final_mask_empty``: every mask is all 0 and ``legal_fn`` is empty."""
    for a in env.agents:
        mask = env.observe(a)["action_mask"]
        assert not mask.any(), f"{where}: {a} has a non-empty mask after the end"
    if opts.legal_fn is not None:
        legal = list(opts.legal_fn(env))
        assert legal == [], f"{where}: legal actions after the end: {legal}"


def _leave_all(env: AECEnv, where: str) -> None:
    """Every agent is done; each leaves with ``step(None)`` until no agent is left."""
    for _ in range(len(env.possible_agents) + 1):
        if not env.agents:
            return
        agent = env.agent_selection
        assert env.terminations[agent] or env.truncations[agent], f"{where}: {agent} is still live after the end"
        env.step(None)
        assert agent not in env.agents, f"{where}: {agent} did not leave with step(None)"
    raise AssertionError(f"{where}: agents {env.agents} are left after every agent stepped None")


def _check_final(env: AECEnv, where: str, opts: _Options, summary: dict[str, Any]) -> None:
    """End-of-game checks: everyone terminated at once, no truncation; then the caller's hook."""
    agents = list(env.agents)
    assert all(env.terminations[a] for a in agents), f"{where}: not every agent terminated at the end"
    assert not any(env.truncations[a] for a in agents), f"{where}: an agent was truncated"
    if opts.final_mask_empty:
        _check_masks_empty(env, opts, where)
    rewards = {a: float(env.unwrapped._cumulative_rewards[a]) for a in agents}
    if opts.final_check is not None:
        opts.final_check(env, where)
    summary["final_rewards"].append(rewards)


def _try_illegal(env: AECEnv, action: int) -> ValueError | None:
    """Step ``action``; return the ``ValueError`` it raised, or None."""
    try:
        env.step(action)
    except ValueError as exc:
        return exc
    return None


def _check_terminate(c: AECEnv, agent: str, action: int, opts: _Options, where: str) -> None:
    """``"terminate"``: the illegal ``action`` of ``agent`` has just been stepped on the copy ``c``."""
    ended = all(c.terminations[x] or c.truncations[x] for x in c.agents)
    assert ended, f"{where}: illegal action {action} did not end the game"
    rew = {x: float(c.unwrapped._cumulative_rewards[x]) for x in c.agents}
    want = {x: (opts.illegal_reward if x == agent else 0.0) for x in c.agents}
    assert rew == want, f"{where}: rewards after illegal action {action}: {rew}, expected {want}"
    if opts.final_mask_empty:
        _check_masks_empty(c, opts, where)
    if opts.illegal_check is not None:
        opts.illegal_check(c, agent, action, where)
    _leave_all(c, f"{where} (after illegal action {action})")


def _check_actions_on_copies(
    env: AECEnv, agent: str, mask: np.ndarray, step: int, where: str, opts: _Options, summary: dict[str, Any]
) -> None:
    """Every legal action is accepted on its own copy; illegal ones are handled as configured."""
    before = _snapshot(env, opts)
    mover_obs = before["observations"][agent]
    first = True
    for a in np.flatnonzero(mask):
        c = opts.copy_fn(env)
        if first:
            diff = _diff(before, _snapshot(c, opts))
            assert not diff, f"{where}: a fresh copy differs from the original in {diff}"
            first = False
        try:
            c.step(int(a))
        except Exception as exc:
            raise AssertionError(f"{where}: legal action {a} of {agent} was rejected: {exc!r}") from exc
        if opts.state_fn is not None:
            assert opts.state_fn(c) != before["state"], f"{where}: legal action {a} of {agent} changed nothing"
        unchanged = env.agent_selection == agent and _obs_key(env.observe(agent)) == mover_obs
        assert unchanged, f"{where}: stepping a copy with action {a} changed the original environment"
        summary["legal_checked"] += 1
    illegal = [int(a) for a in range(mask.shape[0]) if not mask[a]]
    if illegal and opts.illegal_mode is not None:
        if opts.illegal_mode == "auto":  # detect the convention from the first illegal action
            c = opts.copy_fn(env)
            a = illegal[step % len(illegal)]
            if _try_illegal(c, a) is not None:
                opts.illegal_mode = "raise"
            elif c.agents and all(c.terminations[x] or c.truncations[x] for x in c.agents):
                opts.illegal_mode = "terminate"
            else:
                raise AssertionError(f"{where}: illegal action {a} of {agent} was accepted (no ValueError, no end)")
        if opts.illegal_mode == "raise":
            c = opts.copy_fn(env)
            for a in illegal:
                exc = _try_illegal(c, a)
                assert exc is not None, f"{where}: illegal action {a} of {agent} was accepted"
                assert str(a) in str(exc), f"{where}: the error for illegal action {a} does not name it: {exc}"
                assert c.agent_selection == agent, f"{where}: illegal action {a} moved the turn"
                summary["illegal_checked"] += 1
            diff = _diff(before, _snapshot(c, opts))
            assert not diff, f"{where}: rejected illegal actions changed {diff}"
        else:  # "terminate": one illegal action (a different one each step) ends the game on a copy
            c = opts.copy_fn(env)
            a = illegal[step % len(illegal)]
            c.step(a)
            _check_terminate(c, agent, a, opts, where)
            summary["illegal_checked"] += 1
    diff = _diff(before, _snapshot(env, opts))
    assert not diff, f"{where}: stepping copies changed the original environment in {diff}"


def _check_live_position(env: AECEnv, agent: str, obs: Any, reward: Any, where: str, opts: _Options) -> np.ndarray:
    """The checks at a position before the end where ``agent`` is to move: no reward yet, every live
    agent's observation valid (the mover's mask non-empty and equal to ``last()``, the others' empty
    with ``waiting_mask_empty``), ``legal_fn`` agreeing with the mask. Returns the mover's mask."""
    assert reward == 0, f"{where}: reward {reward} before the end"
    assert all(r == 0 for r in env.rewards.values()), f"{where}: rewards {env.rewards} before the end"
    cumulative = env.unwrapped._cumulative_rewards
    assert all(r == 0 for r in cumulative.values()), f"{where}: cumulative rewards {cumulative} before the end"
    mask = _check_observation(env, agent, obs, where)
    assert mask.any(), f"{where}: empty action mask before the end"
    for other in env.agents:
        o = env.observe(other)
        m = _check_observation(env, other, o, where)
        if other == agent:
            assert np.array_equal(m, mask), f"{where}: observe() and last() masks differ"
            assert np.array_equal(o["observation"], obs["observation"]), f"{where}: observe() and last() differ"
        elif opts.waiting_mask_empty:
            assert not m.any(), f"{where}: {other} is not to move but has mask {np.flatnonzero(m).tolist()}"
    if opts.legal_fn is not None:
        legal = [int(x) for x in opts.legal_fn(env)]
        assert legal == np.flatnonzero(mask).tolist(), f"{where}: legal actions {legal} != mask"
    return mask


def check_env(
    env_fn: Callable[[], AECEnv],
    num_games: int = 2,
    seed: int = 0,
    *,
    api_cycles: int = 1000,
    seed_cycles: int = 500,
    check_every: int = 1,
    max_steps: int = 100_000,
    illegal_action: IllegalMode | None = "auto",
    illegal_reward: float = -1.0,
    waiting_mask_empty: bool = True,
    final_mask_empty: bool = False,
    state_fn: StateFn | Literal["auto"] | None = "auto",
    legal_fn: LegalFn | Literal["auto"] | None = "auto",
    copy_fn: Callable[[AECEnv], AECEnv] = copy_env,
    final_check: Callable[[AECEnv, str], None] | None = None,
    illegal_check: Callable[[AECEnv, str, int, str], None] | None = None,
) -> dict[str, Any]:
    """Run PettingZoo's ``api_test``/``seed_test`` on ``env_fn()`` and play ``num_games`` random
    masked games with the checks listed in the module docstring.

    Args:
        env_fn: builds a fresh environment (called several times).
        num_games: number of random games to play and check.
        seed: game ``g`` is reset with ``seed + g`` and picks its actions from a generator seeded
            the same way, so the run is reproducible.
        api_cycles, seed_cycles: ``num_cycles`` of ``api_test`` and ``seed_test``; 0 skips it.
        check_every: try every action on copies only at every ``check_every``-th step (1 = all).
        max_steps: a game longer than this fails the check (it must end).
        illegal_action: ``"raise"``, ``"terminate"``, ``None`` (skip) or ``"auto"`` (from
            ``env.unwrapped.illegal_action``, else detected); see the module docstring.
        illegal_reward: the offender's reward in ``"terminate"`` mode (the others get 0).
        waiting_mask_empty: require an all-0 mask for every live agent that is not to move.
        final_mask_empty: require all-0 masks (and no legal actions) after the end.
        state_fn: ``env -> state`` compared with ``==``; ``"auto"``: ``unwrapped.state_dict()``
            when present; None: no state checks.
        legal_fn: ``env -> legal action ids``, checked against the mask; ``"auto"``:
            ``unwrapped.legal_actions()`` when present; None: not checked.
        copy_fn: ``env -> independent copy`` used for the action checks (default ``copy_env``).
        final_check: ``(env, where)``, called once at the end of each game before anyone leaves;
            it raises ``AssertionError`` (with ``where`` in the message) on a failure.
        illegal_check: ``(copy, agent, action, where)``, called after an illegal action ended
            the game on a copy (``"terminate"`` mode).

    Returns:
        ``{"games", "steps", "legal_checked", "illegal_checked", "illegal_action",
        "final_rewards", "api_test_warnings"}``: counts, the illegal-action convention in force
        (None when skipped, or when ``"auto"`` never met an illegal action), per game the final
        cumulative rewards by agent, and the distinct messages of the warnings ``api_test``
        raised.
    """
    if illegal_action not in ("auto", "raise", "terminate", None):
        raise ValueError(f"illegal_action must be 'auto', 'raise', 'terminate' or None, got {illegal_action!r}")
    # imported here: pettingzoo.test pulls in PettingZoo's own example environments
    from pettingzoo.test import api_test, seed_test

    summary: dict[str, Any] = {
        "games": 0,
        "steps": 0,
        "legal_checked": 0,
        "illegal_checked": 0,
        "illegal_action": None,
        "final_rewards": [],
        "api_test_warnings": [],
    }
    if api_cycles > 0:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            api_test(env_fn(), num_cycles=api_cycles)
        summary["api_test_warnings"] = list(dict.fromkeys(str(w.message) for w in caught))
    if seed_cycles > 0:
        seed_test(env_fn, num_cycles=seed_cycles)

    opts: _Options | None = None
    for g in range(num_games):
        env = env_fn()
        env.reset(seed=seed + g)
        if opts is None:
            opts = _Options(
                env, illegal_action, illegal_reward, waiting_mask_empty, final_mask_empty,
                state_fn, legal_fn, copy_fn, final_check, illegal_check,
            )  # fmt: skip
        summary["steps"] += _play_checked_game(env, g, seed + g, opts, summary, check_every, max_steps)
        summary["games"] += 1
    if opts is not None and opts.illegal_mode != "auto":
        summary["illegal_action"] = opts.illegal_mode
    return summary


def _play_checked_game(env: AECEnv, g: int, seed: int, opts: _Options, summary: dict[str, Any], check_every: int,
                       max_steps: int) -> int:
    """Play game ``g`` of ``check_env`` (reset with ``seed``) with random legal actions, every
    check made on the way; returns its number of steps."""
    rng = np.random.default_rng(seed)
    obs_spaces = {a: env.observation_space(a) for a in env.possible_agents}
    act_spaces = {a: env.action_space(a) for a in env.possible_agents}
    for a, space in act_spaces.items():
        assert isinstance(space, gymnasium.spaces.Discrete), f"game {g}: action space of {a}: {space}"
    assert env.agents == env.possible_agents, f"game {g}: agents after reset {env.agents}"
    steps = 0
    finished = False
    while env.agents:
        agent = env.agent_selection
        where = f"game {g} (seed {seed}), step {steps}, {agent}"
        for a in env.possible_agents:
            assert env.observation_space(a) is obs_spaces[a], f"{where}: a new observation space object"
            assert env.action_space(a) is act_spaces[a], f"{where}: a new action space object"
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            if not finished:
                _check_final(env, where, opts, summary)
                finished = True
            env.step(None)
            assert agent not in env.agents, f"{where}: {agent} did not leave with step(None)"
            continue
        assert not finished, f"{where}: a live agent after the end"
        assert steps < max_steps, f"{where}: the game did not end within {max_steps} steps"
        mask = _check_live_position(env, agent, obs, reward, where, opts)
        if steps % check_every == 0:
            _check_actions_on_copies(env, agent, mask, steps, where, opts, summary)
        env.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
    assert finished, f"game {g}: the agents left without a final step"
    return steps
