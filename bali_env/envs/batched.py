"""Many games of Bali at once: the batched all-Numba environment and the rollout function.

``BaliVectorEnv(num_envs, num_players=4, oracle=False, demon=False, seed=None)`` holds N games
in one ``[N, STATE_SIZE]`` int16 array and steps all of them with **one** Numba call per step
(parallel over games with ``prange`` from ``PARALLEL_MIN_ENVS`` games on). Each step returns the
observation of the seat to move in every game (the AEC env's encoding), so the caller picks one
action per game with whichever policy plays that seat: self-play, evaluation and training use
the same object.

Seeding: game i of ``BaliVectorEnv(seed=s)`` plays exactly the games that
``bali_env.env(...).reset(seed=s + i)`` and the following seedless ``reset()`` calls deal. A
finished game is dealt anew at once (Gymnasium's same-step autoreset): the step that ends it
returns its terminal rewards, ``terminated[i] = True``, its final scores and winners in
``info``, and already the first observation of the next game.

Returned arrays are the environment's own preallocated buffers, overwritten by the next call:
copy what you keep.

``rollout(...)`` plays whole games inside Numba with the uniform random policy, from fresh deals
or from a batch of states, and returns final scores and winners: the workhorse of search agents
and fast evaluation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bali_env import engine as C
from bali_env.engine.thread_pool import start_thread_pool
from bali_env.engine.contract import check_states, parse_options, seed_to_uint64
from bali_env.engine.validate import check_action, check_flag, check_game_count, check_int, check_num_players, is_int

PARALLEL_MIN_ENVS = 512  #: below this many games one thread beats a parallel region (measured on 2 cores)


BYTES_PER_GAME = 2 * C.STATE_SIZE + 4 * C.OBS_DIM + C.N_ACTIONS + 16 * 8  #: state, observation, mask, per-game numbers


def _streams(seed: int | None, n: int) -> np.ndarray:
    """The seed streams of n games: ``seed + i``, or fresh entropy when seed is None."""
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)
    with np.errstate(over="ignore"):  # streams wrap around 2**64
        return seed_to_uint64(seed) + np.arange(n, dtype=np.uint64)


class BaliVectorEnv:
    """N games of Bali stepped together by one Numba call per step (see the module docstring).

    ``reward`` is ``"win_loss"`` (+1 winners, -1 others) or ``"score"`` (own final score minus
    the mean of the others), as in the AEC env. ``parallel`` picks the kernel: None (default)
    steps games on all Numba threads from ``PARALLEL_MIN_ENVS`` games on; False keeps one
    thread (better when other work, e.g. PyTorch, shares the cores). ``buffers`` (an
    ``engine.BatchBuffers``, made once) holds the arrays every step writes: ``obs``,
    ``action_masks``, ``to_move``, ``rewards``, ``terminated``, ``final_scores``, ``winner_masks``
    and ``final_states`` are its fields.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 4,
        oracle: bool = False,
        demon: bool = False,
        seed: int | None = None,
        reward: str = "win_loss",
        parallel: bool | None = None,
    ) -> None:
        self.num_envs = check_game_count("num_envs", num_envs, BYTES_PER_GAME)
        self.num_players = check_num_players(num_players)
        self.oracle = check_flag("oracle", oracle)
        self.demon = check_flag("demon", demon)
        start_thread_pool()
        if reward not in ("win_loss", "score"):
            raise ValueError(f"reward must be 'win_loss' or 'score', got {reward!r}")
        if seed is not None:
            seed_to_uint64(seed)  # TypeError for a seed that is not an int
        if parallel is not None:
            check_flag("parallel", parallel)
        self.reward_mode = reward
        n = self.num_envs
        self.states = np.zeros((n, C.STATE_SIZE), dtype=C.STATE_DTYPE)
        self.buffers = C.BatchBuffers.allocate(n, self.num_players)  #: the arrays the kernels write, named below
        # final_states: each game's last state once it ended
        (self.obs, self.action_masks, self.to_move, self.rewards, self.terminated, self.final_scores,
         self.winner_masks, self.final_states) = self.buffers
        self.truncated = np.zeros(n, dtype=np.bool_)
        self._deal = C.DealSettings.of(self.num_players, self.oracle, self.demon)  # with reset's options from reset on
        self._score_mode = reward == "score"
        self._step_kernel: Any = None  # the step kernel compiled for this env's argument types (``_compiled_step``)
        self._compiled_for: tuple[Any, ...] = ()  # the arrays it was compiled for
        self._seed = seed
        self._streams = _streams(seed, n)
        self._has_reset = False
        self.parallel = n >= PARALLEL_MIN_ENVS if parallel is None else bool(parallel)

    num_actions = C.N_ACTIONS  #: pgx's name: the size of the action space
    observation_shape = (C.OBS_DIM,)  #: pgx's name: the shape of one observation

    @property
    def state_bytes_per_game(self) -> int:
        """Bytes of game state per game (the int16 row)."""
        return self.states.shape[1] * self.states.itemsize

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal all N games. ``seed`` restarts the streams (game i uses ``seed + i``); ``options``
        (docs/rules.md section 7) apply to every game, now and at every automatic reset.
        Returns ``(obs [N, OBS_DIM], info)`` with ``info["action_mask"]`` and ``info["to_move"]``."""
        options_arrays = parse_options(options, self.num_players, self.oracle)
        if seed is not None:
            self._streams = _streams(seed, self.num_envs)
        self._deal = C.DealSettings.of(self.num_players, self.oracle, self.demon, options_arrays)
        self._compiled_for = ()  # new arguments: compiled (looked up) again at the next step
        if self.parallel:
            C.batch_reset(self.states, self._streams, self._deal, self.buffers)
        else:  # the one-game kernel, already needed by reset_game: no parallel kernel to compile
            for i in range(self.num_envs):
                C.batch_reset_one(self.states, i, self._streams, self._deal, self.buffers)
        self.rewards[:] = 0.0
        self.terminated[:] = False
        self._has_reset = True
        return self.obs, {"action_mask": self.action_masks, "to_move": self.to_move}

    def reset_game(self, i: int, seed: int) -> None:
        """Deal game i alone, from the stream ``seed``, leaving the other games untouched.

        Game i becomes exactly the game ``bali_env.env(...).reset(seed=seed)`` deals (same
        ``num_players``, variants and reset options as this env), and its later automatic
        resets deal what that AEC env's following seedless ``reset()`` calls would. Row i of
        ``obs``, ``action_mask`` and ``to_move`` is updated in place; ``rewards[i]`` and
        ``terminated[i]`` are cleared. This lets a caller give any slot any game of a seed list
        (the tournament plays game k from seed ``base + k`` whichever slot or worker runs it).
        Raises IndexError for a bad i and TypeError for a non-int seed."""
        if not is_int(i) or not 0 <= i < self.num_envs:
            raise IndexError(f"game index must be an int in [0, {self.num_envs}), got {i!r}")
        i = int(i)
        self._streams[i] = seed_to_uint64(seed)
        C.batch_reset_one(self.states, i, self._streams, self._deal, self.buffers)
        self.rewards[i] = 0.0
        self.terminated[i] = False

    def restart_game(self, i: int) -> None:
        """Deal game i anew from the next seed of its own stream (what an automatic reset does),
        e.g. after a player forfeited it; row i of ``obs``, ``action_mask`` and ``to_move`` is
        updated, ``rewards[i]`` and ``terminated[i]`` cleared."""
        i = check_int("i", i, 0, self.num_envs - 1)
        if not self._has_reset:
            raise RuntimeError("call reset() before restart_game()")
        C.batch_reset_one(self.states, i, self._streams, self._deal, self.buffers)
        self.rewards[i] = 0.0
        self.terminated[i] = False

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply one action per game (int array of length N) for the seat to move in that game;
        ``-1`` leaves a game as it is this step (its rewards are 0 and it is not terminated), so
        different policies can act in different games at different times.

        Returns ``(obs, rewards [N, num_players], terminated [N], truncated [N], info)``; ``info``
        holds ``action_mask``, ``to_move`` and, for the games that just ended (``_final`` mask),
        ``final_scores`` and ``winners`` (bool [N, num_players]). An illegal action raises
        ValueError naming the game, and no game is changed."""
        if not self._has_reset:
            raise RuntimeError("call reset() before step()")
        acts = self._check_actions(actions)
        fresh = len(self._compiled_for) == 2 and self._compiled_for[0] is self.states and \
            self._compiled_for[1] is self._streams
        step = self._step_kernel if fresh else self._compiled_step()
        bad = step(self.states, acts, self._streams, self._deal, self._score_mode, self.buffers)  # ``_step_args``
        if bad >= 0:
            legal = np.flatnonzero(self.action_masks[bad]).tolist()
            raise ValueError(
                f"illegal action {int(acts[bad])} in game {bad} (seat {int(self.to_move[bad])} to move); legal: {legal}"
            )
        info: dict[str, Any] = {"action_mask": self.action_masks, "to_move": self.to_move, "_final": self.terminated}
        if self.terminated.any():
            info["final_scores"] = self.final_scores
            info["winners"] = (self.winner_masks[:, None] >> np.arange(self.num_players)) & 1 == 1
        return self.obs, self.rewards, self.terminated, self.truncated, info

    def _check_actions(self, actions: Any) -> np.ndarray:
        arr = np.asarray(actions)
        if arr.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {arr.shape}")
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"actions must be integers, got dtype {arr.dtype}")
        if arr.size and (arr.min() < -1 or arr.max() >= C.N_ACTIONS):
            i = int(np.flatnonzero((arr < -1) | (arr >= C.N_ACTIONS))[0])
            check_action(int(arr[i]))  # raises the AEC env's out-of-range error
        return np.ascontiguousarray(arr, dtype=np.int64)  # the type the compiled step takes (``_compiled_step``)

    def _step_args(self, actions: np.ndarray) -> tuple[Any, ...]:
        """The step kernel's arguments: ``batch_step_serial(states, actions, streams, deal, score_mode, out)``."""
        return self.states, actions, self._streams, self._deal, self._score_mode, self.buffers

    def _compiled_step(self) -> Any:
        """The step kernel compiled (or loaded from the cache) for this env's argument types, kept until the next
        ``reset``. Called directly it skips Numba's typing of every argument at every call, which for the two
        records is done in Python (a few microseconds: as long as the rest of a one-game step); safe because
        every argument is the env's own, of fixed types, but the actions, which ``_check_actions`` makes
        C-contiguous int64. With Numba's JIT off (``NUMBA_DISABLE_JIT=1``) the kernel is a Python function."""
        kernel = C.batch_step_parallel if self.parallel else C.batch_step_serial
        compile_for = getattr(kernel, "compile", None)
        self._compiled_for = (self.states, self._streams)  # arrays replaced since (``env.states = ...``): again
        if compile_for is None or not all(_plain(a) for a in self._compiled_for):
            self._step_kernel = kernel  # Numba's dispatcher: it types every argument, whatever they are
        else:
            self._step_kernel = compile_for(_signature(self._step_args(np.zeros(self.num_envs, dtype=np.int64))))
        return self._step_kernel

    def observe(self, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """Every game's observation and mask from one seat's point of view (fresh arrays);
        ``seat`` is an int in 0..num_players-1 (TypeError / ValueError otherwise)."""
        seat = check_int("seat", seat, 0, self.num_players - 1)
        if not self._has_reset:
            raise RuntimeError("call reset() before observe()")
        obs = np.zeros((self.num_envs, C.OBS_DIM), dtype=np.float32)
        masks = np.zeros((self.num_envs, C.N_ACTIONS), dtype=np.int8)
        for i in range(self.num_envs):
            C.observe(self.states[i], int(seat), obs[i], masks[i])
        return obs, masks

    def final_observation(self, i: int, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """Game i's last position before its automatic reset (the game that ended on the last
        ``step`` where ``terminated[i]``), as ``seat`` observes it: ``(obs, mask)``, fresh arrays
        (the mask is all zeros: the game is over)."""
        i = check_int("i", i, 0, self.num_envs - 1)
        seat = check_int("seat", seat, 0, self.num_players - 1)
        obs = np.zeros(C.OBS_DIM, dtype=np.float32)
        mask = np.zeros(C.N_ACTIONS, dtype=np.int8)
        C.observe(self.final_states[i], seat, obs, mask)
        return obs, mask

    def state_dict(self, i: int) -> dict[str, Any]:
        """The full true state of game i (docs/rules.md section 8)."""
        from bali_env.engine.contract import state_dict

        return state_dict(self.states[i])


def _plain(a: np.ndarray) -> bool:
    """Whether an array has the type the env made it with: C-contiguous, aligned, writeable."""
    return isinstance(a, np.ndarray) and a.flags.c_contiguous and a.flags.aligned and a.flags.writeable


def _signature(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Numba's types of a kernel's arguments (the signature it is compiled for)."""
    from numba import typeof

    return tuple(typeof(a) for a in args)


def _kernel_calls(num_players: int, oracle: bool, demon: bool) -> list[tuple[Any, tuple[Any, ...]]]:
    """The kernels of a one-thread ``BaliVectorEnv`` with arguments of the types it passes."""
    env = BaliVectorEnv(1, num_players=num_players, oracle=oracle, demon=demon, seed=0, parallel=False)
    reset = (env.states, 0, env._streams, env._deal, env.buffers)
    return [(C.batch_reset_one, reset), (C.batch_step_serial, env._step_args(np.zeros(1, np.int64)))]


def compile_kernels(num_players: int = 2, oracle: bool = False, demon: bool = False) -> None:
    """Compile (or load from Numba's disk cache) the kernels of a one-thread ``BaliVectorEnv``
    (deal one game, step) for the argument types it passes, without playing: tournament workers
    share out a first run's compilation with it."""
    for kernel, args in _kernel_calls(num_players, oracle, demon):
        kernel.compile(_signature(args))


def kernels_cached(num_players: int = 2, oracle: bool = False, demon: bool = False) -> bool:
    """Whether this process or Numba's disk cache already holds what ``compile_kernels`` would
    compile: a look at the cache index (milliseconds, nothing loaded); False when unsure."""
    try:
        for kernel, args in _kernel_calls(num_players, oracle, demon):
            sig = _signature(args)
            if sig in kernel.overloads:
                continue
            cache = kernel._cache  # Numba internals: any change makes this answer False (then workers compile)
            if cache._index_key(sig, kernel.targetctx.codegen()) not in cache._cache_file._load_index():
                return False
        return True
    except Exception:  # noqa: BLE001 - a cache layout this code does not know: assume nothing is cached
        return False


def rollout(
    num_games: int | None = None,
    *,
    states: np.ndarray | None = None,
    num_players: int = 4,
    oracle: bool = False,
    demon: bool = False,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Play games to the end inside Numba with the uniform random policy.

    Either ``num_games`` fresh deals or copies of the given ``states`` ``[N, STATE_SIZE]`` (not
    modified). Game i uses the SplitMix64 stream ``seed + i``: a fresh game is dealt from its first
    seed, exactly as the AEC env's ``reset(seed=seed + i)`` deals, and the uniform random policy
    (``core.random_legal_action``) draws from the rest of the stream (from its start for given
    states).
    Returns ``scores [N, num_players]``, ``winners`` (bool ``[N, num_players]``) and ``steps [N]``.
    Parallel over games on all Numba threads (``numba.set_num_threads`` to limit)."""
    if (num_games is None) == (states is None):
        raise ValueError("give exactly one of num_games and states")
    seed_to_uint64(seed)  # TypeError for a seed that is not an int
    num_players = check_num_players(num_players)
    oracle, demon = check_flag("oracle", oracle), check_flag("demon", demon)
    if states is not None:
        states = check_states(states)  # the kernel plays copies: the caller's array is not modified
        n = states.shape[0]
        num_players = int(states[0, C.S_NUM_PLAYERS]) if n else num_players
    else:
        n = check_game_count("num_games", num_games, BYTES_PER_GAME, low=0)
    policy = _streams(seed, n)
    start_thread_pool()
    scores = np.zeros((n, C.MAX_PLAYERS), dtype=np.int64)
    winners = np.zeros(n, dtype=np.int64)
    steps = np.zeros(n, dtype=np.int64)
    if states is not None:
        C.rollout_states(states, policy, scores, winners, steps)
    else:
        C.rollout_new_games(policy, num_players, oracle, demon, scores, winners, steps)
    p = num_players
    return {"scores": scores[:, :p], "winners": (winners[:, None] >> np.arange(p)) & 1 == 1, "steps": steps}
