"""``GreedyAgent``: the heuristic's weights and its thin Python entry points over ``decide.greedy_decide_batch``."""

from __future__ import annotations

import numpy as np

from bali_env.engine import N_ACTIONS, OBS_DIM

from bali_env.bots.base import Agent, check_observations
from bali_env.bots.greedy.decide import greedy_decide_batch
from bali_env.bots.greedy.slots import PARAM_NAMES


class GreedyAgent(Agent):
    """A heuristic Bali player (the strategy: ``bali_env.bots.greedy``'s docstring), deciding in Numba.

    The keyword settings are the weights of the heuristic (in points), all tunable through
    ``make_agent("greedy:stone_high=1.0,...")``; the defaults were tuned against random opponents.
    ``act`` is ``act_batch`` on a batch of one: ties are broken by a SplitMix64 stream seeded with
    one draw from the agent's ``rng`` per call (``act_batch_keyed``: by the given keys).
    """

    name = "greedy"
    batched = True  #: ``act_batch`` decides the whole batch in one Numba call

    def __init__(
        self,
        seed: int | None = None,
        rival_weight: float = 1.0,
        stone_high: float = 0.9,
        stone_low: float = 0.25,
        stone_mid: float = 0.8,
        shrine_bonus: float = 3.0,
        project: float = 1.0,
        stone_complete: float = 1.5,
        rival_stone: float = 0.4,
        tempo: float = 1.0,
        future_altar: float = 6.0,
        discount: float = 0.15,
    ) -> None:
        """Seed the tie-breaking generator and set the heuristic's weights (see each comment)."""
        super().__init__(seed)
        self.rival_weight = float(rival_weight)  # weight of the others' mean gain in every score
        self.stone_high = float(stone_high)  # value of a stone still needed for a shrine in hand
        self.stone_low = float(stone_low)  # value of any other stone (1 point per 5 at the end)
        self.stone_mid = float(stone_mid)  # value of a stone saved for a shrine still to come
        self.shrine_bonus = float(shrine_bonus)  # per shrine, on top of its points and altar gain
        self.rival_stone = float(rival_stone)  # what a stone is worth to the others
        self.project = float(project)  # weight of the farmer scorings to come in final holdings
        self.stone_complete = float(stone_complete)  # for the stone that pays a shrine in hand
        self.future_altar = float(future_altar)  # altar cards expected from shrines not yet seen
        self.tempo = float(tempo)  # per extra farmer played at once (one more market card)
        self.discount = float(discount)  # per farmer, per own turn left: cheaper phase-1 purchases

    def params(self) -> np.ndarray:
        """The weights as the kernels take them: float64 in ``PARAM_NAMES`` order."""
        return np.array([getattr(self, name) for name in PARAM_NAMES], dtype=np.float64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal action with the best heuristic score (ties broken by a stream seeded from
        ``self.rng``): ``act_batch`` on a batch of one. ValueError or TypeError for a bad
        observation or mask, or one without a legal action."""
        obs, masks = check_observations(observation, action_mask)
        if obs.shape[0] != 1:
            raise ValueError(f"act takes one observation, got {obs.shape[0]}")
        return int(self._run(obs, masks, None)[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per row, decided in one Numba call; ties are broken by a SplitMix64 stream
        seeded from ``self.rng`` (one draw per call). ``observations``: float32 [N, OBS_DIM];
        ``action_masks``: int8 or bool [N, N_ACTIONS]; anything else raises ValueError. A row
        without a legal action gets -1."""
        return self._run(*self._checked(observations, action_masks), None)

    def act_batch_unchecked(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``act_batch`` on an environment's own buffers (float32 / int8 rows the engine wrote)."""
        return self._run(np.ascontiguousarray(observations), np.ascontiguousarray(action_masks), None)

    def act_batch_keyed(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """``act_batch`` with row i's ties broken by a stream started at ``keys[i]`` (uint64 [N]):
        a row's choice depends on that row and its key only (what tournaments call)."""
        obs, masks = self._checked(observations, action_masks)
        keys = np.array(keys, dtype=np.uint64).reshape(-1)  # a copy: the kernel advances the streams
        if len(keys) != obs.shape[0]:
            raise ValueError(f"keys has {len(keys)} entries for {obs.shape[0]} observations")
        return self._run(obs, masks, keys)

    def compile_kernels(self) -> None:
        """Compile (or load) ``greedy_decide_batch`` for the argument types the entry points pass."""
        from numba import typeof

        args = (np.zeros((1, OBS_DIM), np.float32), np.zeros((1, N_ACTIONS), np.int8), np.zeros(len(PARAM_NAMES)),
                np.zeros(1, np.uint64), np.zeros(1, np.int64))
        greedy_decide_batch.compile(tuple(typeof(a) for a in args))

    @staticmethod
    def _checked(observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The batch as the kernel reads it (float32 and int8 [N, ...], contiguous), checked."""
        obs = np.asarray(observations)
        masks = np.asarray(action_masks)
        if obs.ndim != 2 or obs.shape[1] != OBS_DIM or obs.dtype != np.float32:
            raise ValueError(f"observations must be float32 [N, {OBS_DIM}], got {obs.dtype} {obs.shape}")
        if masks.ndim != 2 or masks.shape[1] != N_ACTIONS or masks.dtype not in (np.int8, np.bool_):
            raise ValueError(f"action_masks must be int8 or bool [N, {N_ACTIONS}], got {masks.dtype} {masks.shape}")
        if masks.shape[0] != obs.shape[0]:
            raise ValueError(f"action_masks has {masks.shape[0]} rows for {obs.shape[0]} observations")
        if obs.shape[0]:
            check_observations(obs, masks, need_legal=False)  # values in range before the kernel reads them
        return np.ascontiguousarray(obs), np.ascontiguousarray(masks.view(np.int8))

    def _run(self, obs: np.ndarray, masks: np.ndarray, keys: np.ndarray | None) -> np.ndarray:
        """``greedy_decide_batch`` over checked rows: a stream per row started at ``keys``, or (None)
        one stream for the batch seeded with a draw from ``self.rng`` (none for an empty batch)."""
        out = np.full(obs.shape[0], -1, dtype=np.int64)
        if obs.shape[0]:
            rng_state = self.rng.integers(0, 2**64, size=1, dtype=np.uint64) if keys is None else keys
            greedy_decide_batch(obs, masks, self.params(), rng_state, out)
        return out
