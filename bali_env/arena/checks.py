"""Argument checks of ``run_tournament``: everything is checked before anything is printed,
played or written (TournamentError naming what is wrong). The settings' own values are checked
by their record (``settings.TournamentSettings``); here: the libraries, Ray, the output folder,
enough participants, and the agents."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bali_env.bots.registry import make_agent
from bali_env.arena.errors import TournamentError
from bali_env.arena.journal import FINISHED, JOURNAL, RUN_OUTPUTS
from bali_env.arena.schedule import check_sizes, participant_names
from bali_env.arena.settings import BACKENDS, TournamentSettings, check_backend, check_clock


TOURNAMENT_LIBRARIES = ("choix", "tqdm")  #: what the tournament extra brings that the core does not


def check_extra() -> None:
    """TournamentError with the install line when the tournament extra is not installed (the
    rating fit's and the progress bars' libraries; the core install plays games without them)."""
    import importlib.util

    missing = [name for name in TOURNAMENT_LIBRARIES if importlib.util.find_spec(name) is None]
    if missing:
        raise TournamentError(f"tournaments need {' and '.join(missing)}: pip install 'bali-env[tournament]' "
                              "(pip install -e '.[tournament]' in a clone)")


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


def validate_agents(specs: Sequence[str], num_players: int | None = None, move_time: float | None = None,
                    game_time: float | None = None) -> list[str]:
    """Build every agent once and ask it whether it plays ``num_players`` (its optional
    ``check_players``; not asked when None); raise TournamentError naming the spec when one cannot be built or play.
    Returns each participant's label: the spec, or for a bot from a file (``FILE.py:Class``)
    the bot's own ``name`` (``FILE:Class`` when it sets none) with its settings
    (``FILE.py:Class:depth=3`` is ``NAME:depth=3``, as ``mcts:sims=200`` shows its own), or for
    a bot program (``cmd:PROGRAM``, started once to say hello, its hello carrying the run's clock
    ``move_time`` / ``game_time``, then told to quit) the name it says. A label that two
    different specs would share (two programs saying one name) is followed by its spec in
    brackets, so the table tells them apart (``participant_names`` numbers only true repeats)."""
    labels = [_label(spec, _checked_agent(spec, num_players, move_time, game_time)) for spec in specs]
    return _distinct(labels, specs)


def _checked_agent(spec: str, num_players: int | None, move_time: float | None, game_time: float | None) -> Any:
    """The agent of ``spec``, asked whether it plays ``num_players`` and, a bot program, started
    once (its hello) and closed; TournamentError naming the spec when it cannot."""
    from bali_env.bots.protocol import BotFault

    try:
        agent = make_agent(spec, seed=0)
        check = getattr(agent, "check_players", None)  # an agent that plays some player counts only
        if callable(check) and num_players is not None:
            check(num_players)
        if spec.partition(":")[0] == "cmd":  # a bot process: it must start and say hello (the run's clock)
            agent.set_clock(move_time, game_time)
            try:
                agent.start()
            finally:
                agent.close()
    except BotFault as exc:
        raise TournamentError(f"agent {spec!r}: the bot did not start: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise TournamentError(f"agent {spec!r}: {exc}") from exc
    return agent


def _label(spec: str, agent: Any) -> str:
    """A participant's label (``validate_agents``): the spec, or a file bot's or a bot
    program's own name, with a file bot's settings."""
    kind = spec.partition(":")[0]
    label = str(agent.name) if kind.endswith(".py") or kind == "cmd" else spec
    settings = spec.split(":", 2)[2] if kind.endswith(".py") and spec.count(":") >= 2 else ""
    return f"{label}:{settings}" if settings else label


def _distinct(labels: list[str], specs: Sequence[str]) -> list[str]:
    """The labels, each one that different specs share followed by its spec in brackets."""
    specs_of: dict[str, set[str]] = {}
    for label, spec in zip(labels, specs, strict=True):
        specs_of.setdefault(label, set()).add(spec)
    return [f"{label} ({spec})" if len(specs_of[label]) > 1 else label
            for label, spec in zip(labels, specs, strict=True)]


def check_setup(specs: Sequence[str], settings: TournamentSettings) -> None:
    """TournamentError for a setup the record alone cannot judge (the agents aside:
    ``validate_agents``), before anything is played, printed or written: enough participants
    for the seats, and ``out_dir`` by the rule of every output folder
    (``bali_env.files.check_out_folder``: an earlier run there is replaced only with ``overwrite``,
    continued with ``resume``)."""
    check_sizes(len(specs), settings.game)
    out_dir, resume = settings.out_dir, settings.resume
    if out_dir is not None:
        check_out_dir(Path(out_dir))
        from bali_env.files import check_out_folder

        try:
            check_out_folder(out_dir, what="tournament", outputs=RUN_OUTPUTS, finished=FINISHED, resumable=(JOURNAL,),
                             resume=resume, overwrite=settings.overwrite)
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
    if resume and not (Path(out_dir) / JOURNAL).is_file():
        raise TournamentError(f"nothing to resume: {Path(out_dir) / JOURNAL} does not exist")


def check_tournament(agents: Sequence[str], settings: TournamentSettings | None = None, **fields: Any) -> list[str]:
    """Every check ``run_tournament`` makes with these arguments (a ``TournamentSettings``, or its
    fields as keywords, as ``run_tournament`` takes them), and nothing else: nothing is played,
    printed or created. TournamentError saying what is wrong; returns the participants' names
    (as in the results)."""
    settings = TournamentSettings.make(settings, **fields)
    specs = [str(s) for s in agents]
    check_extra()
    if settings.backend == "ray":
        from bali_env.arena.ray_backend import check_ray

        check_ray(settings.ray_address)
    check_setup(specs, settings)
    return participant_names(validate_agents(specs, settings.game.num_players, settings.move_time,
                                             settings.game_time))


__all__ = ["BACKENDS", "TOURNAMENT_LIBRARIES", "check_backend", "check_clock", "check_extra", "check_out_dir",
           "check_setup", "check_tournament", "validate_agents"]
