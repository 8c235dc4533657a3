"""``GameConfig``: the settings that decide which game is played (the player count and the
variants) as one frozen record, checked once when it is made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bali_env.engine.validate import check_flag, check_num_players

#: the fields of a ``GameConfig``, as the loose keyword arguments that build one
GAME_FIELDS = ("num_players", "oracle", "demon")


@dataclass(frozen=True)
class GameConfig:
    """Which game: ``num_players`` (2, 3 or 4; 4 as the environments' default) and the ``oracle``
    and ``demon`` variants. Checked once, when made, by the engine's validators: TypeError /
    ValueError naming the argument (``num_players must be 2..4, got 5``); frozen, so whoever
    receives one need not check it again."""

    num_players: int = 4
    oracle: bool = False
    demon: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "num_players", check_num_players(self.num_players))
        object.__setattr__(self, "oracle", check_flag("oracle", self.oracle))
        object.__setattr__(self, "demon", check_flag("demon", self.demon))

    def as_dict(self) -> dict[str, Any]:
        """``{"num_players": ..., "oracle": ..., "demon": ...}``: the keyword arguments of the
        functions that take the three loose (``BaliVectorEnv(**game.as_dict())``)."""
        return {"num_players": self.num_players, "oracle": self.oracle, "demon": self.demon}


__all__ = ["GAME_FIELDS", "GameConfig"]
