"""An example bot that follows docs/bots.md: read the observation with ``decode_observation``,
decide from the named fields, break ties with the seeded ``self.rng``.

Field it in a tournament (any number of workers):

    bali tournament --agents agents/my_bot.py:PriestFirst greedy random --players 3 --games 300
    bali tournament --agents agents/my_bot.py:PriestFirst:take_offerings=0 random --players 2

``PriestFirst`` plays one idea: VP tokens are points that never lose value, and stonecutters pay
stones every time they are scored. So it refills with priests, then stonecutters, then farmers
of the category it holds most offering cards of; plays priests and stonecutters before farmers;
buys an offering card in phase 1 only when it costs at most ``take_offerings`` stones; and answers
every other decision at random.
"""

from __future__ import annotations

import numpy as np

from bali_env.bots import Agent
from bali_env import ACTION_NAMES, decode_observation
from bali_env.engine.ids import CARD_SHORT

PRIEST, STONECUTTER = CARD_SHORT.index("Priest"), CARD_SHORT.index("Stone")
FARMER = CARD_SHORT.index("Rice")  #: the rice farmer; the other farmers follow by category


class PriestFirst(Agent):
    """Priests, then stonecutters, then the farmers of its richest offering category."""

    name = "priest_first"

    def __init__(self, seed: int | None = None, take_offerings: int = 2) -> None:
        super().__init__(seed)
        self.take_offerings = int(take_offerings)

    def _card_value(self, card: int, richest: int) -> float:
        """How much this bot wants a card in hand (higher is better)."""
        if card == PRIEST:
            return 3.0
        if card == STONECUTTER:
            return 2.0
        return 1.0 if card == FARMER + richest else 0.0

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """One decision, from the decoded observation (seat 0 of the view is this bot)."""
        view = decode_observation(observation)
        legal = [int(a) for a in np.flatnonzero(action_mask)]
        richest = int(np.argmax(view.offerings_min[0]))
        scores = {a: self.rng.random() * 0.1 for a in legal}  # random tie-breaks
        for a in legal:
            name = ACTION_NAMES[a]
            if view.decision == "refill" and name.startswith("take column"):
                column = view.market[int(name.split()[-1])]
                scores[a] += self._card_value(column[0], richest) if column else 0.0
            elif view.decision == "play":
                scores[a] += 3.0 if name == "play priest" else 2.0 if name == "play stonecutter" else 0.0
            elif view.decision == "take_offering" and name.startswith("take "):
                category = ("rice", "peanuts", "bananas", "chilies").index(name.split()[1])
                price = max(0, 5 - int(view.tableaus[0][FARMER + category]))
                scores[a] += 1.0 if price <= self.take_offerings else -1.0
        return max(legal, key=lambda a: scores[a])
