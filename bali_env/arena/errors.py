"""The tournament's exceptions: a bad setup (``TournamentError``, a ValueError, raised before
anything is played or written), an interrupted run and a failed one (both keep the journal)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class TournamentError(ValueError):
    """A tournament that cannot be run as configured (unknown agent, too few participants, ...)."""


@contextmanager
def setup_checks() -> Iterator[None]:
    """The validators' TypeError and ValueError (``bali_env.engine.validate``) as the
    tournament's one error for a bad setup, TournamentError, with their message."""
    try:
        yield
    except TournamentError:
        raise
    except (TypeError, ValueError) as exc:
        raise TournamentError(str(exc)) from None


class TournamentInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM stopped a tournament; ``finished`` games are in the journal ``journal``."""

    def __init__(self, finished: int, total: int, journal: Path | None) -> None:
        super().__init__(f"{finished} of {total} games finished")
        self.finished, self.total, self.journal = finished, total, journal


class TournamentFailed(RuntimeError):
    """A worker died or an agent failed mid-run; ``finished`` games are in the journal ``journal``
    (resume with ``resume=True`` once the cause is fixed)."""

    def __init__(self, message: str, finished: int, total: int, journal: Path | None) -> None:
        super().__init__(message)
        self.finished, self.total, self.journal = finished, total, journal

