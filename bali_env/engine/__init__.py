"""The Bali rules engine: one flat ``int16`` state per game and the Numba kernels over it.

A functional core in the style of pgx: ``init_game`` deals, ``legal_mask`` / ``apply_action``
take one decision, ``observe`` encodes one player's view; everything else in ``bali_env`` is a
thin shell over these. Read the files in the order of the rules (docs/rules.md):

| file | rules | what |
|---|---|---|
| ``ids.py`` | 1, 6 | card, category, action, phase and decision ids; prices and points; every name |
| ``state.py`` | 8 | the state layout, its named index kernels (``s[hand(p, SHRINE)]``), seat arithmetic |
| ``seeds.py`` | | every seed and random number: the kernels' SplitMix64 stream, deal and agent seeds |
| ``deal.py`` | 2 | set-up: ``init_game`` |
| ``knowledge.py`` | 5 | what the others know of a seat's offering cards |
| ``take_offering.py`` | 3, phase 1 | ``legal_take_offering`` / ``apply_take_offering``, ``offering_price`` |
| ``play.py`` | 3, phase 2a | ``legal_play`` / ``apply_play`` |
| ``offering.py`` | 3, phase 2b | ``legal_offer_own`` / ``apply_offer_own``, |
| | | ``legal_offer_supply`` / ``apply_offer_supply`` |
| ``refill.py`` | 3, phase 3 | ``legal_refill`` / ``apply_refill``, new columns, owed oracle peeks |
| ``oracle.py`` | 3, Oracle | ``legal_oracle`` / ``apply_oracle`` |
| ``scoring.py`` | 3, phase 4 | scoring, the majority rule; ``legal_shrine_reward`` / |
| | | ``apply_shrine_reward``, ``legal_farmer_choice`` / ``apply_farmer_choice``, |
| | | ``farmer_choice_category`` (the category a farmer-choice action takes) |
| ``end.py`` | 4 | end of the game, altar values, ``score_parts``, ``decide_winners``, rewards |
| ``step.py`` | 6 | ``legal_mask`` / ``apply_action``: dispatchers over the pairs above |
| ``obs_spec.py`` | 5 | the observation layout, declared once |
| ``observe.py`` | 5 | the observation encoder; ``obs_one_hot`` / ``obs_count`` / ``obs_num_players`` read it |
| ``determinization.py`` | 5 | its inverse: ``determinize`` samples a full state consistent with an |
| | | observation (``check_observation`` first); the search plays on such samples |
| ``symmetry.py`` | 2-3 | the market's columns are exchangeable: ``move_columns``, ``column_permutation`` |
| ``decode.py`` | 5 | the one observation decoder: ``decode_counts`` (a kernel, named slots), |
| | | ``decode_observation`` (an ``ObservationView`` of counts) |
| ``events.py`` | 3 | what a move did, as public events (``move_events``): takes, deals, scorings, receipts |
| ``contract.py`` | 4, 6-8 | the public contract in Python: action names and checks, ``reset`` options, |
| | | ``state_dict()``, ``final_result``, state checks |
| ``validate.py`` | | the argument validators every public entry point uses (``check_int``, ``check_seat``...) |
| ``config.py`` | 2 | ``GameConfig``: the player count and the variants, one record checked once |
| ``batch.py`` | | batched stepping and whole random games (rollouts); the records their kernels take |
| | | (``DealSettings``, ``BatchBuffers``) |
| ``thread_pool.py`` | | Numba's thread pool, started with OpenMP waiting passively (``start_thread_pool``) |
| ``numba_cache.py`` | | keeps Numba's on-disk cache fresh across files |
| ``compile_notice.py`` | | says once (a warning on stderr) when Numba compiles the kernels |

Every kernel is ``@njit(cache=True)``. Randomness is used only when dealing (and when sampling a
hidden state, ``determinize``), from a 64-bit seed through a SplitMix64 stream; after the deal the
game is deterministic (the deck order is part of the state).
"""

from __future__ import annotations

from bali_env.engine import compile_notice, numba_cache

numba_cache.install()  # before any kernel is defined
compile_notice.install()  # a first compile says so, once

from bali_env.engine.batch import (  # noqa: E402
    BatchBuffers,
    DealSettings,
    batch_reset,
    batch_reset_one,
    batch_step_parallel,
    batch_step_serial,
    next_deal_seed,
    play_out,
    random_legal_action,
    rollout_new_games,
    rollout_states,
)
from bali_env.engine.config import GameConfig  # noqa: E402
from bali_env.engine.deal import init_game  # noqa: E402
from bali_env.engine.decode import DECODED_SIZE, ObservationView, decode_counts, decode_observation  # noqa: E402
from bali_env.engine.determinization import check_observation, determinize  # noqa: E402
from bali_env.engine.end import (  # noqa: E402
    N_PARTS,
    PART_OFFERINGS,
    PART_SHRINES,
    PART_STONES,
    PART_VP,
    altar_counts,
    altar_values,
    decide_winners,
    end_game,
    final_scores,
    score_parts,
    shrine_points,
    stone_points,
    terminal_rewards,
)
from bali_env.engine.ids import *  # noqa: E402,F403
from bali_env.engine.obs_spec import *  # noqa: E402,F403
from bali_env.engine.observe import decision_index, obs_count, obs_num_players, obs_one_hot, observe  # noqa: E402
from bali_env.engine.play import farmers_price  # noqa: E402
from bali_env.engine.seeds import rng_below, rng_next, shuffle  # noqa: E402
from bali_env.engine.scoring import farmer_choice_category, majority_holder, majority_seat, shrine_reward_amount  # noqa: E402
from bali_env.engine.state import *  # noqa: E402,F403
from bali_env.engine.step import apply_action, is_legal, legal_mask, step_checked  # noqa: E402
from bali_env.engine.symmetry import (  # noqa: E402
    COLUMN_ORDERS,
    COLUMN_ROTATIONS,
    check_column_order,
    column_orders,
    column_permutation,
    move_columns,
)
from bali_env.engine.take_offering import offering_cost, offering_price  # noqa: E402
