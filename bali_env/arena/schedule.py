"""Who plays which seat in which game: participant names, seat-rotated lineups, whole
rotations (the scheme of the package docstring). The seed each game is dealt from and the seeds
agents are built with are the engine's (``bali_env.engine.seeds``)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from bali_env.engine.config import GameConfig
from bali_env.engine.validate import check_int, check_num_players

from bali_env.arena.errors import TournamentError, setup_checks

LINEUP_SCHEME = (
    "m == n: game k seats the cyclic rotation k mod n of the participants (seat s = participant (s + k) mod n); "
    "m > n: combination (k // n) mod C(m, n) of itertools.combinations(range(m), n), rotation k mod n; "
    "games rounded up to whole cycles"
)


def participant_names(specs: Sequence[str]) -> list[str]:
    """Names of the participants from their labels (the spec, or a file bot's own name): numbered
    ``label#1``, ``label#2``, ... when a label repeats."""
    counts: dict[str, int] = {}
    for spec in specs:
        counts[spec] = counts.get(spec, 0) + 1
    seen: dict[str, int] = {}
    names = []
    for spec in specs:
        if counts[spec] == 1:
            names.append(spec)
        else:
            seen[spec] = seen.get(spec, 0) + 1
            names.append(f"{spec}#{seen[spec]}")
    return names


def player_count(num_players: int | GameConfig) -> int:
    """The player count: a ``GameConfig``'s (checked when it was made), or an int checked here
    (TournamentError unless 2, 3 or 4)."""
    if isinstance(num_players, GameConfig):
        return num_players.num_players
    with setup_checks():
        return check_num_players(num_players)


def check_sizes(num_participants: int, num_players: int | GameConfig) -> int:
    """The player count (``player_count``); TournamentError unless there are enough participants."""
    num_players = player_count(num_players)
    if num_participants < num_players:
        raise TournamentError(
            f"{num_participants} participant(s) for {num_players} seats: list at least {num_players} agents; "
            f"repeat a spec to field it several times (e.g. greedy {' '.join(['random'] * (num_players - 1))})"
        )
    return num_players


def cycle_length(num_participants: int, num_players: int | GameConfig) -> int:
    """Games in one full rotation: n when there are n participants, ``C(m, n) * n`` for m > n
    (``num_players``: a player count or a ``GameConfig``)."""
    n = check_sizes(num_participants, num_players)
    return math.comb(num_participants, n) * n


def lineup(k: int, num_participants: int, num_players: int) -> tuple[int, ...]:
    """The participant indices seated in game k, seat 0 first (the scheme of the module docstring)."""
    n = num_players
    if num_participants == n:
        players: tuple[int, ...] = tuple(range(n))
    else:
        combos = _combinations(num_participants, n)
        players = combos[(k // n) % len(combos)]
    r = k % n
    return tuple(players[(s + r) % n] for s in range(n))


_COMBOS: dict[tuple[int, int], list[tuple[int, ...]]] = {}


def _combinations(m: int, n: int) -> list[tuple[int, ...]]:
    if (m, n) not in _COMBOS:
        _COMBOS[(m, n)] = list(itertools.combinations(range(m), n))
    return _COMBOS[(m, n)]


def rounded_games(games: int, num_participants: int, num_players: int | GameConfig) -> int:
    """``games`` rounded up to a whole number of cycles (at least one cycle; ``num_players``: a
    player count or a ``GameConfig``)."""
    with setup_checks():
        games = check_int("games", games, 1)
    cycle = cycle_length(num_participants, num_players)
    return max(1, -(-int(games) // cycle)) * cycle
