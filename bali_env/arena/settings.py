"""The settings of a run as records: ``TournamentSettings`` (every option of ``run_tournament``),
``LeagueSettings`` (of ``run_league``) and ``GameJob`` (how a worker plays a tournament's games,
``play_games``). Each holds every option with its default in one place and is checked once, when
made (``TournamentError`` naming what is wrong, before anything is played or written); frozen,
so whoever receives one checks nothing again. The game itself travels as one
``bali_env.engine.GameConfig`` (player count and variants).

``TournamentSettings.make(base, **fields)`` builds a record from keyword arguments, as
``run_tournament(agents, num_players=4, games=1000, ...)`` takes them: ``num_players``,
``oracle`` and ``demon`` go into its ``game``, and fields given with a record override the
record's (a new record; TypeError for a name that is no setting)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bali_env.engine.config import GAME_FIELDS, GameConfig
from bali_env.engine.validate import check_choice, check_flag, check_int, check_number, check_seed, is_int

from bali_env.arena.errors import TournamentError, setup_checks

DEFAULT_BATCH_SIZE = 128  #: slots of each worker's BaliVectorEnv
BACKENDS = ("local", "ray")  #: where a tournament's games are played
TABLE_SIZES = (2, 3, 4)  #: a league's parts: 2-player pairs, the 3- and 4-player free-for-all

R = TypeVar("R", bound="_Record")


def _make(cls: type[R], base: R | None, fields: dict[str, Any]) -> R:
    """A ``cls`` record from ``base`` (None: the defaults) with ``fields`` in place of its own;
    ``base`` itself when there are none. TypeError naming a field ``cls`` does not have."""
    names = {f.name for f in dataclasses.fields(cls)}
    loose = set(GAME_FIELDS) if "game" in names else set()
    unknown = sorted(set(fields) - names - loose)
    if unknown:
        raise TypeError(f"{cls.__name__} has no setting {', '.join(map(repr, unknown))} "
                        f"(settings: {', '.join(sorted(names | loose))})")
    if base is not None and not isinstance(base, cls):
        raise TypeError(f"expected a {cls.__name__}, got {type(base).__name__}")
    if base is not None and not fields:
        return base
    with cls._errors():
        game = {k: fields.pop(k) for k in loose if k in fields}
        if game:  # the loose player count and variants, on the game given, the record's or the default
            fields["game"] = dataclasses.replace(fields.get("game", getattr(base, "game", None) or _default_game(cls)),
                                                 **game)
        return cls(**fields) if base is None else dataclasses.replace(base, **fields)


def _default_game(cls: type) -> GameConfig:
    """The ``game`` a record of ``cls`` has by default (``GameConfig()`` when it has none)."""
    default = next(f.default for f in dataclasses.fields(cls) if f.name == "game")
    return GameConfig() if default is dataclasses.MISSING else default


def check_progress(progress: Any) -> bool | Callable[[int], None]:
    """``progress``: a bool (a bar on stderr, or none) or a function told each batch of games."""
    if isinstance(progress, bool) or callable(progress):
        return progress
    raise TypeError(f"progress must be a bool or a function, got {type(progress).__name__} {progress!r}")


def check_clock(move_time: Any, game_time: Any) -> None:
    """The clock: each a number of seconds > 0 (and at most a day), or None."""
    with setup_checks():
        for name, value in (("move_time", move_time), ("game_time", game_time)):
            if value is not None:
                check_number(f"{name} (--{name.replace('_', '-')}, seconds)", value, 0, 86_400, low_open=True)


def check_backend(backend: Any, ray_address: Any, chunk_size: Any) -> None:
    """The backend settings (not whether Ray is there: ``checks.check_tournament`` asks)."""
    with setup_checks():
        check_choice("backend", backend, BACKENDS)
        if backend != "ray" and (ray_address is not None or chunk_size is not None):
            raise TournamentError("ray_address and chunk_size need backend='ray'")
        if chunk_size is not None:
            check_int("chunk_size", chunk_size, 1)


class _Record:
    """What the records share: ``make`` (from keyword arguments) and ``replace``."""

    _errors: Callable[[], Any] = contextlib.nullcontext  #: the errors of a bad value, as they are

    @classmethod
    def make(cls: type[R], base: R | None = None, /, **fields: Any) -> R:
        """A record from ``base`` (None: the defaults) and ``fields`` (see the module docstring)."""
        return _make(cls, base, fields)

    def replace(self: R, **fields: Any) -> R:
        """A new record: this one with ``fields`` changed (checked again)."""
        return _make(type(self), self, fields)

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)


@dataclass(frozen=True, kw_only=True)
class _RunSettings(_Record):
    """The settings a tournament and a league share; a bad value raises TournamentError."""

    _errors = staticmethod(setup_checks)

    games: int  # each record's own default
    seed: int = 0
    workers: int = 2
    out_dir: Path | None = None
    progress: bool | Callable[[int], None] = True
    resume: bool = False
    overwrite: bool = False
    backend: str = "local"
    ray_address: str | None = None
    move_time: float | None = None
    game_time: float | None = None

    def _check_run(self, chunk_size: int | None = None) -> None:
        """The shared settings, in the order the checks always ran (TournamentError)."""
        check_backend(self.backend, self.ray_address, chunk_size)
        check_clock(self.move_time, self.game_time)
        self._set("workers", check_int("workers", self.workers, 1))
        self._set("seed", check_seed(self.seed))
        self._set("games", check_int("games", self.games, 1))
        for name in ("resume", "overwrite"):
            self._set(name, check_flag(name, getattr(self, name)))
        self._set("progress", check_progress(self.progress))
        if self.out_dir is not None:
            self._set("out_dir", Path(self.out_dir))


@dataclass(frozen=True, kw_only=True)
class TournamentSettings(_RunSettings):
    """Every option of ``run_tournament`` with its default (``run_tournament``'s docstring says
    what each does): ``game`` (player count and variants), ``games``, ``seed``, ``workers``,
    ``out_dir``, ``progress``, ``batch_size``, ``save_records``, ``resume``, ``overwrite``,
    ``backend``, ``ray_address``, ``chunk_size``, ``move_time``, ``game_time``. Checked when made
    (TournamentError); the agents and the output folder are checked by ``check_tournament``."""

    game: GameConfig = GameConfig()
    games: int = 1000
    batch_size: int = DEFAULT_BATCH_SIZE
    save_records: bool = False
    chunk_size: int | None = None

    def __post_init__(self) -> None:
        with setup_checks():
            if not isinstance(self.game, GameConfig):
                raise TypeError(f"game must be a GameConfig, got {type(self.game).__name__} {self.game!r}")
            self._check_run(self.chunk_size)
            self._set("batch_size", check_int("batch_size", self.batch_size, 1))
            self._set("save_records", check_flag("save_records", self.save_records))
            if self.chunk_size is not None:
                self._set("chunk_size", int(self.chunk_size))
        if self.save_records and self.out_dir is None:
            raise TournamentError("save_records needs out_dir (the records go to out_dir/records/)")
        if self.resume and self.out_dir is None:
            raise TournamentError("resume needs out_dir (the folder of the interrupted run)")


@dataclass(frozen=True, kw_only=True)
class LeagueSettings(_RunSettings):
    """Every option of ``run_league`` with its default (its docstring says what each does):
    ``games`` (per part), ``seed``, ``workers``, ``out_dir``, ``sizes`` (the table sizes of the
    parts), ``oracle``, ``demon``, ``progress``, ``resume``, ``move_time``, ``game_time``,
    ``backend``, ``ray_address``, ``overwrite``, ``out_parent``, ``on_folder``. Checked when
    made (TournamentError); each part is a tournament of ``part`` settings."""

    games: int = 200
    sizes: tuple[int, ...] = TABLE_SIZES
    oracle: bool = False
    demon: bool = False
    out_parent: Path | None = None
    on_folder: Callable[[Path], None] | None = None

    def __post_init__(self) -> None:
        sizes = tuple(self.sizes) if isinstance(self.sizes, (tuple, list)) else ()
        if not sizes or any(not is_int(n) or n not in TABLE_SIZES for n in sizes):
            raise TournamentError(f"players must be among {TABLE_SIZES}, got {list(sizes) or self.sizes}")
        self._set("sizes", tuple(int(n) for n in sizes))
        with setup_checks():
            self._check_run()
            self._set("oracle", check_flag("oracle", self.oracle))
            self._set("demon", check_flag("demon", self.demon))
            if self.out_parent is not None:
                self._set("out_parent", Path(self.out_parent))

    def part(self, num_players: int, out_dir: Path | None, resume: bool) -> TournamentSettings:
        """The settings of the part played in ``num_players`` (its own folder ``out_dir``,
        resumed or not): this league's games, seed, workers, variants, clock and backend."""
        return TournamentSettings(game=GameConfig(num_players, self.oracle, self.demon), games=self.games,
                                  seed=self.seed, workers=self.workers, out_dir=out_dir, progress=self.progress,
                                  resume=resume, backend=self.backend, ray_address=self.ray_address,
                                  move_time=self.move_time, game_time=self.game_time)


@dataclass(frozen=True, kw_only=True)
class GameJob(_Record):
    """How a worker plays a tournament's games (``play_games``): the ``game``, the ``seed`` every
    deal and decision key comes from, ``batch_size`` (slots of its BaliVectorEnv),
    ``keep_actions`` (each record keeps its actions), the clock (``move_time``, ``game_time``),
    the participants' ``names`` (None: their specs) and ``log_dir`` (where a ``cmd:`` bot's
    standard error goes). Sent to worker processes and Ray tasks as it is."""

    game: GameConfig
    seed: int
    batch_size: int = DEFAULT_BATCH_SIZE
    keep_actions: bool = False
    move_time: float | None = None
    game_time: float | None = None
    names: tuple[str, ...] | None = None
    log_dir: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.game, GameConfig):
            raise TypeError(f"game must be a GameConfig, got {type(self.game).__name__} {self.game!r}")
        if self.names is not None:
            self._set("names", tuple(self.names))


__all__ = ["BACKENDS", "DEFAULT_BATCH_SIZE", "TABLE_SIZES", "GameJob", "LeagueSettings", "TournamentSettings",
           "check_backend", "check_clock", "check_progress"]
