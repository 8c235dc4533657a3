"""The interface every bali-env agent implements, and a registry to build agents by name.

An agent decides from one player's observation and action mask only (what that player may know,
docs/rules.md section 5), never from the hidden state. ``act`` takes one decision; ``act_batch`` takes
one decision per row (the default loops over ``act``; vectorised agents override it and set
``batched = True`` so the tournament can drive them with the batched environment).
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np


def check_observations(observations: np.ndarray, action_masks: np.ndarray,
                       need_legal: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks as an agent may read them, checked: shapes ``[N, OBS_DIM]`` and
    ``[N, N_ACTIONS]`` (or one of each), finite values within each slot's range that are whole
    counts of its scale, one decision, one seat to decide and one player count, 0/1 masks with a
    legal action per row (unless ``need_legal`` is False). TypeError / ValueError naming what is
    wrong; returns float32 / int8 2-D copies (nothing out of range ever reaches a search kernel)."""
    from bali_env.engine import (
        D_GAME_OVER,
        MAX_PLAYERS,
        N_ACTIONS,
        N_DECISIONS,
        N_PLAYER_COUNTS,
        O_DECISION,
        O_NUM_PLAYERS,
        O_TO_MOVE,
        OBS_DIM,
        OBS_HIGH,
        OBS_SCALE,
    )
    from bali_env.engine.obs_spec import observation_slot_names

    obs, masks = np.asarray(observations), np.asarray(action_masks)
    if obs.ndim == 1:
        obs, masks = obs[None], masks[None]
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
        raise ValueError(f"observation must have shape [{OBS_DIM}] (or [N, {OBS_DIM}]), got {np.shape(observations)}")
    if masks.shape != (obs.shape[0], N_ACTIONS):
        raise ValueError(f"action_mask must have shape [{N_ACTIONS}] (or [N, {N_ACTIONS}]) matching the "
                         f"observations, got {np.shape(action_masks)}")
    if not np.issubdtype(obs.dtype, np.number):
        raise TypeError(f"observation must be numeric (float32), got dtype {obs.dtype}")
    if not (np.issubdtype(masks.dtype, np.number) or masks.dtype == np.bool_):
        raise TypeError(f"action_mask must be 0/1 numbers or bools, got dtype {masks.dtype}")
    obs = obs.astype(np.float32)
    if not np.isfinite(obs).all():
        raise ValueError("observation holds NaN or infinite values")
    counts = obs * OBS_SCALE
    bad = (obs < 0) | (obs > OBS_HIGH * (1 + 1e-5)) | (np.abs(counts - np.round(counts)) > 1e-3)
    if bad.any():
        row, slot = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"observation slot {slot} ({observation_slot_names()[slot]}) = {obs[row, slot]!r} is not a "
                         f"count within 0..{OBS_HIGH[slot] * OBS_SCALE[slot]:g} divided by {OBS_SCALE[slot]:g}")
    decision = obs[:, O_DECISION : O_DECISION + N_DECISIONS]
    over = decision[:, D_GAME_OVER] == 1
    groups = (("decision", decision, np.ones(len(obs))),
              ("seat to decide", obs[:, O_TO_MOVE : O_TO_MOVE + MAX_PLAYERS], np.where(over, 0, 1)),
              ("number of players", obs[:, O_NUM_PLAYERS : O_NUM_PLAYERS + N_PLAYER_COUNTS], np.ones(len(obs))))
    for name, block, want in groups:
        if (block.sum(axis=1) != want).any():
            raise ValueError(f"observation: the {name} one-hot must have exactly one slot set (the seat to "
                             "decide: none after the end)")
    if not ((masks == 0) | (masks == 1)).all():
        raise ValueError("action_mask must hold 0/1 values")
    masks = masks.astype(np.int8)
    if need_legal and not (masks.sum(axis=1) > 0).all():
        raise ValueError("action_mask has no legal action")
    return obs, masks


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, vectorised over a uint64 array."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def decision_keys(seed: int, games: np.ndarray, seats: np.ndarray, decisions: np.ndarray) -> np.ndarray:
    """One uint64 key per decision, from the tournament seed, the game index, the seat and the
    decision's number in that game: what an agent's randomness is drawn from in a tournament,
    so a game plays out the same whichever worker, batch or backend plays it."""
    with np.errstate(over="ignore"):
        z = _mix(np.full(len(games), np.uint64(int(seed) % 2**64)) + _GOLDEN)
        for part in (games, seats, decisions):
            z = _mix(z ^ (np.asarray(part, dtype=np.int64).astype(np.uint64) + _GOLDEN))
    return z


def check_keys(keys: np.ndarray, rows: int) -> np.ndarray:
    """``keys`` as an array of ``rows`` integers, one per row of a batch (ValueError otherwise)."""
    keys = np.asarray(keys)
    if keys.shape != (rows,) or not np.issubdtype(keys.dtype, np.integer):
        raise ValueError(f"keys must be {rows} integers, one per row, got {keys.dtype} {keys.shape}")
    return keys


def key_uniforms(keys: np.ndarray, width: int) -> np.ndarray:
    """``width`` uniform floats in [0, 1) per key (row i depends on ``keys[i]`` only)."""
    with np.errstate(over="ignore"):
        z = _mix(keys[:, None] + _GOLDEN * np.arange(1, width + 1, dtype=np.uint64))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


class Agent(ABC):
    """A Bali player: ``act(observation, action_mask) -> action id``."""

    name: str = "agent"
    batched: bool = False  #: True when act_batch is vectorised (no per-row Python loop)

    def __init__(self, seed: int | None = None) -> None:
        self.seed(seed)

    def seed(self, seed: int | None = None) -> None:
        """(Re)seed the agent's own random generator."""
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Choose a legal action id (``action_mask[a] == 1``) for one observation."""

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per row; the default calls ``act`` row by row."""
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks, strict=True)], dtype=np.int64)

    def act_batch_unchecked(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``act_batch`` on an environment's own buffers (float32 observations the engine wrote,
        int8 masks with a legal action in every row), which need no checking: what the learner
        envs call for their opponents (``bali_env.versus``). The default checks anyway."""
        return self.act_batch(observations, action_masks)

    def act_batch_keyed(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """One action per row, row i's randomness drawn from ``keys[i]`` (``decision_keys``), so
        each row's choice does not depend on the other rows: what tournaments call. The default
        reseeds and calls ``act`` row by row for an agent that is not ``batched``; a batched agent
        that does not override this is seeded once per call from all the keys (its choices then
        depend on how rows are batched)."""
        if not self.batched:
            out = np.empty(len(keys), dtype=np.int64)
            for i, (o, m) in enumerate(zip(observations, action_masks, strict=True)):
                self.seed(int(keys[i]))
                out[i] = self.act(o, m)
            return out
        self.seed(int(_mix(np.bitwise_xor.reduce(keys, keepdims=True))[0]) if len(keys) else 0)
        return self.act_batch(observations, action_masks)

    def check_players(self, num_players: int) -> None:  # noqa: B027 - optional hook, a no-op by default
        """ValueError (one line saying what to do) when this agent cannot play games of
        ``num_players``; tournaments and ``bali play`` ask before the first game. The default
        plays every count."""

    def begin_game(self, game: dict) -> None:  # noqa: B027 - optional hook, a no-op by default
        """A game starts: ``game`` holds ``game`` (its id), ``seat``, ``num_players``,
        ``variants`` and ``agents`` (who plays each seat). Called by tournaments, ``bali play``
        and ``bali serve`` before the agent's first decision of a game; the default does
        nothing (an agent decides from the observation alone)."""

    def end_game(self, result: dict) -> None:  # noqa: B027 - optional hook, a no-op by default
        """A game ended: ``result`` holds ``game``, ``final_scores`` and ``winners`` (None when
        it ended early) and ``forfeit`` (who lost it by a fault, and why, or None)."""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release what the agent holds (a bot's process); called when its games are done."""

    def compile_kernels(self) -> None:  # noqa: B027 - optional hook, deliberately a no-op by default
        """Compile (or load from Numba's disk cache) the kernels ``act_batch`` runs, without
        deciding anything. Tournament workers call it to share out a first run's compilation;
        the default does nothing (no kernels, or compiled on first use)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


#: the built-in agents by kind, as ``"module:class"``: each module is imported on first use only
#: (a heavy agent costs nothing until it is asked for)
BUILTIN_AGENTS: dict[str, str] = {
    "random": "bali_env.agents.random_agent:RandomAgent",
    "greedy": "bali_env.agents.greedy:GreedyAgent",
    "mcts": "bali_env.agents.mcts:MCTSAgent",
    "ppo": "bali_env.agents.ppo:PPOAgent",
    "ppo+search": "bali_env.agents.puct:PolicySearchAgent",
    "sb3": "bali_env.agents.sb3:SB3Agent",
    "cmd": "bali_env.arena.protocol.agent:CommandAgent",
}
_REGISTRY: dict[str, Callable[..., Agent] | str] = dict(BUILTIN_AGENTS)


def register_agent(kind: str, factory: Callable[..., Agent]) -> None:
    """Make ``make_agent(kind)`` build agents with ``factory(seed=..., **settings)``."""
    _REGISTRY[kind] = factory


def _factory(kind: str) -> Callable[..., Agent]:
    """The factory registered for ``kind``, importing a built-in agent's module on first use."""
    factory = _REGISTRY[kind]
    if isinstance(factory, str):
        import importlib

        module, _, attribute = factory.partition(":")
        factory = _REGISTRY[kind] = getattr(importlib.import_module(module), attribute)
    return factory


def _parse_settings(text: str) -> dict[str, object]:
    """A spec's ``key=value,...`` settings: ints, floats, ``true`` / ``false`` as bools, else strings."""
    settings: dict[str, object] = {}
    for item in filter(None, text.split(",")):
        if "=" not in item:
            raise ValueError(f"agent setting {item!r} must look like key=value")
        key, value = item.split("=", 1)
        if value.lower() in ("true", "false"):
            settings[key] = value.lower() == "true"
            continue
        for cast in (int, float):
            try:
                settings[key] = cast(value)
                break
            except ValueError:
                continue
        else:
            settings[key] = value
    return settings


def _agent_from_file(spec: str, seed: int | None) -> Agent:
    """``FILE.py:Class[:key=value,...]``: your own agent class from a Python file, built with
    ``Class(seed=seed, **settings)``. Works in tournament worker processes too (they load the
    file themselves)."""
    import importlib.util
    from pathlib import Path

    path_text, _, rest = spec.partition(":")
    class_name, _, settings = rest.partition(":")
    path = Path(path_text).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"agent file {path_text!r} not found (spec {spec!r}: FILE.py:Class)")
    if not class_name.isidentifier():
        raise ValueError(f"agent spec {spec!r} needs a class name after the file: FILE.py:Class")
    module_name = f"bali_user_agent_{abs(hash(str(path)))}"
    module = sys.modules.get(module_name)
    if module is None:
        loader = importlib.util.spec_from_file_location(module_name, path)
        if loader is None or loader.loader is None:
            raise ValueError(f"cannot load {path_text!r} as a Python module")
        module = importlib.util.module_from_spec(loader)
        sys.modules[module_name] = module
        try:
            loader.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise ValueError(f"loading {path_text!r} failed: {type(exc).__name__}: {exc}") from exc
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not callable(getattr(cls, "act", None)):
        raise ValueError(f"{path_text!r} has no agent class {class_name!r} (a class with act(observation, "
                         "action_mask); subclass agents.Agent)")
    agent = cls(seed=seed, **_parse_settings(settings))
    if getattr(agent, "name", "agent") in ("agent", None):
        agent.name = f"{path.stem}:{class_name}"
    return agent


#: how a spec of a kind that needs more than its name is written (``known_specs``)
_SPEC_FORMS = {"cmd": "cmd:PROGRAM", "sb3": "sb3:PATH"}


def known_specs() -> list[str]:
    """The agent specs ``make_agent`` knows, as a person writes them: the built-in and registered
    kinds (``cmd:PROGRAM`` and ``sb3:PATH`` with what they need), then ``FILE.py:Class``."""
    return [_SPEC_FORMS.get(kind, kind) for kind in _REGISTRY] + ["FILE.py:Class"]


def unknown_agent_text(kind: str) -> str:
    """The error for an agent spec of unknown ``kind``: the closest known kind, if one is close
    (``difflib``; or ``KIND.py:Class`` when there is a file ``KIND.py``), and every spec known
    (``known_specs``)."""
    import difflib
    from pathlib import Path

    close = difflib.get_close_matches(kind, list(_REGISTRY), n=1)
    try:
        if kind and Path(f"{kind}.py").expanduser().is_file():  # mybot:MyBot for mybot.py:MyBot
            close = [f"{kind}.py:Class"]
    except (OSError, ValueError):  # not a possible file name
        pass
    guess = f" (did you mean {_SPEC_FORMS.get(close[0], close[0])!r}?)" if close else ""
    return f"unknown agent {kind!r}{guess}; known: {', '.join(known_specs())}"


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build an agent from a spec: ``"random"``, ``"greedy"``, ``"mcts"``, ``"mcts:sims=200"``,
    ``"sb3:path/to/model.zip"``, ``"ppo"``, ``"ppo:path=FILE.npz"``, ``"ppo:deterministic=false"`` (a
    setting is an int, a float, ``true`` or ``false``, or else a string), your own class from a file:
    ``"mybot.py:MyBot"`` (``"mybot.py:MyBot:depth=3"`` passes settings), or a bot in any language
    run as its own process: ``"cmd:PROGRAM ARGS"`` (docs/protocol.md). Raises ValueError for an
    unknown kind, a setting out of range, a file or class that cannot be loaded, or a program that
    cannot be run; TypeError for a setting of the wrong type (``mcts:sims=1.5``) or one the agent
    does not take."""
    if not isinstance(spec, str):
        raise TypeError(f"an agent spec is a string like 'greedy' or 'mybot.py:MyBot', got {type(spec).__name__}")
    if spec.partition(":")[0].endswith(".py"):
        return _agent_from_file(spec, seed)
    kind, _, rest = spec.partition(":")
    if kind not in _REGISTRY:
        raise ValueError(unknown_agent_text(kind))
    if kind == "sb3":
        return _factory(kind)(path=rest, seed=seed)
    if kind == "cmd":  # a bot in any language: its own process, the bot protocol (docs/protocol.md)
        return _factory(kind)(command=rest, seed=seed)
    return _factory(kind)(seed=seed, **_parse_settings(rest))
