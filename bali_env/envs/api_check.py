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

The options are the fields of one record, ``CheckOptions`` (a frozen dataclass holding every
default); ``check_env(env_fn, options=CheckOptions(...))`` takes one, and any field may also be
given as a keyword of its own (``check_env(env_fn, illegal_action="raise")``), which changes it.

Conventions that differ between environments are options:

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
import dataclasses
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium.utils import EzPickle
from pettingzoo.utils.env import AECEnv

__all__ = ["CONFIGURATIONS", "CheckOptions", "check_env", "config_id", "copy_env"]

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


#: the illegal-action conventions ``check_env`` knows (None: not checked)
_ILLEGAL_MODES = ("auto", "raise", "terminate", None)


@dataclass(frozen=True)
class CheckOptions:
    """The options of ``check_env`` (the module docstring says what each checks), every default
    here.

    - ``api_cycles``, ``seed_cycles``: ``num_cycles`` of PettingZoo's ``api_test`` and
      ``seed_test``; 0 skips it.
    - ``check_every``: try every action on copies only at every ``check_every``-th step (1 = all).
    - ``max_steps``: a game longer than this fails the check (it must end).
    - ``illegal_action``: ``"raise"``, ``"terminate"``, ``None`` (skip) or ``"auto"`` (from
      ``env.unwrapped.illegal_action``, else detected).
    - ``illegal_reward``: the offender's reward in ``"terminate"`` mode (the others get 0).
    - ``waiting_mask_empty``: require an all-0 mask for every live agent that is not to move.
    - ``final_mask_empty``: require all-0 masks (and no legal actions) after the end.
    - ``state_fn``: ``env -> state`` compared with ``==``; ``"auto"``: ``unwrapped.state_dict()``
      when present; None: no state checks.
    - ``legal_fn``: ``env -> legal action ids``, checked against the mask; ``"auto"``:
      ``unwrapped.legal_actions()`` when present; None: not checked.
    - ``copy_fn``: ``env -> independent copy`` used for the action checks (default ``copy_env``).
    - ``final_check``: ``(env, where)``, called once at the end of each game before anyone leaves;
      it raises ``AssertionError`` (with ``where`` in the message) on a failure.
    - ``illegal_check``: ``(copy, agent, action, where)``, called after an illegal action ended
      the game on a copy (``"terminate"`` mode).

    ValueError for an unknown ``illegal_action``."""

    api_cycles: int = 1000
    seed_cycles: int = 500
    check_every: int = 1
    max_steps: int = 100_000
    illegal_action: IllegalMode | None = "auto"
    illegal_reward: float = -1.0
    waiting_mask_empty: bool = True
    final_mask_empty: bool = False
    state_fn: StateFn | Literal["auto"] | None = "auto"
    legal_fn: LegalFn | Literal["auto"] | None = "auto"
    copy_fn: Callable[[AECEnv], AECEnv] = copy_env
    final_check: Callable[[AECEnv, str], None] | None = None
    illegal_check: Callable[[AECEnv, str, int, str], None] | None = None

    def __post_init__(self) -> None:
        if self.illegal_action not in _ILLEGAL_MODES:
            raise ValueError("illegal_action must be 'auto', 'raise', 'terminate' or None, "
                             f"got {self.illegal_action!r}")


class _Options:
    """The settings of one ``check_env`` run: its ``CheckOptions`` with the hooks resolved
    against the first environment, and the illegal-action convention in force (``"auto"``
    until detected)."""

    def __init__(self, env: AECEnv, options: CheckOptions) -> None:
        illegal_action = options.illegal_action
        if illegal_action == "auto":
            declared = getattr(env.unwrapped, "illegal_action", None)
            illegal_action = declared if declared in ("raise", "terminate") else "auto"
        self.illegal_mode: str | None = illegal_action  # "auto" until detected
        self.illegal_reward = float(options.illegal_reward)
        self.waiting_mask_empty = options.waiting_mask_empty
        self.final_mask_empty = options.final_mask_empty
        self.check_every = options.check_every
        self.max_steps = options.max_steps
        state_fn, legal_fn = options.state_fn, options.legal_fn
        if state_fn == "auto":
            state_fn = _method_hook(env, "state_dict")
        if legal_fn == "auto":
            legal_fn = _method_hook(env, "legal_actions")
        self.state_fn: StateFn | None = state_fn
        self.legal_fn: LegalFn | None = legal_fn
        self.copy_fn = options.copy_fn
        self.final_check = options.final_check
        self.illegal_check = options.illegal_check


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
    _check_legal_on_copies(env, agent, mask, where, opts, summary, before)
    illegal = [int(a) for a in range(mask.shape[0]) if not mask[a]]
    if illegal and opts.illegal_mode is not None:
        a = illegal[step % len(illegal)]  # the illegal action tried this step (a different one each step)
        if opts.illegal_mode == "auto":
            opts.illegal_mode = _detect_illegal_mode(env, agent, a, where, opts)
        if opts.illegal_mode == "raise":
            _check_illegal_raise(env, agent, illegal, where, opts, before)
            summary["illegal_checked"] += len(illegal)
        else:
            _check_illegal_terminate(env, agent, a, where, opts)
            summary["illegal_checked"] += 1
    diff = _diff(before, _snapshot(env, opts))
    assert not diff, f"{where}: stepping copies changed the original environment in {diff}"


def _check_legal_on_copies(env: AECEnv, agent: str, mask: np.ndarray, where: str, opts: _Options,
                           summary: dict[str, Any], before: dict[str, Any]) -> None:
    """Each legal action of ``mask`` stepped on its own copy (the first copy equal to the
    original ``before``): accepted, changing the state, and leaving the original alone."""
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


def _detect_illegal_mode(env: AECEnv, agent: str, action: int, where: str, opts: _Options) -> str:
    """The illegal-action convention of the environment, from the illegal ``action`` stepped on
    a copy: a ``ValueError`` means ``"raise"``, the end of the game ``"terminate"``."""
    c = opts.copy_fn(env)
    if _try_illegal(c, action) is not None:
        return "raise"
    if c.agents and all(c.terminations[x] or c.truncations[x] for x in c.agents):
        return "terminate"
    raise AssertionError(f"{where}: illegal action {action} of {agent} was accepted (no ValueError, no end)")


def _check_illegal_raise(env: AECEnv, agent: str, illegal: list[int], where: str, opts: _Options,
                         before: dict[str, Any]) -> None:
    """``"raise"``: every illegal action, tried on one copy, raises a ValueError naming it and
    changes nothing (the turn included)."""
    c = opts.copy_fn(env)
    for a in illegal:
        exc = _try_illegal(c, a)
        assert exc is not None, f"{where}: illegal action {a} of {agent} was accepted"
        assert str(a) in str(exc), f"{where}: the error for illegal action {a} does not name it: {exc}"
        assert c.agent_selection == agent, f"{where}: illegal action {a} moved the turn"
    diff = _diff(before, _snapshot(c, opts))
    assert not diff, f"{where}: rejected illegal actions changed {diff}"


def _check_illegal_terminate(env: AECEnv, agent: str, action: int, where: str, opts: _Options) -> None:
    """``"terminate"``: the illegal ``action`` ends the game on a copy (``_check_terminate``)."""
    c = opts.copy_fn(env)
    c.step(action)
    _check_terminate(c, agent, action, opts, where)


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


def check_env(env_fn: Callable[[], AECEnv], num_games: int = 2, seed: int = 0, options: CheckOptions | None = None,
              **changes: Any) -> dict[str, Any]:
    """Run PettingZoo's ``api_test``/``seed_test`` on ``env_fn()`` and play ``num_games`` random
    masked games with the checks listed in the module docstring.

    Args:
        env_fn: builds a fresh environment (called several times).
        num_games: number of random games to play and check.
        seed: game ``g`` is reset with ``seed + g`` and picks its actions from a generator seeded
            the same way, so the run is reproducible.
        options: the checks' options (``CheckOptions``; default: its defaults).
        **changes: fields of ``CheckOptions`` to change in ``options`` (``illegal_action="raise"``,
            ``api_cycles=0``, ``final_check=...``); TypeError for a name that is not one.

    Returns:
        ``{"games", "steps", "legal_checked", "illegal_checked", "illegal_action",
        "final_rewards", "api_test_warnings"}``: counts, the illegal-action convention in force
        (None when skipped, or when ``"auto"`` never met an illegal action), per game the final
        cumulative rewards by agent, and the distinct messages of the warnings ``api_test``
        raised.
    """
    options = _with_changes(options or CheckOptions(), changes)
    summary: dict[str, Any] = {
        "games": 0,
        "steps": 0,
        "legal_checked": 0,
        "illegal_checked": 0,
        "illegal_action": None,
        "final_rewards": [],
        "api_test_warnings": [],
    }
    summary["api_test_warnings"] = _run_pettingzoo_tests(env_fn, options)
    opts: _Options | None = None
    for g in range(num_games):
        env = env_fn()
        env.reset(seed=seed + g)
        opts = opts or _Options(env, options)
        summary["steps"] += _play_checked_game(env, g, seed + g, opts, summary)
        summary["games"] += 1
    if opts is not None and opts.illegal_mode != "auto":
        summary["illegal_action"] = opts.illegal_mode
    return summary


def _with_changes(options: CheckOptions, changes: dict[str, Any]) -> CheckOptions:
    """``options`` with the fields named in ``changes`` changed (TypeError naming an unknown one)."""
    known = {f.name for f in dataclasses.fields(CheckOptions)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise TypeError(f"check_env: unknown option(s) {unknown}; the options are the fields of CheckOptions: "
                        f"{sorted(known)}")
    return dataclasses.replace(options, **changes) if changes else options


def _run_pettingzoo_tests(env_fn: Callable[[], AECEnv], options: CheckOptions) -> list[str]:
    """PettingZoo's ``api_test`` and ``seed_test`` (each skipped with 0 cycles); returns the
    distinct messages of the warnings ``api_test`` raised."""
    # imported here: pettingzoo.test pulls in PettingZoo's own example environments
    from pettingzoo.test import api_test, seed_test

    messages: list[str] = []
    if options.api_cycles > 0:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            api_test(env_fn(), num_cycles=options.api_cycles)
        messages = list(dict.fromkeys(str(w.message) for w in caught))
    if options.seed_cycles > 0:
        seed_test(env_fn, num_cycles=options.seed_cycles)
    return messages


def _play_checked_game(env: AECEnv, g: int, seed: int, opts: _Options, summary: dict[str, Any]) -> int:
    """Play game ``g`` of ``check_env`` (reset with ``seed``) with random legal actions, every
    check made on the way; returns its number of steps."""
    rng = np.random.default_rng(seed)
    spaces = _checked_spaces(env, g)
    steps = 0
    finished = False
    while env.agents:
        agent = env.agent_selection
        where = f"game {g} (seed {seed}), step {steps}, {agent}"
        _check_same_spaces(env, spaces, where)
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            _leave_after_the_end(env, agent, where, opts, summary, finished)
            finished = True
            continue
        assert not finished, f"{where}: a live agent after the end"
        assert steps < opts.max_steps, f"{where}: the game did not end within {opts.max_steps} steps"
        mask = _check_live_position(env, agent, obs, reward, where, opts)
        if steps % opts.check_every == 0:
            _check_actions_on_copies(env, agent, mask, steps, where, opts, summary)
        env.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
    assert finished, f"game {g}: the agents left without a final step"
    return steps


def _checked_spaces(env: AECEnv, g: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """After the reset of game ``g``: every agent is in play and every action space is
    ``Discrete``; returns the observation and action spaces by agent."""
    obs_spaces = {a: env.observation_space(a) for a in env.possible_agents}
    act_spaces = {a: env.action_space(a) for a in env.possible_agents}
    for a, space in act_spaces.items():
        assert isinstance(space, gymnasium.spaces.Discrete), f"game {g}: action space of {a}: {space}"
    assert env.agents == env.possible_agents, f"game {g}: agents after reset {env.agents}"
    return obs_spaces, act_spaces


def _check_same_spaces(env: AECEnv, spaces: tuple[dict[str, Any], dict[str, Any]], where: str) -> None:
    """``observation_space(agent)`` and ``action_space(agent)`` return the same objects as at the reset."""
    obs_spaces, act_spaces = spaces
    for a in env.possible_agents:
        assert env.observation_space(a) is obs_spaces[a], f"{where}: a new observation space object"
        assert env.action_space(a) is act_spaces[a], f"{where}: a new action space object"


def _leave_after_the_end(env: AECEnv, agent: str, where: str, opts: _Options, summary: dict[str, Any],
                         finished: bool) -> None:
    """The terminated or truncated ``agent`` to move leaves with ``step(None)``; the first time
    (not yet ``finished``) the end-of-game checks are made before."""
    if not finished:
        _check_final(env, where, opts, summary)
    env.step(None)
    assert agent not in env.agents, f"{where}: {agent} did not leave with step(None)"
