"""What one decision did, as the engine tells it (docs/rules.md section 3): ``move_events(before,
action, after)`` reads the true states around one move and names, in the rules' terms, what the
whole table saw happen: the card a refill take got, the column dealt in its place and the oracles
removed from it, the deck running out, a turn's scoring starting, what each player received from
it, and the scoring ending.

Every event is public: nothing here is known to one player only (a face-down offering's category
or an oracle peek's card is no event; the receipts of a scoring come from the open supply, the
token pools and the majority rule, which everyone watches). So a narrator may tell any viewer
every event; the pictures' ``narrate.TurnNarrator`` turns them into words.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bali_env.engine.ids import (
    A_ORACLE_TAKE,
    A_REFILL,
    N_CATEGORIES,
    PH_FARMER_CHOICE,
    PH_GAME_OVER,
    PH_ORACLE,
    PH_REFILL,
    PH_SHRINE_REWARD,
    is_oracle_take,
)
from bali_env.engine.state import (
    S_ACTIVE,
    S_ALTAR_LEN,
    S_DECK_POS,
    S_LAST_COL,
    S_NUM_PLAYERS,
    S_PHASE,
    S_TO_MOVE,
    state_blocks,
)

TAKE = "take"  #: a refill take: ``seat`` took ``card`` from ``column``
DEALT = "dealt"  #: ``column`` was dealt ``cards`` (take order), ``removed`` oracles taken out of it
DECK_OUT = "deck_out"  #: the deck ran out during the deal: the game ends, no scoring this turn
SCORING = "scoring"  #: the turn's scoring of card type ``card`` starts
RECEIVED = "received"  #: ``seat`` received ``stones``, ``vp`` and ``offerings`` (by category) from the scoring
SCORED = "scored"  #: the turn's scoring is over
_TAKES = (PH_REFILL, PH_ORACLE)  #: the decisions of phase 3, after which the scoring comes
_SCORING = (PH_SHRINE_REWARD, PH_FARMER_CHOICE)  #: the decisions of a scoring


@dataclass(frozen=True)
class Event:
    """One public fact of a move (the fields a kind does not use keep their defaults)."""

    kind: str
    seat: int = -1
    column: int = -1
    card: int = -1
    cards: tuple[int, ...] = ()
    removed: int = 0
    stones: int = 0
    vp: int = 0
    offerings: tuple[int, ...] = (0,) * N_CATEGORIES


def move_events(before: np.ndarray, action: int, after: np.ndarray) -> list[Event]:
    """The public events of the move ``action`` that turned the state ``before`` (a copy taken
    before the move) into ``after``, in the order they happened."""
    ph0, ph1 = int(before[S_PHASE]), int(after[S_PHASE])
    events = _refill_events(before, action, after) if ph0 == PH_REFILL else []
    if ph1 == PH_GAME_OVER and ph0 in _TAKES:
        return [*events, Event(DECK_OUT)]
    starts = ph0 in _TAKES and (ph1 not in _TAKES or after[S_ACTIVE] != before[S_ACTIVE])
    if starts:
        column = action - A_REFILL if ph0 == PH_REFILL else int(before[S_LAST_COL])  # the turn's last take
        events.append(Event(SCORING, card=_first_card(after, column)))
    if starts or ph0 in _SCORING:
        events += _receipts(before, action, after)
        if ph1 not in _SCORING:
            events.append(Event(SCORED))
    return events


def _refill_events(before: np.ndarray, action: int, after: np.ndarray) -> list[Event]:
    """A refill take, and the column dealt when the take emptied one."""
    column = action - A_REFILL
    events = [Event(TAKE, seat=int(before[S_TO_MOVE]), column=column, card=_first_card(before, column))]
    dealt = int(after[S_DECK_POS]) - int(before[S_DECK_POS])
    if dealt > 0:
        cards = _column(after, column)
        events.append(Event(DEALT, column=column, cards=cards, removed=dealt - len(cards)))
    return events


def _receipts(before: np.ndarray, action: int, after: np.ndarray) -> list[Event]:
    """What each seat received in this step of a scoring (an oracle peek's card is not a reward)."""
    b, a = state_blocks(before), state_blocks(after)
    offerings = a.offerings.astype(np.int64) - b.offerings
    if int(before[S_PHASE]) == PH_ORACLE and is_oracle_take(action):
        depth = action - A_ORACLE_TAKE
        offerings[int(before[S_TO_MOVE]), int(b.altar[int(before[S_ALTAR_LEN]) - 1 - depth])] -= 1
    events = []
    for q in range(int(before[S_NUM_PLAYERS])):
        stones, vp = int(a.stones[q]) - int(b.stones[q]), int(a.vp_tokens[q]) - int(b.vp_tokens[q])
        if stones or vp or offerings[q].any():
            events.append(Event(RECEIVED, seat=q, stones=stones, vp=vp, offerings=tuple(int(x) for x in offerings[q])))
    return events


def _column(s: np.ndarray, column: int) -> tuple[int, ...]:
    """The cards of a market column in take order."""
    v = state_blocks(s)
    return tuple(int(c) for c in v.market[column, int(v.col_pos[column]) : int(v.col_len[column])])


def _first_card(s: np.ndarray, column: int) -> int:
    """The first takeable card of a market column, -1 when it is empty."""
    cards = _column(s, column)
    return cards[0] if cards else -1


__all__ = ["DEALT", "DECK_OUT", "Event", "RECEIVED", "SCORED", "SCORING", "TAKE", "move_events"]
