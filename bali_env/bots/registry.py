"""Agents by name: ``make_agent(spec)`` builds any agent from its spec (``"greedy"``,
``"mcts:sims=400"``, ``"ppo"``, ``"FILE.py:Class"``, ``"cmd:PROGRAM"``...), ``register_agent`` adds
a kind. The built-in agents' modules are imported on first use only (``BUILTIN_AGENTS``), so this
module stands above every agent of the room, and every agent below it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from bali_env.bots.base import Agent

#: the built-in agents by kind, as ``"module:class"``: each module is imported on first use only
#: (a heavy agent costs nothing until it is asked for)
BUILTIN_AGENTS: dict[str, str] = {
    "random": "bali_env.bots.random_agent:RandomAgent",
    "greedy": "bali_env.bots.greedy:GreedyAgent",
    "mcts": "bali_env.bots.mcts:MCTSAgent",
    "ppo": "bali_env.bots.ppo:PPOAgent",
    "ppo+search": "bali_env.bots.puct:PolicySearchAgent",
    "sb3": "bali_env.bots.sb3:SB3Agent",
    "cmd": "bali_env.bots.protocol.command_agent:CommandAgent",
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
