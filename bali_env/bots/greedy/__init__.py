"""The hand-written heuristic agent ("greedy"): one scoring kernel per decision, no search, in Numba.

It decides from its own observation only. Every legal action gets a score in expected end-of-game
points, relative to the others (own gain minus ``rival_weight`` x the others' mean gain), and the
best one is played (ties broken by a SplitMix64 stream):

- Offering categories are valued from the altar as the agent knows it: known counts, unknown cards
  spread at random, two cards of its favourite category for each shrine in hand it can afford
  (its face-down card and its supply card) and the others' likely additions, averaged over a fixed
  table of random completions (so ties and "3 - distinct counts above" are exact). Holdings are
  projected to the end (farmer scorings to come), and altar placements, oracle takes and face-up
  offerings maximise the relative final offering score under that estimate.
- Stones are dear while a shrine in hand needs them (7 each, the completing stone dearest), cheap
  otherwise (1 point per 5 at the end): phase-1 purchases use spare stones, the shrine reward is
  taken in stones when that pays a shrine, and a shrine is built as soon as it is affordable.
- Tableau cards are valued by their income: expected remaining scorings of their type (turns
  left x share of that type among the cards still to come) x reward, majority bonuses included
  (strictly ahead with at least 2). A shrine adds 4 points and the altar control it brings.
- Market takes try every sequence of the takes left: hand values of the cards plus, for the last
  take, the relative scoring of the card it reveals (the scored type). Emptying a column when the
  deck cannot refill it ends the game: done only when ahead.

Read the files in this order (each imports only the ones above it):

| file | what |
|---|---|
| ``slots.py`` | the weights (``PARAM_NAMES``), the named slots of the rows ``v`` (ints) and ``x`` (floats) |
| | one decision works in, their index kernels (``tableau``, ``hand``, ``offers``...), ``KERNEL_FILES`` |
| ``altar.py`` | the table of random altar completions, ``expected_values``, ``altar_score``, |
| | ``shrine_altar_gain`` |
| ``context.py`` | ``fill_context`` (turns left, shares, holdings, category values; the observation read by |
| | the engine's decoder, ``decode_counts``), ``stone_worth`` / |
| | ``stone_delta``, ``scoring_gain``, ``tableau_gain`` |
| ``scorers.py`` | one ``score_<decision>`` kernel per decision (``score_take_offering``, ``score_play``, |
| | ``score_offer_face_up`` / ``_face_down`` / ``_supply``, ``score_oracle``, ``score_shrine_reward``, |
| | ``score_farmer_choice``, ``score_refill``) and ``score_decision``, the dispatcher |
| ``decide.py`` | ``greedy_scores`` (one observation), ``pick_best``, ``greedy_decide_batch`` (the entry point) |
| ``agent.py`` | ``GreedyAgent``: the weights, ``act`` / ``act_batch`` / ``act_batch_keyed`` over the batch kernel |

``bali_env.bots.features`` reads the same context and scores as policy inputs. The heuristic's choices
are pinned by regression goldens (``tests/golden/greedy/``).
"""

from __future__ import annotations

from bali_env.bots.greedy.agent import GreedyAgent
from bali_env.bots.greedy.slots import PARAM_NAMES

__all__ = ["PARAM_NAMES", "GreedyAgent"]
