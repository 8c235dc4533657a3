"""The interface every bali-env agent implements (``Agent``), and the checks of what it is handed.

An agent decides from one player's observation and action mask only (what that player may know,
docs/rules.md section 5), never from the hidden state. ``act`` takes one decision; ``act_batch`` takes
one decision per row (the default loops over ``act``; vectorised agents override it and set
``batched = True`` so the tournament can drive them with the batched environment).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from bali_env.engine import seeds


def check_observations(observations: np.ndarray, action_masks: np.ndarray,
                       need_legal: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks as an agent may read them, checked: shapes ``[N, OBS_DIM]`` and
    ``[N, N_ACTIONS]`` (or one of each), finite values within each slot's range that are whole
    counts of its scale, one decision, one seat to decide and one player count, 0/1 masks with a
    legal action per row (unless ``need_legal`` is False). TypeError / ValueError naming what is
    wrong; returns float32 / int8 2-D copies (nothing out of range ever reaches a search kernel)."""
    obs, masks = _checked_shapes(observations, action_masks)
    obs = obs.astype(np.float32)
    _check_slot_values(obs)
    _check_one_hots(obs)
    if not ((masks == 0) | (masks == 1)).all():
        raise ValueError("action_mask must hold 0/1 values")
    masks = masks.astype(np.int8)
    if need_legal and not (masks.sum(axis=1) > 0).all():
        raise ValueError("action_mask has no legal action")
    return obs, masks


def _checked_shapes(observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks as 2-D arrays of numbers (a single row given one dimension),
    their shapes and dtypes checked (``check_observations``'s errors)."""
    from bali_env.engine import N_ACTIONS, OBS_DIM

    obs, masks = np.asarray(observations), np.asarray(action_masks)
    if obs.ndim == 1:
        obs, masks = obs[None], masks[None]
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
        raise ValueError(f"observation must have shape [{OBS_DIM}] (or [N, {OBS_DIM}]), got {np.shape(observations)}")
    if masks.shape != (obs.shape[0], N_ACTIONS):
        raise ValueError(f"action_mask must have shape [{N_ACTIONS}] (or [N, {N_ACTIONS}]) matching the "
                         f"observations, got {np.shape(action_masks)}")
    if not np.issubdtype(obs.dtype, np.number):
        raise TypeError(f"observation must be numeric (float32), got dtype {obs.dtype}")
    if not (np.issubdtype(masks.dtype, np.number) or masks.dtype == np.bool_):
        raise TypeError(f"action_mask must be 0/1 numbers or bools, got dtype {masks.dtype}")
    return obs, masks


def _check_slot_values(obs: np.ndarray) -> None:
    """Every slot of the float32 observations finite, within its range, and a whole count of
    its scale (ValueError naming the first slot that is not)."""
    from bali_env.engine import OBS_HIGH, OBS_SCALE
    from bali_env.engine.obs_spec import observation_slot_names

    if not np.isfinite(obs).all():
        raise ValueError("observation holds NaN or infinite values")
    counts = obs * OBS_SCALE
    bad = (obs < 0) | (obs > OBS_HIGH * (1 + 1e-5)) | (np.abs(counts - np.round(counts)) > 1e-3)
    if bad.any():
        row, slot = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"observation slot {slot} ({observation_slot_names()[slot]}) = {obs[row, slot]!r} is not a "
                         f"count within 0..{OBS_HIGH[slot] * OBS_SCALE[slot]:g} divided by {OBS_SCALE[slot]:g}")


def _check_one_hots(obs: np.ndarray) -> None:
    """One decision, one seat to decide (none once the game is over) and one player count set
    in every row (ValueError otherwise)."""
    from bali_env.engine import (
        D_GAME_OVER,
        MAX_PLAYERS,
        N_DECISIONS,
        N_PLAYER_COUNTS,
        O_DECISION,
        O_NUM_PLAYERS,
        O_TO_MOVE,
    )

    decision = obs[:, O_DECISION : O_DECISION + N_DECISIONS]
    over = decision[:, D_GAME_OVER] == 1
    groups = (("decision", decision, np.ones(len(obs))),
              ("seat to decide", obs[:, O_TO_MOVE : O_TO_MOVE + MAX_PLAYERS], np.where(over, 0, 1)),
              ("number of players", obs[:, O_NUM_PLAYERS : O_NUM_PLAYERS + N_PLAYER_COUNTS], np.ones(len(obs))))
    for name, block, want in groups:
        if (block.sum(axis=1) != want).any():
            raise ValueError(f"observation: the {name} one-hot must have exactly one slot set (the seat to "
                             "decide: none after the end)")


def check_keys(keys: np.ndarray, rows: int) -> np.ndarray:
    """``keys`` as an array of ``rows`` integers, one per row of a batch (ValueError otherwise)."""
    keys = np.asarray(keys)
    if keys.shape != (rows,) or not np.issubdtype(keys.dtype, np.integer):
        raise ValueError(f"keys must be {rows} integers, one per row, got {keys.dtype} {keys.shape}")
    return keys



class Agent(ABC):
    """A Bali player: ``act(observation, action_mask) -> action id``."""

    name: str = "agent"
    batched: bool = False  #: True when act_batch is vectorised (no per-row Python loop)

    def __init__(self, seed: int | None = None) -> None:
        self.seed(seed)

    def seed(self, seed: int | None = None) -> None:
        """(Re)seed the agent's own random generator."""
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Choose a legal action id (``action_mask[a] == 1``) for one observation."""

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per row; the default calls ``act`` row by row."""
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks, strict=True)], dtype=np.int64)

    def act_batch_unchecked(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``act_batch`` on an environment's own buffers (float32 observations the engine wrote,
        int8 masks with a legal action in every row), which need no checking: what the learner
        envs call for their opponents (``bali_env.versus``). The default checks anyway."""
        return self.act_batch(observations, action_masks)

    def act_batch_keyed(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """One action per row, row i's randomness drawn from ``keys[i]`` (``decision_keys``), so
        each row's choice does not depend on the other rows: what tournaments call. The default
        reseeds and calls ``act`` row by row for an agent that is not ``batched``; a batched agent
        that does not override this is seeded once per call from all the keys (its choices then
        depend on how rows are batched)."""
        if not self.batched:
            out = np.empty(len(keys), dtype=np.int64)
            for i, (o, m) in enumerate(zip(observations, action_masks, strict=True)):
                self.seed(int(keys[i]))
                out[i] = self.act(o, m)
            return out
        self.seed(int(seeds.mix(np.bitwise_xor.reduce(keys, keepdims=True))[0]) if len(keys) else 0)
        return self.act_batch(observations, action_masks)

    def check_players(self, num_players: int) -> None:  # noqa: B027 - optional hook, a no-op by default
        """ValueError (one line saying what to do) when this agent cannot play games of
        ``num_players``; tournaments and ``bali play`` ask before the first game. The default
        plays every count."""

    def begin_game(self, game: dict) -> None:  # noqa: B027 - optional hook, a no-op by default
        """A game starts: ``game`` holds ``game`` (its id), ``seat``, ``num_players``,
        ``variants`` and ``agents`` (who plays each seat). Called by tournaments, ``bali play``
        and ``bali serve`` before the agent's first decision of a game; the default does
        nothing (an agent decides from the observation alone)."""

    def end_game(self, result: dict) -> None:  # noqa: B027 - optional hook, a no-op by default
        """A game ended: ``result`` holds ``game``, ``final_scores`` and ``winners`` (None when
        it ended early) and ``forfeit`` (who lost it by a fault, and why, or None)."""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release what the agent holds (a bot's process); called when its games are done."""

    def compile_kernels(self) -> None:  # noqa: B027 - optional hook, deliberately a no-op by default
        """Compile (or load from Numba's disk cache) the kernels ``act_batch`` runs, without
        deciding anything. Tournament workers call it to share out a first run's compilation;
        the default does nothing (no kernels, or compiled on first use)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
