"""One decision: the dispatchers over the phases' ``legal_*`` / ``apply_*`` pairs (docs/rules.md
sections 3 and 6).

``legal_mask(s, mask)`` writes the 44 legal actions of the seat to move; ``apply_action(s, a)``
applies one legal decision and runs every automatic step up to the next decision;
``step_checked`` does both, refusing an illegal action without touching the state.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bali_env.engine.ids import (
    N_ACTIONS,
    PH_FARMER_CHOICE,
    PH_OFFER_OWN,
    PH_OFFER_SUPPLY,
    PH_ORACLE,
    PH_PLAY,
    PH_REFILL,
    PH_SHRINE_REWARD,
    PH_TAKE_OFFERING,
)
from bali_env.engine.offering import apply_offer_own, apply_offer_supply, legal_offer_own, legal_offer_supply
from bali_env.engine.oracle import apply_oracle, legal_oracle
from bali_env.engine.play import apply_play, legal_play
from bali_env.engine.refill import apply_refill, legal_refill
from bali_env.engine.scoring import apply_farmer_choice, apply_shrine_reward, legal_farmer_choice, legal_shrine_reward
from bali_env.engine.state import S_DECISIONS, S_PHASE, S_TO_MOVE
from bali_env.engine.take_offering import apply_take_offering, legal_take_offering


@njit(cache=True, inline="always")
def legal_mask(s, mask):
    """Write the legal actions of the seat to move into ``mask`` (int8[44]); all 0 after the end."""
    mask[:] = 0
    ph = s[S_PHASE]
    p = s[S_TO_MOVE]
    if ph == PH_TAKE_OFFERING:
        legal_take_offering(s, p, mask)
    elif ph == PH_PLAY:
        legal_play(s, p, mask)
    elif ph == PH_OFFER_OWN:
        legal_offer_own(s, p, mask)
    elif ph == PH_OFFER_SUPPLY:
        legal_offer_supply(s, p, mask)
    elif ph == PH_REFILL:
        legal_refill(s, p, mask)
    elif ph == PH_ORACLE:
        legal_oracle(s, p, mask)
    elif ph == PH_SHRINE_REWARD:
        legal_shrine_reward(s, p, mask)
    elif ph == PH_FARMER_CHOICE:
        legal_farmer_choice(s, p, mask)


@njit(cache=True)
def apply_action(s, action):
    """Apply one legal decision of the seat to move and run the game on to the next decision.
    The action must be legal (see ``step_checked``)."""
    ph = s[S_PHASE]
    p = s[S_TO_MOVE]
    s[S_DECISIONS] += 1
    if ph == PH_TAKE_OFFERING:
        apply_take_offering(s, p, action)
    elif ph == PH_PLAY:
        apply_play(s, p, action)
    elif ph == PH_OFFER_OWN:
        apply_offer_own(s, p, action)
    elif ph == PH_OFFER_SUPPLY:
        apply_offer_supply(s, p, action)
    elif ph == PH_REFILL:
        apply_refill(s, p, action)
    elif ph == PH_ORACLE:
        apply_oracle(s, p, action)
    elif ph == PH_SHRINE_REWARD:
        apply_shrine_reward(s, p, action)
    elif ph == PH_FARMER_CHOICE:
        apply_farmer_choice(s, p, action)


@njit(cache=True)
def is_legal(s, action):
    """True when ``action`` (0..43) is legal for the seat to move."""
    if action < 0 or action >= N_ACTIONS:
        return False
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    legal_mask(s, mask)
    return mask[action] != 0


@njit(cache=True)
def step_checked(s, action):
    """Apply ``action`` if it is legal and return 0; return 1 and change nothing if it is not."""
    if not is_legal(s, action):
        return 1
    apply_action(s, action)
    return 0
