"""Argument checks of ``run_tournament``: everything is checked before anything is printed,
played or written (TournamentError naming what is wrong)."""

from __future__ import annotations

from pathlib import Path
from collections.abc import Sequence
from typing import Any

import numpy as np

from bali_env.agents.base import make_agent
from .errors import TournamentError
from .journal import JOURNAL
from .schedule import check_sizes, participant_names, rounded_games

def check_out_dir(out: Path) -> None:
    """TournamentError unless ``out`` is a writable folder or can be made one (its nearest
    existing parent is a writable folder). Nothing is created: a rejected run leaves nothing."""
    import os

    out = Path(out)
    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    problem = None
    if existing.exists() and not existing.is_dir():
        problem = f"{str(existing)!r} is a file"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"{str(existing)!r} is not writable"
    if problem:
        raise TournamentError(f"cannot write to the output folder {str(out)!r}: {problem}")


def validate_agents(specs: Sequence[str], num_players: int | None = None) -> list[str]:
    """Build every agent once and ask it whether it plays ``num_players`` (its optional
    ``check_players``; not asked when None); raise TournamentError naming the spec when one cannot be built or play.
    Returns each participant's label: the spec, or for a bot from a file (``FILE.py:Class``)
    the bot's own ``name`` (``FILE:Class`` when it sets none), or for a bot program
    (``cmd:PROGRAM``, started once to say hello) the name it says."""
    from .protocol import BotFault

    labels = []
    for spec in specs:
        try:
            agent = make_agent(spec, seed=0)
            check = getattr(agent, "check_players", None)  # an agent that plays some player counts only
            if callable(check) and num_players is not None:
                check(num_players)
            if spec.partition(":")[0] == "cmd":  # a bot process: it must start and say hello
                try:
                    agent.start()
                finally:
                    agent.close()
        except BotFault as exc:
            raise TournamentError(f"agent {spec!r}: the bot did not start: {exc}") from None
        except (ValueError, TypeError) as exc:
            raise TournamentError(f"agent {spec!r}: {exc}") from exc
        own_name = spec.partition(":")[0].endswith(".py") or spec.partition(":")[0] == "cmd"
        labels.append(str(agent.name) if own_name else spec)
    return labels


def check_setup(specs: list[str], num_players: Any, workers: Any, batch_size: Any, seed: Any,
                out_dir: str | Path | None, save_records: bool, resume: bool) -> None:
    """TournamentError for a bad setting (the agents aside: ``validate_agents``), before
    anything is played, printed or written."""
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
        raise TournamentError(f"num_players must be 2, 3 or 4, got {num_players!r}")
    check_sizes(len(specs), int(num_players))
    for name, value in (("workers", workers), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise TournamentError(f"{name} must be a positive int, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TournamentError(f"seed must be an int, got {seed!r}")
    if save_records and out_dir is None:
        raise TournamentError("save_records needs out_dir (the records go to out_dir/records/)")
    if resume and out_dir is None:
        raise TournamentError("resume needs out_dir (the folder of the interrupted run)")
    if out_dir is not None:
        check_out_dir(Path(out_dir))
    if resume and not (Path(out_dir) / JOURNAL).is_file():
        raise TournamentError(f"nothing to resume: {Path(out_dir) / JOURNAL} does not exist")


BACKENDS = ("local", "ray")  #: where a tournament's games are played


def check_backend(backend: Any, ray_address: Any, chunk_size: Any) -> None:
    """The backend settings, checked before any game (TournamentError saying what is wrong)."""
    if backend not in BACKENDS:
        raise TournamentError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend != "ray" and (ray_address is not None or chunk_size is not None):
        raise TournamentError("ray_address and chunk_size need backend='ray'")
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
        raise TournamentError(f"chunk_size must be a positive int, got {chunk_size!r}")
    if backend == "ray":
        from .ray_backend import check_ray

        check_ray(ray_address)


def check_clock(move_time: Any, game_time: Any) -> None:
    """The clock: each a number of seconds > 0 (and at most a day), or None."""
    import math

    for name, value in (("move_time", move_time), ("game_time", game_time)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 0 < value <= 86_400:
            flag = "--" + name.replace("_", "-")
            raise TournamentError(f"{name} ({flag}) must be a number of seconds > 0 (at most 86400), got {value!r}")


def check_tournament(agents: Sequence[str], num_players: Any = 4, games: Any = 1000, seed: Any = 0, workers: Any = 2,
                     out_dir: str | Path | None = None, batch_size: Any = 128, save_records: bool = False,
                     resume: bool = False, backend: Any = "local", ray_address: Any = None,
                     chunk_size: Any = None, move_time: Any = None, game_time: Any = None) -> list[str]:
    """Every check ``run_tournament`` makes with these arguments, and nothing else: nothing is
    played, printed or created. TournamentError saying what is wrong; returns the participants'
    names (as in the results)."""
    specs = [str(s) for s in agents]
    check_backend(backend, ray_address, chunk_size)
    check_clock(move_time, game_time)
    check_setup(specs, num_players, workers, batch_size, seed, out_dir, save_records, resume)
    rounded_games(games, len(specs), int(num_players))
    return participant_names(validate_agents(specs, int(num_players)))
