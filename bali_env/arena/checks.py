"""Argument checks of ``run_tournament``: everything is checked before anything is printed,
played or written (TournamentError naming what is wrong)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bali_env.bots.registry import make_agent
from bali_env.engine.validate import check_choice, check_int, check_num_players, check_number, check_seed

from bali_env.arena.errors import TournamentError, setup_checks
from bali_env.arena.journal import FINISHED, JOURNAL, RUN_OUTPUTS
from bali_env.arena.schedule import check_sizes, participant_names, rounded_games


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
    from bali_env.bots.protocol import BotFault

    labels = []
    for spec in specs:
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
        kind = spec.partition(":")[0]
        label = str(agent.name) if kind.endswith(".py") or kind == "cmd" else spec
        settings = spec.split(":", 2)[2] if kind.endswith(".py") and spec.count(":") >= 2 else ""
        labels.append(f"{label}:{settings}" if settings else label)
    specs_of: dict[str, set[str]] = {}
    for label, spec in zip(labels, specs, strict=True):
        specs_of.setdefault(label, set()).add(spec)
    return [f"{label} ({spec})" if len(specs_of[label]) > 1 else label
            for label, spec in zip(labels, specs, strict=True)]


def check_setup(specs: list[str], num_players: Any, workers: Any, batch_size: Any, seed: Any,
                out_dir: str | Path | None, save_records: bool, resume: bool, overwrite: bool = False) -> None:
    """TournamentError for a bad setting (the agents aside: ``validate_agents``), before
    anything is played, printed or written; ``out_dir`` follows the rule of every output folder
    (``bali_env.files.check_out_folder``: an earlier run there is replaced only with ``overwrite``)."""
    with setup_checks():
        check_sizes(len(specs), check_num_players(num_players))
        check_int("workers", workers, 1)
        check_int("batch_size", batch_size, 1)
        check_seed(seed)
    if save_records and out_dir is None:
        raise TournamentError("save_records needs out_dir (the records go to out_dir/records/)")
    if resume and out_dir is None:
        raise TournamentError("resume needs out_dir (the folder of the interrupted run)")
    if out_dir is not None:
        check_out_dir(Path(out_dir))
        from bali_env.files import check_out_folder

        try:
            check_out_folder(out_dir, what="tournament", outputs=RUN_OUTPUTS, finished=FINISHED, resumable=(JOURNAL,),
                             resume=resume, overwrite=overwrite)
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
    if resume and not (Path(out_dir) / JOURNAL).is_file():
        raise TournamentError(f"nothing to resume: {Path(out_dir) / JOURNAL} does not exist")


BACKENDS = ("local", "ray")  #: where a tournament's games are played


def check_backend(backend: Any, ray_address: Any, chunk_size: Any) -> None:
    """The backend settings, checked before any game (TournamentError saying what is wrong)."""
    with setup_checks():
        check_choice("backend", backend, BACKENDS)
        if backend != "ray" and (ray_address is not None or chunk_size is not None):
            raise TournamentError("ray_address and chunk_size need backend='ray'")
        if chunk_size is not None:
            check_int("chunk_size", chunk_size, 1)
    if backend == "ray":
        from bali_env.arena.ray_backend import check_ray

        check_ray(ray_address)


def check_clock(move_time: Any, game_time: Any) -> None:
    """The clock: each a number of seconds > 0 (and at most a day), or None."""
    with setup_checks():
        for name, value in (("move_time", move_time), ("game_time", game_time)):
            if value is not None:
                check_number(f"{name} (--{name.replace('_', '-')}, seconds)", value, 0, 86_400, low_open=True)


def check_tournament(agents: Sequence[str], num_players: Any = 4, games: Any = 1000, seed: Any = 0, workers: Any = 2,
                     out_dir: str | Path | None = None, batch_size: Any = 128, save_records: bool = False,
                     resume: bool = False, backend: Any = "local", ray_address: Any = None,
                     chunk_size: Any = None, move_time: Any = None, game_time: Any = None,
                     overwrite: bool = False) -> list[str]:
    """Every check ``run_tournament`` makes with these arguments, and nothing else: nothing is
    played, printed or created. TournamentError saying what is wrong; returns the participants'
    names (as in the results)."""
    specs = [str(s) for s in agents]
    check_extra()
    check_backend(backend, ray_address, chunk_size)
    check_clock(move_time, game_time)
    check_setup(specs, num_players, workers, batch_size, seed, out_dir, save_records, resume, overwrite)
    rounded_games(games, len(specs), int(num_players))
    return participant_names(validate_agents(specs, int(num_players), move_time, game_time))
