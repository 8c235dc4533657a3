"""``league.json``: what a ``bali league-train`` run is and what it has done, the record ``--resume``
goes on from.

It holds the run's settings (``LeagueTrainSettings.as_saved``), every finished job (by name: its
kind, generation, seed, seconds, env steps and figures) and every payoff row (by generation:
the main's entries against each opponent). It is rewritten whole, atomically
(``bali_env.files.write_text``: a temporary file moved into place), after each job and each row,
so a run stopped at any moment leaves the last state in full; a job not in it is not done (it
reruns from its start, with the same seed: the same result).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bali_env.files import write_text

from bali_env.trainers.league_training.league_settings import LeagueTrainSettings

FORMAT = "bali-env/league-train"  #: ``league.json``'s ``format``
VERSION = 1  #: ``league.json``'s ``version``


class Ledger:
    """A run's ``league.json`` at ``path`` (``data``: its content); ``save`` writes it."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path, self.data = Path(path), data

    @classmethod
    def new(cls, path: Path, settings: LeagueTrainSettings) -> Ledger:
        """The record of a new run (nothing done yet; not yet written)."""
        return cls(path, {"format": FORMAT, "version": VERSION, "settings": settings.as_saved(), "jobs": {},
                          "payoff": {}})

    @classmethod
    def read(cls, path: Path) -> Ledger:
        """The record at ``path``; ValueError saying what is wrong when it is no league.json."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise ValueError(f"no readable league.json of a bali league-train run ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{path} is not the league.json of a bali league-train run")
        return cls(path, data)

    def settings(self, **changed: Any) -> LeagueTrainSettings:
        """The run's settings, the ``RESUMABLE`` ones of ``changed`` replacing the saved ones."""
        return LeagueTrainSettings.from_saved(self.data["settings"], **changed)

    def set_settings(self, settings: LeagueTrainSettings) -> None:
        """Keep ``settings`` as the run's (a resumed run's new generations or workers)."""
        self.data["settings"] = settings.as_saved()

    def done(self, name: str) -> bool:
        """Whether the job ``name`` has finished."""
        return name in self.data["jobs"]

    def job(self, name: str) -> dict[str, Any] | None:
        """The record of the finished job ``name`` (None when it has not finished)."""
        return self.data["jobs"].get(name)

    def record_job(self, name: str, record: dict[str, Any]) -> None:
        """Keep the finished job ``name`` and write the file."""
        self.data["jobs"][name] = record
        self.save()

    def payoff(self, generation: int) -> list[dict[str, Any]] | None:
        """The payoff row of main_``generation`` (None when not measured yet)."""
        return self.data["payoff"].get(str(generation))

    def record_payoff(self, generation: int, entries: list[dict[str, Any]]) -> None:
        """Keep main_``generation``'s payoff row and write the file."""
        self.data["payoff"][str(generation)] = entries
        self.save()

    def save(self) -> None:
        """Write ``league.json`` (atomically)."""
        write_text(self.path, json.dumps(self.data, indent=1) + "\n")


__all__ = ["FORMAT", "Ledger", "VERSION"]
